"""``ancientbench ladder``: the README's main job - the shipped mini-LM beside the reference rows, one table.

Runs, into ``--out`` (default ``results/ladder``), each step resumable as ``eval`` is:

1. ``eval`` of ``ancientbench-mini`` in letter mode (the paper's scoring), 0- and 5-shot, and in ppl mode (option
   likelihood), 0-shot, on the first ``--limit`` test items of every task (default 200; ``--limit 0`` for all 19,748);
2. ``eval`` of ``tiny-random`` (letter mode, 0- and 5-shot, the same items): the random-weight smoke model;
3. the knowledge-free reference rows on the same items (:mod:`ancientbench.reports.reference`): chance and the
   Mandarin reader and the shortcut ceiling (every strategy, two models, 5-fold; ``--no-ceiling`` skips it), and the
   AI examinee row from the full-question probe records (its own sample of items, outside the pipeline); a row whose
   inputs are missing (an optional source, records/) is left out with one line, checked before step 1;
4. ``report`` over all of them (Table-2-shaped tables with intervals, plots) into ``<out>/report``, printed, and
   ``compare`` of the mini-LM against tiny-random per shot setting (paired, ``<out>/compare_<mode>_<k>shot.json``);
5. with ``--record``: the figures as ``results.json`` in the shipped mini-LM's folder (:func:`record`), from which
   its model card and the dataset card's "Reference results" section are rendered; ``compare`` files of the
   fine-tuned mini-LM against it put in ``--out`` as ``compare_finetuned_<mode>_<k>shot.json`` (the paper's recipe in
   miniature, docs/reference-results.md) are recorded too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import AncientBenchError
from ..mini import MINI_NAME
from ..tiny import TINY_RANDOM_NAME

DEFAULT_LIMIT = 200


def ladder(out: str | Path, *, limit: int | None = DEFAULT_LIMIT, with_ceiling: bool = True, progress: bool = True) -> int:
    from ..cli import main
    from .reference import check_rows, write_reference_rows

    out = Path(out)
    # the reference rows' inputs (optional sources, records/) are checked first: a missing one costs one line, not the run
    rows = check_rows(["chance", "mandarin-reader", "ai-examinee"] + (["shortcut-ceiling"] if with_ceiling else []),
                      limit=limit or None, log=lambda m: print(m, file=sys.stderr, flush=True))
    limit_args = ["--limit", str(limit)] if limit else []
    rest = [*limit_args, *([] if progress else ["--no-progress"])]
    common = ["--shots", "0", "5", *rest]
    steps = [
        ["eval", "--model", MINI_NAME, "--output", str(out / "letter"), *common],
        ["eval", "--model", MINI_NAME, "--mode", "ppl", "--output", str(out / "ppl"), "--shots", "0", *rest],  # ppl at 0-shot only: four continuations per item, 5-shot would double the job's time
        ["eval", "--model", TINY_RANDOM_NAME, "--output", str(out / "letter"), *common],
    ]
    for argv in steps:
        print(f"$ ancientbench {' '.join(argv)}", file=sys.stderr, flush=True)
        if main(argv) != 0:
            raise AncientBenchError(f"ladder: `ancientbench {' '.join(argv)}` failed (see above); rerun to resume")
    write_reference_rows(out / "reference", rows=rows, limit=limit or None, log=lambda m: None)
    for mode, k in (("letter", 0), ("letter", 5), ("ppl", 0)):
        mini = next((out / mode).glob(f"{MINI_NAME}*/results_{k}shot.json"))  # ppl runs go to <name>-ppl/
        main(["compare", str(mini), str(out / "letter" / TINY_RANDOM_NAME / f"results_{k}shot.json"),
              "--json", str(out / f"compare_{mode}_{k}shot.json")])
    return main(["report", str(out / "letter"), str(out / "ppl"), str(out / "reference"), "--out", str(out / "report")])


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci(ci) -> str:
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""


def record(out: str | Path, limit: int | None) -> dict:
    """The ladder's figures (report summary and paired comparisons) as one JSON-able record with its Markdown."""
    out = Path(out)
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    settings = {}
    for k, block in summary["settings"].items():
        settings[k] = [{
            "label": r["label"], "n_items": r["n_items"], "average": r["average"],
            "competencies": r["competencies"],
            "tasks": {t: {x: v[x] for x in ("accuracy", "correct", "total", "ci")} for t, v in r["tasks"].items()},
        } for r in block["rows"]]
    compare = {}
    for mode, k in (("letter", 0), ("letter", 5), ("ppl", 0)):
        path = out / f"compare_{mode}_{k}shot.json"
        if path.is_file():
            compare[f"{mode}_{k}shot"] = json.loads(path.read_text(encoding="utf-8"))
    # the paper's recipe in miniature (docs/reference-results.md): `compare FINETUNED BASE --json` files put here
    finetuned = {p.stem.removeprefix("compare_finetuned_"): json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(out.glob("compare_finetuned_*shot.json"))}
    rec = {"limit_per_task": limit, "settings": settings, "compare_with_tiny_random": compare, "compare_finetuned": finetuned}
    rec["markdown"] = render_markdown(rec)
    return rec


def render_markdown(rec: dict) -> str:
    from ..tasks import COMPETENCIES, TASK_NAMES

    n = rec["limit_per_task"]
    lines = [f"Measured by `ancientbench ladder --record` on the first {n} test items of every task "
             f"({'all items' if not n else f'{10 * n:,} questions'}); accuracy in %, 95% bootstrap intervals over items. "
             "Letter mode is the paper's scoring, ppl mode option likelihood. Reference rows know no ancient Chinese: "
             "Chance is a seeded uniform guess, Mandarin reader the best Mandarin-reading rule per task, Shortcut "
             "ceiling the combined knowledge-free predictor. The AI examinee row is not knowledge-free and not from the "
             "pipeline: blind AI examinees' full-question answers from the probe records, on their own sample of items "
             "(n per task in the report; only four tasks were probed with the full question).", ""]
    for k, rows in sorted(rec["settings"].items(), key=lambda kv: int(kv[0])):
        lines += [f"**{k}-shot**", "", "| row | " + " | ".join(c for c in COMPETENCIES) + " | average |",
                  "|---|" + "---:|" * (len(COMPETENCIES) + 1)]
        for r in rows:
            comp = r["competencies"]  # a sampled row (the AI examinee) may lack whole competencies
            cells = [f"{_pct(comp.get(c, {}).get('score'))} {_ci(comp.get(c, {}).get('ci'))}".strip() for c in COMPETENCIES]
            avg = r["average"] or {}
            lines.append(f"| {r['label']} | " + " | ".join(cells) + f" | {_pct(avg.get('score'))} {_ci(avg.get('ci'))} |")
        lines += ["", "| row | " + " | ".join(TASK_NAMES) + " |", "|---|" + "---:|" * len(TASK_NAMES)]
        for r in rows:
            lines.append(f"| {r['label']} | " + " | ".join(_pct(r["tasks"].get(t, {}).get("accuracy")) for t in TASK_NAMES) + " |")
        lines.append("")
    lines += _paired_table(rec["compare_with_tiny_random"], "mini-LM setting", "mini", "tiny-random",
                           "**ancientbench-mini against tiny-random** (paired over the same items; average difference in "
                           "points with its 95% paired bootstrap interval; pooled McNemar p):")
    lines += _paired_table(rec.get("compare_finetuned"), "setting", "mini-Ancient", "ancientbench-mini",
                           "**mini-Ancient against ancientbench-mini**: the paper's fine-tuning recipe in miniature "
                           "(`ancientbench finetune` on `finetune-data`'s instruction pairs, test items held out; commands "
                           "in docs/reference-results.md), paired over the same items as above:")
    return "\n".join(lines)


def _paired_table(compares: dict | None, first: str, a: str, b: str, title: str) -> list[str]:
    """Markdown of ``compare`` results (one row per setting: A %, B %, difference, interval, pooled McNemar p)."""
    if not compares:
        return []
    lines = [title, "", f"| {first} | {a} % | {b} % | difference | interval | p |", "|---|---:|---:|---:|---:|---:|"]
    for name, c in compares.items():
        avg, micro = c["average"], c["micro_accuracy"]
        lines.append(f"| {name.replace('_', ', ')} | {_pct(avg['a'])} | {_pct(avg['b'])} | {100 * avg['diff']:+.1f} | "
                     f"{_ci(avg['ci'])} | {micro['mcnemar']['p_value']:.3g} |")
    return [*lines, ""]


def write_record(out: str | Path, limit: int | None) -> Path:
    from ..mini import MINI_PATH
    from ..mini.card import write_card

    rec = record(out, limit)
    path = MINI_PATH / "results.json"
    path.write_text(json.dumps(rec, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    write_card(MINI_PATH)
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "--out", dest="out", default="results/ladder", help="folder for every result (default %(default)s)")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                        help="first N test items per task (default %(default)s; 0 = all 19,748 questions, about 40 minutes on 2 cores)")
    parser.add_argument("--no-ceiling", action="store_true", help="leave out the shortcut-ceiling row (the combined knowledge-free predictor)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--record", action="store_true", help="write the figures into the shipped mini-LM's folder (maintainers)")


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise AncientBenchError(f"--limit must be >= 0, got {args.limit}")
    rc = ladder(args.out, limit=args.limit or None, with_ceiling=not args.no_ceiling, progress=not args.no_progress)
    if rc == 0 and args.record:
        print(f"recorded {write_record(args.out, args.limit or None)}")
    return rc
