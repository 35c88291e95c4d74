"""``ancientbench export-lighteval``: lighteval (0.13, in its own venv ``.harnesses/lighteval``) runs the exported
tasks offline and picks the same letter as ``ancientbench eval`` on every item, with the same log-probabilities
(1e-4), zero-shot and 5-shot, on the tiny Qwen2 model and on the shipped ``ancientbench-mini``.

Differences of lighteval's design, corrected by the export or named (each checked below):
- lighteval renders the tokenizer's chat template whenever it has one; the paper's letter mode is the plain
  prompt, so the run passes ``override_chat_template=false`` (the command the export prints does too);
- its few-shot exemplars are written ``query + " " + gold`` (``答案是： A``): the module writes the exemplars into
  the query itself, so the prompt lighteval scores is ancientbench's character for character;
- its continuations are tokenised apart from the context: identical for byte-level BPE (these models), not for
  SentencePiece/Metaspace tokenizers, which prepend ``▁`` to a lone ``A`` (named by the last test; docs say so).

The harness env comes from ``bash scripts/harness_env.sh lighteval`` (.ci/run runs it, then these tests: pytest -m harness).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from support import REPO_ROOT, assert_self_contained, check_export_command, export_moved, shipped_subset

from ancientbench.evaluation import evaluate_model
from ancientbench.paths import MINI_PATH
from ancientbench.prompts import prompt_text
from ancientbench.publish import lighteval_export
from ancientbench.schema import load_split
from ancientbench.tasks import LETTERS

PYTHON = REPO_ROOT / ".harnesses" / "lighteval" / "bin" / "python"
TASKS = ("radical", "homophone")  # two competencies (glyph, pronunciation)
N_ITEMS = 24
SHOTS = (0, 5)

needs_lighteval = pytest.mark.harness("lighteval")  # run by .ci/run's second step, in .harnesses/lighteval (conftest checks it)


@pytest.fixture(scope="module")
def subset(tmp_path_factory):
    """The shipped data of TASKS, test cut to its first N_ITEMS rows, dev whole."""
    return shipped_subset(tmp_path_factory.mktemp("lighteval_subset"), TASKS, N_ITEMS)


@pytest.fixture(scope="module")
def exported(subset, tmp_path_factory):
    """Exported in one folder, then moved: the module must find its data beside itself."""
    return export_moved(lighteval_export.export, subset, tmp_path_factory.mktemp("lighteval_first"),
                        tmp_path_factory.mktemp("lighteval_moved") / "tasks")


def test_export_is_portable_and_self_contained(exported, subset):
    source = (exported / lighteval_export.MODULE_NAME).read_text(encoding="utf-8")
    assert_self_contained(source, exported, str(subset), "lighteval_first")
    assert (exported / "data" / "radical" / "test.jsonl").read_bytes() == (subset / "data" / "radical" / "test.jsonl").read_bytes()
    assert "config_name: homophone" in (exported / "data" / "README.md").read_text(encoding="utf-8")


def test_cli_run_and_errors(tmp_path, subset, capsys):
    p = check_export_command(lighteval_export, tmp_path, subset, capsys, "with 2 tasks",
                             "warning: left out (no test/dev data): radical_meaning, pronunciation, phonetic_radical, excdoc_word,")
    # a Hub export reads ORG/NAME's configs and leaves no stale data copy behind
    assert lighteval_export.run(p.parse_args([str(tmp_path / "x"), "--hub-id", "org/ancientbench", "--tasks", "cloze"])) == 0
    assert not (tmp_path / "x" / "data").exists()
    source = (tmp_path / "x" / lighteval_export.MODULE_NAME).read_text(encoding="utf-8")
    assert "HUB_ID = 'org/ancientbench'" in source and "TASKS = ['cloze']" in source


def read_details(out_dir) -> dict:
    """``{(task, shots): [detail rows]}`` from the parquet files ``lighteval --save-details`` writes."""
    import pyarrow.parquet as pq

    found = {}
    for path in sorted(out_dir.rglob("details_*.parquet")):
        spec = path.name[len("details_"):].rsplit("_", 1)[0]  # ancientbench:radical|5
        name, shots = spec.split("|")
        found[(name.split(":", 1)[1], int(shots))] = pq.read_table(path).to_pylist()
    return found


def run_lighteval(model_dir, exported, work) -> dict:
    """The exported launcher (lighteval's CLI, built-in tasks skipped: they reach the network on import), offline.

    The model is copied into ``work`` and named relatively: lighteval 0.13.0 keeps its response cache in
    ``cache_dir / model_name``, which for an absolute model path is the model's own folder."""
    shutil.copytree(model_dir, work / "model")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("PYTHONPATH", None)  # lighteval's venv, not ours
    specs = ",".join(f"ancientbench:{t}|{k}" for t in TASKS for k in SHOTS)
    # the paper's letter mode reads the plain prompt: lighteval renders the chat template whenever the tokenizer has
    # one (both models here do) unless told not to
    model_args = (f"model_name=model,override_chat_template=false,dtype=float32,device=cpu,batch_size=32,"
                  f"cache_dir={work / 'cache'}")
    cmd = [str(PYTHON), str(exported / lighteval_export.LAUNCHER_NAME), "accelerate", model_args, specs,
           "--custom-tasks", str(exported / lighteval_export.MODULE_NAME), "--output-dir", str(work / "out"),
           "--save-details"]
    proc = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return read_details(work / "out")


@needs_lighteval
@pytest.mark.parametrize("model", ["tiny-qwen2", "ancientbench-mini"])
def test_lighteval_predictions_equal_ancientbench(model, request, subset, exported, tmp_path):
    model_dir = request.getfixturevalue("tiny_qwen2").info["name_or_path"] if model == "tiny-qwen2" else str(MINI_PATH)
    ours = evaluate_model(model_dir, tasks=list(TASKS), shots=SHOTS, data=subset, device="cpu", dtype="float32",
                          progress=False)
    details = run_lighteval(model_dir, exported, tmp_path)
    assert sorted(details) == sorted((t, k) for t in TASKS for k in SHOTS)

    compared = 0
    for (task, shots), rows in details.items():
        test, dev = load_split(subset, task, "test"), load_split(subset, task, "dev")
        by_id = {r["id"]: r for r in ours[shots]["predictions"] if r["task"] == task}
        assert len(rows) == len(test) == N_ITEMS
        for row in rows:
            doc, response = row["doc"], row["model_response"]
            specific = json.loads(doc["specific"]) if isinstance(doc["specific"], str) else doc["specific"]
            item = next(it for it in test if it["id"] == specific["id"])
            # the prompt lighteval scores is ancientbench's, exemplars included; no exemplar of lighteval's own
            assert doc["query"] == prompt_text(task, item, dev[:shots])
            assert doc["fewshot_samples"] in (None, [])
            assert list(doc["choices"]) == list(LETTERS)
            mine = by_id[item["id"]]
            lls = [float(x) for x in response["logprobs"]]
            assert LETTERS[lls.index(max(lls))] == mine["pred"], (model, task, shots, item["id"])
            assert lls == pytest.approx(mine["logprobs"], abs=1e-4)
            assert row["metric"]["acc"] == float(mine["pred"] == item["answer"])
            compared += 1
    assert compared == len(TASKS) * len(SHOTS) * N_ITEMS


def test_metaspace_tokenizers_differ_by_design(tiny_llama):
    """What lighteval scores for a SentencePiece/Metaspace tokenizer: the letter encoded alone gets a ``▁``, so
    it is not the token that follows ``答案是：`` in the prompt (docs/harnesses.md names this)."""
    tok = tiny_llama.tokenizer
    alone = tok.encode("A", add_special_tokens=False)
    in_prompt = tok.encode("答案是：A", add_special_tokens=False)[-1:]
    assert tok.convert_ids_to_tokens(in_prompt) == ["A"]
    assert tok.convert_ids_to_tokens(alone) != ["A"] and tok.convert_ids_to_tokens(alone)[0].startswith("▁")
