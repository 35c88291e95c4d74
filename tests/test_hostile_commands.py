"""Issue 33, the hostile re-test of the commands outside ``eval``: each case as a hostile user tried it, and what
must happen instead (one ``error:`` line naming the file, flag or row, exit 2, nothing half-written, nothing of the
user's lost; or, for the silent-wrong cases, the right answer). The cases are listed in docs/reliability.md."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import REPO_ROOT, read_jsonl, write_fixture_dataset

from ancientbench.schema import write_jsonl


def _cli(*args: str) -> int:
    from ancientbench import cli

    return cli.main(list(args))


def _one_error_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def _child(code: str, *, fsize: int | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python with this checkout importable; ``fsize`` caps the size of every file it
    writes (RLIMIT_FSIZE, SIGXFSZ ignored so a write past it raises EFBIG as a full disk raises ENOSPC)."""
    prelude = "import resource, signal\n"
    if fsize is not None:
        prelude += (f"signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                    f"resource.setrlimit(resource.RLIMIT_FSIZE, ({fsize}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")])}
    env.pop("ANCIENTBENCH_DEBUG", None)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


def _cli_code(*args: str) -> str:
    return f"import sys\nfrom ancientbench import cli\nsys.exit(cli.main({list(args)!r}))\n"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------------- audit


def test_n11_audit_of_an_unknown_config_lists_the_valid_ones(tmp_path, capsys):
    data = write_fixture_dataset(tmp_path / "d", tasks=("radical", "cloze"), n_test=4)
    assert _cli("audit", "nosuchconfig", "--data", str(data), "--sources", str(tmp_path / "none")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "unknown config 'nosuchconfig'" in line and "radical, cloze" in line and str(data / "data") in line


def test_n10_combined_audit_of_a_one_item_task_says_the_minimum(tmp_path, capsys):
    from ancientbench.quality.predictors import MIN_ITEMS

    data = write_fixture_dataset(tmp_path / "d", tasks=("radical", "cloze"), n_test=MIN_ITEMS)
    path = data / "data" / "cloze" / "test.jsonl"
    write_jsonl(path, read_jsonl(path)[:1])
    assert _cli("audit", "--combined", "--data", str(data), "--sources", str(tmp_path / "none")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{path}: 1 test item" in line and f"at least {MIN_ITEMS}" in line and "cross-validate" in line


# ------------------------------------------------------------------------------------------- question files


@pytest.mark.parametrize("field,value", [("B", "\u200b"), ("C", " \u200b\u2060\ufeff\u3000"), ("question", "\u200d\u200c")])
def test_n15_an_option_or_question_of_only_invisible_characters_is_refused(tmp_path, field, value):
    from ancientbench.schema import DataError, load_question_file

    rows = read_jsonl(write_fixture_dataset(tmp_path / "d", tasks=("cloze",), n_test=3) / "data" / "cloze" / "test.jsonl")
    rows[1][field] = value
    path = tmp_path / "q.jsonl"
    write_jsonl(path, rows)
    with pytest.raises(DataError) as err:
        load_question_file(path)
    assert str(err.value).startswith(f"{path}, row 2, field {field!r}: empty") and "format characters" in str(err.value)


def test_n15_every_shipped_data_file_still_loads():
    from ancientbench import DATASET_PATH
    from ancientbench.schema import read_config

    files = sorted((Path(DATASET_PATH) / "data").glob("*/*.jsonl"))
    assert len(files) >= 20
    for path in files:
        assert read_config(DATASET_PATH, path.parent.name, path.stem), path


# ------------------------------------------------------------------------------------------ generate mode

OPTIONS = {"A": "之", "B": "其", "C": "於", "D": "乎"}


@pytest.mark.parametrize("text", ["答案是A或B", "選項A和選項C都對", "答案是A、C", "A和C", "A, C", "答案：A或者選項B。",
                                  "The answer is A or B", "选项B与D都正确"])
def test_n18_an_answer_naming_two_options_is_unparsed(text):
    from ancientbench.evaluation.extract import extract_letter

    assert extract_letter(text, OPTIONS) == (None, None)


@pytest.mark.parametrize("text,expected", [
    ("答案是A。A正確", ("A", "cue")), ("答案是A或A", ("A", "cue")), ("選項C和選項C", ("C", "cue")),
    ("答案是B。A項錯誤，因為…", ("B", "cue")), ("答案是B，A项是错的", ("B", "cue")), ("答案是A。不对，答案是C", ("C", "cue")),
    ("B. 其", ("B", "letter")), ("DNA和答案是C", ("C", "cue")),
])
def test_n18_one_answer_still_parses(text, expected):
    from ancientbench.evaluation.extract import extract_letter

    assert extract_letter(text, OPTIONS) == expected


# ------------------------------------------------------------------------------------------- human quiz


def _quiz_data(folder: Path) -> Path:
    rows = [{"id": f"radical-{i}", "task": "radical", "question": f"第{i}題：何者為是？", "A": f"甲{i}", "B": f"乙{i}",
             "C": f"丙{i}", "D": f"丁{i}", "answer": "ABCD"[i % 4], "subset": "", "source": "team-curated", "citation": "t",
             "explanation": ""} for i in range(4)]
    write_jsonl(folder / "data" / "radical" / "test.jsonl", rows)
    return folder


def test_n5_hand_edited_gold_in_the_quiz_answers_is_refused(tmp_path, capsys):
    from ancientbench import human

    data = _quiz_data(tmp_path / "d")
    s = human.HumanSession(tmp_path / "q", data, n_per_task=4, seed=0)
    item = s.items[s.plan[0]]
    wrong = next(x for x in "ABCD" if x != item["answer"])
    s.record(item["id"], wrong, 1000)
    rec = json.loads(s.answers_file.read_text(encoding="utf-8"))
    assert rec["correct"] is False
    for forged in ({**rec, "gold": wrong}, {**rec, "correct": True}, {**rec, "task": "cloze"}):
        s.answers_file.write_text(json.dumps(forged, ensure_ascii=False) + "\n", encoding="utf-8")
        with pytest.raises(human.SessionError, match=rf"answers.jsonl, line 1: .*question {item['id']!r}"):
            human.HumanSession(tmp_path / "q")
    s.answers_file.write_text(json.dumps(rec, ensure_ascii=False) + "\n", encoding="utf-8")
    resumed = human.HumanSession(tmp_path / "q")
    results = json.loads(resumed.results_file.read_text(encoding="utf-8"))
    assert results["tasks"]["radical"]["correct"] == 0
    # the data file itself corrected since (the participant's letter is now the gold): the data decides, with a warning
    path = data / "data" / "radical" / "test.jsonl"
    write_jsonl(path, [{**r, "answer": wrong} if r["id"] == item["id"] else r for r in read_jsonl(path)])
    capsys.readouterr()
    resumed = human.HumanSession(tmp_path / "q")
    assert f"question {item['id']!r}: the gold letter is now {wrong}" in capsys.readouterr().err
    assert resumed.answers[item["id"]]["correct"] is True
    assert json.loads(resumed.results_file.read_text(encoding="utf-8"))["tasks"]["radical"]["correct"] == 1


@pytest.fixture
def quiz(tmp_path):
    import threading

    from ancientbench import human

    session = human.HumanSession(tmp_path / "q", _quiz_data(tmp_path / "d"), n_per_task=4, seed=0)
    server = human.make_server(session, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield session, server.server_address[1]
    server.shutdown()
    server.server_close()


def _ask(port: int, token: str, method: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
    import http.client

    from ancientbench import human

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body, headers={human.TOKEN_HEADER: token, "Content-Type": "application/json"})
    resp = conn.getresponse()
    out = resp.status, json.loads(resp.read())
    conn.close()
    return out


def test_n20_an_answer_to_an_item_never_served_is_refused(quiz):
    session, port = quiz
    served = _ask(port, session.token, "GET", "/api/next")[1]["id"]
    ahead = session.plan[2]
    status, body = _ask(port, session.token, "POST", "/api/answer", json.dumps({"id": ahead, "answer": "A"}).encode())
    assert status == 400 and f"question {ahead!r} was not served" in body["error"]
    assert not session.answers_file.exists()
    status, _ = _ask(port, session.token, "POST", "/api/answer", json.dumps({"id": served, "answer": "A"}).encode())
    assert status == 200


def test_n21_a_body_with_a_duplicated_key_is_refused(quiz):
    session, port = quiz
    served = _ask(port, session.token, "GET", "/api/next")[1]["id"]
    raw = ('{"id": "%s", "answer": "A", "answer": "B"}' % served).encode()
    status, body = _ask(port, session.token, "POST", "/api/answer", raw)
    assert status == 400 and "key 'answer' appears twice" in body["error"]
    assert not session.answers_file.exists()


def test_disk_full_when_the_quiz_starts_is_one_line(tmp_path):
    data = _quiz_data(tmp_path / "d")
    out = tmp_path / "q"
    done = _child(_cli_code("human", "--port", "0", "--out", str(out), "--data", str(data)), fsize=64)
    assert done.returncode == 2, done.stderr
    line = _one_error_line(done.stderr)
    assert line.startswith(f"error: {out}") and "no space left" in line
    assert not any(p.name.endswith(".tmp") or p.name == "session.json" for p in out.rglob("*"))


def test_disk_full_while_an_answer_is_saved_keeps_the_answers_file_whole(tmp_path):
    data = _quiz_data(tmp_path / "d")
    out = tmp_path / "q"
    code = f"""
    import json, resource, signal, threading
    from test_hostile_commands import _ask
    from ancientbench import human
    s = human.HumanSession({str(out)!r}, {str(data)!r}, n_per_task=4, seed=0)
    srv = human.make_server(s, 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    answers = []
    for k in range(2):
        if k == 1:  # the disk fills up after the first answer: 20 more bytes fit
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (s.answers_file.stat().st_size + 20, resource.RLIM_INFINITY))
        item = _ask(port, s.token, "GET", "/api/next")[1]["id"]
        answers.append(_ask(port, s.token, "POST", "/api/answer", json.dumps({{"id": item, "answer": "A"}}).encode()))
    print(json.dumps(answers))
    """
    done = _child(code)
    assert done.returncode == 0, done.stderr
    (ok, _), (status, body) = json.loads(done.stdout)
    answers = out / "Human" / "answers.jsonl"
    assert ok == 200 and status == 507 and body["error"].startswith(f"{answers}: no space left"), body
    assert _one_error_line(done.stderr) == f"error: {body['error']}"
    assert len(read_jsonl(answers)) == 1  # no partial second line
    from ancientbench import human

    assert len(human.HumanSession(out).answers) == 1  # resumes cleanly


# ----------------------------------------------------------------------------------------- export-lm-eval


def test_n2_export_lm_eval_never_deletes_or_overwrites_the_users_files(tmp_path, fixture_data, capsys):
    mine = tmp_path / "mine"
    (mine / "data" / "mydataset").mkdir(parents=True)
    (mine / "data" / "mydataset" / "test.jsonl").write_text('{"q": 1}\n', encoding="utf-8")
    (mine / "ancientbench_custom.yaml").write_text("task: ancientbench_custom\n", encoding="utf-8")
    before = _tree(mine)
    assert _cli("export-lm-eval", str(mine), "--data", str(fixture_data), "--tasks", "cloze") == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {mine}: not empty") and "ancientbench_custom.yaml" in line
    assert _tree(mine) == before
    # an earlier export: the user's files added to it stay, and only the export's own files are replaced or removed
    out = tmp_path / "tasks"
    assert _cli("export-lm-eval", str(out), "--data", str(fixture_data), "--tasks", "radical", "cloze") == 0
    (out / "data" / "mydataset").mkdir()
    (out / "data" / "mydataset" / "test.jsonl").write_text('{"q": 1}\n', encoding="utf-8")
    (out / "ancientbench_custom.yaml").write_text("task: ancientbench_custom\n", encoding="utf-8")
    assert _cli("export-lm-eval", str(out), "--data", str(fixture_data), "--tasks", "cloze") == 0
    assert (out / "data" / "mydataset" / "test.jsonl").is_file() and (out / "ancientbench_custom.yaml").is_file()
    assert not (out / "ancientbench_radical.yaml").exists() and not (out / "data" / "radical").exists()
    # a file of the user's where the export would write, or one of its files edited since: refused, nothing written
    (out / "ancientbench_radical.yaml").write_text("mine\n", encoding="utf-8")
    (out / "ancientbench_cloze.yaml").write_text((out / "ancientbench_cloze.yaml").read_text() + "# my note\n")
    for tasks, culprit in ((["radical", "cloze"], "ancientbench_radical.yaml"), (["cloze"], "ancientbench_cloze.yaml")):
        before = _tree(out)
        capsys.readouterr()
        assert _cli("export-lm-eval", str(out), "--data", str(fixture_data), "--tasks", *tasks) == 2
        assert _one_error_line(capsys.readouterr().err).startswith(f"error: {out / culprit}: ")
        assert _tree(out) == before


# ---------------------------------------------------------------------------------------------- train-mini


def test_n3_train_mini_never_writes_into_the_shipped_model(tmp_path, capsys, monkeypatch):
    from ancientbench import cli
    from ancientbench.mini import MINI_PATH, train

    monkeypatch.setattr(train, "train", lambda *a, **k: pytest.fail("training started"))
    shipped = _tree(MINI_PATH)
    args = cli.build_parser("train-mini").parse_args(["train-mini", "--work", str(tmp_path / "w")])
    assert args.out is None  # the default is <work>/model, under the working folder
    for out in (MINI_PATH, MINI_PATH.parent, MINI_PATH / "sub"):
        assert _cli("train-mini", "--work", str(tmp_path / "w"), "--output", str(out)) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"--output {out}: inside the installed package" in line
    assert _tree(MINI_PATH) == shipped and (MINI_PATH / "model.safetensors").is_file()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine", encoding="utf-8")
    assert _cli("train-mini", "--work", str(tmp_path / "w"), "--output", str(mine)) == 2
    assert f"--output {mine}: not empty and not a model folder written by train-mini" in capsys.readouterr().err


def test_n3_train_mini_default_output_is_under_the_work_folder(tmp_path, monkeypatch, capsys):
    from ancientbench.mini import train

    seen = {}

    def fake_train(work, out, sources, settings, **kw):
        seen.update(work=work, out=out)
        return {"validation_loss": 1.0}

    monkeypatch.setattr(train, "train", fake_train)
    monkeypatch.chdir(tmp_path)
    assert _cli("train-mini") == 0
    assert seen["out"] == Path("runs/ancientbench-mini/model") and seen["work"] == Path("runs/ancientbench-mini")


# ------------------------------------------------------------------------------------------------ finetune


def test_n14_finetune_refuses_data_that_fails_the_leakage_check(tmp_path, tiny_qwen2, capsys):
    from ancientbench.finetune import dataset, kinds, leakage

    held = leakage.held_out_targets(None, curated=True)
    sentence = max(held.sentences, key=len)  # a held-out test sentence, whole
    pairs = [kinds.Pair(f"completion-t{i}", "completion", "續寫", "", text, "fixture")
             for i, text in enumerate(["之乎者也矣焉哉", sentence])]
    dataset._write_jsonl(tmp_path / "pairs" / "data" / "completion" / "train.jsonl", pairs)
    assert _cli("finetune-data", "--check", str(tmp_path / "pairs")) == 1  # what `--check` says of it
    capsys.readouterr()
    out = tmp_path / "run"
    assert _cli("finetune", "--model", tiny_qwen2.info["name_or_path"], "--data", str(tmp_path / "pairs"),
                "--output", str(out), "--no-eval", "--cpu", "--max-steps", "1", "--no-progress") == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{tmp_path / 'pairs'}: fails the leakage check (1 of 2 pairs hold" in line and "completion-t1: sentence" in line
    assert not (out / "checkpoints").exists()


# ---------------------------------------------------------------------------------------------- disk full


def test_disk_full_in_tiny_model_is_one_line_and_leaves_no_folder(tmp_path):
    from ancientbench.tiny import tiny_random_path

    src = tiny_random_path()  # built (or found) here, without a limit
    out = tmp_path / "tiny"
    done = _child(_cli_code("tiny-model", str(out)), fsize=4096)
    assert done.returncode == 2, done.stderr
    line = _one_error_line(done.stderr)
    assert line.startswith(f"error: {out}/") and "no space left" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no folder, no 0-byte files, no temporary
    done = _child(_cli_code("tiny-model", str(out)))  # the next try, with room, is not refused
    assert done.returncode == 0, done.stderr
    assert _tree(out) == _tree(src)



# ------------------------------------------------------------------------------------------------- report


def _runs(folder: Path, radical_correct: int) -> Path:
    from results_fixtures import task_rows, write_run

    write_run(folder, "model-a", 0, task_rows("radical", 4, radical_correct) + task_rows("cloze", 4, 2))
    write_run(folder, "model-b", 0, task_rows("radical", 4, 1) + task_rows("cloze", 4, 3))
    return folder


def _killed_report(runs: Path, out: Path, where: str) -> subprocess.CompletedProcess:
    """``report`` in a child that SIGKILLs itself at ``where``: after the first plot, or between the swap's renames."""
    code = f"""
    import os, signal
    from ancientbench import cli, fileio
    from ancientbench.reports import report
    if {where!r} == "plots":
        report.task_bar_plot = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    else:
        real, calls = os.rename, []
        def rename(a, b):
            calls.append(a)
            if len(calls) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            real(a, b)
        fileio.os.rename = rename
    cli.main(["report", {str(runs)!r}, "--out", {str(out)!r}, "--resamples", "50"])
    """
    return _child(code)


def test_n17_a_report_killed_midway_leaves_the_old_report_whole(tmp_path):
    runs, out = tmp_path / "results", tmp_path / "rep"
    _runs(runs, 1)
    assert _cli("report", str(runs), "--out", str(out), "--resamples", "50") == 0
    old = _tree(out)
    assert {"report.md", "radar_0shot.png", "tasks_0shot.png"} <= set(old)
    _runs(runs, 4)  # new figures: a new report would differ in every file
    done = _killed_report(runs, out, "plots")
    assert done.returncode == -signal.SIGKILL
    assert _tree(out) == old  # no new radar_0shot.png beside the old report.md
    done = _killed_report(runs, out, "swap")  # killed after the old folder was moved aside, before the new one came
    assert done.returncode == -signal.SIGKILL and not out.exists()
    assert _cli("report", str(runs), "--out", str(out), "--resamples", "50") == 0  # puts the old back, then replaces it
    new = _tree(out)
    assert set(new) == set(old) and new["report.md"] != old["report.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "results"]  # no temporary left
    (out / "notes.txt").write_text("mine", encoding="utf-8")  # a file of the user's: the folder is not replaced
    assert _cli("report", str(runs), "--out", str(out), "--resamples", "50") == 2
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine" and _tree(out)["report.md"] == new["report.md"]


def test_disk_full_in_report_is_one_line_and_keeps_the_old_report(tmp_path):
    runs, out = _runs(tmp_path / "results", 1), tmp_path / "rep"
    assert _cli("report", str(runs), "--out", str(out), "--resamples", "50") == 0
    old = _tree(out)
    _runs(runs, 4)
    done = _child(_cli_code("report", str(runs), "--out", str(out), "--resamples", "50"), fsize=8192)
    assert done.returncode == 2, done.stderr
    assert _one_error_line(done.stderr).startswith(f"error: {out / 'radar_0shot.png'}: no space left")
    assert _tree(out) == old and sorted(p.name for p in tmp_path.iterdir()) == ["rep", "results"]
