"""Checks over every shipped item (data 2.4, issue 22): one script, the corrected source text, the reading named."""

from __future__ import annotations

import re

import pytest

from ancientbench import DATASET_PATH
from ancientbench.schema import read_config
from ancientbench.sources import SourceMissing
from ancientbench.tasks import LETTERS, TASK_NAMES

FIELDS = ("question", *LETTERS)


@pytest.fixture(scope="module")
def rows():
    return {t: read_config(DATASET_PATH, t, "test") + read_config(DATASET_PATH, t, "dev") for t in TASK_NAMES}


def test_every_item_is_written_in_traditional_script(rows, unihan_db):
    """No stem or option of any task holds a simplified-only character (Unihan: its traditional variants are
    other characters); 2.3.0 had 172 translation and 51 phonetic_loan items in simplified script."""
    found = [(r["id"], f, ch) for task in rows.values() for r in task for f in FIELDS for ch in r[f]
             if unihan_db.is_simplified_only(ch)]
    assert not found, found[:10]


def test_no_item_quotes_a_corrected_reading(rows):
    """Every correction applied to the 四書 text (classics_corrections.tsv) has left no item quoting the
    uncorrected reading, in either script: 見志不從, not 諫志不從 (translation-lunyu-liren-017 in 2.3.0)."""
    from ancientbench.han import han_only
    from ancientbench.sources.classics import corrections, fold

    def text(r):  # a cloze stem is read with its blank filled (the blank may be the very graph a correction adds)
        return r["question"].replace("＿", r[r["answer"]]) + "".join(r[f] for f in LETTERS)

    texts = {r["id"]: fold(han_only(text(r))) for task in rows.values() for r in task}
    applied = [c for c in corrections() if c.decision == "correct"]
    assert applied
    for c in applied:
        before, after = fold(han_only(c.context)), fold(han_only(c.corrected))
        if len(before) < 4 or before in after:
            continue  # too short to quote alone, or the correction only adds to it
        quoting = [i for i, t in texts.items() if before in t]
        assert not quoting, (c.book, c.chapter, c.paragraph, c.context, quoting)
    # a conversion slip folds to the received text, so it is looked for as written (稼穡卒癢, cloze in 2.5.2's probe)
    written = {r["id"]: "".join(r[f] for f in FIELDS) for task in rows.values() for r in task}
    for c in (c for c in corrections() if c.decision == "convert"):
        assert not [i for i, t in written.items() if c.context in t], (c.book, c.chapter, c.paragraph, c.context)


def _titles(row) -> set[str]:
    """The parts of the titles an item names: its citation's (book·卷·title·1.2, title（note）) and the 《…》/〈…〉 of
    its question and explanation."""
    names = [re.sub(r"（.*）$", "", row.get("citation", ""))]
    names += re.findall(r"[《〈]([^》〉]+)[》〉]", row["question"] + row.get("explanation", ""))
    return {part for name in names for part in name.split("·")}


def test_no_item_shows_a_misconverted_title(rows):
    """Every chapter title the review corrected (classics_title_corrections.tsv: 鄭伯克段於鄢, 季樑諫追楚師, 穀風 …) is
    gone from the shipped items' citations and 《…》 titles, and the received title is shown instead (data 2.5.0 had
    45 tradoc_word stems naming 《左傳·鄭伯克段於鄢》 and the like)."""
    from ancientbench.sources.classics import title_corrections

    shown = set().union(*(_titles(r) for task in rows.values() for r in task))
    wrong, right = set(), set()
    for c in title_corrections().values():
        if c.decision == "correct":
            pairs = [(a, b) for a, b in zip(c.title.split("·"), c.corrected.split("·")) if a != b]
            wrong.update(a for a, _ in pairs)
            right.update(b for _, b in pairs)
    assert not wrong & shown, sorted(wrong & shown)
    assert {"鄭伯克段于鄢", "季梁諫追楚師", "趙威后問齊使", "獄中上梁王書", "後十九日復上宰相書", "谷風"} <= shown & right


@pytest.mark.parametrize("task", ["homophone", "pronunciation"])
def test_explanations_name_the_reading_they_use(rows, task):
    """Each explanation names the 小韻, its 反切 and the gloss of the reading used (homophone-商: 湯 by its
    式羊切 reading 「湯湯流皃」), for the key and, on homophone, the target."""
    for r in rows[task]:
        e = r["explanation"]
        assert re.search(r"小韻\d+[a-z]?「.」", e) and "切" in e, r["id"]
        assert e.count("釋義「") >= (2 if task == "homophone" else 1), r["id"]


def test_no_phonetic_radical_target_is_a_written_form_of_an_option(rows, unihan_db):
    """飌 is 風's old form (廣韻: 古文): a target written like its key or a distractor is excluded."""
    from ancientbench.sources import guangyun

    try:
        gy = guangyun.load()
    except SourceMissing as e:
        pytest.skip(f"tshet-uinh not installed: {e}")
    assert "風" in gy.forms_of("飌")
    for r in rows["phonetic_radical"]:
        target = re.search(r"「(.)」", r["question"]).group(1)
        for o in (r[L] for L in LETTERS):
            alike = (o in unihan_db.variants(target) or target in unihan_db.variants(o) or o in gy.forms_of(target)
                     or target in gy.forms_of(o))
            assert not alike, (r["id"], o)



def test_no_stem_shows_the_sources_typography(rows):
    """No quote-based stem shows what the reviewers of data 2.5.1 found in chinese-poetry's text: an editor's variant note
    (「(豫章故郡 一作：南昌故郡)」), a space inside the text (「得酒 乎」), a half-width mark after Han text (「焉?秦師」) or the
    repeat mark 々 (「埃坲々兮」)."""
    from ancientbench.quality.conversion import QUOTE_TASKS

    checks = {"variant note": re.compile(r"[(（][^()（）]*(?:一作|通)[：:]"), "space": re.compile(r"[^\x00-\x7f][ \u3000]|[ \u3000][^\x00-\x7f]"),
              "half-width mark": re.compile(r"[^\x00-\x7f][?!,;:]"), "repeat mark": re.compile("々")}
    found = [(r["id"], what) for task in QUOTE_TASKS for r in rows[task] for what, p in checks.items() if p.search(r["question"])]
    assert not found, found[:10]


def test_no_quoted_passage_leaves_a_quotation_open(rows):
    """A stem quotes a passage; a quotation mark whose partner lies outside it reads as a quotation cut short (the 2.5.2
    probe's 「吳王曰：“大夫奚隆於越？…」), so the builders show passages without such marks (``common.as_excerpt``)."""
    from ancientbench.builders.common import unpaired_quotes
    from ancientbench.quality.conversion import QUOTE

    quoted = [(r["id"], pattern.search(r["question"])) for task, pattern in QUOTE.items() for r in rows[task]]
    found = [key for key, m in quoted if m and unpaired_quotes(m.group("q"))]  # tradoc_word's gloss items quote none
    assert not found, found[:10]


def test_no_item_shows_a_private_use_code_point(rows):
    """A source's private-use stand-in for a rare glyph (chinese-poetry's 滑稽列傳 「髡帣韝鞠\\ue031」, 睡虎地
    「隸臣妾\\ue1ca城旦舂」) shows as a blank or a box: the source line is corrected or the item left out."""
    from ancientbench.builders.curated import has_private_use

    found = [r["id"] for task in rows.values() for r in task if has_private_use(*(r[f] for f in FIELDS))]
    assert not found, found
