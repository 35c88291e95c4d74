"""``ancientbench build``: turn the installed open sources (and the team-curated files) into task configs, and keep
a report of what was built and dropped."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from datetime import date
from pathlib import Path

from ..argtypes import add_no_progress
from ..errors import RecordsMissing
from ..paths import BUILD_REPORT_FILE, DATASET_PATH, DEFAULT_SOURCES_DIR, PACKAGE_DIR, RECORDS_DIR
from ..sources import SourceMissing, classics
from ..tasks import TASK_NAMES, resolve_tasks
from . import DEFAULT_SEED, BuildContext, build_task
from .common import write_result


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("tasks", nargs="*", metavar="TASK", help=f"tasks or competencies to build (default: all): {', '.join(TASK_NAMES)}")
    p.add_argument("--output", "--out", dest="out", default=None, help="dataset folder to write into (default: the package's own dataset folder)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed for option order and sampling (default %(default)s)")
    p.add_argument("--sources", default=None, metavar="DIR",
                   help="folder holding the npm sources (default: $ANCIENTBENCH_SOURCES, else .sources/ in the checkout, where scripts/install.sh puts them)")
    p.add_argument("--shuowen", default=None, metavar="DIR", help="說文 data folder: also build the paper-faithful 說文 variant configs")
    add_no_progress(p)
    p.add_argument("--parallel-corpus", default=None, metavar="DIR", help="古文/现代文 parallel corpus: build a user translation config")
    p.add_argument("--repin", action="store_true",
                   help="first re-pin the character counts every builder balances with (ancientbench/sources/"
                        "classics_frequencies.tsv) from the corpus as corrected now: a data change, generated tasks re-option")


def run(args: argparse.Namespace) -> int:
    out = Path(args.out or DATASET_PATH)
    ctx = BuildContext(
        seed=args.seed,
        sources_dir=Path(args.sources) if args.sources else DEFAULT_SOURCES_DIR,
        shuowen_dir=Path(args.shuowen) if args.shuowen else None,
        parallel_corpus=Path(args.parallel_corpus) if args.parallel_corpus else None,
    )
    if args.repin:
        try:
            print(f"pinned the character counts: {repin(ctx.sources_dir)}")
        except SourceMissing as e:
            print(f"error: cannot re-pin: {e}", file=sys.stderr)
            return 2
    report = {}
    for task in resolve_tasks(args.tasks):
        try:
            result = build_task(task, ctx)
        except (SourceMissing, RecordsMissing) as e:
            print(f"error: cannot build {task}: {e}", file=sys.stderr)
            return 2
        paths = write_result(result, out)
        report[task] = {"test": len(result.test), "dev": len(result.dev), "candidates": result.candidates, "dropped": dict(result.dropped)}
        print(f"{task}: test {len(result.test)}, dev {len(result.dev)}, dropped {sum(result.dropped.values())} -> {paths[0].parent}")
    for extra in _extra_builds(ctx):
        for result in extra:
            write_result(result, out)
            name = result.config or result.task
            report[name] = {"test": len(result.test), "dev": len(result.dev), "dropped": dict(result.dropped)}
            print(f"{name}: test {len(result.test)}, dev {len(result.dev)}")
    # Merge into an existing report, so building some tasks keeps the figures of the others.
    # the package's own build keeps its report for the record (records/); a build elsewhere keeps it beside the data
    report_path = BUILD_REPORT_FILE if out.resolve() == PACKAGE_DIR and RECORDS_DIR.is_dir() else out / "build_report.json"
    merged = {}
    if report_path.is_file():
        try:
            previous = json.loads(report_path.read_text(encoding="utf-8"))
            merged = previous if isinstance(previous, dict) else {}
        except json.JSONDecodeError:
            merged = {}  # an unreadable old report is replaced
    merged.update(report)
    report_path.write_text(json.dumps(merged, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def repin(sources_dir: Path) -> Path:
    """Write the live counts of the corrected corpus as the pinned ones, and forget every corpus loaded before."""
    corpus = classics.load_corpus(sources_dir, pinned=False)
    lines = len(classics.corrections())
    path = classics.write_pinned_counts(corpus, f"pinned {date.today()} from {classics.SOURCE_LABEL} with the {lines} "
                                                f"lines of classics_corrections.tsv (ancientbench build --repin)")
    classics.load_corpus.cache_clear()
    return path


def _extra_builds(ctx: BuildContext):
    """Variant configs built only from user-supplied inputs (never committed)."""
    if ctx.shuowen_dir is not None:
        yield importlib.import_module("ancientbench.builders.shuowen").build_variants(ctx)
    if ctx.parallel_corpus is not None:
        yield importlib.import_module("ancientbench.builders.parallel_corpus").build_variants(ctx)
