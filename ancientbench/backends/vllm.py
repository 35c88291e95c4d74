"""The ``vllm`` backend (optional extra: ``pip install 'ancientbench[vllm]'``, a CUDA GPU): vLLM's offline
engine in this process.

- ``letter`` and ``ppl`` both come from *prompt* log-probabilities (as lm-evaluation-harness's vLLM
  loglikelihood): the prompt's token ids followed by the continuation's are sent with ``max_tokens=1`` and
  ``prompt_logprobs=0``, and the log-probabilities vLLM reports for the continuation's own tokens are summed.
  For a letter the continuation is its one token (the same checked ids as the hf backend,
  :func:`ancientbench.backends.hf_scoring.encode`); the four letters of an item are four sequences sharing the
  prompt, which vLLM's prefix caching (on) computes once.
- ``generate``: greedy ``SamplingParams(temperature=0, max_tokens=...)`` on the chat-rendered prompt.
- Tokens are counted with the model's own tokenizer (``llm.get_tokenizer()``), so the evaluation layer fits
  prompts exactly as for hf; the context is vLLM's ``max_model_len`` (``--max-length`` sets it).
- Options (``--backend-option``): ``tensor_parallel_size``, ``gpu_memory_utilization``, ``enforce_eager``.

Not exercised by the CPU test suite (it needs vLLM and a GPU; ``tests/test_vllm.py`` skips with the reason);
``bench/vllm_check.py`` is the prepared GPU check: the same items through ``hf`` and ``vllm`` in each mode,
agreement reported.
"""

from __future__ import annotations

from typing import Sequence

from ..models import local_model_path, weights_sha256
from ..prompts import PromptParts, chat_wrap
from ..tasks import LETTERS
from .base import (
    Backend,
    BackendError,
    GenerateRequest,
    GenerateResult,
    LetterRequest,
    LetterResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    OnDone,
    Prompt,
)
from .hf import text_sha256, tokenizer_files_sha256
from .hf_scoring import Encoder, encode
from .options import ExtraOptions, WeightsConfig

CHUNK = 512  # requests per vLLM call: large enough to keep the engine busy, small enough to save progress often


class VLLMConfig(WeightsConfig, ExtraOptions):
    """The vllm backend's options: the weights (revision, dtype, remote code), the context limit and the engine's
    extras (``tensor_parallel_size``, ``gpu_memory_utilization``, ``enforce_eager``); vLLM places and batches
    the model itself."""


class VLLMBackend(Backend):
    name = "vllm"
    batches_in_process = True
    modes = ("letter", "ppl", "generate")
    config_class = VLLMConfig

    def __init__(self, llm, config: VLLMConfig):
        self.llm = llm
        self.config = config
        self.tokenizer = llm.get_tokenizer()
        self._letter_ids: dict | None = None

    @classmethod
    def load(cls, config: VLLMConfig) -> "VLLMBackend":
        try:
            from vllm import LLM  # lazy: optional extra (GPU), imported when the backend is used
        except ImportError as err:
            raise BackendError(f"the vllm backend needs vLLM (pip install 'ancientbench[vllm]'): {err}") from err

        opts = dict(config.options)
        kwargs = {
            "model": local_model_path(config.model), "revision": config.revision,
            "trust_remote_code": config.trust_remote_code, "seed": 0, "enable_prefix_caching": True,
            "dtype": "auto" if config.dtype in (None, "auto") else config.dtype,
            "tensor_parallel_size": int(opts.pop("tensor_parallel_size", 1)),
        }
        if config.max_length is not None:
            kwargs["max_model_len"] = int(config.max_length)
        if "gpu_memory_utilization" in opts:
            kwargs["gpu_memory_utilization"] = float(opts.pop("gpu_memory_utilization"))
        if "enforce_eager" in opts:
            kwargs["enforce_eager"] = opts.pop("enforce_eager").lower() in ("1", "true", "yes")
        if opts:
            raise BackendError(f"vllm backend: unknown --backend-option {', '.join(opts)}")
        return cls(LLM(**kwargs), config)

    # ------------------------------------------------------------------------------------------ describe

    def _model_config(self):
        engine = self.llm.llm_engine
        return getattr(engine, "model_config", None) or engine.get_model_config()

    def info(self) -> dict:
        mc = self._model_config()
        return {"name_or_path": self.config.model, "revision": self.config.revision, "weights_sha256": None,
                "dtype": str(getattr(mc, "dtype", "")).replace("torch.", ""), "device": "vllm",
                "smoke_model": False, "architecture": ",".join(getattr(mc.hf_config, "architectures", None) or [])}

    def fingerprint(self) -> dict:
        info = self.info()
        return {"name_or_path": info["name_or_path"], "revision": info["revision"],
                "weights_sha256": weights_sha256(self.config.model), "dtype": info["dtype"],
                "max_length": self.context_length(), "tokenizer_sha256": tokenizer_files_sha256(self.config.model),
                "chat_template_sha256": text_sha256(getattr(self.tokenizer, "chat_template", None))}

    def context_length(self) -> int | None:
        return int(self._model_config().max_model_len)

    # ------------------------------------------------------------------------------------------- prompts

    def _text(self, prompt: Prompt) -> str:
        if not prompt.chat:
            return prompt.text

        return chat_wrap(self.tokenizer, prompt).text

    def _ids(self, prompts: Sequence[Prompt]) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in prompts]
        for chat in (False, True):
            idx = [i for i, p in enumerate(prompts) if p.chat == chat]
            for i, ids in zip(idx, Encoder(self.tokenizer, not chat)([self._text(prompts[i]) for i in idx])):
                out[i] = ids
        return out

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        return [len(x) for x in self._ids(prompts)]

    def _prompt_logprob_sums(self, seqs: list[tuple[list[int], int]]) -> list[float]:
        """Sum of the log-probabilities of the last ``n`` tokens of each sequence (vLLM prompt logprobs)."""
        from vllm import SamplingParams  # lazy: optional extra (GPU), imported when the backend is used

        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0)
        outs = self.llm.generate([{"prompt_token_ids": ids} for ids, _ in seqs], params, use_tqdm=False)
        sums = []
        for (ids, n), out in zip(seqs, outs):
            lp = out.prompt_logprobs
            sums.append(sum(float(lp[k][ids[k]].logprob) for k in range(len(ids) - n, len(ids))))
        return sums

    # ------------------------------------------------------------------------------------------- modes

    def _in_chunks(self, fn, requests, on_done):
        """``fn`` over chunks of :data:`CHUNK` requests, reporting each chunk so finished work is saved."""
        results = []
        for start in range(0, len(requests), CHUNK):
            part = fn(requests[start: start + CHUNK])
            if on_done is not None:
                on_done(list(range(start, start + len(part))), part)
            results += part
        return results

    def letter_logprobs(self, requests: Sequence[LetterRequest], on_done: OnDone | None = None) -> list[LetterResult]:
        return self._in_chunks(self._letters, requests, on_done)

    def loglikelihoods(self, requests: Sequence[LoglikelihoodRequest],
                       on_done: OnDone | None = None) -> list[LoglikelihoodResult]:
        return self._in_chunks(self._loglik, requests, on_done)

    def generate(self, requests: Sequence[GenerateRequest], on_done: OnDone | None = None) -> list[GenerateResult]:
        return self._in_chunks(self._generate, requests, on_done)

    def _letters(self, requests: Sequence[LetterRequest]) -> list[LetterResult]:
        if not requests:
            return []
        conts = {r.continuations for r in requests}
        if len(conts) > 1 or len({r.prompt.chat for r in requests}) > 1:
            raise BackendError("the vllm backend scores one set of letter continuations and one chat flag per call")
        chat = requests[0].prompt.chat
        parts = [PromptParts("", self._text(r.prompt)) for r in requests]
        full = self._ids([r.prompt for r in requests])
        encs, letter_ids = encode(self.tokenizer, parts, next(iter(conts)), not chat, full=full,
                                   names=[r.name or f"prompt #{i}" for i, r in enumerate(requests)])
        self._letter_ids = letter_ids
        seqs = [(e.ids + [letter_ids[x]], 1) for e in encs for x in LETTERS]
        sums = self._prompt_logprob_sums(seqs)
        return [LetterResult(sums[4 * i: 4 * i + 4]) for i in range(len(requests))]

    def _loglik(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        if not requests:
            return []
        ctx_ids = self._ids([r.prompt for r in requests])
        seqs, shape = [], []
        for r, cids in zip(requests, ctx_ids):
            text = self._text(r.prompt)
            for c in r.continuations:
                whole = self._ids([Prompt("", text + c, False)])[0] if not r.prompt.chat else \
                    cids + list(self.tokenizer(c, add_special_tokens=False)["input_ids"])
                cont = whole[len(cids):] if whole[: len(cids)] == cids and len(whole) > len(cids) else \
                    list(self.tokenizer(c, add_special_tokens=False)["input_ids"])
                seqs.append((cids + cont, len(cont)))
            shape.append(len(r.continuations))
        sums = self._prompt_logprob_sums(seqs)
        results, k = [], 0
        for n in shape:
            results.append(LoglikelihoodResult(sums[k: k + n], [s[1] for s in seqs[k: k + n]]))
            k += n
        return results

    def _generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        from vllm import SamplingParams  # lazy: optional extra (GPU), imported when the backend is used

        if not requests:
            return []
        ids = self._ids([r.prompt for r in requests])
        results: list[GenerateResult | None] = [None] * len(requests)
        for budget in sorted({r.max_new_tokens for r in requests}):
            idx = [i for i, r in enumerate(requests) if r.max_new_tokens == budget]
            params = SamplingParams(temperature=0.0, max_tokens=budget)
            outs = self.llm.generate([{"prompt_token_ids": ids[i]} for i in idx], params, use_tqdm=False)
            for i, out in zip(idx, outs):
                o = out.outputs[0]
                results[i] = GenerateResult(o.text, len(o.token_ids), o.finish_reason)
        return results  # type: ignore[return-value]

    def stats(self) -> dict:
        return {"letter_token_ids": self._letter_ids}
