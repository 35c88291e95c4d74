"""Choosing among valid distractor sets so that no shortcut strategy beats chance.

Owns one greedy selector shared by the builders: each item comes with several distractor triples that
have all passed the task's checker; the selector picks, item by item, the triple that keeps the running
accuracy of every strategy closest to chance (25%). With ``task=`` the strategies are all of
:mod:`ancientbench.quality.strategies` (form, Mandarin, glyph; option recurrence from running counts);
without it, data version 1's form strategies (``BALANCED_V1``), so builders not yet moved rebuild their
files unchanged. The choice depends only on the option *set*; letters are assigned later by
:func:`~ancientbench.builders.common.place_options`.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Mapping, Sequence

from ..quality.strategies import BALANCED_V1, STRATEGIES, Context, Frequencies, Item, credits, credits_v1, strategy_credit

ExtraStrategy = Callable[[str, Sequence[str]], Sequence[float]]  # (question, options) -> a score per option


def pick_balanced(
    items: Sequence[tuple[str, str, Sequence[tuple[str, str, str]]]],
    freq: Frequencies,
    *,
    prefer_first: float = 0.0,
    strategies=None,
    extra: Mapping[str, ExtraStrategy] | None = None,
    task: str | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[int]:
    """For each (question, answer, alternatives) return the index of the chosen alternative triple.

    The cost of a choice is the (weighted) squared distance of every strategy's running credit from 25% of
    the items so far, plus ``prefer_first`` times the alternative's index (alternatives are assumed ordered
    from most to least plausible). Ties go to the earlier alternative, so the result is deterministic.
    ``task``: balance every strategy of :mod:`ancientbench.quality.strategies` (``strategies`` then names a
    subset); the option-recurrence strategies see the counts of the options chosen so far.
    ``extra``: task-specific strategies balanced as well, each ``fn(question, options)``.
    """
    extra = extra or {}
    weights = weights or {}
    if task is not None:
        names_v2 = list(strategies or STRATEGIES)
        ctx = Context(freq)
    else:
        v1 = strategies or BALANCED_V1  # e.g. BALANCED_V1_WITH_CENTRAL to balance option similarity too
        names_v2 = []
    clash = sorted(set(names_v2 if task is not None else v1) & set(extra))
    if clash:
        raise ValueError(f"extra strategies {clash} have the names of audit strategies")
    names = [*(names_v2 if task is not None else v1), *extra]
    totals: Counter = Counter()
    chosen: list[int] = []
    for n, (question, answer, alternatives) in enumerate(items, start=1):
        if not alternatives:
            raise ValueError(f"item {n}: no distractor alternatives to choose from")
        best_i, best_cost, best_credit = 0, None, None
        for i, triple in enumerate(alternatives):
            options = [answer, *triple]
            if task is not None:
                c = credits(Item.make(task, question, options), 0, ctx, names_v2)
            else:
                c = credits_v1(question, options, 0, freq, v1)
            for name, fn in extra.items():
                c[name] = strategy_credit(fn(question, options), 0)
            cost = sum(weights.get(s, 1.0) * (totals[s] + c[s] - 0.25 * n) ** 2 for s in names) + prefer_first * i
            if best_cost is None or cost < best_cost - 1e-12:
                best_i, best_cost, best_credit = i, cost, c
        totals.update(best_credit)
        if task is not None:
            ctx.option_counts.update(o.strip() for o in (answer, *alternatives[best_i]))
        chosen.append(best_i)
    return chosen
