"""``ancientbench audit``: the data-quality figures the dataset card quotes, regenerated from the files.

Owns, per config of a dataset folder (default: the package's own): item counts per split, the answer
letter balance of the test split (each letter must hold 25% ± 1.5%), and the accuracy of trivial
strategies that look only at the surface of the options (each must stay at or below 31%):

* ``longest``: pick the longest option;
* ``most_frequent_char``: pick the option containing the character most frequent in the classics corpus;
* ``question_overlap``: pick the option sharing most distinct characters with the question;
* ``unigram_lm``: pick the option a character-unigram language model (corpus frequencies, add-one)
  scores highest (sum of log-probabilities).

Two reverse strategies (``shortest``, ``rarest_char``) are reported too, as a warning only. Ties are
scored fairly: a strategy that ties k options including the gold one gets 1/k credit. Character
frequencies come from the chinese-poetry classics (:mod:`ancientbench.builders.classics`) when installed,
otherwise from the audited items themselves (the output says which). With ``--shuowen DIR`` the agreement
of the answers with 說文解字 is measured too (:mod:`ancientbench.builders.shuowen`). ``--strict`` exits 1
when a bound is broken.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Callable, Mapping, Sequence

from .schema import read_jsonl, split_file, validate_rows
from .tasks import LETTERS, TASK_NAMES

BALANCE_TOLERANCE = 0.015  # each letter 25% ± 1.5 points (test split)
TRIVIAL_BOUND = 0.31  # every bounded trivial strategy at or below 31%
# Minimum test sizes from the data issue; configs not listed have none.
MIN_TEST_SIZES: dict[str, int] = {
    "radical": 4000,
    "radical_meaning": 300,
    "pronunciation": 3000,
    "phonetic_radical": 4000,
    "homophone": 3000,
    "tradoc_word": 2000,  # ≥ 1,000 in context + ≤ 1,000 《廣韻》 gloss items (issue 13)
    "cloze": 3000,
}


def _chars(text: str) -> list[str]:
    """The characters of a text that carry content: letters, digits, ideographs (no spaces or punctuation)."""
    return [ch for ch in text if unicodedata.category(ch)[0] in ("L", "N")]


class Frequencies:
    """Character unigram counts with an add-one smoothed log-probability."""

    def __init__(self, counts: Mapping[str, int], label: str):
        self.counts = counts
        self.label = label
        self.total = sum(counts.values())
        self.vocab = len(counts) + 1

    def __getitem__(self, ch: str) -> int:
        return self.counts.get(ch, 0)

    def logprob(self, ch: str) -> float:
        return math.log((self.counts.get(ch, 0) + 1) / (self.total + self.vocab))


# A strategy scores each option (higher = chosen); the argmax is its guess.
Strategy = Callable[[str, Sequence[str], Frequencies], list[float]]


def _longest(q, opts, f):
    return [float(len(o.strip())) for o in opts]


def _shortest(q, opts, f):
    return [-float(len(o.strip())) for o in opts]


def _most_frequent_char(q, opts, f):
    return [float(max((f[c] for c in _chars(o)), default=0)) for o in opts]


def _rarest_char(q, opts, f):
    return [-float(min((f[c] for c in _chars(o)), default=0)) for o in opts]


def _question_overlap(q, opts, f):
    qs = set(_chars(q))
    return [float(len(set(_chars(o)) & qs)) for o in opts]


def _unigram_lm(q, opts, f):
    return [sum(f.logprob(c) for c in _chars(o)) for o in opts]


BOUNDED_STRATEGIES: dict[str, Strategy] = {
    "longest": _longest,
    "most_frequent_char": _most_frequent_char,
    "question_overlap": _question_overlap,
    "unigram_lm": _unigram_lm,
}
WARNING_STRATEGIES: dict[str, Strategy] = {
    "shortest": _shortest,
    "rarest_char": _rarest_char,
}
STRATEGIES: dict[str, Strategy] = {**BOUNDED_STRATEGIES, **WARNING_STRATEGIES}  # what the builders balance


def _most_central(q, opts, f):
    # The option most similar to the other three: the answer wins when every distractor is the answer
    # with one small edit (the artifact the translation task's 2x2 distractor design exists to prevent).
    return [sum(difflib.SequenceMatcher(None, o, p, autojunk=False).ratio() for p in opts if p is not o) for o in opts]


# Also audited and bounded, but not part of the builders' balancing (their options are single graphs or
# short spellings, where it sits at chance by construction; the audit checks that it does).
SIMILARITY_STRATEGIES: dict[str, Strategy] = {"most_central": _most_central}
AUDIT_STRATEGIES: dict[str, Strategy] = {**STRATEGIES, **SIMILARITY_STRATEGIES}
AUDIT_BOUNDED: tuple[str, ...] = (*BOUNDED_STRATEGIES, *SIMILARITY_STRATEGIES)


def strategy_credit(scores: Sequence[float], gold: int) -> float:
    """1/k when the gold option is among the k best-scored options, else 0 (fair tie-breaking)."""
    best = max(scores)
    winners = [i for i, s in enumerate(scores) if math.isclose(s, best, rel_tol=0, abs_tol=1e-12)]
    return 1.0 / len(winners) if gold in winners else 0.0


def credits(question: str, options: Sequence[str], gold: int, freq: Frequencies, strategies=None) -> dict[str, float]:
    """The credit each strategy earns on one item (used by builders to keep distractor sets unbiased)."""
    strategies = strategies or STRATEGIES
    return {name: strategy_credit(fn(question, options, freq), gold) for name, fn in strategies.items()}


def row_credits(row: Mapping[str, str], freq: Frequencies) -> dict[str, float]:
    return credits(row["question"], [row[L] for L in LETTERS], LETTERS.index(row["answer"]), freq, AUDIT_STRATEGIES)


def corpus_frequencies(sources_dir: str | Path | None = None) -> Frequencies | None:
    """Character frequencies of the chinese-poetry classics (traditional forms), or None when not installed."""
    from .builders import DEFAULT_SOURCES_DIR
    from .builders.classics import SOURCE_LABEL, load_corpus
    from .builders.common import SourceMissing

    try:
        corpus = load_corpus(Path(sources_dir) if sources_dir else DEFAULT_SOURCES_DIR)
    except SourceMissing:
        return None
    # each traditional form counts with its folded frequency, so 爲 and 為 weigh the same
    counts = {ch: corpus.frequency(ch) for ch in corpus.char_freq}
    return Frequencies(counts, f"classics corpus ({SOURCE_LABEL})")


def self_frequencies(rows: Sequence[Mapping[str, str]]) -> Frequencies:
    """Fallback: character frequencies of the audited items' own questions."""
    counts = Counter(ch for r in rows for ch in _chars(r["question"]))
    return Frequencies(dict(counts), "the audited questions themselves (classics corpus not installed)")


def configs_in(folder: str | Path) -> list[str]:
    """Config folders under ``<folder>/data`` holding a test split: registry tasks first, in order, then others."""
    data = Path(folder) / "data"
    found = sorted(p.parent.name for p in data.glob("*/test.jsonl")) if data.is_dir() else []
    return [t for t in TASK_NAMES if t in found] + [c for c in found if c not in TASK_NAMES]


def load_config(folder: str | Path, config: str, split: str) -> list[dict[str, str]]:
    path = split_file(folder, config, split)
    if not path.is_file():
        return []
    task = config if config in TASK_NAMES else None  # variant configs (radical_shuowen) keep the base task
    return validate_rows(read_jsonl(path), path, task=task)


def audit_rows(rows: Sequence[Mapping[str, str]], freq: Frequencies) -> dict:
    """Letter balance and trivial-strategy accuracies of one split."""
    n = len(rows)
    letters = Counter(r["answer"] for r in rows)
    balance = {L: (letters[L] / n if n else 0.0) for L in LETTERS}
    totals = Counter()
    for r in rows:
        totals.update(row_credits(r, freq))
    acc = {name: (totals[name] / n if n else 0.0) for name in AUDIT_STRATEGIES}
    return {"n": n, "balance": balance, "strategies": acc}


def audit_folder(
    folder: str | Path,
    configs: Sequence[str] | None = None,
    freq: Frequencies | None = None,
    sources_dir: str | Path | None = None,
) -> dict:
    """The full audit of a dataset folder: per config counts, balance, strategies and violations."""
    configs = list(configs) if configs else configs_in(folder)
    loaded = {c: {s: load_config(folder, c, s) for s in ("test", "dev")} for c in configs}
    if freq is None:
        freq = corpus_frequencies(sources_dir) or self_frequencies([r for c in loaded.values() for r in c["test"]])
    report: dict = {"folder": str(folder), "frequency_source": freq.label, "bounds": {
        "balance": f"25% ± {BALANCE_TOLERANCE * 100:.1f}%", "trivial": f"<= {TRIVIAL_BOUND * 100:.0f}%"}, "configs": {}}
    for c in configs:
        test, dev = loaded[c]["test"], loaded[c]["dev"]
        entry = {"task": test[0]["task"] if test else c, "counts": {"test": len(test), "dev": len(dev)}}
        entry.update(audit_rows(test, freq))
        violations = []
        if not test:
            violations.append("empty test split")
        for L, share in entry["balance"].items():
            if test and abs(share - 0.25) > BALANCE_TOLERANCE + 1e-12:
                violations.append(f"answer {L} = {share:.1%} (outside 25% ± {BALANCE_TOLERANCE:.1%})")
        for name in AUDIT_BOUNDED:
            if entry["strategies"][name] > TRIVIAL_BOUND + 1e-12:
                violations.append(f"{name} = {entry['strategies'][name]:.1%} (> {TRIVIAL_BOUND:.0%})")
        minimum = MIN_TEST_SIZES.get(c)
        if minimum is not None and len(test) < minimum:
            violations.append(f"test size {len(test)} < {minimum}")
        entry["warnings"] = [
            f"{name} = {entry['strategies'][name]:.1%} (> {TRIVIAL_BOUND:.0%})"
            for name in WARNING_STRATEGIES
            if entry["strategies"][name] > TRIVIAL_BOUND + 1e-12
        ]
        entry["violations"] = violations
        report["configs"][c] = entry
    return report


def format_table(report: dict) -> str:
    """A Markdown table of the audit (percentages), with violations and agreement figures below it."""
    names = list(AUDIT_STRATEGIES)
    head = ["config", "test", "dev", *[f"{L}%" for L in LETTERS], *names, "ok"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for c, e in report["configs"].items():
        cells = [c, str(e["counts"]["test"]), str(e["counts"]["dev"])]
        cells += [f"{e['balance'][L] * 100:.1f}" for L in LETTERS]
        cells += [f"{e['strategies'][n] * 100:.1f}" + ("*" if n in WARNING_STRATEGIES else "") for n in names]
        cells.append("yes" if not e["violations"] else "NO")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Bounds: each letter {report['bounds']['balance']}; {', '.join(AUDIT_BOUNDED)} "
                 f"{report['bounds']['trivial']} (* = reverse strategy, reported as a warning only).")
    lines.append(f"Character frequencies: {report['frequency_source']}.")
    for c, e in report["configs"].items():
        for v in e["violations"]:
            lines.append(f"VIOLATION {c}: {v}")
        for w in e["warnings"]:
            lines.append(f"warning {c}: {w}")
    if report.get("agreement"):
        lines.append("")
        lines.append("Agreement with 說文解字:")
        for name, fig in report["agreement"].items():
            lines.append(f"- {name}: {fig['agree']}/{fig['compared']} = {fig['rate'] * 100:.1f}% ({fig['what']})")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("configs", nargs="*", metavar="CONFIG", help="configs to audit (default: every config in the folder)")
    p.add_argument("--data", default=None, metavar="DIR", help="dataset folder (default: the package's own)")
    p.add_argument("--sources", default=None, metavar="DIR", help="folder with node_modules/chinese-poetry (character frequencies)")
    p.add_argument("--shuowen", default=None, metavar="DIR", help="說文 data folder: also measure agreement with 說文解字")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    p.add_argument("--strict", action="store_true", help="exit 1 when a bound is broken")


def run(args: argparse.Namespace) -> int:
    from . import DATASET_PATH

    folder = Path(args.data or DATASET_PATH)
    configs = args.configs or configs_in(folder)
    if not configs:
        print(f"error: no configs with a test split under {folder / 'data'}")
        return 2
    report = audit_folder(folder, configs, sources_dir=args.sources)
    if args.shuowen:
        from .builders.shuowen import agreement

        report["agreement"] = agreement(folder, Path(args.shuowen))
    print(json.dumps(report, ensure_ascii=False, indent=1) if args.json else format_table(report))
    broken = any(e["violations"] for e in report["configs"].values())
    return 1 if (args.strict and broken) else 0
