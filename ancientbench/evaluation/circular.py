"""Option-order robustness, as OpenCompass's CircularEval: every item under the four cyclic rotations.

Rotation k (k = 0..3) of an item presents the options in the cyclic order that starts at letter k:
new option A = old option ``LETTERS[k]``, B = ``LETTERS[k+1]``, ... (OpenCompass's patterns ABCD, BCDA,
CDAB, DABC), so the gold answer moves from old letter g to new letter (g - k) mod 4. The rotated item
gets the id ``<id>#rot<k>``; rotation 0 is the original item. ``ancientbench eval --circular`` scores all
four rotations of every test item (few-shot exemplars are not rotated) and adds to the results:

- plain accuracy: on the original option order (rotation 0 only), comparable with a normal run;
- circular accuracy: an item counts as correct only if all four of its rotations are answered correctly;
- rotation accuracy: the mean over all rotated items.

Each is aggregated like every AncientBench figure (task -> competency mean -> average of competencies).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from ..aggregate import aggregate
from ..table import render
from ..tasks import COMPETENCIES, COMPETENCY_DISPLAY, LETTERS

ROTATIONS = 4
SEPARATOR = "#rot"


def rotate_item(item: dict, k: int) -> dict:
    """Rotation k of an item in the shared schema (options cycled, gold moved, id ``<id>#rot<k>``)."""
    if not 0 <= k < ROTATIONS:
        raise ValueError(f"rotation must be 0-{ROTATIONS - 1}, got {k}")
    if SEPARATOR in item["id"]:
        raise ValueError(f"item {item['id']!r} is already a rotation (its id contains {SEPARATOR!r})")
    gold = LETTERS.index(item["answer"])
    out = dict(item)
    out["id"] = f"{item['id']}{SEPARATOR}{k}"
    for j, letter in enumerate(LETTERS):
        out[letter] = item[LETTERS[(j + k) % 4]]
    out["answer"] = LETTERS[(gold - k) % 4]
    return out


def expand_items(items: Iterable[dict]) -> list[dict]:
    """The four rotations of every item, item by item (rotation 0 first)."""
    return [rotate_item(it, k) for it in items for k in range(ROTATIONS)]


def expand_questions(questions):
    """A copy of an evaluation's QuestionSet whose test items are all rotated (exemplars unchanged)."""
    return dataclasses.replace(
        questions,
        items={t: expand_items(rows) for t, rows in questions.items.items()},
        n_available={t: ROTATIONS * n for t, n in questions.n_available.items()},
    )


def split_id(rotated_id: str) -> tuple[str, int]:
    """``'<id>#rot<k>'`` -> (id, k); a ValueError for an id that is not a rotation."""
    base, sep, k = rotated_id.rpartition(SEPARATOR)
    if not sep or not base or k not in {str(i) for i in range(ROTATIONS)}:
        raise ValueError(f"{rotated_id!r} is not a rotated item id (<id>{SEPARATOR}0..{ROTATIONS - 1})")
    return base, int(k)


def circular_figures(records: Sequence[dict]) -> dict:
    """Plain, circular and rotation accuracy from prediction records of rotated items.

    ``records`` are ``{"id", "task", "gold", "pred"}`` dicts (``pred`` None counts as wrong). Every item
    must be present in all four rotations; a ValueError names the first that is not.
    """
    groups: dict[str, dict[int, dict]] = {}
    for r in records:
        base, k = split_id(r["id"])
        g = groups.setdefault(base, {})
        if k in g:
            raise ValueError(f"item {base!r}: rotation {k} appears twice")
        if g and next(iter(g.values()))["task"] != r["task"]:
            raise ValueError(f"item {base!r}: rotations of different tasks")
        g[k] = r
    for base, g in groups.items():
        if len(g) != ROTATIONS:
            missing = sorted(set(range(ROTATIONS)) - set(g))
            raise ValueError(f"item {base!r}: rotations {missing} missing; circular accuracy needs all {ROTATIONS}")
    ok = lambda r: r.get("pred") is not None and r["pred"] == r["gold"]  # noqa: E731
    bases = list(groups)
    tasks = [groups[b][0]["task"] for b in bases]
    plain = aggregate([ok(groups[b][0]) for b in bases], tasks)
    circ = aggregate([all(ok(groups[b][k]) for k in range(ROTATIONS)) for b in bases], tasks)
    rot = aggregate([ok(r) for r in records], [r["task"] for r in records])

    def triple(key: str, sub: str | None = None) -> dict:
        get = (lambda a: a[key]) if sub is None else (lambda a: a[key].get(sub))
        return {"plain_accuracy": get(plain), "circular_accuracy": get(circ), "rotation_accuracy": get(rot)}

    return {
        "rotations": ROTATIONS,
        "method": "OpenCompass CircularEval: options cycled ABCD, BCDA, CDAB, DABC; circular = all four rotations correct",
        "n_items": len(bases),
        "tasks": {
            t: {
                "plain_accuracy": plain["tasks"][t]["accuracy"],
                "circular_accuracy": circ["tasks"][t]["accuracy"],
                "rotation_accuracy": rot["tasks"][t]["accuracy"],
                "circular_correct": circ["tasks"][t]["correct"],
                "plain_correct": plain["tasks"][t]["correct"],
                "items": circ["tasks"][t]["total"],
            }
            for t in circ["tasks"]
        },
        "competencies": {c: {k: v[c] for k, v in (("plain_accuracy", plain["competencies"]), ("circular_accuracy", circ["competencies"]), ("rotation_accuracy", rot["competencies"]))} for c in COMPETENCIES if c in circ["competencies"]},
        "average": triple("average"),
        "micro_accuracy": triple("micro_accuracy"),
    }


def add_circular_figures(results: dict, records: Sequence[dict]) -> dict:
    """Add the circular figures to a results dict scored on rotated items (in place; also returned).

    The results' own ``tasks``/``competencies``/``average`` stay what they are (over all rotated items,
    matching the predictions file); ``tasks[t]["circular_accuracy"]``, ``tasks[t]["plain_accuracy"]``,
    ``circular_accuracy`` (average over competencies) and the full ``circular`` block are added.
    """
    fig = circular_figures(records)
    for t, row in fig["tasks"].items():
        results["tasks"][t]["circular_accuracy"] = row["circular_accuracy"]
        results["tasks"][t]["plain_accuracy"] = row["plain_accuracy"]
    results["circular_accuracy"] = fig["average"]["circular_accuracy"]
    results["circular"] = fig
    results.setdefault("setting", {})["circular"] = True
    return results


def format_table(results_list: Sequence[dict]) -> str:
    """Plain vs circular accuracy per competency and average, one pair of rows per setting."""
    head = ["setting", "figure"] + [COMPETENCY_DISPLAY[c][1] for c in COMPETENCIES] + ["Average"]
    rows = []
    for res in results_list:
        fig = res.get("circular")
        if not fig:
            continue
        name = f"{res['model']['name_or_path']} {res['setting']['shots']}-shot"
        for key, label in (("plain_accuracy", "plain (original order)"), ("circular_accuracy", "circular (all 4 rotations)")):
            vals = [fig["competencies"].get(c, {}).get(key) for c in COMPETENCIES] + [fig["average"][key]]
            rows.append([name, label] + ["-" if v is None else f"{100 * v:.2f}" for v in vals])

    return render(head, rows, align="ll" + "r" * (len(head) - 2))
