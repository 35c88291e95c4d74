"""``ancientbench audit``: the data-quality figures the dataset card quotes, regenerated from the files.

Owns, per config of a dataset folder (default: the package's own): item counts per split, the minimum test
size (``Task.min_test`` in :mod:`ancientbench.tasks`), the answer letter balance of the test split (each
letter 25% ± 1.5%), and the accuracy of every knowledge-free shortcut strategy of
:mod:`ancientbench.quality.strategies` (form, Mandarin, glyph), each bounded at 30% on every task; the one
exception is a task's ``answer_rule`` (a strategy that *is* the knowledge the task names, e.g. the phonetic
series on ``phonetic_radical``): printed, marked, not bounded. Ties are scored fairly (1/k). Character frequencies come from the chinese-poetry classics
(:mod:`ancientbench.sources.classics`) when installed, otherwise from the audited items themselves (the
output says which). With ``--shuowen DIR`` the agreement of the answers with 說文解字 is measured too
(:mod:`ancientbench.quality.agreement`). ``--strict`` exits 1 when a bound is broken.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..argtypes import add_no_progress
from ..errors import AncientBenchError
from ..schema import read_config, split_file
from ..tasks import LETTERS, TASK_BY_NAME, TASK_NAMES
from .strategies import (
    BOUND,
    FAMILY,
    STRATEGIES,
    Context,
    Frequencies,
    accuracies,
    chars,
)

BALANCE_TOLERANCE = 0.015  # each letter 25% ± 1.5 points (test split)


class AuditError(AncientBenchError, ValueError):
    """An audit that cannot run as asked (an unknown config, too few items to cross-validate)."""


def corpus_frequencies(sources_dir: str | Path | None = None) -> Frequencies | None:
    """Character frequencies of the chinese-poetry classics (traditional forms), or None when not installed."""
    from ..paths import DEFAULT_SOURCES_DIR
    from ..sources import SourceMissing
    from ..sources.classics import SOURCE_LABEL, load_corpus

    try:
        corpus = load_corpus(Path(sources_dir) if sources_dir else DEFAULT_SOURCES_DIR)
    except SourceMissing:
        return None
    # each traditional form counts with its folded frequency, so 爲 and 為 weigh the same
    counts = {ch: corpus.frequency(ch) for ch in corpus.char_freq}
    return Frequencies(counts, f"classics corpus ({SOURCE_LABEL})")


def self_frequencies(rows: Sequence[Mapping[str, str]]) -> Frequencies:
    """Fallback: character frequencies of the audited items' own questions."""
    counts = Counter(ch for r in rows for ch in chars(r["question"]))
    return Frequencies(dict(counts), "the audited questions themselves (classics corpus not installed)")


def configs_in(folder: str | Path) -> list[str]:
    """Config folders under ``<folder>/data`` holding a test split: registry tasks first, in order, then others."""
    data = Path(folder) / "data"
    found = sorted(p.parent.name for p in data.glob("*/test.jsonl")) if data.is_dir() else []
    return [t for t in TASK_NAMES if t in found] + [c for c in found if c not in TASK_NAMES]


def audit_rows(rows: Sequence[Mapping[str, str]], freq: Frequencies,
               count_rows: Sequence[Mapping[str, str]] | None = None) -> dict:
    """Letter balance and the accuracy of every strategy on one split (option recurrence counted over
    ``count_rows``, default the split itself)."""
    n = len(rows)
    letters = Counter(r["answer"] for r in rows)
    balance = {L: (letters[L] / n if n else 0.0) for L in LETTERS}
    return {"n": n, "balance": balance, "strategies": accuracies(rows, Context(freq), count_rows=count_rows)}


def audit_folder(
    folder: str | Path,
    configs: Sequence[str] | None = None,
    freq: Frequencies | None = None,
    sources_dir: str | Path | None = None,
) -> dict:
    """The full audit of a dataset folder: per config counts, balance, strategies and violations."""
    configs = list(configs) if configs else configs_in(folder)
    loaded = {c: {s: read_config(folder, c, s) for s in ("test", "dev")} for c in configs}
    if freq is None:
        freq = corpus_frequencies(sources_dir) or self_frequencies([r for c in loaded.values() for r in c["test"]])
    report: dict = {"folder": str(folder), "frequency_source": freq.label, "bounds": {
        "balance": f"25% ± {BALANCE_TOLERANCE * 100:.1f}%", "strategies": f"<= {BOUND * 100:.0f}%"}, "configs": {}}
    for c in configs:
        test, dev = loaded[c]["test"], loaded[c]["dev"]
        entry = {"task": test[0]["task"] if test else c, "counts": {"test": len(test), "dev": len(dev)}}
        entry.update(audit_rows(test, freq, count_rows=[*test, *dev]))  # recurrence over what the builder chose
        violations = []
        if not test:
            violations.append("empty test split")
        for L, share in entry["balance"].items():
            if test and abs(share - 0.25) > BALANCE_TOLERANCE + 1e-12:
                violations.append(f"answer {L} = {share:.1%} (outside 25% ± {BALANCE_TOLERANCE:.1%})")
        base = TASK_BY_NAME.get(entry["task"])  # variant configs (radical_shuowen) keep their base task's rule
        entry["answer_rule"] = list(base.answer_rule) if base else []
        for name, acc in entry["strategies"].items():
            if acc > BOUND + 1e-12 and name not in entry["answer_rule"]:
                violations.append(f"{name} = {acc:.1%} (> {BOUND:.0%})")
        task = TASK_BY_NAME.get(c)
        if task is not None and task.min_test is not None and len(test) < task.min_test:
            violations.append(f"test size {len(test)} < {task.min_test}")
        entry["violations"] = violations
        report["configs"][c] = entry
    return report


def strategy_cell(v: float | None, *, mark: float | None = BOUND, rule: bool = False) -> str:
    """One accuracy as a table cell (%): ``–`` when absent, ``(rule)`` for a task's answer rule (never bounded),
    ``**bold**`` above ``mark``."""
    if v is None:
        return "–"
    if rule:
        return f"{v * 100:.1f} (rule)"
    return f"**{v * 100:.1f}**" if mark is not None and v > mark + 1e-12 else f"{v * 100:.1f}"


def strategy_table(by_config: Mapping[str, Mapping[str, float]], mark: float | None = BOUND,
                   answer_rules: Mapping[str, Sequence[str]] | None = None) -> str:
    """Markdown table, one row per strategy and one column per config (accuracy %, ``**`` above ``mark``;
    a strategy that is the config's ``answer_rule`` is written ``(rule)`` instead, never bounded)."""
    configs = list(by_config)
    rules = answer_rules or {}
    lines = ["| strategy | family | " + " | ".join(configs) + " |", "|---|---|" + "---:|" * len(configs)]
    for name in STRATEGIES:
        cells = []
        for c in configs:
            v = by_config[c].get(name)
            cells.append(strategy_cell(v, mark=mark, rule=name in rules.get(c, ())))
        lines.append(f"| {name} | {FAMILY[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_table(report: dict) -> str:
    """Markdown tables of the audit (percentages): sizes and balance, then every strategy per config."""
    cfg = report["configs"]
    head = ["config", "test", "min", "dev", *[f"{L}%" for L in LETTERS], "ok"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for c, e in cfg.items():
        t = TASK_BY_NAME.get(c)
        cells = [c, str(e["counts"]["test"]), str(t.min_test if t and t.min_test else "–"), str(e["counts"]["dev"])]
        cells += [f"{e['balance'][L] * 100:.1f}" for L in LETTERS]
        cells.append("yes" if not e["violations"] else "NO")
        lines.append("| " + " | ".join(cells) + " |")
    rules = {c: e.get("answer_rule", []) for c, e in cfg.items()}
    lines += ["", strategy_table({c: e["strategies"] for c, e in cfg.items()}, answer_rules=rules), ""]
    lines.append(f"Bounds: each letter {report['bounds']['balance']}; every strategy {report['bounds']['strategies']} "
                 "on every config (** = above). Ties count 1/k.")
    for c, names in rules.items():
        for name in names:
            lines.append(f"(rule) {c}: {name} is the knowledge the task names, not a shortcut to it "
                         "(`answer_rule` on its row in tasks.py): printed, not bounded.")
    lines.append(f"Character frequencies: {report['frequency_source']}.")
    for c, e in cfg.items():
        for v in e["violations"]:
            lines.append(f"VIOLATION {c}: {v}")
    if report.get("combined"):
        lines += ["", f"Combined knowledge-free predictor (every strategy and option feature; the better of logistic "
                      f"regression and gradient-boosted trees, 5-fold cross-validated by item; bound <= {COMBINED_BOUND:.0%}):", "",
                  "| config | n | logistic % | trees % | best % | 95% interval | ok |", "|---|---:|---:|---:|---:|---|---|"]
        for c, r in report["combined"].items():
            m = r["models"]
            lines.append(f"| {c} | {r['n']} | {100 * m['logistic']['accuracy']:.1f} | {100 * m['trees']['accuracy']:.1f} | "
                         f"{100 * r['accuracy']:.1f} | [{100 * r['ci95'][0]:.1f}, {100 * r['ci95'][1]:.1f}] | "
                         f"{'yes' if r['accuracy'] <= COMBINED_BOUND + 1e-12 else 'NO'} |")
    if report.get("agreement"):
        lines.append("")
        lines.append("Agreement with 說文解字:")
        for name, fig in report["agreement"].items():
            lines.append(f"- {name}: {fig['agree']}/{fig['compared']} = {fig['rate'] * 100:.1f}% ({fig['what']})")
    return "\n".join(lines)


COMBINED_BOUND = 0.35  # issue 22: the combined knowledge-free predictor, every task


def combined_report(folder: str | Path, configs: Sequence[str], sources_dir: str | Path | None = None) -> dict:
    """The combined predictor's cross-validated figures per config (predictions left out)."""
    from .combined import combined_predictor
    from .strategies import STRATEGIES

    freq = corpus_frequencies(sources_dir)
    out = {}
    for c in configs:
        rows = read_config(folder, c, "test")
        if not rows:
            continue
        base = TASK_BY_NAME.get(rows[0]["task"])
        names = [n for n in STRATEGIES if not base or n not in base.answer_rule]
        r = combined_predictor(rows, Context(freq or self_frequencies(rows)), names,
                               count_rows=[*rows, *read_config(folder, c, "dev")])
        out[c] = {k: v for k, v in r.items() if k != "predictions"}
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("configs", nargs="*", metavar="CONFIG", help="configs to audit (default: every config in the folder)")
    p.add_argument("--data", default=None, metavar="DIR", help="dataset folder (default: the package's own)")
    p.add_argument("--sources", default=None, metavar="DIR", help="folder with node_modules/chinese-poetry (character frequencies)")
    p.add_argument("--shuowen", default=None, metavar="DIR", help="說文 data folder: also measure agreement with 說文解字")
    p.add_argument("--combined", action="store_true",
                   help="also run the combined knowledge-free predictor on every config (minutes: two models, 5 folds)")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    p.add_argument("--strict", action="store_true", help="exit 1 when a bound is broken")
    add_no_progress(p)


def chosen_configs(folder: Path, asked: Sequence[str], combined: bool) -> list[str]:
    """The configs to audit: those asked for (each must have a test split in the folder), else all; with
    ``combined`` each must have enough test items to cross-validate. Checked before any figure is computed."""
    from .combined import MIN_ITEMS

    present = configs_in(folder)
    if not present:
        raise AuditError(f"no configs with a test split under {folder / 'data'}")
    unknown = [c for c in asked if c not in present]
    if unknown:
        raise AuditError(f"unknown config {unknown[0]!r}: no {split_file(folder, unknown[0], 'test').name} under "
                         f"{folder / 'data' / unknown[0]}; the configs in {folder / 'data'}: {', '.join(present)}")
    configs = list(asked) or present
    for c in configs if combined else ():
        n = len(read_config(folder, c, "test"))
        if n < MIN_ITEMS:
            raise AuditError(f"{split_file(folder, c, 'test')}: {n} test item{'s' * (n != 1)}; --combined needs at least "
                             f"{MIN_ITEMS} to cross-validate its predictor (leave --combined out, or audit other configs)")
    return configs


def run(args: argparse.Namespace) -> int:
    from .. import DATASET_PATH

    folder = Path(args.data or DATASET_PATH)
    try:
        configs = chosen_configs(folder, args.configs, args.combined)
    except AuditError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report = audit_folder(folder, configs, sources_dir=args.sources)
    if args.combined:
        report["combined"] = combined_report(folder, configs, sources_dir=args.sources)
        for c, r in report["combined"].items():
            if r["accuracy"] > COMBINED_BOUND + 1e-12:
                report["configs"][c]["violations"].append(f"combined predictor = {r['accuracy']:.1%} (> {COMBINED_BOUND:.0%})")
    if args.shuowen:
        from .agreement import agreement

        report["agreement"] = agreement(folder, Path(args.shuowen))
    print(json.dumps(report, ensure_ascii=False, indent=1) if args.json else format_table(report))
    broken = any(e["violations"] for e in report["configs"].values())
    return 1 if (args.strict and broken) else 0
