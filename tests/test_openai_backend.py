"""The openai backend against local servers on 127.0.0.1: a stub that returns log-probabilities in real
response shapes (letter mode, missing letters, retries, concurrency, errors) and a real ``transformers
serve`` process (generate mode; its lack of logprobs is a clear error in letter mode)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("openai", reason="the openai backend needs the [serve] extra (pip install 'ancientbench[serve]')")

from serving_support import StubServer, TransformersServe, model_scorer  # noqa: E402
from support import FIXTURE_CHARS  # noqa: E402

from ancientbench.backends import (  # noqa: E402
    BackendError,
    GenerateRequest,
    LetterRequest,
    LoglikelihoodRequest,
    Prompt,
    UnsupportedModeError,
    load_backend,
)
from ancientbench.backends.openai import OpenAIConfig, letters_from_top  # noqa: E402

LETTERS = ("A", "B", "C", "D")


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from ancientbench.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny-serve"), "qwen2", corpus=FIXTURE_CHARS, vocab_size=1200, seed=0)


@pytest.fixture(scope="module")
def scorer(tiny_folder):
    return model_scorer(tiny_folder)


def _backend(server, **kw):
    options = kw.pop("options", {})
    return load_backend("openai", OpenAIConfig(model=server.model, base_url=server.base_url, options=options, **kw))


def _prompts(n=6):
    return [Prompt(prefix="以下是關於古文字的單項選擇題。\n", suffix=f"題目：{FIXTURE_CHARS[i]}\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案是：")
            for i in range(n)]


def test_letters_from_top_exact_text_and_missing():
    cands = [("A", -1.0), (" B", -0.5), ("A", -2.0), ("C", -3.0), ("A", -0.9)]
    assert letters_from_top(cands, LETTERS) == [-0.9, None, -3.0, None]
    assert letters_from_top(cands, (" A", " B", " C", " D")) == [None, -0.5, None, None]


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
def test_letter_mode_agrees_with_the_model_in_process(tiny_folder, scorer, chat):
    """With every letter in the server's top list, the letters' log-probabilities are the model's own."""
    with StubServer(str(tiny_folder), scorer) as server:
        backend = _backend(server, options={"top_logprobs": "2000"})  # the whole 1200-token vocabulary
        prompts = [Prompt(p.prefix, p.suffix, chat=chat) for p in _prompts()]
        done = {}
        results = backend.letter_logprobs([LetterRequest(p, LETTERS) for p in prompts],
                                          on_done=lambda idx, res: done.update(zip(idx, res)))
        assert sorted(done) == list(range(len(prompts)))
        for p, r in zip(prompts, results):
            want = dict(scorer(p.text, chat))
            assert r.error is None and r.logprobs == pytest.approx([want[L] for L in LETTERS], abs=1e-6)
        assert backend.stats().get("letters_missing", 0) == 0
        body = server.requests[0]
        assert body["max_tokens"] == 1 and body["temperature"] == 0
        assert ("messages" in body) == chat and (body.get("top_logprobs") if chat else body["logprobs"]) == 2000
        backend.close()


def test_letter_missing_from_top_logprobs_is_none_and_counted(tiny_folder, scorer):
    """A short top list leaves letters out: they are None (never a guessed value) and counted."""
    prompts = _prompts()
    with StubServer(str(tiny_folder), scorer) as server:
        backend = _backend(server, options={"top_logprobs": "3"})
        results = backend.letter_logprobs([LetterRequest(p, LETTERS) for p in prompts])
    expected_missing = 0
    for p, r in zip(prompts, results):
        top = dict(scorer(p.text, False)[:3])
        top.setdefault(*scorer(p.text, False)[0])
        assert r.logprobs == [top.get(L) for L in LETTERS]
        expected_missing += sum(L not in top for L in LETTERS)
    assert expected_missing > 0  # the random model's top 3 does not hold all four letters
    stats = backend.stats()
    assert stats["letters_missing"] == expected_missing
    assert stats["items_missing_letters"] == sum(any(v is None for v in r.logprobs) for r in results)


def test_server_without_logprobs_stops_letter_mode(tiny_folder, scorer):
    with StubServer(str(tiny_folder), scorer, logprobs=False) as server:
        backend = _backend(server)
        with pytest.raises(UnsupportedModeError, match="no log-probabilities.*--mode generate"):
            backend.letter_logprobs([LetterRequest(_prompts(1)[0], LETTERS)])


def test_retries_with_backoff_on_429_and_5xx(tiny_folder, scorer):
    with StubServer(str(tiny_folder), scorer, fail_first=[429, 503, 500]) as server:
        backend = _backend(server, concurrency=1, max_retries=4)
        results = backend.letter_logprobs([LetterRequest(p, LETTERS) for p in _prompts(2)])
        assert all(r.error is None and r.logprobs for r in results)
        stats = backend.stats()
        assert (stats["http_429"], stats["http_503"], stats["http_500"], stats["http_200"]) == (1, 1, 1, 2)
        assert len(server.requests) == 5


def test_retries_exhausted_stop_the_run_but_keep_what_was_done(tiny_folder, scorer):
    """The first request succeeds, then the server keeps failing: the error names the status, and the
    finished result has already been handed over (so the predictions file keeps it)."""
    with StubServer(str(tiny_folder), scorer) as server:
        backend = _backend(server, concurrency=1, max_retries=1)
        done = {}
        original = server.completion

        def completion(body):
            server.fail_first[:] = [503] * 10  # every later request fails
            return original(body)

        server.completion = completion
        with pytest.raises(BackendError, match="failed after 1 retries: HTTP 503: stub error 503$"):
            backend.letter_logprobs([LetterRequest(p, LETTERS) for p in _prompts(3)],
                                    on_done=lambda idx, res: done.update(zip(idx, res)))
        assert list(done) == [0] and done[0].logprobs is not None


def test_invalid_request_is_an_item_error(tiny_folder, scorer):
    with StubServer(str(tiny_folder), scorer, fail_first=[400]) as server:
        backend = _backend(server, concurrency=1)
        results = backend.letter_logprobs([LetterRequest(p, LETTERS) for p in _prompts(2)])
        assert results[0].logprobs is None and results[0].error == "HTTP 400: stub error 400"
        assert results[1].error is None


def test_concurrency_is_bounded_and_used(tiny_folder, scorer):
    reqs = [LetterRequest(p, LETTERS) for p in _prompts(8)]
    with StubServer(str(tiny_folder), scorer) as server:
        seq = _backend(server, concurrency=1).letter_logprobs(reqs)
        assert server.max_in_flight == 1
        # requests wait at the server until four have been in flight at once: only a client that really sends four at
        # once gets past the gate before its minute runs out (no clock decides the outcome, so load cannot flip it)
        server.max_in_flight, server.gather = 0, 4
        par = _backend(server, concurrency=4).letter_logprobs(reqs)
        assert server.max_in_flight == 4
    assert [r.logprobs for r in par] == [r.logprobs for r in seq]  # results in request order


def test_setup_errors_are_clear(tiny_folder, scorer, monkeypatch):
    with StubServer(str(tiny_folder), scorer) as server:
        with pytest.raises(BackendError, match="'nope' is not served.*serves: " + str(tiny_folder)):
            load_backend("openai", OpenAIConfig(model="nope", base_url=server.base_url))
        with pytest.raises(BackendError, match="unknown openai backend option"):
            _backend(server, options={"top_k": "5"})
    with pytest.raises(BackendError, match="cannot reach the server"):
        load_backend("openai", OpenAIConfig(model="m", base_url=server.base_url, max_retries=0, timeout=2))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendError, match=r"no API key: set \$OPENAI_API_KEY"):
        load_backend("openai", OpenAIConfig(model="gpt-x"))


def test_api_key_from_the_named_variable(tiny_folder, scorer, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test-123")
    with StubServer(str(tiny_folder), scorer) as server:
        backend = _backend(server, api_key_env="MY_KEY")
        assert backend.client.api_key == "sk-test-123"
        assert "sk-test" not in str(backend.fingerprint()) + str(backend.info())


def test_generate_puts_reasoning_back_as_a_think_block(tiny_folder):
    with StubServer(str(tiny_folder), generate=lambda text, chat: ("先看部首……", "答案是B")) as server:
        backend = _backend(server)
        [r] = backend.generate([GenerateRequest(Prompt("", "題目", chat=True), max_new_tokens=64)])
        assert r.text == "<think>先看部首……</think>答案是B" and r.finish_reason == "stop"
        assert server.requests[-1]["max_tokens"] == 64 and server.requests[-1]["temperature"] == 0
        backend = _backend(server, options={"max_tokens_param": "max_completion_tokens", "temperature": "none"})
        backend.generate([GenerateRequest(Prompt("", "題目", chat=True), max_new_tokens=32)])
        assert server.requests[-1]["max_completion_tokens"] == 32 and "temperature" not in server.requests[-1]


def test_context_length_and_token_count(tiny_folder, scorer):
    from transformers import AutoTokenizer

    with StubServer(str(tiny_folder), scorer) as server:
        backend = _backend(server, tokenizer=str(tiny_folder))
        assert backend.context_length() == 4096  # the stub's max_model_len, as vLLM lists it
        p = _prompts(1)[0]
        tok = AutoTokenizer.from_pretrained(tiny_folder)
        assert backend.count_tokens([p]) == [len(tok(p.text).input_ids)]
        chat = Prompt(p.prefix, p.suffix, chat=True)
        assert backend.count_tokens([chat])[0] > backend.count_tokens([p])[0]


# ------------------------------------------------------------------------------- transformers serve


@pytest.fixture(scope="module")
def served(tiny_folder, tmp_path_factory):
    with TransformersServe(tiny_folder, tmp_path_factory.mktemp("serve") / "serve.log") as server:
        yield server


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
def test_transformers_serve_generate(served, chat):
    backend = load_backend("openai", OpenAIConfig(model=served.model, base_url=served.base_url, concurrency=2))
    reqs = [GenerateRequest(Prompt(p.prefix, p.suffix, chat=chat), max_new_tokens=4) for p in _prompts(3)]
    first = backend.generate(reqs)
    again = backend.generate(reqs)
    assert all(r.error is None and isinstance(r.text, str) for r in first)
    assert [r.text for r in first] == [r.text for r in again]  # greedy: the same text every time
    assert all(r.n_tokens is not None and r.n_tokens <= 4 for r in first)
    assert backend.stats()["http_200"] == 6


def test_transformers_serve_has_no_logprobs(served):
    backend = load_backend("openai", OpenAIConfig(model=served.model, base_url=served.base_url))
    with pytest.raises(UnsupportedModeError, match="no log-probabilities"):
        backend.letter_logprobs([LetterRequest(_prompts(1)[0], LETTERS)])
    assert math.isfinite(backend.config.timeout)


def _fake_scorer(echo):
    def scorer(text, chat):
        return [("A", -0.1)]

    scorer.echo = echo
    return scorer


def test_ppl_sums_the_option_tokens_after_the_prompt():
    def echo(text):  # one token per character, log-probability -(position)
        return list(text), list(range(len(text))), [None] + [-float(k) for k in range(1, len(text))]

    with StubServer("m", _fake_scorer(echo)) as server:
        backend = _backend(server)
        [r] = backend.loglikelihoods([LoglikelihoodRequest(Prompt("題目：", "答案是："), ("甲", "乙丙", "丁", "戊"))])
        n = len("題目：答案是：")
        assert r.logprobs == [-n, -n - (n + 1), -n, -n] and r.n_tokens == [1, 2, 1, 1]


def test_ppl_refuses_what_it_cannot_split_or_send():
    def merged(text):  # the prompt's last character and the option's first come back as one token
        cut = text.index("：") + 1
        return ([text[:cut - 1], text[cut - 1:cut + 1], text[cut + 1:]], [0, cut - 1, cut + 1], [None, -1.0, -2.0])

    with StubServer("m", _fake_scorer(merged)) as server:
        backend = _backend(server)
        [r] = backend.loglikelihoods([LoglikelihoodRequest(Prompt("", "答案是："), ("甲乙", "丙丁", "戊己", "庚辛"))])
        assert r.logprobs is None and "merges with the prompt" in r.error
        assert backend.stats()["ppl_boundary_merged"] == 1
        with pytest.raises(UnsupportedModeError, match="drop --chat"):
            backend.loglikelihoods([LoglikelihoodRequest(Prompt("", "q", chat=True), ("a", "b", "c", "d"))])
    with StubServer("m", _fake_scorer(merged), logprobs=False) as server:
        with pytest.raises(UnsupportedModeError, match="echoed no prompt log-probabilities"):
            _backend(server).loglikelihoods([LoglikelihoodRequest(Prompt("", "q："), ("a", "b", "c", "d"))])


def test_a_refusing_model_list_is_a_clear_error(tiny_folder, scorer):
    with StubServer(str(tiny_folder), scorer) as server:
        handler = server.server.RequestHandlerClass
        original = handler.do_GET

        def do_get(self):
            self._send(403, {"error": {"message": "forbidden here", "type": "permission"}})

        handler.do_GET = do_get
        try:
            with pytest.raises(BackendError, match="refused the model list: HTTP 403: forbidden here$"):
                _backend(server)
        finally:
            handler.do_GET = original


def test_a_refused_request_is_not_reported_as_retried(tiny_folder, scorer):
    with StubServer(str(tiny_folder), scorer, fail_first=[404]) as server:
        backend = _backend(server, max_retries=3)
        with pytest.raises(BackendError, match=r"refused: HTTP 404: stub error 404 \(is this endpoint served.*--chat\)"):
            backend.letter_logprobs([LetterRequest(_prompts(1)[0], LETTERS)])
        assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_logprobs_are_item_errors_naming_the_server(tiny_folder, value):
    """NaN or an infinity among a server's log-probabilities is an error record, never a prediction."""
    candidates = [("A", value), ("B", -1.0), ("C", -2.0), ("D", -3.0)]
    with StubServer(str(tiny_folder), lambda text, chat: candidates) as server:
        backend = _backend(server)
        results = backend.letter_logprobs([LetterRequest(p, LETTERS) for p in _prompts(2)])
    for r in results:
        assert r.logprobs is None and "no finite number <= 0" in r.error and server.base_url in r.error


def _on_completions(answer):
    """A ``mangle`` hook answering ``answer(payload)`` on the completion endpoints and the model list intact."""
    return lambda path, payload: payload if path.rstrip("/").endswith("/models") else answer(payload)


MALFORMED = {
    "not JSON": (_on_completions(lambda p: (b"oops, not json", "application/json")), "not OpenAI-compatible JSON"),
    "text/plain": (_on_completions(lambda p: (b"hello", "text/plain")), "answered without choices .*got str"),
    "choices: []": (_on_completions(lambda p: {**p, "choices": []}), r"answered without choices .*choices=\[\]"),
    "choices: null": (_on_completions(lambda p: {**p, "choices": None}), "answered without choices .*choices=None"),
    "model list not JSON": (lambda path, p: (b"<html>", "text/html") if path.endswith("/models") else p,
                            "answered a model list that is not OpenAI-compatible"),
    "model list of strings": (lambda path, p: {"object": "list", "data": "m"} if path.endswith("/models") else p,
                              "answered a model list that is not OpenAI-compatible"),
    "model list without ids": (lambda path, p: {"object": "list", "data": [{"name": "m"}]} if path.endswith("/models") else p,
                               "model list with entries without an id"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("mode", ["letter", "generate"])
def test_malformed_server_answers_are_one_clear_error(case, mode):
    """A server answering what is not an OpenAI response stops the run with a BackendError naming it, never a
    traceback from inside the client (JSONDecodeError, IndexError, AttributeError)."""
    mangle, message = MALFORMED[case]
    candidates = [("A", -1.0), ("B", -2.0), ("C", -3.0), ("D", -4.0)]
    with StubServer("m", lambda text, chat: candidates, mangle=mangle) as server:
        with pytest.raises(BackendError, match=message) as err:
            backend = _backend(server, max_retries=0)
            prompt = _prompts(1)[0]
            if mode == "letter":
                backend.letter_logprobs([LetterRequest(prompt, LETTERS)])
            else:
                backend.generate([GenerateRequest(prompt, 4)])
        assert server.base_url in str(err.value)


def test_string_logprobs_are_item_errors():
    candidates = [("A", "x"), ("B", "y"), ("C", -2.0), ("D", -3.0)]
    with StubServer("m", lambda text, chat: candidates) as server:
        results = _backend(server).letter_logprobs([LetterRequest(p, LETTERS) for p in _prompts(2)])
    assert all(r.logprobs is None and "log-probability that is no finite number <= 0 ('x')" in r.error for r in results)
