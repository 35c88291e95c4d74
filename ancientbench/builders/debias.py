"""Choosing among valid distractor sets so that no surface strategy beats chance.

Owns one greedy selector shared by the builders: each item comes with several distractor triples that
have all passed the task's checker; the selector picks, item by item, the triple that keeps the running
accuracy of every trivial strategy of :mod:`ancientbench.audit` (longest option, most frequent character,
overlap with the question, unigram LM, and their reverses) closest to chance (25%). The choice depends
only on the option *set*; letters are assigned later by :func:`~ancientbench.builders.common.place_options`.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Mapping, Sequence

from ..audit import STRATEGIES, Frequencies, credits, strategy_credit

ExtraStrategy = Callable[[str, Sequence[str]], Sequence[float]]  # (question, options) -> a score per option


def pick_balanced(
    items: Sequence[tuple[str, str, Sequence[tuple[str, str, str]]]],
    freq: Frequencies,
    *,
    prefer_first: float = 0.0,
    strategies=None,
    extra: Mapping[str, ExtraStrategy] | None = None,
) -> list[int]:
    """For each (question, answer, alternatives) return the index of the chosen alternative triple.

    The cost of a choice is the squared distance of every strategy's running credit from 25% of the
    items so far, plus ``prefer_first`` times the alternative's index (alternatives are assumed ordered
    from most to least plausible). Ties go to the earlier alternative, so the result is deterministic.
    ``extra``: task-specific strategies balanced as well, each ``fn(question, options)`` (no frequencies), e.g.
    "the option that is a Mandarin homophone of the target" (:mod:`ancientbench.builders.charpool`).
    """
    strategies = strategies or STRATEGIES  # e.g. audit.AUDIT_STRATEGIES to balance option similarity too
    extra = extra or {}
    clash = sorted(set(strategies) & set(extra))
    if clash:
        raise ValueError(f"extra strategies {clash} have the names of audit strategies")
    names = [*strategies, *extra]
    totals: Counter = Counter()
    chosen: list[int] = []
    for n, (question, answer, alternatives) in enumerate(items, start=1):
        if not alternatives:
            raise ValueError(f"item {n}: no distractor alternatives to choose from")
        best_i, best_cost, best_credit = 0, None, None
        for i, triple in enumerate(alternatives):
            options = [answer, *triple]
            c = credits(question, options, 0, freq, strategies)
            for name, fn in extra.items():
                c[name] = strategy_credit(fn(question, options), 0)
            cost = sum((totals[s] + c[s] - 0.25 * n) ** 2 for s in names) + prefer_first * i
            if best_cost is None or cost < best_cost - 1e-12:
                best_i, best_cost, best_credit = i, cost, c
        totals.update(best_credit)
        chosen.append(best_i)
    return chosen
