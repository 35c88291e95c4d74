"""The vllm backend. Without vLLM and a GPU (this machine) the real engine is skipped with the reason; the
backend's own logic (token ids, prompt log-probabilities -> letters and option likelihoods, generation,
chunked saving) is checked against the hf backend through a stand-in ``vllm`` module that answers from the
same tiny model with the textbook computation (one sequence, no padding, full logits)."""

import importlib.util
import sys
import types
from types import SimpleNamespace

import pytest
import torch

from ancientbench.backends.hf import HFBackend
from ancientbench.evaluation import Settings, score_task

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
HAVE_GPU = torch.cuda.is_available()


class FakeSamplingParams:
    def __init__(self, max_tokens=16, temperature=1.0, prompt_logprobs=None):
        self.max_tokens, self.temperature, self.prompt_logprobs = max_tokens, temperature, prompt_logprobs


class FakeLLM:
    """vLLM's offline ``LLM`` surface the backend uses, answered by a transformers model."""

    def __init__(self, lm, max_model_len=4096):
        self.model, self.tok = lm.model, lm.tokenizer
        self.calls = []
        config = SimpleNamespace(max_model_len=max_model_len, dtype=torch.float32, hf_config=self.model.config)
        self.llm_engine = SimpleNamespace(model_config=config)

    def get_tokenizer(self):
        return self.tok

    def generate(self, prompts, params, use_tqdm=True):
        self.calls.append(len(prompts))
        outs = []
        for p in prompts:
            ids = p["prompt_token_ids"]
            with torch.no_grad():
                if params.prompt_logprobs is not None:
                    lp = self.model(torch.tensor([ids])).logits[0].float().log_softmax(-1)
                    plp = [None] + [{ids[k]: SimpleNamespace(logprob=float(lp[k - 1, ids[k]]))} for k in range(1, len(ids))]
                    outs.append(SimpleNamespace(prompt_logprobs=plp, outputs=[]))
                    continue
                out = self.model.generate(torch.tensor([ids]), max_new_tokens=params.max_tokens, do_sample=False,
                                          pad_token_id=self.tok.pad_token_id)
            new = out[0, len(ids):].tolist()
            stop = new.index(self.tok.eos_token_id) if self.tok.eos_token_id in new else None
            kept = new if stop is None else new[:stop]
            text = self.tok.decode(kept, skip_special_tokens=True)
            outs.append(SimpleNamespace(outputs=[SimpleNamespace(text=text, token_ids=kept,
                                                                 finish_reason="length" if stop is None else "stop")]))
        return outs


@pytest.fixture
def fake_vllm(monkeypatch, tiny_qwen2):
    module = types.ModuleType("vllm")
    module.SamplingParams = FakeSamplingParams
    module.LLM = None
    monkeypatch.setitem(sys.modules, "vllm", module)
    from ancientbench.backends import vllm as vb

    monkeypatch.setattr(vb, "CHUNK", 3)  # several chunks per task: progress is saved chunk by chunk
    llm = FakeLLM(tiny_qwen2)
    return vb.VLLMBackend(llm, vb.VLLMConfig(model=tiny_qwen2.info["name_or_path"])), llm


@pytest.mark.parametrize("mode,shots", [("letter", 0), ("letter", 2), ("ppl", 1), ("generate", 1)])
def test_vllm_backend_logic_equals_hf(fake_vllm, tiny_qwen2, fixture_items, mode, shots):
    be, llm = fake_vllm
    test, dev = fixture_items["cloze"]
    s = Settings(mode=mode, shots=shots, max_new_tokens=5)
    seen = []
    got = score_task(be, s, "cloze", test, dev, on_batch=lambda recs: seen.append(len(recs))).records
    ref = score_task(HFBackend(tiny_qwen2.model, tiny_qwen2.tokenizer, batch_size=4), s, "cloze", test, dev).records
    assert [r["pred"] for r in got] == [r["pred"] for r in ref]
    assert seen == [3, 3, 1] and max(llm.calls) <= (12 if mode == "letter" else 3 * 4 if mode == "ppl" else 3)
    for a, b in zip(got, ref):
        if mode == "letter":
            assert max(abs(x - y) for x, y in zip(a["logprobs"], b["logprobs"])) < 1e-4
        elif mode == "ppl":
            assert max(abs(x - y) for x, y in zip(a["option_logprobs"], b["option_logprobs"])) < 1e-4
            assert a["option_tokens"] == b["option_tokens"]
        else:
            assert a.get("extracted_by") == b.get("extracted_by") and a["finish_reason"] == b["finish_reason"]
    assert be.fingerprint()["tokenizer_sha256"] and be.context_length() == 4096


@pytest.mark.skipif(not HAVE_VLLM, reason="vLLM is not installed (optional extra: pip install 'ancientbench[vllm]')")
@pytest.mark.skipif(not HAVE_GPU, reason="the vllm backend needs a CUDA GPU; see bench/vllm_check.py for the GPU check")
def test_real_vllm_agrees_with_hf(tiny_qwen2, fixture_data):  # pragma: no cover - needs a GPU
    from ancientbench.evaluation import evaluate_model

    folder = tiny_qwen2.info["name_or_path"]
    kw = dict(data=fixture_data, tasks=["cloze", "radical"], shots=1, progress=False, dtype="float32")
    hf = evaluate_model(folder, backend="hf", device="cuda", **kw)[1]["predictions"]
    vl = evaluate_model(folder, backend="vllm", **kw)[1]["predictions"]
    agree = sum(a["pred"] == b["pred"] for a, b in zip(hf, vl)) / len(hf)
    assert agree >= 0.95
