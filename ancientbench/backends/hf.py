"""The ``hf`` backend: a ``transformers`` causal LM in this process (Hub id, local folder or model object).

- ``letter``: :mod:`ancientbench.backends.hf_scoring` - exact letter token ids checked per prompt, batches sorted by
  length with left padding, the LM head on the last position only, shared-prefix KV reuse, out-of-memory
  back-off and ``batch_size="auto"``; predictions as before the backend split (tested).
- ``ppl``: per option, the prompt and the option text are tokenised together (lm-evaluation-harness's
  split: the continuation's tokens are those after the prompt's own tokens; where the boundary merges, the
  continuation is tokenised on its own and appended), and the log-probabilities of the continuation's
  tokens summed; batches of (item, option) sequences with the same back-off, the head on the last
  ``len(continuation)+1`` positions only.
- ``generate``: greedy ``model.generate`` in left-padded batches, the prompt rendered with the chat
  template (generate mode is always chat); the answer decoded without special tokens.
- Model loading (:mod:`ancientbench.models`): device/dtype ``auto``, ``device_map="auto"``, revision,
  remote code; under several processes the evaluation layer passes each process its own device.
- Fingerprint: name, revision, weights hash, dtype, context limit, and a hash of the tokenizer and
  generation files of a local folder (or of the tokenizer in memory) and of the chat template.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from .. import models
from ..models import load_model, model_info, prepare_tokenizer
from ..prompts import chat_wrap
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
from .hf_scoring import AutoBatchSize, Encoder, Runner, check_batch_size, context_limit, encode, pad_id, resolve_prefix_cache, run_batches, score_encoded
from .options import InProcessConfig

# files of a model folder besides the weights that change what the model is given or how it answers
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt", "merges.txt",
    "special_tokens_map.json", "added_tokens.json", "chat_template.jinja", "chat_template.json",
    "generation_config.json",
)


def tokenizer_files_sha256(folder: str | Path) -> str | None:
    """sha256 over the tokenizer, chat-template and generation-config files of a local model folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    h = hashlib.sha256()
    found = False
    for name in TOKENIZER_FILES:
        p = folder / name
        if p.is_file():
            found = True
            h.update(f"{name}\t{hashlib.sha256(p.read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest() if found else None


def text_sha256(text: str | None) -> str | None:
    """sha256 of a text (a chat template, a serialised tokenizer); None for none."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text else None


def model_name(model) -> str:
    """The name a model object was loaded under (its Hub id or folder), ``model`` when it carries none."""
    return getattr(model, "name_or_path", None) or getattr(model.config, "_name_or_path", "") or "model"


class HFConfig(InProcessConfig):
    """The hf backend's options: a transformers model loaded, placed and batched in this process."""


class HFBackend(Backend):
    name = "hf"
    family = "hf"  # subclasses on other weights (tiny-random) stay in it
    batches_in_process = True
    modes = ("letter", "ppl", "generate")
    config_class = HFConfig

    def __init__(self, model, tokenizer, info: dict | None = None, config: HFConfig | None = None, *,
                 folder: str | Path | None = None, **options):
        """A loaded model and tokenizer with ``config`` (or, for a model object in a script, the HFConfig
        ``options``: ``batch_size``, ``prefix_cache``, ``max_length``)."""
        auto = options.pop("batch_size") if isinstance(options.get("batch_size"), AutoBatchSize) else None
        if config is None:  # an AutoBatchSize passed in is "auto" carried over from an earlier run
            config = HFConfig(model=model_name(model), **options, **({"batch_size": "auto"} if auto else {}))
        elif options or auto:
            raise BackendError(f"HFBackend: give {', '.join(options)} in its config or as keywords, not both")
        self.model = model
        self.tokenizer = tokenizer
        self._info = info
        self.config = config
        self.batch = auto or check_batch_size(config.batch_size)  # "auto": one AutoBatchSize kept from task to task
        self.batch_size_arg = config.batch_size
        self.prefix_cache = config.prefix_cache
        self.max_length = config.max_length
        self.folder = Path(folder) if folder is not None else None
        self._rendered: dict[Prompt, object] = {}
        self._ids: dict[tuple[str, bool], list[int]] = {}  # (text, add_special_tokens) -> ids, filled by count_tokens
        self._stats: dict = {"letter_token_ids": None, "batch_size_used": None, "prefix_cache_items": 0}

    # ------------------------------------------------------------------------------------------ loading

    @classmethod
    def load(cls, config: HFConfig) -> "HFBackend":
        return cls.open(config, config.model)

    @classmethod
    def open(cls, config: HFConfig, source: str | Path, *, record_as: str | None = None,
             smoke_model: bool = False) -> "HFBackend":
        """Load the weights at ``source`` (Hub id, folder, shipped model name) with ``config``'s placement, recorded
        in results as ``record_as`` (default ``config.model``)."""
        loaded = load_model(source, device=config.device, dtype=config.dtype, revision=config.revision,
                            trust_remote_code=config.trust_remote_code, device_map=config.device_map,
                            record_as=record_as or config.model, smoke_model=smoke_model)
        return cls(loaded.model, loaded.tokenizer, loaded.info, config, folder=Path(loaded.local_path).expanduser())

    @classmethod
    def from_model(cls, model, tokenizer, *, device: str | None = None, dtype=None, revision: str | None = None,
                   batch_size=8, prefix_cache="auto", max_length: int | None = None,
                   hash_weights: bool = False) -> "HFBackend":
        """A model object already in memory (``device``/``dtype`` applied only if given; ``"auto"`` chooses as
        for a model loaded by name). ``hash_weights``: hash its tensors (a full pass over the weights) - its
        folder on disk says nothing about weights changed in memory; needed when a later run may resume."""
        if device is not None:  # "auto" -> cuda/npu/mps/cpu
            device = models.select_device(device)
        tok = prepare_tokenizer(tokenizer)
        if dtype is not None:  # "auto" depends on where the model will run
            model = model.to(models.select_dtype(dtype, device or str(next(model.parameters()).device)))
        if device is not None:
            model = model.to(device)
        name = model_name(model)
        info = model_info(model, name, revision=revision, weights="tensors" if hash_weights else None)
        return cls(model, tok, info, batch_size=batch_size, prefix_cache=prefix_cache, max_length=max_length)

    def use_tokenizer(self, tokenizer) -> None:
        """Score with another tokenizer than the model folder's."""
        self.tokenizer = prepare_tokenizer(tokenizer)
        self.folder = None

    def info(self) -> dict:
        if self._info is None:
            self._info = model_info(self.model, model_name(self.model), weights=None)
        return self._info

    def fingerprint(self) -> dict:
        info = self.info()
        tok_sha = tokenizer_files_sha256(self.folder) if self.folder is not None else None
        if tok_sha is None:  # a tokenizer in memory: hash its serialisation (once; it is not changed in a run)
            key = id(self.tokenizer)
            if getattr(self, "_tok_sha", (None, None))[0] != key:
                backend_tok = getattr(self.tokenizer, "backend_tokenizer", None)
                self._tok_sha = (key, text_sha256(backend_tok.to_str()) if backend_tok is not None else None)
            tok_sha = self._tok_sha[1]
        return {
            "name_or_path": info["name_or_path"], "revision": info.get("revision"),
            "weights_sha256": info.get("weights_sha256"), "dtype": info.get("dtype"),
            "max_length": self.context_length(), "tokenizer_sha256": tok_sha,
            "chat_template_sha256": text_sha256(getattr(self.tokenizer, "chat_template", None)),
            "generation_config_sha256": self._generation_configtext_sha256(),  # kept in the fingerprint in generate mode only
        }

    def _generation_configtext_sha256(self) -> str | None:
        """sha256 of the generation config in memory (a Hub model's or an edited one: not on disk to hash)."""
        config = getattr(self.model, "generation_config", None)
        if config is None or not hasattr(config, "to_json_string"):
            return None
        return text_sha256(config.to_json_string(use_diff=False))

    def context_length(self) -> int | None:
        return context_limit(self.model, self.tokenizer, self.max_length)

    # ------------------------------------------------------------------------------------------ prompts

    def _render(self, prompt: Prompt):
        """The prompt as the model reads it: itself, or rendered with the chat template (split at the end of its
        prefix, :func:`~ancientbench.prompts.chat_wrap`); either has ``prefix`` and ``text``."""
        if not prompt.chat:
            return prompt
        parts = self._rendered.get(prompt)
        if parts is None:
            parts = chat_wrap(self.tokenizer, prompt)
            if len(self._rendered) > 100_000:  # a cache for one task's fitting and scoring, not forever
                self._rendered.clear()
            self._rendered[prompt] = parts
        return parts

    def _encode_texts(self, texts: Sequence[str], add_special: bool) -> list[list[int]]:
        missing = [t for t in dict.fromkeys(texts) if (t, add_special) not in self._ids]
        if missing:
            if len(self._ids) > 100_000:
                self._ids.clear()
            for t, ids in zip(missing, Encoder(self.tokenizer, add_special)(missing)):
                self._ids[(t, add_special)] = ids
        return [self._ids[(t, add_special)] for t in texts]

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        out = [0] * len(prompts)
        for chat in (False, True):
            idx = [i for i, p in enumerate(prompts) if p.chat == chat]
            if idx:
                ids = self._encode_texts([self._render(prompts[i]).text for i in idx], not chat)
                for i, x in zip(idx, ids):
                    out[i] = len(x)
        return out

    def _forget(self) -> None:
        self._ids.clear()
        self._rendered.clear()

    @staticmethod
    def _one_chat_flag(requests) -> bool:
        flags = {r.prompt.chat for r in requests}
        if len(flags) > 1:
            raise BackendError("the hf backend scores chat and plain prompts in separate calls")
        return flags.pop()

    # ------------------------------------------------------------------------------------------- letter

    def letter_logprobs(self, requests: Sequence[LetterRequest], on_done: OnDone | None = None) -> list[LetterResult]:
        if not requests:
            return []
        conts = {r.continuations for r in requests}
        if len(conts) > 1:
            raise BackendError(f"the hf backend scores one set of letter continuations per call, not {sorted(conts)}")
        chat = self._one_chat_flag(requests)
        parts = [self._render(r.prompt) for r in requests]
        full = self._encode_texts([p.text for p in parts], not chat)
        names = [r.name or f"prompt #{i}" for i, r in enumerate(requests)]
        encs, letter_ids = encode(self.tokenizer, parts, next(iter(conts)), not chat, full=full, names=names)
        results: list[LetterResult | None] = [None] * len(requests)

        def sink(chunk: list[int], rows: list[list[float]]) -> None:
            done = [LetterResult(list(row)) for row in rows]
            for i, res in zip(chunk, done):
                results[i] = res
            if on_done is not None:
                on_done(chunk, done)

        try:
            _, cached, used = score_encoded(
                self.model, encs, letter_ids, pad_id(self.tokenizer), batch_size=self.batch,
                use_cache=resolve_prefix_cache(self.model, self.prefix_cache), on_batch=sink,
            )
        finally:
            self._forget()
        self._stats.update(letter_token_ids=letter_ids, batch_size_used=used,
                           prefix_cache_items=self._stats["prefix_cache_items"] + cached)
        return results  # type: ignore[return-value]

    # ---------------------------------------------------------------------------------------------- ppl

    def loglikelihoods(self, requests: Sequence[LoglikelihoodRequest],
                       on_done: OnDone | None = None) -> list[LoglikelihoodResult]:
        import torch  # lazy: torch costs seconds to import; only a model run needs it

        if not requests:
            return []
        chat = self._one_chat_flag(requests)
        contexts = [self._render(r.prompt).text for r in requests]
        ctx_ids = self._encode_texts(contexts, not chat)
        seqs: list[tuple[int, int, list[int], int]] = []  # (request, option, ids, continuation length)
        for i, (r, ctx, cids) in enumerate(zip(requests, contexts, ctx_ids)):
            whole = self._encode_texts([ctx + c for c in r.continuations], not chat)
            for j, (c, w) in enumerate(zip(r.continuations, whole)):
                if len(w) > len(cids) and w[: len(cids)] == cids:
                    cont = w[len(cids):]
                else:  # the boundary merged: the continuation's own tokens after the prompt's
                    cont = list(self.tokenizer(c, add_special_tokens=False)["input_ids"])
                if not cont:
                    raise BackendError(f"{r.name or f'request #{i}'}: option {j} ({c!r}) has no tokens")
                seqs.append((i, j, cids + cont, len(cont)))
        self._forget()
        runner = Runner(self.model, pad_id(self.tokenizer), {x: 0 for x in "ABCD"})
        sums: list[list[float | None]] = [[None] * len(r.continuations) for r in requests]
        counts: list[list[int | None]] = [[None] * len(r.continuations) for r in requests]
        results: list[LoglikelihoodResult | None] = [None] * len(requests)

        def forward(chunk: list[int]) -> list[float]:
            rows = [seqs[k] for k in chunk]
            width = max(len(s[2]) for s in rows)
            keep = max(s[3] for s in rows) + 1
            ids = torch.full((len(rows), width), runner.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for row, s in enumerate(rows):
                ids[row, width - len(s[2]):] = torch.tensor(s[2], dtype=torch.long)
                mask[row, width - len(s[2]):] = 1
            positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
            kwargs = {"input_ids": ids.to(runner.device), "attention_mask": mask.to(runner.device), "use_cache": False}
            if runner.takes_positions:
                kwargs["position_ids"] = positions.to(runner.device)
            if runner.keep_kw:
                kwargs[runner.keep_kw] = min(keep, width)
            logits = self.model(**kwargs).logits.float()
            logp = logits[:, -min(keep, width):, :].log_softmax(-1)
            out = []
            for row, s in enumerate(rows):
                n = s[3]
                targets = torch.tensor(s[2][-n:], device=logp.device)
                picked = logp[row, -n - 1:-1, :].gather(-1, targets[:, None])[:, 0]
                out.append(float(picked.sum()))
            return out

        pending = [len(r.continuations) for r in requests]

        def sink(chunk: list[int], values: list[float]) -> None:
            finished = []
            for k, v in zip(chunk, values):
                i, j, _, n = seqs[k]
                sums[i][j], counts[i][j] = v, n
                pending[i] -= 1
                if pending[i] == 0:
                    results[i] = LoglikelihoodResult(sums[i], counts[i])  # type: ignore[arg-type]
                    finished.append(i)
            if finished and on_done is not None:
                on_done(finished, [results[i] for i in finished])

        self._batched(runner.device, [len(s[2]) for s in seqs], forward, sink)
        return results  # type: ignore[return-value]

    # ----------------------------------------------------------------------------------------- generate

    def generate(self, requests: Sequence[GenerateRequest], on_done: OnDone | None = None) -> list[GenerateResult]:
        import torch  # lazy: torch costs seconds to import; only a model run needs it

        if not requests:
            return []
        chat = self._one_chat_flag(requests)
        ids = self._encode_texts([self._render(r.prompt).text for r in requests], not chat)
        self._forget()
        pad = pad_id(self.tokenizer)
        device = self.model.get_input_embeddings().weight.device
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            eos_ids.add(self.tokenizer.eos_token_id)
        results: list[GenerateResult | None] = [None] * len(requests)

        def run(chunk: list[int]) -> list[GenerateResult]:
            width = max(len(ids[i]) for i in chunk)
            budget = max(requests[i].max_new_tokens for i in chunk)
            x = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):
                x[row, width - len(ids[i]):] = torch.tensor(ids[i], dtype=torch.long)
                mask[row, width - len(ids[i]):] = 1
            out = self.model.generate(
                input_ids=x.to(device), attention_mask=mask.to(device), max_new_tokens=budget, do_sample=False,
                pad_token_id=pad, eos_token_id=sorted(eos_ids) or None, temperature=None, top_p=None, top_k=None,
            )
            done = []
            for row, i in enumerate(chunk):
                new = out[row, width:].tolist()[: requests[i].max_new_tokens]
                stop = next((k for k, t in enumerate(new) if t in eos_ids), None)
                kept = new if stop is None else new[:stop]
                text = self.tokenizer.decode(kept, skip_special_tokens=True)
                done.append(GenerateResult(text, len(kept), "length" if stop is None else "stop"))
            return done

        def sink(chunk: list[int], rows: list[GenerateResult]) -> None:
            for i, r in zip(chunk, rows):
                results[i] = r
            if on_done is not None:
                on_done(chunk, rows)

        self._batched(device, [len(x) for x in ids], run, sink)
        return results  # type: ignore[return-value]

    def _batched(self, device, lengths: Sequence[int], fn, sink) -> None:
        """Run ``fn`` over the indices in batches, longest first, in eval mode without gradients (OOM back-off in
        :func:`ancientbench.backends.hf_scoring.run_batches`); the batch size reached is kept for the next call and recorded."""
        import torch  # lazy: torch costs seconds to import; only a model run needs it

        was_training = self.model.training
        self.model.eval()
        size = self.batch.initial(device) if isinstance(self.batch, AutoBatchSize) else self.batch
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        try:
            with torch.inference_mode():
                size = run_batches(order, size, fn, sink)
        finally:
            if isinstance(self.batch, AutoBatchSize):
                self.batch.size = size
            if was_training:
                self.model.train()
        self._stats["batch_size_used"] = size

    # ---------------------------------------------------------------------------------------------- misc

    def stats(self) -> dict:
        return {
            "batch_size": self.batch_size_arg,
            "batch_size_used": self._stats["batch_size_used"],
            "prefix_cache": resolve_prefix_cache(self.model, self.prefix_cache),
            "letter_token_ids": self._stats["letter_token_ids"],
        }

    @property
    def prefix_cache_items(self) -> int:
        return self._stats["prefix_cache_items"]

    @property
    def letter_token_ids(self) -> dict | None:
        return self._stats["letter_token_ids"]
