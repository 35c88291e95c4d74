"""The ``tiny-random`` backend: the hf backend on the built-in random-weight smoke model (chance level), like
lm-evaluation-harness's ``dummy`` - the whole pipeline runs for real offline (:mod:`ancientbench.tiny` builds
and caches the model on first use). ``--model tiny-random`` selects it with the default ``--backend hf``."""

from __future__ import annotations

from ..tiny import TINY_RANDOM_NAME, tiny_random_path
from .hf import HFBackend, HFConfig


class TinyRandomBackend(HFBackend):
    name = "tiny-random"
    model_names = (TINY_RANDOM_NAME,)  # --model tiny-random on the default backend runs here

    @classmethod
    def load(cls, config: HFConfig) -> "TinyRandomBackend":
        return cls.open(config, tiny_random_path(), record_as=TINY_RANDOM_NAME, smoke_model=True)

    @classmethod
    def results_name(cls, model: str) -> str:
        return TINY_RANDOM_NAME
