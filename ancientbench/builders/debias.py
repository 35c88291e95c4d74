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
from collections.abc import Callable, Mapping, Sequence

from ..quality.strategies import (
    BALANCED_V1,
    STRATEGIES,
    TASK_LEVEL,
    Context,
    Frequencies,
    Item,
    credits,
    credits_v1,
    strategy_credit,
)

ExtraStrategy = Callable[[str, Sequence[str]], Sequence[float]]  # (question, options) -> a score per option


def chance_distance(totals: Mapping[str, float], credit: Mapping[str, float], names: Sequence[str], n: int,
                    weights: Mapping[str, float] | None = None) -> float:
    """The selectors' cost: the (weighted) squared distance of every strategy's running credit, ``credit`` added,
    from chance (25% of ``n`` items)."""
    weights = weights or {}
    return sum(weights.get(s, 1.0) * (totals[s] + credit[s] - 0.25 * n) ** 2 for s in names)


class Balancer:
    """The greedy selector's state, for builders that choose item by item (e.g. to draw each item's
    distractors from characters no earlier item used): ``choose(question, answer, alternatives)`` returns the
    index of the chosen triple (or -1: every triple breaks ``max_option_uses``) and records it.
    The arguments are those of :func:`pick_balanced`."""

    def __init__(self, freq: Frequencies, *, prefer_first: float = 0.0, strategies=None,
                 extra: Mapping[str, ExtraStrategy] | None = None, task: str | None = None,
                 weights: Mapping[str, float] | None = None, max_option_uses: int | None = None):
        self.freq, self.prefer_first, self.task = freq, prefer_first, task
        self.extra = extra or {}
        self.weights = weights or {}
        self.max_option_uses = max_option_uses
        if task is not None:
            self.v2 = list(strategies or STRATEGIES)
            self.v1 = {}
            self.ctx = Context(freq)
        else:
            self.v2 = []
            self.v1 = strategies or BALANCED_V1  # e.g. BALANCED_V1_WITH_CENTRAL to balance option similarity too
        clash = sorted(set(self.v2 or self.v1) & set(self.extra))
        if clash:
            raise ValueError(f"extra strategies {clash} have the names of audit strategies")
        self.names = [*(self.v2 or self.v1), *self.extra]
        self.totals: Counter = Counter()
        self.uses: Counter = Counter()  # how many chosen items each option string is in
        self.done = 0  # items given a triple so far
        self.seen = 0

    def choose(self, question: str, answer: str, alternatives: Sequence[tuple[str, str, str]]) -> int:
        self.seen += 1
        if not alternatives:
            raise ValueError(f"item {self.seen}: no distractor alternatives to choose from")
        best_i, best_cost, best_credit = -1, None, None
        for i, triple in enumerate(alternatives):
            if self.max_option_uses is not None and any(self.uses[o.strip()] >= self.max_option_uses for o in triple):
                continue
            options = [answer, *triple]
            if self.task is not None:
                c = credits(Item.make(self.task, question, options), 0, self.ctx, self.v2)
            else:
                c = credits_v1(question, options, 0, self.freq, self.v1)
            for name, fn in self.extra.items():
                c[name] = strategy_credit(fn(question, options), 0)
            cost = chance_distance(self.totals, c, self.names, self.done + 1, self.weights)
            cost += self.prefer_first * i
            if best_cost is None or cost < best_cost - 1e-12:
                best_i, best_cost, best_credit = i, cost, c
        if best_i >= 0:
            self.done += 1
            self.totals.update(best_credit)
            chosen = [o.strip() for o in (answer, *alternatives[best_i])]
            self.uses.update(chosen)
            if self.task is not None:
                self.ctx.option_counts.update(chosen)
        return best_i


def ties_the_key(task: str, question: str, answer: str, pool: Sequence[str], ctx: Context, names: Sequence[str]) -> list[str]:
    """The candidates of ``pool`` that score at least as high as the key on one of the strategies ``names`` that
    the key would win (offering one of them beside the key takes that shortcut away)."""
    scores = [STRATEGIES[k](Item.make(task, question, [answer, *pool]), ctx) for k in names]
    return [o for i, o in enumerate(pool, start=1) if any(sc[0] > min(sc) and sc[i] >= sc[0] for sc in scores)]


def pick_balanced(
    items: Sequence[tuple[str, str, Sequence[tuple[str, str, str]]]],
    freq: Frequencies,
    *,
    prefer_first: float = 0.0,
    strategies=None,
    extra: Mapping[str, ExtraStrategy] | None = None,
    task: str | None = None,
    weights: Mapping[str, float] | None = None,
    max_option_uses: int | None = None,
) -> list[int]:
    """For each (question, answer, alternatives) return the index of the chosen alternative triple.

    The cost of a choice is the (weighted) squared distance of every strategy's running credit from 25% of
    the items so far, plus ``prefer_first`` times the alternative's index (alternatives are assumed ordered
    from most to least plausible). Ties go to the earlier alternative, so the result is deterministic.
    ``task``: balance every strategy of :mod:`ancientbench.quality.strategies` (``strategies`` then names a
    subset); the option-recurrence strategies see the counts of the options chosen so far. Without it, data
    version 1's form strategies (``strategies``: old-signature functions).
    ``extra``: task-specific strategies balanced as well, each ``fn(question, options)``.
    ``max_option_uses``: an alternative whose distractors already appear (as any option) in this many chosen
    items is skipped; when every one is, the item's index is -1 (the builder drops it).
    """
    b = Balancer(freq, prefer_first=prefer_first, strategies=strategies, extra=extra, task=task, weights=weights,
                 max_option_uses=max_option_uses)
    return [b.choose(q, a, alts) for q, a, alts in items]


TRIM_BOUND = 0.295  # the builders' margin under the audit's 30%: every per-item strategy at or below this when trimmed


def trim_to_bound(task: str, cands: Sequence, freq: Frequencies, *, bound: float, keep: frozenset[str] = frozenset()):
    """After a greedy choice: drop candidates until every per-item strategy of
    :mod:`ancientbench.quality.strategies` (not the task-level recurrence ones, which the choice balanced from
    running counts) is at or below ``bound`` over what is left. While one is above, the candidate adding most to
    the worst goes (among equals, the one adding most to the strategies above 25%, then the latest); ``keep`` keys (the dev exemplars) stay. Returns the kept
    candidates in their order and how many went."""
    names = [n for n in STRATEGIES if n not in TASK_LEVEL]
    ctx = Context(freq)
    credit = [credits(Item.make(task, c.question, [c.answer, *c.distractors]), 0, ctx, names) for c in cands]
    alive = set(range(len(cands)))
    totals = Counter()
    for c in credit:
        totals.update(c)
    while alive:
        worst = max(names, key=lambda s: totals[s] - bound * len(alive))
        if totals[worst] <= bound * len(alive) + 1e-9:
            break
        helpful = [i for i in alive if cands[i].key not in keep and credit[i][worst] > bound + 1e-12]
        if not helpful:
            break
        # the one adding most to the worst, then most to every strategy above 25% (its removal helps them too)
        i = max(helpful, key=lambda i: (credit[i][worst], sum(credit[i][s] for s in names if totals[s] > 0.25 * len(alive)), i))
        alive.discard(i)
        totals.subtract(credit[i])
    return [c for i, c in enumerate(cands) if i in alive], len(cands) - len(alive)
