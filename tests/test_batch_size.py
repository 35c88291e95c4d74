"""Batch size: fixed or ``"auto"``; out-of-memory back-off retries the failed batch smaller, keeps every finished
batch, and never changes a prediction (float32). Out-of-memory is injected on CPU with a forward that raises
``torch.OutOfMemoryError`` (what CUDA raises) for batches above a size."""

import argparse
import random

import pytest
import torch
from support import make_item

from ancientbench.backends import hf_scoring
from ancientbench.evaluation import add_arguments, evaluate_model
from ancientbench.scoring import AutoBatchSize, check_batch_size, score_task


@pytest.fixture(scope="module")
def items():
    rng = random.Random(11)
    return [make_item("cloze", f"t{i}", rng) for i in range(13)], [make_item("cloze", f"d{i}", rng) for i in range(5)]


def inject_oom(monkeypatch, limit: int):
    """Make both forward paths (from scratch, against a cached prefix) fail above ``limit`` prompts; log sizes."""
    sizes = []
    for name in ("full", "suffixes"):
        real = getattr(hf_scoring.Runner, name)

        def flaky(self, *args, _real=real, _name=name):
            seqs = args[-1]
            sizes.append((_name, len(seqs)))
            if len(seqs) > limit:
                raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate 2.00 GiB (simulated, {len(seqs)})")
            return _real(self, *args)

        monkeypatch.setattr(hf_scoring.Runner, name, flaky)
    return sizes


def same(a, b, tol=1e-5):
    assert [r["id"] for r in a.records] == [r["id"] for r in b.records]
    assert [r["pred"] for r in a.records] == [r["pred"] for r in b.records]
    for ra, rb in zip(a.records, b.records):
        assert max(abs(x - y) for x, y in zip(ra["logprobs"], rb["logprobs"])) <= tol


@pytest.mark.parametrize("prefix_cache", [False, True])
def test_auto_backs_off_without_losing_or_changing_anything(tiny_qwen2, items, monkeypatch, prefix_cache):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    reference = score_task(model, tok, "cloze", test, dev, shots=2, batch_size=1, prefix_cache=prefix_cache)

    sizes = inject_oom(monkeypatch, limit=3)
    seen = []
    auto = AutoBatchSize(start=16)  # what "auto" starts at on a GPU, scaled down to the fixture
    got = score_task(model, tok, "cloze", test, dev, shots=2, batch_size=auto, prefix_cache=prefix_cache,
                     on_batch=lambda recs: seen.extend(r["id"] for r in recs))
    path = "suffixes" if prefix_cache else "full"
    assert [s for _, s in sizes[:4]] == [13, 6, 3, 3] and {p for p, _ in sizes} == {path}  # 16 -> 13 items, halved
    assert all(n <= 3 for _, n in sizes[2:])
    # every item reached on_batch exactly once (no finished batch recomputed or lost), same predictions
    assert sorted(seen) == sorted(r["id"] for r in test) and len(seen) == len(test)
    assert got.batch_size == 3 and auto.size == 3
    same(got, reference)

    # the object remembers what fitted: the next call (the next task) starts at 3 and never fails
    sizes.clear()
    again = score_task(model, tok, "cloze", test, dev, shots=2, batch_size=auto, prefix_cache=prefix_cache)
    assert max(n for _, n in sizes) == 3
    same(again, reference)


def test_a_single_prompt_that_does_not_fit_is_an_error(tiny_qwen2, items, monkeypatch):
    inject_oom(monkeypatch, limit=0)
    with pytest.raises(torch.OutOfMemoryError):
        score_task(tiny_qwen2.model, tiny_qwen2.tokenizer, "cloze", *items, shots=0, batch_size="auto")


def test_other_errors_are_not_retried(tiny_qwen2, items, monkeypatch):
    calls = []

    def broken(self, seqs):
        calls.append(len(seqs))
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(hf_scoring.Runner, "full", broken)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        score_task(tiny_qwen2.model, tiny_qwen2.tokenizer, "cloze", *items, shots=0, batch_size=8, prefix_cache=False)
    assert calls == [8]


def test_auto_starts_by_device():
    assert AutoBatchSize().initial("cuda:0") == hf_scoring.AUTO_BATCH_START
    assert AutoBatchSize().initial("npu:1") == hf_scoring.AUTO_BATCH_START
    assert AutoBatchSize().initial("cpu") == hf_scoring.AUTO_BATCH_CPU
    assert isinstance(check_batch_size("auto"), AutoBatchSize) and check_batch_size(5) == 5
    for bad in (0, -1, "8", 2.5, True, None):
        with pytest.raises(ValueError, match="batch_size"):
            check_batch_size(bad)


def test_eval_auto_records_the_size_used_and_matches_fixed(tiny_qwen2, fixture_data, monkeypatch):
    fixed = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, tasks=["cloze", "radical"], shots=1,
                           data=fixture_data, batch_size=2, progress=False)[1]
    monkeypatch.setattr(hf_scoring, "AUTO_BATCH_CPU", 64)
    sizes = inject_oom(monkeypatch, limit=4)
    auto = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, tasks=["cloze", "radical"], shots=1,
                          data=fixture_data, batch_size="auto", progress=False)[1]
    assert auto["setting"]["batch_size"] == "auto" and auto["setting"]["batch_size_used"] == 3
    assert fixed["setting"]["batch_size"] == 2 and fixed["setting"]["batch_size_used"] == 2
    assert sizes[0][1] == 7 and max(n for _, n in sizes[2:]) <= 3  # 7 fixture items per task: 7 -> 3 once, then 3
    assert [(r["id"], r["pred"]) for r in auto["predictions"]] == [(r["id"], r["pred"]) for r in fixed["predictions"]]


def test_cli_batch_size_argument():
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert p.parse_args(["--model", "m", "--batch-size", "auto"]).batch_size == "auto"
    assert p.parse_args(["--model", "m", "--batch-size", "32"]).batch_size == 32
    with pytest.raises(SystemExit):
        p.parse_args(["--model", "m", "--batch-size", "0"])
