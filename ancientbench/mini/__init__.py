"""AncientBench mini-LM: a small classical-Chinese causal LM trained here from scratch, the embedded default model.

- :mod:`.corpus` builds its pretraining text from npm ``chinese-poetry`` (全唐詩 and the 蒙學 primers), with the
  seven books the benchmark's context tasks draw from left out whole and every remaining document checked
  against the held-out benchmark sentences by the same leakage check as ``finetune-data``;
- :mod:`.train` is ``ancientbench train-mini``: tokenizer, model, fixed-seed resumable training, loss curve,
  model card;
- the trained model ships in the package (``ancientbench/mini/ancientbench-mini/``) and ``--model
  ancientbench-mini`` evaluates it offline;
- :mod:`.ladder` (``ancientbench ladder``, the README's main job) evaluates it beside tiny-random and the reference
  rows, and :mod:`.inject_eval` (``ancientbench inject``) the knowledge-injection pair, both through the library
  API (``evaluate_model``, ``compare``, ``build_report``); their records render the cards (:mod:`.card`,
  :mod:`.inject_card`).
"""

from __future__ import annotations

from ..paths import MINI_NAME, MINI_PATH, mini_path  # the folder's facts live with the other paths (the bottom layer)

__all__ = ["MINI_NAME", "MINI_PATH", "mini_path"]
