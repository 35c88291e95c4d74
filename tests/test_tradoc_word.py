"""tradoc_word: the in-context subset (sense inventory, annotated occurrences, contexts verbatim in the installed
chinese-poetry, distractors the word's other senses) and the capped 《廣韻》 gloss subset of the committed data.

Needs npm chinese-poetry (scripts/install.sh) for the quotation checks; they skip with the install command
when it is absent.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ancientbench import DATASET_PATH
from ancientbench.builders import BuildContext
from ancientbench.builders import tradoc_word as tw
from ancientbench.builders.common import length_giveaway
from ancientbench.builders.curated import load_entries
from ancientbench.paths import CURATED_DIR
from ancientbench.schema import DataError, load_split
from ancientbench.sources import SourceMissing
from ancientbench.tasks import LETTERS

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / ".sources"
QUESTION = re.compile(r"^(.+?)「(.+)」中「(.+?)」一詞的意思是？$")


@pytest.fixture(scope="module")
def corpus():
    from ancientbench.sources.classics import load_corpus

    try:
        return load_corpus(SOURCES)
    except SourceMissing as e:
        pytest.skip(f"build source not installed: {e}")


@pytest.fixture(scope="module")
def rows():
    return [r for split in ("test", "dev") for r in load_split(DATASET_PATH, "tradoc_word", split)]


def in_context(rows):
    return [r for r in rows if r["subset"] == tw.CONTEXT_SUBSET]


def options(r):
    return [r[L] for L in LETTERS]


def test_every_row_has_a_subset_and_the_gloss_subset_is_capped(rows):
    subsets = Counter(r["subset"] for r in rows)
    assert set(subsets) == {tw.CONTEXT_SUBSET, tw.GLOSS_SUBSET}
    assert subsets[tw.GLOSS_SUBSET] <= tw.MAX_GLOSS_ITEMS
    # each distractor gloss is offered in at most MAX_GLOSS_REUSE gloss items
    used = Counter(o for r in rows if r["subset"] == tw.GLOSS_SUBSET for L, o in zip(LETTERS, options(r)) if L != r["answer"])
    assert max(used.values()) <= tw.MAX_GLOSS_REUSE, used.most_common(3)


def test_contexts_are_verbatim_in_the_cited_chapter(rows, corpus):
    """Independently of the builder: the quoted context is a substring of a sentence of the cited chapter (quotation
    marks aside: a mark whose partner lies outside the excerpt is not shown, ``common.as_excerpt``)."""
    from ancientbench.builders.common import QUOTE_PAIRS
    from ancientbench.sources.classics import BOOKS

    marks = {ord(c): None for pair in QUOTE_PAIRS.items() for c in pair}
    by_title = {b.title: b.key for b in BOOKS}
    for r in in_context(rows):
        m = QUESTION.match(r["question"])
        assert m, r["id"]
        _, context, word = m.groups()
        title, rest = r["citation"].split("·", 1)
        chapter = rest.rsplit("·", 1)[0]
        book = by_title[title]
        assert book in tw.CONTEXT_BOOKS, r["id"]
        bare = context.translate(marks)
        assert any(s.book == book and s.chapter == chapter and bare in s.original.translate(marks) for s in corpus.sentences), r["id"]
        assert context.count(word) == 1, r["id"]


def test_answers_and_distractors_come_from_the_sense_inventory(rows):
    senses = tw.load_senses()
    items = {it["key"]: it for _, it in tw.load_items(senses)}
    ctx_rows = in_context(rows)
    assert len(ctx_rows) >= 200
    for r in ctx_rows:
        it = items[r["id"].removeprefix("tradoc_word-")]
        entry = {s["gloss"]: s for s in senses[it["word"]]["senses"]}
        key = r[r["answer"]]
        assert entry[key]["id"] == it["sense"] and not entry[key]["modern"], r["id"]
        wrong = [r[L] for L in LETTERS if L != r["answer"]]
        assert all(w in entry and entry[w]["id"] != it["sense"] for w in wrong), r["id"]  # other senses of the word
        assert sum(entry[w]["modern"] for w in wrong) <= 1, r["id"]
        assert length_giveaway(key, wrong) is None, r["id"]
    test_rows = in_context(load_split(DATASET_PATH, "tradoc_word", "test"))
    assert len(test_rows) >= 1000  # issue 13: at least 1,000 in-context test items
    # scored items per (word, sense) are capped, so the most frequent sense of a word is not a winning guess
    per_sense = Counter((items[r["id"].removeprefix("tradoc_word-")]["word"], r[r["answer"]]) for r in test_rows)
    assert max(per_sense.values()) <= tw.MAX_PER_SENSE


def test_pairs_name_excdoc_word_entries():
    excdoc = {e.key: e for e in load_entries("excdoc_word")}
    pairs = tw.pairing()
    assert len(pairs) >= 50
    senses = tw.load_senses()
    for word, entry in senses.items():
        if entry["pair"]:
            assert entry["pair"] in excdoc, word
            assert word in excdoc[entry["pair"]]["word"], (word, entry["pair"])


def _copy(tmp_path: Path) -> Path:
    for name in (tw.SENSES_FILE, tw.ITEMS_FILE):
        shutil.copy(CURATED_DIR / name, tmp_path / name)
    return tmp_path


def _edit_first_item(folder: Path, **changes) -> None:
    path = folder / tw.ITEMS_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[0])
    obj.update(changes)
    lines[0] = json.dumps(obj, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "change, field",
    [
        ({"sense": "99"}, "sense"),
        ({"sense": "m"}, "sense"),  # a modern sense as the meaning in a classical text
        ({"book": "lunyu"}, "book"),  # shipped simplified: not quoted
        ({"word": "龘"}, "word"),
        ({"context": "(一作：某)"}, "context"),  # an editor's note is not the quoted text
    ],
)
def test_bad_annotation_names_file_line_and_field(tmp_path, change, field):
    folder = _copy(tmp_path)
    first = json.loads((folder / tw.ITEMS_FILE).read_text(encoding="utf-8").splitlines()[0])
    if change.get("sense") == "m" and not any(s["id"] == "m" for s in tw.load_senses(folder)[first["word"]]["senses"]):
        pytest.skip("first word has no modern sense")
    _edit_first_item(folder, **change)
    with pytest.raises(DataError) as e:
        tw.load_items(tw.load_senses(folder), folder)
    assert e.value.row == 1 and e.value.field == field and tw.ITEMS_FILE in e.value.file


def test_context_not_in_the_source_is_rejected(tmp_path, corpus):
    folder = _copy(tmp_path)
    first = json.loads((folder / tw.ITEMS_FILE).read_text(encoding="utf-8").splitlines()[0])
    _edit_first_item(folder, context=first["context"].replace(first["context"][-3], "冇", 1) if first["context"][-3] != first["word"] else "冇" + first["context"])
    with pytest.raises(DataError, match="not found verbatim") as e:
        tw.context_candidates(BuildContext(sources_dir=SOURCES), 1, folder)
    assert e.value.row == 1 and e.value.field == "context"


def test_sense_inventory_rejects_a_gloss_that_names_the_word(tmp_path):
    folder = _copy(tmp_path)
    path = folder / tw.SENSES_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[0])
    obj["senses"][0]["gloss"] = obj["word"] + "的意思"
    lines[0] = json.dumps(obj, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="contains the word itself") as e:
        tw.load_senses(folder)
    assert e.value.row == 1 and e.value.field == "senses"


def test_distractor_choice_is_deterministic_and_seeded():
    senses = tw.load_senses()
    word = max(senses, key=lambda w: len(senses[w]["senses"]))
    entry = senses[word]
    sid = next(s["id"] for s in entry["senses"] if not s["modern"])
    picks = {tw.choose_distractors(f"k{i}", entry, sid, 1) for i in range(20)}
    assert tw.choose_distractors("k0", entry, sid, 1) == tw.choose_distractors("k0", entry, sid, 1)
    assert len(picks) > 1  # varies by item, so a word's items do not all offer the same three options


def test_options_only_sense_guesses_stay_near_chance(rows):
    """An examinee who sees only the options, recognises the word and picks its commonest sense (listed
    first in the inventory) or the sense most often meant in the word's items, stays well under 40%."""
    senses = tw.load_senses()
    items = {it["key"]: it for _, it in tw.load_items(senses)}
    test_rows = in_context(load_split(DATASET_PATH, "tradoc_word", "test"))
    keyed = Counter((items[r["id"].removeprefix("tradoc_word-")]["word"], items[r["id"].removeprefix("tradoc_word-")]["sense"])
                    for r in test_rows)
    first = most = 0
    for r in test_rows:
        entry = senses[items[r["id"].removeprefix("tradoc_word-")]["word"]]
        order = [s["gloss"] for s in entry["senses"]]
        ids = {s["gloss"]: s["id"] for s in entry["senses"]}
        modern = {s["gloss"] for s in entry["senses"] if s["modern"]}
        opts = [o for o in options(r) if o not in modern]  # a modern sense is never the answer
        first += min(opts, key=order.index) == r[r["answer"]]
        most += max(opts, key=lambda o: (keyed[(entry["word"], ids[o])], -order.index(o))) == r[r["answer"]]
    assert first / len(test_rows) <= 0.40 and most / len(test_rows) <= 0.40, (first / len(test_rows), most / len(test_rows))
