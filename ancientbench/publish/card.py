"""The dataset card (``ancientbench/README.md``): its YAML header and its figure tables, generated from the files.

Owns what in the card can be derived: the Hub YAML (ten configs with their ``data_files``, one shared
``features`` block equal to :data:`ancientbench.schema.FIELDS`, license, language, task categories, size
category, default config, pretty name), the table of items per config and split, the table of sources, and
(on request) the audit tables from :mod:`ancientbench.quality.audit`. Each generated part sits between
``<!-- BEGIN GENERATED: name -->`` / ``<!-- END GENERATED: name -->`` markers; everything else in the card is
prose written by hand and kept as it is when the card is regenerated.

    python -m ancientbench.publish.card            # rewrite the YAML header and the count tables
    python -m ancientbench.publish.card --audit    # also the audit block (add --shuowen DIR for 說文 agreement)
    python -m ancientbench.publish.card --audit --audit-report FILE   # the same from a saved `ancientbench audit --json`
    python -m ancientbench.publish.card --check    # exit 1 if the committed card is out of date, or its reference
                                                   # figures come from a ladder run recorded on other data
    python -m ancientbench.publish.card --check --audit   # the audit and changelog blocks compared too (slow)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

from .. import paths
from ..dataset import file_sha256
from ..errors import AncientBenchError, RecordsMissing
from ..paths import DATA_FILE, DATASET_PATH, MINI_NAME, PROBES_DIR, RECORDS_DIR
from ..quality import audit
from ..quality.agreement import agreement
from ..quality.probes import summaries
from ..quality.strategies import BOUND, STRATEGIES
from ..reports.ladder_record import load_record, render_markdown, stale
from ..schema import FIELDS, SPLITS, DataError, load_split, split_file
from ..tasks import COMPETENCY_DISPLAY, DATASET_RELEASES, DATASET_VERSION, TASK_BY_NAME, TASK_NAMES

DEFAULT_CONFIG = "cloze"
PRETTY_NAME = "AncientBench"
LICENSE = "apache-2.0"
TASK_CATEGORIES = ("multiple-choice", "question-answering")
TASK_IDS = ("multiple-choice-qa",)
TAGS = ("classical-chinese", "ancient-chinese", "excavated-documents", "benchmark", "evaluation")
TEAM_SOURCE = "team-curated"  # the `source` of an item the team wrote and reviewers answered blind


def annotations_creators(rows: dict) -> list[str]:
    """From the items themselves: machine-generated (built from dictionaries by code) and, when any item was
    written by the team (source ``… team-curated``), other (the team is AI-assisted: see Limitations)."""
    sources = [r["source"] for splits in rows.values() for items in splits.values() for r in items]
    out = ["machine-generated"] if any(TEAM_SOURCE not in s for s in sources) else []
    return out + (["other"] if any(TEAM_SOURCE in s for s in sources) else [])
ALL_CONFIG = "all"
# Hub size buckets, by total rows over all configs and splits
_SIZE_BUCKETS = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))

_BLOCK = re.compile(r"(<!-- BEGIN GENERATED: (?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)", re.DOTALL)
_HEADER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def card_path(folder: str | Path | None = None) -> Path:
    return Path(folder or DATASET_PATH) / "README.md"


def present_configs(folder: str | Path) -> list[str]:
    """The ten tasks that have a test split in ``folder``, in registry order (only those are listed in the card)."""
    return [t for t in TASK_NAMES if split_file(folder, t, "test").is_file()]


def split_paths(folder: str | Path, task: str) -> list[tuple[str, str]]:
    """``(split, path relative to the folder)`` for each split file of a config that exists."""
    return [(s, DATA_FILE.format(task=task, split=s)) for s in SPLITS if split_file(folder, task, s).is_file()]


def read_folder(folder: str | Path) -> dict[str, dict[str, list[dict[str, str]]]]:
    """Every present config's split rows, validated against the schema (a bad row raises DataError)."""
    return {t: {s: load_split(folder, t, s) for s, _ in split_paths(folder, t)} for t in present_configs(folder)}


def size_category(n: int) -> str:
    for bound, label in _SIZE_BUCKETS:
        if n < bound:
            return label
    return "n>1M"


def render_yaml(folder: str | Path, rows: dict | None = None) -> str:
    """The card's YAML header (with the ``---`` lines), from the files present in ``folder``."""
    rows = read_folder(folder) if rows is None else rows
    configs = list(rows)
    total = sum(len(r) for splits in rows.values() for r in splits.values())
    default = DEFAULT_CONFIG if DEFAULT_CONFIG in configs else (configs[0] if configs else None)
    out = ["---", f"pretty_name: {PRETTY_NAME}", f"license: {LICENSE}", "language:", "- zh", "- lzh"]
    out += ["language_creators:", "- found", "annotations_creators:", *[f"- {c}" for c in annotations_creators(rows)]]
    out += ["source_datasets:", "- original", "multilinguality:", "- monolingual"]
    out += ["task_categories:", *[f"- {c}" for c in TASK_CATEGORIES]]
    out += ["task_ids:", *[f"- {c}" for c in TASK_IDS], "size_categories:", f"- {size_category(total)}"]
    out += ["tags:", *[f"- {t}" for t in TAGS], "configs:" if configs else "configs: []"]
    all_files: dict[str, list[str]] = {}
    for t in configs:
        out.append(f"- config_name: {t}")
        if t == default:
            out.append("  default: true")
        out.append("  data_files:")
        for split, path in split_paths(folder, t):
            out += [f"  - split: {split}", f"    path: {path}"]
            all_files.setdefault(split, []).append(path)
    if len(configs) > 1:  # every task in one config, as MMLU/CMMLU's "all" (the task column tells them apart)
        out += [f"- config_name: {ALL_CONFIG}", "  data_files:"]
        for split, paths in all_files.items():
            out += [f"  - split: {split}", "    path:", *[f"    - {p}" for p in paths]]
    out.append("dataset_info:" if configs else "dataset_info: []")

    def info(name: str, files: list[tuple[str, list[str]]], first: bool) -> None:
        out.append(f"- config_name: {name}")
        if first:  # one features block, shared by every config through a YAML alias
            out.append("  features: &features")
            for f in FIELDS:
                out.extend([f"  - name: {f}", "    dtype: string"])
        else:
            out.append("  features: *features")
        # Split sizes and each file's sha256: datasets keys its cache of a card-configured folder on this YAML
        # alone (not on the files), so the checksums make changed data - even of the same size - load fresh.
        out.append("  splits:")
        size = 0
        for split, paths in files:
            n_bytes = sum((Path(folder) / p).stat().st_size for p in paths)
            n_rows = sum(len(rows[t][split]) for t in configs if split_file(folder, t, split).relative_to(Path(folder)).as_posix() in paths)
            out.extend([f"  - name: {split}", f"    num_bytes: {n_bytes}", f"    num_examples: {n_rows}"])
            size += n_bytes
        out.extend([f"  download_size: {size}", f"  dataset_size: {size}", "  download_checksums:"])
        for _, paths in files:
            for p in paths:
                out.extend([f"    {p}:", f"      num_bytes: {(Path(folder) / p).stat().st_size}",
                            f"      checksum: {file_sha256(Path(folder) / p)}"])

    for i, t in enumerate(configs):
        info(t, [(split, [path]) for split, path in split_paths(folder, t)], i == 0)
    if len(configs) > 1:
        info(ALL_CONFIG, list(all_files.items()), False)
    out.append("---")
    return "\n".join(out) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_counts(rows: dict) -> str:
    """Items per config and split, with each config's competency and subsets, and the totals."""
    lines = [
        "| config | task | competency | test | dev | subsets (test) |",
        "|---|---|---|---:|---:|---|",
    ]
    totals = Counter()
    for t, splits in rows.items():
        task = TASK_BY_NAME[t]
        comp_zh, comp_en = COMPETENCY_DISPLAY[task.competency]
        n = {s: len(splits.get(s, [])) for s in SPLITS}
        totals.update(n)
        subsets = Counter(r["subset"] for r in splits.get("test", []) if r["subset"])
        sub = ", ".join(f"{k} {v}" for k, v in sorted(subsets.items())) or "-"
        lines.append(f"| `{t}` | {task.display_en} ({task.display_zh}) | {comp_en} ({comp_zh}) | {n['test']} | {n['dev']} | {_md_escape(sub)} |")
    lines.append(f"| **total** | {len(rows)} of {len(TASK_NAMES)} configs | | **{totals['test']}** | **{totals['dev']}** | |")
    missing = [t for t in TASK_NAMES if t not in rows]
    if missing:
        lines += ["", f"Not yet built: {', '.join(f'`{t}`' for t in missing)}."]
    return "\n".join(lines)


def render_sources(rows: dict) -> str:
    """Every distinct ``source`` value in the data (it names package, version and license) and where it is used."""
    per_source: dict[str, Counter] = {}
    for t, splits in rows.items():
        for split_rows in splits.values():
            for r in split_rows:
                per_source.setdefault(r["source"], Counter())[t] += 1
    if not per_source:
        return "No data files yet."
    lines = ["| source (as recorded in each item's `source` field) | configs | items |", "|---|---|---:|"]
    for src in sorted(per_source):
        c = per_source[src]
        lines.append(f"| {_md_escape(src)} | {', '.join(f'`{t}`' for t in TASK_NAMES if t in c)} | {sum(c.values())} |")
    return "\n".join(lines)


def render_audit(folder: str | Path, shuowen: str | Path | None = None, sources_dir: str | Path | None = None,
                 report: dict | None = None) -> str:
    """The audit tables of :mod:`ancientbench.quality.audit` (answer balance, trivial strategies, the options-only and
    stem-reading predictors with their 95% intervals and their bounds / targets met or not, 說文 agreement), from
    ``report`` (what ``ancientbench audit --json`` printed) or computed afresh."""
    if report is None:
        configs = present_configs(folder)
        report = audit.audit_folder(folder, configs, sources_dir=sources_dir)
        report["predictors"] = audit.predictor_report(folder, configs, sources_dir=sources_dir)
    if shuowen:
        report["agreement"] = agreement(Path(folder), Path(shuowen))
    return "Generated by `ancientbench audit` on the test splits (figures in %).\n\n" + audit.format_table(report)


def audit_report_file(path: str | Path, folder: str | Path) -> dict:
    """A saved ``ancientbench audit --json`` report of ``folder``, checked to hold every present config and both
    predictors (a card must not publish a partial audit)."""
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DataError(path, None, None, f"not a readable `ancientbench audit --json` report ({e})") from None
    missing = [c for c in present_configs(folder) if c not in report.get("configs", {}) or c not in report.get("predictors", {})]
    if missing:
        raise DataError(path, None, None, f"the audit report lacks {', '.join(missing)} (or their predictors): rerun "
                                          "`ancientbench audit --json` on every config")
    return report


def read_changelog(path: Path) -> list[tuple[str, str, list[str]]]:
    """``records/CHANGELOG.md`` as (version, date, changes), newest first: a ``## VERSION (DATE)`` heading per
    version, a ``- `` bullet per change, a bullet's wrapped lines indented by two spaces (joined with one space)."""
    out: list[tuple[str, str, list[str]]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if m := re.fullmatch(r"## ([0-9]+\.[0-9]+\.[0-9]+) \(([0-9]{4}-[0-9]{2}-[0-9]{2})\)", line):
            out.append((m.group(1), m.group(2), []))
        elif line.startswith("## "):
            raise DataError(path, n, None, "a version heading is `## VERSION (YYYY-MM-DD)`")
        elif out and line.startswith("- "):
            out[-1][2].append(line[2:])
        elif out and line.startswith("  ") and out[-1][2]:
            out[-1][2][-1] += " " + line.strip()
        elif out and line.strip():
            raise DataError(path, n, None, "under a version, a change is a `- ` bullet (wrapped lines indented by two spaces)")
    return out


def render_changelog(folder: str | Path, sources_dir: str | Path | None = None, after: dict | None = None) -> str:
    """The changelog: each version's changes, then the strategy accuracies before (data version 1, measured
    on the files of its release commit and saved in ``records/v1_strategies.json``) and after (computed from the files). The records
    live in a clone, not in the wheel: from an installed package this raises :class:`RecordsMissing`."""
    for needed in (paths.CHANGELOG_FILE, paths.V1_STRATEGIES_FILE):  # read at call time: a test points them elsewhere
        if not needed.is_file():
            raise RecordsMissing(f"the changelog needs {needed} (records/ in a clone of the repository; an "
                                 "installed package does not ship it): render the card with --audit from a clone")
    before = json.loads(paths.V1_STRATEGIES_FILE.read_text(encoding="utf-8"))
    configs = [c for c in present_configs(folder) if c in TASK_NAMES]
    after = after or audit.audit_folder(folder, configs, sources_dir=sources_dir)["configs"]
    (v1, commit1), *later = DATASET_RELEASES
    lines = [(f"Dataset version **{DATASET_VERSION}**. Version {v1} stays reproducible from commit `{commit1}` "
              f"(`git checkout {commit1} && ancientbench build`)"
              + "".join(f", version {v} from commit `{commit}`" for v, commit in later) + "."), ""]
    for version, date, changes in read_changelog(paths.CHANGELOG_FILE):
        lines.append(f"### {version} ({date})")
        lines.append("")
        lines += [f"- {c}" for c in changes]
        lines.append("")
    lines.append(f"Shortcut strategies, accuracy % on the test split, version 1.0.0 → {DATASET_VERSION} "
                 f"(bound {BOUND * 100:.0f}%; **bold** above it; ties count 1/k):")
    lines.append("")
    lines.append("| strategy | " + " | ".join(configs) + " |")
    lines.append("|---|" + "---:|" * len(configs))

    for name in STRATEGIES:
        cells = []
        for c in configs:
            rule = name in TASK_BY_NAME[c].answer_rule
            b = before["configs"].get(c, {}).get("strategies", {}).get(name)
            a = after[c]["strategies"].get(name) if c in after else None
            cells.append(f"{audit.strategy_cell(b, rule=rule)} → {audit.strategy_cell(a, rule=rule)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    sizes = " · ".join(f"{c} {before['configs'].get(c, {}).get('test', '–')} → {after[c]['counts']['test']}" for c in configs)
    lines.append(f"Test sizes, 1.0.0 → {DATASET_VERSION}: {sizes}.")
    return "\n".join(lines)


SKELETON = """\n\
# AncientBench

AncientBench measures how well language models understand ancient Chinese, in excavated (bamboo and silk)
and transmitted documents: ten tasks in four competencies (glyph 字形, pronunciation 字音, meaning 字義,
context 語境), every question four-option multiple choice with one correct answer.

<!-- LEAD: summary paragraph (what is measured, how the items were made, who it is for). -->

## Configs and splits

One config per task. `test` is the evaluation split; `dev` holds the few-shot exemplars (MMLU / C-Eval
convention), never scored.

<!-- BEGIN GENERATED: counts -->
<!-- END GENERATED: counts -->

## Loading

```python
import datasets
import ancientbench

ds = datasets.load_dataset(ancientbench.DATASET_PATH, "cloze")   # any directory, once the package is installed
ds = datasets.load_dataset("ancientbench", "cloze")              # from the repository root (this folder)
```

On `datasets` 2.x/3.x the loading script `dataset_script/ancientbench.py` also works
(`trust_remote_code=True`); see `docs/huggingface.md`.

## Data fields

Every config has the same columns, all strings:

| field | meaning |
|---|---|
| `id` | stable identifier, unique over the whole benchmark |
| `task` | the config name |
| `question` | the question text (Traditional Chinese characters where the source has them) |
| `A`, `B`, `C`, `D` | the four options |
| `answer` | the correct option's letter |
| `subset` | a finer label inside a task (for example excavated / transmitted), or empty |
| `source` | where the answer comes from: package, version and license, or `team-curated` |
| `citation` | the source record: entry id, work and chapter, or document and slip |
| `explanation` | why the answer is right (the check made, or the rationale) |

## Sources and licenses

<!-- BEGIN GENERATED: sources -->
<!-- END GENERATED: sources -->

<!-- LEAD: per-source license and attribution prose (from the data helpers' docs). -->

## Dataset construction

<!-- LEAD: how each task was built and checked (from the data helpers' docs). -->

## Changelog

<!-- BEGIN GENERATED: changelog -->
<!-- END GENERATED: changelog -->

## Data quality

<!-- BEGIN GENERATED: audit -->
<!-- END GENERATED: audit -->

<!-- LEAD: agreement figures and how to read them. -->

## Limitations

<!-- LEAD: known limitations and biases. -->

## License

The AncientBench code and the data derived for it are released under the Apache License 2.0. The
sources keep their own licenses, listed above; facts such as which component of a character is phonetic
are not copyrightable, and every item records its source.
"""


DEFECT_BOUND = 0.02  # adjudicated defects a full-question probe may find (the options-only bounds are on task rows)


def render_probes() -> str | None:
    """The blind-examinee probes recorded under ``records/probes/`` (``ancientbench.quality.probes``): per task and
    mode the dataset version sampled (– where the record predates the field), the sample, the date, the
    examinee's accuracy and, for full questions, the adjudicated defect rate. None where there is no ``records/``
    (an installed package): the card keeps the block it shipped with."""
    if not PROBES_DIR.is_dir():
        return None
    rows = summaries(PROBES_DIR)
    if not rows:
        return "No probe has been recorded yet."
    lines = [
        "| task | subset | probe | data | date | n | examinee accuracy | bound | defects (adjudicated) | record |",
        "|---|---|---|---|---|---:|---:|---|---|---|",
    ]
    for r in rows:
        if r["mode"] == "options":
            bound = TASK_BY_NAME[r["task"]].options_probe_bound
            verdict = ("reported (the options rebuild the stem)" if bound is None
                       else f"≤ {bound * 100:.0f}% {'met' if r['accuracy'] <= bound + 1e-12 else '**not met**'}")
            defects = "–"
        else:
            rate = r.get("defect_rate")
            verdict = f"defects ≤ {DEFECT_BOUND * 100:.0f}% " + ("–" if rate is None else ("met" if rate <= DEFECT_BOUND + 1e-12 else "**not met**"))
            defects = "pending" if rate is None else f"{r['defects']} ({rate * 100:.1f}%)"
        probe = "options only (stem hidden)" if r["mode"] == "options" else "full question"
        lines.append(
            f"| `{r['task']}` | {r.get('subset') or 'all'} | {probe} | {r.get('dataset_version') or '–'} | {r['made']} | {r['n']} | "
            f"{r['correct']}/{r['n']} = {r['accuracy'] * 100:.1f}% | {verdict} | {defects} | `{r['folder']}` |"
        )
    return "\n".join(lines)


class StaleFigures(AncientBenchError):
    """A published figure the records no longer give (a recorded run of other data): rerun what recorded it."""


def render_reference() -> str | None:
    """The "Reference results" block: the recorded ladder run (``records/ladder.json``, ``ancientbench ladder
    --record``). None where there is no records/ (an installed package): the card keeps the block it shipped with.
    :class:`StaleFigures` when the run was recorded on other data (another version, or changed files)."""
    if not RECORDS_DIR.is_dir():
        return None
    rec = load_record()
    if rec is None:
        return (f"No ladder run is recorded on data {DATASET_VERSION} yet (`records/ladder.json`): `ancientbench ladder "
                "--record` measures the shipped mini-LM beside tiny-random and the knowledge-free reference rows, and this "
                "block is rendered from its record.")
    if why := stale(rec):
        raise StaleFigures(f"the card's Reference results: {why}")
    return (f"The shipped classical mini-LM `{MINI_NAME}` (its own card: `ancientbench/mini/{MINI_NAME}/README.md`) beside "
            "the random-weight smoke model and knowledge-free reference rows; rerun with `ancientbench ladder`.\n\n"
            + render_markdown(rec))


def render_card(folder: str | Path, existing: str | None = None, audit_block: str | None = None,
                changelog_block: str | None = None) -> str:
    """The whole card: the existing card (or the skeleton) with its YAML and generated blocks replaced.

    ``audit_block`` / ``changelog_block`` replace those blocks when given (a card without a changelog block
    gets one before "## Data quality"); otherwise the existing blocks are kept.
    """
    rows = read_folder(folder)
    text = existing if existing is not None else SKELETON
    blocks = {"counts": render_counts(rows), "sources": render_sources(rows), "probes": render_probes(),
              "reference": render_reference()}
    blocks = {name: block for name, block in blocks.items() if block is not None}  # None: keep the existing block
    if generated_block(text, "reference") is None:
        empty = "## Reference results\n\n<!-- BEGIN GENERATED: reference -->\n<!-- END GENERATED: reference -->\n\n"
        text = text.replace("## Limitations", empty + "## Limitations", 1) if "## Limitations" in text else text + "\n" + empty
    if audit_block is not None:
        blocks["audit"] = audit_block
    if changelog_block is not None:
        blocks["changelog"] = changelog_block
        if generated_block(text, "changelog") is None:
            empty = "## Changelog\n\n<!-- BEGIN GENERATED: changelog -->\n<!-- END GENERATED: changelog -->\n\n"
            text = text.replace("## Data quality", empty + "## Data quality", 1) if "## Data quality" in text else text + "\n" + empty

    def fill(m: re.Match) -> str:
        name = m.group("name")
        if name not in blocks:
            return m.group(0)
        return m.group(1) + blocks[name].rstrip("\n") + "\n" + m.group(4)

    body = _HEADER.sub("", text, count=1)
    return render_yaml(folder, rows) + current_version(_BLOCK.sub(fill, body))


_VERSION_PHRASES = (re.compile(r"(This is \*\*version )[0-9]+\.[0-9]+\.[0-9]+(\*\* of the data)"),
                    re.compile(r"(the AncientBench open dataset, version )[0-9]+\.[0-9]+\.[0-9]+"))


def current_version(text: str) -> str:
    """The card's statements of the current data version, set from ``tasks.DATASET_VERSION`` (its one home)."""
    for pattern in _VERSION_PHRASES:
        text = pattern.sub(lambda m: m.group(1) + DATASET_VERSION + (m.group(2) if m.lastindex >= 2 else ""), text)
    return text


def generated_block(text: str, name: str) -> str | None:
    """The body of one generated block of a card (None when the card has no such block)."""
    for m in _BLOCK.finditer(text):
        if m.group("name") == name:
            return m.group("body")
    return None


def yaml_header(text: str) -> str | None:
    m = _HEADER.match(text)
    return m.group(0) if m else None


def card_configs(folder: str | Path | None = None, *, default: bool = False) -> list[str]:
    """The config names the folder's card lists (what ``load_dataset`` offers), [] without a card; with
    ``default``, only the one marked ``default: true`` (what ``load_dataset`` gives without a config name)."""
    path = card_path(folder)
    header = yaml_header(path.read_text(encoding="utf-8")) if path.is_file() else None
    meta = yaml.safe_load(header.strip().strip("-")) if header else {}
    return [c["config_name"] for c in (meta or {}).get("configs") or [] if not default or c.get("default")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.publish.card", description=__doc__.strip().splitlines()[0])
    p.add_argument("--folder", default=None, help="dataset folder (default: the package's own)")
    p.add_argument("--audit", action="store_true", help="also regenerate the audit and changelog blocks (ancientbench.quality.audit)")
    p.add_argument("--shuowen", default=None, metavar="DIR", help="說文 data folder, for the agreement figures (with --audit)")
    p.add_argument("--sources", default=None, metavar="DIR", help="folder with node_modules/chinese-poetry (with --audit)")
    p.add_argument("--audit-report", default=None, metavar="FILE",
                   help="with --audit: render the audit and changelog blocks from this `ancientbench audit --json` output "
                        "instead of computing it again (the predictors take minutes)")
    p.add_argument("--check", action="store_true",
                   help="do not write; exit 1 if the YAML, a generated table or the reference figures are out of date "
                        "(or recorded on other data); with --audit the audit and changelog blocks too")
    args = p.parse_args(argv)

    folder = Path(args.folder or DATASET_PATH)
    path = card_path(folder)
    existing = path.read_text(encoding="utf-8") if path.is_file() else None
    if args.check and existing is None:
        print(f"error: no dataset card at {path}")
        return 1
    try:
        saved = audit_report_file(args.audit_report, folder) if args.audit and args.audit_report else None
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    audit_block = render_audit(folder, args.shuowen, args.sources, report=saved) if args.audit else None
    changelog_block = render_changelog(folder, args.sources, after=saved and saved["configs"]) if args.audit else None
    try:
        fresh = render_card(folder, existing, audit_block, changelog_block)
    except StaleFigures as e:  # nothing written: a card is not published with figures its records no longer give
        print(f"error: {path}: {e}", file=sys.stdout if args.check else sys.stderr)
        return 1 if args.check else 2
    if args.check:  # with --audit the audit and changelog blocks are recomputed (or read from --audit-report) and compared too
        if fresh != existing:
            print(f"error: {path} is out of date; run: python -m ancientbench.publish.card" + (" --audit" if args.audit else ""))
            return 1
        print(f"{path}: up to date" + (" (audit and changelog blocks included)" if args.audit
                                       else " (audit and changelog blocks not compared: add --audit)"))
        return 0
    path.write_text(fresh, encoding="utf-8")
    configs = present_configs(folder)
    print(f"wrote {path}: {len(configs)} of {len(TASK_NAMES)} configs" + (" (with audit)" if args.audit else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
