"""`ancientbench human`: sampling, durable answers, resume, results in the models' format, 4xx answers,
and the page itself clicked through in headless Chromium (interrupted by a kill, then resumed)."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ancientbench import human
from ancientbench.schema import DataError, write_jsonl

REPO = Path(__file__).resolve().parent.parent
TASKS = ("radical", "pronunciation", "cloze")


@pytest.fixture
def dataset(tmp_path) -> Path:
    """Three tasks with five test items each; gold letters cycle A, B, C, D."""
    d = tmp_path / "ds"
    for t in TASKS:
        rows = [
            {"id": f"{t}-{i}", "task": t, "question": f"{t} 第{i}題：何者為是？", "A": f"甲{i}", "B": f"乙{i}", "C": f"丙{i}", "D": f"丁{i}",
             "answer": "ABCD"[i % 4], "subset": "", "source": "team-curated", "citation": "test", "explanation": ""}
            for i in range(5)
        ]
        write_jsonl(d / "data" / t / "test.jsonl", rows)
    return d


def gold_of(item_id: str) -> str:
    return "ABCD"[int(item_id.rsplit("-", 1)[1]) % 4]


def wrong_of(item_id: str) -> str:
    return "ABCD"[(int(item_id.rsplit("-", 1)[1]) + 1) % 4]


@pytest.fixture
def served(dataset, tmp_path):
    session = human.HumanSession(tmp_path / "out", dataset, n_per_task=2, seed=7)
    server = human.make_server(session, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    TOKENS[server.server_address[1]] = session.token
    yield session, server.server_address[1]
    server.shutdown()
    server.server_close()


TOKENS: dict[int, str] = {}  # port -> the session token the page would carry


def request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """A request as the quiz page makes it (token, JSON content type), unless ``headers`` say otherwise."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = dict(headers or {})
    if port in TOKENS:
        headers.setdefault(human.TOKEN_HEADER, TOKENS[port])
    if body is not None:
        headers.setdefault("Content-Type", "application/json")
    headers = {k: v for k, v in headers.items() if v is not None}  # None: leave the header out
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.getheader("Content-Type"), data


def test_sample_is_seeded_per_task(dataset, tmp_path):
    a = human.HumanSession(tmp_path / "a", dataset, n_per_task=2, seed=7)
    b = human.HumanSession(tmp_path / "b", dataset, n_per_task=2, seed=7)
    c = human.HumanSession(tmp_path / "c", dataset, n_per_task=9, seed=1)
    assert a.plan == b.plan and len(a.plan) == 6
    assert [i.rsplit("-", 1)[0] for i in a.plan] == ["radical"] * 2 + ["pronunciation"] * 2 + ["cloze"] * 2
    assert len(set(a.plan)) == 6
    assert len(c.plan) == 15  # n larger than a task: all of its items
    with pytest.raises(human.SessionError, match="no test questions"):
        human.HumanSession(tmp_path / "d", tmp_path, n_per_task=2, seed=0)


def test_answers_results_and_bad_requests(served, dataset, tmp_path):
    session, port = served
    status, ctype, data = request(port, "GET", "/")
    assert status == 200 and ctype.startswith("text/html") and b'id="opt-A"' in data
    first = json.loads(request(port, "GET", "/api/next")[2])
    assert first["id"] == session.plan[0] and first["position"] == 1 and first["planned"] == 6
    assert set(first["options"]) == set("ABCD") and "answer" not in first  # the page never sees the gold letter
    body = json.dumps({"id": first["id"], "answer": gold_of(first["id"]), "elapsed_ms": 2500}).encode()
    status, _, data = request(port, "POST", "/api/answer", body, {"Content-Type": "application/json"})
    assert status == 200 and json.loads(data)["saved"] is True
    # bad requests: a JSON error with a 4xx code each, and the server keeps working
    cases = [
        ("POST", "/api/answer", b"{not json", 400, "malformed JSON"),
        ("POST", "/api/answer", b"[1, 2]", 400, "expected a JSON object"),
        ("POST", "/api/answer", json.dumps({"id": session.plan[1], "answer": "E"}).encode(), 400, "one of A, B, C, D"),
        ("POST", "/api/answer", json.dumps({"id": session.plan[1], "answer": "a"}).encode(), 400, "one of A, B, C, D"),
        ("POST", "/api/answer", json.dumps({"answer": "A"}).encode(), 400, "field 'id'"),
        ("POST", "/api/answer", json.dumps({"id": session.plan[1], "answer": "A", "elapsed_ms": -5}).encode(), 400, "elapsed_ms"),
        ("POST", "/api/answer", json.dumps({"id": "radical-999", "answer": "A"}).encode(), 404, "unknown item"),
        ("POST", "/api/answer", json.dumps({"id": first["id"], "answer": "A"}).encode(), 409, "answered already"),
        ("POST", "/api/answer", b"x" * (human.MAX_BODY + 1), 413, "too large"),
        ("GET", "/api/answer", None, 405, "not allowed"),
        ("DELETE", "/api/next", None, 405, "not allowed"),
        ("PUT", "/api/answer", b"{}", 405, "not allowed"),
        ("BREW", "/", None, 405, "not allowed"),
        ("POST", "/api/next", b"{}", 405, "not allowed"),
        ("GET", "/../../etc/passwd", None, 404, "no such page"),
        ("POST", "/elsewhere", b"{}", 404, "no such page"),
    ]
    for method, path, body, code, text in cases:
        status, ctype, data = request(port, method, path, body)
        assert status == code, (method, path, status, data)
        assert ctype.startswith("application/json") and text in json.loads(data)["error"], (method, path, data)
        assert b"Traceback" not in data
    # a request without Content-Length, and a broken request line, straight on the socket
    auth = f"Host: 127.0.0.1:{port}\r\n{human.TOKEN_HEADER}: {session.token}\r\n".encode()
    for raw, code in ((b"POST /api/answer HTTP/1.1\r\n" + auth + b"\r\n", 411), (b"GET / HTTP/1.x\r\n\r\n", 400), (b"GARBAGE\r\n\r\n", 400)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
            reply = b"".join(chunks).decode("utf-8", "replace")
        assert reply.split()[1] == str(code) and '{"error"' in reply and "Traceback" not in reply
    # the second question, wrong, with no page timing: the server's own time is used
    second = json.loads(request(port, "GET", "/api/next")[2])
    assert second["id"] == session.plan[1]
    request(port, "POST", "/api/answer", json.dumps({"id": second["id"], "answer": wrong_of(second["id"])}).encode())
    lines = session.answers_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    recs = [json.loads(x) for x in lines]
    assert recs[0]["seconds"] == 2.5 and recs[0]["seconds_source"] == "page" and recs[0]["correct"] is True
    assert recs[1]["seconds_source"] == "server" and recs[1]["seconds"] >= 0 and recs[1]["correct"] is False
    results = json.loads(session.results_file.read_text(encoding="utf-8"))
    assert results["model"]["name_or_path"] == "Human" and results["setting"]["shots"] == 0
    assert results["tasks"]["radical"] == {"accuracy": 0.5, "correct": 1, "total": 2, "competency": "glyph", "fewshot_truncated_items": 0}
    assert results["human"] == {"seed": 7, "n_per_task": 2, "planned": 6, "answered": 2, "finished": False}
    preds = [json.loads(x) for x in session.predictions_file.read_text(encoding="utf-8").splitlines()]
    assert [p["id"] for p in preds] == session.plan[:2] and all(p["logprobs"] is None for p in preds)


def test_resume_keeps_answers_and_options(dataset, tmp_path):
    out = tmp_path / "out"
    s1 = human.HumanSession(out, dataset, n_per_task=2, seed=3)
    s1.record(s1.plan[0], "A", 1000)
    # a crash in the middle of writing the next answer leaves half a line: it is dropped on resume
    with s1.answers_file.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "' + s1.plan[1] + '", "pred": "B"')
    s2 = human.HumanSession(out)  # options come from the stored session
    assert s2.resumed and s2.plan == s1.plan and s2.seed == 3 and s2.n_per_task == 2
    assert list(s2.answers) == [s1.plan[0]] and s2.next_item()["id"] == s1.plan[1]
    assert s2.answers_file.read_text(encoding="utf-8").count("\n") == 1
    with pytest.raises(human.SessionError, match="seed=3"):
        human.HumanSession(out, seed=4)
    with pytest.raises(human.SessionError, match="n_per_task=2"):
        human.HumanSession(out, n_per_task=5)
    assert human.HumanSession(out, dataset, n_per_task=2, seed=3).plan == s1.plan  # same options: fine


def chromium_paths() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser:
        pytest.skip("Debian chromium is not installed (scripts/install.sh installs it: apt-get install chromium chromium-driver)")
    if not driver:
        pytest.skip("chromedriver is not installed (Debian chromium-driver; scripts/install.sh installs it)")
    return browser, driver


def start_cli(args: list[str]) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "ancientbench.human", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"Serving http://127\.0\.0\.1:(\d+)/", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise AssertionError("the quiz server did not start:\n" + "".join(lines))


def test_quiz_in_headless_chromium(dataset, tmp_path):
    browser, driver_path = chromium_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for drivers online
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"):
        opts.add_argument(flag)
    out = tmp_path / "out"
    args = ["--port", "0", "--data", str(dataset), "--out", str(out), "--n-per-task", "2", "--seed", "11"]
    proc, port = start_cli(args)
    drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    try:
        wait = WebDriverWait(drv, 30)

        def shown_id(previous: str | None = None) -> str:
            wait.until(lambda d: d.find_element(By.ID, "quiz").get_attribute("data-item-id") not in ("", previous)
                       and d.find_element(By.ID, "opt-A").is_enabled())
            return drv.find_element(By.ID, "quiz").get_attribute("data-item-id")

        def click(item_id: str, letter: str) -> None:
            button = drv.find_element(By.ID, f"opt-{letter}")
            assert button.text.startswith(f"{letter}. ")
            button.click()

        drv.get(f"http://127.0.0.1:{port}/")
        answered: dict[str, str] = {}
        current = None
        for k in range(3):  # right, wrong, right
            current = shown_id(current)
            assert drv.find_element(By.ID, "progress").text.endswith(f"({k + 1} / 6)")
            assert drv.find_element(By.ID, "question").text.startswith(current.rsplit("-", 1)[0])
            letter = gold_of(current) if k != 1 else wrong_of(current)
            time.sleep(0.05)
            click(current, letter)
            answered[current] = letter
        wait.until(lambda d: len((out / "Human" / "answers.jsonl").read_text(encoding="utf-8").splitlines()) == 3)
        # interrupt: kill the server outright (no chance to clean up)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert len((out / "Human" / "answers.jsonl").read_text(encoding="utf-8").splitlines()) == 3
        # resume with the same command; the page picks up at question 4
        proc, port = start_cli(args)
        drv.get(f"http://127.0.0.1:{port}/")
        current = None
        for k in range(3, 6):  # right, wrong, wrong
            current = shown_id(current)
            assert current not in answered
            assert drv.find_element(By.ID, "progress").text.endswith(f"({k + 1} / 6)")
            letter = gold_of(current) if k == 3 else wrong_of(current)
            click(current, letter)
            answered[current] = letter
        wait.until(lambda d: d.find_element(By.ID, "done").is_displayed())
        assert "results_0shot.json" in drv.find_element(By.ID, "done").text
        assert drv.find_element(By.ID, "progress").text == "6 / 6"
    finally:
        drv.quit()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                tail = proc.communicate(timeout=30)[0]
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
    assert proc.returncode == 0 and "Stopped: 6 of 6 answered" in tail
    # the results file: 3 right (1st, 3rd, 4th answers) out of 6, in the models' format
    results = json.loads((out / "Human" / "results_0shot.json").read_text(encoding="utf-8"))
    assert results["human"]["finished"] is True and results["human"]["answered"] == 6
    expected = {t: sum(1 for i, letter in answered.items() if i.startswith(t + "-") and letter == gold_of(i)) for t in TASKS}
    assert sum(expected.values()) == 3
    assert {t: v["correct"] for t, v in results["tasks"].items()} == expected
    assert all(v["total"] == 2 for v in results["tasks"].values())
    preds = [json.loads(x) for x in (out / "Human" / "predictions_0shot.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {p["id"]: p["pred"] for p in preds} == answered
    assert all(p["seconds"] is not None and p["seconds"] >= 0 for p in preds)
    # and report shows it as the Human row
    from ancientbench.reports import results

    r = results.load_result(out / "Human" / "results_0shot.json")
    assert r.is_human and r.figures["micro_accuracy"] == pytest.approx(0.5)


def test_only_the_participants_page_can_write(served):
    session, port = served
    item = session.plan[0]
    answer = json.dumps({"id": item, "answer": "A"}).encode()
    page = f"http://127.0.0.1:{port}"
    refused = [
        # a cross-site "simple" form post: text/plain, foreign Origin, no token
        ({"Content-Type": "text/plain", "Origin": "http://evil.example", human.TOKEN_HEADER: None}, 403, "cross-origin"),
        ({"Origin": "http://evil.example"}, 403, "cross-origin"),
        ({"Host": f"evil.example:{port}"}, 403, "is not this server"),  # DNS rebinding
        ({"Sec-Fetch-Site": "cross-site"}, 403, "cross-site"),
        ({human.TOKEN_HEADER: None}, 403, human.TOKEN_HEADER),
        ({human.TOKEN_HEADER: "guessed"}, 403, human.TOKEN_HEADER),
        ({"Content-Type": "text/plain", "Origin": page}, 415, "application/json"),
    ]
    for headers, code, text in refused:
        status, _, data = request(port, "POST", "/api/answer", answer, headers)
        assert status == code and text in json.loads(data)["error"], (headers, status, data)
    assert request(port, "GET", "/api/next", headers={human.TOKEN_HEADER: None})[0] == 403
    assert not session.answers_file.exists()  # nothing refused was recorded
    assert json.loads(request(port, "GET", "/api/next")[2])["id"] == item  # the page is shown the question first
    status, _, _ = request(port, "POST", "/api/answer", answer, {"Origin": page, "Sec-Fetch-Site": "same-origin"})
    assert status == 200  # the page's own request still works (no 409: the refused ones left no trace)


def test_page_carries_the_token_and_refuses_framing(served):
    session, port = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/")
    resp = conn.getresponse()
    page = resp.read().decode()
    assert session.token in page
    assert resp.getheader("X-Frame-Options") == "DENY" and "frame-ancestors 'none'" in resp.getheader("Content-Security-Policy")
    conn.close()


def test_malformed_bodies_are_400_never_500(served):
    session, port = served
    for body in (b"[" * 100_000 + b"]" * 100_000, b'{"id": ' * 50_000, b"\xff\xfe", b'"just a string"'):
        status, _, data = request(port, "POST", "/api/answer", body[: human.MAX_BODY])
        assert status == 400, (body[:20], status, data)


def _until(ask, wanted, seconds: float = 60):
    """``ask()`` again until its answer is ``wanted`` or ``seconds`` pass; the last answer (a loaded machine may be slow)."""
    deadline = time.monotonic() + seconds
    while (answer := ask()) != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer


def _raw_get_status(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        return s.recv(100).split()[1]


def test_idle_connections_time_out_and_the_pool_is_bounded(dataset, tmp_path, monkeypatch):
    monkeypatch.setattr(human.QuizHandler, "timeout", 3)  # long enough for a loaded machine to see both slots held
    session = human.HumanSession(tmp_path / "out", dataset, n_per_task=1, seed=1)
    server = human.QuizServer(("127.0.0.1", 0), type("H", (human.QuizHandler,), {"session": session}), max_connections=2)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        for s in idle:
            s.sendall(b"GET / HTTP/1.1\r\n")  # never finished
        # both slots held: refused, not a new thread (asked until the server has taken both idle connections in, which
        # a loaded machine may take a while to do; a request served before then takes no slot away for long)
        assert _until(lambda: _raw_get_status(port), b"503") == b"503"
        for s in idle:
            assert s.recv(100) == b""  # closed by the server after the 3 s socket timeout
            s.close()
        TOKENS[port] = session.token
        assert _until(lambda: request(port, "GET", "/api/status")[0], 200) == 200  # slots free again
    finally:
        server.shutdown()
        server.server_close()


def test_client_disconnects_print_no_traceback(dataset, tmp_path, capsys):
    session = human.HumanSession(tmp_path / "out", dataset, n_per_task=1, seed=1)
    server = human.make_server(session, 0)
    try:
        try:
            raise BrokenPipeError(32, "Broken pipe")
        except BrokenPipeError:
            server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    assert "Traceback" not in capsys.readouterr().err


def test_default_seed_is_random_and_stored(dataset, tmp_path):
    a = human.HumanSession(tmp_path / "a", dataset, n_per_task=2)
    b = human.HumanSession(tmp_path / "b", dataset, n_per_task=2)
    assert a.seed != b.seed
    assert json.loads(a.session_file.read_text())["seed"] == a.seed
    assert human.HumanSession(tmp_path / "a").plan == a.plan  # resume keeps the stored seed and sample


def test_ids_must_be_unique_across_the_whole_folder(dataset, tmp_path):
    rows = [json.loads(x) for x in (dataset / "data" / "cloze" / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[2]["id"] = "radical-1"  # the same id as an item of another task
    write_jsonl(dataset / "data" / "cloze" / "test.jsonl", rows)
    with pytest.raises(DataError, match=r"cloze/test.jsonl, row 3.*duplicate id 'radical-1': also .*radical/test.jsonl, row 2"):
        human.HumanSession(tmp_path / "out", dataset, n_per_task=2, seed=1)


def test_a_second_quiz_server_on_the_same_out_is_refused(dataset, tmp_path, capsys):
    """Two servers on one --out would both accept the same item: the second is refused, as a second eval is."""
    from ancientbench.evaluation.lock import OutputLock

    out = tmp_path / "out"
    with OutputLock(out):  # what a running `ancientbench human --out out` holds
        rc = human.main(["--out", str(out), "--data", str(dataset), "--n-per-task", "2", "--seed", "1", "--port", "0"])
    assert rc == 2 and "in use by another ancientbench run" in capsys.readouterr().err
    assert not (out / "session.json").exists()
