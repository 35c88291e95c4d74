"""Shared-prefix KV reuse gives the same predictions (fp32) as scoring every full prompt from scratch."""

import copy
import random

import pytest
from support import make_item

from ancientbench.backends import hf_scoring
from ancientbench.prompts import PromptParts, build_prompt
from ancientbench.scoring import score_items, score_task


@pytest.fixture(scope="module")
def items():
    rng = random.Random(7)
    return [make_item("homophone", f"t{i}", rng) for i in range(11)], [make_item("homophone", f"d{i}", rng) for i in range(5)]


def assert_same(a, b, tol=1e-5):
    assert [r["pred"] for r in a.records] == [r["pred"] for r in b.records]
    assert [r["shots_used"] for r in a.records] == [r["shots_used"] for r in b.records]
    for ra, rb in zip(a.records, b.records):
        assert max(abs(x - y) for x, y in zip(ra["logprobs"], rb["logprobs"])) <= tol


@pytest.mark.parametrize("shots", [0, 5])
def test_prefix_cache_equals_from_scratch(tiny_model, items, shots):
    model, tok = tiny_model.model, tiny_model.tokenizer
    test, dev = items
    scratch = score_task(model, tok, "homophone", test, dev, shots=shots, batch_size=4, prefix_cache=False)
    cached = score_task(model, tok, "homophone", test, dev, shots=shots, batch_size=4, prefix_cache=True)
    assert scratch.prefix_cache_items == 0 and cached.prefix_cache_items == len(test)  # really reused
    assert_same(cached, scratch)
    for bs in (1, 3, 64):  # and independent of how the suffixes are batched
        assert_same(score_task(model, tok, "homophone", test, dev, shots=shots, batch_size=bs, prefix_cache=True), scratch)


def test_prefix_cache_with_exemplars_dropped_per_item(tiny_model, items):
    """Items that lost different exemplars to the context limit form separate prefix groups."""
    model, tok = tiny_model.model, tiny_model.tokenizer
    test, dev = items
    n_full = score_items(model, tok, [build_prompt("homophone", it, dev) for it in test], prefix_cache=False).n_tokens
    limit = sorted(n_full)[len(n_full) // 2]
    scratch = score_task(model, tok, "homophone", test, dev, shots=5, max_length=limit, prefix_cache=False)
    cached = score_task(model, tok, "homophone", test, dev, shots=5, max_length=limit, prefix_cache=True)
    assert len({r["shots_used"] for r in cached.records}) > 1 and cached.prefix_cache_items > 0
    assert_same(cached, scratch)


def test_prefix_cache_in_chat_mode(tiny_qwen2, items):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    scratch = score_task(model, tok, "homophone", test, dev, shots=2, chat=True, prefix_cache=False)
    cached = score_task(model, tok, "homophone", test, dev, shots=2, chat=True, prefix_cache=True)
    assert cached.prefix_cache_items == len(test)
    assert_same(cached, scratch)


def test_prefix_that_does_not_tokenize_alone_is_scored_from_scratch(tiny_qwen2, items):
    """'题目' is one token: a prefix ending in '题' is not a token prefix of the prompt, so it must not be reused."""
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    assert len(tok("题目", add_special_tokens=False)["input_ids"]) == 1
    texts = [build_prompt("homophone", it, items[1][:1]).text for it in items[0]]
    cut = texts[0].index("题目：", 40) + 1  # inside the question block's "题目"
    parts = [PromptParts(t[:cut], t[cut:]) for t in texts]
    assert all(p.prefix == parts[0].prefix for p in parts)
    got = score_items(model, tok, parts, prefix_cache=True)
    ref = score_items(model, tok, texts, prefix_cache=False)
    assert got.prefix_cache_items == 0
    assert got.preds == ref.preds


def test_lm_head_runs_on_the_last_position_only(tiny_model, items):
    model, tok = tiny_model.model, tiny_model.tokenizer
    seen = []
    hook = model.lm_head.register_forward_hook(lambda mod, inp, out: seen.append(tuple(inp[0].shape)))
    try:
        for cache in (False, True):
            score_task(model, tok, "homophone", items[0], items[1], shots=5, batch_size=4, prefix_cache=cache)
    finally:
        hook.remove()
    assert seen and all(shape[1] == 1 for shape in seen)


def test_auto_enables_the_cache_only_for_transformers_models(tiny_qwen2):
    assert hf_scoring.resolve_prefix_cache(tiny_qwen2.model, "auto") is True

    class RemoteCodeModel:  # stands in for a trust_remote_code class (module transformers_modules.*)
        def forward(self, input_ids, past_key_values=None):
            pass

    RemoteCodeModel.__module__ = "transformers_modules.glm.modeling_chatglm"
    assert hf_scoring.resolve_prefix_cache(RemoteCodeModel(), "auto") is False
    assert hf_scoring.resolve_prefix_cache(RemoteCodeModel(), True) is True
    hybrid = copy.deepcopy(tiny_qwen2.model)  # a hybrid model's recurrent layers must not read the padding
    hybrid.config.layer_types = ["full_attention", "linear_attention"]
    assert hf_scoring.resolve_prefix_cache(hybrid, "auto") is False
    with pytest.raises(ValueError, match="prefix_cache"):
        hf_scoring.resolve_prefix_cache(tiny_qwen2.model, "yes")


def test_auto_prefix_cache_is_off_for_sliding_window_attention(tmp_path):
    """A sliding window counts cache slots, so padded suffixes after a cached prefix would change the scores."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from ancientbench.backends.hf_scoring import resolve_prefix_cache

    def tiny(**kw):
        cfg = AutoConfig.for_model("qwen2", vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=1, **kw)
        return AutoModelForCausalLM.from_config(cfg)

    assert resolve_prefix_cache(tiny(), "auto") is True
    assert resolve_prefix_cache(tiny(use_sliding_window=True, sliding_window=8, max_window_layers=0), "auto") is False
    assert resolve_prefix_cache(tiny(use_sliding_window=True, sliding_window=8, max_window_layers=0), True) is True  # explicit
