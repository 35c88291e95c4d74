"""radical_meaning: the distractor reuse cap on the committed data and on the capped selector itself."""

from __future__ import annotations

from collections import Counter

from ancientbench import DATASET_PATH
from ancientbench.schema import load_split
from ancientbench.tasks import LETTERS


def test_committed_items_respect_the_reuse_cap():
    from ancientbench.builders.radical_meaning import REUSE_CAP

    rows = load_split(DATASET_PATH, "radical_meaning", "test") + load_split(DATASET_PATH, "radical_meaning", "dev")
    assert len(load_split(DATASET_PATH, "radical_meaning", "test")) >= 300
    as_distractor: Counter = Counter()
    as_key: Counter = Counter()
    for r in rows:
        as_key[r["subset"], r[r["answer"]]] += 1
        as_distractor.update((r["subset"], r[L]) for L in LETTERS if L != r["answer"])
    assert REUSE_CAP == 3
    assert max(as_distractor.values()) <= REUSE_CAP, as_distractor.most_common(3)
    # within a subset a text is the key once, except a few English definitions two radicals share (box, go)
    assert all(n == 1 or (n == 2 and subset == "kdefinition") for (subset, _), n in as_key.items())
    assert sum(n > 1 for n in as_key.values()) <= 5
    # the fillers of version 1 (火藏 a distractor in 59 items, 北方之行也 and 細絲也 in 41) are gone
    for gloss in ("火藏", "北方之行也", "冬生草也", "細絲也"):
        assert sum(n for (_, o), n in as_distractor.items() if o == gloss) <= 2 * REUSE_CAP


def test_pick_capped_never_exceeds_the_cap_and_drops_what_it_cannot_fill():
    from ancientbench.builders.radical_meaning import pick_capped
    from ancientbench.quality.strategies import Frequencies

    freq = Frequencies({}, "none")
    pool = ["甲也", "乙也", "丙也", "丁也"]
    items = [("s", f"問{i}", f"答{i}", pool) for i in range(5)]
    out = pick_capped(items, freq, cap=3)
    used = Counter(o for t in out if t for o in t)
    assert max(used.values()) <= 3
    # 4 candidates x cap 3 = 12 uses = four items of three distractors; the fifth cannot be filled
    assert sum(t is not None for t in out) == 4 and out.count(None) == 1
    # another subset has its own count
    assert all(pick_capped([("t", "問", "答", pool)], freq, cap=3))
