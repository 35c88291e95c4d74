"""scripts/model_in_the_loop.py (option (e) of issue 34): what each builder's selector was offered is recorded, and
round 0 starts from the shipped triple."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ancientbench.builders import debias
from ancientbench.quality.strategies import Frequencies

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "model_in_the_loop.py"


@pytest.fixture(scope="module")
def mitl():
    spec = importlib.util.spec_from_file_location("model_in_the_loop", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_pick_balanced_is_recorded_and_the_selector_restored(mitl):
    original = debias.Balancer
    items = [("問一", "甲", [("乙", "丙", "丁"), ("戊", "己", "庚")]), ("問二", "辛", [("壬", "癸", "子")])]
    picks, offered = mitl._recording(debias, lambda: debias.pick_balanced(items, Frequencies({}, "none")))
    assert debias.Balancer is original  # a builder run later selects as shipped
    assert [(q, a, alts) for q, a, alts, _ in offered] == items
    assert [k for *_, k in offered] == picks


def test_round_0_is_the_shipped_triple(mitl, monkeypatch):
    test = [
        {"id": "t-1", "question": "問一", "A": "乙", "B": "甲", "C": "丁", "D": "丙", "answer": "B"},  # rebuilt as shipped
        {"id": "t-2", "question": "問二", "A": "己", "B": "戊", "C": "庚", "D": "甲", "answer": "D"},  # offered, not chosen
        {"id": "t-3", "question": "問三", "A": "丑", "B": "寅", "C": "甲", "D": "卯", "answer": "C"},  # no longer offered
    ]
    offered = [
        ("問一", "甲", [("乙", "丙", "丁"), ("戊", "己", "庚")], 0),
        ("問二", "甲", [("乙", "丙", "丁"), ("戊", "己", "庚")], 0),
        ("問三", "甲", [("乙", "丙", "丁")], 0),
        ("問四", "甲", [("乙", "丙", "丁")], 0),  # not a test item (dev, or dropped later)
    ]
    monkeypatch.setattr(mitl, "_offers", lambda task, src: (test, offered))
    items, (same, appended) = mitl.shipped_items("cloze", None)
    assert (same, appended) == (1, 1)
    assert [(q, k, rid) for q, _, _, k, rid in items] == [("問一", 0, "t-1"), ("問二", 1, "t-2"), ("問三", 1, "t-3")]
    q, a, alts, k, _ = items[2]
    assert sorted(alts[k]) == sorted(("丑", "寅", "卯")) and alts[0] == ("乙", "丙", "丁")
