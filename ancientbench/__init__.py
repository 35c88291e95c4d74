"""AncientBench: how well language models understand ancient Chinese, excavated and transmitted.

The package folder is also the Hugging Face dataset folder: ``README.md`` here is the dataset card and
``data/<task>/{test,dev}.jsonl`` the data, so ``datasets.load_dataset(ancientbench.DATASET_PATH, "cloze")``
works from any directory once the package is installed.

Pipeline, one module per step: sources -> ``builders`` -> dataset files (``schema``) -> ``prompts`` ->
``evaluation`` (prompts fitted to the context, modes, predictions, results) -> ``backends`` (hf: ``scoring``;
tiny-random, openai, vllm) -> metric (``metrics/ancientbench_metric``) -> ``report``.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from .tasks import (
    COMPETENCIES,
    COMPETENCY_TASKS,
    DATASET_VERSION,
    LETTERS,
    TASK_NAMES,
    TASK_TO_COMPETENCY,
    TASKS,
    get_task,
    resolve_tasks,
)

__version__ = "0.1.0"

from .paths import DATASET_PATH  # noqa: E402  (public: ancientbench.DATASET_PATH)


def _metric_path() -> str:
    # The metric ships as its own top-level package `ancientbench_metric` (pyproject maps it from
    # metrics/ancientbench_metric), so the folder evaluate.load needs exists after a plain pip install.
    spec = importlib.util.find_spec("ancientbench_metric")
    if spec is not None and spec.submodule_search_locations:
        return str(Path(list(spec.submodule_search_locations)[0]).resolve())
    return str(Path(__file__).resolve().parent.parent / "metrics" / "ancientbench_metric")


METRIC_PATH: str = _metric_path()

_LAZY = {
    "evaluate_model": "ancientbench.evaluation",
    "load_backend": "ancientbench.backends",
    "load_task": "ancientbench.dataset",
    "cache_dataset": "ancientbench.dataset",
}


def __getattr__(name: str):
    # Heavy imports (torch, transformers, datasets) happen only when these entry points are used.
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ancientbench' has no attribute {name!r}")


__all__ = [
    "COMPETENCIES",
    "COMPETENCY_TASKS",
    "DATASET_PATH",
    "DATASET_VERSION",
    "LETTERS",
    "METRIC_PATH",
    "TASKS",
    "TASK_NAMES",
    "TASK_TO_COMPETENCY",
    "cache_dataset",
    "evaluate_model",
    "get_task",
    "load_backend",
    "load_task",
    "resolve_tasks",
    "__version__",
]
