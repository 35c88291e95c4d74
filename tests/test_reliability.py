"""Reliability: every bad input tried on the evaluator, and what happens - a registry of cases that both runs
them and writes the table in ``docs/reliability.md``.

Each case is a test decorated with ``@case(area, bad_input, outcome)``; cases checked in another test module
are listed with :func:`covered` (that test is checked to exist). ``test_reliability_table_is_current`` fails
when the committed table differs from the registry; ``python tests/test_reliability.py`` rewrites it.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO_ROOT, logged_warning, make_item, read_jsonl, write_fixture_dataset

from ancientbench.schema import write_jsonl

DOC = REPO_ROOT / "docs" / "reliability.md"


@dataclass(frozen=True)
class Case:
    area: str
    bad_input: str
    outcome: str
    test: str  # pytest node id
    section: str = ""  # a round of testing after the first: its own table under this heading


CASES: list[Case] = []
SECTIONS: dict[str, str] = {}  # heading -> the paragraph under it


def case(area: str, bad_input: str, outcome: str):
    """Register a test of this module as a reliability case (the table row names the test that checks it)."""

    def deco(fn):
        CASES.append(Case(area, bad_input, outcome, f"tests/test_reliability.py::{fn.__name__}"))
        return fn

    return deco


def covered(area: str, bad_input: str, outcome: str, test: str, section: str = "") -> None:
    """A case checked by a test in another module (``tests/test_x.py::test_name``); ``section``: a heading of
    :data:`SECTIONS` (a later round), else the first table."""
    assert not section or section in SECTIONS, section
    CASES.append(Case(area, bad_input, outcome, test, section))


def _cli(*args: str) -> int:
    from ancientbench import cli

    return cli.main(list(args))


@pytest.fixture
def no_model_load(monkeypatch):
    """Fail the test if the evaluation loads a model: argument checks must come first."""
    from ancientbench.evaluation import api

    def refuse(*a, **k):
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(api, "load_backend", refuse)


def _eval_args(data, out, *extra, tasks=("cloze",), shots="0"):
    return ["eval", "--model", "tiny-random", "--data", str(data), "--tasks", *tasks, "--shots", shots,
            "--output", str(out), "--no-progress", *extra]


# ------------------------------------------------------------------------------------------- question sets


@case("question set", "same `id` in two tasks' files of a dataset folder",
      "exit 2: `…/data/cloze/test.jsonl, row 1, field 'id': duplicate id … also …/data/radical/test.jsonl, row 1`")
def test_duplicate_id_across_the_files_of_a_folder(tmp_path, capsys, no_model_load):
    data = write_fixture_dataset(tmp_path / "d", tasks=("radical", "cloze"), n_test=3)
    path = data / "data" / "cloze" / "test.jsonl"
    rows = read_jsonl(path)
    rows[0]["id"] = "radical-t0"
    write_jsonl(path, rows)
    assert _cli(*_eval_args(data, tmp_path / "o", tasks=("radical", "cloze"))) == 2
    err = capsys.readouterr().err
    assert "cloze/test.jsonl, row 1, field 'id': duplicate id 'radical-t0'" in err
    assert "radical/test.jsonl, row 1" in err and "Traceback" not in err


@case("question set", "same `id` in a dev exemplar file and another task's dev file",
      "exit 2: duplicate id naming both files (the exemplars of a run form one set too)")
def test_duplicate_id_across_dev_files(tmp_path, capsys, no_model_load):
    data = write_fixture_dataset(tmp_path / "d", tasks=("radical", "cloze"), n_test=3)
    path = data / "data" / "cloze" / "dev.jsonl"
    rows = read_jsonl(path)
    rows[2]["id"] = "radical-d1"
    write_jsonl(path, rows)
    assert _cli(*_eval_args(data, tmp_path / "o", tasks=("radical", "cloze"), shots="5")) == 2
    err = capsys.readouterr().err
    assert "cloze/dev.jsonl, row 3, field 'id': duplicate id 'radical-d1'" in err and "radical/dev.jsonl, row 2" in err


@case("question set", "same `id` in the test file of a task not selected (`--tasks radical`, the duplicate in cloze)",
      "exit 2: duplicate id (a later `--tasks cloze` run into the same output would replace radical's record)")
def test_duplicate_id_in_an_unselected_task_file(tmp_path, capsys, no_model_load):
    data = write_fixture_dataset(tmp_path / "d", tasks=("radical", "cloze"), n_test=3)
    path = data / "data" / "cloze" / "test.jsonl"
    rows = read_jsonl(path)
    rows[1]["id"] = "radical-t2"
    write_jsonl(path, rows)
    assert _cli(*_eval_args(data, tmp_path / "o", tasks=("radical",))) == 2
    err = capsys.readouterr().err
    assert "cloze/test.jsonl, row 2, field 'id': duplicate id 'radical-t2'" in err and "radical/test.jsonl, row 3" in err


covered("question set", "same `id` twice in one JSONL question file (any tasks)",
        "error naming the file, both rows and field 'id'", "tests/test_schema.py::test_duplicate_id_names_both_rows")
covered("question set", "same `id` in two task files of the human-baseline quiz folder",
        "error before the server starts", "tests/test_human.py::test_ids_must_be_unique_across_the_whole_folder")
covered("question set", "a row missing a field / wrong type / empty / unknown task / bad answer / duplicate option",
        "exit 2, one line: `file, row N, field 'F': …`", "tests/test_schema.py::test_bad_row_names_file_row_field")
covered("question set", "a row that is not valid JSON", "error naming file and row: `not valid JSON`",
        "tests/test_schema.py::test_readers_report_the_file")
covered("question set", "a row of another task in a task's file", "error naming file, row, field 'task'",
        "tests/test_schema.py::test_row_of_another_task_in_a_task_file")
covered("question set", "an unknown `--tasks` name", "exit 2: `unknown task 'radicals'`",
        "tests/test_cli_errors.py::test_unknown_task_is_one_error_line")
covered("question set", "a user task (`--tasks FILE`) named like one of the ten or a competency, with a bad row, "
        "without dev rows for k > 0, reusing an id of the question set, or read from two paths",
        "exit 2, one line naming the file, row and field (`ten.jsonl, row 1, field 'task': task 'radical' is one of the ten …`); nothing written",
        "tests/test_user_task.py::test_refused_user_tasks_are_one_error_line_and_write_nothing")


def _good_rows(n=2):
    import random

    rng = random.Random(1)
    return [make_item("cloze", f"t{i}", rng) for i in range(n)]


def _write_bytes(path: Path, rows, encode) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_bytes(encode(text))
    return path


@case("question set", "a question file saved as GBK", "error: `q.jsonl, row 1: not UTF-8 (byte … is 0x…); save the file as UTF-8`")
def test_gbk_file_names_file_and_row(tmp_path):
    from ancientbench.schema import DataError, load_question_file

    path = _write_bytes(tmp_path / "q.jsonl", _good_rows(), lambda t: t.encode("gbk"))
    with pytest.raises(DataError, match=r"q.jsonl, row 1: not UTF-8 \(byte \d+ of the line is 0x"):
        load_question_file(path)


@case("question set", "a question file saved as UTF-16", "error: `q.jsonl, row 1: UTF-16 text (byte-order mark found)`")
def test_utf16_file_names_file_and_row(tmp_path):
    from ancientbench.schema import DataError, load_question_file

    path = _write_bytes(tmp_path / "q.jsonl", _good_rows(), lambda t: t.encode("utf-16"))
    with pytest.raises(DataError, match=r"q.jsonl, row 1: UTF-16 text"):
        load_question_file(path)


@case("question set", "a lone surrogate escape (`\\ud800`) in a field", "error: `q.jsonl, row 2, field 'question': contains a lone surrogate`")
def test_lone_surrogate_names_file_row_field(tmp_path):
    from ancientbench.schema import DataError, load_question_file

    rows = _good_rows()
    path = tmp_path / "q.jsonl"
    text = json.dumps(rows[0], ensure_ascii=False) + "\n" + json.dumps(rows[1]).replace('"question": "', '"question": "\\ud800') + "\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=r"q.jsonl, row 2, field 'question': contains a lone surrogate"):
        load_question_file(path)


@case("question set", "a UTF-8 byte-order mark and trailing blank lines", "accepted: same items as without them")
def test_bom_and_trailing_blank_lines_are_accepted(tmp_path):
    from ancientbench.schema import load_question_file

    rows = _good_rows()
    path = _write_bytes(tmp_path / "q.jsonl", rows, lambda t: b"\xef\xbb\xbf" + (t + "\n\n").encode("utf-8"))
    assert [r["id"] for r in load_question_file(path)["cloze"]] == [r["id"] for r in rows]


@case("question set", "a blank line between rows", "error: `q.jsonl, row 2: empty line between rows`")
def test_blank_line_between_rows_names_the_row(tmp_path):
    from ancientbench.schema import DataError, load_question_file

    rows = _good_rows()
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"q.jsonl, row 2: empty line between rows"):
        load_question_file(path)


# ------------------------------------------------------------------------------------------- arguments


@pytest.mark.parametrize("value", ["0", "-1"])
@case("arguments", "`--max-length 0` / `-1`", "exit 2 before any model loads: `--max-length must be >= 1`")
def test_max_length_must_be_positive(tmp_path, capsys, no_model_load, fixture_data, value):
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--max-length", value)) == 2
    assert "--max-length must be >= 1" in capsys.readouterr().err


@case("arguments", "`--shots -1`", "exit 2 before any model loads: `shots must be >= 0`; nothing written under `--output`")
def test_negative_shots_rejected_first_and_nothing_written(tmp_path, capsys, no_model_load, fixture_data):
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", shots="-1")) == 2
    assert "shots must be >= 0, got -1" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").rglob("*"))


@pytest.mark.parametrize("value", ["0", "-1"])
@case("arguments", "`--limit 0` / `-1`", "exit 2 before any model loads: `limit must be >= 1`")
def test_limit_must_be_positive(tmp_path, capsys, no_model_load, fixture_data, value):
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--limit", value)) == 2
    assert "limit must be >= 1" in capsys.readouterr().err


@case("arguments", "`--output` that cannot be written (an existing file, or a path under a file)",
      "exit 2 before any model loads: `--output …: cannot write there (…)`")
def test_unwritable_output_rejected_before_the_model_loads(tmp_path, capsys, no_model_load, fixture_data):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for out in (blocker, blocker / "sub"):
        assert _cli(*_eval_args(fixture_data, out)) == 2
        err = capsys.readouterr().err
        assert f"--output {out}: cannot write there" in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------- context


@pytest.mark.parametrize("mode", ["letter", "ppl", "generate"])
@case("context", "every item of a task longer than the context (`--max-length 10`; letter, ppl and generate mode)",
      "exit 0; each item `pred: null` with `error` / `error_type: context_length`, counted wrong")
def test_every_item_too_long_gives_null_predictions(tmp_path, fixture_data, mode):
    out = tmp_path / "o"
    assert _cli(*_eval_args(fixture_data, out, "--max-length", "10", "--limit", "3", "--mode", mode)) == 0
    preds = read_jsonl(next(out.glob("*/predictions_0shot.jsonl")))
    assert len(preds) == 3
    assert all(p["pred"] is None and p["error_type"] == "context_length" and "the model's context of 10"
               in p["error"] for p in preds)
    res = json.loads(next(out.glob("*/results_0shot.json")).read_text())
    assert res["tasks"]["cloze"]["correct"] == 0 and res["tasks"]["cloze"]["total"] == 3


# --------------------------------------------------------------------------------------------- models


def _model_folder(tmp_path, tiny_qwen2) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(tiny_qwen2.info["name_or_path"], folder)
    return folder


@case("model", "an empty model folder", "exit 2: `model folder … is empty (no config.json, weights or tokenizer files)`")
def test_empty_model_folder_is_told_it_is_empty(tmp_path, capsys, fixture_data):
    empty = tmp_path / "empty-model"
    empty.mkdir()
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--model", str(empty))) == 2
    err = capsys.readouterr().err
    assert f"model folder {empty} is empty" in err and "sentencepiece" not in err


@case("model", "a model folder with config and weights but no tokenizer files",
      "exit 2: `model folder … has no tokenizer files (tokenizer.json, tokenizer.model, vocab.json …)`")
def test_model_folder_without_tokenizer_is_told_that(tmp_path, capsys, fixture_data, tiny_qwen2):
    folder = _model_folder(tmp_path, tiny_qwen2)
    from ancientbench.backends.hf import TOKENIZER_FILES

    for name in TOKENIZER_FILES:
        if (folder / name).exists():
            (folder / name).unlink()
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--model", str(folder))) == 2
    err = capsys.readouterr().err
    assert f"model folder {folder} has no tokenizer files" in err and "--letter-style" not in err


covered("model", "a model path that does not exist / a weights file instead of a folder",
        "exit 2: `model not found: … is not a local folder`", "tests/test_cli_errors.py::test_missing_model_folder_is_one_clear_error_line")


# --------------------------------------------------------------------------------------------- resume


@case("resume", "`chat_template.jinja` of a local model folder edited between two `--chat` runs",
      "never reused: a warning names `chat_template_sha256` and `tokenizer_sha256`, the old files are set aside "
      "(`*.superseded-<time>.*`), every item is scored again")
def test_chat_template_edit_is_another_setting(tmp_path, fixture_data, tiny_qwen2, caplog):
    from ancientbench.evaluation import evaluate_model

    folder = _model_folder(tmp_path, tiny_qwen2)
    (folder / "chat_template.jinja").write_text(
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}", encoding="utf-8")
    kw = dict(data=fixture_data, tasks=["cloze"], shots=0, limit=3, output_dir=tmp_path / "out", progress=False,
              device="cpu", dtype="float32", chat=True)
    assert evaluate_model(str(folder), **kw)[0]["timing"]["items_scored"] == 3
    (folder / "chat_template.jinja").write_text(
        (folder / "chat_template.jinja").read_text(encoding="utf-8").replace("assistant", "model"), encoding="utf-8")
    with logged_warning(caplog, r"chat_template_sha256: '[0-9a-f]+' -> '[0-9a-f]+'.*tokenizer_sha256"):
        again = evaluate_model(str(folder), **kw)[0]
    assert again["timing"]["items_resumed"] == 0 and again["timing"]["items_scored"] == 3
    kept = list(Path(again["predictions_file"]).parent.glob("predictions_0shot.superseded-*.jsonl"))
    assert len(kept) == 1 and len(read_jsonl(kept[0])) == 3  # the old predictions are kept, not dropped


@case("resume", "generation config of a model changed between two generate-mode runs (model in memory or Hub id)",
      "never reused: a warning names `generation_config_sha256`; every item is scored again")
def test_generation_config_is_in_the_fingerprint(tmp_path, fixture_data, tiny_qwen2, caplog):
    from ancientbench.evaluation import evaluate_model

    kw = dict(data=fixture_data, tasks=["cloze"], shots=0, limit=2, output_dir=tmp_path / "out", progress=False,
              mode="generate", max_new_tokens=4)
    model, tok = tiny_qwen2.model, tiny_qwen2.tokenizer
    old = model.generation_config.repetition_penalty
    evaluate_model(model, tok, **kw)
    try:
        model.generation_config.repetition_penalty = 1.3
        with logged_warning(caplog, "generation_config_sha256"):
            assert evaluate_model(model, tok, **kw)[0]["timing"]["items_resumed"] == 0
    finally:
        model.generation_config.repetition_penalty = old
    with logged_warning(caplog, "generation_config_sha256"):  # and back
        evaluate_model(model, tok, **kw)
    assert evaluate_model(model, tok, **kw)[0]["timing"]["items_resumed"] == 2  # unchanged: reused


@pytest.mark.parametrize("option,value", [("--letter-style", "space"), ("--shots", "2"), ("--mode", "ppl"),
                                          ("--max-length", "300"), ("--chat", None), ("--circular", None)])
@case("resume", "any prompt-affecting option changed (`--letter-style`, `--shots`, `--mode`, `--max-length`, `--chat`, `--circular`)",
      "never reused: another output folder / predictions file, or a warning naming the option and all scored again")
def test_prompt_affecting_options_never_reuse(tmp_path, fixture_data, capsys, option, value, caplog):
    out = tmp_path / "o"
    assert _cli(*_eval_args(fixture_data, out, "--limit", "2")) == 0
    if option == "--shots":
        args = _eval_args(fixture_data, out, "--limit", "2", shots=value)
    else:
        args = _eval_args(fixture_data, out, "--limit", "2", option, *([value] if value else []))
    if option == "--max-length":  # the same folder and file: the warning names it
        with logged_warning(caplog, r"another setting \(max_length: "):
            assert _cli(*args) == 0
    else:
        assert _cli(*args) == 0
    results = sorted(out.rglob("results_*shot.json"), key=os.path.getmtime)
    assert json.loads(results[-1].read_text())["timing"]["items_resumed"] == 0


def test_resume_rescores_only_the_partly_done_block(tmp_path, fixture_data, tiny_llama, monkeypatch):
    """Several blocks per task: complete blocks are reused, a partly done one is scored again whole."""
    from ancientbench.evaluation import evaluate_model, runner

    monkeypatch.setattr(runner, "BLOCK_ITEMS", 4)  # 7 items: blocks t0-t3 and t4-t6

    def run(out):
        return evaluate_model(tiny_llama.model, tiny_llama.tokenizer, data=fixture_data, tasks=["cloze"], shots=2,
                              batch_size=2, output_dir=out, progress=False)[2]

    straight = run(tmp_path / "a")
    pred = Path(straight["predictions_file"])
    records = read_jsonl(pred)
    assert len({r["block_sha256"] for r in records}) == 2
    out = tmp_path / "b"
    (out / pred.parent.name).mkdir(parents=True)
    shutil.copy(pred.with_name("predictions_2shot.meta.json"), out / pred.parent.name)
    (out / pred.parent.name / pred.name).write_text(  # t0-t3 and t4 stored, t5 and t6 not
        "".join(json.dumps(r) + "\n" for r in records[:5]), encoding="utf-8")
    resumed = run(out)
    assert resumed["timing"]["items_resumed"] == 4 and resumed["timing"]["items_scored"] == 3
    assert read_jsonl(resumed["predictions_file"]) == [dict(r) for r in records]  # every field, bit for bit


def _interrupt_after(monkeypatch, n_calls):
    from ancientbench.backends import hf_scoring

    calls = {"n": 0}

    def wrap(fn):
        def wrapped(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] > n_calls:
                raise KeyboardInterrupt
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(hf_scoring.Runner, "full", wrap(hf_scoring.Runner.full))
    monkeypatch.setattr(hf_scoring.Runner, "suffixes", wrap(hf_scoring.Runner.suffixes))


@case("resume", "a run killed after a number of records that is not a whole number of batches (torn last line), "
      "or resumed with another `--limit`",
      "the log-probs equal an uninterrupted run's bit for bit (a partly scored block is scored again whole)")
def test_resumed_logprobs_are_bit_identical(tmp_path, fixture_data, tiny_llama, monkeypatch):
    from ancientbench.evaluation import evaluate_model

    def run(out, **kw):
        kw.setdefault("limit", None)
        return evaluate_model(tiny_llama.model, tiny_llama.tokenizer, data=fixture_data, tasks=["cloze", "radical"],
                              shots=kw.pop("shots", 5), batch_size=3, output_dir=out, progress=False, **kw)

    def logprobs(res):
        return [(p["id"], p["pred"], p["logprobs"]) for p in read_jsonl(res["predictions_file"])]

    straight = run(tmp_path / "a")[5]
    _interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "b")
    monkeypatch.undo()
    pred = next((tmp_path / "b").glob("*/predictions_5shot.jsonl"))
    partial = read_jsonl(pred)
    assert 0 < len(partial) < 14 and len(partial) % 3 == 0
    pred.write_text("".join(json.dumps(r) + "\n" for r in partial[:-1]) + '{"id": "radical-t', encoding="utf-8")
    assert logprobs(run(tmp_path / "b")[5]) == logprobs(straight)  # exact, not within a tolerance

    for first, then in ((3, None), (None, 3)):  # another --limit before
        out = tmp_path / f"limit-{first}-{then}"
        run(out, limit=first)
        want = logprobs(run(tmp_path / f"straight-{then}", limit=then)[5])
        assert logprobs(run(out, limit=then)[5])[:len(want)] == want  # (records of the other items follow)


covered("resume", "a run killed mid-write (torn last line)", "the fragment is cut; the run resumes and equals an uninterrupted one",
        "tests/test_evaluation.py::test_resume_after_interruption_equals_an_uninterrupted_run")
covered("resume", "another setting (`--max-length`) into the same predictions file",
        "a warning naming `max_length: … -> …`; the old predictions, sidecar and results set aside as `*.superseded-<time>.*`; all scored again",
        "tests/test_evaluation.py::test_resume_refuses_another_setting_and_rescores_changed_data")
covered("resume", "weights of a model in memory changed between runs", "a warning naming `weights_sha256`; all scored again",
        "tests/test_evaluation.py::test_resume_refuses_a_model_whose_weights_changed_in_memory")
covered("resume", "items edited under the same id / other few-shot exemplars", "those items scored again (warning), the others reused",
        "tests/test_evaluation.py::test_resume_never_reuses_predictions_of_other_questions")
covered("resume", "tokenizer files of a local model folder edited", "a warning naming `tokenizer_sha256`; all scored again",
        "tests/test_modes.py::test_resume_covers_mode_and_the_tokenizer_files")


@case("resume", "a corrupt `predictions_*.meta.json`",
      "exit 2: `…/predictions_0shot.meta.json: not a valid sidecar (…); use --overwrite`")
def test_corrupt_meta_names_the_file(tmp_path, capsys, fixture_data):
    out = tmp_path / "o"
    assert _cli(*_eval_args(fixture_data, out, "--limit", "2")) == 0
    meta = next(out.glob("*/predictions_0shot.meta.json"))
    meta.write_text('{"fingerprint": {"shots": 0', encoding="utf-8")
    assert _cli(*_eval_args(fixture_data, out, "--limit", "2")) == 2
    err = capsys.readouterr().err
    assert f"{meta}: not a valid sidecar" in err and "Traceback" not in err


@case("resume", "a corrupt middle line of a predictions file",
      "exit 2 naming file and line and offering `--repair`; `--repair` keeps every valid record and rescores only the rest")
def test_corrupt_middle_line_can_be_repaired(tmp_path, capsys, fixture_data):
    out = tmp_path / "o"
    assert _cli(*_eval_args(fixture_data, out, "--limit", "5")) == 0
    pred = next(out.glob("*/predictions_0shot.jsonl"))
    before = read_jsonl(pred)
    lines = pred.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = '{"id": "cloze-t2", "ta\n'
    pred.write_text("".join(lines), encoding="utf-8")
    assert _cli(*_eval_args(fixture_data, out, "--limit", "5")) == 2
    err = capsys.readouterr().err
    assert f"{pred}, line 3: not a prediction record" in err and "--repair" in err
    assert _cli(*_eval_args(fixture_data, out, "--limit", "5", "--repair")) == 0
    after = read_jsonl(pred)
    assert [p["id"] for p in after] == [p["id"] for p in before]
    assert [p["pred"] for p in after] == [p["pred"] for p in before]
    res = json.loads(next(out.glob("*/results_0shot.json")).read_text())
    # the block that held the corrupt line is scored again whole (bit-identical log-probs)
    assert res["timing"]["items_resumed"] + res["timing"]["items_scored"] == 5 and res["timing"]["items_scored"] >= 1


# ---------------------------------------------------------------------------------------------- output


_HOLDER = textwrap.dedent("""
    import sys, time
    from ancientbench.evaluation.lock import OutputLock
    with OutputLock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(60)
""")


@case("output", "two runs into one `--output` at the same time",
      "the second exits 2 before its model loads: `… is in use by another ancientbench run: pid N on HOST, started …, "
      "command: …`; a lock left by a killed run is taken over with a warning")
def test_two_runs_into_one_output_folder(tmp_path, capsys, fixture_data, monkeypatch, caplog):
    out = tmp_path / "o"
    folder = out / "tiny-random"
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(folder)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        from ancientbench.evaluation import api

        with monkeypatch.context() as m:  # refused before the model loads
            m.setattr(api, "load_backend", lambda *a, **k: pytest.fail("model loaded"))
            assert _cli(*_eval_args(fixture_data, out, "--limit", "2")) == 2
        err = capsys.readouterr().err
        assert "is in use by another ancientbench run" in err and f"pid {holder.pid}" in err and "started" in err
        assert "Traceback" not in err
    finally:
        holder.kill()
        holder.wait()
    assert not list(folder.glob("predictions_*"))  # the refused run wrote nothing
    # the holder was killed: its lock is stale and the next run takes it over
    with logged_warning(caplog, rf"stale lock.*pid {holder.pid}"):
        assert _cli(*_eval_args(fixture_data, out, "--limit", "2")) == 0


def test_lock_taken_after_the_model_loads_refuses_too(tmp_path, fixture_data, monkeypatch):
    """A run that starts between another's early check and its lock is refused when it takes the lock."""
    from ancientbench.evaluation import evaluate_model
    from ancientbench.evaluation.lock import OutputLock, OutputLockedError

    monkeypatch.setattr(OutputLock, "check", lambda self: None)
    with OutputLock(tmp_path / "o" / "tiny-random"):
        with pytest.raises(OutputLockedError, match=rf"pid {os.getpid()} on .*, started .*, command: "):
            evaluate_model("tiny-random", data=fixture_data, tasks=["cloze"], shots=0, limit=1,
                           output_dir=tmp_path / "o", progress=False)
    assert not list((tmp_path / "o" / "tiny-random").glob("predictions_*"))
    assert not (tmp_path / "o" / "tiny-random" / ".ancientbench.lock.json").exists()  # released with its details


# -------------------------------------------------------------------------------------------- commands


@case("finetune-data", "`ancientbench finetune-data` without the build extras",
      "exit 2, one line naming `pip install 'ancientbench[build]'`")
def test_finetune_data_without_build_extras(tmp_path):
    _assert_one_line_naming_the_build_extras(["finetune-data", "--out", str(tmp_path / "ft"), "--max-per-kind", "1"])


def _assert_one_line_naming_the_build_extras(argv: list[str]) -> None:
    """``ancientbench ARGV`` in a fresh interpreter where the build extras' modules cannot be imported (no
    sys.modules left changed here): exit 2 and one line naming the install command."""
    code = ("import sys\n"
            "for m in ('opencc', 'tshet_uinh', 'pypinyin'): sys.modules[m] = None\n"
            "from ancientbench import cli\n"
            f"sys.exit(cli.main({argv!r}))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, cwd=REPO_ROOT)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "pip install 'ancientbench[build]'" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------------- quiz server, metric

covered("quiz server", "a `text/plain` POST, a foreign `Origin` or `Host`, a missing token",
        "403/415, nothing recorded", "tests/test_human.py::test_only_the_participants_page_can_write")
covered("quiz server", "framing the page from another site", "`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`",
        "tests/test_human.py::test_page_carries_the_token_and_refuses_framing")
covered("quiz server", "deeply nested or malformed JSON bodies", "400, never 500",
        "tests/test_human.py::test_malformed_bodies_are_400_never_500")
covered("quiz server", "idle held connections", "socket timeout; bounded thread pool",
        "tests/test_human.py::test_idle_connections_time_out_and_the_pool_is_bounded")
covered("quiz server", "a client that disconnects mid-answer", "no traceback on stderr",
        "tests/test_human.py::test_client_disconnects_print_no_traceback")
covered("quiz server", "no `--seed`", "a random seed, stored with the session (ids not predictable)",
        "tests/test_human.py::test_default_seed_is_random_and_stored")
covered("metric", "bad labels, booleans, unknown tasks, length mismatch, empty input",
        "one ValueError naming the element (`predictions[1]: invalid label 'a'`); the object stays usable",
        "tests/test_metric.py::test_clear_errors")
covered("metric", "a rejected `add_batch` after a good one", "the earlier batch is kept",
        "tests/test_metric.py::test_a_rejected_batch_leaves_earlier_batches_intact")
covered("metric", "`None` predictions (too-long records)", "scored wrong", "tests/test_metric.py::test_none_prediction_scores_wrong")


# ------------------------------------------------------------------------------------------------ table


TABLE_HEAD = "| area | bad input | outcome | checked by |\n|---|---|---|---|\n"


def render_table() -> str:
    head = ("# Reliability: bad inputs tried and what happens\n\n"
            "Generated from the registry in `tests/test_reliability.py` (`python tests/test_reliability.py` "
            "rewrites this file; `pytest tests/test_reliability.py` fails when it is out of date). Every row is "
            "checked by the test it names.\n\n" + TABLE_HEAD)

    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    def rows(section: str) -> str:
        return "".join(f"| {cell(c.area)} | {cell(c.bad_input)} | {cell(c.outcome)} | `{c.test}` |\n"
                       for c in CASES if c.section == section)

    text = head + rows("")
    for heading, intro in SECTIONS.items():
        text += f"\n## {heading}\n\n{intro}\n\n| area | bad input | outcome | checked by |\n|---|---|---|---|\n" + rows(heading)
    return text


def test_every_covered_case_names_an_existing_test():
    for c in CASES:
        path, _, name = c.test.partition("::")
        tree = ast.parse((REPO_ROOT / path).read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name in names, c.test


def test_reliability_table_is_current():
    assert DOC.is_file() and DOC.read_text(encoding="utf-8") == render_table(), \
        "docs/reliability.md is out of date: run python tests/test_reliability.py"




@case("resume", "two changes of settings within one second",
      "each set-aside gets its own name (`*.superseded-<time>-2.*`): no earlier set-aside is overwritten")
def test_set_asides_within_one_second_never_overwrite(tmp_path, monkeypatch):
    import time as _time

    from ancientbench.evaluation.store import PredictionStore

    monkeypatch.setattr(_time, "strftime", lambda fmt, t=None: "20261203T000000Z")
    path = tmp_path / "predictions_0shot.jsonl"
    kept = []
    for n in range(3):
        path.write_text(json.dumps({"run": n}) + "\n", encoding="utf-8")
        store = PredictionStore(path, {}, {})
        kept += store._set_aside()
    assert len({p.name for p in kept}) == 3
    assert sorted(json.loads(p.read_text())["run"] for p in kept) == [0, 1, 2]


@case("resume", "a stored prediction hand-edited to `pred: \"Z\"` or `logprobs: [1, 2]`",
      "never reused: a warning names it as malformed and the item is scored again; the file ends valid")
def test_malformed_stored_records_are_scored_again(tmp_path, fixture_data, tiny_qwen2, caplog):
    from ancientbench.evaluation import evaluate_model
    from ancientbench.reports.results import read_predictions

    kw = dict(data=fixture_data, tasks=["cloze"], shots=0, limit=3, output_dir=tmp_path / "out", progress=False,
              device="cpu", dtype="float32")
    model = tiny_qwen2.info["name_or_path"]
    first = evaluate_model(model, **kw)[0]
    path = Path(first["predictions_file"])
    recs = read_jsonl(path)
    recs[0]["pred"], recs[1]["logprobs"] = "Z", [1, 2]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    with logged_warning(caplog, "malformed"):
        again = evaluate_model(model, **kw)[0]
    assert again["timing"]["items_scored"] == 2 and again["timing"]["items_resumed"] == 1
    fixed = read_predictions(path)
    assert [r["pred"] for r in fixed] == [r["pred"] for r in read_jsonl(path)] and all(r["pred"] in "ABCD" for r in fixed)
    assert (again["tasks"], again["average"]) == (first["tasks"], first["average"])


# ------------------------------------------------------------------------ one line instead of a traceback


@case("model", "`--device tpu` (a device torch does not know)", "exit 2 before any weights load: `unknown --device 'tpu'`")
def test_unknown_device_is_one_line_before_loading(tmp_path, capsys, fixture_data, tiny_qwen2, monkeypatch):
    from ancientbench import models

    def refuse(*a, **k):
        raise AssertionError("weights were loaded before the device was checked")

    monkeypatch.setattr(models, "causal_lm_from_pretrained", refuse)
    folder = _model_folder(tmp_path, tiny_qwen2)
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--model", str(folder), "--device", "tpu")) == 2
    assert "unknown --device 'tpu'" in capsys.readouterr().err


@case("model", "a model folder whose `model.safetensors` is truncated",
      "exit 2: `the weights or config in … could not be loaded (SafetensorError: …); is a file truncated …?`")
def test_truncated_weights_are_one_line(tmp_path, capsys, fixture_data, tiny_qwen2):
    folder = _model_folder(tmp_path, tiny_qwen2)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--model", str(folder))) == 2
    err = capsys.readouterr().err
    assert f"the weights or config in {folder} could not be loaded" in err and "truncated" in err


@case("model", "a model folder whose `tokenizer.json` is not valid JSON",
      "exit 2: `the tokenizer files in … could not be read (JSONDecodeError: …)`")
def test_broken_tokenizer_file_is_one_line(tmp_path, capsys, fixture_data, tiny_qwen2):
    folder = _model_folder(tmp_path, tiny_qwen2)
    (folder / "tokenizer.json").write_text("{broken", encoding="utf-8")
    assert _cli(*_eval_args(fixture_data, tmp_path / "o", "--model", str(folder))) == 2
    assert f"the tokenizer files in {folder} could not be read" in capsys.readouterr().err


@case("resume", "a sidecar with `files_sha256: []`, or a sidecar that is a folder",
      "exit 2: `….meta.json: not a valid sidecar (files_sha256 and letter_token_ids must be objects)` / `….meta.json: Is a directory`")
def test_sidecar_of_the_wrong_shape_is_one_line(tmp_path, capsys, fixture_data):
    out = tmp_path / "o"
    assert _cli(*_eval_args(fixture_data, out)) == 0
    [meta] = list(out.rglob("predictions_0shot.meta.json"))
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "files_sha256": []}), encoding="utf-8")
    capsys.readouterr()
    assert _cli(*_eval_args(fixture_data, out)) == 2
    assert "not a valid sidecar (files_sha256 and letter_token_ids must be objects)" in capsys.readouterr().err
    meta.unlink()
    meta.mkdir()
    assert _cli(*_eval_args(fixture_data, out)) == 2
    assert f"{meta}: Is a directory" in capsys.readouterr().err


@case("files", "a suite, results or predictions file that is not UTF-8",
      "exit 2: `s.yaml: not UTF-8 (byte 25 is 0xff); save the file as UTF-8` / `results_0shot.json: not UTF-8 (byte 1 is 0xff)` / `predictions_0shot.jsonl, line 3: not UTF-8 (byte 1 of the line is 0xff)`")
def test_non_utf8_suite_results_and_predictions_are_one_line(tmp_path, capsys, fixture_data):
    suite = tmp_path / "s.yaml"
    suite.write_bytes(b"tasks: [cloze]\nmodels: [\xff\xfe]\n")
    assert _cli("run", str(suite)) == 2
    assert f"{suite}: not UTF-8 (byte 25 is 0xff); save the file as UTF-8" in capsys.readouterr().err
    out = tmp_path / "o"
    assert _cli(*_eval_args(fixture_data, out, tasks=("cloze", "radical"))) == 0
    [results] = list(out.rglob("results_0shot.json"))
    predictions = results.with_name("predictions_0shot.jsonl")
    with predictions.open("ab") as fh:
        fh.write(b"\xff\xfe\n")
    capsys.readouterr()
    assert _cli("report", str(results), "--out", str(tmp_path / "r")) == 2
    n = len(predictions.read_bytes().splitlines())
    assert f"{predictions}, line {n}: not UTF-8 (byte 1 of the line is 0xff)" in capsys.readouterr().err
    results.write_bytes(b"\xff\xfe{}")
    assert _cli("report", str(results), "--out", str(tmp_path / "r")) == 2
    assert f"{results}: not UTF-8 (byte 1 is 0xff)" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "compare", "reference"])
@case("arguments", "`report/compare/reference --seed -1`", "exit 2 from the parser: `expected a non-negative integer, got '-1'`")
def test_negative_seed_is_a_usage_error(command, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        _cli(command, "--seed", "-1", str(tmp_path), str(tmp_path))
    assert exit_.value.code == 2
    assert "expected a non-negative integer, got '-1'" in capsys.readouterr().err


@case("build", "`ancientbench build translation` without the build extras (opencc)",
      "exit 2, one line naming `pip install 'ancientbench[build]'`")
def test_build_without_build_extras_is_one_line(tmp_path):
    _assert_one_line_naming_the_build_extras(["build", "translation", "--out", str(tmp_path / "d")])


@case("quiz server", "a corrupt or hand-edited `session.json`",
      "exit 2: `session.json: not a valid quiz session (…); move it away …, or use another --out`")
def test_corrupt_quiz_session_is_one_line(tmp_path, capsys, fixture_data):
    from ancientbench import human

    human.HumanSession(tmp_path / "q", fixture_data, n_per_task=1, seed=0)
    session = tmp_path / "q" / human.HUMAN_NAME / "session.json"
    for text in ("{broken", json.dumps({**json.loads(session.read_text()), "seed": "seven"})):
        session.write_text(text, encoding="utf-8")
        with pytest.raises(human.SessionError, match="not a valid quiz session"):
            human.HumanSession(tmp_path / "q")


@case("cache", "an unwritable cache (HOME on a read-only or missing folder) when tiny-random must be built",
      "exit 2: `cannot write the model cache …; set ANCIENTBENCH_CACHE (or XDG_CACHE_HOME) to a writable folder`")
def test_unwritable_cache_is_one_line(tmp_path, capsys, fixture_data, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("ANCIENTBENCH_CACHE", str(blocker / "cache"))
    assert _cli(*_eval_args(fixture_data, tmp_path / "o")) == 2
    assert "set ANCIENTBENCH_CACHE" in capsys.readouterr().err


@case("output", "disk full (or any error) while a results, sidecar or state file is written",
      "one line naming the file (`…: no space left to write it (No space left on device) …`, exit 2 on the command line); the old file is untouched and no `.tmp` is left")
def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    import errno

    from ancientbench.fileio import atomic_write

    target = tmp_path / "results_0shot.json"
    atomic_write(target, "old")
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, "new")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["results_0shot.json"]


covered("server", "a server answering non-JSON, `text/plain`, `choices: []`/`null`, or a malformed `/v1/models`",
        "the run stops with one line naming the server (`answered a response that is not OpenAI-compatible …`); what was scored is kept",
        "tests/test_openai_backend.py::test_malformed_server_answers_are_one_clear_error")
covered("server", "string log-probabilities", "an error record naming the server (`log-probability that is no finite number <= 0`), never a score",
        "tests/test_openai_backend.py::test_string_logprobs_are_item_errors")


# ------------------------------------------------------------------- issue 33: hostile re-test, commands outside eval

HOSTILE_33 = "Issue 33: the hostile re-test, commands outside `eval`"
SECTIONS[HOSTILE_33] = ("Cases a hostile user found at b750ca2 (numbered as in the issue), each with a test in "
                        "`tests/test_hostile_commands.py` that fails on b750ca2 (the guards beside them - the shipped "
                        "data still load, single answers still parse - pass on both). Disk full is reproduced with "
                        "`RLIMIT_FSIZE` in a child process (EFBIG; ENOSPC and EDQUOT are handled alike).")
_HC = "tests/test_hostile_commands.py::"
for _area, _bad, _outcome, _test in (
    ("export-lm-eval", "(N2) `export-lm-eval DIR` into a folder holding the user's own files (`data/mydataset/test.jsonl`, "
     "`ancientbench_custom.yaml`)",
     "exit 2 before writing: `DIR: not empty (…) and not a folder written by export-lm-eval`; into an earlier export only "
     "the files its manifest (`.ancientbench-export.json`) lists are replaced or removed; a user's file where it would "
     "write, or one of its files edited since: exit 2 naming the file, nothing written",
     "test_n2_export_lm_eval_never_deletes_or_overwrites_the_users_files"),
    ("train-mini", "(N3) `train-mini` without `--output`",
     "the model goes to `<work>/model` (`runs/ancientbench-mini/model`), never into the package",
     "test_n3_train_mini_default_output_is_under_the_work_folder"),
    ("train-mini", "(N3) `--output` inside the installed package (the shipped folder), or a non-empty folder that "
     "train-mini did not write",
     "exit 2 before training: `--output …: inside the installed package` / `… not empty and not a model folder written "
     "by train-mini`; the shipped weights and `results.json` untouched",
     "test_n3_train_mini_never_writes_into_the_shipped_model"),
    ("quiz server", "(N5) `answers.jsonl` hand-edited (`gold`, `correct` or `task` changed)",
     "exit 2: `answers.jsonl, line 1: gold 'B' of question … is not what DATA says ('A')`; answers are scored "
     "against the data's gold (a changed data file: its gold, with a warning)",
     "test_n5_hand_edited_gold_in_the_quiz_answers_is_refused"),
    ("audit", "(N10) `audit --combined` on a config with one test item",
     "exit 2 before any figure: `…/test.jsonl: 1 test item; --combined needs at least 2 to cross-validate …`",
     "test_n10_combined_audit_of_a_one_item_task_says_the_minimum"),
    ("audit", "(N11) `audit nosuchconfig`",
     "exit 2: `unknown config 'nosuchconfig': … the configs in …/data: radical, cloze`",
     "test_n11_audit_of_an_unknown_config_lists_the_valid_ones"),
    ("finetune", "(N14) `finetune` on data whose `finetune-data --check` fails",
     "exit 2 before training: `DATA: fails the leakage check (1 of 2 pairs hold what the benchmark's test items ask, "
     "e.g. …)`; no checkpoint written",
     "test_n14_finetune_refuses_data_that_fails_the_leakage_check"),
    ("question set", "(N15) an option or question of only U+200B (or other format, control or space characters)",
     "error: `q.jsonl, row 2, field 'B': empty value: nothing is left once format characters … are removed`",
     "test_n15_an_option_or_question_of_only_invisible_characters_is_refused"),
    ("question set", "(N15) the shipped data files under the stricter check", "every one still loads",
     "test_n15_every_shipped_data_file_still_loads"),
    ("report", "(N17) SIGKILL during `report --out` into an old report (after the first plot, or between the swap's "
     "two renames)",
     "the old report stays whole: the report is written into a temporary sibling folder and swapped in whole; the next "
     "run undoes a half-done swap and removes the temporary; a file of the user's in the folder: exit 2, not replaced",
     "test_n17_a_report_killed_midway_leaves_the_old_report_whole"),
    ("generate", "(N18) generated answers `答案是A或B`, `選項A和選項C都對`, `A, C`",
     "unparsed (an extraction failure, counted wrong), not the first letter (`extract-2`)",
     "test_n18_an_answer_naming_two_options_is_unparsed"),
    ("generate", "(N18) one answer with a repeated letter or another option in a later clause (`答案是A。A正確`, "
     "`答案是B，A項錯誤`)", "still read as A / B; the extractor's earlier cases unchanged",
     "test_n18_one_answer_still_parses"),
    ("quiz server", "(N20) an answer to a question the page was never served",
     "400: `question … was not served to the page (GET /api/next first)`; nothing recorded",
     "test_n20_an_answer_to_an_item_never_served_is_refused"),
    ("quiz server", "(N21) a JSON body with a key given twice (`\"answer\": \"A\", \"answer\": \"B\"`)",
     "400: `malformed JSON: key 'answer' appears twice`; nothing recorded",
     "test_n21_a_body_with_a_duplicated_key_is_refused"),
    ("disk full", "`report` (PIL while saving a plot)",
     "exit 2: `…/radar_0shot.png: no space left to write it (File too large) …`; the old report untouched, no temporary",
     "test_disk_full_in_report_is_one_line_and_keeps_the_old_report"),
    ("disk full", "`tiny-model DIR`",
     "exit 2: one line naming `DIR/<file>`; no folder, no 0-byte files (copied into a temporary sibling, moved into "
     "place); the next try succeeds", "test_disk_full_in_tiny_model_is_one_line_and_leaves_no_folder"),
    ("disk full", "`human` when the session starts", "exit 2: one line naming the file under `--out`; no `session.json`, "
     "no temporary", "test_disk_full_when_the_quiz_starts_is_one_line"),
    ("disk full", "`human` while an answer is saved",
     "the page gets 507 with the line naming `answers.jsonl`; stderr one line; the partial line is cut, nothing "
     "recorded; the session resumes", "test_disk_full_while_an_answer_is_saved_keeps_the_answers_file_whole"),
):
    covered(_area, _bad, _outcome, _HC + _test, HOSTILE_33)


# ------------------------------------------------------------- hostile re-test of issue 33 (evaluation side)

HOSTILE_33_EVAL = "Issue 33: the hostile re-test, evaluation"
SECTIONS[HOSTILE_33_EVAL] = ("Cases a hostile user found at b750ca2 (numbered as in the issue), each with a test in "
                             "`tests/test_hostile_eval.py` that fails on b750ca2.")
covered("suite", "two entries of one model (`label: cloze-run`, `tasks: [cloze]` / `label: radical-run`, `tasks: [radical]`) that would write one `results_0shot.json`",
        "exit 2 before anything runs, naming both cells and the file; an entry's own `output` folder gives each cell its own results",
        "tests/test_hostile_eval.py::test_n1_two_suite_cells_never_share_one_results_file", HOSTILE_33_EVAL)
covered("server", "a typo in the openai backend's `--tokenizer` after a finished run",
        "exit 2 when the backend opens (`--tokenizer '…': no such folder …`), before stored predictions are checked: nothing set aside, the corrected rerun sends no request",
        "tests/test_hostile_eval.py::test_n4_a_tokenizer_typo_leaves_the_finished_run_in_place", HOSTILE_33_EVAL)
covered("resume", "stored predictions hand-edited: `gold` set to `pred`, or `pred` to `gold` (letter and ppl)",
        "never reused: a warning names them (`disagree with their item`) and they are scored again; the accuracy is the true one",
        "tests/test_hostile_eval.py::test_n5_hand_edited_gold_or_pred_is_never_reused", HOSTILE_33_EVAL)
covered("server", "a log-probability of JSON `null` (completions and chat)",
        "an item error naming the server (`log-probability that is no finite number <= 0 (None)`), not a TypeError",
        "tests/test_hostile_eval.py::test_n6_a_null_logprob_is_an_item_error_naming_the_server", HOSTILE_33_EVAL)
covered("server", "a log-probability `true` (the client reads it as 1.0) or a positive one (`+5.0`, `1e-9`)",
        "an item error naming the server (the raw body is checked for booleans), never a score",
        "tests/test_hostile_eval.py::test_n7_a_boolean_or_positive_logprob_is_an_item_error", HOSTILE_33_EVAL)
covered("suite", "`output: [a, b]` or `output: 5` (top level or in an entry)", "exit 2: `s.yaml, key 'output': expected a string, got ['a', 'b']`",
        "tests/test_hostile_eval.py::test_n8_suite_output_of_the_wrong_type_is_one_line", HOSTILE_33_EVAL)
covered("suite", "`base_url`, `timeout`, `tokenizer` or `backend_options` on an hf entry",
        "exit 2 with eval's refusal in the suite's words (`s.yaml, models[1]: base_url: not used by backend hf (…)`); in `defaults` they go to the server entries only",
        "tests/test_hostile_eval.py::test_n9_server_keys_on_an_in_process_backend_are_refused_in_a_suite", HOSTILE_33_EVAL)
covered("arguments", "`reference --shots -3`", "exit 2 from the parser (`expected a non-negative integer`); no `results_-3shot.json`",
        "tests/test_hostile_eval.py::test_n12_reference_refuses_negative_shots", HOSTILE_33_EVAL)
covered("question set", "`--fewshot-data` holding a test item under another id (options in another order)",
        "exit 2: `…dev.jsonl, row 2: exemplar 'cloze-innocent' is test item 'cloze-t3' under another id (same question and options) …`",
        "tests/test_hostile_eval.py::test_n13_a_test_item_among_the_exemplars_under_another_id_is_refused", HOSTILE_33_EVAL)
covered("server", "an openai `--tokenizer` folder whose `tokenizer.json` lacks `added_tokens`",
        "exit 2 before any request: `--tokenizer '…': the tokenizer files in this folder could not be read (KeyError: 'added_tokens')`",
        "tests/test_hostile_eval.py::test_n16_a_tokenizer_json_without_added_tokens_is_one_line", HOSTILE_33_EVAL)
covered("server", "items that errored on a broken server (HTTP 400), run again once it is fixed",
        "the same command scores just those items again (warning `retrying 2 item(s)`, `timing.items_retried`); the table's note says a rerun retries them",
        "tests/test_hostile_eval.py::test_n19_items_that_errored_are_retried_on_the_next_run", HOSTILE_33_EVAL)
covered("output", "disk full in `eval`: a predictions append cut short by the kernel (file size limit), ENOSPC at the results file's fsync",
        "exit 2: `…/predictions_0shot.jsonl: no space left to write it (File too large); free some space … and run the same command again`; whole records only are kept, no `.tmp`; the same command resumes",
        "tests/test_hostile_eval.py::test_disk_full_in_eval_is_one_line_and_keeps_what_was_written", HOSTILE_33_EVAL)


if __name__ == "__main__":
    DOC.write_text(render_table(), encoding="utf-8")
    print(f"wrote {DOC} ({len(CASES)} cases)")
