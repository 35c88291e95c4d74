"""The one table formatter every printed or Markdown table goes through (``render``), and the printed paper table
of ``ancientbench eval`` results (``results_table``).

Plain text pads by display width (a CJK character takes two columns, so Chinese task names line up in a
terminal) with a dashed rule under the header; Markdown writes a pipe table with alignment markers.
"""

from __future__ import annotations

import unicodedata
from typing import Callable, Sequence

from .letters import describe, top_cell
from .tasks import (
    COMPETENCIES,
    COMPETENCY_DISPLAY,
    TASK_NAMES,
    TASK_TO_COMPETENCY,
    USER_TASK_NOTE,
    get_task,
)

STYLES = ("text", "markdown")


def display_width(text: str) -> int:
    """Terminal columns of ``text``: wide and full-width characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def render(head: Sequence[str], rows: Sequence[Sequence[str]], *, style: str = "text", align: str | None = None) -> str:
    """``head`` and ``rows`` as one table; ``align`` holds one 'l' or 'r' per column (default: all left)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    align = align or "l" * len(head)
    if len(align) != len(head) or any(len(r) != len(head) for r in rows):
        raise ValueError(f"every row and the alignment need {len(head)} cells")
    if style == "markdown":
        esc = [[str(c).replace("|", "\\|") for c in r] for r in (head, *rows)]
        rule = "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"
        return "\n".join(["| " + " | ".join(esc[0]) + " |", rule, *("| " + " | ".join(r) + " |" for r in esc[1:])])
    widths = [max(display_width(str(r[i])) for r in (head, *rows)) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        out = []
        for c, w, a in zip(cells, widths, align):
            pad = " " * (w - display_width(str(c)))
            out.append(pad + str(c) if a == "r" else str(c) + pad)
        return "  ".join(out).rstrip()

    return "\n".join([line(head), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def results_table(results: Sequence[dict], backend_label: Callable[[str | None], str | None] | None = None) -> str:
    """The paper's table: a row per setting (model, shots), columns glyph, pronunciation, meaning, context,
    average; then the per-task accuracies (rows tasks, columns settings). Percentages. ``backend_label(name)``:
    the backend as a row's label shows it, None to leave it out (default: never shown; the evaluation passes
    :func:`~ancientbench.backends.base.non_default_backend` - this layer knows no backends)."""
    if not results:
        return ""
    labels = []
    for r in results:
        name = r["model"]["name_or_path"]
        flags = [f"{r['setting']['shots']}-shot"]
        shown = backend_label(r["setting"].get("backend")) if backend_label else None
        if shown:
            flags.append(shown)
        if r["setting"].get("mode", "letter") != "letter":
            flags.append(r["setting"]["mode"])
        if r["setting"].get("chat"):
            flags.append("chat")
        if r["setting"].get("letter_style") != "bare":
            flags.append(f"letter={r['setting']['letter_style']}")
        if r["model"].get("smoke_model"):
            flags.append("smoke model")
        labels.append((name, ", ".join(flags)))
    head = ["model", "setting", *[COMPETENCY_DISPLAY[c][1] for c in COMPETENCIES], "Average", "top answer %"]
    dists = [r.get("answer_letters") for r in results]
    rows = [[n, s, *[_pct(r["competencies"].get(c)) for c in COMPETENCIES], _pct(r["average"]), top_cell(d)]
            for (n, s), r, d in zip(labels, results, dists)]
    lines = [render(head, rows, align="ll" + "r" * (len(head) - 2))]
    for (name, s), d in zip(labels, dists):
        if d and d["not_answering"]:
            lines.append(f"NOT ANSWERING: {name} {s} {describe(d)}; its accuracy is that answer's share of the keys")
    present = [t for t in TASK_NAMES if any(t in r["tasks"] for r in results)]
    head2 = ["task", "competency", "n", *[s for _, s in labels]]
    rows2 = []
    for t in present:
        n = next(r["tasks"][t]["total"] for r in results if t in r["tasks"])
        rows2.append([f"{t} {get_task(t).display_zh}", TASK_TO_COMPETENCY[t], str(n),
                      *[_pct(r["tasks"][t]["accuracy"]) if t in r["tasks"] else "-" for r in results]])
    users = sorted({t for r in results for t in r.get("user_tasks", ())})
    for t in users:  # after the ten, marked: outside the competency columns and the average above
        n = next(r["tasks"][t]["total"] for r in results if t in r["tasks"])
        rows2.append([t, "(user task)", str(n), *[_pct(r["tasks"][t]["accuracy"]) if t in r["tasks"] else "-" for r in results]])
    notes = [f"note: {', '.join(users)}: {USER_TASK_NOTE}"] if users else []
    for (name, s), r in zip(labels, results):
        if not r["complete"]:
            notes.append(f"note: {name} {s}: not all ten tasks in full - 'Average' is not the paper's average")
        trunc = sum(v.get("fewshot_truncated_items", 0) for v in r["tasks"].values())
        if trunc:
            notes.append(f"note: {name} {s}: {trunc} item(s) had few-shot exemplars dropped to fit the context")
        failed = sum(v.get("extraction_failures", 0) for v in r["tasks"].values())
        if failed:
            notes.append(f"note: {name} {s}: no letter could be read from {failed} answer(s); counted wrong")
        errs = sum(len(v.get("item_errors", [])) for v in r["tasks"].values())
        if errs:
            notes.append(f"note: {name} {s}: the backend gave no answer for {errs} item(s); counted wrong "
                         "(run the same command again to retry them)")
        long_ = sum(len(v.get("too_long_items", [])) for v in r["tasks"].values())
        if long_:
            notes.append(f"note: {name} {s}: {long_} item(s) longer than the context were counted wrong")
    return "\n".join([*lines, "", render(head2, rows2, align="llr" + "r" * len(results)), *([""] + notes if notes else [])])
