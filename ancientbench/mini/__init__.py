"""AncientBench mini-LM: a small classical-Chinese causal LM trained here from scratch, the embedded default model.

- :mod:`.corpus` builds its pretraining text from npm ``chinese-poetry`` (全唐詩 and the 蒙學 primers), with the
  seven books the benchmark's context tasks draw from left out whole and every remaining document checked
  against the held-out benchmark sentences by the same leakage check as ``finetune-data``;
- :mod:`.train` is ``ancientbench train-mini``: tokenizer, model, fixed-seed resumable training, loss curve,
  model card;
- the trained model ships in the package (``ancientbench/mini/ancientbench-mini/``) and ``--model
  ancientbench-mini`` evaluates it offline.
"""

from __future__ import annotations

from pathlib import Path

MINI_NAME = "ancientbench-mini"
MINI_PATH = Path(__file__).resolve().parent / MINI_NAME


def mini_path() -> Path:
    """The shipped model folder; an error naming the training command when it is missing."""
    from ..errors import AncientBenchError

    if not (MINI_PATH / "config.json").is_file():
        raise AncientBenchError(f"{MINI_PATH}: the {MINI_NAME} model is not in this installation; "
                                "train it with `ancientbench train-mini` (about an hour on 2 CPU cores)")
    return MINI_PATH
