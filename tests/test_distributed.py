"""Data-parallel evaluation: ``torchrun --nproc_per_node 2 -m ancientbench.cli eval`` on CPU (two gloo
processes, each scoring a shard) writes the same predictions and results as a single-process run, and
resumes from an interrupted run's files - the main file with a torn last line and another process's part
file - scoring only what is missing."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from support import REPO_ROOT, read_jsonl

from ancientbench.evaluation import PredictionStore, ResumeError, distributed, evaluate_model

SHOTS = (0, 2)
TASKS = ["radical", "homophone", "cloze"]


def run_eval(*args, nproc: int):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO_ROOT), TOKENIZERS_PARALLELISM="false")
    for var in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    cmd = [*launcher, "-m", "ancientbench.cli", "eval", *args]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc.stdout


def assert_same_predictions(a, b):
    assert [(r["id"], r["task"], r["gold"], r["pred"], r["shots_used"]) for r in a] == \
        [(r["id"], r["task"], r["gold"], r["pred"], r["shots_used"]) for r in b]
    for ra, rb in zip(a, b):  # batches differ between the runs: float32 rounding only
        assert max(abs(x - y) for x, y in zip(ra["logprobs"], rb["logprobs"])) < 1e-5


def test_two_processes_equal_one_and_resume(tiny_qwen2, fixture_data, tmp_path):
    model_dir = tiny_qwen2.info["name_or_path"]
    common = ["--model", model_dir, "--data", str(fixture_data), "--tasks", *TASKS, "--shots", *map(str, SHOTS),
              "--device", "cpu", "--dtype", "float32", "--batch-size", "2", "--no-progress"]
    single = tmp_path / "single"
    evaluate_model(model_dir, tasks=TASKS, shots=SHOTS, data=fixture_data, device="cpu", dtype="float32",
                   batch_size=2, output_dir=single, progress=False)
    slug = os.path.basename(model_dir)
    ref = {k: read_jsonl(single / slug / f"predictions_{k}shot.jsonl") for k in SHOTS}
    n = len(TASKS) * 7

    # an interrupted two-process run: 0-shot has radical's 7 items and 2 of homophone's in the main file (plus a
    # torn line) and cloze's 7 in the part file of process 1, one of them made for another version of its item
    # (scored again alone); 2-shot never started. A task with items missing (homophone) is scored again whole
    # (one scoring block per task here: runner.BLOCK_ITEMS), so radical's 7 and 6 of cloze's are resumed
    multi = tmp_path / "multi"
    (multi / slug).mkdir(parents=True)
    shutil.copy(single / slug / "predictions_0shot.meta.json", multi / slug / "predictions_0shot.meta.json")
    lines = (single / slug / "predictions_0shot.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (multi / slug / "predictions_0shot.jsonl").write_text("".join(lines[:9]) + lines[9][:25], encoding="utf-8")
    stale = json.loads(lines[16])
    stale["item_sha256"] = "0" * len(stale["item_sha256"])
    part = "".join(lines[14:16]) + json.dumps(stale, ensure_ascii=False) + "\n" + "".join(lines[17:21])
    (multi / slug / "predictions_0shot.part1.jsonl").write_text(part, encoding="utf-8")

    out = run_eval(*common, "--output", str(multi), nproc=2)
    assert out.count("results: ") == 1  # only the main process prints
    for k in SHOTS:
        got = read_jsonl(multi / slug / f"predictions_{k}shot.jsonl")
        assert_same_predictions(got, ref[k])
        res = json.loads((multi / slug / f"results_{k}shot.json").read_text(encoding="utf-8"))
        one = json.loads((single / slug / f"results_{k}shot.json").read_text(encoding="utf-8"))
        for key in ("tasks", "competencies", "average", "micro_accuracy", "complete", "data", "prompt"):
            assert res[key] == one[key], key
        assert res["setting"]["processes"] == 2 and res["setting"]["letter_token_ids"] == one["setting"]["letter_token_ids"]
        resumed = 13 if k == 0 else 0
        assert res["timing"]["items_resumed"] == resumed and res["timing"]["items_scored"] == n - resumed
        per_process = res["timing"]["items_per_process"]
        assert len(per_process) == 2 and min(per_process) > 0 and sum(per_process) == n - resumed  # both worked
    assert not list((multi / slug).glob("*.part*.jsonl"))  # merged into the main file, then removed


def test_part_files_are_read_and_need_their_sidecar(tmp_path):
    path = tmp_path / "predictions_0shot.jsonl"
    rec = {"id": "x-1", "task": "cloze", "gold": "A", "pred": "B", "logprobs": [0, 0, 0, 0], "shots_used": 0}
    store = PredictionStore(path, {"shots": 0}, {}, part=1)
    store.append([rec])
    assert store.write_path.name == "predictions_0shot.part1.jsonl" and not path.exists()
    with pytest.raises(ResumeError, match="part1.jsonl exists without its predictions_0shot.meta.json"):
        PredictionStore(path, {"shots": 0}, {}).load()
    main = PredictionStore(path, {"shots": 0}, {})
    main.write_meta()
    assert main.load() == {"x-1": rec}
    main.finalize([rec])
    assert read_jsonl(path) == [rec] and not store.write_path.exists()
    PredictionStore(path, {"shots": 0}, {}, part=3).append([rec])
    PredictionStore(path, {"shots": 0}, {}, overwrite=True)  # --overwrite removes part files too
    assert not list(tmp_path.glob("*.jsonl"))


def test_single_process_and_refusals(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    procs = distributed.init()
    assert procs.num_processes == 1 and procs.is_main_process and procs.shard([1, 2]) == [1, 2]
    assert distributed.process_device(procs, "cuda:1") == "cuda:1"
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="cannot be combined with 2 processes"):
        distributed.init("cuda", device_map="auto")
    with pytest.raises(ValueError, match="cannot be used with several processes"):
        distributed.init("mps")


def test_device_map_auto_scores_like_a_plain_load(tiny_llama, fixture_data):
    """Model parallelism (``--device-map auto``, accelerate's big-model loading) loads and scores through the
    same path (inputs go to the embedding's device, letters are read where the LM head's output is). On a
    CPU-only machine the whole model lands on the CPU (transformers then sets no ``hf_device_map``), so this
    checks the loading path and the predictions, not the spreading over several GPUs."""
    from ancientbench.models import load_model

    folder = tiny_llama.info["name_or_path"]
    mapped = load_model(folder, device_map="auto", dtype="float32")
    assert mapped.info["device"] in ("cpu", "device_map=auto: cpu")
    assert {p.device.type for p in mapped.model.parameters()} == {"cpu"}
    kwargs = dict(tasks=["radical", "cloze"], shots=2, data=fixture_data, batch_size=3, progress=False)
    got = evaluate_model(mapped.model, mapped.tokenizer, **kwargs)[2]["predictions"]
    ref = evaluate_model(tiny_llama.model, tiny_llama.tokenizer, **kwargs)[2]["predictions"]
    assert_same_predictions(got, ref)
