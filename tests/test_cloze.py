"""Cloze: the 3-gram checker, an independent re-check of every committed item, and a byte-identical rebuild."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ancientbench import DATASET_PATH
from ancientbench.builders import BuildContext, classics
from ancientbench.builders.common import SourceMissing
from ancientbench.schema import load_split, split_file
from ancientbench.tasks import LETTERS

SOURCES = Path(__file__).resolve().parents[1] / ".sources"


@pytest.fixture(scope="module")
def corpus():
    try:
        return classics.load_corpus(SOURCES)
    except SourceMissing as e:
        pytest.skip(f"chinese-poetry not installed: {e}")


@pytest.fixture(scope="module")
def unihan_db():
    from ancientbench.builders import unihan

    try:
        return unihan.load()
    except SourceMissing as e:
        pytest.skip(f"unicode-data not installed: {e}")


def test_checker_rejects_attested_and_accepts_unattested(corpus):
    from ancientbench.builders.cloze import check_distractor, trigrams_with

    h = classics.han_only("王何必曰利亦有仁義而已矣")
    i = h.index("利")
    assert trigrams_with(h, i, "害") == ("必曰害", "曰害亦", "害亦有")
    assert not check_distractor(corpus, h, i, "利")  # the answer itself is attested
    assert check_distractor(corpus, h, i, "鳥")
    # "曰仁" is attested in 孟子 ("王亦曰仁義而已矣"): one attested 3-gram is enough to reject
    assert not check_distractor(corpus, classics.han_only("王亦曰仁義而已矣"), 3, "仁")


def _parse(row):
    from ancientbench.builders.cloze import BLANK

    sentence = row["question"].split("「", 1)[1].rsplit("」", 1)[0]
    h = classics.han_only(sentence.replace(BLANK, "□"))
    return sentence, h.index("□") if "□" in h else None


def test_committed_items_pass_the_checks_again(corpus, unihan_db):
    from ancientbench.builders.cloze import BLANK, FUNCTION_KEYS, check_distractor

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
        for d in distractors:
            assert len(d) == 1 and check_distractor(corpus, h, i, d), (row["id"], d)
            assert d not in row["question"]
        # one script: no simplified-only graph anywhere in the item
        for ch in row["question"] + "".join(row[L] for L in LETTERS):
            assert not unihan_db.is_simplified_only(ch), (row["id"], ch)


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
