"""The curated ``translation`` task: distractor design (labelled misreadings, one script, no option that is
the centre of the other three), the anthologised-passage rule and the share of items outside it."""

from __future__ import annotations

import difflib
import json

import pytest

from ancientbench.builders import curated as cur
from ancientbench.builders import translation as tr
from ancientbench.paths import DEFAULT_SOURCES_DIR
from ancientbench.schema import DataError
from ancientbench.sources import SourceMissing


def _row(**over):
    row = {"key": "x", "book": "孟子", "citation": "孟子·離婁上", "context": "自暴者，不可與有言也",
           "answer": "自己糟蹋自己的人，不能和他談出什麼有價值的話。",
           "distractors": ["對自己發脾氣的人，不能和他說出什麼有價值的話。", "自己糟蹋自己的人，別人不可以把話說給他聽。",
                           "暴露自己短處的人，不能和他一起商量事情。"],
           "errors": ["modern-sense", "agent-patient", "modern-sense+word-sense"], "rationale": "r", "author": "a",
           "reviewer": "", "blind_answer": ""}
    row.update(over)
    return row


@pytest.fixture(scope="module")
def corpus():
    from ancientbench.sources.classics import load_corpus

    try:
        return load_corpus(DEFAULT_SOURCES_DIR)
    except SourceMissing as e:
        pytest.skip(f"npm chinese-poetry not installed ({e}); run scripts/install.sh")


@pytest.fixture(scope="module")
def entries():
    return cur.load_entries("translation")


def test_error_labels_per_distractor(tmp_path):
    path = tmp_path / "translation.jsonl"
    path.write_text(json.dumps(_row(), ensure_ascii=False) + "\n", encoding="utf-8")
    assert cur.load_entries("translation", path=path)[0]["errors"][2] == "modern-sense+word-sense"
    path.write_text(json.dumps(_row(), ensure_ascii=False) + "\n" + json.dumps(_row(key="y", context="自棄者", errors=["negation", "absurd", "mood"]), ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        cur.load_entries("translation", path=path)
    assert err.value.row == 2 and err.value.field == "errors" and "absurd" in str(err.value)


def test_committed_labels_use_the_classical_misreadings(entries):
    labels = {part for e in entries for err in e["errors"] for part in err.split("+")}
    assert labels <= set(tr.TRANSLATION_ERROR_TYPES)
    # the design is about classical grammar, not one or two stock edits
    assert {"function-word", "modern-sense", "agent-patient", "word-sense"} <= labels, labels


def test_options_share_the_answer_script(entries):
    """A distractor in the other script would give the answer away."""
    for e in entries:
        script = cur.item_script("".join(e.options))
        for d in e["distractors"]:
            neutral = cur._opencc("s2t").convert(d) == d and cur._opencc("t2s").convert(d) == d
            assert neutral or cur.item_script(d) == script, (e.key, d)


def test_answer_is_not_the_centre_of_the_options(entries):
    """Distractors are not each the answer plus one small edit: the answer is the unique option most similar
    to the other three in at most 35% of items (chance 25%; the audit bounds the built config at 30%)."""
    def centre(opts):
        scores = [sum(difflib.SequenceMatcher(None, o, p, autojunk=False).ratio() for p in opts if p is not o) for o in opts]
        best = max(scores)
        return [i for i, s in enumerate(scores) if s == best]

    hits = sum(1 for e in entries if centre(e.options) == [0])
    assert hits <= 0.35 * len(entries), (hits, len(entries))


def test_anthologised_rule(corpus):
    def reason(book, ctx):
        return tr.anthologised({"book": book, "context": ctx}, corpus)

    assert reason("古文觀止", "肉食者鄙，未能遠謀") == "school-canon piece (曹劌論戰)"
    assert reason("古文觀止", "叔向見韓宣子，宣子憂貧，叔向賀之") is None  # 國語 叔向賀貧: in the anthology, not the canon
    assert "opening passage" in reason("論語", "學而時習之，不亦說乎")
    assert "寡人之於國也" in reason("孟子", "不違農時，穀不可勝食也")  # a later paragraph of the same canon piece
    assert "famous line" in reason("論語", "見賢思齊焉，見不賢而內自省也")
    assert reason("孟子", "自暴者，不可與有言也") is None  # 離婁上, deep in the book, not a school text


def test_share_outside_anthologised(entries, corpus):
    s = tr.summary(corpus)
    assert s["entries"] == len(entries)
    assert s["outside_share"] >= tr.NON_ANTHOLOGISED_MIN_SHARE, s


def test_canon_prose_names_pieces_of_the_anthology(corpus):
    """Every title in CANON_PROSE is a 古文觀止 piece as chinese-poetry titles it (a misspelt title would count
    its items as outside the canon without notice)."""
    titles = {p.chapter.split("·", 1)[-1] for p in corpus.passages if p.book == "guwenguanzhi"}
    assert tr.CANON_PROSE <= titles, sorted(tr.CANON_PROSE - titles)


def _write_curated(folder, rows, fixes):
    (folder / "translation.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (folder / "translation_script.tsv").write_text("key\tfield\tposition\tconverted\tcorrect\treason\n" + fixes, encoding="utf-8")


def test_simplified_entries_are_built_in_traditional_with_reviewed_fixes(tmp_path):
    """One script: an entry quoting a simplified book is converted (context as the corpus converts it, the
    translations in Taiwan forms), then the reviewed fixes apply; a fix that no longer meets its character, or
    names no entry, is an error naming the file."""
    simp = _row(key="s", book="楚辭", context="余固知謇謇之为患兮", answer="我本来就知道直言会招来祸患。",
                distractors=["多余的话本来就会招来祸患。", "我本来就知道直言会招来后患。", "我本来就知道口吃会招来祸患。"])
    trad = _row(key="t")
    _write_curated(tmp_path, [simp, trad], "s\tcontext\t0\t餘\t余\tthe pronoun\n")
    out = {e.key: e for e in tr.to_one_script(cur.load_entries("translation", tmp_path), tmp_path)}
    assert out["s"]["context"] == "余固知謇謇之爲患兮"  # s2t wrote 餘; the fix restores the pronoun
    assert out["s"]["answer"] == "我本來就知道直言會招來禍患。" and out["s"]["distractors"][1].endswith("後患。")
    assert out["t"].data == trad
    _write_curated(tmp_path, [simp, trad], "s\tcontext\t1\t餘\t余\tthe pronoun\n")
    with pytest.raises(DataError, match=r"translation_script\.tsv, row 2, field .context.: s: expected '餘' at 1 of the built context"):
        tr.to_one_script(cur.load_entries("translation", tmp_path), tmp_path)
    # an entry quoting a book converted upstream takes fixes too (古文觀止's 餘 for the pronoun 余)
    _write_curated(tmp_path, [simp, trad], "t\tanswer\t0\t自\t字\tplanted\n")
    assert tr.to_one_script(cur.load_entries("translation", tmp_path), tmp_path)[1]["answer"].startswith("字己")
    _write_curated(tmp_path, [simp, trad], "u\tanswer\t0\t自\t字\tno such entry\n")
    with pytest.raises(DataError, match=r"row 2, field 'key': fixes for no entry or field of translation: \[\('u', 'answer'\)\]"):
        tr.to_one_script(cur.load_entries("translation", tmp_path), tmp_path)
