"""The chinese-poetry classics adapter: sentence splitting, script normalisation, lookups, missing source."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancientbench.sources import SourceMissing, classics

SOURCES = Path(__file__).resolve().parents[1] / ".sources"


def test_split_sentences_merges_short_pieces():
    text = "孟子對曰：「王何必曰利？亦有仁義而已矣。王曰『何以利吾國』？大夫曰『何以利吾家』？」"
    assert classics.split_sentences(text) == [
        "孟子對曰：「王何必曰利？亦有仁義而已矣。",
        "王曰『何以利吾國』？大夫曰『何以利吾家』？」",
    ]
    # a trailing short piece joins the previous sentence instead of standing alone
    assert classics.split_sentences("天命之謂性，率性之謂道。善。") == ["天命之謂性，率性之謂道。善。"]


def test_fold_and_variant_key():
    assert classics.fold("爲") == classics.fold("為") == "为"
    assert classics.variant_key("爲") == classics.variant_key("為")
    assert classics.variant_key("後") != classics.variant_key("后")  # distinct words stay apart


def test_missing_source_names_install_command(tmp_path):
    with pytest.raises(SourceMissing, match="npm install --prefix .sources chinese-poetry@2.0.1"):
        classics.load_corpus(tmp_path)


@pytest.fixture(scope="module")
def corpus():
    try:
        return classics.load_corpus(SOURCES)
    except SourceMissing as e:
        pytest.skip(f"chinese-poetry not installed: {e}")


def test_corpus_books_and_script(corpus):
    books = {s.book for s in corpus.sentences}
    assert books == {b.key for b in classics.BOOKS}
    first = corpus.sentences[0]
    assert first.book == "lunyu" and first.original.startswith("子曰：“学而时习之")
    assert first.text.startswith("子曰：“學而時習之")  # converted to traditional
    assert first.citation == "論語·學而篇·1.1"
    # the simplified books no longer contain graphs that only exist in simplified script
    assert "学" not in corpus.char_freq and "學" in corpus.char_freq


def test_one_to_many_is_read_from_opencc_dictionary():
    table = classics.one_to_many()
    assert set(table["余"]) == {"餘", "余"} and set(table["艳"]) == {"豔", "艷"} and set(table["后"]) == {"後", "后"}
    assert "为" not in table  # OpenCC maps 为 to 爲 only
    assert 200 < len(table) < 1000
    assert classics.is_one_to_many("餘") and classics.is_one_to_many("余") and classics.is_one_to_many("豔")
    assert not classics.is_one_to_many("爲") and not classics.is_one_to_many("利")


def test_ambiguous_conversions_are_flagged(corpus):
    assert {"后", "余", "于", "云", "艳"} <= corpus.ambiguous_simplified
    assert "为" not in corpus.ambiguous_simplified  # 爲/為 are variant forms, not distinct words
    s = next(s for s in corpus.sentences if s.book == "chuci" and "余" in s.original)
    pos = s.original.index("余")
    assert pos in s.ambiguous and s.text[pos] == "餘"  # s2t writes the pronoun 余 as 餘: flagged


def test_contains_in_every_script(corpus):
    (m,) = corpus.contains("王何必曰利")
    assert (m.book, m.chapter, m.passage, m.how) == ("mengzi", "梁惠王上", 2, "original")
    assert corpus.contains("学而时习之")[0].how == "original"  # the package's simplified 論語
    assert corpus.contains("學而時習之")[0].how == "traditional"  # our conversion
    assert corpus.contains("王何必曰利")[0].citation == "孟子·梁惠王上·2"
    assert corpus.contains("王何必曰利?") and corpus.contains("學而，時習之")  # punctuation ignored
    assert any(m.how == "folded" for m in corpus.contains("其為人也孝弟"))  # 論語 has 爲 after s2t
    assert corpus.contains("王何必曰害") == []


def test_counts_and_frequencies(corpus):
    assert corpus.count("王何必曰利") == 1
    assert corpus.count("而已矣") == corpus.ngrams[3][classics.fold("而已矣")] > 1
    assert corpus.frequency("為") == corpus.frequency("爲") == corpus.written_counts["為"] + corpus.written_counts["爲"]
    assert corpus.display_form("爲", "mengzi") == "為" and corpus.display_form("為", "guwenguanzhi") == "爲"
    assert not corpus.attested("曰害亦")


def _small_corpus(text: str, pinned=None) -> classics.Corpus:
    passage = classics.Passage("mengzi", "梁惠王上", 1, 1, text, text, "")
    return classics.Corpus([passage], [classics.Sentence("mengzi", "梁惠王上", 1, 1, 1, text, text, frozenset())],
                           frozenset(), pinned=pinned)


def test_builders_balance_with_the_pinned_counts(tmp_path):
    """A quote fix changes what is attested, never the counts the builders balance with: those stay pinned."""
    before = _small_corpus("王何必曰利？亦有仁義而已矣。")
    path = classics.write_pinned_counts(before, "pinned for a test", tmp_path / "freq.tsv")
    pin = classics.read_pinned_counts(path)
    assert pin.written == before.char_freq and pin.folded == before.ngrams[1] and pin.note == "pinned for a test"
    fixed = _small_corpus("王何必曰利？亦有仁義而已矣，義義。", pinned=pin)
    assert fixed.frequency("義") == 1 and fixed.balancing_frequencies() == before.balancing_frequencies()
    assert fixed.count("義義") == 1 and fixed.char_freq["義"] == 3  # the live text still answers "is it attested?"
    assert _small_corpus("義義").frequency("義") == 2  # without a pin, the live counts


def test_a_malformed_pin_line_is_named(tmp_path):
    from ancientbench.schema import DataError

    bad = tmp_path / "freq.tsv"
    bad.write_text("# note\nkind\tchar\tcount\nwritten\t義\t3\nwritten\t仁義\t2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"freq.tsv, row 4: expected 'written\|folded"):
        classics.read_pinned_counts(bad)
    assert classics.read_pinned_counts(tmp_path / "absent.tsv") is None


def test_the_shipped_pin_is_close_to_the_corpus(corpus):
    """The pin may lag the corrected corpus by a few fixes; a drift beyond 0.1% of the text means re-pin (a data change)."""
    assert corpus.pinned is not None, f"{classics.FREQUENCIES_FILE} is missing: ancientbench build --repin"
    live, pinned = corpus.char_freq, corpus.pinned.written
    drift = sum(abs(live[c] - pinned[c]) for c in set(live) | set(pinned))
    assert drift <= 0.001 * corpus.total_chars, f"the pinned counts drift by {drift} characters: ancientbench build --repin"


def test_tang_bigrams(corpus):
    grams = classics.tang_bigrams(SOURCES)
    assert classics.fold("位至") in grams and classics.fold("明月") in grams
    assert len(grams) > 500_000
    assert classics.fold("位至") not in corpus.ngrams[2]  # attested in 全唐詩 only: why the wider set exists


def test_reviewed_corrections_are_applied(corpus):
    """The package's 論語 prints 里仁 4.18 as 諫志不從 and carries a footnote inside 孟子·盡心上: the corpus every
    builder reads has the received text, and every correction line is reviewed (decision and reason)."""
    texts = [s.text for s in corpus.sentences]
    assert any("幾諫，見志不從" in t for t in texts)
    assert not any("諫志不從" in t for t in texts)
    assert not any("孟子正義" in p.text or "猶1" in p.text for p in corpus.passages)
    lines = classics.corrections()
    assert sum(c.decision == "correct" for c in lines) >= 15 and all(c.reason for c in lines)


def test_a_conversion_slip_is_fixed_after_opencc(corpus, tmp_path, monkeypatch):
    """OpenCC s2t writes 癢 for every 痒, but 桑柔's 稼穡卒痒 is 痒 (sickness): a ``convert`` line fixes the converted
    text graph for graph; one that changes the length, or names a book that is not converted, is refused."""
    assert any("稼穡卒痒" in s.text for s in corpus.sentences) and not any("卒癢" in s.text for s in corpus.sentences)
    bad = tmp_path / "classics_corrections.tsv"
    head = classics.CORRECTIONS_FILE.read_text(encoding="utf-8").splitlines()[0]
    monkeypatch.setattr(classics, "CORRECTIONS_FILE", bad)
    try:
        for line, problem in (("shijing\t257\t7\t卒癢\t卒痒也\tconvert\t癢\t痒\tt", "differ in length"),
                              ("mengzi\t1\t1\t王\t玉\tconvert\t王\t玉\tt", "mengzi is not converted")):
            bad.write_text(f"{head}\n{line}\n", encoding="utf-8")
            classics.corrections.cache_clear()
            with pytest.raises(ValueError, match=problem):
                classics.corrections()
    finally:
        classics.corrections.cache_clear()


def test_a_correction_that_misses_its_paragraph_is_named(tmp_path, monkeypatch):
    bad = tmp_path / "classics_corrections.tsv"
    head = classics.CORRECTIONS_FILE.read_text(encoding="utf-8").splitlines()[0]
    bad.write_text(head + "\nlunyu\t4\t18\t不在此段\t改\tcorrect\t諫\t見\ttest\n", encoding="utf-8")
    monkeypatch.setattr(classics, "CORRECTIONS_FILE", bad)
    classics.corrections.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"lunyu 4\.18: context '不在此段' occurs 0 times"):
            classics.corrected("lunyu", 4, 18, "子曰：「事父母幾諫，見志不從。」")
        bad.write_text(head + "\nlunyu\t4\n", encoding="utf-8")
        classics.corrections.cache_clear()
        with pytest.raises(ValueError, match=r"classics_corrections.tsv:2: expected 9 tab-separated cells"):
            classics.corrections()
    finally:
        classics.corrections.cache_clear()


def test_reviewed_titles_are_applied(corpus):
    """The conversion wrote 鄭伯克段於鄢, 季樑, 穀風之什 (谷→穀) in chapter labels: the corpus every builder reads has
    the received title of every line decided ``correct`` and the converted one of every line kept, and no label
    that was corrected is left anywhere."""
    labels = {(p.book, p.chapter_no): p.chapter for p in corpus.passages}
    lines = classics.title_corrections()
    assert sum(c.decision == "correct" for c in lines.values()) >= 40 and all(c.reason for c in lines.values())
    for (book, no), c in lines.items():
        assert labels[(book, no)] == (c.corrected if c.decision == "correct" else c.title), (book, no)
    wrong = {c.title for c in lines.values() if c.decision == "correct"}
    assert not wrong & set(labels.values())
    assert labels[("guwenguanzhi", 1)] == "卷一·鄭伯克段于鄢" and labels[("guwenguanzhi", 7)] == "卷一·季梁諫追楚師"
    assert labels[("shijing", 35)] == "國風·邶風·谷風" and labels[("shijing", 304)] == "商頌·那之什·長發"


def test_a_stale_or_malformed_title_line_is_named(tmp_path, monkeypatch):
    bad = tmp_path / "classics_title_corrections.tsv"
    head = classics.TITLE_CORRECTIONS_FILE.read_text(encoding="utf-8").splitlines()[0]
    bad.write_text(head + "\nguwenguanzhi\t1\t卷一·鄭伯克段於鄢\t卷一·鄭伯克段于鄢\tcorrect\t於\t于\ttest\n", encoding="utf-8")
    monkeypatch.setattr(classics, "TITLE_CORRECTIONS_FILE", bad)
    classics.title_corrections.cache_clear()
    try:
        assert classics.corrected_title("guwenguanzhi", 1, "卷一·鄭伯克段於鄢") == "卷一·鄭伯克段于鄢"
        assert classics.corrected_title("guwenguanzhi", 2, "卷一·周鄭交質") == "卷一·周鄭交質"
        with pytest.raises(ValueError, match=r"guwenguanzhi chapter 1 is '卷一·鄭伯' in the package"):
            classics.corrected_title("guwenguanzhi", 1, "卷一·鄭伯")
        bad.write_text(head + "\nguwenguanzhi\tone\t甲\t乙\tcorrect\t甲\t乙\ttest\n", encoding="utf-8")
        classics.title_corrections.cache_clear()
        with pytest.raises(ValueError, match=r"classics_title_corrections.tsv:2: expected 8 tab-separated cells"):
            classics.title_corrections()
    finally:
        classics.title_corrections.cache_clear()


def test_tidy_removes_the_sources_notes_and_stray_spaces():
    """What the reviewers of data 2.5.1 found in the source's typography: an editor's variant note inside the text, a stray
    space, half-width marks after Han text. Latin text keeps its own punctuation and spacing."""
    assert classics.tidy("豈不痛哉！(不知老之將至 一作：曾不知老之將至)") == "豈不痛哉！"
    assert classics.tidy("唐之末路是已。(唐之末路是已 一作：矣)") == "唐之末路是已。"
    assert classics.tidy("(隱曜 一作：隱耀；淫雨 通：霪雨)") == ""
    assert classics.tidy("顧安所得酒 乎？歸而謀諸婦。世世子 孫") == "顧安所得酒乎？歸而謀諸婦。世世子孫"
    assert classics.tidy("林放問禮之本,子曰:大哉問!焉?秦師;") == "林放問禮之本，子曰：大哉問！焉？秦師；"
    assert classics.tidy("see p. 3, line 4: ok?") == "see p. 3, line 4: ok?"
    assert classics.tidy("（通假：不在括號中之說明）") == "（通假：不在括號中之說明）"
