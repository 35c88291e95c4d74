"""``ancientbench inject``: the knowledge-injection table (issue 36), (b) - (a) per task, ppl and letter mode.

Evaluates the two shipped injection models (``ancientbench-inject-a``, which read the base corpus, and
``ancientbench-inject-b``, which read the same plus the benchmark's knowledge sources as reference text; both
trained by ``ancientbench train-inject``) on the first ``--limit`` test items of every task, 0-shot, in ppl and
letter mode, each run resumable as ``eval`` is, into ``--out`` (default ``results/inject``); then ``compare`` of
(b) against (a) per mode (paired bootstrap interval and McNemar per task, ``<out>/compare_<mode>.json``) and one
printed table. With ``--record`` the figures go to ``results.json`` in the (b) model's folder, from which both
cards render their injection table. Offline: the models ship in the package.

Which tasks the knowledge reaches: :data:`INJECTED` (their sources were added to (b)); the rest are controls.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import AncientBenchError
from ..paths import INJECT_NAMES, INJECT_PATHS
from ..tasks import TASK_BY_NAME, TASK_NAMES

DEFAULT_LIMIT = 200
MODES = ("ppl", "letter")
INJECTED = ("radical", "radical_meaning", "pronunciation", "phonetic_radical", "homophone")  # mini.inject_corpus
BOOKS_ONLY = ("tradoc_word", "cloze")  # (b) read their books, with every held-out sentence removed


def results_file(out: Path, mode: str, key: str) -> Path:
    slug = INJECT_NAMES[key] + ("-ppl" if mode == "ppl" else "")
    hits = sorted((out / mode).glob(f"{slug}/results_0shot.json"))
    if not hits:
        raise AncientBenchError(f"inject: no results of {INJECT_NAMES[key]} in {out / mode}; rerun to resume")
    return hits[0]


def evaluate(out: Path, *, limit: int | None, modes=MODES, tasks=None, progress: bool = True) -> dict[str, dict]:
    """Both models in every mode (resumable), then ``compare`` (b) against (a): {mode: comparison}."""
    from ..cli import main
    from .compare import compare

    rest = [*(["--limit", str(limit)] if limit else []), *([] if progress else ["--no-progress"]),
            *(["--tasks", *tasks] if tasks else [])]
    out_cmp = {}
    for mode in modes:
        for key in ("a", "b"):
            argv = ["eval", "--model", INJECT_NAMES[key], "--mode", mode, "--shots", "0", "--output", str(out / mode), *rest]
            print(f"$ ancientbench {' '.join(argv)}", file=sys.stderr, flush=True)
            if main(argv) != 0:
                raise AncientBenchError(f"inject: `ancientbench {' '.join(argv)}` failed (see above); rerun to resume")
        res = compare(results_file(out, mode, "b"), results_file(out, mode, "a"))
        (out / f"compare_{mode}.json").write_text(json.dumps(res, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        out_cmp[mode] = res
    return out_cmp


def _cell(f: dict) -> list[str]:
    """(a) %, (b) %, (b) - (a) [interval] of one comparison figure; ``compare`` ran with A = (b), B = (a)."""
    lo, hi = f["ci"]
    mark = " *" if lo > 0 or hi < 0 else ""  # the interval excludes 0
    return [f"{100 * f['b']:.1f}", f"{100 * f['a']:.1f}", f"{100 * f['diff']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]{mark}"]


def table_rows(comparisons: dict[str, dict]) -> tuple[list[str], list[list[str]]]:
    """Head and rows of the injection table: per task (a) %, (b) %, (b) - (a) [95% CI] and McNemar p, per mode."""
    modes = list(comparisons)
    head = ["task", "source added", "n"]
    for m in modes:
        head += [f"{m}: (a) %", f"{m}: (b) %", f"{m}: (b)-(a) [95% CI]", f"{m}: p"]
    rows = []
    for t in TASK_NAMES:
        if not all(t in comparisons[m]["tasks"] for m in modes):
            continue
        added = "yes" if t in INJECTED else "books, not the items' sentences" if t in BOOKS_ONLY else "no (control)"
        row = [f"{t} {TASK_BY_NAME[t].display_zh}", added,
               str(comparisons[modes[0]]["tasks"][t]["n"])]
        for m in modes:
            f = comparisons[m]["tasks"][t]
            row += [*_cell(f), f"{f['mcnemar']['p_value']:.3g}"]
        rows.append(row)
    avg = ["average", "", str(comparisons[modes[0]]["n_items"])]
    for m in modes:
        c = comparisons[m]
        avg += [*_cell(c["average"]), f"{c['micro_accuracy']['mcnemar']['p_value']:.3g}"]
    return head, [*rows, avg]


NOTE = ("(a) read the base corpus, (b) the same plus the knowledge sources as reference text; same architecture, "
        "tokenizer, seed and tokens seen. Accuracy in %, 0-shot; (b)-(a) in points with its 95% paired bootstrap "
        "interval (* where it excludes 0); p: McNemar on the discordant items (average row: all items pooled).")


def render_table(comparisons: dict[str, dict], style: str = "text") -> str:
    from ..table import render

    head, rows = table_rows(comparisons)
    return render(head, rows, style=style, align="lll" + "rrrl" * len(comparisons))


def record(out: Path, comparisons: dict[str, dict], limit: int | None) -> Path:
    """``results.json`` in the (b) model's folder (the table as data and Markdown); both cards re-rendered."""
    from ..fileio import atomic_write
    from ..mini.inject_card import write_card

    rec = {"limit_per_task": limit, "shots": 0, "compare_b_minus_a": comparisons,
           "markdown": f"Measured by `ancientbench inject --record` on the first {limit or 'all'} test items of every "
                       f"task. {NOTE}\n\n" + render_table(comparisons, "markdown") + "\n"}
    path = INJECT_PATHS["b"] / "results.json"
    atomic_write(path, json.dumps(rec, ensure_ascii=False, indent=1) + "\n")
    for p in INJECT_PATHS.values():
        if (p / "training.json").is_file():
            write_card(p)
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "--out", dest="out", default="results/inject", help="folder for every result (default %(default)s)")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="first N test items per task (default %(default)s; 0 = all)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="scoring modes (default: ppl letter)")
    parser.add_argument("--tasks", nargs="+", default=None, help="tasks (default all ten)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--record", action="store_true", help="write the table into the shipped (b) model's folder and cards (maintainers)")


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise AncientBenchError(f"--limit must be >= 0, got {args.limit}")
    comparisons = evaluate(Path(args.out), limit=args.limit or None, modes=args.modes, tasks=args.tasks,
                           progress=not args.no_progress)
    print("\n" + NOTE + "\n")
    print(render_table(comparisons))
    if args.record:
        print(f"\nrecorded {record(Path(args.out), comparisons, args.limit or None)}")
    return 0
