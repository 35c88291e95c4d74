"""The hf backend's scoring kernel (below :mod:`.hf`, as lm-eval's ``models/utils_hf.py`` sits below its
``huggingface.py``): the log-probabilities of A/B/C/D as a transformers model's next token after each prompt, and
the forward-pass helpers (encoding, batches, out-of-memory back-off, shared-prefix KV reuse) that also serve the
backend's ppl and generate modes and the vllm backend's encoding. :mod:`ancientbench.scoring` is the public
one-call API above the evaluation layer.

Kernel API:

- :func:`score_items` ``(model, tokenizer, prompts, *, batch_size, letter_style, prefix_cache, ...) -> Scores``:
  any ``AutoModelForCausalLM`` and its tokenizer, prompts as strings or :class:`~ancientbench.prompts.PromptParts`;
  per item the four log-probabilities (log-softmax over the whole vocabulary, at the position after the
  prompt) and the argmax letter (ties go to the earlier letter).

How a prompt is scored:

- Tokens: the prompt text is tokenised as a whole (``add_special_tokens``: the tokenizer's leading special
  tokens such as BOS are kept, special tokens a tokenizer would append at the end are not, since the answer
  follows). In chat mode the chat template supplies the special tokens and none are added.
- Letter ids: for every prompt and every letter, ``tokenize(prompt + letter)`` must equal
  ``tokenize(prompt)`` plus exactly one token, the same for all prompts; that token is the letter's id.
  Otherwise :class:`LetterTokenError` names the tokenizer, the letter and the tokens at the boundary (a
  bare ``A`` merging with ``：``, or a ``▁A`` trap, can never yield a silently wrong id). Letter style
  ``"bare"`` appends ``A`` (the paper's / CMMLU's convention), ``"space"`` appends ``" A"`` (lm-eval's).
- Batches: items sorted by length (longest first), left padding with an explicit pad id, ``position_ids``
  from the attention mask, the model in eval mode under ``torch.inference_mode()``, and the LM head applied
  to the last position only (``logits_to_keep=1``; models whose ``forward`` lacks it get the last row sliced
  from their logits). In float32 the predictions do not depend on the batch size.
- Shared-prefix KV reuse (``prefix_cache``): items whose prompts share a prefix (instruction and exemplars of
  a task) get that prefix's KV cache computed once; the question suffixes are then run in batches against a
  copy of it expanded over the batch, suffixes left-padded *between* prefix and question, so the attention
  mask covers prefix + suffix and positions continue after the prefix. Used only where the prefix's own
  tokens are exactly the first tokens of the whole prompt (checked per item); other items are scored from
  scratch. ``"auto"`` enables it for models implemented in ``transformers`` itself (remote-code models may
  use legacy caches) - predictions are the same as from scratch (tested, float32).
- Context: a prompt longer than the model's context (``max_length``, else the config's
  ``max_position_embeddings``) first loses few-shot exemplars, longest first (``shots_used`` records how
  many remain); if the question alone does not fit, that item gets ``pred=None`` and an ``error`` in its
  record (counted wrong; never truncated; :func:`ancientbench.scoring.score_task`). :func:`score_items` raises :class:`ContextLengthError` instead.
- Out of memory: a batch that runs out of device memory is split in half and retried (and later batches
  use the smaller size); finished items are never recomputed or lost. ``batch_size="auto"`` starts at
  :data:`AUTO_BATCH_START` prompts on an accelerator (:data:`AUTO_BATCH_CPU` on CPU) and relies on that
  back-off; an :class:`AutoBatchSize` object carries the size reached from one call to the next.
"""

from __future__ import annotations

import copy
import gc
import inspect
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..errors import AncientBenchError
from ..prompts import PromptParts, format_exemplar
from ..tasks import LETTERS
from .base import letter_continuations

PREFIX_CACHE_MODES = ("auto", True, False)


class LetterTokenError(AncientBenchError, ValueError):
    """The answer letter is not exactly one new token after the prompt for this tokenizer."""


class ScoringOptionError(AncientBenchError, ValueError):
    """A scoring option (batch size, prefix cache) with a value it cannot take."""


class ContextLengthError(AncientBenchError, ValueError):
    """A prompt does not fit into the model's context even without few-shot exemplars."""


@dataclass
class Scores:
    """Per-item results of :func:`score_items`, in the order of the prompts given."""

    logprobs: list[list[float]]  # [lA, lB, lC, lD] per item
    preds: list[str]  # argmax letter per item
    letter_token_ids: dict[str, int]
    n_tokens: list[int]  # prompt length in tokens per item
    prefix_cache_items: int = 0  # items scored against a cached shared prefix
    batch_size: int | None = None  # the batch size in use at the end (smaller than asked after out-of-memory)




# ----------------------------------------------------------------------------------------------- tokens


def tokenizer_name(tokenizer) -> str:
    """How errors name a tokenizer: its ``name_or_path`` and class."""
    name = getattr(tokenizer, "name_or_path", "") or "<unnamed>"
    return f"{name!r} ({type(tokenizer).__name__})"


def leading_special_ids(tokenizer) -> list[int]:
    """The special tokens the tokenizer puts before a text (e.g. Llama's BOS), found by encoding a probe."""
    probe = "题目"
    with_special = list(tokenizer(probe, add_special_tokens=True)["input_ids"])
    plain = list(tokenizer(probe, add_special_tokens=False)["input_ids"])
    n = len(plain)
    for start in range(len(with_special) - n + 1):
        if with_special[start : start + n] == plain:
            return with_special[:start]
    raise LetterTokenError(f"tokenizer {tokenizer_name(tokenizer)} changes a text's tokens when adding special tokens")


class Encoder:
    def __init__(self, tokenizer, add_special_tokens: bool):
        self.tokenizer = tokenizer
        self.lead = leading_special_ids(tokenizer) if add_special_tokens else []

    def __call__(self, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        ids = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [self.lead + list(x) for x in ids]


def _show(tokenizer, ids: Sequence[int], n: int = 4) -> str:
    tail = list(ids[-n:])
    return f"{tail} {tokenizer.convert_ids_to_tokens(tail)}"


def _letter_ids(
    encoder: Encoder, texts: Sequence[str], full: Sequence[Sequence[int]], continuations: Sequence[str],
    names: Sequence[str],
) -> dict[str, int]:
    """Resolve and verify each letter's token id on every prompt (see module docstring); ``continuations``: A-D as
    written after the prompt."""
    tok = encoder.tokenizer
    if len(continuations) != len(LETTERS):
        raise LetterTokenError(f"expected the {len(LETTERS)} letters A-D as continuations, got {list(continuations)}")
    out: dict[str, int] = {}
    for letter, cont in zip(LETTERS, continuations):
        with_letter = encoder([t + cont for t in texts])
        for i, (base, ext) in enumerate(zip(full, with_letter)):
            if len(ext) != len(base) + 1 or ext[: len(base)] != base:
                raise LetterTokenError(
                    f"tokenizer {tokenizer_name(tok)}: letter {cont!r} is not "
                    f"exactly one new token after the prompt of {names[i]}: the prompt ends in tokens {_show(tok, base)} but "
                    f"prompt+{cont!r} ends in {_show(tok, ext)}. Its id cannot be read off without changing "
                    f"the prompt's tokens; try the other letter style (--letter-style)."
                )
            got = ext[-1]
            if letter not in out:
                out[letter] = got
            elif out[letter] != got:
                raise LetterTokenError(
                    f"tokenizer {tokenizer_name(tok)}: letter {cont!r} is token {out[letter]} after the "
                    f"first prompt but token {got} after the prompt of {names[i]}; the letter's id is not stable"
                )
    if len(set(out.values())) != len(LETTERS):
        raise LetterTokenError(f"tokenizer {tokenizer_name(tok)}: letters share token ids: {out}")
    return out


@dataclass
class Encoded:
    ids: list[int]
    prefix_key: str | None = None  # prompts with the same key share their first prefix_len tokens
    prefix_len: int = 0


def encode(
    tokenizer,
    parts: Sequence[PromptParts],
    continuations: Sequence[str],
    add_special_tokens: bool,
    full: Sequence[list[int]] | None = None,
    names: Sequence[str] | None = None,
) -> tuple[list[Encoded], dict[str, int]]:
    encoder = Encoder(tokenizer, add_special_tokens)
    texts = [p.text for p in parts]
    if full is None:
        full = encoder(texts)
    names = list(names) if names is not None else [f"prompt #{i}" for i in range(len(texts))]
    letter_ids = _letter_ids(encoder, texts, full, continuations, names) if texts else {}
    prefixes = sorted({p.prefix for p in parts if p.prefix})
    prefix_ids = dict(zip(prefixes, encoder(prefixes)))
    encs = []
    for p, ids in zip(parts, full):
        e = Encoded(ids)
        pid = prefix_ids.get(p.prefix)
        # Reuse only where the prefix tokenises on its own exactly as inside the prompt.
        if pid is not None and len(ids) > len(pid) and ids[: len(pid)] == pid:
            e.prefix_key, e.prefix_len = p.prefix, len(pid)
        encs.append(e)
    return encs, letter_ids


def context_limit(model, tokenizer=None, max_length: int | None = None) -> int | None:
    """The most prompt tokens the model takes: ``max_length`` if given, else the config's, else the tokenizer's."""
    if max_length is not None:
        return int(max_length)
    config = getattr(model, "config", None)
    if config is not None:
        text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(text_config, attr, None)
            if isinstance(value, int) and value > 0:
                return value
    value = getattr(tokenizer, "model_max_length", None)
    if isinstance(value, int) and 0 < value < 10**8:  # tokenizers without a limit report ~1e30
        return value
    return None


# ---------------------------------------------------------------------------------------------- forward


class Runner:
    """Runs batches through the model: from scratch, or against a cached shared prefix."""

    def __init__(self, model, pad_id: int, letter_ids: dict[str, int]):
        import torch  # lazy: torch costs seconds to import; only a model run needs it

        self.torch = torch
        self.model = model
        self.pad_id = pad_id
        self.letter_index = torch.tensor([letter_ids[x] for x in LETTERS])
        params = inspect.signature(model.forward).parameters
        self.keep_kw = next((k for k in ("logits_to_keep", "num_logits_to_keep") if k in params), None)
        self.cache_kw = next((k for k in ("cache", "past_key_values") if k in params), None)
        self.takes_positions = "position_ids" in params
        self.device = model.get_input_embeddings().weight.device

    def _call(self, input_ids, attention_mask, position_ids, cache=None, use_cache=False):
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask, "use_cache": use_cache}
        if self.takes_positions:
            kwargs["position_ids"] = position_ids
        if self.keep_kw:
            kwargs[self.keep_kw] = 1
        if cache is not None:
            kwargs[self.cache_kw] = cache
        return self.model(**kwargs)

    def _letters(self, logits) -> list[list[float]]:
        last = logits[:, -1, :].float().log_softmax(dim=-1)
        return last[:, self.letter_index.to(last.device)].cpu().tolist()

    def full(self, seqs: Sequence[Sequence[int]]) -> list[list[float]]:
        torch = self.torch
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, s in enumerate(seqs):
            ids[row, width - len(s) :] = torch.tensor(s, dtype=torch.long)
            mask[row, width - len(s) :] = 1
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
        out = self._call(ids.to(self.device), mask.to(self.device), positions.to(self.device))
        return self._letters(out.logits)

    def prefix(self, ids: Sequence[int]):
        """Run the shared prefix once; returns its KV cache (batch 1)."""
        torch = self.torch
        if self.cache_kw is None:
            raise RuntimeError(f"{type(self.model).__name__}.forward takes no KV cache; use prefix_cache=False")
        t = torch.tensor([list(ids)], dtype=torch.long, device=self.device)
        out = self._call(t, torch.ones_like(t), torch.arange(len(ids), device=self.device)[None], use_cache=True)
        cache = getattr(out, "cache", None)
        if cache is None:
            cache = getattr(out, "past_key_values", None)
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            raise RuntimeError(f"{type(self.model).__name__} returned no reusable KV cache; use prefix_cache=False")
        return cache

    def suffixes(self, cache, prefix_len: int, seqs: Sequence[Sequence[int]]) -> list[list[float]]:
        torch = self.torch
        n, width = len(seqs), max(len(s) for s in seqs)
        ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, prefix_len + width), dtype=torch.long)
        mask[:, :prefix_len] = 1
        for row, s in enumerate(seqs):
            ids[row, width - len(s) :] = torch.tensor(s, dtype=torch.long)
            mask[row, prefix_len + width - len(s) :] = 1
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)[:, prefix_len:]
        batch_cache = copy.deepcopy(cache)  # the forward appends to the cache it is given
        if n > 1:
            batch_cache.batch_repeat_interleave(n)
        out = self._call(ids.to(self.device), mask.to(self.device), positions.to(self.device), batch_cache, True)
        return self._letters(out.logits)


def _is_oom(err: BaseException) -> bool:
    import torch  # lazy: torch costs seconds to import; only a model run needs it

    oom_types = tuple(t for t in (getattr(torch, "OutOfMemoryError", None),) if t is not None)
    return isinstance(err, oom_types) or "out of memory" in str(err).lower()


def _free_memory() -> None:
    import torch  # lazy: torch costs seconds to import; only a model run needs it

    gc.collect()
    for backend in ("cuda", "npu", "mps"):
        mod = getattr(torch, backend, None)
        if mod is not None and hasattr(mod, "empty_cache"):
            try:
                if backend != "mps" and not mod.is_available():
                    continue
                mod.empty_cache()
            except Exception:  # a backend that is present but unusable has nothing to free
                pass


def run_batches(order: list[int], batch_size: int, fn: Callable[[list[int]], list[list[float]]], sink) -> int:
    """Run ``fn`` over ``order`` in batches, halving a batch that runs out of memory; returns the final batch size.

    A batch that fails is retried smaller from the same position, so finished batches are never recomputed
    and every item reaches ``sink`` exactly once. Memory is freed after leaving the ``except`` block (the
    exception's traceback holds the failed batch's tensors until then).
    """
    pos = 0
    while pos < len(order):
        chunk = order[pos : pos + batch_size]
        rows = None
        try:
            rows = fn(chunk)
        except Exception as err:
            if not _is_oom(err) or len(chunk) == 1:
                raise
        if rows is None:
            _free_memory()
            batch_size = max(1, len(chunk) // 2)
            continue
        sink(chunk, rows)
        pos += len(chunk)
    return batch_size


class AutoBatchSize:
    """``batch_size="auto"``: start large on an accelerator and halve on out-of-memory; the size reached is kept
    for later calls that share this object (``run_setting`` passes one across all tasks of a setting).

    On CUDA/NPU/MPS the first batch has ``start`` (default :data:`AUTO_BATCH_START`) prompts - the longest
    prompts come first, so the first batches are the largest ones; on CPU, where running out of memory kills
    the process instead of raising, it is the fixed :data:`AUTO_BATCH_CPU`.
    """

    def __init__(self, start: int | None = None):
        self.size: int | None = start

    def initial(self, device) -> int:
        if self.size is None:
            kind = str(device).split(":")[0]
            self.size = AUTO_BATCH_CPU if kind in ("cpu", "meta") else AUTO_BATCH_START
        return self.size

    def __repr__(self) -> str:
        return f"AutoBatchSize(size={self.size})"


AUTO_BATCH_START = 128  # first batch size of "auto" on an accelerator
AUTO_BATCH_CPU = 16  # "auto" on CPU


def check_batch_size(batch_size) -> int | AutoBatchSize:
    """A positive int, ``"auto"`` (a fresh :class:`AutoBatchSize`) or an :class:`AutoBatchSize`; else ValueError."""
    if isinstance(batch_size, AutoBatchSize):
        return batch_size
    if batch_size == "auto":
        return AutoBatchSize()
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ScoringOptionError(f"batch_size must be an int >= 1 or 'auto', got {batch_size!r}")
    return batch_size


# Only full attention: a sliding or chunked window counts cache slots, so the padding between a cached prefix and
# a question would push real prefix tokens out of the window and make scores depend on the batch (review A3).
ATTENTION_LAYER_TYPES = {"full_attention"}


def resolve_prefix_cache(model, prefix_cache) -> bool:
    """``auto``: reuse prefixes for transformers-native models whose layers are all attention layers."""
    if prefix_cache not in PREFIX_CACHE_MODES:
        raise ScoringOptionError(f"prefix_cache must be 'auto', True or False, got {prefix_cache!r}")
    if prefix_cache != "auto":
        return bool(prefix_cache)
    # Remote-code models (transformers_modules.*) may keep legacy tuple caches; recurrent/linear-attention layers
    # (Mamba, hybrid models) would run over the padding between prefix and question: score those from scratch.
    if not type(model).__module__.startswith("transformers."):
        return False
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # a forward without a signature: nothing to rely on
        return False
    if not any(k in params for k in ("cache", "past_key_values")):
        return False
    config = getattr(model, "config", None)
    text_config = config.get_text_config() if config is not None and hasattr(config, "get_text_config") else config
    layer_types = getattr(text_config, "layer_types", None)
    if layer_types:
        return set(layer_types) <= ATTENTION_LAYER_TYPES
    # configs without layer_types (e.g. Mistral) declare windows directly
    windowed = getattr(text_config, "sliding_window", None) and getattr(text_config, "use_sliding_window", True)
    return not windowed and not getattr(text_config, "attention_chunk_size", None)


def score_encoded(
    model,
    encs: Sequence[Encoded],
    letter_ids: dict[str, int],
    pad_id: int,
    *,
    batch_size: int | str | AutoBatchSize,
    use_cache: bool,
    progress=None,
    on_batch: Callable[[list[int], list[list[float]]], None] | None = None,
) -> tuple[list[list[float] | None], int, int]:
    """Scores per item, the number of items scored against a cached prefix, and the batch size reached."""
    import torch  # lazy: torch costs seconds to import; only a model run needs it

    requested = check_batch_size(batch_size)
    results: list[list[float] | None] = [None] * len(encs)

    def sink(chunk: list[int], rows: list[list[float]]) -> None:
        for i, row in zip(chunk, rows):
            results[i] = row
        if on_batch is not None:
            on_batch(chunk, rows)
        if progress is not None:
            progress.update(len(chunk))

    groups: dict[str, list[int]] = {}
    plain: list[int] = []
    for i, e in enumerate(encs):
        if use_cache and e.prefix_key is not None:
            groups.setdefault(e.prefix_key, []).append(i)
        else:
            plain.append(i)
    for key in [k for k, members in groups.items() if len(members) < 2]:
        plain += groups.pop(key)  # a prefix used once saves nothing
    cached_items = sum(len(m) for m in groups.values())

    was_training = model.training
    model.eval()
    runner = Runner(model, pad_id, letter_ids)
    auto = requested if isinstance(requested, AutoBatchSize) else None
    batch_size = auto.initial(runner.device) if auto else requested
    try:
        with torch.inference_mode():
            order = sorted(plain, key=lambda i: (-len(encs[i].ids), i))
            batch_size = run_batches(order, batch_size, lambda c: runner.full([encs[i].ids for i in c]), sink)
            for members in groups.values():
                plen = encs[members[0]].prefix_len
                cache = runner.prefix(encs[members[0]].ids[:plen])
                order = sorted(members, key=lambda i: (-len(encs[i].ids), i))
                batch_size = run_batches(
                    order, batch_size, lambda c, cache=cache, plen=plen: runner.suffixes(cache, plen, [encs[i].ids[plen:] for i in c]), sink
                )
                del cache  # the prefix cache can be large: free it before the next group's
    finally:
        if auto is not None:
            auto.size = batch_size  # what fitted, for the next call (next task) sharing this object
        if was_training:
            model.train()
    return results, cached_items, batch_size


def pad_id(tokenizer) -> int:
    for attr in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, attr, None)
        if value is not None:
            return int(value)
    return 0  # pad positions are masked out, so any id is correct


def _argmax(row: Sequence[float]) -> str:
    best = max(range(len(LETTERS)), key=lambda j: (row[j], -j))  # ties go to the earlier letter
    return LETTERS[best]


def score_items(
    model,
    tokenizer,
    prompts: Sequence[str | PromptParts],
    *,
    batch_size: int | str | AutoBatchSize = 8,
    letter_style: str = "bare",
    prefix_cache: bool | str = "auto",
    add_special_tokens: bool = True,
    max_length: int | None = None,
    progress=None,
    on_batch: Callable[[list[int], list[list[float]]], None] | None = None,
) -> Scores:
    """Score each prompt: log-probabilities of A-D as the next token, and the argmax letter.

    ``prompts`` are strings or :class:`PromptParts` (whose ``prefix`` may be shared and cached).
    ``add_special_tokens=False`` for prompts that already carry their special tokens (chat-template output).
    ``progress`` is anything with ``update(n)`` (a tqdm bar); ``on_batch(indices, logprob_rows)`` is called
    after each batch. Raises :class:`LetterTokenError` or :class:`ContextLengthError` before any forward pass.
    """
    parts = [p if isinstance(p, PromptParts) else PromptParts("", p) for p in prompts]
    encs, letter_ids = encode(tokenizer, parts, letter_continuations(letter_style), add_special_tokens)
    limit = context_limit(model, tokenizer, max_length)
    if limit is not None:
        too_long = [(i, len(e.ids)) for i, e in enumerate(encs) if len(e.ids) > limit]
        if too_long:
            shown = ", ".join(f"#{i} ({n} tokens)" for i, n in too_long[:5])
            raise ContextLengthError(f"{len(too_long)} prompt(s) exceed the context of {limit} tokens: {shown}")
    rows, cached, used = score_encoded(
        model, encs, letter_ids, pad_id(tokenizer), batch_size=batch_size,
        use_cache=resolve_prefix_cache(model, prefix_cache), progress=progress, on_batch=on_batch,
    )
    return Scores(
        logprobs=rows,  # type: ignore[arg-type]
        preds=[_argmax(r) for r in rows],  # type: ignore[arg-type]
        letter_token_ids=letter_ids,
        n_tokens=[len(e.ids) for e in encs],
        prefix_cache_items=cached,
        batch_size=used,
    )


# ------------------------------------------------------------------------------------------------ tasks


def exemplar_drop_order(tokenizer, exemplars: Sequence[Mapping[str, str]], letter_style: str = "bare") -> list[int]:
    """Indices of the exemplars in the order they are dropped when a prompt is too long: longest (in tokens) first."""
    texts = [format_exemplar(e, letter_style) for e in exemplars]
    lengths = [len(x) for x in tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []
    return sorted(range(len(exemplars)), key=lambda j: (-lengths[j], -j))  # ties: the later exemplar goes first



__all__ = [
    "AutoBatchSize",
    "ContextLengthError",
    "LetterTokenError",
    "Scores",
    "check_batch_size",
    "context_limit",
    "exemplar_drop_order",
    "leading_special_ids",
    "score_items",
]
