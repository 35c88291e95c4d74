"""The ``tiny-random`` backend: the hf backend on the built-in random-weight smoke model (chance level), like
lm-evaluation-harness's ``dummy`` - the whole pipeline runs for real offline (:mod:`ancientbench.tiny` builds
and caches the model on first use). ``--model tiny-random`` selects it with the default ``--backend hf``."""

from __future__ import annotations

from dataclasses import replace

from ..tiny import TINY_RANDOM_NAME, tiny_random_path
from .base import BackendConfig
from .hf import HFBackend


class TinyRandomBackend(HFBackend):
    name = "tiny-random"

    @classmethod
    def load(cls, config: BackendConfig) -> "TinyRandomBackend":
        folder = tiny_random_path()
        be = super().load(replace(config, model=str(folder)))
        be._info = {**be.info(), "name_or_path": TINY_RANDOM_NAME, "smoke_model": True}
        return be
