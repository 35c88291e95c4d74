"""``ancientbench export-opencompass``: OpenCompass 0.5.4 runs the exported configs with ancientbench's prompts and
picks the same letter as ``ancientbench eval`` on every item (2 tasks x 0/5 shots x 20 shipped items) on the tiny
Qwen2 and Llama models and the shipped ``ancientbench-mini``; the generate form extracts the same letters.

OpenCompass runs offline in its own environment (``.harnesses/opencompass``, made by ``scripts/harness_env.sh
opencompass``; .ci/run makes it, then runs these tests with `pytest -m harness`; without it they fail). Differences by design, each named and checked here:

- OpenCompass's ``PPLInferencer`` scores the whole sequence (prompt + letter) by its mean token loss (``PPL``) and
  picks the lowest; ancientbench scores the letter's log-probability. The prompt is the same for the four labels
  and each letter is one token after it, so ``N * (PPL_X - PPL_Y) = logp(Y) - logp(X)`` (N: the sequence's tokens)
  and the argmin is the argmax: checked, with the float32 rounding of a mean over N tokens as the only tolerance.
- OpenCompass 0.5.4 needs transformers 4.x, which cannot read the ``TokenizersBackend`` class name transformers 5
  writes into ``tokenizer_config.json``: the model folders are copied with ``PreTrainedTokenizerFast`` (the same
  ``tokenizer.json``, inputs ``input_ids`` and ``attention_mask``); the identical texts and scores below show the
  tokenisation is the same.
- The chat model's generated text keeps special tokens OpenCompass does not skip; compared after removing them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import REPO_ROOT, check_export_command

from ancientbench import DATASET_PATH
from ancientbench.prompts import prompt_text
from ancientbench.publish import opencompass_export as oc
from ancientbench.schema import load_split, write_jsonl
from ancientbench.tasks import LETTERS

OC_PYTHON = REPO_ROOT / ".harnesses" / "opencompass" / "bin" / "python"
TASKS = ("radical", "cloze")
N_ITEMS = 20
MINI = Path(__file__).resolve().parent.parent / "ancientbench" / "mini" / "ancientbench-mini"
GEN_TOKENS = 12  # the tiny models write noise: a few tokens are enough to compare generation and extraction


needs_oc = pytest.mark.harness("opencompass")  # run by .ci/run's second step, in .harnesses/opencompass (conftest checks it)


@pytest.fixture(scope="module")
def shipped_subset(tmp_path_factory) -> Path:
    """The first 20 test items and the five dev exemplars of two shipped tasks, as a dataset folder."""
    out = tmp_path_factory.mktemp("oc_data")
    for t in TASKS:
        write_jsonl(out / "data" / t / "test.jsonl", load_split(DATASET_PATH, t, "test")[:N_ITEMS])
        write_jsonl(out / "data" / t / "dev.jsonl", load_split(DATASET_PATH, t, "dev"))
    return out


def _oc_copy(src: Path, dst: Path) -> Path:
    """The model folder as transformers 4.x reads it (tokenizer class name only; see the module doc)."""
    shutil.copytree(src, dst)
    cfg_path = dst / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    if cfg.get("tokenizer_class") == "TokenizersBackend":
        cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
        cfg["model_input_names"] = ["input_ids", "attention_mask"]  # the generic class would add token_type_ids
    cfg_path.write_text(json.dumps(cfg, ensure_ascii=False, indent=2), encoding="utf-8")
    return dst


RUN_CONFIG = """from mmengine.config import read_base
from opencompass.models import {model_type}

with read_base():
{imports}
    from .summarizers.ancientbench import summarizer

# the generation budget of the test (the export's is ancientbench's default, 1024 new tokens)
datasets = [dict(d, infer_cfg=dict(d["infer_cfg"], inferencer=dict(d["infer_cfg"]["inferencer"], max_out_len={tokens})))
            for d in [{datasets}]]
models = [{models}]
"""


def _run_opencompass(export_dir: Path, work: Path, variables: list[str], models: dict[str, Path], model_type: str,
                     extra: str = "") -> Path:
    """One OpenCompass run (offline, in its own venv) of these dataset variables on these models; its output folder."""
    imports = "\n".join(f"    from .datasets.{v[:-len('_datasets')]} import {v}" for v in variables)
    model_cfgs = ", ".join(
        f"dict(type={model_type}, abbr={name!r}, path={str(path)!r}, model_kwargs=dict(torch_dtype='float32'), "
        f"batch_size=1, max_out_len={GEN_TOKENS}, generation_kwargs=dict(do_sample=False), run_cfg=dict(num_gpus=0){extra})"
        for name, path in models.items())
    config = export_dir / f"run_{work.name}.py"
    config.write_text(RUN_CONFIG.format(model_type=model_type, imports=imports, models=model_cfgs, tokens=GEN_TOKENS,
                                        datasets=", ".join(f"*{v}" for v in variables)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(export_dir), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([str(OC_PYTHON), "-m", "opencompass.cli.main", str(config), "-w", str(work), "--debug"],
                          env=env, capture_output=True, text=True, cwd=export_dir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run,) = [p for p in work.iterdir() if p.is_dir()]
    return run


@pytest.fixture(scope="module")
def exported(shipped_subset, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("oc_export")
    oc.export(out, data=shipped_subset)
    return out


@pytest.fixture(scope="module")
def base_models(tiny_qwen2, tiny_llama, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("oc_models")
    src = {"tiny-qwen2": tiny_qwen2.info["name_or_path"], "tiny-llama": tiny_llama.info["name_or_path"], "mini": MINI}
    return {name: _oc_copy(Path(path), root / name) for name, path in src.items()}


@pytest.fixture(scope="module")
def ppl_run(exported, base_models, tmp_path_factory) -> Path:
    variables = [f"ancientbench_ppl_{k}shot_datasets" for k in (0, 5)]
    return _run_opencompass(exported, tmp_path_factory.mktemp("ppl"), variables, base_models, "HuggingFaceBaseModel")


def test_configs_and_summarizer(exported, shipped_subset):
    datasets = sorted(p.name for p in (exported / "datasets").iterdir())
    assert datasets == sorted(
        [f"ancientbench_{t}_{f}_{k}shot.py" for t in TASKS for f in ("ppl", "gen") for k in (0, 5)]
        + [f"ancientbench_{f}_{k}shot.py" for f in ("ppl", "gen") for k in (0, 5)])
    assert (exported / "data" / "cloze" / "test.jsonl").read_bytes() == (shipped_subset / "data" / "cloze" / "test.jsonl").read_bytes()
    text = "".join(p.read_text(encoding="utf-8") for p in exported.rglob("*.py"))
    assert str(shipped_subset) not in text and "/tmp" not in text  # the folder is portable
    cfg = oc.dataset_config("radical", "ppl", 5)
    tpl = cfg["infer_cfg"]["prompt_template"]["template"]
    # filled like OpenCompass does (ice text for </E>, then {column}), the template is ancientbench's prompt
    item = load_split(shipped_subset, "radical", "test")[0]
    dev = load_split(shipped_subset, "radical", "dev")
    ice = "".join(_fill(cfg["infer_cfg"]["ice_template"]["template"], d) for d in dev)
    assert _fill(tpl["C"].replace("</E>", ice), item) == prompt_text("radical", item, dev) + "C"
    assert cfg["infer_cfg"]["retriever"] == {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4],
                                              "ice_separator": "", "ice_eos_token": ""}
    summary = oc.summarizer_config(list(TASKS))
    groups = {g["name"]: g["subsets"] for g in summary["summary_groups"]}
    assert groups["ancientbench-glyph-ppl-5shot"] == ["ancientbench-radical-ppl-5shot"]
    assert groups["ancientbench-ppl-5shot"] == ["ancientbench-glyph-ppl-5shot", "ancientbench-context-ppl-5shot"]


def _fill(template: str, row: dict) -> str:
    for k, v in row.items():  # OpenCompass's safe_format: plain replacement of {column}
        template = template.replace("{" + k + "}", str(v))
    return template


def test_cli_run_and_errors(tmp_path, shipped_subset, capsys):
    check_export_command(oc, tmp_path, shipped_subset, capsys, "wrote 2 tasks x 2 forms x 2 shot settings",
                         "left out (no test/dev data): radical_meaning, pronunciation")
    hub = oc.dataset_config("cloze", "gen", 0, hub_id="org/ancientbench")
    assert (hub["path"], hub["name"]) == ("org/ancientbench", "cloze")
    assert hub["eval_cfg"]["evaluator"]["type"] == "AncientBenchExtractEvaluator"


def _ours(model_dir: Path, data: Path, **kw) -> dict:
    from ancientbench.evaluation import evaluate_model

    return evaluate_model(str(model_dir), tasks=list(TASKS), data=data, progress=False, device="cpu", dtype="float32",
                          batch_size=1, log_samples=True, **kw)


@needs_oc
@pytest.mark.parametrize("model", ["tiny-qwen2", "tiny-llama", "mini"])
def test_ppl_form_picks_the_same_letter(model, ppl_run, base_models, shipped_subset):
    from transformers import AutoTokenizer

    ours = _ours(base_models[model], shipped_subset, shots=(0, 5))
    tok = AutoTokenizer.from_pretrained(base_models[model])
    compared = 0
    for shots in (0, 5):
        by_id = {r["id"]: r for r in ours[shots]["predictions"]}
        for task in TASKS:
            test, dev = load_split(shipped_subset, task, "test"), load_split(shipped_subset, task, "dev")
            preds = json.loads((ppl_run / "predictions" / model / f"{oc.dataset_abbr(task, 'ppl', shots)}.json").read_text())
            assert len(preds) == len(test) == N_ITEMS
            for i, item in enumerate(test):
                rec, mine = preds[str(i)], by_id[item["id"]]
                prompt = prompt_text(task, item, dev[:shots])
                ids = [tok(prompt + x)["input_ids"] for x in LETTERS]
                # the same text, and each letter exactly one token after the same prompt tokens
                assert all(rec[f"label: {x}"]["prompt"] == prompt + x for x in LETTERS)
                assert len({len(i) for i in ids}) == 1 and len({tuple(i[:-1]) for i in ids}) == 1
                ppl = [float(rec[f"label: {x}"]["PPL"]) for x in LETTERS]
                n = len(ids[0])
                tol = 1e-4 + n * max(ppl) * 2.0 ** -20  # float32 sequence losses: what two exact computations may differ by
                recovered = [-n * (p - ppl[0]) for p in ppl]  # logp(X) - logp(A) from the sequence mean losses
                expected = [lp - mine["logprobs"][0] for lp in mine["logprobs"]]
                assert recovered == pytest.approx(expected, abs=tol)
                # the same pick, or a tie at that precision (a random tiny model's letters can be that close)
                theirs = mine["logprobs"][LETTERS.index(rec["prediction"])]
                assert rec["prediction"] == mine["pred"] or theirs >= max(mine["logprobs"]) - 2 * tol, (model, shots, item["id"])
                compared += 1
        result = json.loads((ppl_run / "results" / model / f"{oc.dataset_abbr('radical', 'ppl', shots)}.json").read_text())
        assert result["accuracy"] == pytest.approx(100 * ours[shots]["tasks"]["radical"]["accuracy"])
    assert compared == 2 * len(TASKS) * N_ITEMS


@needs_oc
def test_summary_is_the_papers_aggregation(ppl_run, base_models, shipped_subset):
    """OpenCompass's summary rows for the average and competencies are ancientbench's figures (2 of 4 competencies)."""
    import csv

    (summary,) = (ppl_run / "summary").glob("summary_*.csv")
    rows = {r["dataset"]: r for r in csv.DictReader(summary.open(encoding="utf-8"))}
    ours = _ours(base_models["mini"], shipped_subset, shots=(5,))[5]
    assert float(rows["ancientbench-ppl-5shot"]["mini"]) == pytest.approx(100 * ours["average"], abs=0.01)
    for comp, score in ours["competencies"].items():
        assert float(rows[f"ancientbench-{comp}-ppl-5shot"]["mini"]) == pytest.approx(100 * score, abs=0.01)


@needs_oc
def test_gen_form_extracts_the_same_letter(exported, tiny_qwen2, tmp_path_factory, shipped_subset):
    """The chat model generates from the same user turn; OpenCompass's evaluator reads the letter with our rules."""
    from transformers import AutoTokenizer

    model = _oc_copy(Path(tiny_qwen2.info["name_or_path"]), tmp_path_factory.mktemp("oc_chat") / "tiny-qwen2-chat")
    variables = [f"ancientbench_gen_{k}shot_datasets" for k in (0, 5)]
    run = _run_opencompass(exported, tmp_path_factory.mktemp("gen"), variables, {"chat": model}, "HuggingFacewithChatTemplate")
    ours = _ours(model, shipped_subset, shots=(0, 5), mode="generate", max_new_tokens=GEN_TOKENS)
    special = AutoTokenizer.from_pretrained(model).all_special_tokens
    for shots in (0, 5):
        by_id = {r["id"]: r for r in ours[shots]["predictions"]}
        for task in TASKS:
            abbr = oc.dataset_abbr(task, "gen", shots)
            preds = json.loads((run / "predictions" / "chat" / f"{abbr}.json").read_text())
            details = json.loads((run / "results" / "chat" / f"{abbr}.json").read_text())["details"]
            test = load_split(shipped_subset, task, "test")
            for i, item in enumerate(test):
                mine = by_id[item["id"]]
                text = preds[str(i)]["prediction"]
                for s in special:
                    text = text.replace(s, "")
                assert text == mine["response"], (shots, item["id"])
                # OpenCompass wraps each detail field in a list (one entry per repeated run; here one run)
                assert (details[i]["pred"], details[i]["id"]) == ([mine["pred"]], [item["id"]]), (shots, item["id"])


LOADER_PROBE = """
import json, sys
from ancientbench_opencompass import AncientBenchDataset
out = {}
for path in ("data", sys.argv[1]):
    d = AncientBenchDataset.load(path=path, name="cloze")
    out[path] = {s: [r["id"] for r in d[s]] for s in ("test", "dev")}
print(json.dumps(out))
"""


@needs_oc
def test_loader_reads_the_copy_and_a_hub_style_repository(exported):
    """``path='data'``: the copy beside the module; any other path goes to ``datasets.load_dataset(path, task)``
    (a Hub id; here the package's dataset folder, which loads the same way offline)."""
    env = {**os.environ, "PYTHONPATH": str(exported), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([str(OC_PYTHON), "-c", LOADER_PROBE, str(DATASET_PATH)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["data"]["test"] == [r["id"] for r in load_split(exported, "cloze", "test")]
    assert got[str(DATASET_PATH)] == {s: [r["id"] for r in load_split(DATASET_PATH, "cloze", s)] for s in ("test", "dev")}


def test_exporting_again_replaces_only_our_files(tmp_path, shipped_subset):
    out = tmp_path / "configs"
    oc.export(out, data=shipped_subset)
    theirs = [out / "datasets" / "my_dataset.py", out / "summarizers" / "mine.py", out / "data" / "mine" / "x.jsonl"]
    for path in theirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# a user's own file\n")
    oc.export(out, data=shipped_subset, tasks=["cloze"])
    assert all(p.read_text() == "# a user's own file\n" for p in theirs)
    assert sorted(p.name for p in (out / "datasets").glob("ancientbench_*.py")) == sorted(
        [f"ancientbench_{t}{f}_{k}shot.py" for t in ("", "cloze_") for f in ("ppl", "gen") for k in (0, 5)])
    assert not (out / "data" / "radical").exists() and (out / "data" / "cloze" / "dev.jsonl").is_file()


EVALUATOR_PROBE = """
import json, sys
from ancientbench_opencompass import AncientBenchExtractEvaluator
case = json.loads(sys.stdin.read())
print(json.dumps(AncientBenchExtractEvaluator().score(case["texts"], case["golds"], case["rows"])))
"""


@needs_oc
def test_gen_evaluator_reads_letters_with_ancientbench_rules(exported):
    """The generate form's evaluator, inside OpenCompass's environment, reads the letter ancientbench reads on answers
    where each rule fires (the tiny models' noise rarely contains a letter), and never guesses."""
    from ancientbench.evaluation.extract import extract_letter

    row = {"id": "x", "question": "q", "A": "其", "B": "之", "C": "乎", "D": "者", "answer": "B"}
    texts = ["答案是B", "<think>A?</think>正确答案是（C）", "D. 者", "之", "Ｂ", "<think>答案是A", "无从判断", "", "AB"]
    case = {"texts": texts, "golds": ["B"] * len(texts), "rows": [row] * len(texts)}
    env = {**os.environ, "PYTHONPATH": str(exported)}
    proc = subprocess.run([str(OC_PYTHON), "-c", EVALUATOR_PROBE], input=json.dumps(case), env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    ours = [extract_letter(t, row) for t in texts]
    assert [(d["pred"], d["rule"]) for d in got["details"]] == [tuple(x) for x in ours]
    assert {x[1] for x in ours} == {"cue", "letter", "option_text", None}
    assert got["accuracy"] == pytest.approx(100 * sum(x[0] == "B" for x in ours) / len(texts))
    assert got["extraction_failure_rate"] == pytest.approx(100 * sum(x[0] is None for x in ours) / len(texts))
