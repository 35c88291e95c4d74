"""``ancientbench run SUITE.yaml``: cells expanded from one file, run, resumed per cell, one combined report."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import yaml

from ancientbench import suites
from ancientbench.suites import SuiteError, load_suite, run_suite

REPO_ROOT = Path(__file__).resolve().parent.parent


def _write(path: Path, obj) -> Path:
    path.write_text(yaml.safe_dump(obj, allow_unicode=True), encoding="utf-8")
    return path


def test_cells_expand_models_backends_modes_shots(tmp_path):
    suite = load_suite(_write(tmp_path / "s.yaml", {
        "output": str(tmp_path / "out"),
        "defaults": {"shots": [0, 5], "limit": 2},
        "models": [
            "org/base-7b",
            {"model": "org/chat-7b", "mode": ["letter", "generate"], "chat": True},
            {"model": "served", "backend": "openai", "base_url": "http://127.0.0.1:1/v1", "mode": "generate",
             "shots": 0, "label": "API model", "backend_options": {"top_logprobs": 5}},
        ],
    }))
    assert [c.key for c in suite.cells] == [
        "org/base-7b | hf | letter | 0-shot", "org/base-7b | hf | letter | 5-shot",
        "org/chat-7b (chat) | hf | letter | 0-shot", "org/chat-7b (chat) | hf | letter | 5-shot",
        "org/chat-7b (generate) | hf | generate | 0-shot", "org/chat-7b (generate) | hf | generate | 5-shot",
        "API model | openai | generate | 0-shot",
    ]
    assert suite.cells[0].options == {"limit": 2}
    api = suite.cells[-1]
    assert api.options["base_url"] == "http://127.0.0.1:1/v1" and api.options["backend_options"] == {"top_logprobs": 5}
    assert suite.cells[0].spec_sha256() != suite.cells[1].spec_sha256()


@pytest.mark.parametrize("bad, message", [
    ({"models": []}, r"key 'models': give a non-empty list"),
    ({"models": [{"model": "m", "shot": 5}]}, r"models\[1\]: unknown key\(s\) shot"),
    ({"models": [{"model": "m", "backend": "nope"}]}, r"models\[1\], key 'backend': unknown backend 'nope'"),
    ({"models": [{"model": "m", "mode": "cot"}]}, r"models\[1\], key 'mode': unknown mode 'cot'"),
    ({"models": [{"model": "m", "shots": [0, -1]}]}, r"models\[1\], key 'shots'"),
    ({"models": [{"label": "x"}]}, r"models\[1\], key 'model': missing"),
    ({"models": ["m", "m"]}, r"two cells are both 'm \| hf \| letter \| 0-shot'"),
    ({"model": ["m"]}, r"unknown key\(s\) model"),
    ({"models": [{"model": "m", "chat": "no"}]}, r"models\[1\], key 'chat': Input should be a valid boolean"),
    ({"models": [{"model": "m", "limit": "ten"}]}, r"models\[1\], key 'limit'"),
    ({"models": [{"model": "m", "max_length": "abc"}]}, r"models\[1\], key 'max_length'"),
    ({"models": [{"model": "m", "tasks": 5}]}, r"models\[1\], key 'tasks'"),
    ({"models": [{"model": "m", "timeout": -1}]}, r"models\[1\], key 'timeout'"),
    ({"models": ["m"], "report": {"resamples": "many"}}, r"report, key 'resamples'"),
])
def test_bad_suite_files_name_file_entry_and_key(tmp_path, bad, message):
    path = _write(tmp_path / "bad.yaml", bad)
    with pytest.raises(SuiteError, match=re.escape(str(path)) + ".*" + message if "models[" in message else message):
        load_suite(path)


def test_a_single_task_string_is_one_task_not_its_letters(tmp_path):
    suite = load_suite(_write(tmp_path / "s.yaml", {"models": [{"model": "m", "tasks": "cloze", "shots": 0}]}))
    assert suite.cells[0].options["tasks"] == ["cloze"]


def test_example_suite_for_the_paper_loads():
    suite = load_suite(REPO_ROOT / "configs" / "paper.yaml")
    labels = sorted({c.label for c in suite.cells})
    assert len(labels) == 12
    assert {c.shots for c in suite.cells} == {0, 5} and len(suite.cells) == 24


def test_tiny_random_suite_runs_resumes_and_reports(tmp_path, fixture_data, monkeypatch, capsys):
    """Two cells (tiny-random, 0- and 5-shot) -> Table 2 and Table 3 of one report, figures equal to the cells'
    own results files; a rerun skips both cells without scoring; a changed option re-enters its cells only."""
    out = tmp_path / "results"
    path = _write(tmp_path / "tiny.yaml", {
        "output": str(out), "report": {"out": str(tmp_path / "report"), "plots": False, "resamples": 50},
        "defaults": {"data": str(fixture_data), "limit": 3, "batch_size": 4, "device": "cpu", "dtype": "float32"},
        "models": [{"model": "tiny-random", "shots": [0, 5]}],
    })
    log = io.StringIO()
    summary = run_suite(load_suite(path), progress=False, out=log)
    cells = summary["cells"]
    assert list(cells) == ["tiny-random | hf | letter | 0-shot", "tiny-random | hf | letter | 5-shot"]
    assert all(not v["skipped"] for v in cells.values())
    results = {k: json.loads(Path(v["results_file"]).read_text()) for k, v in cells.items()}
    assert [r["setting"]["shots"] for r in results.values()] == [0, 5]

    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "Zero-shot" in md and "5-shot" in md
    rows = summary["report"]["settings"]
    for k, r in zip(("0", "5"), results.values()):
        [row] = rows[k]["rows"]
        assert row["label"] == "tiny-random"
        assert row["average"]["score"] == pytest.approx(r["average"])
        assert {t: v["correct"] for t, v in row["tasks"].items()} == {t: v["correct"] for t, v in r["tasks"].items()}
        assert f"{100 * r['average']:.1f}" in md
    state = json.loads((out / "suite_state.json").read_text())
    assert set(state) == set(cells)

    capsys.readouterr()
    assert suites.run(suites_args(path, list="")) == 0
    assert capsys.readouterr().out.splitlines() == [
        "tiny-random | hf | letter | 0-shot: done", "tiny-random | hf | letter | 5-shot: done"]

    # rerun: both cells are done; nothing is scored (evaluate_model must not be called)
    import ancientbench.evaluation as evaluation

    def no_eval(*a, **k):
        raise AssertionError("a finished cell was run again")

    monkeypatch.setattr(evaluation, "evaluate_model", no_eval)
    log = io.StringIO()
    again = run_suite(load_suite(path), progress=False, out=log)
    assert all(v["skipped"] for v in again["cells"].values())
    assert "[1/2] tiny-random | hf | letter | 0-shot: done" in log.getvalue()
    assert again["report"]["settings"]["0"]["rows"][0]["average"] == rows["0"]["rows"][0]["average"]

    # the same suite with another limit is another setting: its cells are entered again
    spec = yaml.safe_load(path.read_text())
    spec["defaults"]["limit"] = 2
    _write(path, spec)
    with pytest.raises(AssertionError, match="run again"):
        run_suite(load_suite(path), progress=False, out=io.StringIO(), report=False)


def test_failed_cell_is_reported_and_others_run(tmp_path, fixture_data, capsys):
    out = tmp_path / "results"
    path = _write(tmp_path / "two.yaml", {
        "output": str(out), "report": {"plots": False, "resamples": 20},
        "defaults": {"data": str(fixture_data), "limit": 2, "device": "cpu", "dtype": "float32", "shots": 0},
        "models": [{"model": str(tmp_path / "no-such-model")}, {"model": "tiny-random"}],
    })
    rc = suites.run(suites_args(path))
    assert rc == 1
    err = capsys.readouterr()
    assert "1 cell(s) failed: no-such-model | hf | letter | 0-shot" in err.err
    assert (out / "report" / "report.md").is_file()
    assert "tiny-random" in (out / "report" / "report.md").read_text(encoding="utf-8")


def suites_args(path, **kw):
    import argparse

    parser = argparse.ArgumentParser()
    suites.add_arguments(parser)
    flags = [a for k, v in kw.items() for a in ((f"--{k}", v) if v else (f"--{k}",))]
    return parser.parse_args([str(path), "--no-progress", *flags])


def test_suite_over_two_backends_one_report(tmp_path, fixture_data):
    """One model in process (hf) and through an OpenAI-compatible server (the logprob stub, letter mode): two
    rows of one table, labelled apart, with the same figures (the server's log-probabilities are the model's)."""
    pytest.importorskip("openai", reason="the openai backend needs the [serve] extra")
    from serving_support import StubServer, model_scorer
    from support import FIXTURE_CHARS

    from ancientbench.tiny import build_tiny

    folder = build_tiny(tmp_path / "tiny", "qwen2", corpus=FIXTURE_CHARS, vocab_size=1200, seed=0)
    with StubServer(str(folder), model_scorer(folder)) as server:
        path = _write(tmp_path / "two.yaml", {
            "output": str(tmp_path / "results"), "report": {"plots": False, "resamples": 20},
            "defaults": {"data": str(fixture_data), "limit": 3, "shots": 0, "device": "cpu", "dtype": "float32"},
            "models": [{"model": str(folder), "backend": ["hf", "openai"], "base_url": server.base_url,
                        "backend_options": {"top_logprobs": 2000}}],
        })
        summary = run_suite(load_suite(path), progress=False, out=io.StringIO())
    assert list(summary["cells"]) == ["tiny | hf | letter | 0-shot", "tiny (openai) | openai | letter | 0-shot"]
    rows = {r["label"]: r for r in summary["report"]["settings"]["0"]["rows"]}
    assert set(rows) == {"tiny", "tiny (openai)"}
    assert rows["tiny"]["tasks"] == rows["tiny (openai)"]["tasks"]
    md = (tmp_path / "results" / "report" / "report.md").read_text(encoding="utf-8")
    assert "tiny (openai)" in md and "Zero-shot" in md
