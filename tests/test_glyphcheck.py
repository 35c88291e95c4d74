"""glyphcheck: the selection programme of the glyph tasks keeps every bound, the filler cap counts only fillers,
and the trim recounts option recurrence over the items it keeps."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("scipy")

from ancientbench.builders import glyphcheck as gc  # noqa: E402
from ancientbench.quality.strategies import strategy_credit  # noqa: E402


def _planted(n: int = 10):
    # every item: triple 0 gives the key away (credit 1), triple 1 does not (credit 0); both use the filler X
    items = [(f"q{i}", f"a{i}", [("X", f"b{i}", f"c{i}"), ("X", f"d{i}", f"e{i}")]) for i in range(n)]
    table = [[{"s": 1.0}, {"s": 0.0}] for _ in range(n)]
    return items, table


def test_selection_keeps_the_bound_and_prefers_the_neutral_triple():
    items, table = _planted()
    chosen = gc.select_most_within_bound(items, table, ["s"], bound=0.3)
    assert len(chosen) == 10
    assert sum(table[i][k]["s"] for i, k in chosen.items()) <= 0.3 * len(chosen)


def test_cap_limits_a_recurring_distractor_unless_it_is_not_a_filler():
    items, table = _planted()
    capped = gc.select_most_within_bound(items, table, ["s"], bound=0.3, cap=3)
    assert 1 <= len(capped) <= 3  # X in at most 3 items (fractional items of the optimum are left out)
    # X is a part of every item's own character: not a filler, so the cap does not count it
    own = [frozenset({f"b{i}", f"c{i}", f"d{i}", f"e{i}"}) for i in range(10)]
    assert len(gc.select_most_within_bound(items, table, ["s"], bound=0.3, cap=3, capped=own)) == 10


def test_trim_recounts_option_recurrence_over_the_kept_items():
    # items 0-5: a unique key among three recurring fillers (the key is the least frequent option);
    # items 6-19: a recurring key among unique fillers (it is not)
    items = [(f"q{i}", f"a{i}", [("X", "Y", "Z")]) for i in range(6)]
    items += [(f"q{i}", "K", [(f"d{i}", f"e{i}", f"f{i}")]) for i in range(6, 20)]
    table = [[{}] for _ in items]
    kept = gc.trim_to_bound(items, table, ["least_frequent_option"], {i: 0 for i in range(20)}, bound=0.25)
    assert len(kept) == 18 and set(range(6, 20)) <= set(kept)
    count = Counter(o for i in kept for o in (items[i][1], *items[i][2][0]))
    share = sum(strategy_credit([-float(count[o]) for o in (items[i][1], *items[i][2][0])], 0) for i in kept) / len(kept)
    assert share <= 0.25
    # must items stay even when they carry the excess, and the others are not dropped for it (no drop can help)
    kept = gc.trim_to_bound(items, table, ["least_frequent_option"], {i: 0 for i in range(20)}, bound=0.25,
                            must=frozenset(range(6)))
    assert set(kept) == set(range(20))


def test_trim_drops_only_items_above_the_bound():
    # a plain strategy: 4 of 10 items give the key away (0.4 > 0.3); the trim drops just enough of those
    items = [(f"q{i}", f"a{i}", [(f"b{i}", f"c{i}", f"d{i}")]) for i in range(10)]
    table = [[{"s": 1.0 if i < 4 else 0.0}] for i in range(10)]
    kept = gc.trim_to_bound(items, table, ["s"], {i: 0 for i in range(10)}, bound=0.3)
    assert set(range(4, 10)) <= set(kept) and len(kept) == 8  # 4/10 and 3/9 are above 0.3, 2/8 is not



def test_closeness_index_equals_the_pairwise_closeness():
    """The vectorised Mandarin closeness the phonetic_radical builder uses is the shared strategy's, pair by pair."""
    import random

    from ancientbench.quality.strategies import ClosenessIndex, closeness

    rng = random.Random(3)
    pool = [chr(c) for c in range(0x4E00, 0x4E00 + 4000)]
    graphs = rng.sample(pool, 600) + ["a", "〇"]  # a graph without a Mandarin reading scores 0 against everything
    index = ClosenessIndex(graphs)
    for ch in rng.sample(pool, 80) + ["〇"]:
        assert index.scores(ch).tolist() == [closeness(ch, g) for g in graphs], ch
