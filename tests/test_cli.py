"""`ancientbench eval` end to end on tiny models over the fixture dataset, zero-shot and 5-shot."""

import json
from pathlib import Path

import pytest
from support import FIXTURE_TASKS, N_TEST, read_jsonl

from ancientbench.cli import main


def test_eval_cli_zero_and_five_shot(tiny_qwen2, fixture_data, tmp_path, capsys):
    model_dir = tiny_qwen2.info["name_or_path"]
    argv = ["eval", "--model", model_dir, "--data", str(fixture_data), "--tasks", *FIXTURE_TASKS,
            "--shots", "0", "5", "--batch-size", "4", "--output", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["model", "setting", "Glyph", "Pronunciation", "Meaning", "Context", "Average", "top", "answer", "%"]
    folder = tmp_path / Path(model_dir).name
    for k in (0, 5):
        res = json.loads((folder / f"results_{k}shot.json").read_text(encoding="utf-8"))
        assert res["setting"]["shots"] == k and res["data"]["n_items"] == N_TEST * len(FIXTURE_TASKS)
        assert res["model"]["name_or_path"] == model_dir and res["model"]["device"] == "cpu"
        preds = read_jsonl(folder / f"predictions_{k}shot.jsonl")
        assert len(preds) == res["data"]["n_items"] and all(p["shots_used"] == k for p in preds)
        row = next(line for line in lines if f"{k}-shot" in line and line.startswith(model_dir))
        dist = res["answer_letters"]  # the last cells: average, then the top answer and its share (! when flagged)
        tail = [f"{100 * res['average']:.2f}", dist["top"], f"{100 * dist['top_share']:.1f}"] + (["!"] if dist["not_answering"] else [])
        assert row.split()[-len(tail):] == tail
        assert str(folder / f"results_{k}shot.json") in out

    # a second run resumes: nothing is rescored and the numbers are the same
    assert main(argv) == 0
    again = json.loads((folder / "results_5shot.json").read_text(encoding="utf-8"))
    assert again["timing"]["items_scored"] == 0 and again["timing"]["items_resumed"] == N_TEST * len(FIXTURE_TASKS)


def test_eval_cli_chat_and_space_letters(tiny_qwen2, fixture_data, tmp_path):
    model_dir = tiny_qwen2.info["name_or_path"]
    argv = ["eval", "--model", model_dir, "--data", str(fixture_data), "--tasks", "cloze", "--shots", "5",
            "--chat", "--letter-style", "space", "--output", str(tmp_path), "--no-progress", "--no-prefix-cache"]
    assert main(argv) == 0
    res = json.loads((tmp_path / f"{Path(model_dir).name}-chat-space" / "results_5shot.json").read_text())
    assert res["setting"]["chat"] is True and res["setting"]["letter_style"] == "space"
    assert res["setting"]["prefix_cache"] is False
    tok = tiny_qwen2.tokenizer
    assert res["setting"]["letter_token_ids"] == {x: tok.convert_tokens_to_ids("Ġ" + x) for x in "ABCD"}


def test_eval_cli_tiny_random_smoke_model(fixture_data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANCIENTBENCH_CACHE", str(tmp_path / "cache"))
    argv = ["eval", "--model", "tiny-random", "--data", str(fixture_data), "--tasks", "radical", "cloze",
            "--shots", "0", "5", "--limit", "3", "--output", str(tmp_path / "out"), "--no-progress"]
    assert main(argv) == 0
    res = json.loads((tmp_path / "out" / "tiny-random" / "results_5shot.json").read_text())
    assert res["model"]["smoke_model"] is True and res["model"]["name_or_path"] == "tiny-random"
    assert res["model"]["weights_sha256"] and res["model"]["num_parameters"] > 0
    assert res["data"]["limit"] == 3 and res["complete"] is False
    assert "smoke model" in capsys.readouterr().out
    assert (tmp_path / "cache" / "tiny-random-v1" / "config.json").is_file()


def test_eval_cli_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--model", "x", "--letter-style", "lower"])
    assert "invalid choice" in capsys.readouterr().err


def test_version_plain_descriptions_and_no_machine_paths_in_help(capsys):
    from ancientbench import __version__
    from ancientbench.cli import COMMANDS, main

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith(f"ancientbench {__version__} (dataset ")
    for command in COMMANDS:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        description = text.split("\n\n")[1]
        assert "``" not in description and not description.lower().startswith(f"ancientbench {command}"), (command, description)
        assert "/work/" not in text and str(Path.home()) not in text and "/tmp/" not in text, (command, text)


def test_tiny_model_command_writes_a_loadable_folder(tmp_path, capsys):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ancientbench.cli import main

    out = tmp_path / "tiny"
    assert main(["tiny-model", str(out)]) == 0
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
    model = AutoModelForCausalLM.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert model.config.vocab_size >= len(tok)
    assert main(["tiny-model", str(out)]) == 2  # not an empty folder: one error line, nothing overwritten
    assert "not an empty folder" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--help"], ["-h"]])
def test_top_level_help_lists_every_command(argv, capsys):
    from ancientbench.cli import COMMANDS

    with pytest.raises(SystemExit) as e:
        main(argv)
    out = capsys.readouterr().out
    assert e.value.code == 0 and all(name in out for name in COMMANDS)


def test_no_argument_prints_the_command_list(capsys):
    from ancientbench.cli import COMMANDS

    assert main([]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in COMMANDS) and "30%)" in err


@pytest.mark.parametrize("extra,words", [
    (["--base-url", "http://127.0.0.1:1/v1"], "--base-url: not used by --backend hf"),
    (["--backend-option", "top_logprobs=5"], "--backend-option: not used by --backend hf"),
    (["--tokenizer", "x"], "--tokenizer: not used"),
    (["--timeout", "30"], "--timeout: not used"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:1/v1", "--timeout", "nan"], "--timeout must be a positive"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:1/v1", "--max-retries", "-1"], "--max-retries must be >= 0"),
])
def test_flags_the_backend_would_ignore_or_cannot_use_are_errors(extra, words, tmp_path, capsys):
    argv = ["eval", "--model", "tiny-random", "--tasks", "cloze", "--limit", "1", "--output", str(tmp_path), *extra]
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_a_revision_of_a_model_without_revisions_is_an_error(tmp_path, capsys):
    argv = ["eval", "--model", "tiny-random", "--revision", "nosuchrev", "--tasks", "cloze", "--limit", "1",
            "--output", str(tmp_path)]
    assert main(argv) == 2
    assert "--revision nosuchrev" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_no_progress_also_silences_the_weight_loading_bar(fixture_data, tmp_path, capsys):
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()
    try:
        argv = ["eval", "--model", "tiny-random", "--data", str(fixture_data), "--tasks", "cloze", "--limit", "1",
                "--shots", "0", "--output", str(tmp_path), "--no-progress"]
        assert main(argv) == 0
        assert "Loading weights" not in capsys.readouterr().err
    finally:
        hf_logging.enable_progress_bar()


def test_every_command_writing_a_folder_takes_output_and_out():
    from ancientbench.cli import COMMANDS, build_parser

    takes = []
    for command in COMMANDS:
        if command in ("build", "report", "eval", "run", "human", "finetune", "finetune-data", "train-mini", "ladder", "reference"):
            parser = build_parser(command)
            sub = next(a for a in parser._actions if a.dest == "command").choices[command]
            flags = {s for a in sub._actions for s in a.option_strings}
            assert {"--output", "--out"} <= flags, command
            takes.append(command)
    assert len(takes) == 10


def test_an_unwritable_destination_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["tiny-model", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(blocker) in err and "Traceback" not in err and len(err.splitlines()) == 1


# commands that show progress (bars or step lines) while they work; each takes --no-progress, and only they do
LONG_COMMANDS = ("build", "audit", "eval", "run", "ladder", "reference", "finetune", "train-mini", "register", "push-to-hub", "inject",
                 "train-inject")


def test_every_long_command_accepts_no_progress():
    from ancientbench.cli import COMMANDS, build_parser

    have = []
    for command in COMMANDS:
        parser = build_parser(command)
        sub = next(a for a in parser._actions if a.dest == "command").choices[command]
        if any("--no-progress" in a.option_strings for a in sub._actions):
            have.append(command)
    assert sorted(have) == sorted(LONG_COMMANDS)
    for command in ("build", "audit", "reference", "train-mini", "register"):  # accepted on the command line, not only listed
        assert build_parser(command).parse_args([command, "--no-progress"]).no_progress is True


def test_no_progress_drops_the_step_lines_and_leaves_the_environment_as_it_was(tmp_path, capsys, monkeypatch):
    import os

    from ancientbench.cli import QUIET_ENV

    for k in QUIET_ENV:
        monkeypatch.delenv(k, raising=False)
    argv = ["reference", "--rows", "chance", "--limit", "2", "--shots", "0"]  # the bundled data, two items a task
    assert main([*argv, "--output", str(tmp_path / "a")]) == 0
    shown = capsys.readouterr()  # progress is logged (stderr); the files written are the command's output
    assert "Chance: cloze" in shown.err and "wrote" in shown.out
    assert main([*argv, "--output", str(tmp_path / "b"), "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert "Chance: cloze" not in quiet.err + quiet.out and "wrote" in quiet.out
    assert not any(k in os.environ for k in QUIET_ENV)
