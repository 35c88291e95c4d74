"""``ancientbench ladder``: the README's main job - the shipped mini-LM beside the reference rows, one table.

Runs, into ``--out`` (default ``results/ladder``), each step resumable as ``eval`` is:

1. ``eval`` of ``ancientbench-mini`` in letter mode (the paper's scoring), 0- and 5-shot, and in ppl mode (option
   likelihood), 0-shot, on the first ``--limit`` test items of every task (default 200; ``--limit 0`` for all);
2. ``eval`` of ``tiny-random`` (letter mode, 0- and 5-shot, the same items): the random-weight smoke model; and,
   with ``--inject``, the knowledge-injection pair ``ancientbench-inject-a``/``-b`` (ppl mode, 0-shot; opt-in: one
   ppl run of the pair took 3 min 19 s (149 s CPU) on the shared 2-core machine, beyond the main job's 3 minutes),
   compared (b) against (a) into ``<out>/compare_inject_ppl_0shot.json`` (per task and letter mode: ``inject``);
3. the knowledge-free reference rows on the same items (:mod:`ancientbench.reports.reference`): chance and the
   Mandarin reader, the options-only and the stem-reading predictors (two models, 5-fold; ``--no-predictors`` skips
   them), and the AI examinee row from the full-question probe records (its own sample of items, outside the
   pipeline); a row whose inputs are missing (an optional source, records/) is left out with one line, checked
   before step 1;
4. ``report`` over all of them (Table-2-shaped tables with intervals, plots) into ``<out>/report``, printed, and
   ``compare`` of the mini-LM against tiny-random per shot setting (paired, ``<out>/compare_<mode>_<k>shot.json``);
5. with ``--record``: the figures as ``records/ladder.json`` (:func:`record`: with the data version and data files'
   hashes they hold for), from which the mini-LM's model card and the dataset card's "Reference results" section are
   rendered (``card --check`` fails on a record of other data: :func:`stale`); ``compare`` files of the
   fine-tuned mini-LM against it put in ``--out`` as ``compare_finetuned_<mode>_<k>shot.json`` (the paper's recipe in
   miniature, docs/reference-results.md) are recorded too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import paths
from ..dataset import count_items
from ..errors import AncientBenchError
from ..fileio import atomic_write
from ..mini import MINI_NAME
from ..paths import LADDER_RECORD_FILE, RECORDS_DIR
from ..tasks import DATASET_VERSION
from ..tiny import TINY_RANDOM_NAME
from .ladder_record import data_sha256

DEFAULT_LIMIT = 200


def inject_available() -> bool:
    from ..paths import INJECT_PATHS

    return all((p / "config.json").is_file() for p in INJECT_PATHS.values())


def ladder(out: str | Path, *, limit: int | None = DEFAULT_LIMIT, with_predictors: bool = True, progress: bool = True,
           with_inject: bool = False) -> int:
    from ..cli import main
    from ..paths import INJECT_NAMES
    from .reference import PREDICTOR_ROWS, check_rows, write_reference_rows

    out = Path(out)
    # the reference rows' inputs (optional sources, records/) are checked first: a missing one costs one line, not the run
    rows = check_rows(["chance", "mandarin-reader", "ai-examinee"] + (list(PREDICTOR_ROWS) if with_predictors else []),
                      limit=limit or None, log=lambda m: print(m, file=sys.stderr, flush=True))
    limit_args = ["--limit", str(limit)] if limit else []
    rest = [*limit_args, *([] if progress else ["--no-progress"])]
    common = ["--shots", "0", "5", *rest]
    steps = [
        ["eval", "--model", MINI_NAME, "--output", str(out / "letter"), *common],
        ["eval", "--model", MINI_NAME, "--mode", "ppl", "--output", str(out / "ppl"), "--shots", "0", *rest],  # ppl at 0-shot only: four continuations per item, 5-shot would double the job's time
        ["eval", "--model", TINY_RANDOM_NAME, "--output", str(out / "letter"), *common],
    ]
    with_inject = with_inject and inject_available()
    if with_inject:  # the knowledge-injection pair, ppl 0-shot (letter mode too: `ancientbench inject`)
        steps += [["eval", "--model", INJECT_NAMES[k], "--mode", "ppl", "--output", str(out / "ppl"), "--shots", "0", *rest]
                  for k in ("a", "b")]
    for argv in steps:
        print(f"$ ancientbench {' '.join(argv)}", file=sys.stderr, flush=True)
        if main(argv) != 0:
            raise AncientBenchError(f"ladder: `ancientbench {' '.join(argv)}` failed (see above); rerun to resume")
    write_reference_rows(out / "reference", rows=rows, limit=limit or None, log=lambda m: None)
    for mode, k in (("letter", 0), ("letter", 5), ("ppl", 0)):
        mini = next((out / mode).glob(f"{MINI_NAME}*/results_{k}shot.json"))  # ppl runs go to <name>-ppl/
        main(["compare", str(mini), str(out / "letter" / TINY_RANDOM_NAME / f"results_{k}shot.json"),
              "--json", str(out / f"compare_{mode}_{k}shot.json")])
    if with_inject:
        b, a = (next((out / "ppl").glob(f"{INJECT_NAMES[k]}*/results_0shot.json")) for k in ("b", "a"))
        main(["compare", str(b), str(a), "--json", str(out / "compare_inject_ppl_0shot.json")])
    rc = main(["report", str(out / "letter"), str(out / "ppl"), str(out / "reference"), "--out", str(out / "report")])
    if with_inject:
        from .inject import NOTE, render_table

        cmp_ = json.loads((out / "compare_inject_ppl_0shot.json").read_text(encoding="utf-8"))
        print(f"\n## Knowledge injection, ppl mode (letter mode too: `ancientbench inject`)\n\n{NOTE}\n\n"
              + render_table({"ppl": cmp_}))
    return rc


def _run_data_version(out: Path) -> str:
    """The one data version every results file of a ladder run was computed on (an error when they differ)."""
    versions = {}
    for path in sorted(out.glob("*/*/results_*shot.json")):
        res = json.loads(path.read_text(encoding="utf-8"))  # eval writes it at the top, the reference rows under "data"
        versions.setdefault(res.get("dataset_version") or res["data"].get("dataset_version"), path)
    if len(versions) != 1:
        raise AncientBenchError(f"{out}: the run's results files hold data versions {sorted(map(str, versions))} "
                                f"({', '.join(map(str, versions.values()))}); rerun `ancientbench ladder` into a new --out")
    return next(iter(versions))


def record(out: str | Path, limit: int | None) -> dict:
    """The ladder's figures (report summary and paired comparisons) as one JSON-able record, with the data version
    and the data files' hashes it holds for and the reference rows' descriptions (from their results files)."""
    out = Path(out)
    version = _run_data_version(out)
    if version != DATASET_VERSION:
        raise AncientBenchError(f"{out}: the run is on data {version}, the package's data is {DATASET_VERSION}; "
                                "rerun `ancientbench ladder` into a new --out")
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    settings = {}
    for k, block in summary["settings"].items():
        settings[k] = [{
            "label": r["label"], "n_items": r["n_items"], "average": r["average"],
            "competencies": r["competencies"], "shot_independent": r.get("shot_independent", False),
            "answer_letters": r.get("answer_letters"),
            "tasks": {t: {x: v[x] for x in ("accuracy", "correct", "total", "ci")} for t, v in r["tasks"].items()},
        } for r in block["rows"]]
    rows = {}
    for path in sorted((out / "reference").glob("*/results_0shot.json")):
        res = json.loads(path.read_text(encoding="utf-8"))
        rows[res["model"]["name_or_path"]] = res["reference"]["description"]
    compare = {}
    for mode, k in (("letter", 0), ("letter", 5), ("ppl", 0)):
        path = out / f"compare_{mode}_{k}shot.json"
        if path.is_file():
            compare[f"{mode}_{k}shot"] = json.loads(path.read_text(encoding="utf-8"))
    # the paper's recipe in miniature (docs/reference-results.md): `compare FINETUNED BASE --json` files put here
    finetuned = {p.stem.removeprefix("compare_finetuned_"): json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(out.glob("compare_finetuned_*shot.json"))}
    inject = {p.stem.removeprefix("compare_inject_"): json.loads(p.read_text(encoding="utf-8"))
              for p in sorted(out.glob("compare_inject_*shot.json"))}
    return {"dataset_version": version, "data_sha256": data_sha256(), "limit_per_task": limit, "reference_rows": rows,
            "settings": settings, "compare_with_tiny_random": compare, "compare_finetuned": finetuned, "compare_inject": inject}


def write_record(out: str | Path, limit: int | None) -> Path:
    """``records/ladder.json`` from a finished run, and the mini-LM's card rendered from it (the dataset card: run
    ``python -m ancientbench.publish.card``). A clone's job: an installed package has no records/."""
    from ..mini import MINI_PATH
    from ..mini.card import write_card

    paths.record(RECORDS_DIR)
    atomic_write(LADDER_RECORD_FILE, json.dumps(record(out, limit), ensure_ascii=False, indent=1) + "\n")
    write_card(MINI_PATH)
    return LADDER_RECORD_FILE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "--out", dest="out", default="results/ladder", help="folder for every result (default %(default)s)")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                        help=f"first N test items per task (default %(default)s; 0 = all {count_items():,} questions, about 40 minutes on 2 cores)")
    parser.add_argument("--no-predictors", action="store_true",
                        help="leave out the options-only and stem-reading predictor rows")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--inject", action="store_true", help="add the knowledge-injection pair (ppl mode, 0-shot) and its paired comparison")
    parser.add_argument("--record", action="store_true",
                        help="write the figures to records/ladder.json, with the data version, and the mini-LM's card (maintainers, in a clone)")


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise AncientBenchError(f"--limit must be >= 0, got {args.limit}")
    rc = ladder(args.out, limit=args.limit or None, with_predictors=not args.no_predictors, progress=not args.no_progress,
                with_inject=args.inject)
    if rc == 0 and args.record:
        print(f"recorded {write_record(args.out, args.limit or None)}")
    return rc
