"""The oracle check: knowledge taught to a model reaches the score, in every mode, through the real pipeline.

A tiny random model is fine-tuned (``ancientbench finetune --template raw``) on some real test items of all ten
tasks, written in the evaluation's own prompt format: the answer letter after the letter-mode prompt (0- and
5-shot) and after the generate-mode chat prompt, the correct option's text after the ppl-mode prompt. The ppl
pairs list the options in a different order from the evaluation file, so what carries over is the answer's text,
not its position. ``ancientbench eval`` must then score >= 95% on the taught items in letter (0- and 5-shot), ppl
and generate modes, and stay within chance's 95% interval on three times as many items it never saw, in every mode. A bug that maps letters, options or gold keys
wrongly fails the first bound; a leak of the key into the prompt fails the second.
"""

from __future__ import annotations

import json
import math
import random

import pytest
from support import read_jsonl

from ancientbench import DATASET_PATH
from ancientbench.cli import main
from ancientbench.prompts import build_mode_prompt, chat_wrap
from ancientbench.schema import load_split, write_jsonl
from ancientbench.tasks import LETTERS, TASK_NAMES

PER_TASK = 3  # taught items per task
UNSEEN_PER_TASK = 9  # never taught: three times as many, so chance's interval is tight enough to mean something
SHOTS = 5
PPL_ORDERS = ([0, 1, 2, 3], [3, 2, 1, 0])


def _reorder(item: dict, order: list[int]) -> dict:
    texts = [item[x] for x in LETTERS]
    gold = texts[LETTERS.index(item["answer"])]
    out = dict(item, **{LETTERS[i]: texts[j] for i, j in enumerate(order)})
    out["answer"] = LETTERS[[out[x] for x in LETTERS].index(gold)]
    return out


def _shuffled(item: dict, rng: random.Random, gold_at: int) -> dict:
    """The item with its options in another order (never the same one), the key moved to ``gold_at``."""
    key = LETTERS.index(item["answer"])
    while True:
        others = [i for i in range(4) if i != key]
        rng.shuffle(others)
        order = others[:gold_at] + [key] + others[gold_at:]
        if order != [0, 1, 2, 3]:
            return _reorder(item, order)


def _binomial_interval(n: int, p: float = 0.25, z: float = 1.96) -> tuple[float, float]:
    half = z * math.sqrt(p * (1 - p) / n)
    return p - half, p + half


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """(dataset folder, fine-tuned model folder, taught ids, unseen ids)."""
    from ancientbench.finetune import finetune
    from ancientbench.models import load_tokenizer
    from ancientbench.tiny import build_tiny

    root = tmp_path_factory.mktemp("oracle")
    rng = random.Random(0)
    data, taught, unseen = root / "benchmark", [], []
    items, devs = {}, {}
    for task in TASK_NAMES:
        rows = load_split(DATASET_PATH, task, "test")
        # keys spread evenly over A-D in both halves, so a model with a letter bias scores chance on the unseen half
        picked = [_shuffled(it, rng, (k + len(taught)) % 4)
                  for k, it in enumerate(rng.sample(rows, PER_TASK + UNSEEN_PER_TASK))]
        items[task], devs[task] = picked, load_split(DATASET_PATH, task, "dev")[:SHOTS]
        taught += [it["id"] for it in picked[:PER_TASK]]
        unseen += [it["id"] for it in picked[PER_TASK:]]
        write_jsonl(data / "data" / task / "test.jsonl", picked)
        write_jsonl(data / "data" / task / "dev.jsonl", devs[task])
    # The tokenizer sees what the prompts show (question and options), never an item's citation or explanation:
    # those repeat the key's text, and a tokenizer trained on them merges the key into fewer tokens, which option
    # likelihood then prefers on items the model was never taught (a leak of the test's making, measured at 41%).
    corpus = [" ".join([r["question"], *(r[x] for x in LETTERS)]) for rows in (*items.values(), *devs.values()) for r in rows]
    base = build_tiny(root / "base", "qwen2", corpus=corpus, vocab_size=3000, seed=0,
                      hidden_size=96, intermediate_size=192, num_hidden_layers=2)
    tok = load_tokenizer(base)
    pairs, known = [], set(taught)
    for task in TASK_NAMES:
        for it in items[task]:
            if it["id"] not in known:
                continue
            letter0 = build_mode_prompt("letter", task, it).text
            letter5 = build_mode_prompt("letter", task, it, devs[task]).text
            generate = chat_wrap(tok, build_mode_prompt("generate", task, it)).text
            # ppl: the answer as text, after the options in the evaluation's order and reversed
            ppl = [build_mode_prompt("ppl", task, _reorder(it, order)).text for order in PPL_ORDERS]
            for kind, prompt, answer in (("letter0", letter0, it["answer"]), ("letter5", letter5, it["answer"]),
                                         ("generate", generate, it["answer"]),
                                         *(("ppl", text, it[it["answer"]]) for text in ppl)):
                pairs.append({"id": f"{kind}-{len(pairs)}-{it['id']}", "kind": kind, "instruction": prompt, "input": "",
                              "output": answer, "source": it["id"]})
    for kind in ("letter0", "letter5", "generate", "ppl"):
        path = root / "pairs" / "data" / kind / "train.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs if p["kind"] == kind), encoding="utf-8")
    out = root / "tuned"
    # batches grouped by length (5-shot prompts are ~6x the others: random batches pad everything to them, 114 s
    # -> 71 s); 25 epochs keep a margin: 20 pass every bound, 15 miss (letter 19/30)
    finetune(str(base), root / "pairs", out, name="oracle", template="raw", epochs=25, batch_size=8, lr=3e-3,
             warmup_ratio=0.05, max_length=2048, group_by_length=True, save_steps=10_000, logging_steps=50, use_cpu=True,
             bf16=False, eval_shots=(), progress=False, check_leakage=False)  # teaches test items on purpose
    return data, out / "oracle", set(taught), set(unseen)


@pytest.mark.parametrize("mode,shots", [("letter", 0), ("letter", 5), ("ppl", 0), ("generate", 0)])
def test_taught_items_score_at_least_95_and_unseen_items_stay_at_chance(oracle, mode, shots, tmp_path):
    data, model, taught, unseen = oracle
    argv = ["eval", "--model", str(model), "--data", str(data), "--shots", str(shots), "--mode", mode,
            "--output", str(tmp_path), "--no-progress", "--batch-size", "8"]
    if mode == "generate":
        argv += ["--max-new-tokens", "4"]
    assert main(argv) == 0
    preds = read_jsonl(next(tmp_path.glob(f"*/predictions_{shots}shot*.jsonl")))
    assert {p["id"] for p in preds} == taught | unseen
    known = [p["pred"] == p["gold"] for p in preds if p["id"] in taught]
    fresh = [p["pred"] == p["gold"] for p in preds if p["id"] in unseen]
    assert sum(known) / len(known) >= 0.95, (mode, shots, sum(known), len(known))
    low, high = _binomial_interval(len(fresh))
    assert low <= sum(fresh) / len(fresh) <= high, (mode, shots, sum(fresh), len(fresh))
