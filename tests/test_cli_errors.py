"""User errors reach the command line as one 'error:' line and exit status 2, never a traceback."""

import json

from ancientbench import cli


def test_bad_data_file_is_one_error_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x"}) + "\n", encoding="utf-8")
    assert cli.main(["eval", "--model", "tiny-random", "--data", str(bad), "--shots", "0", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bad.jsonl, row 1, field 'task': missing field" in err
    assert "Traceback" not in err


def test_unknown_task_is_one_error_line(tmp_path, capsys):
    assert cli.main(["eval", "--model", "tiny-random", "--tasks", "radicals", "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "unknown task 'radicals'" in err


def test_debug_variable_shows_the_traceback(tmp_path, monkeypatch):
    import pytest

    monkeypatch.setenv("ANCIENTBENCH_DEBUG", "1")
    with pytest.raises(ValueError):
        cli.main(["eval", "--model", "tiny-random", "--tasks", "radicals", "--output", str(tmp_path)])


def test_missing_model_folder_is_one_clear_error_line(tmp_path, capsys):
    import pytest

    from ancientbench.models import load_model

    missing = tmp_path / "no-such-model"
    for name in (str(missing), "./no-such-model-dir", "../no/such/model", "~/no-such-model-dir", "a/b/c"):
        with pytest.raises(FileNotFoundError, match="model not found: .* is not a local folder"):
            load_model(name)
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="is a file, not a model folder"):
        load_model(weights)
    args = ["eval", "--model", str(missing), "--tasks", "cloze", "--limit", "1", "--shots", "0",
            "--output", str(tmp_path / "o"), "--no-progress"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: model not found: ") and str(missing) in err and "Repo id" not in err


def test_finetune_user_errors_are_one_error_line(tmp_path, capsys):
    """finetune's own errors (bad settings, missing data) go through the same handler as eval's."""
    args = ["finetune", "--model", "tiny-random", "--output", str(tmp_path / "run"), "--no-progress"]
    assert cli.main([*args, "--data", str(tmp_path), "--batch-size", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --batch-size and --grad-accum must be >= 1") and "Traceback" not in err
    assert cli.main([*args, "--data", str(tmp_path / "no-such-data")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no-such-data" in err and "Traceback" not in err
