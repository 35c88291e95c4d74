"""``ancientbench compare A B``: paired comparison of two results on the same items.

Items are matched by id (both predictions files must hold exactly the same ids, each with the same
task; otherwise the command stops and lists the counts). Per task, per competency, for the paper's
average and for the pooled (micro) accuracy it gives the difference A - B in points with a paired
percentile-bootstrap 95% interval (``report.paired_bootstrap_diff``), and per task and pooled a
McNemar test on the discordant items (b = A right and B wrong, c = A wrong and B right):

- exact: two-sided binomial test of b out of b + c at 1/2 (``scipy.stats.binomtest``), used when
  b + c < 25, where the chi-square approximation is poor;
- chi-square with continuity correction: (|b - c| - 1)^2 / (b + c) on 1 degree of freedom, otherwise.

The output says which test each row used. ``--json PATH`` also writes every figure as JSON (``-`` for
standard output, then no table is printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..aggregate import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED, aggregate
from ..argtypes import non_negative_int
from ..fileio import atomic_write
from ..table import render
from ..tasks import COMPETENCIES, COMPETENCY_DISPLAY, TASK_BY_NAME, TASK_NAMES
from .report import paired_bootstrap_diff
from .results import ReportError, collect_result_files, display_name, load_result

EXACT_BELOW = 25  # discordant pairs below which McNemar uses the exact binomial test


def mcnemar(b: int, c: int) -> dict:
    """McNemar test for b (A right, B wrong) and c (A wrong, B right) discordant items."""
    from scipy import stats  # lazy: scipy takes a second to import; only McNemar's exact test needs it

    n = b + c
    if n == 0:
        return {"b": b, "c": c, "test": "exact binomial (no discordant items)", "statistic": None, "p_value": 1.0}
    if n < EXACT_BELOW:
        p = stats.binomtest(b, n, 0.5, alternative="two-sided").pvalue
        return {"b": b, "c": c, "test": "exact binomial", "statistic": None, "p_value": float(min(1.0, p))}
    stat = (abs(b - c) - 1) ** 2 / n
    return {"b": b, "c": c, "test": "chi-square, continuity-corrected", "statistic": float(stat), "p_value": float(stats.chi2.sf(stat, 1))}


def pair_items(a_preds: list[dict], b_preds: list[dict], a_name: str, b_name: str, *, shared_only: bool = False) -> tuple[dict, dict, dict]:
    """Correctness of A and B by item id, and each id's task; a ReportError when the item sets differ
    (unless ``shared_only``: then both are cut to the items they share, which must not be none)."""
    a = {p["id"]: p for p in a_preds}
    b = {p["id"]: p for p in b_preds}
    if shared_only and set(a) & set(b):
        a = {i: p for i, p in a.items() if i in b}
        b = {i: p for i, p in b.items() if i in a}
    if set(a) != set(b):
        only_a = sorted(set(a) - set(b))
        only_b = sorted(set(b) - set(a))
        shown = lambda ids: ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")  # noqa: E731
        msg = [f"the two results are not on the same items: {a_name} has {len(a)}, {b_name} has {len(b)}, {len(set(a) & set(b))} shared"]
        if only_a:
            msg.append(f"{len(only_a)} only in {a_name} ({shown(only_a)})")
        if only_b:
            msg.append(f"{len(only_b)} only in {b_name} ({shown(only_b)})")
        raise ReportError("; ".join(msg))
    for i in a:
        if a[i]["task"] != b[i]["task"] or a[i]["gold"] != b[i]["gold"]:
            raise ReportError(f"item {i!r}: task/gold differ ({a[i]['task']}/{a[i]['gold']} in {a_name}, {b[i]['task']}/{b[i]['gold']} in {b_name})")
    ca = {i: p["pred"] == p["gold"] for i, p in a.items()}
    cb = {i: b[i]["pred"] == b[i]["gold"] for i in a}
    return ca, cb, {i: p["task"] for i, p in a.items()}


def compare(
    a_path: str | Path,
    b_path: str | Path,
    *,
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
    shared_only: bool = False,
) -> dict:
    """All figures of the comparison of results file A with results file B (differences are A - B)."""
    ra, rb = load_result(a_path), load_result(b_path)
    a_name = f"A ({display_name(ra.data)}, {ra.shots}-shot)"
    b_name = f"B ({display_name(rb.data)}, {rb.shots}-shot)"
    ten_a, ten_b = ([p for p in r.predictions if p["task"] in TASK_BY_NAME] for r in (ra, rb))  # user tasks: not compared
    if not ten_a or not ten_b:
        raise ReportError(f"{ra.path if not ten_a else rb.path}: no items of the ten tasks to compare (user tasks stay "
                          "outside the comparison, as outside every mean)")
    ca, cb, task_of = pair_items(ten_a, ten_b, a_name, b_name, shared_only=shared_only)
    ids = list(ca)
    fa = aggregate([ca[i] for i in ids], [task_of[i] for i in ids])
    fb = aggregate([cb[i] for i in ids], [task_of[i] for i in ids])
    diff = paired_bootstrap_diff(ca, cb, task_of, n_resamples=n_resamples, seed=seed)
    tasks = {}
    for t in TASK_NAMES:
        t_ids = [i for i in ids if task_of[i] == t]
        if not t_ids:
            continue
        b = sum(1 for i in t_ids if ca[i] and not cb[i])
        c = sum(1 for i in t_ids if cb[i] and not ca[i])
        tasks[t] = {
            "n": len(t_ids),
            "a": fa["tasks"][t]["accuracy"],
            "b": fb["tasks"][t]["accuracy"],
            "diff": diff["tasks"][t]["diff"],
            "ci": diff["tasks"][t]["ci"],
            "mcnemar": mcnemar(b, c),
        }
    b_all = sum(1 for i in ids if ca[i] and not cb[i])
    c_all = sum(1 for i in ids if cb[i] and not ca[i])
    return {
        "a": {"results_file": str(ra.path), "model": ra.data["model"]["name_or_path"], "shots": ra.shots},
        "b": {"results_file": str(rb.path), "model": rb.data["model"]["name_or_path"], "shots": rb.shots},
        "n_items": len(ids),
        "items_dropped": {"a": len(ten_a) - len(ids), "b": len(ten_b) - len(ids)},
        "difference": "A - B",
        "tasks": tasks,
        "competencies": {
            c: {"a": fa["competencies"][c], "b": fb["competencies"][c], "diff": diff["competencies"][c]["diff"], "ci": diff["competencies"][c]["ci"]}
            for c in COMPETENCIES
            if c in fa["competencies"]
        },
        "average": {"a": fa["average"], "b": fb["average"], "diff": diff["average"]["diff"], "ci": diff["average"]["ci"]},
        "micro_accuracy": {
            "a": fa["micro_accuracy"],
            "b": fb["micro_accuracy"],
            "diff": diff["micro_accuracy"]["diff"],
            "ci": diff["micro_accuracy"]["ci"],
            "mcnemar": mcnemar(b_all, c_all),
        },
        "complete": fa["complete"],
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "confidence": diff["confidence"], "method": diff["method"]},
        "mcnemar_exact_below": EXACT_BELOW,
    }


def _p(p: float) -> str:
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def format_table(res: dict) -> str:
    """The printed comparison: one row per task, competency, average and pooled accuracy."""
    lines = [
        f"A: {res['a']['model']} ({res['a']['shots']}-shot)  {res['a']['results_file']}",
        f"B: {res['b']['model']} ({res['b']['shots']}-shot)  {res['b']['results_file']}",
        f"{res['n_items']} items matched by id"
        + (f" (--shared-items: left out {res['items_dropped']['a']} of A's and {res['items_dropped']['b']} of B's)" if any(res["items_dropped"].values()) else "")
        + ". Differences in points, A - B; 95% paired percentile bootstrap "
        f"({res['bootstrap']['n_resamples']} resamples, seed {res['bootstrap']['seed']}). McNemar: b = A right & B wrong, "
        f"c = A wrong & B right; exact binomial test when b + c < {res['mcnemar_exact_below']}, else chi-square with continuity correction.",
        "",
    ]

    def row(name, n, f, m=None):
        ci = f"[{100 * f['ci'][0]:+.1f}, {100 * f['ci'][1]:+.1f}]"
        cells = [name, str(n), f"{100 * f['a']:.1f}", f"{100 * f['b']:.1f}", f"{100 * f['diff']:+.1f}", ci]
        return cells + ([str(m["b"]), str(m["c"]), _p(m["p_value"]), m["test"]] if m else ["", "", "", ""])

    rows = [row(f"{TASK_BY_NAME[t].display_zh} {t}", f["n"], f, f["mcnemar"]) for t, f in res["tasks"].items()]
    for c, f in res["competencies"].items():
        n = sum(res["tasks"][t]["n"] for t in res["tasks"] if TASK_BY_NAME[t].competency == c)
        rows.append(row(f"{COMPETENCY_DISPLAY[c][0]} {c}", n, f))
    rows.append(row("平均 average" + ("" if res["complete"] else " (not all tasks)"), res["n_items"], res["average"]))
    rows.append(row("all items pooled (micro)", res["n_items"], res["micro_accuracy"], res["micro_accuracy"]["mcnemar"]))
    head = ["", "n", "A %", "B %", "A-B", "95% CI", "b", "c", "p", "test"]
    lines.append(render(head, rows, align="lrrrrlrrrl"))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="results file (or a folder holding exactly one results file)")
    parser.add_argument("b", metavar="B", help="results file to compare against, on the same items")
    parser.add_argument("--json", metavar="PATH", help="also write all figures as JSON to PATH ('-': standard output, no table)")
    parser.add_argument("--shared-items", action="store_true", help="compare on the items both hold (e.g. a model against the human sample) instead of refusing different item sets")
    parser.add_argument("--resamples", type=int, default=DEFAULT_BOOTSTRAP_RESAMPLES, help=f"bootstrap resamples (default {DEFAULT_BOOTSTRAP_RESAMPLES})")
    parser.add_argument("--seed", type=non_negative_int, default=DEFAULT_BOOTSTRAP_SEED, help=f"bootstrap seed (default {DEFAULT_BOOTSTRAP_SEED})")


def _one(path: str) -> Path:
    files = collect_result_files([path])
    if len(files) != 1:
        raise ReportError(f"{path}: holds {len(files)} results files ({', '.join(f.name for f in files)}); name one")
    return files[0]


def run(args: argparse.Namespace) -> int:
    if args.resamples < 1:
        print("error: --resamples must be at least 1", file=sys.stderr)
        return 2
    try:
        res = compare(_one(args.a), _one(args.b), n_resamples=args.resamples, seed=args.seed, shared_only=args.shared_items)
    except ReportError as e:
        print(f"error: {e}" + ("" if args.shared_items or "same items" not in str(e) else " (--shared-items compares on the shared ones)"), file=sys.stderr)
        return 2
    if args.json == "-":
        print(json.dumps(res, ensure_ascii=False, indent=2))
        return 0
    print(format_table(res))
    if args.json:
        write_json(res, args.json)
        print(f"\nwrote {args.json}")
    return 0


def write_json(res: dict, path: str | Path) -> None:
    """A comparison as the ``--json`` file (whole or not at all)."""
    atomic_write(path, json.dumps(res, ensure_ascii=False, indent=2) + "\n")
