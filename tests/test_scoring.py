"""Letter-logit scoring on tiny random Llama- and Qwen2-style models (fp32, CPU)."""

import random

import pytest
import torch
from support import FIXTURE_CHARS, make_item

from ancientbench import scoring
from ancientbench.backends import hf_scoring
from ancientbench.prompts import build_prompt, chat_wrap
from ancientbench.scoring import ContextLengthError, LetterTokenError, score_items, score_task
from ancientbench.tasks import LETTERS
from ancientbench.tiny import build_tiny_model, train_bytelevel_tokenizer


def prompts_for(items, shots, task="cloze", style="bare"):
    return [build_prompt(task, it, shots, style) for it in items]


def reference_logprobs(model, tokenizer, text, letter_ids):
    """One prompt, no padding, full logits: the textbook computation the scorer must match."""
    ids = tokenizer(text, add_special_tokens=True)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].float()
    return logits.log_softmax(-1)[[letter_ids[x] for x in LETTERS]].tolist()


@pytest.fixture(scope="module")
def items():
    rng = random.Random(1)
    return [make_item("cloze", f"t{i}", rng) for i in range(13)], [make_item("cloze", f"d{i}", rng) for i in range(5)]


def close(a, b, tol=1e-5):
    return all(abs(x - y) <= tol for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def test_scores_match_the_unbatched_reference(tiny_model, items):
    model, tok = tiny_model.model, tiny_model.tokenizer
    test, dev = items
    ps = prompts_for(test[:4], dev)
    got = score_items(model, tok, ps, batch_size=4, prefix_cache=False)
    assert got.letter_token_ids == {x: tok.convert_tokens_to_ids(x) for x in LETTERS}
    for p, row, pred in zip(ps, got.logprobs, got.preds):
        ref = reference_logprobs(model, tok, p.text, got.letter_token_ids)
        assert close([row], [ref], 1e-5), (row, ref)
        assert pred == LETTERS[max(range(4), key=lambda j: ref[j])]
        assert all(v < 0 for v in row)  # log-probabilities over the full vocabulary


def test_batched_equals_one_at_a_time(tiny_model, items):
    model, tok = tiny_model.model, tiny_model.tokenizer
    test, dev = items
    for shots in (0, 5):
        ps = prompts_for(test, dev[:shots])
        batched = score_items(model, tok, ps, batch_size=len(ps), prefix_cache=False)
        single = [score_items(model, tok, [p], batch_size=1, prefix_cache=False) for p in ps]
        assert batched.preds == [s.preds[0] for s in single]
        assert close(batched.logprobs, [s.logprobs[0] for s in single])


def test_predictions_do_not_depend_on_batch_size(tiny_model, items):
    model, tok = tiny_model.model, tiny_model.tokenizer
    test, dev = items
    ps = prompts_for(test, dev)
    runs = [score_items(model, tok, ps, batch_size=bs, prefix_cache=False) for bs in (1, 2, 3, 8, 64)]
    for r in runs[1:]:
        assert r.preds == runs[0].preds
        assert close(r.logprobs, runs[0].logprobs)
    # the prompts really differ in length, so batches were padded
    assert len(set(runs[0].n_tokens)) > 3


def test_letter_after_colon_is_not_the_word_initial_variant(tiny_llama):
    """Metaspace (SentencePiece-style): tok('A') is '▁A', but after '答案是：' the letter is the plain 'A'."""
    tok = tiny_llama.tokenizer
    standalone = tok("A", add_special_tokens=False)["input_ids"]
    assert tok.convert_ids_to_tokens(standalone) == ["▁A"]  # the trap exists in this tokenizer
    got = score_items(tiny_llama.model, tok, ["以下是题目：一\n答案是："], prefix_cache=False)
    assert got.letter_token_ids["A"] == tok.convert_tokens_to_ids("A") != standalone[-1]


def test_letter_merging_with_the_colon_is_an_error():
    """A tokenizer that learned '：A' as one token cannot give 'A' its own id after '答案是：'."""
    tok = train_bytelevel_tokenizer(["答案是：" + x for x in LETTERS] * 30 + FIXTURE_CHARS[:50], vocab_size=600)
    last = tok("答案是：A", add_special_tokens=False)["input_ids"][-1]
    assert tok.decode([last]) == "：A"  # the trap exists in this tokenizer
    model = build_tiny_model("qwen2", tok, hidden_size=16, intermediate_size=32, num_attention_heads=2, num_key_value_heads=1)
    with pytest.raises(LetterTokenError) as exc:
        score_items(model, tok, ["题目：一\n答案是："])
    msg = str(exc.value)
    assert "letter 'A'" in msg and type(tok).__name__ in msg and "not exactly one new token" in msg
    item = {"id": "cloze-一", "question": "一", "A": "二", "B": "三", "C": "四", "D": "五", "answer": "A"}
    with pytest.raises(LetterTokenError, match="item 'cloze-一'"):
        score_task(model, tok, "cloze", [item])


def test_space_letter_style(tiny_qwen2, items):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    ps = prompts_for(test[:3], dev[:2], style="space")
    got = score_items(model, tok, ps, letter_style="space", prefix_cache=False)
    assert got.letter_token_ids == {x: tok.convert_tokens_to_ids("Ġ" + x) for x in LETTERS}
    ref = reference_logprobs(model, tok, ps[0].text, got.letter_token_ids)
    assert close([got.logprobs[0]], [ref])


def test_llama_prompts_start_with_bos(tiny_llama, items):
    tok = tiny_llama.tokenizer
    p = prompts_for(items[0][:1], [])[0]
    got = score_items(tiny_llama.model, tok, [p], prefix_cache=False)
    ids = tok(p.text)["input_ids"]
    assert ids[0] == tok.bos_token_id and got.n_tokens == [len(ids)]


def test_context_limit_drops_longest_exemplars_first(tiny_qwen2, items):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    order = scoring.exemplar_drop_order(tok, dev)
    lengths = [len(tok(build_prompt("cloze", test[0], [e]).prefix, add_special_tokens=False)["input_ids"]) for e in dev]
    assert [lengths[j] for j in order] == sorted(lengths, reverse=True)

    full = score_items(model, tok, prompts_for(test, dev), prefix_cache=False).n_tokens
    zero = score_items(model, tok, prompts_for(test, []), prefix_cache=False).n_tokens
    limit = (min(full) + max(zero)) // 2  # some items must lose exemplars, every question alone fits
    res = score_task(model, tok, "cloze", test, dev, shots=5, max_length=limit, prefix_cache=False)
    used = [r["shots_used"] for r in res.records]
    assert res.fewshot_truncated_items == sum(u < 5 for u in used) > 0 and not res.too_long_items
    for r, it in zip(res.records, test):
        # the record is exactly what scoring the prompt with the kept exemplars gives
        drop = set(order[: 5 - r["shots_used"]])
        kept = [e for j, e in enumerate(dev) if j not in drop]
        p = build_prompt("cloze", it, kept)
        n = len(tok(p.text)["input_ids"])
        assert n <= limit
        if r["shots_used"] < 5:  # one more exemplar would not have fitted
            bigger = [e for j, e in enumerate(dev) if j not in set(order[: 4 - r["shots_used"]])]
            assert len(tok(build_prompt("cloze", it, bigger).text)["input_ids"]) > limit
        ref = score_items(model, tok, [p], prefix_cache=False)
        assert r["pred"] == ref.preds[0] and close([r["logprobs"]], ref.logprobs)


def test_question_longer_than_context_is_an_item_error(tiny_qwen2, items):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    zero = score_items(model, tok, prompts_for(test, []), prefix_cache=False).n_tokens
    limit = sorted(zero)[len(zero) // 2]
    res = score_task(model, tok, "cloze", test, dev, shots=2, max_length=limit, prefix_cache=False)
    bad = {test[i]["id"] for i, n in enumerate(zero) if n > limit}
    assert bad and set(res.too_long_items) == bad
    for r in res.records:
        if r["id"] in bad:
            assert r["pred"] is None and r["logprobs"] is None and f"context of {limit}" in r["error"]
        else:
            assert r["pred"] in LETTERS and "error" not in r
    with pytest.raises(ContextLengthError, match=f"context of {limit} tokens"):
        score_items(model, tok, prompts_for(test, []), max_length=limit)


def test_score_task_checks_its_inputs(tiny_qwen2, items):
    test, dev = items
    with pytest.raises(ValueError, match="5-shot needs 5 dev exemplars"):
        score_task(tiny_qwen2.model, tiny_qwen2.tokenizer, "cloze", test, dev[:3], shots=5)
    with pytest.raises(ValueError, match="batch_size"):
        score_items(tiny_qwen2.model, tiny_qwen2.tokenizer, ["题目：一\n答案是："], batch_size=0)


def test_out_of_memory_halves_the_batch_without_changing_results(tiny_qwen2, items, monkeypatch):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    ps = prompts_for(test, dev[:1])
    expected = score_items(model, tok, ps, batch_size=8, prefix_cache=False)
    real_full = hf_scoring.Runner.full
    sizes = []

    def flaky(self, seqs):
        sizes.append(len(seqs))
        if len(seqs) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real_full(self, seqs)

    monkeypatch.setattr(hf_scoring.Runner, "full", flaky)
    got = score_items(model, tok, ps, batch_size=8, prefix_cache=False)
    assert sizes[:3] == [8, 4, 2] and max(sizes[3:]) <= 2
    assert got.preds == expected.preds and close(got.logprobs, expected.logprobs)


def test_chat_mode_scores_after_the_generation_prompt(tiny_qwen2, items):
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    test, dev = items
    res = score_task(model, tok, "cloze", test[:3], dev, shots=1, chat=True, prefix_cache=False)
    for r, it in zip(res.records, test):
        text = chat_wrap(tok, build_prompt("cloze", it, dev[:1])).text
        assert text.endswith("<|im_start|>assistant\n")
        ids = tok(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1].log_softmax(-1)
        ref = logits[[res.letter_token_ids[x] for x in LETTERS]].tolist()
        assert close([r["logprobs"]], [ref])
