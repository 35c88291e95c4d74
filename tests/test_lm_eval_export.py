"""``ancientbench export-lm-eval``: lm-evaluation-harness runs the exported tasks with ancientbench's prompts and
picks the same letter as ``ancientbench eval`` on every item, zero-shot and 5-shot, on the tiny models.

lm-eval (0.4.x) is an optional test dependency (the ``test`` extra); without it these tests are skipped.
"""

from __future__ import annotations

import shutil

import pytest
import yaml
from support import check_export_command

from ancientbench.prompts import instruction, prompt_text
from ancientbench.publish import lm_eval_export
from ancientbench.schema import load_split
from ancientbench.tasks import COMPETENCY_TASKS, LETTERS, TASK_NAMES

lm_eval = pytest.importorskip("lm_eval", reason="lm-eval is an optional test dependency (pip install '.[test]')")

FIXTURE_TASKS = ("radical", "radical_meaning", "homophone", "excdoc_word", "cloze")  # tests/conftest.py


class _Loader(yaml.SafeLoader):
    """Reads lm-eval YAMLs: `!function module.name` as its text."""


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def read_yaml(path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)


@pytest.fixture(scope="module")
def exported(fixture_data, tmp_path_factory):
    """Exported in one folder, then moved: the folder must hold everything lm-eval needs (no absolute paths)."""
    first = tmp_path_factory.mktemp("lm_eval_first")
    lm_eval_export.export(first, data=fixture_data)
    out = tmp_path_factory.mktemp("lm_eval_moved") / "tasks"
    shutil.move(str(first), str(out))
    written = {p.stem: p for p in out.glob("*.yaml")}
    return out, written


def test_exported_folder_is_portable(exported, fixture_data):
    out, written = exported
    for path in [*written.values(), out / "ancientbench_data.py"]:
        text = path.read_text(encoding="utf-8")
        assert str(fixture_data) not in text and "lm_eval_first" not in text and "/tmp" not in text, path
    assert (out / "data" / "radical" / "test.jsonl").read_bytes() == (fixture_data / "data" / "radical" / "test.jsonl").read_bytes()


def test_export_writes_tasks_and_groups(exported, fixture_data):
    out, written = exported
    assert sorted(written) == sorted(
        [f"ancientbench_{t}" for t in FIXTURE_TASKS]
        + ["_ancientbench", "_ancientbench_competency_glyph", "_ancientbench_competency_pronunciation",
           "_ancientbench_competency_meaning", "_ancientbench_competency_context"]
    )
    cfg = read_yaml(out / "ancientbench_radical.yaml")
    assert cfg["custom_dataset"] == "!function ancientbench_data.load" and cfg["dataset_kwargs"] == {"ancientbench_task": "radical"}
    assert (cfg["test_split"], cfg["fewshot_split"], cfg["fewshot_config"]) == ("test", "dev", {"sampler": "first_n"})
    assert cfg["description"] == instruction("radical")
    assert cfg["doc_to_text"] == "题目：{{question}}\nA. {{A}}\nB. {{B}}\nC. {{C}}\nD. {{D}}\n答案是："
    assert (cfg["doc_to_choice"], cfg["doc_to_target"], cfg["target_delimiter"]) == (list(LETTERS), "answer", "")
    glyph = read_yaml(out / "_ancientbench_competency_glyph.yaml")
    assert glyph["task"] == ["ancientbench_radical", "ancientbench_radical_meaning"]
    assert glyph["aggregate_metric_list"][0]["weight_by_size"] is False
    top = read_yaml(out / "_ancientbench.yaml")
    assert top["task"] == [f"ancientbench_competency_{c}" for c in ("glyph", "pronunciation", "meaning", "context")]


def test_space_style_and_hub_source(tmp_path, fixture_data):
    written = lm_eval_export.export(tmp_path, data=fixture_data, letter_style="space", tasks=["cloze"])
    cfg = read_yaml(written["ancientbench_cloze"])
    assert cfg["target_delimiter"] == " " and cfg["metadata"]["letter_style"] == "space"
    assert sorted(written) == ["_ancientbench", "_ancientbench_competency_context", "ancientbench_cloze"]
    hub = lm_eval_export.task_config("cloze", hub_id="org/ancientbench")
    assert (hub["dataset_path"], hub["dataset_name"]) == ("org/ancientbench", "cloze") and "dataset_kwargs" not in hub


def test_cli_run_and_errors(tmp_path, fixture_data, capsys):
    check_export_command(lm_eval_export, tmp_path, fixture_data, capsys, "wrote 5 tasks and 5 groups",
                         "warning: left out (no test/dev data): pronunciation, phonetic_radical, tradoc_word, phonetic_loan, translation")


@pytest.mark.parametrize("shots", [0, 5])
def test_lm_eval_predictions_equal_ancientbench(tiny_model, fixture_data, exported, shots):
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from ancientbench.evaluation import evaluate_model

    ours = evaluate_model(
        tiny_model.model, tiny_model.tokenizer, tasks=list(FIXTURE_TASKS), shots=shots, data=fixture_data, progress=False
    )[shots]
    by_id = {r["id"]: r for r in ours["predictions"]}

    out, _ = exported
    # loaded from the saved folder, as `lm_eval --model hf --model_args pretrained=DIR` does
    lm = HFLM(pretrained=tiny_model.info["name_or_path"], dtype="float32", device="cpu", batch_size=4)
    tm = TaskManager(include_path=str(out), include_defaults=False)
    res = lm_eval.simple_evaluate(model=lm, tasks=["ancientbench"], num_fewshot=shots, task_manager=tm, log_samples=True)

    compared = 0
    for task in FIXTURE_TASKS:
        test = load_split(fixture_data, task, "test")
        dev = load_split(fixture_data, task, "dev")
        samples = res["samples"][f"ancientbench_{task}"]
        assert len(samples) == len(test)
        for s in samples:
            item = next(it for it in test if it["id"] == s["doc"]["id"])
            # the same prompt text, character for character, and the bare letters as continuations
            assert [a[0] for a in s["arguments"]] == [prompt_text(task, item, dev[:shots])] * 4
            assert [a[1] for a in s["arguments"]] == list(LETTERS)
            lls = [float(r[0]) for r in s["filtered_resps"]]
            mine = by_id[item["id"]]
            assert mine["shots_used"] == shots
            assert LETTERS[lls.index(max(lls))] == mine["pred"], item["id"]
            assert lls == pytest.approx(mine["logprobs"], abs=1e-4)
            compared += 1
        assert res["results"][f"ancientbench_{task}"]["acc,none"] == pytest.approx(ours["tasks"][task]["accuracy"])
    assert compared == sum(r["total"] for r in ours["tasks"].values()) == len(FIXTURE_TASKS) * 7

    # competency groups are the paper's competency scores; the top group is the mean of the tasks (lm-eval 0.4.13
    # aggregates groups over leaf tasks), and scores_from_lm_eval gives back the paper's average exactly
    for comp, score in ours["competencies"].items():
        assert res["results"][f"ancientbench_competency_{comp}"]["acc,none"] == pytest.approx(score)
    task_accs = [ours["tasks"][t]["accuracy"] for t in TASK_NAMES if t in ours["tasks"]]
    assert res["results"]["ancientbench"]["acc,none"] == pytest.approx(sum(task_accs) / len(task_accs))
    paper = lm_eval_export.scores_from_lm_eval(res)
    assert paper["average"] == pytest.approx(ours["average"])
    assert paper["competencies"] == pytest.approx(ours["competencies"])
    assert set(COMPETENCY_TASKS) == set(paper["competencies"])
    assert paper["limited"] == {} and paper["complete"] is False  # five of the ten tasks


def test_scores_from_lm_eval_flags_limited_runs():
    full = {"results": {"ancientbench_cloze": {"acc,none": 0.5}}, "n-samples": {"ancientbench_cloze": {"original": 4, "effective": 4}}}
    assert lm_eval_export.scores_from_lm_eval(full)["limited"] == {}
    limited = {"results": {"ancientbench_cloze": {"acc,none": 0.5}}, "n-samples": {"ancientbench_cloze": {"original": 4000, "effective": 4}}}
    r = lm_eval_export.scores_from_lm_eval(limited)
    assert r["limited"] == {"cloze": {"effective": 4, "original": 4000}} and r["complete"] is False


def test_exporting_into_a_used_folder_leaves_no_stale_task(tmp_path, fixture_data):
    from ancientbench.publish.lm_eval_export import export

    out = tmp_path / "tasks"
    export(out, data=fixture_data, tasks=["radical", "cloze"])
    assert (out / "ancientbench_radical.yaml").is_file() and (out / "data" / "radical").is_dir()
    export(out, data=fixture_data, tasks=["cloze"])
    assert sorted(p.name for p in out.glob("*.yaml")) == ["_ancientbench.yaml", "_ancientbench_competency_context.yaml",
                                                          "ancientbench_cloze.yaml"]
    assert sorted(p.name for p in (out / "data").iterdir()) == ["cloze"]
