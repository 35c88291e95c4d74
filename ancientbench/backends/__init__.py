"""Model runtimes behind one interface (:mod:`ancientbench.backends.base`): ``hf``, ``tiny-random``, ``openai``, ``vllm``."""

from .base import *  # noqa: F401,F403
from .base import __all__  # noqa: F401
