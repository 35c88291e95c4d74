"""The ``tiny-random`` backend: the hf backend on the built-in random-weight smoke model (chance level), like
lm-evaluation-harness's ``dummy`` - the whole pipeline runs for real offline (:mod:`ancientbench.tiny`)."""

from __future__ import annotations

from dataclasses import replace

from ..tiny import TINY_RANDOM_NAME
from .base import BackendConfig
from .hf import HFBackend


class TinyRandomBackend(HFBackend):
    name = "tiny-random"

    @classmethod
    def load(cls, config: BackendConfig) -> "TinyRandomBackend":
        loaded = HFBackend.load(replace(config, model=TINY_RANDOM_NAME))
        be = cls.__new__(cls)
        be.__dict__.update(loaded.__dict__)
        return be
