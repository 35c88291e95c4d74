"""``ancientbench inject``: the knowledge-injection table (issue 36), (b) - (a) per task, ppl and letter mode.

Evaluates the two shipped injection models (``ancientbench-inject-a``, which read the base corpus, and
``ancientbench-inject-b``, which read the same plus the benchmark's knowledge sources as reference text; both
trained by ``ancientbench train-inject``) on the first ``--limit`` test items of every task, 0-shot, in ppl and
letter mode, each run resumable as ``eval`` is, into ``--out`` (default ``results/inject``); then ``compare`` of
(b) against (a) per mode (paired bootstrap interval and McNemar per task, ``<out>/compare_<mode>.json``) and one
printed table. With ``--record`` the figures go to ``results.json`` in the (b) model's folder, from which both
cards render their injection table. Offline: the models ship in the package.

The table and which tasks the knowledge reaches: :mod:`ancientbench.reports.inject`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import AncientBenchError
from ..fileio import atomic_write
from ..paths import INJECT_NAMES, INJECT_PATHS
from ..reports.compare import compare
from ..reports.inject import NOTE, render_table
from .inject_card import write_card
from .ladder import eval_step

DEFAULT_LIMIT = 200
MODES = ("ppl", "letter")


def results_file(out: Path, mode: str, key: str) -> Path:
    slug = INJECT_NAMES[key] + ("-ppl" if mode == "ppl" else "")
    hits = sorted((out / mode).glob(f"{slug}/results_0shot.json"))
    if not hits:
        raise AncientBenchError(f"inject: no results of {INJECT_NAMES[key]} in {out / mode}; rerun to resume")
    return hits[0]


def evaluate(out: Path, *, limit: int | None, modes=MODES, tasks=None, progress: bool = True) -> dict[str, dict]:
    """Both models in every mode (resumable), then ``compare`` (b) against (a): {mode: comparison}."""
    out_cmp = {}
    for mode in modes:
        for key in ("a", "b"):
            eval_step(INJECT_NAMES[key], out / mode, shots=[0], mode=mode, limit=limit, tasks=tasks, progress=progress)
        res = compare(results_file(out, mode, "b"), results_file(out, mode, "a"))
        atomic_write(out / f"compare_{mode}.json", json.dumps(res, ensure_ascii=False, indent=1) + "\n")
        out_cmp[mode] = res
    return out_cmp


def record(out: Path, comparisons: dict[str, dict], limit: int | None) -> Path:
    """``results.json`` in the (b) model's folder (the table as data and Markdown); both cards re-rendered."""
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
