"""The knowledge-injection table (issue 36) from two ``compare`` results, (b) against (a): per task (a) %, (b) %,
(b) - (a) with its paired interval and McNemar p, per scoring mode. ``ancientbench inject``
(:mod:`ancientbench.mini.inject_eval`) runs the evaluations; the ladder and the cards print this table.

Which tasks the knowledge reaches: :data:`INJECTED` (their sources were added to (b)); the rest are controls.
"""

from __future__ import annotations

from ..table import render
from ..tasks import TASK_BY_NAME, TASK_NAMES

INJECTED = ("radical", "radical_meaning", "pronunciation", "phonetic_radical", "homophone")  # mini.inject_corpus
BOOKS_ONLY = ("tradoc_word", "cloze")  # (b) read their books, with every held-out sentence removed

NOTE = ("(a) read the base corpus, (b) the same plus the knowledge sources as reference text; same architecture, "
        "tokenizer, seed and tokens seen. Accuracy in %, 0-shot; (b)-(a) in points with its 95% paired bootstrap "
        "interval (* where it excludes 0); p: McNemar on the discordant items (average row: all items pooled).")


def _cell(f: dict) -> list[str]:
    """(a) %, (b) %, (b) - (a) [interval] of one comparison figure; ``compare`` ran with A = (b), B = (a)."""
    lo, hi = f["ci"]
    mark = " *" if lo > 0 or hi < 0 else ""  # the interval excludes 0
    return [f"{100 * f['b']:.1f}", f"{100 * f['a']:.1f}", f"{100 * f['diff']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]{mark}"]


def table_rows(comparisons: dict[str, dict]) -> tuple[list[str], list[list[str]]]:
    """Head and rows of the injection table: per task (a) %, (b) %, (b) - (a) [95% CI] and McNemar p, per mode."""
    modes = list(comparisons)
    head = ["task", "source added", "n"]
    for m in modes:
        head += [f"{m}: (a) %", f"{m}: (b) %", f"{m}: (b)-(a) [95% CI]", f"{m}: p"]
    rows = []
    for t in TASK_NAMES:
        if not all(t in comparisons[m]["tasks"] for m in modes):
            continue
        added = "yes" if t in INJECTED else "books, not the items' sentences" if t in BOOKS_ONLY else "no (control)"
        row = [f"{t} {TASK_BY_NAME[t].display_zh}", added,
               str(comparisons[modes[0]]["tasks"][t]["n"])]
        for m in modes:
            f = comparisons[m]["tasks"][t]
            row += [*_cell(f), f"{f['mcnemar']['p_value']:.3g}"]
        rows.append(row)
    avg = ["average", "", str(comparisons[modes[0]]["n_items"])]
    for m in modes:
        c = comparisons[m]
        avg += [*_cell(c["average"]), f"{c['micro_accuracy']['mcnemar']['p_value']:.3g}"]
    return head, [*rows, avg]


def render_table(comparisons: dict[str, dict], style: str = "text") -> str:
    head, rows = table_rows(comparisons)
    return render(head, rows, style=style, align="lll" + "rrrl" * len(comparisons))
