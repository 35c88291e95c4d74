"""``ancientbench report``: paper-style tables and plots from any set of results files.

Owns the reading of results files and their predictions files (shared with ``compare``) and the
report itself: for every shot setting a table in the shape of the paper's Table 2 (zero-shot) and
Table 3 (5-shot) -- a row per model, columns glyph, pronunciation, meaning, context, average -- with a
per-task table beside it, 95% bootstrap confidence intervals over items (``aggregate.bootstrap_ci``),
the change from 0-shot to k-shot per model with a paired bootstrap interval, calibration figures
(``calibration``), and PNG plots (radar chart of the competencies, per-task grouped bars, reliability
diagram). Outputs: ``report.md``, ``tables.tex``, ``summary.json`` and the PNGs in ``--out``.

Rows are sorted by average (best first) and the best value of each column among the models is set in
bold, as in the paper. A results file whose model is "Human" (``ancientbench human``) is shown as a
reference row under every table; it is not ranked and not considered for bold.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..aggregate import (
    DEFAULT_BOOTSTRAP_RESAMPLES,
    DEFAULT_BOOTSTRAP_SEED,
    aggregate,
    bootstrap_ci,
)
from ..argtypes import non_negative_int
from ..fileio import disk_full, whole_folder
from ..letters import describe, top_cell
from ..table import render
from ..tasks import COMPETENCIES, COMPETENCY_DISPLAY, COMPETENCY_TASKS, TASK_BY_NAME, TASK_NAMES, USER_TASK_NOTE
from . import calibration
from .plots import radar_plot, task_bar_plot
from .results import (
    ReportError,
    Result,
    collect_result_files,
    display_name,
    figure,
    label_results,
    load_result,
)

PAPER_TABLE_NUMBER = {0: 2, 5: 3}  # the paper's Table 2 is zero-shot, Table 3 is 5-shot


# ----------------------------------------------------------------------------------------------------
# Paired differences (also used by compare)


def paired_bootstrap_diff(
    a: dict[str, bool],
    b: dict[str, bool],
    task_of: dict[str, str],
    *,
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> dict:
    """Percentile-bootstrap intervals for the difference A - B of every aggregate figure, items paired.

    ``a`` and ``b`` map the same item ids to correctness. Each resample draws, within every task, as
    many items as the task has, with replacement, and keeps each drawn item's (A, B) pair together.
    Only the counts of the four pair kinds (both right, A only, B only, neither) in a task's resample
    matter, and those are Multinomial(n, observed shares): they are drawn directly (same distribution
    as drawing items). Returns {"tasks": {t: {"diff", "ci"}}, "competencies": {...}, "average": {...},
    "micro_accuracy": {...}, "n_resamples", "confidence", "seed", "method"}.
    """
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    if set(a) != set(b):
        raise ValueError("paired_bootstrap_diff needs the same item ids on both sides")
    point_a = aggregate([a[i] for i in a], [task_of[i] for i in a])
    point_b = aggregate([b[i] for i in a], [task_of[i] for i in a])
    rng = np.random.default_rng(seed)
    diffs: dict[str, np.ndarray] = {}
    micro_num = np.zeros(n_resamples)
    n_all = 0
    for t in TASK_NAMES:
        ids = [i for i in a if task_of[i] == t]
        if not ids:
            continue
        n = len(ids)
        only_a = sum(1 for i in ids if a[i] and not b[i])
        only_b = sum(1 for i in ids if b[i] and not a[i])
        rest = n - only_a - only_b
        draws = rng.multinomial(n, [only_a / n, only_b / n, rest / n], size=n_resamples)
        diffs[t] = (draws[:, 0] - draws[:, 1]) / n
        micro_num += draws[:, 0] - draws[:, 1]
        n_all += n
    alpha = (1 - confidence) / 2

    def iv(x) -> list[float]:
        lo, hi = np.quantile(x, [alpha, 1 - alpha])
        return [float(lo), float(hi)]

    comp_samples = {}

    for c in COMPETENCIES:
        present = [diffs[t] for t in COMPETENCY_TASKS[c] if t in diffs]
        if present:
            comp_samples[c] = np.mean(present, axis=0)
    out = {
        "tasks": {t: {"diff": point_a["tasks"][t]["accuracy"] - point_b["tasks"][t]["accuracy"], "ci": iv(d)} for t, d in diffs.items()},
        "competencies": {
            c: {"diff": point_a["competencies"][c] - point_b["competencies"][c], "ci": iv(s)} for c, s in comp_samples.items()
        },
        "average": None,
        "micro_accuracy": None,
        "n_resamples": n_resamples,
        "confidence": confidence,
        "seed": seed,
        "method": "paired percentile bootstrap; items resampled with replacement within each task, pairs kept together",
    }
    if comp_samples:
        out["average"] = {"diff": point_a["average"] - point_b["average"], "ci": iv(np.mean(list(comp_samples.values()), axis=0))}
    if n_all:
        out["micro_accuracy"] = {"diff": point_a["micro_accuracy"] - point_b["micro_accuracy"], "ci": iv(micro_num / n_all)}
    return out


# ----------------------------------------------------------------------------------------------------
# Tables


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def signed_pct(x: float) -> str:
    return f"{100 * x:+.1f}"


def ci_text(ci: list[float] | None) -> str:
    return "" if not ci else f"[{pct(ci[0])}, {pct(ci[1])}]"


def latex_escape(s: str) -> str:
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(repl.get(ch, ch) for ch in s)


def _columns(kind: str, rows: list[Result] = ()) -> list[tuple[str, str, str]]:
    """(key, Chinese header, English header) for a table kind: 'competency', 'task' or 'user' (the rows' user tasks)."""
    if kind == "user":
        return [(t, t, "(user task)") for t in user_tasks(rows)]
    if kind == "competency":
        cols = [(c, *COMPETENCY_DISPLAY[c]) for c in COMPETENCIES]
        return cols + [("average", "平均", "Average")]
    return [(t, TASK_BY_NAME[t].display_zh, TASK_BY_NAME[t].display_en) for t in TASK_NAMES]


def user_tasks(rows: list[Result]) -> list[str]:
    """The user tasks any of the rows scored (own table, outside every mean: ``tasks.USER_TASK_NOTE``)."""
    return sorted({t for r in rows for t in r.figures.get("user_tasks", ())})


def ten_tasks(r: Result) -> list[dict]:
    """The row's predictions of the ten tasks: calibration, like the means, leaves user tasks out."""
    return [p for p in r.predictions if p["task"] in TASK_BY_NAME]


def sort_rows(results: list[Result]) -> list[Result]:
    """Models by average, best first (ties by label); Human rows after them."""
    models = [r for r in results if not r.is_human]
    models.sort(key=lambda r: (-(r.figures["average"] if r.figures["average"] is not None else -1.0), r.label))
    return models + [r for r in results if r.is_human]


def table_rows(rows: list[Result], kind: str) -> tuple[list[tuple[str, str]], list[dict]]:
    """Cells of one table: for every row and column the value text, its interval text, and bold or not."""
    cols = _columns(kind, rows)
    best: dict[str, str] = {}
    for key, _, _ in cols:
        shown = [pct(figure(r, kind, key)[0]) for r in rows if not r.is_human and figure(r, kind, key)[0] is not None]
        if len([r for r in rows if not r.is_human]) > 1 and shown:
            best[key] = max(shown, key=float)  # compare the values as printed, so printed ties are all bold
    out = []
    for r in rows:
        cells = {}
        for key, _, _ in cols:
            v, ci = figure(r, kind, key)
            cells[key] = {"value": pct(v), "ci": ci_text(ci), "bold": (not r.is_human and v is not None and best.get(key) == pct(v))}
        out.append({"label": r.label + ("" if r.data.get("complete", r.figures["complete"]) else " *"), "human": r.is_human, "cells": cells})
    return [(k, f"{zh} {en}") for k, zh, en in cols], out


INCOMPLETE_NOTE = ("\\* Not every task scored in full (a `--limit` run, or tasks missing): the figures are over the items "
                   "scored, not the full benchmark's.")


def markdown_table(rows: list[Result], kind: str) -> str:
    """A Markdown table; the competency table also prints each row's most frequent answer and its share (``!``:
    the row is flagged as not answering, :mod:`ancientbench.letters`)."""
    headers, body = table_rows(rows, kind)
    cells = []
    for r, row in zip(rows, body):
        line = [row["label"]]
        for key, _ in headers:
            c = row["cells"][key]
            v = f"**{c['value']}**" if c["bold"] else c["value"]
            line.append(f"{v} {c['ci']}".strip())
        if kind == "competency":
            line.append(top_cell(r.letters))
        cells.append(line)
    extra = ["Top answer %"] if kind == "competency" else []
    return render(["Model", *(h for _, h in headers), *extra], cells, style="markdown")


def not_answering_lines(rows: list[Result]) -> list[str]:
    """One Markdown bullet per row whose answers one letter (or no letter) dominates."""
    return [f"- **{r.label}** {describe(r.letters)}: not answering; its accuracy is that answer's share of the keys."
            for r in rows if r.letters.get("not_answering")]


SHOT_INDEPENDENT = " (shot-independent)"


def once_per_row(results: list[Result]) -> list[Result]:
    """Shot-independent rows kept once (their lowest shot setting), labelled; the rest as they are."""
    seen: set[tuple] = set()
    out = []
    for r in sorted(results, key=lambda r: r.shots):
        if r.shot_independent:
            if r.model_key in seen:
                continue
            seen.add(r.model_key)
        out.append(r)
    return out


def latex_table(rows: list[Result], kind: str, caption: str, tag: str) -> str:
    headers, body = table_rows(rows, kind)
    cols = _columns(kind, rows)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small" if kind == "competency" else r"\scriptsize",
        r"\begin{tabular}{l" + "c" * len(cols) + "}",
        r"\toprule",
        "Model & " + " & ".join(latex_escape(zh) for _, zh, _ in cols) + r" \\",
        " & " + " & ".join(latex_escape(en) for _, _, en in cols) + r" \\",
        r"\midrule",
    ]
    human_started = False
    for row in body:
        if row["human"] and not human_started:
            lines.append(r"\midrule")
            human_started = True
        cells = []
        for key, _ in headers:
            c = row["cells"][key]
            v = rf"\textbf{{{c['value']}}}" if c["bold"] else c["value"]
            if c["ci"]:
                v += rf"\,{{\tiny{c['ci']}}}"
            cells.append(v)
        lines.append(latex_escape(row["label"]) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", rf"\label{{tab:{tag}}}", r"\end{table}"]
    return "\n".join(lines)


def circular_markdown(rows: list[Result]) -> str:
    """Plain (original option order) and circular (all four rotations right) accuracy per competency."""
    cols = _columns("competency")
    lines = ["| Model | Shots | " + " | ".join(f"{zh} {en} plain / circular" for _, zh, en in cols) + " |", "|---|---|" + "---|" * len(cols)]
    for r in rows:
        fig = r.data["circular"]
        cells = []
        for key, _, _ in cols:
            v = fig["average"] if key == "average" else fig["competencies"].get(key)
            cells.append("–" if not v else f"{pct(v['plain_accuracy'])} / {pct(v['circular_accuracy'])}")
        lines.append(f"| {display_name(r.data)} | {r.shots} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def setting_title(shots: int) -> str:
    name = "zero-shot" if shots == 0 else f"{shots}-shot"
    num = PAPER_TABLE_NUMBER.get(shots)
    return f"{name} (the paper's Table {num})" if num else name


def shot_deltas(results: list[Result], n_resamples: int, seed: int) -> list[dict]:
    """For each model with a 0-shot and a k-shot result: the change in every figure, k-shot minus 0-shot."""
    by_model: dict[tuple, dict[int, Result]] = {}
    for r in results:
        if not r.is_human:
            by_model.setdefault(r.model_key, {})[r.shots] = r
    out = []
    for settings in by_model.values():
        if 0 not in settings:
            continue
        zero = settings[0]
        for k in sorted(s for s in settings if s > 0):
            few = settings[k]
            a = {p["id"]: p["pred"] == p["gold"] for p in few.predictions}
            b = {p["id"]: p["pred"] == p["gold"] for p in zero.predictions}
            entry = {"model": display_name(zero.data), "from_shots": 0, "to_shots": k, "paired": set(a) == set(b)}
            if entry["paired"]:
                task_of = {p["id"]: p["task"] for p in few.predictions}
                entry["diff"] = paired_bootstrap_diff(a, b, task_of, n_resamples=n_resamples, seed=seed)
            else:  # different item sets: plain differences of the figures, no interval
                fa, fb = few.figures, zero.figures
                entry["diff"] = {
                    "competencies": {c: {"diff": fa["competencies"][c] - fb["competencies"][c], "ci": None} for c in fa["competencies"] if c in fb["competencies"]},
                    "average": {"diff": fa["average"] - fb["average"], "ci": None} if fa["average"] is not None and fb["average"] is not None else None,
                    "tasks": {t: {"diff": fa["tasks"][t]["accuracy"] - fb["tasks"][t]["accuracy"], "ci": None} for t in fa["tasks"] if t in fb["tasks"]},
                }
            out.append(entry)
    out.sort(key=lambda e: (e["to_shots"], e["model"]))
    return out


def delta_markdown(deltas: list[dict]) -> str:
    cols = _columns("competency")
    lines = ["| Model | Shots | " + " | ".join(f"Δ {zh} {en}" for _, zh, en in cols) + " | Paired |", "|---|---|" + "---|" * (len(cols) + 1)]
    for d in deltas:
        cells = []
        for key, _, _ in cols:
            v = d["diff"]["average"] if key == "average" else d["diff"]["competencies"].get(key)
            cells.append("–" if not v else f"{signed_pct(v['diff'])} {ci_text(v['ci'])}".strip())
        lines.append(f"| {d['model']} | 0 → {d['to_shots']} | " + " | ".join(cells) + f" | {'yes' if d['paired'] else 'no (item sets differ)'} |")
    return "\n".join(lines)


def delta_latex(deltas: list[dict]) -> str:
    cols = _columns("competency")
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{ll" + "c" * len(cols) + "}", r"\toprule",
             "Model & Shots & " + " & ".join(rf"$\Delta$ {latex_escape(zh)}" for _, zh, _ in cols) + r" \\",
             " & & " + " & ".join(latex_escape(en) for _, _, en in cols) + r" \\", r"\midrule"]
    for d in deltas:
        cells = []
        for key, _, _ in cols:
            v = d["diff"]["average"] if key == "average" else d["diff"]["competencies"].get(key)
            cells.append("--" if not v else signed_pct(v["diff"]) + (rf"\,{{\tiny{ci_text(v['ci'])}}}" if v["ci"] else ""))
        lines.append(rf"{latex_escape(d['model'])} & 0$\to${d['to_shots']} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{Change from zero-shot to few-shot (points; paired 95\% bootstrap interval).}", r"\label{tab:shot-delta}", r"\end{table}"]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# The command


# what a report folder holds; anything else there is the user's, and the folder is not replaced
REPORT_FILES = re.compile(r"report\.md|tables\.tex|summary\.json|(radar|tasks|reliability)_\d+shot\.png")


def build_report(results: list[Result], out: Path, *, n_resamples: int, seed: int, bins: int, plots: bool = True) -> dict:
    """Compute every figure, write report.md, tables.tex, summary.json and the PNGs; return the summary. The files
    are written into a temporary sibling folder swapped in for ``out`` whole: a killed run or a full disk leaves the
    earlier report as it was, never new plots beside an old report.md."""
    with whole_folder(out, REPORT_FILES.fullmatch, "`ancientbench report`") as tmp:
        return _write_report(results, tmp, Path(out), n_resamples=n_resamples, seed=seed, bins=bins, plots=plots)


def _write_report(results: list[Result], out: Path, final: Path, *, n_resamples: int, seed: int, bins: int,
                  plots: bool) -> dict:
    """The report's files written into ``out`` (a disk-full error names them in ``final``)."""
    results = _scored_rows(results, n_resamples=n_resamples, seed=seed)
    # runs of `eval --circular` are scored on rotated items, not comparable row by row: own section only
    circ = [r for r in results if isinstance(r.data.get("circular"), dict)]
    main = [r for r in results if r not in circ]
    humans = [r for r in main if r.is_human]
    settings = sorted({r.shots for r in main if not r.is_human and not r.shot_independent}) or \
        sorted({r.shots for r in main if not r.is_human}) or sorted({r.shots for r in humans})
    fixed = [r for r in main if r.shot_independent]
    md = ["# AncientBench report", ""]
    md.append(
        f"Accuracy in %, with 95% percentile-bootstrap intervals over items ({n_resamples} resamples, seed {seed}, "
        "items resampled within each task). Competency = mean of its tasks, average = mean of the four "
        "competencies. Rows sorted by average; the best model value per column in **bold**"
        + ("; the Human row is a reference, not ranked." if humans else ".")
    )
    md.append("")
    tex = ["% AncientBench report tables. Needs \\usepackage{booktabs} and, for the Chinese headers, xeCJK or ctex.", ""]
    summary: dict = {"settings": {}, "bootstrap": {"n_resamples": n_resamples, "seed": seed, "confidence": 0.95}, "calibration_bins": bins, "files": []}
    incomplete = False
    for k in settings:
        shown_fixed = fixed if k == settings[0] else []  # read no exemplars: shown once, in the first setting
        rows = sort_rows([r for r in main if r.shots == k and not r.is_human and not r.shot_independent] + shown_fixed + humans)
        incomplete |= any(not r.figures["complete"] for r in rows)
        md += _setting_tables(k, rows, fixed, settings[0])
        tex += _setting_latex(k, rows)
        calib_rows = [(r, cal) for r in rows if (cal := calibration.calibration(ten_tasks(r), bins=bins)) is not None]
        md += _calibration_markdown(calib_rows, bins)
        if plots:
            md += _setting_plots(k, rows, calib_rows, out, final, bins, summary["files"])
        summary["settings"][str(k)] = {"rows": [_row_summary(r, calib_rows) for r in rows]}
        if user_tasks(rows):
            summary["settings"][str(k)]["user_tasks"] = {"tasks": user_tasks(rows), "note": USER_TASK_NOTE}
    md += _circular_markdown(circ)
    if circ:
        summary["circular"] = [{"label": r.label, "shots": r.shots, **r.data["circular"]} for r in circ]
    deltas = shot_deltas([r for r in main if not r.shot_independent], n_resamples, seed)
    if deltas:
        md += ["## Change from zero-shot to few-shot", "", "Points, k-shot minus 0-shot, with a paired 95% bootstrap interval (same items in both settings).", "", delta_markdown(deltas), ""]
        tex += [delta_latex(deltas), ""]
        summary["shot_deltas"] = deltas
    if incomplete:
        md += ["\\* not all ten tasks scored: the average is over the competencies present, not the paper's average.", ""]
    md += ["## Results files", ""] + [f"- `{r.label}` ({r.shots}-shot): `{r.path}`" for r in results] + [""]
    summary["files"] = ["report.md", "tables.tex", "summary.json"] + summary["files"]
    for name, text in (("report.md", "\n".join(md)), ("tables.tex", "\n".join(tex)),
                       ("summary.json", json.dumps(summary, ensure_ascii=False, indent=2, default=_json_default))):
        with disk_full(final / name):
            (out / name).write_text(text, encoding="utf-8")
    summary["markdown"] = "\n".join(md)
    return summary


def _scored_rows(results: list[Result], *, n_resamples: int, seed: int) -> list[Result]:
    """One result per row, labelled (shot-independent rows marked), each with its bootstrap intervals."""
    results = once_per_row(results)
    label_results(results)
    for r in results:
        if r.shot_independent:
            r.label += SHOT_INDEPENDENT
    for r in results:
        r.ci = bootstrap_ci([p["pred"] == p["gold"] for p in r.predictions], [p["task"] for p in r.predictions], n_resamples=n_resamples, seed=seed)
    return results


def _setting_tables(k: int, rows: list[Result], fixed: list[Result], first: int) -> list[str]:
    """One shot setting's Markdown: competency and task tables, with the notes they need."""
    title = setting_title(k)
    md = [f"## {title[0].upper() + title[1:]}", "", "### Competencies", "", markdown_table(rows, "competency"), "", "### Tasks", "", markdown_table(rows, "task"), ""]
    if user_tasks(rows):
        md += ["### User tasks", "", f"{', '.join(user_tasks(rows))}: {USER_TASK_NOTE}.", "", markdown_table(rows, "user"), ""]
    if any(not r.data.get("complete", r.figures["complete"]) for r in rows):
        md += [INCOMPLETE_NOTE, ""]
    if fixed and k != first:
        md += [f"Shot-independent rows ({', '.join(r.label.removesuffix(SHOT_INDEPENDENT) for r in fixed)}) read no "
               f"exemplars: they are reported once, in the {setting_title(first).split(' (')[0]} table.", ""]
    flagged = not_answering_lines(rows)
    if flagged:
        md += ["**Not answering** (one answer dominates; the threshold is half-way from the keys' largest letter "
               "share to 100%, `ancientbench.letters`):", "", *flagged, ""]
    return md


def _setting_latex(k: int, rows: list[Result]) -> list[str]:
    title = setting_title(k)
    return [latex_table(rows, "competency", f"AncientBench {title}: accuracy (\\%) per competency, 95\\% bootstrap interval.", f"ancientbench-{k}shot"), "",
            latex_table(rows, "task", f"AncientBench {title}: accuracy (\\%) per task, 95\\% bootstrap interval.", f"ancientbench-{k}shot-tasks"), ""] + (
        [latex_table(rows, "user", f"User tasks, {title}: accuracy (\\%), 95\\% bootstrap interval; outside "
                                   "the competency means and the average.", f"ancientbench-{k}shot-user"), ""] if user_tasks(rows) else [])


def _row_summary(r: Result, calib_rows: list[tuple[Result, dict]]) -> dict:
    """One row of ``summary.json``: its figures with their intervals, letter shares and calibration."""
    return {
        "label": r.label,
        "results_file": str(r.path),
        "human": r.is_human,
        "n_items": r.figures["n"],
        "complete": r.figures["complete"],
        "tasks": {t: {**v, "ci": r.ci["tasks"].get(t)} for t, v in r.figures["tasks"].items()},
        "competencies": {c: {"score": v, "ci": r.ci["competencies"].get(c)} for c, v in r.figures["competencies"].items()},
        "average": {"score": r.figures["average"], "ci": r.ci["average"]},
        "micro_accuracy": {"score": r.figures["micro_accuracy"], "ci": r.ci["micro_accuracy"]},
        "shot_independent": r.shot_independent,
        "answer_letters": {k: v for k, v in r.letters.items() if k != "tasks"},
        "calibration": next((cal for rr, cal in calib_rows if rr is r), None),
    }


def _calibration_markdown(calib_rows: list[tuple[Result, dict]], bins: int) -> list[str]:
    if not calib_rows:
        return []
    md = [f"### Calibration ({bins} equal-width confidence bins)", "", calibration.markdown_table([(r.label, cal) for r, cal in calib_rows]), ""]
    md += ["<details><summary>Calibration per task</summary>", ""]
    for r, cal in calib_rows:
        md += [calibration.task_markdown_table(r.label, cal), ""]
    return md + ["</details>", ""]


def _setting_plots(k: int, rows: list[Result], calib_rows: list[tuple[Result, dict]], out: Path, final: Path, bins: int,
                   files: list[str]) -> list[str]:
    """One shot setting's PNGs written into ``out`` (their names appended to ``files``); their Markdown lines."""
    title = setting_title(k)
    radar = out / f"radar_{k}shot.png"
    bars = out / f"tasks_{k}shot.png"
    with disk_full(final / radar.name):
        radar_plot(rows, radar, f"AncientBench, {title}")
    with disk_full(final / bars.name):
        task_bar_plot(rows, bars, f"AncientBench per task, {title}")
    md = [f"![competencies, {title}]({radar.name})", "", f"![tasks, {title}]({bars.name})", ""]
    files += [radar.name, bars.name]
    if calib_rows:
        rel = out / f"reliability_{k}shot.png"
        with disk_full(final / rel.name):
            calibration.reliability_plot([(r.label, ten_tasks(r)) for r, _ in calib_rows], rel, bins=bins,
                                         title=f"Reliability, {'zero-shot' if k == 0 else f'{k}-shot'}")
        md += [f"![reliability, {title}]({rel.name})", ""]
        files.append(rel.name)
    return md


def _circular_markdown(circ: list[Result]) -> list[str]:
    if not circ:
        return []
    return [
        "## Option-order robustness (CircularEval)",
        "",
        "Runs made with `ancientbench eval --circular`: plain = accuracy on the original option order; circular = an item "
        "counts only if all four cyclic rotations of its options are answered correctly. These runs are left out of "
        "the tables above (their ordinary figures are over all rotated items).",
        "",
        circular_markdown(sorted(circ, key=lambda r: (r.shots, r.label))),
        "",
    ]


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS", help="results_<k>shot.json files, or folders searched for them")
    parser.add_argument("--output", "--out", dest="out", default="report", help="folder for report.md, tables.tex, summary.json and the PNGs (default: ./report)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_BOOTSTRAP_RESAMPLES, help=f"bootstrap resamples (default {DEFAULT_BOOTSTRAP_RESAMPLES})")
    parser.add_argument("--seed", type=non_negative_int, default=DEFAULT_BOOTSTRAP_SEED, help=f"bootstrap seed (default {DEFAULT_BOOTSTRAP_SEED})")
    parser.add_argument("--bins", type=int, default=10, help="equal-width confidence bins for calibration (default 10)")
    parser.add_argument("--no-plots", action="store_true", help="write the tables only")


def run(args: argparse.Namespace) -> int:
    if args.bins < 1:
        print("error: --bins must be at least 1", file=sys.stderr)
        return 2
    if args.resamples < 1:
        print("error: --resamples must be at least 1", file=sys.stderr)
        return 2
    try:
        results = [load_result(p) for p in collect_result_files(args.results)]
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    summary = build_report(results, out, n_resamples=args.resamples, seed=args.seed, bins=args.bins, plots=not args.no_plots)
    print(summary["markdown"])
    print(f"\nwrote {', '.join(summary['files'])} to {out}/")
    return 0
