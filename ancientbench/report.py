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

from .errors import AncientBenchError

import argparse
import json
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from .aggregate import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED, aggregate, bootstrap_ci
from .tasks import COMPETENCIES, COMPETENCY_DISPLAY, LETTERS, TASK_BY_NAME, TASK_NAMES

HUMAN_NAME = "Human"
RESULTS_GLOB = "results_*shot.json"
PAPER_TABLE_NUMBER = {0: 2, 5: 3}  # the paper's Table 2 is zero-shot, Table 3 is 5-shot


class ReportError(AncientBenchError, ValueError):
    """A results or predictions file that cannot be used; the message names the file (and line/field)."""


@dataclass
class Result:
    """One results file with its predictions, as read from disk."""

    path: Path
    data: dict
    predictions: list[dict]
    label: str = ""
    figures: dict = field(default_factory=dict)  # aggregate() recomputed from the predictions
    ci: dict = field(default_factory=dict)  # aggregate.bootstrap_ci() of the same

    @property
    def shots(self) -> int:
        return int(self.data["setting"]["shots"])

    @property
    def is_human(self) -> bool:
        return self.data["model"].get("name_or_path") == HUMAN_NAME

    @property
    def model_key(self) -> tuple:
        """What identifies 'the same model and scoring convention' across shot settings."""
        m, s = self.data["model"], self.data["setting"]
        return (m.get("name_or_path"), m.get("revision"), m.get("weights_sha256"), s.get("letter_style"), s.get("chat"), bool(s.get("circular")))


# ----------------------------------------------------------------------------------------------------
# Reading results


def collect_result_files(paths: list[str | Path]) -> list[Path]:
    """Expand the command line's RESULTS (files, or folders searched recursively) into results files."""
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            hits = sorted(p.rglob(RESULTS_GLOB))
            if not hits:
                raise ReportError(f"{p}: folder holds no {RESULTS_GLOB} file")
            found.extend(hits)
        elif p.is_file():
            found.append(p)
        else:
            raise ReportError(f"{p}: no such file or folder")
    unique: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(p)
    return unique


def _predictions_path(results_path: Path, data: dict) -> Path:
    """Where a results file's predictions are: as recorded (absolute, or relative to the results file's
    folder or the current folder), else ``predictions_<k>shot.jsonl`` beside it."""
    shots = data.get("setting", {}).get("shots")
    name = data.get("predictions_file")
    candidates = []
    if name:
        p = Path(name)
        candidates += [p] if p.is_absolute() else [results_path.parent / p.name, results_path.parent / p, p]
    candidates.append(results_path.parent / f"predictions_{shots}shot.jsonl")
    for c in candidates:
        if c.is_file():
            return c
    return candidates[0]


def read_predictions(path: Path) -> list[dict]:
    """Read a predictions JSONL, checking each line's fields; errors name the file, line and field."""
    if not path.is_file():
        raise ReportError(f"{path}: predictions file not found")
    rows: list[dict] = []
    ids: dict[str, int] = {}
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ReportError(f"{path}, line {line_no}: not valid JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise ReportError(f"{path}, line {line_no}: expected a JSON object")
            for f in ("id", "task", "gold", "pred"):
                if f not in row:
                    raise ReportError(f"{path}, line {line_no}, field {f!r}: missing")
            if row["task"] not in TASK_BY_NAME:
                raise ReportError(f"{path}, line {line_no}, field 'task': unknown task {row['task']!r}")
            if row["gold"] not in LETTERS:
                raise ReportError(f"{path}, line {line_no}, field 'gold': {row['gold']!r} is not one of A-D")
            if row["pred"] is not None and row["pred"] not in LETTERS:  # null: no answer (e.g. too long), counted wrong
                raise ReportError(f"{path}, line {line_no}, field 'pred': {row['pred']!r} is not one of A-D or null")
            lp = row.get("logprobs")
            if lp is not None and not (
                isinstance(lp, list) and len(lp) == 4 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in lp)
            ):
                raise ReportError(f"{path}, line {line_no}, field 'logprobs': expected four numbers or null")
            if row["id"] in ids:
                raise ReportError(f"{path}, line {line_no}, field 'id': duplicate id {row['id']!r} (first at line {ids[row['id']]})")
            ids[row["id"]] = line_no
            rows.append(row)
    if not rows:
        raise ReportError(f"{path}: predictions file is empty")
    return rows


def _run_items(predictions: list[dict], tasks: dict) -> list[dict]:
    """The predictions that belong to the results file's run.

    ``ancientbench eval`` writes a setting's predictions file in dataset order and keeps records of items
    outside the latest run (e.g. from an earlier run without ``--limit``) after them, so each task's run
    items are its first ``total`` records in the file; tasks the results file does not list are dropped.
    """
    taken: dict[str, int] = {}
    out = []
    for p in predictions:
        row = tasks.get(p["task"])
        if not isinstance(row, dict) or not isinstance(row.get("total"), int):
            continue
        if taken.get(p["task"], 0) < row["total"]:
            taken[p["task"]] = taken.get(p["task"], 0) + 1
            out.append(p)
    return out


def load_result(path: str | Path) -> Result:
    """Read one results file and its predictions, and check that the two agree task by task."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON ({e.msg}, line {e.lineno})") from None
    except OSError as e:
        raise ReportError(f"{path}: cannot read ({e.strerror})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object")
    for key in ("model", "setting", "tasks"):
        if not isinstance(data.get(key), dict):
            raise ReportError(f"{path}, field {key!r}: missing or not an object (is this an ancientbench results file?)")
    if "name_or_path" not in data["model"]:
        raise ReportError(f"{path}, field 'model.name_or_path': missing")
    if not isinstance(data["setting"].get("shots"), int):
        raise ReportError(f"{path}, field 'setting.shots': missing or not an integer")
    predictions = _run_items(read_predictions(_predictions_path(path, data)), data["tasks"])
    figures = aggregate([p["pred"] == p["gold"] for p in predictions], [p["task"] for p in predictions])
    for task, row in data["tasks"].items():
        got = figures["tasks"].get(task)
        if got is None or (got["correct"], got["total"]) != (row.get("correct"), row.get("total")):
            have = f"{got['correct']}/{got['total']}" if got else "no items"
            raise ReportError(
                f"{path}, field 'tasks.{task}': results say {row.get('correct')}/{row.get('total')} correct but the "
                f"predictions file has {have}; the two files do not belong together"
            )
    if not predictions:
        raise ReportError(f"{path}: the predictions file holds none of the results' items")
    return Result(path=path, data=data, predictions=predictions, figures=figures)


def display_name(data: dict) -> str:
    """A short row label: hub ids as they are, local folders by their last component."""
    name = str(data["model"]["name_or_path"]).rstrip("/\\")
    if os.path.isabs(name) or name.startswith((".", "~")):
        name = Path(name).name or name
    return name


def label_results(results: list[Result]) -> None:
    """Give each result a row label, unique within its shot setting (adding what tells them apart)."""
    for r in results:
        r.label = display_name(r.data) + (" (circular, all rotations)" if r.data.get("circular") else "")
    by_setting: dict[tuple[int, str], list[Result]] = {}
    for r in results:
        by_setting.setdefault((r.shots, r.label), []).append(r)
    for group in by_setting.values():
        if len(group) < 2:
            continue
        for r in group:
            s, m = r.data["setting"], r.data["model"]
            extra = []
            if s.get("chat"):
                extra.append("chat")
            if s.get("letter_style") not in (None, "bare"):
                extra.append(f"letters {s.get('letter_style')!r}")
            if m.get("revision"):
                extra.append(f"rev {str(m['revision'])[:10]}")
            if extra:
                r.label += " (" + ", ".join(extra) + ")"
        seen: dict[str, int] = {}
        for r in group:
            seen[r.label] = seen.get(r.label, 0) + 1
            if seen[r.label] > 1:
                r.label += f" #{seen[r.label]}"


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
    import numpy as np

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
    from .tasks import COMPETENCY_TASKS

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


def _columns(kind: str) -> list[tuple[str, str, str]]:
    """(key, Chinese header, English header) for a table kind: 'competency' or 'task'."""
    if kind == "competency":
        cols = [(c, *COMPETENCY_DISPLAY[c]) for c in COMPETENCIES]
        return cols + [("average", "平均", "Average")]
    return [(t, TASK_BY_NAME[t].display_zh, TASK_BY_NAME[t].display_en) for t in TASK_NAMES]


def _value(r: Result, kind: str, key: str) -> tuple[float | None, list[float] | None]:
    if kind == "competency":
        if key == "average":
            return r.figures["average"], r.ci.get("average")
        return r.figures["competencies"].get(key), r.ci.get("competencies", {}).get(key)
    row = r.figures["tasks"].get(key)
    return (row["accuracy"] if row else None), r.ci.get("tasks", {}).get(key)


def sort_rows(results: list[Result]) -> list[Result]:
    """Models by average, best first (ties by label); Human rows after them."""
    models = [r for r in results if not r.is_human]
    models.sort(key=lambda r: (-(r.figures["average"] if r.figures["average"] is not None else -1.0), r.label))
    return models + [r for r in results if r.is_human]


def table_rows(rows: list[Result], kind: str) -> tuple[list[tuple[str, str]], list[dict]]:
    """Cells of one table: for every row and column the value text, its interval text, and bold or not."""
    cols = _columns(kind)
    best: dict[str, str] = {}
    for key, _, _ in cols:
        shown = [pct(_value(r, kind, key)[0]) for r in rows if not r.is_human and _value(r, kind, key)[0] is not None]
        if len([r for r in rows if not r.is_human]) > 1 and shown:
            best[key] = max(shown, key=float)  # compare the values as printed, so printed ties are all bold
    out = []
    for r in rows:
        cells = {}
        for key, _, _ in cols:
            v, ci = _value(r, kind, key)
            cells[key] = {"value": pct(v), "ci": ci_text(ci), "bold": (not r.is_human and v is not None and best.get(key) == pct(v))}
        out.append({"label": r.label + ("" if r.data.get("complete", r.figures["complete"]) else " *"), "human": r.is_human, "cells": cells})
    return [(k, f"{zh} {en}") for k, zh, en in cols], out


def markdown_table(rows: list[Result], kind: str) -> str:
    headers, body = table_rows(rows, kind)
    lines = ["| Model | " + " | ".join(h for _, h in headers) + " |", "|---|" + "---|" * len(headers)]
    for row in body:
        cells = []
        for key, _ in headers:
            c = row["cells"][key]
            v = f"**{c['value']}**" if c["bold"] else c["value"]
            cells.append(f"{v} {c['ci']}".strip())
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def latex_table(rows: list[Result], kind: str, caption: str, tag: str) -> str:
    headers, body = table_rows(rows, kind)
    cols = _columns(kind)
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
# Plots


def plot_labels_cjk() -> str | None:
    """Make a CJK-capable font available to matplotlib and return its family name, or None if none exists.

    matplotlib caches its font list, so a font installed after the cache was built (e.g. Debian
    fonts-wqy-microhei from scripts/install.sh) is added from the system font folders by file name.
    """
    from matplotlib import font_manager as fm

    known = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK", "Noto Serif CJK", "Source Han", "Droid Sans Fallback", "AR PL", "SimHei", "Microsoft YaHei", "PingFang", "Hiragino Sans GB")

    def find() -> str | None:
        for f in fm.fontManager.ttflist:
            if f.name.startswith(known):
                return f.name
        return None

    name = find()
    if name:
        return name
    hints = ("wqy", "notosanscjk", "notoserifcjk", "noto-cjk", "sourcehan", "droidsansfallback", "uming", "ukai")
    for path in fm.findSystemFonts():
        if any(h in path.lower().replace("_", "").replace(" ", "") for h in hints):
            try:
                fm.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # an unreadable font file: skip it, try the next
                continue
    return find()


def _setup_matplotlib():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cjk = plot_labels_cjk()
    if cjk:
        plt.rcParams["font.family"] = ["DejaVu Sans", cjk]  # Latin glyphs from DejaVu, CJK falls back to cjk
    return plt, cjk


def _label(zh: str, en: str, cjk: str | None, sep: str = "\n") -> str:
    return f"{zh}{sep}{en}" if cjk else en


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")
CHANCE_STYLE = dict(color="tab:red", linestyle=(0, (4, 2)), linewidth=1.6)  # off the gridlines, so it stays visible


def _identical_to(rows: list[Result], key) -> dict[int, str]:
    """Row index -> label of an earlier row with exactly the same plotted values (their lines would coincide)."""
    seen: dict[tuple, str] = {}
    same: dict[int, str] = {}
    for i, r in enumerate(rows):
        values = key(r)
        if values in seen:
            same[i] = seen[values]
        else:
            seen[values] = r.label
    return same


def radar_figure(rows: list[Result], title: str):
    """The competency radar: one closed line per result, the human dashed black, chance as a red ring at 25%."""
    import numpy as np

    plt, cjk = _setup_matplotlib()
    n = len(COMPETENCIES)
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False).tolist()
    fig = plt.figure(figsize=(8.5, 6), layout="constrained")
    ax = fig.add_subplot(111, polar=True)
    ax.set_theta_offset(np.pi / 2)
    ax.set_theta_direction(-1)
    ax.set_xticks(angles)
    ax.set_xticklabels([_label(*COMPETENCY_DISPLAY[c], cjk) for c in COMPETENCIES], fontsize=11)
    ax.set_ylim(0, 100)
    ax.set_yticks([20, 40, 60, 80, 100])  # no gridline at 25: the chance ring must not hide on one
    ax.set_yticklabels(["20", "40", "60", "80", "100"], fontsize=8, color="0.4")
    ring = np.linspace(0, 2 * np.pi, 200)
    ax.plot(ring, [25] * len(ring), label="chance (25%)", zorder=1, **CHANCE_STYLE)
    same = _identical_to(rows, lambda r: tuple(r.figures["competencies"].get(c) for c in COMPETENCIES))
    for i, r in enumerate(rows):
        vals = [100 * r.figures["competencies"].get(c, float("nan")) for c in COMPETENCIES]
        if r.is_human:
            style = dict(color="black", linestyle="--", linewidth=2, marker="o")
        elif i in same:  # a line that coincides with an earlier one: dashed with open markers, so both show
            style = dict(linewidth=2.2, marker=MARKERS[i % len(MARKERS)], markersize=8, markerfacecolor="none", linestyle=(0, (3, 3)))
        else:
            style = dict(linewidth=1.8, marker=MARKERS[i % len(MARKERS)], markersize=4, linestyle=LINESTYLES[(i // len(MARKERS)) % len(LINESTYLES)])
        label = r.label + (f" (= {same[i]})" if i in same else "")
        line = ax.plot(angles + angles[:1], vals + vals[:1], label=label, zorder=3, **style)[0]
        if not r.is_human:
            ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.08, color=line.get_color())
    ax.set_title(title, pad=22)
    fig.legend(loc="outside right upper", fontsize=8, frameon=False)
    return fig


def radar_plot(rows: list[Result], path: Path, title: str) -> None:
    import matplotlib.pyplot as plt

    fig = radar_figure(rows, title)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def task_bar_figure(rows: list[Result], title: str):
    """Per-task accuracy bars with 95% bootstrap intervals, one bar per result, chance as a red line."""
    import numpy as np

    plt, cjk = _setup_matplotlib()
    tasks = [t for t in TASK_NAMES if any(t in r.figures["tasks"] for r in rows)]
    x = np.arange(len(tasks))
    width = 0.8 / max(1, len(rows))
    fig, ax = plt.subplots(figsize=(max(9, 1.3 * len(tasks) + 3.5), 5.4), layout="constrained")
    for j, r in enumerate(rows):
        vals, lo, hi = [], [], []
        for t in tasks:
            v, ci = _value(r, "task", t)
            vals.append(100 * v if v is not None else np.nan)
            lo.append(100 * (v - ci[0]) if ci else 0)
            hi.append(100 * (ci[1] - v) if ci else 0)
        kw = dict(color="0.25", hatch="//", edgecolor="white") if r.is_human else {}
        ax.bar(x - 0.4 + width * (j + 0.5), vals, width, yerr=[lo, hi], capsize=2, error_kw=dict(elinewidth=0.8, ecolor="0.3"), label=r.label, **kw)
    ax.axhline(25, label="chance (25%)", **CHANCE_STYLE)
    ax.set_xticks(x)
    ax.set_xticklabels([_label(TASK_BY_NAME[t].display_zh, textwrap.fill(TASK_BY_NAME[t].display_en, 13), cjk) for t in tasks], fontsize=9)
    ax.set_ylabel("accuracy (%), 95% bootstrap interval")
    ax.set_ylim(0, 103)
    ax.set_yticks([0, 20, 40, 60, 80, 100])
    ax.set_xlim(-0.6, len(tasks) - 0.4)
    ax.set_title(title)
    fig.legend(loc="outside right upper", fontsize=8, frameon=False)
    return fig


def task_bar_plot(rows: list[Result], path: Path, title: str) -> None:
    import matplotlib.pyplot as plt

    fig = task_bar_figure(rows, title)
    fig.savefig(path, dpi=130)
    plt.close(fig)


# ----------------------------------------------------------------------------------------------------
# The command


def build_report(results: list[Result], out: Path, *, n_resamples: int, seed: int, bins: int, plots: bool = True) -> dict:
    """Compute every figure, write report.md, tables.tex, summary.json and the PNGs; return the summary."""
    from . import calibration

    out.mkdir(parents=True, exist_ok=True)
    label_results(results)
    for r in results:
        r.ci = bootstrap_ci([p["pred"] == p["gold"] for p in r.predictions], [p["task"] for p in r.predictions], n_resamples=n_resamples, seed=seed)
    # runs of `eval --circular` are scored on rotated items, not comparable row by row: own section only
    circ = [r for r in results if isinstance(r.data.get("circular"), dict)]
    main = [r for r in results if r not in circ]
    humans = [r for r in main if r.is_human]
    settings = sorted({r.shots for r in main if not r.is_human}) or sorted({r.shots for r in humans})
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
        rows = sort_rows([r for r in main if r.shots == k and not r.is_human] + humans)
        incomplete |= any(not r.figures["complete"] for r in rows)
        title = setting_title(k)
        md += [f"## {title[0].upper() + title[1:]}", "", "### Competencies", "", markdown_table(rows, "competency"), "", "### Tasks", "", markdown_table(rows, "task"), ""]
        tex += [latex_table(rows, "competency", f"AncientBench {title}: accuracy (\\%) per competency, 95\\% bootstrap interval.", f"ancientbench-{k}shot"), ""]
        tex += [latex_table(rows, "task", f"AncientBench {title}: accuracy (\\%) per task, 95\\% bootstrap interval.", f"ancientbench-{k}shot-tasks"), ""]
        calib_rows = []
        for r in rows:
            cal = calibration.calibration(r.predictions, bins=bins)
            if cal is not None:
                calib_rows.append((r, cal))
        setting_summary = {
            "rows": [
                {
                    "label": r.label,
                    "results_file": str(r.path),
                    "human": r.is_human,
                    "n_items": r.figures["n"],
                    "complete": r.figures["complete"],
                    "tasks": {t: {**v, "ci": r.ci["tasks"].get(t)} for t, v in r.figures["tasks"].items()},
                    "competencies": {c: {"score": v, "ci": r.ci["competencies"].get(c)} for c, v in r.figures["competencies"].items()},
                    "average": {"score": r.figures["average"], "ci": r.ci["average"]},
                    "micro_accuracy": {"score": r.figures["micro_accuracy"], "ci": r.ci["micro_accuracy"]},
                    "calibration": next((cal for rr, cal in calib_rows if rr is r), None),
                }
                for r in rows
            ]
        }
        if calib_rows:
            md += [f"### Calibration ({bins} equal-width confidence bins)", "", calibration.markdown_table([(r.label, cal) for r, cal in calib_rows]), ""]
            md += ["<details><summary>Calibration per task</summary>", ""]
            for r, cal in calib_rows:
                md += [calibration.task_markdown_table(r.label, cal), ""]
            md += ["</details>", ""]
        if plots:
            radar = out / f"radar_{k}shot.png"
            bars = out / f"tasks_{k}shot.png"
            radar_plot(rows, radar, f"AncientBench, {title}")
            task_bar_plot(rows, bars, f"AncientBench per task, {title}")
            md += [f"![competencies, {title}]({radar.name})", "", f"![tasks, {title}]({bars.name})", ""]
            summary["files"] += [radar.name, bars.name]
            if calib_rows:
                rel = out / f"reliability_{k}shot.png"
                calibration.reliability_plot([(r.label, r.predictions) for r, _ in calib_rows], rel, bins=bins, title=f"Reliability, {'zero-shot' if k == 0 else f'{k}-shot'}")
                md += [f"![reliability, {title}]({rel.name})", ""]
                summary["files"].append(rel.name)
        summary["settings"][str(k)] = setting_summary
    if circ:
        md += [
            "## Option-order robustness (CircularEval)",
            "",
            "Runs made with `ancientbench eval --circular`: plain = accuracy on the original option order; circular = an item "
            "counts only if all four cyclic rotations of its options are answered correctly. These runs are left out of "
            "the tables above (their ordinary figures are over all rotated items).",
            "",
            circular_markdown(sorted(circ, key=lambda r: (r.shots, r.label))),
            "",
        ]
        summary["circular"] = [{"label": r.label, "shots": r.shots, **r.data["circular"]} for r in circ]
    deltas = shot_deltas(main, n_resamples, seed)
    if deltas:
        md += ["## Change from zero-shot to few-shot", "", "Points, k-shot minus 0-shot, with a paired 95% bootstrap interval (same items in both settings).", "", delta_markdown(deltas), ""]
        tex += [delta_latex(deltas), ""]
        summary["shot_deltas"] = deltas
    if incomplete:
        md += ["\\* not all ten tasks scored: the average is over the competencies present, not the paper's average.", ""]
    md += ["## Results files", ""] + [f"- `{r.label}` ({r.shots}-shot): `{r.path}`" for r in results] + [""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")
    (out / "tables.tex").write_text("\n".join(tex), encoding="utf-8")
    summary["files"] = ["report.md", "tables.tex", "summary.json"] + summary["files"]
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2, default=_json_default), encoding="utf-8")
    summary["markdown"] = "\n".join(md)
    return summary


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS", help="results_<k>shot.json files, or folders searched for them")
    parser.add_argument("--out", default="report", help="folder for report.md, tables.tex, summary.json and the PNGs (default: ./report)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_BOOTSTRAP_RESAMPLES, help=f"bootstrap resamples (default {DEFAULT_BOOTSTRAP_RESAMPLES})")
    parser.add_argument("--seed", type=int, default=DEFAULT_BOOTSTRAP_SEED, help=f"bootstrap seed (default {DEFAULT_BOOTSTRAP_SEED})")
    parser.add_argument("--bins", type=int, default=10, help="equal-width confidence bins for calibration (default 10)")
    parser.add_argument("--no-plots", action="store_true", help="write the tables only")


def run(args: argparse.Namespace) -> int:
    import sys

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
