"""The backend interface: what a model runtime must answer so AncientBench can score it, and the registry.

A backend is the only code that talks to a model (a ``transformers`` model in this process, an
OpenAI-compatible server, vLLM, ...). Everything else - prompt text, few-shot assembly, fitting prompts to
the context, letter extraction, resume, results - lives in :mod:`ancientbench.evaluation`, once for every
backend. A backend answers three kinds of request (as lm-evaluation-harness's ``LM``):

==============================  ===========================================  ==========================
method                          answers                                      used by mode
==============================  ===========================================  ==========================
:meth:`Backend.letter_logprobs`  log P(continuation as the *next token*)      ``letter`` (the paper's)
                                 for each of a few one-token continuations
                                 (the letters ``A``-``D``) after a prompt
:meth:`Backend.loglikelihoods`   log P(continuation | prompt) summed over     ``ppl``
                                 the continuation's tokens, for each option
:meth:`Backend.generate`         greedy text after a prompt, at most          ``generate``
                                 ``max_new_tokens`` tokens
==============================  ===========================================  ==========================

What a backend must implement (subclass :class:`Backend`, then register it, see below):

- ``name`` (class attribute): its registry name; ``modes``: the modes it can answer, a subset of
  :data:`MODES` (the method of a mode it lacks may raise :class:`UnsupportedModeError`).
- ``config_class``: its typed options (:mod:`ancientbench.backends.options`; default :class:`BackendConfig`:
  ``model`` and ``max_length``), from which the command line, the suite keys and the refusal of ignored options
  are derived. ``load(cls, config) -> Backend`` (classmethod): open the model / client from an instance of it.
- ``info() -> dict``: the ``model`` block of a results file. Must hold ``name_or_path``; may hold
  ``revision``, ``weights_sha256``, ``dtype``, ``device``, ``smoke_model``, ``num_parameters``, ...
- ``fingerprint() -> dict``: everything besides the prompts that can change a score (weights hash, dtype,
  tokenizer / chat template hash, server URL and served model, ...). JSON values only. Stored predictions
  are reused on resume only when it is unchanged (the evaluation layer adds mode, shots, templates, data).
- ``context_length() -> int | None`` and ``count_tokens(prompts) -> list[int] | None``: the largest number
  of prompt tokens the model takes, and each prompt's length in tokens, exactly as it will be sent (chat
  template applied when ``prompt.chat``). Either may be ``None`` ("cannot tell"): the evaluation layer then
  sends prompts unfitted and an item the model refuses becomes an error record.
- the methods of its modes: each takes a list of requests and ``on_done(indices, results)``, which it must
  call as results are finished (any order, each index exactly once) so they are saved as they come; it also
  returns all results in request order. A failure of one item that the user can do nothing about in this
  run (e.g. a server rejecting an over-long prompt) may be returned as a result with ``error`` set; it then
  counts as wrong. Errors of the setup (bad key, unreachable server, tokenizer that cannot read a letter)
  are raised as a :class:`~ancientbench.errors.AncientBenchError` subclass.
- optionally ``stats() -> dict``: figures for the results' ``setting`` block (batch size reached, letter
  token ids, requests retried, ...), and ``close()``; and the class attributes ``family`` (the backend whose
  letter/ppl predictions it reproduces: shared output folders and resume fingerprint, as ``tiny-random`` shares
  ``hf``'s) and ``batches_in_process`` (it pads prompts into batches itself, so resume rescores whole blocks).

Prompts: a :class:`Prompt` is plain text split into a ``prefix`` shared by many items (instruction and
exemplars; backends may cache its KV state) and the item's ``suffix``, plus ``chat``: render
``prefix + suffix`` as one user turn of the model's chat template (ending in the generation prompt) - or,
for a server, send it as one user message to the chat endpoint. Backends add the tokenizer's leading
special tokens (BOS) to non-chat prompts; chat templates bring their own.

Registry: :data:`BACKENDS` maps a name to ``"module:Class"`` and is imported lazily, so an optional
backend's missing dependency only matters when it is used; :func:`register_backend` adds one at run time
(e.g. a plugin or a test); :func:`get_backend` returns the class; :func:`load_backend` loads it.
"""

from __future__ import annotations

import importlib
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

from ..errors import AncientBenchError
from ..prompts import letter_prefix
from ..tasks import LETTERS
from .options import BackendConfig, OptionError, make_config, unused_options

log = logging.getLogger(__name__)

MODES = ("letter", "ppl", "generate")
"""``letter``: next-token log-probabilities of A-D after ``答案是：`` (the paper's, default); ``ppl``: the
log-likelihood of each option's text as continuation; ``generate``: the model answers freely and the letter
is extracted from its text."""


class BackendError(AncientBenchError, RuntimeError):
    """A backend cannot be found, loaded or used with the given options."""


class UnsupportedModeError(BackendError, ValueError):
    """The backend cannot answer requests of this mode (e.g. no log-probabilities from a server)."""


# --------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class Prompt:
    """The text before the answer: ``prefix`` (shared by the items of a task) + ``suffix`` (the item's)."""

    prefix: str
    suffix: str
    chat: bool = False  # render as one user turn of the chat template, ending in the generation prompt

    @property
    def text(self) -> str:
        return self.prefix + self.suffix

    @classmethod
    def of(cls, parts, chat: bool = False) -> "Prompt":
        """The prompt of :class:`~ancientbench.prompts.PromptParts` (a Prompt has their ``prefix``, ``suffix`` and
        ``text`` itself, so backends pass it on as it is, never back to parts)."""
        return cls(parts.prefix, parts.suffix, chat)


def letter_continuations(letter_style: str) -> tuple[str, ...]:
    """The letters A-D as written after the prompt in ``letter_style`` (``"A"`` bare, ``" A"`` space): a
    :class:`LetterRequest`'s ``continuations``, which backends score as they are."""
    return tuple(letter_prefix(letter_style) + x for x in LETTERS)


@dataclass(frozen=True)
class LetterRequest:
    """Log-probabilities of each continuation as the single next token after ``prompt``.

    ``continuations`` are the letters as written after the prompt (``"A"`` or ``" A"``, letter style).
    """

    prompt: Prompt
    continuations: tuple[str, ...]
    name: str = ""  # how errors name the request (e.g. "item 'cloze-1'")


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """log P(continuation | prompt), summed over the continuation's tokens, for each continuation."""

    prompt: Prompt
    continuations: tuple[str, ...]
    name: str = ""


@dataclass(frozen=True)
class GenerateRequest:
    """Greedy generation (temperature 0) after ``prompt`` until end of turn or ``max_new_tokens`` tokens."""

    prompt: Prompt
    max_new_tokens: int
    name: str = ""


@dataclass
class LetterResult:
    """One log-probability per continuation; ``None`` where the backend could not see it (e.g. a letter
    missing from a server's top log-probabilities). ``error`` set: no result for this item."""

    logprobs: list[float | None] | None
    error: str | None = None


@dataclass
class LoglikelihoodResult:
    """Per continuation: summed log-likelihood and its number of tokens (``None`` when unknown)."""

    logprobs: list[float] | None
    n_tokens: list[int | None] | None = None
    error: str | None = None


@dataclass
class GenerateResult:
    """The generated text as returned (thinking blocks included); ``finish_reason`` e.g. ``stop``/``length``."""

    text: str | None
    n_tokens: int | None = None
    finish_reason: str | None = None
    error: str | None = None


OnDone = Callable[[list[int], list[Any]], None]
"""``on_done(indices, results)``: results of the requests at ``indices`` (positions in the request list)."""


# ----------------------------------------------------------------------------------------------- backend


class Backend(ABC):
    """A model runtime that answers letter, option-likelihood and/or generation requests (see module doc)."""

    name: ClassVar[str] = ""
    modes: ClassVar[tuple[str, ...]] = ()
    # backends whose letter/ppl predictions equal another backend's name it here (tiny-random: "hf"); they then
    # share its output folders and resume fingerprint. "" = a family of its own
    family: ClassVar[str] = ""
    # pads letter/ppl prompts into batches in this process, so a batch's make-up can change a log-prob's last
    # bits: the evaluation layer then rescores whole blocks on resume, never single items
    batches_in_process: ClassVar[bool] = False
    # the options it is opened with (:mod:`ancientbench.backends.options`): its --help group, suite keys and the
    # refusal of options it would ignore all come from this class
    config_class: ClassVar[type[BackendConfig]] = BackendConfig
    # built-in models it serves: with the default backend, such a model name selects this backend instead
    model_names: ClassVar[tuple[str, ...]] = ()

    @classmethod
    @abstractmethod
    def load(cls, config: BackendConfig) -> "Backend":
        """Open the model or client described by ``config``."""

    def supports(self, mode: str) -> bool:
        return mode in self.modes

    @classmethod
    def results_name(cls, model: str) -> str:
        """The name results of ``model`` are recorded under (``info()["name_or_path"]``), known before loading."""
        return model

    @abstractmethod
    def info(self) -> dict:
        """The ``model`` block of a results file (``name_or_path`` at least)."""

    @abstractmethod
    def fingerprint(self) -> dict:
        """What besides the prompts can change a score; stored predictions are reused only when it is equal."""

    def context_length(self) -> int | None:
        """The most prompt tokens the model takes (``None``: cannot tell)."""
        return None

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int] | None:
        """Each prompt's length in tokens as it will be sent (``None``: cannot count)."""
        return None

    def letter_logprobs(self, requests: Sequence[LetterRequest], on_done: OnDone | None = None) -> list[LetterResult]:
        raise UnsupportedModeError(f"backend {self.name!r} does not support --mode letter")

    def loglikelihoods(self, requests: Sequence[LoglikelihoodRequest],
                       on_done: OnDone | None = None) -> list[LoglikelihoodResult]:
        raise UnsupportedModeError(f"backend {self.name!r} does not support --mode ppl")

    def generate(self, requests: Sequence[GenerateRequest], on_done: OnDone | None = None) -> list[GenerateResult]:
        raise UnsupportedModeError(f"backend {self.name!r} does not support --mode generate")

    def stats(self) -> dict:
        """Figures for the results' ``setting`` block (batch size reached, letter token ids, retries ...)."""
        return {}

    def close(self) -> None:
        """Release the model / client."""


# ---------------------------------------------------------------------------------------------- registry

BACKENDS: dict[str, str] = {
    "hf": "ancientbench.backends.hf:HFBackend",
    "tiny-random": "ancientbench.backends.tiny:TinyRandomBackend",
    "openai": "ancientbench.backends.openai:OpenAIBackend",
    "vllm": "ancientbench.backends.vllm:VLLMBackend",
}
"""name -> ``"module:Class"`` (imported on first use)."""

BACKEND_HELP: dict[str, str] = {
    "hf": "transformers model in this process (Hub id or local folder): letter, ppl, generate",
    "tiny-random": "built-in random-weight smoke model (chance level), the hf backend on a tiny model",
    "openai": "any OpenAI-compatible server (--base-url; key from $OPENAI_API_KEY): letter where the server "
              "returns logprobs, ppl where it echoes prompt logprobs (vLLM, SGLang), generate",
    "vllm": "vLLM in this process (pip install ancientbench[vllm], GPU): letter, ppl, generate",
}

_loaded: dict[str, type[Backend]] = {}


def register_backend(name: str, target: str | type[Backend], help: str = "", *, replace: bool = False) -> None:
    """Register a backend class (or ``"module:Class"``) under ``name``.

    A name already taken by another target is refused unless ``replace=True`` (registering the same target again
    changes nothing); a class that does not implement :class:`Backend` is refused.
    """
    if isinstance(target, str):
        if not all(target.partition(":")[::2]):
            raise BackendError(f"register_backend({name!r}): target {target!r} is not 'module:Class'")
        spec, cls = target, None
    elif isinstance(target, type) and issubclass(target, Backend):
        spec, cls = f"{target.__module__}:{target.__qualname__}", target
    else:
        raise BackendError(f"register_backend({name!r}): {target!r} is not a Backend subclass")
    taken = BACKENDS.get(name)
    if taken is not None and taken != spec and not replace:
        raise BackendError(f"backend name {name!r} is taken by {taken}; pass replace=True to replace it")
    BACKENDS[name] = spec
    if cls is None:
        _loaded.pop(name, None)
    else:
        _loaded[name] = cls
    if help:
        BACKEND_HELP[name] = help


def get_backend(name: str) -> type[Backend]:
    """The backend class registered as ``name``; :class:`BackendError` naming the choices otherwise."""
    if name in _loaded:
        return _loaded[name]
    try:
        target = BACKENDS[name]
    except KeyError:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}") from None
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise BackendError(f"backend {name!r} is not available: {err}") from err
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise BackendError(f"backend {name!r}: {target} is not a Backend subclass")
    _loaded[name] = cls
    return cls


def results_family(name: str) -> str:
    """The backend whose predictions ``name``'s equal (``Backend.family``), ``name`` itself when it has none or
    is not registered here (a results file from a plugin backend)."""
    try:
        cls = get_backend(name)
    except BackendError:
        return name
    return cls.family or cls.name or name


DEFAULT_BACKEND = "hf"
ORIGINAL_BACKEND = "hf"  # what results and sidecars written before there were backends were made with


def non_default_backend(name: str | None) -> str | None:
    """``name`` where a label must show it (its family is not the default backend's), else None."""
    name = name or DEFAULT_BACKEND
    return name if results_family(name) != results_family(DEFAULT_BACKEND) else None


def load_backend(name: str, config: BackendConfig) -> Backend:
    """Load backend ``name`` with ``config`` (an instance of its ``config_class``)."""
    cls = get_backend(name)
    if not isinstance(config, cls.config_class):
        raise OptionError(f"backend {name!r} is opened with a {cls.config_class.__name__}, "
                          f"not a {type(config).__name__}")
    return cls.load(config)


def registered_backends() -> dict[str, type[Backend]]:
    """Every registered backend that can be imported here (name -> class); one whose module fails to import is left
    out (it fails with its own message when chosen)."""
    out = {}
    for name in list(BACKENDS):
        try:
            out[name] = get_backend(name)
        except BackendError as err:
            log.debug("backend %s left out of the option list: %s", name, err)
    return out


def backend_for(name: str, model: object) -> str:
    """The backend that runs ``model`` when ``name`` was asked for: a built-in model (``Backend.model_names``) asked
    for on the default backend is served by its own backend (the smoke model's)."""
    if name != DEFAULT_BACKEND or not isinstance(model, str):
        return name
    return next((n for n, cls in registered_backends().items() if model in cls.model_names), name)


def backend_config(name: str, model: str, values: dict) -> BackendConfig:
    """Backend ``name``'s config for ``model`` from option values (field -> value); an option it does not take, or a
    bad value, is one :class:`OptionError` naming the option and the backend."""
    cls = get_backend(name)
    unused = unused_options(cls.config_class, {k: k for k in values})
    if unused:
        raise OptionError(f"{', '.join(unused)}: not used by backend {name}; it takes: "
                          f"{', '.join(o for o in cls.config_class.model_fields if o != 'model')}")
    return make_config(cls.config_class, name, {"model": model, **values})


__all__ = [
    "BACKENDS", "BACKEND_HELP", "MODES", "Backend", "BackendConfig", "BackendError", "OptionError",
    "backend_config", "backend_for", "letter_continuations", "registered_backends", "GenerateRequest",
    "GenerateResult", "LetterRequest", "LetterResult", "LoglikelihoodRequest", "LoglikelihoodResult", "OnDone",
    "DEFAULT_BACKEND", "ORIGINAL_BACKEND", "Prompt", "UnsupportedModeError", "get_backend", "load_backend", "register_backend",
    "non_default_backend", "results_family",
]
