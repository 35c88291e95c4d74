"""A user task (issue 37, point 8): a question file whose ``task`` is not one of the ten, passed to ``eval --tasks``,
is scored like the ten in every mode, stored and resumed, and reported on its own row outside the competency means,
the average and micro accuracy; a name of the ten, a bad row or a few-shot run without exemplars is one error line."""

import importlib.util
import json
import random
import shutil

import pytest
from support import REPO_ROOT, make_item, read_jsonl

from ancientbench import cli
from ancientbench.aggregate import aggregate, bootstrap_ci
from ancientbench.schema import write_jsonl
from ancientbench.tasks import TASK_NAMES, USER_TASK_NOTE, TaskError

EXAMPLE = REPO_ROOT / "docs" / "examples" / "user-task"  # the example the docs show: 4 test items, 5 dev rows
NAME = "虛詞"
TEN = ("radical", "cloze")


def _eval(fixture_data, out, *tasks, shots=("0", "5"), extra=()):
    return cli.main(["eval", "--model", "tiny-random", "--data", str(fixture_data), "--tasks", *tasks,
                     "--shots", *shots, "--output", str(out), "--no-progress", *extra])


def _results(out, k):
    return json.loads((out / "tiny-random" / f"results_{k}shot.json").read_text(encoding="utf-8"))


def test_a_user_task_runs_beside_the_ten_and_leaves_their_figures_as_they_were(fixture_data, tmp_path, capsys):
    mine = shutil.copytree(EXAMPLE, tmp_path / "mine")
    assert _eval(fixture_data, tmp_path / "with", *TEN, str(mine)) == 0
    printed = capsys.readouterr().out
    assert _eval(fixture_data, tmp_path / "without", *TEN) == 0
    capsys.readouterr()
    for k in (0, 5):
        a, b = _results(tmp_path / "with", k), _results(tmp_path / "without", k)
        for key in ("competencies", "average", "micro_accuracy", "complete"):
            assert a[key] == b[key], key
        assert {t: a["tasks"][t] for t in TEN} == b["tasks"]
        row = a["tasks"][NAME]
        assert row["total"] == 4 and row["competency"] is None and row["user_task"] is True
        assert a["user_tasks"] == [NAME] and a["user_task_note"] == USER_TASK_NOTE and "user_tasks" not in b
        preds = [p for p in read_jsonl(tmp_path / "with" / "tiny-random" / f"predictions_{k}shot.jsonl") if p["task"] == NAME]
        assert [p["id"] for p in preds] == [f"xuci-t{i}" for i in range(1, 5)] and {p["shots_used"] for p in preds} == {k}
        assert row["correct"] == sum(p["pred"] == p["gold"] for p in preds)
        assert any(f.endswith("mine/test.jsonl") for f in a["data"]["files_sha256"])
        assert any(f.endswith("mine/dev.jsonl") for f in a["data"]["files_sha256"]) == (k > 0)
    table_row = next(line for line in printed.splitlines() if line.startswith(NAME))
    assert table_row.split()[:4] == [NAME, "(user", "task)", "4"]
    assert f"note: {NAME}: {USER_TASK_NOTE}" in printed

    # stored and resumed like the ten: a second run scores nothing and gives the same figures
    assert _eval(fixture_data, tmp_path / "with", *TEN, str(mine)) == 0
    again = _results(tmp_path / "with", 5)
    assert again["timing"]["items_scored"] == 0 and again["timing"]["items_resumed"] == 18
    assert again["tasks"][NAME] == _results(tmp_path / "with", 5)["tasks"][NAME]

    # the report: the user task in its own table with the note, the averages those of the run without it
    assert cli.main(["report", str(tmp_path / "with"), "--output", str(tmp_path / "rep"), "--no-plots",
                     "--resamples", "200"]) == 0
    md = capsys.readouterr().out
    assert "### User tasks" in md and f"{NAME}: {USER_TASK_NOTE}." in md and f"| {NAME} (user task) |" in md
    assert cli.main(["report", str(tmp_path / "without"), "--output", str(tmp_path / "rep0"), "--no-plots",
                     "--resamples", "200"]) == 0
    assert "User tasks" not in capsys.readouterr().out
    with_, without = (json.loads((tmp_path / d / "summary.json").read_text(encoding="utf-8")) for d in ("rep", "rep0"))
    for k in ("0", "5"):
        (ra,), (rb,) = with_["settings"][k]["rows"], without["settings"][k]["rows"]
        for key in ("average", "micro_accuracy", "competencies", "n_items"):
            assert ra[key] == rb[key], key
        assert {t: ra["tasks"][t] for t in TEN} == rb["tasks"] and ra["tasks"][NAME]["user_task"] is True
        assert with_["settings"][k]["user_tasks"] == {"tasks": [NAME], "note": USER_TASK_NOTE}
    assert "ancientbench-0shot-user" in (tmp_path / "rep" / "tables.tex").read_text(encoding="utf-8")

    # compare: the ten's items, paired; a user task is left out of it, as out of every mean
    with_0, without_0 = (tmp_path / d / "tiny-random" / "results_0shot.json" for d in ("with", "without"))
    assert cli.main(["compare", str(with_0), str(without_0), "--json", "-", "--resamples", "100"]) == 0
    cmp_ = json.loads(capsys.readouterr().out)
    assert cmp_["n_items"] == 14 and cmp_["average"]["diff"] == 0 and set(cmp_["tasks"]) == set(TEN)

    # a run of the user task alone: its row, no competency, no average; nothing of the ten to compare
    assert _eval(fixture_data, tmp_path / "only", str(mine), shots=("0",)) == 0
    only = _results(tmp_path / "only", 0)
    assert list(only["tasks"]) == [NAME] and only["competencies"] == {} and only["average"] is None
    assert only["tasks"][NAME] == _results(tmp_path / "with", 0)["tasks"][NAME]
    capsys.readouterr()
    only_0 = tmp_path / "only" / "tiny-random" / "results_0shot.json"
    assert cli.main(["compare", str(only_0), str(only_0)]) == 2
    assert "no items of the ten tasks to compare" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["letter", "ppl", "generate"])
def test_every_mode_scores_a_user_task_with_its_own_name_and_exemplars(mode, fixture_data, tmp_path):
    extra = ["--mode", mode, "--log-samples", "--max-new-tokens", "4"]
    assert _eval(fixture_data, tmp_path, "cloze", str(EXAMPLE), shots=("1",), extra=extra) == 0
    folder = next(tmp_path.iterdir())
    res = json.loads((folder / "results_1shot.json").read_text(encoding="utf-8"))
    assert res["tasks"][NAME]["user_task"] is True and res["setting"]["mode"] == mode
    preds = [p for p in read_jsonl(folder / "predictions_1shot.jsonl") if p["task"] == NAME]
    assert len(preds) == 4 and all(p["shots_used"] == 1 for p in preds)
    dev = read_jsonl(EXAMPLE / "dev.jsonl")[0]
    for p in preds:  # the generic template, naming the user task; its first dev row is the exemplar
        assert f"以下是关于{NAME}的单项选择题" in p["prompt"] and dev["question"] in p["prompt"]
    if mode == "ppl":
        assert all(len(p["option_logprobs"]) == 4 for p in preds)


def _user_file(path, task, n=4, seed=0, **change):
    rng = random.Random(seed)
    rows = [make_item(task, f"u{seed}-{i}", rng) for i in range(n)]
    rows[-1].update(change)
    write_jsonl(path, rows) if not change else path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _refusals(tmp_path, fixture_data):
    """(--tasks entries, --shots, words of the one error line) of every refused user task."""
    d = tmp_path / "in"
    d.mkdir()
    few = d / "few"
    few.mkdir()
    _user_file(few / "test.jsonl", "mine")
    _user_file(few / "dev.jsonl", "mine", n=2, seed=1)
    both = d / "both"
    both.mkdir()
    _user_file(both / "test.jsonl", "mine", seed=2)
    questions = d / "questions.jsonl"
    _user_file(questions, "couplet")
    clash = d / "clash.jsonl"
    write_jsonl(clash, [make_item("mine", "x", random.Random(3)) | {"id": "radical-t0"}])
    return [
        ([_user_file(d / "ten.jsonl", "radical")], "0", "ten.jsonl, row 1, field 'task': task 'radical' is one of the ten"),
        ([_user_file(d / "comp.jsonl", "glyph")], "0", "comp.jsonl, row 1, field 'task': task 'glyph' is a competency"),
        ([_user_file(d / "three.jsonl", "mine", D=None)], "0", "three.jsonl, row 4, field 'D': must be a string"),
        ([_user_file(d / "letter.jsonl", "mine", answer="E")], "0", "letter.jsonl, row 4, field 'answer'"),
        ([_user_file(d / "nodev.jsonl", "mine")], "5", "5-shot needs dev rows of user task 'mine'"),
        ([few], "5", "dev.jsonl: 5-shot needs 5 dev rows of user task 'mine'; this file has 2"),
        ([d / "absent.jsonl"], "0", "--tasks " + str(d / "absent.jsonl") + ": no such question file or folder"),
        ([d], "0", "test.jsonl: missing file: a user task's folder holds test.jsonl"),
        ([few, both], "0", "field 'task': user task 'mine' is read from two --tasks paths"),
        ([clash], "0", "clash.jsonl, row 1, field 'id': duplicate id 'radical-t0'"),
        (["--data", questions], "0", "questions.jsonl, row 1, field 'task': unknown task 'couplet'"),
    ]


def test_refused_user_tasks_are_one_error_line_and_write_nothing(fixture_data, tmp_path, capsys):
    for entries, shots, words in _refusals(tmp_path, fixture_data):
        out = tmp_path / "out"
        if entries[0] == "--data":
            argv = ["eval", "--model", "tiny-random", "--data", str(entries[1]), "--shots", shots, "--output", str(out)]
        else:
            argv = ["eval", "--model", "tiny-random", "--data", str(fixture_data), "--tasks", "radical",
                    *map(str, entries), "--shots", shots, "--output", str(out)]
        assert cli.main(argv) == 2, words
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err and "Traceback" not in err, (words, err)
        assert not list(tmp_path.rglob("results_*.json"))
    assert "pass its file to --tasks" in err  # the --data refusal points to the user-task way


def test_aggregate_and_metric_keep_user_tasks_outside_every_mean():
    rng = random.Random(7)
    tasks = [rng.choice(TASK_NAMES) for _ in range(300)]
    correct = [rng.random() < 0.6 for _ in tasks]
    users = [rng.choice(["mine", "詩經"]) for _ in range(80)]
    user_ok = [rng.random() < 0.3 for _ in users]
    ten, both = aggregate(correct, tasks), aggregate(correct + user_ok, tasks + users)
    assert {k: both[k] for k in ten if k != "tasks"} == {k: v for k, v in ten.items() if k != "tasks"}
    assert {t: both["tasks"][t] for t in ten["tasks"]} == ten["tasks"]
    assert both["user_tasks"] == ["mine", "詩經"] and both["user_task_note"] == USER_TASK_NOTE
    assert both["tasks"]["mine"]["competency"] is None and both["tasks"]["mine"]["total"] == users.count("mine")
    ci_ten, ci_both = bootstrap_ci(correct, tasks, n_resamples=300), bootstrap_ci(correct + user_ok, tasks + users, n_resamples=300)
    assert ci_both["average"] == ci_ten["average"] and ci_both["micro_accuracy"] == ci_ten["micro_accuracy"]
    assert ci_both["competencies"] == ci_ten["competencies"] and set(ci_both["tasks"]) == set(ci_ten["tasks"]) | {"mine", "詩經"}
    with pytest.raises(TaskError, match="competency"):
        aggregate([True], ["glyph"])

    # the self-contained metric: the same figures, with user tasks named in user_tasks, and refusals
    import evaluate

    metric = evaluate.load(str(REPO_ROOT / "metrics" / "ancientbench_metric"))
    pred = ["A" if ok else "B" for ok in correct + user_ok]
    got = metric.compute(predictions=pred, references=["A"] * len(pred), tasks=tasks + users,
                         user_tasks=["mine", "詩經"], n_resamples=300)
    assert got == {**both, "ci": ci_both}
    with pytest.raises(ValueError, match=r"unknown task 'mine'.*user_tasks=\[\.\.\.\]"):
        metric.compute(predictions=["A"], references=["A"], tasks=["mine"])
    with pytest.raises(ValueError, match="user_tasks: 'cloze' is one of the ten"):
        metric.compute(predictions=["A"], references=["A"], tasks=["cloze"], user_tasks=["cloze"])
    metric.add_batch(predictions=["A"], references=["A"], tasks=["mine"], user_tasks=["mine"])
    metric.add_batch(predictions=["B"], references=["A"], tasks=["cloze"])
    out = metric.compute(n_resamples=0)
    assert out["average"] == 0.0 and out["tasks"]["mine"]["user_task"] is True and out["n"] == 1
    spec = importlib.util.spec_from_file_location("_abm_user", REPO_ROOT / "metrics" / "ancientbench_metric" / "ancientbench_metric.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.USER_TASK_NOTE == USER_TASK_NOTE  # the metric's copy says what the package says


def test_the_loader_takes_a_path_object_and_keeps_user_tasks_after_the_ten(fixture_data):
    from pathlib import Path

    from ancientbench.dataset import load_questions

    q = load_questions([Path(EXAMPLE), "cloze"], fixture_data, shots=[0, 5], limit=3)
    assert list(q.items) == ["cloze", NAME] and q.user_tasks == (NAME,) and len(q.items[NAME]) == 3
    assert q.exemplars[NAME] == read_jsonl(EXAMPLE / "dev.jsonl") and q.n_available[NAME] == 4
    assert set(q.files_for(0)) < set(q.files_for(5)) and any(f.endswith("user-task/dev.jsonl") for f in q.files_for(5))
