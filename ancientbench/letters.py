"""Which letters a model answers, and the flag for a model that is not answering (issue 36).

A model that gives one letter to (nearly) every item scores that letter's share of the keys: 25% where the keys are
balanced, which reads like "at chance" but is no answer at all. :func:`letter_distribution` counts the predicted
letters (``none``: no letter, a generate-mode answer no letter could be read from, or an item without an answer)
beside the keys' letters, and flags the run when one outcome (a letter, or ``none``) takes more than
:func:`flag_threshold` of the items.

The threshold comes from the keys: ``(1 + g) / 2``, where ``g`` is the largest share one letter has among the keys,
i.e. more than half-way from the keys' own largest share to answering that letter every time. Balanced keys
(g = 0.25) give 62.5%; keys with a 40% letter give 70%, so a model that merely follows the keys' skew is not flagged.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from .tasks import LETTERS

NONE = "none"  # no letter: an unparsed generate-mode answer, or an item the backend gave no answer for
OUTCOMES = (*LETTERS, NONE)


def flag_threshold(gold_shares: Mapping[str, float]) -> float:
    """The share above which one outcome marks a run as not answering (module docstring)."""
    g = max((gold_shares.get(x, 0.0) for x in LETTERS), default=0.25)
    return (1 + g) / 2


def letter_distribution(preds: Iterable[str | None], golds: Iterable[str]) -> dict:
    """Predicted and key letter shares, the most frequent outcome, the threshold and the flag."""
    preds, golds = list(preds), list(golds)
    n = len(preds)
    if n == 0 or n != len(golds):
        raise ValueError(f"letter_distribution needs as many keys as predictions and at least one, got {n} and {len(golds)}")
    pc = Counter(p if p in LETTERS else NONE for p in preds)
    gc = Counter(golds)
    predicted = {x: round(pc.get(x, 0) / n, 6) for x in OUTCOMES}
    gold = {x: round(gc.get(x, 0) / n, 6) for x in LETTERS}
    top = max(OUTCOMES, key=lambda x: (pc.get(x, 0), -OUTCOMES.index(x)))
    threshold = flag_threshold(gold)
    return {"n": n, "predicted": predicted, "gold": gold, "top": top, "top_share": predicted[top],
            "threshold": round(threshold, 6), "not_answering": predicted[top] > threshold}


def describe(dist: Mapping) -> str:
    """One line for a flagged (or any) run: what it answered, the keys' shares and the threshold."""
    what = "gives no readable letter for" if dist["top"] == NONE else f"answers {dist['top']} to"
    shares = ", ".join(f"{x} {100 * dist['predicted'][x]:.1f}" for x in OUTCOMES if dist["predicted"][x])
    keys = ", ".join(f"{x} {100 * dist['gold'][x]:.1f}" for x in LETTERS)
    return (f"{what} {100 * dist['top_share']:.1f}% of {dist['n']:,} items (answers: {shares}; keys: {keys}; "
            f"flagged above {100 * dist['threshold']:.1f}%)")


def top_cell(dist: Mapping | None) -> str:
    """The most frequent answer and its share, for a table column: ``D 100.0 !`` when flagged."""
    if not dist:
        return "-"
    return f"{dist['top']} {100 * dist['top_share']:.1f}" + (" !" if dist["not_answering"] else "")


def from_predictions(records: Iterable[Mapping]) -> dict:
    """:func:`letter_distribution` of prediction records (``pred``, ``gold``), overall and per task."""
    records = list(records)
    out = letter_distribution([r.get("pred") for r in records], [r["gold"] for r in records])
    by_task: dict[str, list[Mapping]] = {}
    for r in records:
        by_task.setdefault(r["task"], []).append(r)
    out["tasks"] = {t: {k: v for k, v in letter_distribution([r.get("pred") for r in rs], [r["gold"] for r in rs]).items()}
                    for t, rs in by_task.items()}
    return out
