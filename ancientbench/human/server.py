"""The quiz's HTTP server on 127.0.0.1: the page, the JSON API, and the guards that let only the participant's own
page write (token, Host, Origin, framing), with bounded connections and timeouts."""

from __future__ import annotations

import json
import logging
import secrets
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..errors import DiskFullError
from ..schema import DuplicateKey, no_duplicate_keys
from ..tasks import LETTERS, TASK_BY_NAME
from .session import PAGE, HumanSession

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
MAX_CONNECTIONS = 16  # requests handled at once; more get 503 instead of another thread each
SOCKET_TIMEOUT = 30  # seconds a connection may sit idle mid-request
TOKEN_HEADER = "X-AncientBench-Token"
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class QuizHandler(BaseHTTPRequestHandler):
    server_version = "AncientBenchHuman/1"
    session: HumanSession  # set on the subclass made by make_server
    timeout = SOCKET_TIMEOUT  # socket timeout: a held-open connection cannot pin a thread for ever

    def end_headers(self) -> None:
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        super().end_headers()

    def _allowed_hosts(self) -> set[str]:
        port = self.server.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}

    def _cross_site(self) -> str | None:
        """Why a request cannot be from the quiz page on this server (DNS rebinding, another site), or None."""
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self._allowed_hosts():
            return f"Host {host!r} is not this server (use http://127.0.0.1:{self.server.server_address[1]}/)"
        origin = self.headers.get("Origin")
        if origin is not None and origin.strip().lower() not in {f"http://{h}" for h in self._allowed_hosts()}:
            return f"cross-origin request from {origin!r} refused"
        if (self.headers.get("Sec-Fetch-Site") or "same-origin").lower() not in ("same-origin", "none"):
            return "cross-site request refused"
        return None

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's signature
        pass  # quiet: the answers file is the record

    def _json(self, code: int, payload: dict, headers: dict | None = None) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # every error the base class raises itself (bad request line, bad headers, ...) as JSON too;
        # an unknown method is the client's mistake (405), not "not implemented" (501)
        if code == HTTPStatus.NOT_IMPLEMENTED:
            code, message = 405, f"method {self.command} not allowed"
        if self.request_version == "HTTP/0.9":  # an unparsable request line: answer with a status line all the same
            self.request_version = "HTTP/1.0"
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self.close_connection = True
        self._json(code, {"error": message or phrase})

    def _guard(self, fn) -> None:
        try:
            problem = self._cross_site()
            if problem is not None:
                self.close_connection = True
                self._json(403, {"error": problem})
                return
            if self.path.split("?")[0].startswith("/api/") and not secrets.compare_digest(
                self.headers.get(TOKEN_HEADER) or "", self.session.token
            ):
                self._json(403, {"error": f"missing or wrong {TOKEN_HEADER}: only the quiz page served here may answer"})
                return
            fn()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True  # the client went away or stalled: nothing to answer
        except Exception as e:  # noqa: BLE001 - a server bug must answer JSON and keep serving, not print a traceback to the page
            log.error("human: internal error on %s %s: %s: %s", self.command, self.path, type(e).__name__, e)
            self._json(500, {"error": "internal error"})

    def do_GET(self) -> None:
        self._guard(self._get)

    def do_POST(self) -> None:
        self._guard(self._post)

    def _not_allowed(self) -> None:
        allowed = "POST" if self.path.split("?")[0] == "/api/answer" else "GET"
        self._json(405, {"error": f"method {self.command} not allowed here; use {allowed}"}, {"Allow": allowed})

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def _get(self) -> None:
        path = self.path.split("?")[0]
        s = self.session
        if path in ("/", "/index.html"):
            body = PAGE.replace("__TOKEN__", self.session.token).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)
        elif path == "/api/next":
            with s.lock:
                item = s.next_item()
                if item is None:
                    self._json(200, {"done": True, **s.status()})
                    return
                s.served_at[item["id"]] = time.monotonic()
                task = TASK_BY_NAME[item["task"]]
                self._json(200, {
                    "done": False,
                    "id": item["id"],
                    "task": item["task"],
                    "task_zh": task.display_zh,
                    "task_en": task.display_en,
                    "question": item["question"],
                    "options": {k: item[k] for k in LETTERS},
                    "position": s.index[item["id"]] + 1,
                    **s.status(),
                })
        elif path == "/api/status":
            with s.lock:
                self._json(200, s.status())
        elif path == "/api/answer":
            self._not_allowed()
        else:
            self._json(404, {"error": f"no such page: {path}"})

    def _post(self) -> None:
        path = self.path.split("?")[0]
        if path != "/api/answer":
            if path in ("/", "/index.html", "/api/next", "/api/status"):
                self._not_allowed()
            else:
                self._json(404, {"error": f"no such page: {path}"})
            return
        length = self.headers.get("Content-Length")
        if length is None:
            self.close_connection = True  # whatever follows cannot be framed
            self._json(411, {"error": "Content-Length required"})
            return
        try:
            n = int(length)
            if n < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            self._json(400, {"error": f"bad Content-Length {length!r}"})
            return
        if n > MAX_BODY:
            self.close_connection = True
            self._json(413, {"error": f"body too large ({n} bytes; at most {MAX_BODY})"})
            return
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            self.close_connection = True
            self._json(415, {"error": f"Content-Type must be application/json, got {ctype or 'none'!r}"})
            return
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicate_keys)
        except DuplicateKey as e:  # which of the two values is meant? neither is guessed
            self._json(400, {"error": f"malformed JSON: key {e.key!r} appears twice"})
            return
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            reason = "nested too deeply" if isinstance(e, RecursionError) else str(e)
            self._json(400, {"error": f"malformed JSON: {reason}"})
            return
        if not isinstance(body, dict):
            self._json(400, {"error": "expected a JSON object {\"id\", \"answer\"}"})
            return
        item_id, letter, elapsed = body.get("id"), body.get("answer"), body.get("elapsed_ms")
        if not isinstance(item_id, str) or not item_id:
            self._json(400, {"error": "field 'id' must be a non-empty string"})
            return
        if letter not in LETTERS:
            self._json(400, {"error": f"field 'answer' must be one of A, B, C, D, got {letter!r}"})
            return
        if elapsed is not None and (isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or not 0 <= elapsed < 1e9):
            self._json(400, {"error": "field 'elapsed_ms' must be a non-negative number of milliseconds"})
            return
        s = self.session
        if item_id in s.index and item_id not in s.answers and item_id not in s.served_at:
            # only the question the page was shown can be answered: ids cannot be guessed ahead and answered blind
            self._json(400, {"error": f"question {item_id!r} was not served to the page (GET /api/next first)"})
            return
        try:
            rec = self.session.record(item_id, letter, elapsed)
        except DiskFullError as e:  # nothing was recorded: the page shows the error and the same answer can be sent again
            log.error("error: %s", e)
            self._json(507, {"error": str(e)})
            return
        except KeyError:
            self._json(404, {"error": f"unknown item {item_id!r}: not a question of this session"})
            return
        except ValueError:
            self._json(409, {"error": f"item {item_id!r} was answered already"})
            return
        self._json(200, {"saved": True, "id": rec["id"], "seconds": rec["seconds"], **self.session.status()})


class QuizServer(ThreadingHTTPServer):
    """One thread per request, at most ``MAX_CONNECTIONS`` at once (the rest get 503); client disconnects are quiet."""

    daemon_threads = True

    def __init__(self, address, handler, max_connections: int = MAX_CONNECTIONS):
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):
            body = b'{"error": "server busy, try again"}'
            head = f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            try:
                request.sendall(head.encode("ascii") + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, TimeoutError)):
            return  # a client that went away is not an error of the server
        super().handle_error(request, client_address)


def make_server(session: HumanSession, port: int) -> QuizServer:
    """An HTTP server for the session on 127.0.0.1:port (0 picks a free port; see ``server_address``)."""
    handler = type("BoundQuizHandler", (QuizHandler,), {"session": session})
    return QuizServer(("127.0.0.1", port), handler)
