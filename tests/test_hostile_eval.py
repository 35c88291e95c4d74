"""The hostile re-test of issue 33, evaluation side: each case a hostile user tried on b750ca2 (a silent wrong
result, lost or repaid work, or a traceback), and what the evaluator does now. Registered in
``tests/test_reliability.py`` (the ``docs/reliability.md`` table) with :func:`covered`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from support import REPO_ROOT, logged_warning, read_jsonl

from ancientbench.schema import write_jsonl

LETTERS = ("A", "B", "C", "D")
CANDIDATES = [("A", -1.0), ("B", -2.0), ("C", -3.0), ("D", -4.0)]


def _cli(*args: str) -> int:
    from ancientbench import cli

    return cli.main([str(a) for a in args])


def _eval_args(data, out, *extra, tasks=("cloze",), shots="0"):
    return ["eval", "--model", "tiny-random", "--data", str(data), "--tasks", *tasks, "--shots", shots,
            "--output", str(out), "--no-progress", *extra]


def _one_error_line(err: str) -> str:
    """The stderr of a refused command: one ``error:`` line, no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def _server(scorer=None, **kw):
    pytest.importorskip("openai", reason="the openai backend needs the [serve] extra")
    from serving_support import StubServer

    return StubServer("m", scorer or (lambda text, chat: CANDIDATES), **kw)


def _api_args(server, data, out, *extra, tasks=("cloze",)):
    return ["eval", "--backend", "openai", "--model", server.model, "--base-url", server.base_url, "--data", str(data),
            "--tasks", *tasks, "--shots", "0", "--output", str(out), "--no-progress", "--concurrency", "1", *extra]


@pytest.fixture(scope="module")
def tokenizer_folder(tmp_path_factory):
    """A tiny model's tokenizer files alone (what ``--tokenizer`` of the openai backend points at)."""
    from support import FIXTURE_CHARS

    from ancientbench.tiny import build_tiny

    model = build_tiny(tmp_path_factory.mktemp("tiny-tok"), "qwen2", corpus=FIXTURE_CHARS, vocab_size=1200, seed=0)
    folder = tmp_path_factory.mktemp("tokenizer")
    for f in Path(model).iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "vocab", "merges", "chat_template")):
            shutil.copy(f, folder / f.name)
    return folder


# ------------------------------------------------------------------------------------------------ suites


def _suite(path: Path, obj) -> Path:
    path.write_text(yaml.safe_dump(obj, allow_unicode=True), encoding="utf-8")
    return path


def test_n1_two_suite_cells_never_share_one_results_file(tmp_path, capsys, fixture_data):
    """N1: two entries of one model (other tasks, other labels) would write one results file: refused before
    anything runs, naming both cells; with an entry ``output`` each cell has its own results."""
    from ancientbench.suites import load_suite

    out = tmp_path / "out"
    entries = [{"model": "tiny-random", "label": "cloze-run", "tasks": ["cloze"]},
               {"model": "tiny-random", "label": "radical-run", "tasks": ["radical"]}]
    suite = _suite(tmp_path / "s.yaml", {"output": str(out), "defaults": {"shots": 0, "data": str(fixture_data)},
                                         "models": entries})
    assert _cli("run", suite, "--no-progress") == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "'cloze-run | hf | letter | 0-shot'" in line and "'radical-run | hf | letter | 0-shot'" in line
    assert "results_0shot.json" in line and "output" in line and str(suite) in line
    assert not out.exists()  # refused up front: nothing ran, nothing written
    entries[1]["output"] = "radical"
    _suite(suite, {"output": str(out), "defaults": {"shots": 0, "data": str(fixture_data)}, "models": entries})
    assert _cli("run", suite, "--no-progress", "--no-report") == 0
    cells = {c.label: c for c in load_suite(suite).cells}
    state = json.loads((out / "suite_state.json").read_text(encoding="utf-8"))
    files = {state[c.key]["results_file"] for c in cells.values()}
    assert len(files) == 2
    for label, task in (("cloze-run", "cloze"), ("radical-run", "radical")):
        results = json.loads(Path(state[cells[label].key]["results_file"]).read_text(encoding="utf-8"))
        assert list(results["tasks"]) == [task]
    capsys.readouterr()
    assert _cli("run", suite, "--list") == 0
    assert capsys.readouterr().out.count(": done") == 2


def test_n8_suite_output_of_the_wrong_type_is_one_line(tmp_path, capsys):
    """N8: ``output: [a, b]`` (or a number) is one line naming the key, not a TypeError from pathlib."""
    for bad in (["a", "b"], 5):
        suite = _suite(tmp_path / "s.yaml", {"output": bad, "models": ["tiny-random"]})
        assert _cli("run", suite) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"{suite}, key 'output'" in line
    suite = _suite(tmp_path / "s.yaml", {"output": "o", "models": [{"model": "tiny-random", "output": ["x"]}]})
    assert _cli("run", suite) == 2
    assert f"{suite}, models[1], key 'output'" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("key, value", [("base_url", "http://127.0.0.1:1/v1"), ("timeout", 5.0),
                                        ("tokenizer", "some/tokenizer"), ("backend_options", {"top_logprobs": 5})])
def test_n9_server_keys_on_an_in_process_backend_are_refused_in_a_suite(tmp_path, capsys, key, value):
    """N9: a server key on an hf entry is refused with the command line's message (in the suite's words);
    the same key in ``defaults`` (meant for the server entries) does not make the hf entry fail."""
    from ancientbench.evaluation.command import backend_options
    from ancientbench.suites import load_suite

    suite = _suite(tmp_path / "s.yaml", {"output": str(tmp_path / "o"), "models": [{"model": "m", key: value}]})
    assert _cli("run", suite, "--list") == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{suite}, models[1]: {key}: not used by backend hf" in line
    flag = next(opt.flag.flag for opt, _ in backend_options().values() if opt.suite_key == key)
    assert _cli("eval", "--model", "m", flag, f"k={value}" if key == "backend_options" else str(value)) == 2
    cli_line = _one_error_line(capsys.readouterr().err)
    assert line.partition(": not used by")[2].split(";")[-1] == cli_line.partition(": not used by")[2].split(";")[-1]
    ok = _suite(tmp_path / "s.yaml", {"output": str(tmp_path / "o"), "defaults": {key: value},
                                      "models": [{"model": "m"}, {"model": "s", "backend": "openai"}]})
    assert _cli("run", ok, "--list") == 0
    cells = load_suite(ok).cells
    assert key not in cells[0].options and cells[-1].options[key] == value


# ------------------------------------------------------------------------------------- the openai backend


def test_n4_a_tokenizer_typo_leaves_the_finished_run_in_place(tmp_path, capsys, fixture_data, tokenizer_folder):
    """N4: a typo in ``--tokenizer`` is refused before the stored predictions are touched, so the corrected
    rerun resumes everything (no request is paid twice)."""
    out = tmp_path / "o"
    with _server() as server:
        assert _cli(*_api_args(server, fixture_data, out, "--tokenizer", tokenizer_folder)) == 0
        paid = len(server.requests)
        files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
        capsys.readouterr()
        typo = tokenizer_folder.parent / (tokenizer_folder.name + "-typo")
        assert _cli(*_api_args(server, fixture_data, out, "--tokenizer", typo)) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"--tokenizer {str(typo)!r}" in line
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == files  # nothing moved aside
        assert _cli(*_api_args(server, fixture_data, out, "--tokenizer", tokenizer_folder)) == 0
        assert len(server.requests) == paid


def test_n16_a_tokenizer_json_without_added_tokens_is_one_line(tmp_path, capsys, fixture_data, tokenizer_folder):
    """N16: a ``--tokenizer`` folder whose tokenizer.json lacks ``added_tokens`` is one line naming the folder."""
    broken = tmp_path / "tok"
    shutil.copytree(tokenizer_folder, broken)
    spec = json.loads((broken / "tokenizer.json").read_text(encoding="utf-8"))
    del spec["added_tokens"]
    (broken / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    with _server() as server:
        assert _cli(*_api_args(server, fixture_data, tmp_path / "o", "--tokenizer", broken)) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert str(broken) in line and "could not be read" in line and "KeyError" in line
        assert server.requests == []  # refused before any request


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
def test_n6_a_null_logprob_is_an_item_error_naming_the_server(tmp_path, capsys, fixture_data, chat):
    """N6: JSON ``null`` as a letter's log-probability is an item error naming the server, not a TypeError."""
    with _server(lambda text, chat: [("A", None), *CANDIDATES[1:]]) as server:
        assert _cli(*_api_args(server, fixture_data, tmp_path / "o", *(["--chat"] if chat else []))) == 0
        [pred] = list((tmp_path / "o").rglob("predictions_0shot.jsonl"))
        records = read_jsonl(pred)
        assert records and all(r["pred"] is None and server.base_url in r["error"] and "None" in r["error"]
                               for r in records)
        assert "the backend gave no answer for 7 item(s)" in capsys.readouterr().out


@pytest.mark.parametrize("value", [True, 5.0, 1e-9], ids=["true", "+5.0", "tiny-positive"])
def test_n7_a_boolean_or_positive_logprob_is_an_item_error(tmp_path, value):
    """N7: ``true`` (not 1.0) and a positive log-probability (a probability above 1) are item errors naming the
    server, never a score."""
    from ancientbench.backends import LetterRequest, Prompt, load_backend
    from ancientbench.backends.openai import OpenAIConfig

    with _server(lambda text, chat: [("A", value), *CANDIDATES[1:]]) as server:
        backend = load_backend("openai", OpenAIConfig(model="m", base_url=server.base_url))
        for chat in (False, True):
            [r] = backend.letter_logprobs([LetterRequest(Prompt("題目：", "答案是：", chat), LETTERS)])
            assert r.logprobs is None and server.base_url in r.error and repr(value) in r.error, r
        backend.close()


def test_n19_items_that_errored_are_retried_on_the_next_run(tmp_path, capsys, fixture_data, caplog):
    """N19: items a broken server gave no answer for are scored again by the same command once it is fixed,
    and the run says how many; the answers already paid for are not asked again."""
    out = tmp_path / "o"
    with _server(fail_first=[400, 400]) as server:
        assert _cli(*_api_args(server, fixture_data, out)) == 0
        first = capsys.readouterr()
        assert "the backend gave no answer for 2 item(s); counted wrong" in first.out
        assert "run the same command again to retry them" in first.out
        asked = len(server.requests)
        with logged_warning(caplog, r"retrying 2 item\(s\) the backend gave no answer for"):
            assert _cli(*_api_args(server, fixture_data, out)) == 0
        assert len(server.requests) == asked + 2  # only the two errored items
        assert "no answer" not in capsys.readouterr().out
        [results] = list(out.rglob("results_0shot.json"))
        data = json.loads(results.read_text(encoding="utf-8"))
        assert data["timing"]["items_retried"] == 2 and data["timing"]["items_resumed"] == 5
        assert "item_errors" not in data["tasks"]["cloze"]


# ---------------------------------------------------------------------------------------- stored records


@pytest.mark.parametrize("edit", ["gold=pred", "pred=gold", "ppl pred=gold"])
def test_n5_hand_edited_gold_or_pred_is_never_reused(tmp_path, fixture_data, edit, caplog):
    """N5: a stored record whose ``gold`` is not its item's answer, or whose ``pred`` is not what its stored
    log-probabilities give, is never reused: a warning names it and the item is scored again."""
    from ancientbench.evaluation import evaluate_model

    mode = "ppl" if edit.startswith("ppl") else "letter"
    kw = dict(data=fixture_data, tasks=["cloze", "radical"], shots=0, output_dir=tmp_path / "out", progress=False,
              mode=mode)
    first = evaluate_model("tiny-random", **kw)[0]
    path = Path(first["predictions_file"])
    recs, orig = read_jsonl(path), read_jsonl(path)
    wrong = [r for r in recs if r["pred"] != r["gold"]]
    assert wrong
    for r in wrong:
        if edit == "gold=pred":
            r["gold"] = r["pred"]
        else:
            r["pred"] = r["gold"]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    with logged_warning(caplog, f"{len(wrong)} stored prediction.*disagree"):
        again = evaluate_model("tiny-random", **kw)[0]
    assert (again["tasks"], again["average"]) == (first["tasks"], first["average"])
    assert again["timing"]["items_resumed"] + again["timing"]["items_scored"] == len(recs)
    assert again["timing"]["items_scored"] >= len(wrong)
    assert [(r["id"], r["gold"], r["pred"]) for r in read_jsonl(path)] == [(r["id"], r["gold"], r["pred"]) for r in orig]


# ------------------------------------------------------------------------------------------ data options


def test_n12_reference_refuses_negative_shots(tmp_path, capsys):
    """N12: ``reference --shots -3`` is a usage error; no ``results_-3shot.json`` is written."""
    with pytest.raises(SystemExit) as exit_:
        _cli("reference", "--rows", "chance", "--limit", "2", "--shots", "-3", "--out", tmp_path / "r")
    assert exit_.value.code == 2
    assert "expected a non-negative integer, got '-3'" in capsys.readouterr().err
    assert not list(tmp_path.rglob("results_*"))


@pytest.mark.parametrize("source", ["folder", "jsonl"])
def test_n13_a_test_item_among_the_exemplars_under_another_id_is_refused(tmp_path, capsys, fixture_data, source):
    """N13: an exemplar whose question and options (in any order) are a test item's, under another id, would put
    the item and its answer in its own prompt: refused, naming the file and row."""
    from ancientbench.schema import load_split

    test = load_split(fixture_data, "cloze", "test")
    dev = load_split(fixture_data, "cloze", "dev")
    item = test[3]
    rotated = [item[x] for x in "BCDA"]
    copy = {**item, "id": "cloze-innocent", **dict(zip(LETTERS, rotated)), "answer": "DABC"["ABCD".index(item["answer"])]}
    rows = [dev[0], copy, *dev[2:]]
    if source == "folder":
        shots = tmp_path / "shots"
        write_jsonl(shots / "data" / "cloze" / "dev.jsonl", rows)
        where = shots / "data" / "cloze" / "dev.jsonl"
    else:
        shots = where = tmp_path / "shots.jsonl"
        write_jsonl(shots, rows)
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--fewshot-data", shots, shots="2")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{where}, row 2" in line and "'cloze-t3'" in line and "'cloze-innocent'" in line
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").rglob("*.jsonl"))


# ------------------------------------------------------------------------------------------------ disk full


CHILD = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the kernel then fails the write (EFBIG) as a full disk does
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    from ancientbench import cli
    sys.exit(cli.main(sys.argv[2:]))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE and SIGXFSZ as on Linux")
def test_disk_full_in_eval_is_one_line_and_keeps_what_was_written(tmp_path, capsys, fixture_data, monkeypatch):
    """Disk full in ``eval``: the kernel refuses a predictions append part-way (a file size limit in a child
    process: a real short write), or ENOSPC at a sidecar's or results file's fsync. One line naming the file and
    ``no space left``, exit 2; the predictions file holds whole records only, and the same command resumes."""
    import errno

    tasks = ("cloze", "radical", "homophone", "excdoc_word", "radical_meaning")
    assert _cli(*_eval_args(fixture_data, tmp_path / "whole", tasks=tasks)) == 0  # also builds tiny-random's cache
    [whole] = list((tmp_path / "whole").rglob("predictions_0shot.jsonl"))
    out = tmp_path / "o"
    args = _eval_args(fixture_data, out, tasks=tasks)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    limit = whole.stat().st_size // 2
    proc = subprocess.run([sys.executable, "-c", CHILD, str(limit), *args], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 2, proc.stderr
    [pred] = list(out.rglob("predictions_0shot.jsonl"))
    line = _one_error_line(proc.stderr)
    assert f"{pred}: no space left" in line and "run the same command again" in line
    raw = pred.read_bytes()
    assert raw.endswith(b"\n") and 0 < len(raw) <= limit
    kept = read_jsonl(pred)
    assert kept and len(kept) % 7 == 0  # whole tasks (one batch each), never a torn record
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    # ENOSPC from the file system at an atomic write (the results file of the resumed run)
    real_fsync = os.fsync
    calls = []

    def full(fd):
        calls.append(fd)
        raise OSError(errno.ENOSPC, "No space left on device")

    from ancientbench.evaluation import runner

    real_results = runner.results_path
    monkeypatch.setattr(runner, "results_path", lambda p: (monkeypatch.setattr(os, "fsync", full), real_results(p))[1])
    assert _cli(*args) == 2
    monkeypatch.setattr(os, "fsync", real_fsync)
    line = _one_error_line(capsys.readouterr().err)
    assert f"{pred.with_name('results_0shot.json')}: no space left" in line and calls
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    monkeypatch.setattr(runner, "results_path", real_results)
    assert _cli(*args) == 0
    [results] = list(out.rglob("results_0shot.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["timing"]["items_resumed"] == len(read_jsonl(whole))
    assert [(r["id"], r["pred"]) for r in read_jsonl(pred)] == [(r["id"], r["pred"]) for r in read_jsonl(whole)]
