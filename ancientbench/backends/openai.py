"""The ``openai`` backend: score a model behind any OpenAI-compatible server (vLLM, SGLang, llama.cpp,
``transformers serve``, a hosted API) through the ``openai`` client.

Modes (see :mod:`ancientbench.backends.base`):

- ``letter``: one request per item with ``max_tokens=1`` and ``top_logprobs`` (``/v1/completions`` for plain
  prompts, ``/v1/chat/completions`` for ``--chat``); a letter's log-probability is the one the server lists
  for a token whose text is exactly the letter as written (``"A"``, or ``" A"`` for the space style). A letter
  absent from the top list is *missing* (``None``), never guessed; missing letters are counted in
  :meth:`OpenAIBackend.stats`. A server that returns no log-probabilities at all (``transformers serve``,
  many hosted chat APIs) stops the run with :class:`~ancientbench.backends.base.UnsupportedModeError`:
  use ``--mode generate`` there.
- ``ppl``: one ``/v1/completions`` request per item with the four ``prompt + option`` texts, ``echo=True``,
  ``logprobs=1``, ``max_tokens=1`` (as lm-evaluation-harness's ``local-completions``); an option's
  log-likelihood is the sum of the echoed log-probabilities of the tokens that start at or after the end of
  the prompt (``text_offset``). Servers that echo prompt log-probabilities (vLLM, SGLang) support it; an
  option whose first token merges with the prompt's last character cannot be split, and the item becomes an
  error record (counted as ``ppl_boundary_merged``). Plain prompts only (a chat endpoint echoes nothing).
- ``generate``: greedy (``temperature=0``) completion within ``max_new_tokens``; a reasoning field
  (``reasoning_content`` / ``reasoning``, as vLLM's reasoning parsers return) is put back in front of the
  answer as ``<think>...</think>`` so the extractor sees what the model wrote and strips it.

Requests run on ``concurrency`` threads; each result is handed to ``on_done`` as it arrives so the
evaluation layer appends it to the predictions file at once (on Ctrl-C or an error nothing new is sent and
the requests in flight are awaited and kept, so nothing answered is lost). Counts in :meth:`stats` run from
the moment the backend is loaded (over all settings of one command). Retries with exponential backoff on 408/409/429/5xx and connection errors, honouring
``Retry-After``, are the ``openai`` client's own (``max_retries``, ``timeout``); the responses seen per status
are counted through an ``httpx`` event hook. A request the server rejects as invalid (400/413/422, e.g. a
prompt over its context) becomes an error record for that item; any other failure (bad key, unknown model,
server down after the retries) stops the run with :class:`~ancientbench.backends.base.BackendError` - run
the same command again to resume.

The key is read from the environment variable named by ``api_key_env`` (default ``OPENAI_API_KEY``); a
local server without a key gets the placeholder ``EMPTY``. Backend options (``--backend-option KEY=VALUE``):
``top_logprobs`` (default 20, the OpenAI API's maximum), ``temperature`` (default ``0``; ``none`` omits it,
for APIs that refuse it), ``max_tokens_param`` (``max_tokens`` or ``max_completion_tokens``, which OpenAI's
reasoning models require).
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Sequence

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
    UnsupportedModeError,
)
from .options import ExtraOptions, ServerConfig

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TOP_LOGPROBS = 20  # the OpenAI chat API's maximum; vLLM's default --max-logprobs is 20 too
OPTIONS = ("top_logprobs", "temperature", "max_tokens_param")
INVALID_REQUEST = (400, 413, 422)
RETRIED = (408, 409, 429)  # and 5xx: the statuses the openai client retries with backoff  # the server refuses this item (too long, bad content): the item is wrong


class NoLogprobsError(UnsupportedModeError):
    """The server answered without log-probabilities, so letter mode cannot be scored through it."""


def letters_from_top(candidates: Sequence[tuple[str, float]], continuations: Sequence[str]) -> list[float | None]:
    """Each continuation's log-probability among a server's ``(token text, logprob)`` candidates for the next
    token, ``None`` where no candidate's text is exactly it (a token that decodes to the same text twice
    keeps the higher value: servers list the sampled token beside the top ones)."""
    best: dict[str, float] = {}
    for token, logprob in candidates:
        if token in continuations and (token not in best or logprob > best[token]):
            best[token] = float(logprob)
    return [best.get(c) for c in continuations]


def bad_logprob(values) -> str | None:
    """The first value that is no log-probability, as text: a log-probability is a finite number <= 0 (a JSON
    ``null``, ``true``, a string, NaN, an infinity or ``+5.0`` is none); None when all are fine."""
    for v in values:
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v > 0:
            return repr(v)
    return None


def _completion_candidates(choice) -> list[tuple[str, float]] | None:
    """(token, logprob) pairs at the first generated position of a ``/v1/completions`` choice."""
    lp = getattr(choice, "logprobs", None)
    if lp is None or not (lp.top_logprobs or lp.tokens):
        return None
    out: list[tuple[str, float]] = []
    if lp.top_logprobs and lp.top_logprobs[0]:
        out += list(lp.top_logprobs[0].items())
    if lp.tokens and lp.token_logprobs and lp.token_logprobs[0] is not None:
        out.append((lp.tokens[0], lp.token_logprobs[0]))
    return out


def _chat_candidates(choice) -> list[tuple[str, float]] | None:
    """(token, logprob) pairs at the first generated position of a ``/v1/chat/completions`` choice."""
    lp = getattr(choice, "logprobs", None)
    if lp is None or not lp.content:
        return None
    first = lp.content[0]
    return [(t.token, t.logprob) for t in (first.top_logprobs or [])] + [(first.token, first.logprob)]


def _boolean_logprob(text: str) -> str | None:
    """The first JSON ``true``/``false`` among the log-probabilities of a response body, as text; else None."""
    try:
        body = json.loads(text)
    except ValueError:
        return None
    stack = [c.get("logprobs") for c in body.get("choices") or [] if isinstance(c, dict)] if isinstance(body, dict) else []
    while stack:
        value = stack.pop()
        if isinstance(value, bool):
            return repr(value)
        stack.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
    return None


def load_tokenizer(name: str):
    """``--tokenizer`` (a Hub id or folder), or one line naming it: not found, or files that do not parse (a
    tokenizer.json without ``added_tokens`` is a KeyError inside transformers)."""
    from transformers import AutoTokenizer  # lazy: transformers costs seconds to import; only a model run needs it

    try:
        return AutoTokenizer.from_pretrained(name)
    except Exception as err:  # a local folder's file that does not parse (a user file: one line), else a bug
        if Path(name).is_dir():
            raise BackendError(f"--tokenizer {name!r}: the tokenizer files in this folder could not be read "
                               f"({type(err).__name__}: {err})") from err
        if isinstance(err, (OSError, ValueError)):  # not a folder, and not on the Hub (or offline)
            raise BackendError(f"--tokenizer {name!r}: no such folder, and no tokenizer of that name could be "
                               f"loaded ({err})") from err
        raise


def _status_text(err) -> str:
    """``HTTP <status>: <the server's message>`` of an ``openai.APIStatusError``."""
    body = getattr(err, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return f"HTTP {err.status_code}: {message or err.message}"


def _reasoning(message) -> str | None:
    extra = getattr(message, "model_extra", None) or {}
    for key in ("reasoning_content", "reasoning"):
        value = getattr(message, key, None) or extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class OpenAIConfig(ServerConfig, ExtraOptions):
    """The openai backend's options: the server, its key, concurrency, timeouts, a local tokenizer and the extras
    (``top_logprobs``, ``temperature``, ``max_tokens_param``)."""


class OpenAIBackend(Backend):
    """A model behind an OpenAI-compatible HTTP API (module doc: modes, retries, options)."""

    name = "openai"
    modes = ("letter", "ppl", "generate")
    config_class = OpenAIConfig

    def __init__(self, config: OpenAIConfig, client, served: dict | None, options: dict[str, Any], *,
                 counts: Counter | None = None, lock: threading.Lock | None = None, tokenizer=None):
        self.config = config
        self.client = client
        self.served = served or {}
        self.options = options
        self._tokenizer = tokenizer
        self._lock = lock or threading.Lock()
        self._counts: Counter = counts if counts is not None else Counter()

    # ------------------------------------------------------------------------------------------ loading

    @classmethod
    def load(cls, config: OpenAIConfig) -> "OpenAIBackend":
        try:
            import openai  # lazy: optional extra [serve], imported when the backend is used
        except ImportError as err:
            raise BackendError("the openai backend needs the openai client: pip install 'ancientbench[serve]'") from err
        options = cls._parse_options(config.options)
        key_env = config.api_key_env or DEFAULT_KEY_ENV
        key = os.environ.get(key_env)
        if not key:
            if not config.base_url:
                raise BackendError(f"no API key: set ${key_env} (or name another variable with --api-key-env), "
                                   "or give --base-url of a local server")
            key = "EMPTY"  # local servers (vLLM, llama.cpp, transformers serve) accept any key
        counts: Counter = Counter()
        lock = threading.Lock()

        def count_response(response) -> None:
            if response.request.method != "POST":  # the model list read at load time is no scoring request
                return
            with lock:
                counts[f"http_{response.status_code}"] += 1

        http_client = openai.DefaultHttpxClient(event_hooks={"response": [count_response]})
        client = openai.OpenAI(base_url=config.base_url, api_key=key, timeout=config.timeout,
                               max_retries=config.max_retries, http_client=http_client)
        served = cls._served_model(client, config)
        # the tokenizer is read now, before the stored predictions are checked: a typo must not set a finished run aside
        tokenizer = load_tokenizer(config.tokenizer) if config.tokenizer else None
        return cls(config, client, served, options, counts=counts, lock=lock, tokenizer=tokenizer)

    @staticmethod
    def _parse_options(raw) -> dict[str, Any]:
        unknown = sorted(set(raw) - set(OPTIONS))
        if unknown:
            raise BackendError(f"unknown openai backend option(s) {', '.join(unknown)}; known: {', '.join(OPTIONS)}")
        options: dict[str, Any] = {"top_logprobs": DEFAULT_TOP_LOGPROBS, "temperature": 0.0,
                                   "max_tokens_param": "max_tokens"}
        if "top_logprobs" in raw:
            try:
                options["top_logprobs"] = int(raw["top_logprobs"])
            except ValueError:
                raise BackendError(f"--backend-option top_logprobs must be an integer, got {raw['top_logprobs']!r}") from None
            if options["top_logprobs"] < 1:
                raise BackendError("--backend-option top_logprobs must be at least 1 (the letters must be listed)")
        if "temperature" in raw:
            value = str(raw["temperature"]).lower()
            try:
                options["temperature"] = None if value == "none" else float(value)
            except ValueError:
                raise BackendError(f"--backend-option temperature must be a number or none, got {value!r}") from None
        if "max_tokens_param" in raw:
            if raw["max_tokens_param"] not in ("max_tokens", "max_completion_tokens"):
                raise BackendError("--backend-option max_tokens_param must be max_tokens or max_completion_tokens")
            options["max_tokens_param"] = raw["max_tokens_param"]
        return options

    @staticmethod
    def _served_model(client, config: OpenAIConfig) -> dict | None:
        """The server's ``/v1/models`` entry for the model; a clear error when the server is unreachable, the
        key is refused or the model is not served. ``None`` when the server has no model list."""
        import openai  # lazy: optional extra [serve], imported when the backend is used

        where = config.base_url or "the OpenAI API"
        try:
            models = list(client.models.list())
            ids = [m.id for m in models]
        except (ValueError, TypeError, AttributeError) as err:  # not JSON, or not a list of models with ids
            raise BackendError(f"the server at {where} answered a model list that is not OpenAI-compatible "
                               f"({type(err).__name__}: {err})") from err
        except openai.APIConnectionError as err:
            raise BackendError(f"cannot reach the server at {where}: {err}") from err
        except openai.AuthenticationError as err:
            raise BackendError(f"the server at {where} refused the API key: {err}") from err
        except (openai.NotFoundError, openai.UnprocessableEntityError):
            return None  # no /v1/models on this server: the first request will tell
        except openai.APIStatusError as err:
            raise BackendError(f"the server at {where} refused the model list: {_status_text(err)}") from err
        if not all(isinstance(i, str) for i in ids):
            raise BackendError(f"the server at {where} answered a model list with entries without an id: {ids[:5]!r}")
        for m in models:
            if m.id == config.model:
                return m.model_dump()
        if ids:
            raise BackendError(f"model {config.model!r} is not served at {where}; it serves: {', '.join(ids[:20])}")
        return None

    # --------------------------------------------------------------------------------------------- info

    def info(self) -> dict:
        info = {"name_or_path": self.config.model, "backend": self.name, "base_url": self.config.base_url}
        for key in ("root", "owned_by", "max_model_len"):
            if self.served.get(key) is not None:
                info[f"served_{key}"] = self.served[key]
        return info

    def fingerprint(self) -> dict:
        return {
            "backend": self.name, "base_url": self.config.base_url, "model": self.config.model,
            "served_root": self.served.get("root"), "top_logprobs": self.options["top_logprobs"],
            "temperature": self.options["temperature"], "max_tokens_param": self.options["max_tokens_param"],
            "tokenizer": self.config.tokenizer,
        }

    def context_length(self) -> int | None:
        if self.config.max_length:
            return self.config.max_length
        value = self.served.get("max_model_len")  # vLLM lists it in /v1/models
        return int(value) if isinstance(value, int) else None

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int] | None:
        """Counted with ``config.tokenizer`` (a local copy of the served model's tokenizer) when given."""
        if not self.config.tokenizer:
            return None
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.config.tokenizer)
        tok = self._tokenizer
        out = []
        for p in prompts:
            if p.chat:
                ids = tok.apply_chat_template([{"role": "user", "content": p.text}], add_generation_prompt=True,
                                              tokenize=True)
                out.append(len(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids))
            else:
                out.append(len(tok(p.text).input_ids))
        return out

    def stats(self) -> dict:
        with self._lock:
            counts = dict(sorted(self._counts.items()))
        return {"concurrency": self.config.concurrency, "max_retries": self.config.max_retries,
                "timeout_s": self.config.timeout, **counts}

    def close(self) -> None:
        self.client.close()

    # --------------------------------------------------------------------------------------- requests

    def _sampling(self, max_new_tokens: int) -> dict:
        kwargs: dict[str, Any] = {self.options["max_tokens_param"]: max_new_tokens}
        if self.options["temperature"] is not None:
            kwargs["temperature"] = self.options["temperature"]
        return kwargs

    def _call(self, fn: Callable[[], Any]):
        """One API call (``fn`` makes it ``with_raw_response``); ``(response, None)``, or ``(None, error text)``
        when the server refuses the item or answers a log-probability ``true``/``false`` (the client would read
        it as 1.0/0.0, so the raw body is checked)."""
        import openai  # lazy: optional extra [serve], imported when the backend is used

        where = self.config.base_url or "the OpenAI API"
        try:
            raw = fn()
            resp = raw.parse()
        except (ValueError, TypeError, AttributeError) as err:  # the client could not parse the body
            raise BackendError(f"the server at {where} answered a response that is not OpenAI-compatible JSON "
                               f"({type(err).__name__}: {err})") from err
        except openai.APIStatusError as err:
            if err.status_code in INVALID_REQUEST:
                return None, _status_text(err)
            if err.status_code in RETRIED or err.status_code >= 500:
                raise BackendError(f"request to {where} failed after {self.config.max_retries} retries: "
                                   f"{_status_text(err)}") from err
            hint = (" (is this endpoint served for this model? a chat-only model needs --chat)"
                    if err.status_code == 404 else "")
            raise BackendError(f"request to {where} refused: {_status_text(err)}{hint}") from err
        except openai.APIConnectionError as err:  # includes timeouts
            raise BackendError(f"request to {where} failed after {self.config.max_retries} retries: {err}") from err
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise BackendError(f"the server at {where} answered without choices (got {type(resp).__name__} with "
                               f"choices={choices!r:.60}); it is not an OpenAI-compatible completion")
        flag = _boolean_logprob(raw.text)
        if flag is not None:
            return None, f"the server at {where} returned a log-probability that is no finite number <= 0 ({flag})"
        return resp, None

    def _one_letter(self, req: LetterRequest) -> LetterResult:
        k = self.options["top_logprobs"]
        if req.prompt.chat:
            resp, error = self._call(lambda: self.client.chat.completions.with_raw_response.create(
                model=self.config.model, messages=[{"role": "user", "content": req.prompt.text}],
                logprobs=True, top_logprobs=k, **self._sampling(1)))
            candidates = None if resp is None else _chat_candidates(resp.choices[0])
        else:
            resp, error = self._call(lambda: self.client.completions.with_raw_response.create(
                model=self.config.model, prompt=req.prompt.text, logprobs=k, **self._sampling(1)))
            candidates = None if resp is None else _completion_candidates(resp.choices[0])
        if error is not None:
            return LetterResult(None, error=error)
        if candidates is None:
            raise NoLogprobsError(
                f"the server at {self.config.base_url or 'the OpenAI API'} returned no log-probabilities for "
                f"{self.config.model!r}, so --mode letter cannot be scored through it; use --mode generate")
        bad = bad_logprob(lp for _, lp in candidates)
        if bad is not None:  # never a score: NaN would make every prediction "A"
            return LetterResult(None, error=f"the server at {self.config.base_url or 'the OpenAI API'} returned a "
                                            f"log-probability that is no finite number <= 0 ({bad}) for {self.config.model!r}")
        logprobs = letters_from_top(candidates, req.continuations)
        missing = sum(v is None for v in logprobs)
        with self._lock:
            self._counts["letters_missing"] += missing
            self._counts["items_missing_letters"] += missing > 0
            self._counts["items_without_letters"] += missing == len(logprobs)
        return LetterResult(logprobs)

    def _one_loglikelihood(self, req: LoglikelihoodRequest) -> LoglikelihoodResult:
        if req.prompt.chat:
            raise UnsupportedModeError("--mode ppl over an API needs plain prompts (/v1/completions echoes the "
                                       "prompt's log-probabilities; a chat endpoint does not): drop --chat")
        context = req.prompt.text
        texts = [context + c for c in req.continuations]
        resp, error = self._call(lambda: self.client.completions.with_raw_response.create(
            model=self.config.model, prompt=texts, echo=True, logprobs=1, **self._sampling(1)))
        if error is not None:
            return LoglikelihoodResult(None, error=error)
        choices = sorted(resp.choices, key=lambda c: c.index)
        if len(choices) != len(texts):
            raise BackendError(f"the server answered {len(choices)} choices for {len(texts)} prompts")
        sums: list[float] = []
        counts: list[int | None] = []
        for choice, text in zip(choices, texts):
            lp = choice.logprobs
            if lp is None or not lp.text_offset or not lp.token_logprobs:
                raise NoLogprobsError(
                    f"the server at {self.config.base_url or 'the OpenAI API'} echoed no prompt log-probabilities "
                    f"for {self.config.model!r}, so --mode ppl cannot be scored through it; use --mode generate")
            total, n = 0.0, 0
            for tok, off, value in zip(lp.tokens, lp.text_offset, lp.token_logprobs):
                if off >= len(text):  # the generated token (max_tokens=1), not part of the option
                    break
                if off < len(context) < off + len(tok):
                    with self._lock:
                        self._counts["ppl_boundary_merged"] += 1
                    return LoglikelihoodResult(None, error=f"the option text merges with the prompt's last "
                                                           f"token {tok!r}; its log-likelihood cannot be split off")
                if off >= len(context):
                    if value is None:
                        raise BackendError("the server echoed a token without a log-probability inside an option")
                    if bad_logprob([value]) is not None:
                        return LoglikelihoodResult(None, error=f"the server at {self.config.base_url or 'the OpenAI API'} "
                                                               f"returned a log-probability that is no finite number "
                                                               f"<= 0 ({bad_logprob([value])}) inside an option")
                    total += float(value)
                    n += 1
            if n == 0:
                return LoglikelihoodResult(None, error="an option has no tokens of its own in the server's echo")
            sums.append(total)
            counts.append(n)
        return LoglikelihoodResult(sums, n_tokens=counts)

    def _one_generate(self, req: GenerateRequest) -> GenerateResult:
        if req.prompt.chat:
            resp, error = self._call(lambda: self.client.chat.completions.with_raw_response.create(
                model=self.config.model, messages=[{"role": "user", "content": req.prompt.text}],
                **self._sampling(req.max_new_tokens)))
        else:
            resp, error = self._call(lambda: self.client.completions.with_raw_response.create(
                model=self.config.model, prompt=req.prompt.text, **self._sampling(req.max_new_tokens)))
        if error is not None:
            return GenerateResult(None, error=error)
        choice = resp.choices[0]
        if req.prompt.chat:
            text = choice.message.content or ""
            thinking = _reasoning(choice.message)
            if thinking:
                text = f"<think>{thinking}</think>{text}"
        else:
            text = choice.text or ""
        n_tokens = resp.usage.completion_tokens if resp.usage is not None else None
        return GenerateResult(text, n_tokens=n_tokens, finish_reason=choice.finish_reason)

    def _run(self, fn: Callable[[Any], Any], requests: Sequence[Any], on_done: OnDone | None) -> list:
        """``fn`` over ``requests`` on ``concurrency`` threads, each result handed to ``on_done`` as it comes.

        On an error or Ctrl-C nothing new is started, the requests in flight are awaited (each is bounded by
        the timeout) and their results still handed over, then the error is raised: what was paid for is kept.
        """
        results: list[Any] = [None] * len(requests)
        if not requests:
            return results
        pool = ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(requests)),
                                  thread_name_prefix="ancientbench-openai")
        futures = {pool.submit(fn, req): i for i, req in enumerate(requests)}
        pending = set(futures)
        failure: BaseException | None = None

        def deliver(done) -> BaseException | None:
            first_error = None
            for fut in done:
                if fut.cancelled():
                    continue
                err = fut.exception()
                if err is not None:
                    first_error = first_error or err
                    continue
                i = futures[fut]
                results[i] = fut.result()
                if on_done is not None:
                    on_done([i], [results[i]])
            return first_error

        try:
            while pending and failure is None:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                failure = deliver(done)
        except BaseException as err:  # Ctrl-C included
            failure = err
        if failure is not None:
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=True)
            deliver([f for f in pending if f.done()])
            raise failure
        pool.shutdown(wait=True)
        return results

    def letter_logprobs(self, requests: Sequence[LetterRequest], on_done: OnDone | None = None) -> list[LetterResult]:
        return self._run(self._one_letter, requests, on_done)

    def loglikelihoods(self, requests: Sequence[LoglikelihoodRequest],
                       on_done: OnDone | None = None) -> list[LoglikelihoodResult]:
        return self._run(self._one_loglikelihood, requests, on_done)

    def generate(self, requests: Sequence[GenerateRequest], on_done: OnDone | None = None) -> list[GenerateResult]:
        return self._run(self._one_generate, requests, on_done)
