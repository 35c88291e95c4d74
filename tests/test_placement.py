"""Answer letters and option order (builders/common.py): balanced, seeded, and item by item."""

from collections import Counter

import pytest

from ancientbench.builders.common import Candidate, balanced_letters, place_options
from ancientbench.tasks import LETTERS


def _cands(n: int) -> list[Candidate]:
    return [Candidate(f"k{i}", f"q{i}?", f"a{i}", (f"x{i}", f"y{i}", f"z{i}"), "src", "cit") for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 255, 1001])
def test_every_letter_within_one_of_a_quarter(n):
    counts = Counter(balanced_letters([f"k{i}" for i in range(n)], "radical", 20241).values())
    assert sum(counts.values()) == n
    assert max(counts.values()) - min(counts[L] for L in LETTERS) <= 1


def test_one_item_removed_or_added_moves_few_others():
    # the old placement dealt letters in file order, so removing one curated item re-lettered ~1,500 tradoc_word items
    cands = _cands(2000)
    before = {r["id"]: r for r in place_options(cands, "tradoc_word", 20241)}
    for changed in (cands[:7] + cands[8:], [*cands, Candidate("new", "q?", "a", ("x", "y", "z"), "s", "c")]):
        after = {r["id"]: r for r in place_options(changed, "tradoc_word", 20241)}
        moved = [i for i in after if i in before and after[i] != before[i]]
        assert len(moved) <= 10, moved


def test_seeded_and_the_answer_is_at_its_letter():
    cands = _cands(40)
    rows = place_options(cands, "cloze", 7)
    assert rows == place_options(list(reversed(cands)), "cloze", 7)[::-1]  # order of the list does not matter
    assert rows != place_options(cands, "cloze", 8)
    for c, r in zip(cands, rows):
        assert r[r["answer"]] == c.answer and {r[L] for L in LETTERS} == {c.answer, *c.distractors}


def test_a_key_twice_is_refused():
    with pytest.raises(ValueError, match="share a key"):
        place_options(_cands(3) + _cands(1), "cloze", 7)


def test_an_excerpt_keeps_every_character_and_only_the_quotation_marks_it_closes():
    from ancientbench.builders.common import as_excerpt, unpaired_quotes

    assert as_excerpt("宮之奇諫曰：“虢，虞之表也。") == "宮之奇諫曰：虢，虞之表也。"
    assert as_excerpt("沒死以聞。”太后曰：“敬諾。年幾何矣？”") == "沒死以聞。太后曰：“敬諾。年幾何矣？”"
    assert as_excerpt("王說曰：「《詩》云：『他人有心，予忖度之。』") == "王說曰：《詩》云：『他人有心，予忖度之。』"
    assert as_excerpt("曰：「吾弟則愛之，」") == "曰：「吾弟則愛之，」"
    assert as_excerpt("“甲『乙”丙』") == "甲『乙丙』"  # crossed marks: a close that is not the innermost open is unpaired
    assert unpaired_quotes("“甲『乙”丙』") == [0, 4]
