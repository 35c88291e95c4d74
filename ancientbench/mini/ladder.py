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
import logging
from pathlib import Path

from .. import paths
from ..aggregate import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from ..dataset import count_items
from ..errors import AncientBenchError
from ..evaluation import evaluate_model, results_path
from ..fileio import atomic_write
from ..paths import INJECT_NAMES, INJECT_PATHS, LADDER_RECORD_FILE, MINI_NAME, MINI_PATH, RECORDS_DIR
from ..reports.compare import compare, format_table, write_json
from ..reports.inject import NOTE, render_table
from ..reports.ladder_record import data_sha256
from ..reports.reference import PREDICTOR_ROWS, check_rows, write_reference_rows
from ..reports.report import build_report
from ..reports.results import collect_result_files, load_result
from ..table import results_table
from ..tasks import DATASET_VERSION
from ..tiny import TINY_RANDOM_NAME
from .card import write_card

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 200
REPORT_BINS = 10  # `report`'s default calibration bins


def inject_available() -> bool:
    return all((p / "config.json").is_file() for p in INJECT_PATHS.values())


def eval_step(model: str, output: Path, *, shots: list[int], mode: str = "letter", limit: int | None = None,
              tasks: list[str] | None = None, progress: bool = True) -> dict[int, dict]:
    """One ``evaluate_model`` run (resumable), its table and results files printed as ``eval`` prints them."""
    log.info("evaluating %s (%s mode, %s-shot) into %s", model, mode, " and ".join(map(str, shots)), output)
    results = evaluate_model(model, tasks=tasks, shots=shots, limit=limit, output_dir=output, progress=progress, mode=mode)
    print(results_table(list(results.values())))
    print("\nresults: " + ", ".join(str(results_path(r["predictions_file"])) for r in results.values()))
    return results


def compare_step(a: Path, b: Path, json_path: Path) -> dict:
    """``compare A B --json PATH``: the paired comparison, printed and written."""
    res = compare(a, b, n_resamples=DEFAULT_BOOTSTRAP_RESAMPLES, seed=DEFAULT_BOOTSTRAP_SEED)
    print(format_table(res))
    write_json(res, json_path)
    print(f"\nwrote {json_path}")
    return res


def report_step(folders: list[Path], out: Path) -> dict:
    """``report FOLDERS --out OUT``: the tables, plots and summary, printed as ``report`` prints them."""
    results = [load_result(p) for p in collect_result_files([str(f) for f in folders])]
    summary = build_report(results, out, n_resamples=DEFAULT_BOOTSTRAP_RESAMPLES, seed=DEFAULT_BOOTSTRAP_SEED,
                           bins=REPORT_BINS)
    print(summary["markdown"])
    print(f"\nwrote {', '.join(summary['files'])} to {out}/")
    return summary


def ladder(out: str | Path, *, limit: int | None = DEFAULT_LIMIT, with_predictors: bool = True, progress: bool = True,
           with_inject: bool = False) -> int:
    out = Path(out)
    # the reference rows' inputs (optional sources, records/) are checked first: a missing one costs one line, not the run
    rows = check_rows(["chance", "mandarin-reader", "ai-examinee"] + (list(PREDICTOR_ROWS) if with_predictors else []),
                      limit=limit or None, log=log.warning)
    run = {"limit": limit or None, "progress": progress}
    eval_step(MINI_NAME, out / "letter", shots=[0, 5], **run)
    eval_step(MINI_NAME, out / "ppl", shots=[0], mode="ppl", **run)  # ppl at 0-shot only: four continuations per item, 5-shot would double the job's time
    eval_step(TINY_RANDOM_NAME, out / "letter", shots=[0, 5], **run)
    with_inject = with_inject and inject_available()
    if with_inject:  # the knowledge-injection pair, ppl 0-shot (letter mode too: `ancientbench inject`)
        for k in ("a", "b"):
            eval_step(INJECT_NAMES[k], out / "ppl", shots=[0], mode="ppl", **run)
    write_reference_rows(out / "reference", rows=rows, limit=limit or None, log=lambda m: None)
    for mode, k in (("letter", 0), ("letter", 5), ("ppl", 0)):
        mini = next((out / mode).glob(f"{MINI_NAME}*/results_{k}shot.json"))  # ppl runs go to <name>-ppl/
        compare_step(mini, out / "letter" / TINY_RANDOM_NAME / f"results_{k}shot.json", out / f"compare_{mode}_{k}shot.json")
    if with_inject:
        b, a = (next((out / "ppl").glob(f"{INJECT_NAMES[k]}*/results_0shot.json")) for k in ("b", "a"))
        cmp_ = compare_step(b, a, out / "compare_inject_ppl_0shot.json")
    report_step([out / "letter", out / "ppl", out / "reference"], out / "report")
    if with_inject:
        print(f"\n## Knowledge injection, ppl mode (letter mode too: `ancientbench inject`)\n\n{NOTE}\n\n"
              + render_table({"ppl": cmp_}))
    return 0


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
    with_tiny = {}
    for mode, k in (("letter", 0), ("letter", 5), ("ppl", 0)):
        path = out / f"compare_{mode}_{k}shot.json"
        if path.is_file():
            with_tiny[f"{mode}_{k}shot"] = json.loads(path.read_text(encoding="utf-8"))
    # the paper's recipe in miniature (docs/reference-results.md): `compare FINETUNED BASE --json` files put here
    finetuned = {p.stem.removeprefix("compare_finetuned_"): json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(out.glob("compare_finetuned_*shot.json"))}
    inject = {p.stem.removeprefix("compare_inject_"): json.loads(p.read_text(encoding="utf-8"))
              for p in sorted(out.glob("compare_inject_*shot.json"))}
    return {"dataset_version": version, "data_sha256": data_sha256(), "limit_per_task": limit, "reference_rows": rows,
            "settings": settings, "compare_with_tiny_random": with_tiny, "compare_finetuned": finetuned, "compare_inject": inject}


def write_record(out: str | Path, limit: int | None) -> Path:
    """``records/ladder.json`` from a finished run, and the mini-LM's card rendered from it (the dataset card: run
    ``python -m ancientbench.publish.card``). A clone's job: an installed package has no records/."""
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
