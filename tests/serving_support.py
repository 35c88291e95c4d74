"""Local OpenAI-compatible servers for the serving tests, all on 127.0.0.1 and offline.

- :class:`TransformersServe`: a real ``transformers serve`` process (``transformers[serving]``) on a free
  port with a local model folder. It serves ``/v1/chat/completions`` and ``/v1/completions`` but ignores
  ``logprobs`` (checked on transformers 5.24), so it covers generate mode and the no-logprobs error.
- :class:`StubServer`: a small HTTP server that answers ``/v1/models``, ``/v1/completions`` and
  ``/v1/chat/completions`` with log-probabilities in the response shapes vLLM and the OpenAI API return
  (``logprobs.top_logprobs`` as a token -> logprob map per position for completions; ``logprobs.content[i]
  .top_logprobs`` as a list of ``{token, logprob, bytes}`` for chat). Its numbers come from a scorer callable;
  :func:`model_scorer` computes them with a tiny ``transformers`` model in this process. It stands in for a
  logprob-returning server because none installs from the registries and runs on CPU here without compiling
  (llama-cpp-python ships only a source distribution on PyPI; see docs/backends.md). It can also answer
  with HTTP errors first (to test retries) and count the requests in flight (to test the concurrency bound).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Sequence

Candidates = list[tuple[str, float]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen | None = None, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"no answer from {url} within {timeout:.0f}s")


class TransformersServe:
    """``transformers serve FOLDER`` on 127.0.0.1:<free port>, CPU, offline; ``base_url`` ends in ``/v1``."""

    def __init__(self, model_folder: str | Path, log_path: Path):
        self.model = str(model_folder)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = Path(log_path)
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "TransformersServe":
        exe = Path(sys.executable).with_name("transformers")
        cmd = [str(exe) if exe.exists() else "transformers", "serve", self.model, "--host", "127.0.0.1",
               "--port", str(self.port), "--device", "cpu", "--dtype", "float32"]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_healthy(f"http://127.0.0.1:{self.port}/health", self.proc)
        except BaseException:
            self.__exit__(None, None, None)
            raise RuntimeError(f"transformers serve did not start; log:\n{self.log_path.read_text(errors='replace')[-3000:]}")
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def model_scorer(folder: str | Path) -> Callable[[str, bool], Candidates]:
    """``scorer(text, chat) -> [(token text, logprob), ...]`` for the next token after ``text`` (rendered as
    one user turn of the chat template when ``chat``), best first, over the whole vocabulary, computed with
    the model in ``folder`` as a server would (its tokenizer adds its own special tokens)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    lock = threading.Lock()

    def scorer(text: str, chat: bool) -> Candidates:
        if chat:
            ids = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                          tokenize=True, return_dict=True)["input_ids"]
        else:
            ids = tok(text).input_ids
        with lock, torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1].float()
        logprobs = logits.log_softmax(-1)
        order = torch.argsort(logprobs, descending=True).tolist()
        return [(tok.decode([i]), float(logprobs[i])) for i in order]

    def echo(text: str) -> tuple[list[str], list[int], list[float | None]]:
        """The prompt's tokens as a server echoes them: texts, character offsets, log-probabilities (the
        first token has none)."""
        enc = tok(text, return_offsets_mapping=True)
        ids = enc.input_ids
        with lock, torch.no_grad():
            logp = model(torch.tensor([ids])).logits[0].float().log_softmax(-1)
        values = [None] + [float(logp[k - 1, ids[k]]) for k in range(1, len(ids))]
        texts = [text[a:b] for a, b in enc.offset_mapping]
        return texts, [a for a, _ in enc.offset_mapping], values

    scorer.echo = echo
    return scorer


class StubServer:
    """An OpenAI-compatible stub on 127.0.0.1 that returns log-probabilities (see module doc).

    ``scorer(text, chat)`` gives the next-token candidates; the server lists the best ``top_logprobs`` (chat)
    or ``logprobs`` (completions) of them, as real servers do. ``generate(text, chat)`` returns ``(reasoning
    or None, content)`` for requests with more than one token. ``fail_first``: HTTP statuses to answer the
    first requests with (e.g. ``[429, 503]``). ``delay``: seconds each completion request takes. ``gather``: completion
    requests wait (up to a minute) until that many have been in flight at once - concurrency shown without a clock.
    ``mangle(path, payload)``: rewrites every 200 answer, returning a payload or ``(bytes, content type)`` -
    a server that answers malformed responses.
    """

    def __init__(self, model: str, scorer: Callable[[str, bool], Candidates] | None = None, *,
                 generate: Callable[[str, bool], tuple[str | None, str]] | None = None,
                 fail_first: Sequence[int] = (), delay: float = 0.0, logprobs: bool = True,
                 mangle: Callable[[str, dict], dict | tuple[bytes, str]] | None = None, gather: int = 0):
        self.model = model
        self.mangle = mangle
        self.scorer = scorer
        self.generate = generate
        self.fail_first = list(fail_first)
        self.delay = delay
        self.logprobs = logprobs
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.gather = gather
        self._changed = threading.Condition(self._lock)  # notified whenever in_flight changes
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "StubServer":
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ----------------------------------------------------------------------------------- responses

    def completion(self, body: dict) -> dict:
        chat = "messages" in body
        text = body["messages"][-1]["content"] if chat else body["prompt"]
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 16
        created = int(time.time())
        if max_tokens > 1 or self.scorer is None:
            reasoning, content = self.generate(text, chat) if self.generate else (None, "")
            usage = {"prompt_tokens": len(text), "completion_tokens": len(content), "total_tokens": len(text) + len(content)}
            if chat:
                message = {"role": "assistant", "content": content, "reasoning_content": reasoning, "tool_calls": []}
                return {"id": "chatcmpl-stub", "object": "chat.completion", "created": created, "model": self.model,
                        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop",
                                     "stop_reason": None}], "usage": usage}
            return {"id": "cmpl-stub", "object": "text_completion", "created": created, "model": self.model,
                    "choices": [{"index": 0, "text": content, "logprobs": None, "finish_reason": "stop",
                                 "stop_reason": None}], "usage": usage}
        if body.get("echo"):
            return self.echo_completion(body, created)
        candidates = self.scorer(text, chat)
        token, logprob = candidates[0]  # greedy: the sampled token is the best one
        usage = {"prompt_tokens": len(text), "completion_tokens": 1, "total_tokens": len(text) + 1}
        if chat:
            k = int(body.get("top_logprobs") or 0) if body.get("logprobs") else 0
            logprobs = None
            if self.logprobs and body.get("logprobs"):
                top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in candidates[:k]]
                logprobs = {"content": [{"token": token, "logprob": logprob, "bytes": list(token.encode()),
                                         "top_logprobs": top}]}
            return {"id": "chatcmpl-stub", "object": "chat.completion", "created": created, "model": self.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": token,
                                                         "reasoning_content": None, "tool_calls": []},
                                 "logprobs": logprobs, "finish_reason": "length", "stop_reason": None}],
                    "usage": usage}
        k = body.get("logprobs")
        logprobs = None
        if self.logprobs and k is not None:
            logprobs = {"text_offset": [len(text)], "token_logprobs": [logprob], "tokens": [token],
                        "top_logprobs": [dict(candidates[:k])]}
        return {"id": "cmpl-stub", "object": "text_completion", "created": created, "model": self.model,
                "choices": [{"index": 0, "text": token, "logprobs": logprobs, "finish_reason": "length",
                             "stop_reason": None, "prompt_logprobs": None}], "usage": usage}

    def echo_completion(self, body: dict, created: int) -> dict:
        """``/v1/completions`` with ``echo``: per prompt, its tokens with log-probabilities, then one generated
        token, as vLLM answers lm-eval's loglikelihood requests."""
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for i, text in enumerate(prompts):
            tokens, offsets, values = self.scorer.echo(text)
            nxt, nxt_lp = self.scorer(text, False)[0]
            tokens, offsets, values = tokens + [nxt], offsets + [len(text)], values + [nxt_lp]
            top = [None] + [{t: v} for t, v in zip(tokens[1:], values[1:])]
            choices.append({"index": i, "text": text + nxt, "finish_reason": "length", "stop_reason": None,
                            "logprobs": {"text_offset": offsets, "token_logprobs": values, "tokens": tokens,
                                         "top_logprobs": top} if self.logprobs else None,
                            "prompt_logprobs": None})
        return {"id": "cmpl-stub", "object": "text_completion", "created": created, "model": self.model,
                "choices": choices, "usage": {"prompt_tokens": 0, "completion_tokens": len(prompts), "total_tokens": 0}}

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                content_type = "application/json"
                if status == 200 and stub.mangle is not None:
                    payload = stub.mangle(self.path, payload)
                if isinstance(payload, tuple):
                    data, content_type = payload
                else:
                    data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/v1/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": stub.model, "object": "model", "created": 0, "owned_by": "stub", "root": stub.model,
                         "max_model_len": 4096}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with stub._lock:
                    stub.requests.append(body)
                    status = stub.fail_first.pop(0) if stub.fail_first else None
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                    stub._changed.notify_all()
                try:
                    reply = self._reply(body, status)
                finally:
                    with stub._lock:
                        stub.in_flight -= 1
                        stub._changed.notify_all()
                # sent once the request has left the count, so a client's next request never overlaps it there
                self._send(*reply)

            def _reply(self, body: dict, status: int | None) -> tuple:
                if status is not None:
                    return status, {"error": {"message": f"stub error {status}", "type": "stub", "code": status}}, {"retry-after-ms": "10"}
                if not self.path.endswith(("/v1/completions", "/v1/chat/completions")):
                    return 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                if body.get("model") != stub.model:
                    return 404, {"error": {"message": f"model {body.get('model')} not found", "type": "not_found"}}
                if stub.delay:
                    time.sleep(stub.delay)
                if stub.gather:
                    with stub._lock:
                        stub._changed.wait_for(lambda: stub.max_in_flight >= stub.gather, timeout=60)
                return 200, stub.completion(body)

        return Handler


class HoldingProxy:
    """A forwarding proxy on 127.0.0.1 in front of an OpenAI-compatible server that answers the first ``answer``
    completion requests and holds every later one: a run behind it stops at a known point, so an interrupt test
    never races the run's end. ``held`` is set once a request is being held. :meth:`release_held` lets the requests
    held now through (later ones are held again); :meth:`open` answers everything from then on."""

    def __init__(self, upstream: str, answer: int):
        import urllib.request

        self.upstream = upstream.rstrip("/")
        self.answer = answer
        self.answered = 0
        self.held = threading.Event()
        self._passed = 0  # requests numbered up to this one go through
        self._gate = threading.Condition()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _forward(self, body: bytes | None):
                if body is not None and self.path.endswith("completions"):
                    with proxy._gate:
                        proxy.answered += 1
                        number = proxy.answered
                        if number > proxy.answer:
                            proxy.held.set()
                            proxy._gate.wait_for(lambda: proxy._passed >= number, timeout=60)
                url = proxy.upstream + self.path.removeprefix("/v1")
                req = urllib.request.Request(url, data=body, method=self.command,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=60) as resp:
                        status, payload = resp.status, resp.read()
                except urllib.error.HTTPError as e:
                    status, payload = e.code, e.read()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client went away (interrupted)
                    pass

            def do_GET(self):
                self._forward(None)

            def do_POST(self):
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def release_held(self) -> None:
        with self._gate:
            self._passed = self.answered
            self._gate.notify_all()

    def open(self) -> None:
        with self._gate:
            self.answer = self._passed = 10**9
            self._gate.notify_all()

    def __enter__(self) -> "HoldingProxy":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.open()
        self.server.shutdown()
        self.server.server_close()
