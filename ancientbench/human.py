"""``ancientbench human``: a local quiz page that measures a human baseline, answer by answer.

``ancientbench human --port P [--n-per-task N] [--out DIR] [--seed S] [--data DIR_OR_JSONL]`` samples N
test questions per task (seeded, ``random.Random(seed)``, tasks in registry order), serves them on
http://127.0.0.1:P/ (bound to the loopback interface only; standard-library ``http.server``), and records
every answer the moment it is given: one JSON line appended to ``<out>/Human/answers.jsonl``, flushed
and fsync'd before the page is told it was saved. Stopping the server (Ctrl-C, a crash, a kill) loses
nothing; running the same command again resumes at the first unanswered question (the sample is kept
in ``<out>/Human/session.json``). After each answer the results are rewritten, in the same format as a
model's (``<out>/Human/results_0shot.json`` with ``predictions_0shot.jsonl``, model ``"Human"``, no
log-probs), so ``ancientbench report <out>`` shows a "Human" row.

The time of an answer is measured by the page from showing the question to the click (``seconds``);
if the page does not send it, the server's time between serving and receiving the question is used.

API (JSON): ``GET /api/next`` (the next unanswered question, or ``{"done": true}``), ``GET /api/status``,
``POST /api/answer`` with ``{"id", "answer": "A".."D", "elapsed_ms"?}`` as ``application/json``. Only the
participant's own page may call it: every ``/api/`` request carries the random per-start token the page holds
(header ``X-AncientBench-Token``), the ``Host`` must be this server's loopback address (DNS rebinding), a
foreign ``Origin`` or cross-site ``Sec-Fetch-Site`` is refused, and no page may frame it (``X-Frame-Options``,
CSP ``frame-ancestors``). A bad request gets a 4xx answer with ``{"error": ...}``: not from the page 403,
unknown path 404, wrong method 405, malformed JSON / bad field / bad letter 400, unknown item 404, an item
answered already 409, missing length 411, body too large 413, not JSON 415; more than ``MAX_CONNECTIONS``
requests at once get 503, and a connection idle for ``SOCKET_TIMEOUT`` seconds is closed. The default sample
seed is random (stored in the session), so item ids cannot be guessed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import secrets
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .aggregate import aggregate
from .errors import AncientBenchError
from .fileio import atomic_write
from .schema import DataError, load_question_file, read_jsonl, reject_duplicate_ids, split_file, validate_rows
from .tasks import LETTERS, TASK_BY_NAME, TASK_NAMES

HUMAN_NAME = "Human"
SESSION_VERSION = 1
DEFAULT_N_PER_TASK = 10
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


class SessionError(AncientBenchError, ValueError):
    """A session that cannot start or resume; the message says what and where."""


def _read_session(path: Path) -> dict:
    """``session.json``, checked field by field (pydantic, strict): a corrupt or hand-edited file is one line."""
    from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt, ValidationError

    class Stored(BaseModel):
        model_config = ConfigDict(strict=True, extra="allow")
        version: int
        created: str
        data: str
        data_sha256: str
        n_per_task: PositiveInt
        seed: NonNegativeInt
        items: list[str]

    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        Stored.model_validate(stored)
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError) as err:
        detail = str(err).splitlines()[0] if not isinstance(err, ValidationError) else "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'top level'}: {e['msg']}" for e in err.errors()[:3])
        raise SessionError(f"{path}: not a valid quiz session ({detail}); move it away to start a new session "
                           f"there, or use another --out") from None
    return stored


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def load_test_items(data: str | Path) -> tuple[dict[str, list[dict]], str]:
    """Test items by task from a dataset folder (``data/<task>/test.jsonl``) or a JSONL question file,
    and a sha256 over the files read."""
    data = Path(data)
    h = hashlib.sha256()
    if data.is_file():
        grouped = load_question_file(data)
        h.update(data.read_bytes())
    elif data.is_dir():
        grouped = {}
        for t in TASK_NAMES:
            path = split_file(data, t, "test")
            if path.is_file():
                grouped[t] = validate_rows(read_jsonl(path), path, task=t)
                h.update(f"{t}/test.jsonl\n".encode())
                h.update(path.read_bytes())
        reject_duplicate_ids((split_file(data, t, "test"), rows) for t, rows in grouped.items())
    else:
        raise SessionError(f"{data}: no such dataset folder or question file")
    if not grouped:
        raise SessionError(f"{data}: no test questions found (expected data/<task>/test.jsonl files or a JSONL question file)")
    return grouped, h.hexdigest()


def sample_plan(grouped: dict[str, list[dict]], n_per_task: int, seed: int) -> list[str]:
    """Item ids to ask: up to n per task, drawn with random.Random(seed), tasks in registry order."""
    rng = random.Random(seed)
    plan: list[str] = []
    for t in TASK_NAMES:
        items = grouped.get(t, [])
        if items:
            plan += [it["id"] for it in rng.sample(items, min(n_per_task, len(items)))]
    return plan


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open folders; the file itself was fsync'd
        return
    try:
        os.fsync(fd)
    except OSError:  # fsync on a folder is not supported everywhere (e.g. some network filesystems)
        pass
    finally:
        os.close(fd)




class HumanSession:
    """The sampled questions, the answers given so far (on disk), and the results written from them."""

    def __init__(self, out: str | Path, data: str | Path | None = None, n_per_task: int | None = None, seed: int | None = None):
        from . import DATASET_PATH

        self.folder = Path(out) / HUMAN_NAME
        self.session_file = self.folder / "session.json"
        self.answers_file = self.folder / "answers.jsonl"
        self.results_file = self.folder / "results_0shot.json"
        self.predictions_file = self.folder / "predictions_0shot.jsonl"
        self.lock = threading.Lock()
        self.served_at: dict[str, float] = {}
        self.token = secrets.token_urlsafe(24)  # per server start; the page carries it, other sites cannot read it
        self.resumed = self.session_file.is_file()
        if self.resumed:
            stored = _read_session(self.session_file)
            given_data = None if data is None else str(Path(data).resolve())
            for name, given in (("data", given_data), ("n_per_task", n_per_task), ("seed", seed)):
                if given is not None and str(given) != str(stored[name]):
                    raise SessionError(
                        f"{self.session_file}: this session was started with {name}={stored[name]!r}, not {given!r}; "
                        "run without that option (or with the same value) to resume, or use another --out for a new session"
                    )
            self.data_path, self.n_per_task, self.seed = stored["data"], stored["n_per_task"], stored["seed"]
            grouped, self.data_sha256 = load_test_items(self.data_path)
            if self.data_sha256 != stored["data_sha256"]:
                print(f"warning: {self.data_path} changed since this session started; the sampled questions are kept", file=sys.stderr)
            self.plan = list(stored["items"])
            self.created = stored["created"]
        else:
            self.data_path = str(Path(data if data is not None else DATASET_PATH).resolve())
            self.n_per_task = DEFAULT_N_PER_TASK if n_per_task is None else n_per_task
            self.seed = secrets.randbelow(2**31) if seed is None else seed  # unpredictable sample unless asked
            if self.n_per_task < 1:
                raise SessionError(f"--n-per-task must be at least 1, got {self.n_per_task}")
            grouped, self.data_sha256 = load_test_items(self.data_path)
            self.plan = sample_plan(grouped, self.n_per_task, self.seed)
            self.created = _now()
        self.items = {it["id"]: it for rows in grouped.values() for it in rows}
        missing = [i for i in self.plan if i not in self.items]
        if missing:
            raise SessionError(f"{self.session_file}: {len(missing)} sampled questions are no longer in {self.data_path} (e.g. {missing[0]!r})")
        self.index = {item_id: k for k, item_id in enumerate(self.plan)}
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.resumed:
            atomic_write(
                self.session_file,
                json.dumps(
                    {"version": SESSION_VERSION, "created": self.created, "data": self.data_path, "data_sha256": self.data_sha256,
                     "n_per_task": self.n_per_task, "seed": self.seed, "items": self.plan},
                    ensure_ascii=False, indent=1,
                ),
            )
            _fsync_dir(self.folder)
        self.answers: dict[str, dict] = self._read_answers()
        if self.answers:
            self.write_results()

    # -- answers on disk ---------------------------------------------------------------------------

    def _read_answers(self) -> dict[str, dict]:
        answers: dict[str, dict] = {}
        if not self.answers_file.is_file():
            return answers
        raw = self.answers_file.read_bytes()
        good_end = 0
        lines = raw.split(b"\n")
        for n, line in enumerate(lines, start=1):
            last = n == len(lines)
            if not line.strip():
                if not last:
                    good_end += len(line) + 1
                continue
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if last:  # a line cut short by a crash during the write: it was never acknowledged, drop it
                    print(f"warning: {self.answers_file}: dropping an incomplete last line (never confirmed to the page)", file=sys.stderr)
                    with self.answers_file.open("r+b") as fh:
                        fh.truncate(good_end)
                        fh.flush()
                        os.fsync(fh.fileno())
                    break
                raise SessionError(f"{self.answers_file}, line {n}: not valid JSON") from None
            if last:  # valid JSON without its newline: keep it, and finish the line
                with self.answers_file.open("ab") as fh:
                    fh.write(b"\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            if not isinstance(rec, dict) or rec.get("id") not in self.index or rec.get("pred") not in LETTERS:
                raise SessionError(f"{self.answers_file}, line {n}: not an answer to a question of this session")
            if rec["id"] in answers:
                raise SessionError(f"{self.answers_file}, line {n}: question {rec['id']!r} answered twice")
            answers[rec["id"]] = rec
            good_end += len(line) + 1
        return answers

    def next_item(self) -> dict | None:
        for item_id in self.plan:
            if item_id not in self.answers:
                return self.items[item_id]
        return None

    def record(self, item_id: str, letter: str, elapsed_ms: float | None) -> dict:
        """Append the answer to answers.jsonl (flush + fsync), then rewrite the results. Raises KeyError for
        an unknown item and ValueError for one answered already."""
        with self.lock:
            if item_id not in self.index:
                raise KeyError(item_id)
            if item_id in self.answers:
                raise ValueError(item_id)
            item = self.items[item_id]
            if elapsed_ms is not None:
                seconds, source = elapsed_ms / 1000.0, "page"
            elif item_id in self.served_at:
                seconds, source = time.monotonic() - self.served_at[item_id], "server"
            else:
                seconds, source = None, None
            rec = {
                "id": item_id,
                "task": item["task"],
                "gold": item["answer"],
                "pred": letter,
                "correct": letter == item["answer"],
                "seconds": None if seconds is None else round(seconds, 3),
                "seconds_source": source,
                "answered_at": _now(),
                "position": self.index[item_id] + 1,
            }
            with self.answers_file.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            self.answers[item_id] = rec
            self.write_results()
            return rec

    # -- results in the models' format -------------------------------------------------------------

    def write_results(self) -> None:
        from . import __version__

        answered = [self.answers[i] for i in self.plan if i in self.answers]
        preds = [
            {"id": a["id"], "task": a["task"], "gold": a["gold"], "pred": a["pred"], "logprobs": None, "shots_used": 0, "seconds": a["seconds"]}
            for a in answered
        ]
        agg = aggregate([p["pred"] == p["gold"] for p in preds], [p["task"] for p in preds])
        times = sorted(a["seconds"] for a in answered if a["seconds"] is not None)
        results = {
            "ancientbench_version": __version__,
            "created": _now(),
            "model": {"name_or_path": HUMAN_NAME, "revision": None, "weights_sha256": None, "num_parameters": None, "dtype": None, "device": "human", "smoke_model": False},
            "setting": {"shots": 0, "letter_style": None, "letter_token_ids": None, "chat": False, "batch_size": None, "prefix_cache": False},
            "prompt": {"template_version": "human-quiz-1", "template_sha256": hashlib.sha256(PAGE.encode("utf-8")).hexdigest()},
            "data": {"path": self.data_path, "files_sha256": self.data_sha256, "n_items": len(self.plan)},
            "tasks": {t: {**v, "fewshot_truncated_items": 0} for t, v in agg["tasks"].items()},
            "competencies": agg["competencies"],
            "average": agg["average"],
            "micro_accuracy": agg["micro_accuracy"],
            "complete": agg["complete"],
            "packages": {"ancientbench": __version__},
            "timing": {
                "started": self.created,
                "answers_seconds_total": round(sum(times), 3) if times else None,
                "answers_seconds_median": times[len(times) // 2] if times else None,
            },
            "predictions_file": self.predictions_file.name,
            "human": {"seed": self.seed, "n_per_task": self.n_per_task, "planned": len(self.plan), "answered": len(answered), "finished": len(answered) == len(self.plan)},
        }
        atomic_write(self.predictions_file, "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds))
        atomic_write(self.results_file, json.dumps(results, ensure_ascii=False, indent=1) + "\n")

    def status(self) -> dict:
        return {"answered": len(self.answers), "planned": len(self.plan), "finished": len(self.answers) == len(self.plan),
                "results_file": str(self.results_file) if self.answers else None}


# ------------------------------------------------------------------------------------------------------
# HTTP


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
            print(f"human: internal error on {self.command} {self.path}: {type(e).__name__}: {e}", file=sys.stderr)
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
            body = json.loads(raw.decode("utf-8"))
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
        try:
            rec = self.session.record(item_id, letter, elapsed)
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


PAGE = """<!doctype html>
<html lang="zh-Hant">
<head>
<meta charset="utf-8">
<title>AncientBench human baseline</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body { font-family: "Noto Serif CJK TC", "Noto Sans CJK TC", "WenQuanYi Micro Hei", serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.6; color: #222; }
 header { display: flex; justify-content: space-between; align-items: baseline; color: #555; }
 #task { font-weight: bold; }
 #question { font-size: 1.35rem; white-space: pre-wrap; margin: 1.2rem 0; }
 .opt { display: block; width: 100%; text-align: left; font-family: inherit; font-size: 1.15rem; margin: .5rem 0; padding: .6rem .9rem; border: 1px solid #999; border-radius: .4rem; background: #fafafa; cursor: pointer; }
 .opt:hover:enabled { background: #eef4ff; }
 .opt:disabled { opacity: .6; cursor: default; }
 #msg { min-height: 1.5rem; color: #a00; }
 #done { display: none; font-size: 1.2rem; }
 .hint { color: #777; font-size: .9rem; }
</style>
</head>
<body>
<header><span id="task"></span><span id="progress"></span></header>
<main id="quiz" data-item-id="">
 <p class="hint" id="instruction"></p>
 <div id="question"></div>
 <button class="opt" id="opt-A" data-letter="A"></button>
 <button class="opt" id="opt-B" data-letter="B"></button>
 <button class="opt" id="opt-C" data-letter="C"></button>
 <button class="opt" id="opt-D" data-letter="D"></button>
 <p class="hint">每答一題即存檔；中斷後重新執行同一命令即可接續。Each answer is saved at once; rerun the same command to resume. Keys A-D or 1-4 also answer.</p>
</main>
<p id="done"></p>
<p id="msg"></p>
<script>
"use strict";
const TOKEN = "__TOKEN__";
const api = (path, opts = {}) => fetch(path, {cache: "no-store", ...opts, headers: {...(opts.headers || {}), "X-AncientBench-Token": TOKEN}});
let current = null, shownAt = 0, busy = false;
const $ = (id) => document.getElementById(id);
function setBusy(b) { busy = b; for (const L of "ABCD") $("opt-" + L).disabled = b; }
async function next() {
  setBusy(true);
  const r = await api("/api/next");
  const q = await r.json();
  if (!r.ok) { $("msg").textContent = q.error || ("error " + r.status); return; }
  if (q.done) {
    current = null;
    $("quiz").style.display = "none";
    $("task").textContent = "";
    $("progress").textContent = q.answered + " / " + q.planned;
    $("done").style.display = "block";
    $("done").textContent = "完成，謝謝！ Done, thank you. Results: " + q.results_file;
    return;
  }
  current = q;
  $("quiz").dataset.itemId = q.id;
  $("task").textContent = q.task_zh + " · " + q.task_en;
  $("progress").textContent = "第 " + q.position + " 題，共 " + q.planned + " 題 (" + q.position + " / " + q.planned + ")";
  $("instruction").textContent = "以下是關於" + q.task_zh + "的單項選擇題，請選出正確答案。 Choose the correct answer.";
  $("question").textContent = q.question;
  for (const L of "ABCD") $("opt-" + L).textContent = L + ". " + q.options[L];
  $("msg").textContent = "";
  shownAt = performance.now();
  setBusy(false);
}
async function answer(letter) {
  if (busy || !current) return;
  setBusy(true);
  const body = JSON.stringify({id: current.id, answer: letter, elapsed_ms: Math.round(performance.now() - shownAt)});
  try {
    const r = await api("/api/answer", {method: "POST", headers: {"Content-Type": "application/json"}, body});
    const res = await r.json();
    if (!r.ok && r.status !== 409) { $("msg").textContent = res.error || ("error " + r.status); setBusy(false); return; }
  } catch (e) { $("msg").textContent = "未能存檔，請重試 Not saved, try again: " + e; setBusy(false); return; }
  await next();
}
for (const L of "ABCD") $("opt-" + L).addEventListener("click", () => answer(L));
document.addEventListener("keydown", (e) => {
  const k = e.key.toUpperCase(); const i = "1234".indexOf(k);
  if ("ABCD".includes(k) && k.length === 1) answer(k); else if (i >= 0) answer("ABCD"[i]);
});
next().catch((e) => { $("msg").textContent = "伺服器無回應 Server not reachable: " + e; });
</script>
</body>
</html>
"""


# ------------------------------------------------------------------------------------------------------
# The command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--n-per-task", type=int, default=None, help=f"questions sampled per task (default {DEFAULT_N_PER_TASK}; a resumed session keeps its own)")
    parser.add_argument("--output", "--out", dest="out", default="results", help="output folder; the session lives in <out>/Human/ (default: ./results)")
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (default: a random one, stored in the session; a resumed session keeps its own)")
    parser.add_argument("--data", default=None, help="dataset folder or JSONL question file (default: the installed dataset)")


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        print(f"error: --port must be 0-65535, got {args.port}", file=sys.stderr)
        return 2
    from .evaluation.lock import OutputLock, OutputLockedError

    lock = OutputLock(args.out)
    try:  # one quiz server per --out: two would both accept the same item and break the session
        lock.acquire()
    except OutputLockedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        return _serve(args)
    finally:
        lock.release()


def _serve(args: argparse.Namespace) -> int:
    try:
        session = HumanSession(args.out, args.data, args.n_per_task, args.seed)
    except (SessionError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        server = make_server(session, args.port)
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
    st = session.status()
    host, port = server.server_address[:2]
    verb = "Resuming" if session.resumed else "Starting"
    print(f"{verb} the human baseline: {st['answered']} of {st['planned']} questions answered ({session.n_per_task} per task, seed {session.seed}).", flush=True)
    print(f"Serving http://{host}:{port}/  (answers: {session.answers_file}; Ctrl-C stops, the same command resumes)", flush=True)
    def stop(signum, frame):  # Ctrl-C or a polite kill: leave serve_forever; every answer is on disk already
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)  # also when started in the background, where SIGINT comes ignored
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    st = session.status()
    print(f"\nStopped: {st['answered']} of {st['planned']} answered." + (f" Results: {session.results_file}" if st["answered"] else ""), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``python -m ancientbench.human`` (same options as ``ancientbench human``)."""
    parser = argparse.ArgumentParser(prog="ancientbench human", description=__doc__.strip().splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
