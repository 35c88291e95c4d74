"""excdoc_word: the field glossary, options drawn from same-field siblings (never the asked term's own reading),
how far the key's wording echoes the asked word, citations, the blind-review export, and the excavated
quotations checked against the shared 睡虎地 sample (``../shared/sources``; skipped with a reason when absent)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from support import REPO_ROOT

from ancientbench.builders import BuildContext, review
from ancientbench.builders import curated as cur
from ancientbench.builders import excdoc_glossary as eg
from ancientbench.builders import excdoc_word as ex
from ancientbench.schema import DataError

SHARED_SOURCES = Path(os.environ.get("ANCIENTBENCH_SHARED_SOURCES") or Path(REPO_ROOT).parent / "shared" / "sources")
# Characters too common to give a term away when a definition repeats them.
STOP = set("的之一人者其而以為於、，（）…")


@pytest.fixture(scope="module")
def glossary():
    return eg.load_glossary()


@pytest.fixture(scope="module")
def entries():
    return cur.load_entries("excdoc_word")


def _options(e):
    return [e["answer"], *e["distractors"]]


def test_glossary_fields_and_sizes(glossary, entries):
    fields = Counter(g["field"] for g in glossary.values())
    assert len(glossary) >= 300 and len(fields) >= 25, (len(glossary), len(fields))
    assert all(len({g["group"] or g["id"] for g in glossary.values() if g["field"] == f}) >= 4 for f in fields)
    used = Counter(glossary[e["gloss"]]["field"] for e in entries)
    assert len(used) >= 25 and max(used.values()) <= 0.2 * len(entries), used.most_common(3)


def test_distractors_are_other_terms_of_the_same_field(glossary, entries):
    by_def = {g["definition"]: g for g in glossary.values()}
    for e in entries:
        key = glossary[e["gloss"]]
        assert e["answer"] == key["definition"], e.key
        for d in e["distractors"]:
            s = by_def[d]  # every option is the definition of a glossary term
            assert s["field"] == key["field"], (e.key, s["id"])
            assert s["term"] != key["term"] and s["term"] != e["word"], (e.key, s["id"])  # never the asked word's own sense
            assert (s["group"] or s["id"]) != (key["group"] or key["id"]), (e.key, s["id"])  # never a synonym or variant
        assert len({by_def[d]["group"] or by_def[d]["id"] for d in e["distractors"]}) == 3, e.key  # no synonymous pair
        assert cur.length_giveaway(e["answer"], e["distractors"]) is None, e.key
    # deterministic: the same key draws the same siblings
    e = entries[0]
    assert eg.draw(e.key, glossary[e["gloss"]], glossary) == eg.draw(e.key, glossary[e["gloss"]], glossary)


def test_key_wording_does_not_echo_the_asked_word(glossary, entries):
    """Picking the option that shares most characters with the asked word scores near chance (25%), and few
    keys repeat a character of their own term."""
    score = 0.0
    echo = 0
    for e in entries:
        overlap = [len(set(e["word"]) & set(o) - STOP) for o in _options(e)]
        top = [i for i, n in enumerate(overlap) if n == max(overlap)]
        score += (1 / len(top)) if 0 in top else 0.0
        echo += top == [0] and overlap[0] > 0
    assert score / len(entries) <= 0.30, score / len(entries)
    assert echo <= 0.03 * len(entries), echo
    echoing = [g["id"] for g in glossary.values() if set(g["term"]) & set(g["definition"]) - STOP]
    assert len(echoing) <= 0.25 * len(glossary), len(echoing)


def test_citations_and_contexts(entries):
    for e in entries:
        assert "《" in e["citation"] or "（" in e["citation"], e.key
        if not any(ch.isdigit() for ch in e["citation"]):
            assert e["citation"].endswith("（簡號未注）"), e.key  # never an invented slip number
        assert len(e["context"]) <= 20, e.key
    docs = Counter(e["document"].split("《")[0] for e in entries)
    assert docs["睡虎地秦簡"] >= 250 and docs["張家山漢簡"] >= 50 and len(docs) >= 10, docs


def test_glossary_validator(tmp_path):
    rows = [{"id": t, "term": t, "field": "f", "group": "", "definition": f"定義{t}", "source": "s"} for t in "甲乙丙丁"]
    item = {"key": "k", "document": "d", "citation": "c", "context": "甲日", "word": "甲", "gloss": "甲",
            "author": "a", "reviewer": "", "blind_answer": ""}

    def write(glossary_rows):
        (tmp_path / eg.GLOSSARY_NAME).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in glossary_rows), encoding="utf-8")
        return cur.load_entries("excdoc_word", path=tmp_path / "excdoc_word.jsonl")

    (tmp_path / "excdoc_word.jsonl").write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    (got,) = write(rows)
    assert got["answer"] == "定義甲" and sorted(got["distractors"]) == ["定義丁", "定義丙", "定義乙"]
    with pytest.raises(DataError, match="a term needs 3 siblings"):
        write([dict(r, group="g" if r["term"] in "乙丙" else "") for r in rows])
    with pytest.raises(DataError, match="same definition"):
        write(rows + [dict(rows[0], id="戊", term="戊")])
    with pytest.raises(DataError, match="duplicate id"):
        write(rows + [dict(rows[0], definition="另一")])


def test_new_items_await_blind_review_and_export(tmp_path, entries):
    new = [e for e in entries if not e.reviewed]
    assert new and all(e["author"].startswith("ab-curator-") and not e["blind_answer"] for e in new)
    sheet = tmp_path / "sheet.jsonl"
    assert review.export_sheet("excdoc_word", "ab-reviewer-9", sheet) == len(new)
    text = sheet.read_text(encoding="utf-8")
    assert "其餘三項" not in text  # no rationale on a blind sheet
    result = ex.build(BuildContext())
    assert len(result.test) >= 500 and len(result.dev) == 5


def test_quotations_match_the_shuihudi_sample(entries):
    """Every 睡虎地 context the shared sample covers is in it verbatim after folding; reports the share."""
    if not (SHARED_SOURCES / ex.SAMPLE_SHUIHUDI).is_dir():
        pytest.skip(f"{SHARED_SOURCES / ex.SAMPLE_SHUIHUDI} not present (set ANCIENTBENCH_SHARED_SOURCES or keep ../shared/sources beside the repository)")
    r = ex.quotation_check(entries, SHARED_SOURCES)
    print(f"\nexcdoc_word quotations: {len(r['covered'])} of {r['shuihudi']} 睡虎地 items covered by the sample "
          f"({len(r['covered']) / r['shuihudi']:.0%}), {len(r['matched'])} match; {len(r['covered'])} of {len(entries)} items overall")
    assert r["mismatched"] == [], r["mismatched"]
    assert len(r["covered"]) >= 0.8 * r["shuihudi"] and len(r["covered"]) >= 250, (len(r["covered"]), r["shuihudi"])
    # the check has teeth: a context altered by one character is covered but no longer matches
    e = next(x for x in entries if x.key in r["matched"] and x["context"] != x["word"] and len(x["context"]) >= 4)
    wrong = cur.Entry(e.task, e.file, e.line, dict(e.data, context=e["context"][:-1] + "鼎"))
    r2 = ex.quotation_check([wrong], SHARED_SOURCES)
    assert r2["mismatched"] == [e.key] or r2["not_covered"] == [e.key]
