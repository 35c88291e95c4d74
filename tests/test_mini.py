"""The AncientBench mini-LM: the shipped model loads offline and is what its card says; the training command
holds the benchmark out, is deterministic, and resumes to the same weights."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ancientbench.mini import MINI_NAME, MINI_PATH


def test_shipped_model_loads_offline_and_matches_its_card():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    weights = MINI_PATH / "model.safetensors"
    assert weights.is_file() and weights.stat().st_size <= 25 * 2**20
    model = AutoModelForCausalLM.from_pretrained(MINI_PATH, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(MINI_PATH, local_files_only=True)
    record = json.loads((MINI_PATH / "training.json").read_text(encoding="utf-8"))
    assert sum(p.numel() for p in model.parameters()) == record["parameters"]
    assert model.config.vocab_size >= len(tok)
    leak = record["corpus"]["leak_check"]
    assert leak["passed"] and leak["violations"] == 0 and leak["documents_checked"] == record["corpus"]["documents"]
    card = (MINI_PATH / "README.md").read_text(encoding="utf-8")
    assert f"{record['parameters'] / 1e6:.1f}M-parameter" in card and "0 violations" in card
    assert (MINI_PATH / "loss_curve.png").is_file()


def test_eval_knows_the_mini_model_by_name(tmp_path):
    from ancientbench.cli import main

    argv = ["eval", "--model", MINI_NAME, "--tasks", "cloze", "--limit", "3", "--shots", "0",
            "--output", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    res = json.loads((tmp_path / MINI_NAME / "results_0shot.json").read_text(encoding="utf-8"))
    assert res["model"]["name_or_path"] == MINI_NAME and res["model"]["smoke_model"] is False
    assert res["model"]["weights_sha256"]


# ------------------------------------------------------------------------------------ training command


def _fake_sources(root: Path) -> Path:
    """A chinese-poetry folder with a few Tang poems and a primer, one poem quoting a held-out sentence."""
    from ancientbench.sources.classics import BOOKS, VERSION

    pkg = root / "node_modules" / "chinese-poetry"
    dist = pkg / "dist"
    for b in BOOKS:
        (dist / b.path).parent.mkdir(parents=True, exist_ok=True)
        (dist / b.path).write_text("[]", encoding="utf-8")
    (pkg / "package.json").write_text(json.dumps({"version": VERSION}), encoding="utf-8")
    poems = [{"title": f"詩{i}", "paragraphs": ["春風吹綠野，白日照青山。", "明月來相照，清泉石上流。"]} for i in range(30)]
    poems.append({"title": "引", "paragraphs": ["有子曰其爲人也孝弟而好犯上者鮮矣"]})
    (dist / "quantangshi").mkdir(parents=True)
    (dist / "quantangshi" / "poet.tang.0.json").write_text(json.dumps(poems, ensure_ascii=False), encoding="utf-8")
    from ancientbench.mini.corpus import PRIMERS

    for rel in PRIMERS:
        (dist / rel).write_text(json.dumps({"paragraphs": ["天地玄黃，宇宙洪荒。日月盈昃，辰宿列張。"]}, ensure_ascii=False), encoding="utf-8")
    return root


def _held():
    from ancientbench.finetune.leakage import HeldOut

    held = HeldOut()
    held.add_sentence("有子曰其爲人也孝弟而好犯上者鮮矣", "cloze-x")
    return held


def test_corpus_drops_documents_that_quote_held_out_sentences(tmp_path):
    from ancientbench.mini.corpus import build_corpus, leak_report

    docs, report = build_corpus(_fake_sources(tmp_path), _held())
    assert report["per_source"]["全唐詩"] == {"documents": 30, "dropped": 1, "han": 30 * 21}  # title 詩 + 20 characters
    assert not any("孝弟" in d for d in docs)
    assert leak_report(docs, _held())["passed"]
    assert not leak_report(docs + ["序\n其爲人也孝弟而好犯上者"], _held())["passed"]


SMALL = dict(vocab_size=400, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
             num_key_value_heads=1, seq_len=16, batch_size=4, steps=6, lr=1e-2, min_lr=1e-3, warmup=2,
             weight_decay=0.1, seed=0, save_every=2)


def test_training_resumes_to_the_same_weights(tmp_path, monkeypatch):
    from safetensors.torch import load_file

    from ancientbench.mini import corpus, train

    sources = _fake_sources(tmp_path / "src")
    monkeypatch.setattr(corpus, "held_out", _held)

    class StopAt4(logging.Handler):  # a crash right after step 4's progress line (its checkpoint is saved)
        def emit(self, record):
            if record.getMessage().startswith("step 4/"):
                raise KeyboardInterrupt

    logger = logging.getLogger(train.__name__)
    monkeypatch.setattr(logger, "level", logging.INFO)
    stop = StopAt4()
    logger.addHandler(stop)
    try:
        with pytest.raises(KeyboardInterrupt):
            train.train(tmp_path / "a", tmp_path / "out-a", sources, dict(SMALL), threads=1)
    finally:
        logger.removeHandler(stop)
    assert json.loads((tmp_path / "a" / "settings.json").read_text())["steps"] == 6
    resumed = train.train(tmp_path / "a", tmp_path / "out-a", sources, dict(SMALL), threads=1)
    straight = train.train(tmp_path / "b", tmp_path / "out-b", sources, dict(SMALL), threads=1)
    wa, wb = load_file(tmp_path / "out-a" / "model.safetensors"), load_file(tmp_path / "out-b" / "model.safetensors")
    assert all((wa[k] == wb[k]).all() for k in wa)
    assert resumed["validation_loss"] == straight["validation_loss"]
    assert len((tmp_path / "a" / "loss.jsonl").read_text().splitlines()) == 6
    assert (tmp_path / "out-a" / "README.md").is_file() and (tmp_path / "out-a" / "loss_curve.png").is_file()
    with pytest.raises(train.TrainMiniError, match="other settings"):
        train.train(tmp_path / "a", tmp_path / "out-a", sources, dict(SMALL, steps=7), threads=1)


def test_the_shipped_card_is_rendered_from_its_records():
    from ancientbench.mini.card import render_card

    assert (MINI_PATH / "README.md").read_text(encoding="utf-8") == render_card(MINI_PATH), \
        "the mini-LM card is out of date: python -c 'from ancientbench.mini.card import write_card; from ancientbench.mini import MINI_PATH; write_card(MINI_PATH)'"
