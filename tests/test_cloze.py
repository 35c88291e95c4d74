"""Cloze: the 3-gram checker, an independent re-check of every committed item, and a byte-identical rebuild."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ancientbench import DATASET_PATH
from ancientbench.builders import BuildContext
from ancientbench.schema import load_split, split_file
from ancientbench.sources import SourceMissing, classics
from ancientbench.tasks import LETTERS

SOURCES = Path(__file__).resolve().parents[1] / ".sources"


@pytest.fixture(scope="module")
def corpus():
    try:
        return classics.load_corpus(SOURCES)
    except SourceMissing as e:
        pytest.skip(f"chinese-poetry not installed: {e}")


def test_checker_rejects_attested_and_accepts_unattested(corpus):
    from ancientbench.builders.cloze import check_distractor, trigrams_with

    h = classics.han_only("王何必曰利亦有仁義而已矣")
    i = h.index("利")
    assert trigrams_with(h, i, "害") == ("必曰害", "曰害亦", "害亦有")
    assert not check_distractor(corpus, h, i, "利")  # the answer itself is attested
    assert check_distractor(corpus, h, i, "鳥")
    # "曰仁" is attested in 孟子 ("王亦曰仁義而已矣"): one attested 3-gram is enough to reject
    assert not check_distractor(corpus, classics.han_only("王亦曰仁義而已矣"), 3, "仁")


def test_second_idiomatic_fill_is_rejected(corpus):
    """楊惲《報孫會宗書》「位在列卿」: 至 reads with both neighbours (位至 in 全唐詩, 至列 in 古文觀止)."""
    from ancientbench.builders.cloze import check_distractor, reads_with_both_neighbours

    wide = classics.tang_bigrams(SOURCES)
    h = classics.han_only("惲家方隆盛時乘朱輪者十人位在列卿爵爲通侯")
    i = h.index("在")
    assert check_distractor(corpus, h, i, "至")  # the 3-gram checker alone let it through
    assert reads_with_both_neighbours(corpus, wide, h, i, "至")
    assert not reads_with_both_neighbours(corpus, wide, h, i, "鳥")


def _parse(row):
    from ancientbench.builders.cloze import BLANK

    sentence = row["question"].split("「", 1)[1].rsplit("」", 1)[0]
    h = classics.han_only(sentence.replace(BLANK, "□"))
    return sentence, h.index("□") if "□" in h else None


def test_committed_items_pass_the_checks_again(corpus, unihan_db):
    from ancientbench.builders.cloze import (
        BAND,
        BLANK,
        FUNCTION_KEYS,
        check_distractor,
        reads_with_both_neighbours,
    )

    wide = classics.tang_bigrams(SOURCES)
    one_to_many = classics.one_to_many()  # OpenCC STCharacters: simplified graph -> two or more traditional ones
    converted = {b.title for b in classics.BOOKS if b.converted}

    rows = load_split(DATASET_PATH, "cloze", "test") + load_split(DATASET_PATH, "cloze", "dev")
    assert len(load_split(DATASET_PATH, "cloze", "test")) >= 3000
    for row in rows:
        sentence, _ = _parse(row)
        assert sentence.count(BLANK) == 1, row["id"]
        answer = row[row["answer"]]
        distractors = [row[L] for L in LETTERS if L != row["answer"]]
        h = classics.han_only(sentence.replace(BLANK, answer))
        i = classics.han_only(sentence.replace(BLANK, "\u3007")).index("\u3007")
        # the answer restores a sentence of the cited passage
        hits = corpus.contains(sentence.replace(BLANK, answer))
        assert any(m.citation == row["citation"].rsplit(".", 1)[0] for m in hits), row["id"]
        assert classics.fold(answer) not in FUNCTION_KEYS
        f = corpus.folded_counts[classics.fold(h)[i]]  # folded in its sentence, as the builder does (覆 in 反覆)
        for d in distractors:
            assert len(d) == 1 and check_distractor(corpus, h, i, d), (row["id"], d)
            # the answer's frequency band: an option's corpus frequency is the cue the predictors read
            assert f / BAND <= corpus.folded_counts[classics.fold(d)] <= f * BAND, (row["id"], d)
            assert not reads_with_both_neighbours(corpus, wide, h, i, d), (row["id"], d)
            assert d not in row["question"]
        # no stem graph of a machine-converted book is one OpenCC converts one-to-many (a guessed graph)
        if row["subset"] in converted:
            for ch in classics.han_only(sentence.replace(BLANK, answer)):
                assert classics.fold(ch) not in one_to_many and ch not in one_to_many, (row["id"], ch)
        # one script: no simplified-only graph anywhere in the item
        for ch in row["question"] + "".join(row[L] for L in LETTERS):
            assert not unihan_db.is_simplified_only(ch), (row["id"], ch)


def test_known_conversion_errors_are_gone():
    rows = load_split(DATASET_PATH, "cloze", "test") + load_split(DATASET_PATH, "cloze", "dev")
    stems = [classics.han_only(r["question"]) for r in rows]
    # 離騷「既替余以蕙纕兮」was printed with 餘; 十月之交「豔妻煽方處」with 艷
    assert not any(classics.fold("替余以蕙") in classics.fold(s) or "妻煽方處" in s for s in stems)
    assert not any(r["id"] == "cloze-guwenguanzhi.100.2.1" for r in rows)  # 位在列卿 (至 a second fill)


def test_rebuild_is_byte_identical(corpus, unihan_db, tmp_path):
    from ancientbench.builders import cloze
    from ancientbench.builders.common import write_result

    result = cloze.build(BuildContext(sources_dir=SOURCES))
    write_result(result, tmp_path)
    for split in ("test", "dev"):
        built = split_file(tmp_path, "cloze", split).read_bytes()
        committed = split_file(DATASET_PATH, "cloze", split).read_bytes()
        assert hashlib.sha256(built).hexdigest() == hashlib.sha256(committed).hexdigest(), split
    assert sum(result.dropped.values()) + len(result.test) + len(result.dev) == result.candidates
    assert {r["id"] for r in result.dev}.isdisjoint(r["id"] for r in result.test)
