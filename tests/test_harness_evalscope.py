"""``ancientbench export-evalscope``: EvalScope (1.14, in its own venv ``.harnesses/evalscope``) runs the exported
benchmark offline and picks the same letter as ``ancientbench eval`` on every item, with the same log-probabilities
(1e-4), zero-shot and 5-shot, on the tiny Qwen2 model and on the shipped ``ancientbench-mini``.

EvalScope has no log-likelihood request, so the export's form is the closest faithful one (``CLOSEST_FORM``): one
greedy token with ``top_logprobs`` over the whole vocabulary, the argmax over the four letters. Differences of
EvalScope's design the export corrects (checked below):
- it renders the tokenizer's chat template (``user: ...`` without one): the run passes the module's
  ``PLAIN_CHAT_TEMPLATE`` in ``model_args`` (TaskConfig's ``chat_template`` does not reach the local model), which
  writes the prompt verbatim, so the model reads ancientbench's plain prompt (the log-probabilities show it);
- its few-shot block and templates are replaced by ancientbench's prompt (the first k ``dev`` rows in order).

The harness env comes from ``bash scripts/harness_env.sh evalscope`` (.ci/run runs it, then these tests: pytest -m harness).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from support import REPO_ROOT, assert_self_contained, check_export_command, export_moved, shipped_subset

from ancientbench.evaluation import evaluate_model
from ancientbench.paths import MINI_PATH
from ancientbench.prompts import prompt_text
from ancientbench.publish import evalscope_export
from ancientbench.schema import load_split, split_file
from ancientbench.tasks import LETTERS

PYTHON = REPO_ROOT / ".harnesses" / "evalscope" / "bin" / "python"
TASKS = ("radical", "homophone")  # two competencies (glyph, pronunciation)
N_ITEMS = 24
SHOTS = (0, 5)

needs_evalscope = pytest.mark.harness("evalscope")  # run by .ci/run's second step, in .harnesses/evalscope (conftest checks it)

# what a user writes: import the module (registers "ancientbench"), then EvalScope's run_task, once per shot count
DRIVER = """
import sys
sys.path.insert(0, sys.argv[1])
import ancientbench_evalscope as ab
from evalscope import TaskConfig, run_task
for shots in (0, 5):
    run_task(TaskConfig(model=sys.argv[2], eval_type="llm_ckpt", datasets=["ancientbench"], eval_batch_size=4,
                        model_args={"chat_template": ab.PLAIN_CHAT_TEMPLATE, "precision": "float32", "device_map": "cpu"},
                        dataset_args={"ancientbench": {"few_shot_num": shots}},
                        work_dir=f"{sys.argv[3]}/{shots}shot", no_timestamp=True))
"""


@pytest.fixture(scope="module")
def subset(tmp_path_factory):
    """The shipped data of TASKS, test cut to its first N_ITEMS rows, dev whole."""
    return shipped_subset(tmp_path_factory.mktemp("evalscope_subset"), TASKS, N_ITEMS)


@pytest.fixture(scope="module")
def exported(subset, tmp_path_factory):
    """Exported in one folder, then moved: the module must find its data beside itself."""
    return export_moved(evalscope_export.export, subset, tmp_path_factory.mktemp("evalscope_first"),
                        tmp_path_factory.mktemp("evalscope_moved") / "bench")


def test_export_is_portable_and_self_contained(exported, subset):
    source = (exported / evalscope_export.MODULE_NAME).read_text(encoding="utf-8")
    assert_self_contained(source, exported, str(subset), "evalscope_first")
    assert "CLOSEST_FORM" in source
    assert (exported / "data" / "radical_test.jsonl").read_bytes() == split_file(subset, "radical", "test").read_bytes()
    assert sorted(p.name for p in (exported / "data").iterdir()) == sorted(f"{t}_{s}.jsonl" for t in TASKS for s in ("test", "dev"))


def test_cli_run_and_errors(tmp_path, subset, capsys):
    p = check_export_command(evalscope_export, tmp_path, subset, capsys, "with 2 subsets (radical, homophone)",
                             "warning: left out (no test/dev data): radical_meaning,")
    assert evalscope_export.run(p.parse_args([str(tmp_path / "x"), "--hub-id", "org/ancientbench", "--tasks", "cloze"])) == 0
    assert 'dataset_hub="huggingface"' in capsys.readouterr().out
    assert not (tmp_path / "x" / "data").exists()
    source = (tmp_path / "x" / evalscope_export.MODULE_NAME).read_text(encoding="utf-8")
    assert "HUB_ID = 'org/ancientbench'" in source and "TASKS = ['cloze']" in source


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_evalscope(model_dir, exported, work) -> dict:
    """``{(task, shots): [(review, prediction)]}`` from the files EvalScope writes (reviews/, predictions/)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               MODELSCOPE_CACHE=str(work / "modelscope"))
    env.pop("PYTHONPATH", None)  # EvalScope's venv, not ours
    proc = subprocess.run([str(PYTHON), "-c", DRIVER, str(exported), str(model_dir), str(work / "out")], env=env,
                          cwd=work, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    found = {}
    for shots in SHOTS:
        for task in TASKS:
            reviews = list((work / "out" / f"{shots}shot" / "reviews").rglob(f"ancientbench_{task}.jsonl"))
            predictions = list((work / "out" / f"{shots}shot" / "predictions").rglob(f"ancientbench_{task}.jsonl"))
            assert len(reviews) == len(predictions) == 1, (shots, task)
            by_index = {r["index"]: r for r in read_jsonl(predictions[0])}
            found[(task, shots)] = [(r, by_index[r["index"]]) for r in read_jsonl(reviews[0])]
    return found


@needs_evalscope
@pytest.mark.parametrize("model", ["tiny-qwen2", "ancientbench-mini"])
def test_evalscope_predictions_equal_ancientbench(model, request, subset, exported, tmp_path):
    model_dir = request.getfixturevalue("tiny_qwen2").info["name_or_path"] if model == "tiny-qwen2" else str(MINI_PATH)
    ours = evaluate_model(model_dir, tasks=list(TASKS), shots=SHOTS, data=subset, device="cpu", dtype="float32",
                          progress=False)
    found = run_evalscope(model_dir, exported, tmp_path)

    compared = 0
    for (task, shots), rows in found.items():
        test, dev = load_split(subset, task, "test"), load_split(subset, task, "dev")
        by_id = {r["id"]: r for r in ours[shots]["predictions"] if r["task"] == task}
        assert len(rows) == len(test) == N_ITEMS
        for review, prediction in rows:
            score = review["sample_score"]
            item = next(it for it in test if it["id"] == score["sample_metadata"]["id"])
            # the model read ancientbench's prompt as the one user turn, rendered verbatim by PLAIN_CHAT_TEMPLATE
            assert [m["content"] for m in review["messages"] if m["role"] != "assistant"] == [prompt_text(task, item, dev[:shots])]
            mine = by_id[item["id"]]
            assert score["score"]["extracted_prediction"] == mine["pred"], (model, task, shots, item["id"])
            top = prediction["model_output"]["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            lps = {t["token"]: t["logprob"] for t in top}
            assert sorted(lps) == list(LETTERS)  # the whole vocabulary was returned: every letter is there
            assert [lps[x] for x in LETTERS] == pytest.approx(mine["logprobs"], abs=1e-4)
            assert score["score"]["value"]["accuracy"] == float(mine["pred"] == item["answer"])
            compared += 1
    assert compared == len(TASKS) * len(SHOTS) * N_ITEMS
