"""The results of one setting: the self-describing results JSON (layout in ``docs/evaluation.md``), the
package versions that can change a score, and the paper-style table printed after a run."""

from __future__ import annotations

import datetime as _dt
import platform
from importlib import metadata
from typing import Sequence

from .. import __version__
from .. import tasks as _tasks
from ..aggregate import aggregate
from ..letters import from_predictions
from ..prompts import template_info
from .layout import RESULTS_FORMAT


def package_versions() -> dict[str, str | None]:
    """Versions of the packages that can change a score, plus Python and the platform."""
    out: dict[str, str | None] = {"python": platform.python_version(), "platform": platform.platform()}
    for name in ("ancientbench", "torch", "transformers", "tokenizers", "accelerate", "datasets", "numpy", "torch_npu"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "ancientbench":
                out[name] = __version__
            elif name != "torch_npu":
                out[name] = None
    try:
        import torch  # lazy: torch costs seconds to import; only a model run needs it

        out["cuda"] = torch.version.cuda
    except Exception:  # torch missing is reported above as None
        out["cuda"] = None
    return out


def build_results(
    records: Sequence[dict],
    *,
    model_info: dict,
    setting: dict,
    data: dict,
    timing: dict,
    predictions_file: str | None,
    n_available: dict[str, int] | None = None,
    prompt: dict | None = None,
) -> dict:
    """The results JSON of one setting from its prediction records (``records`` = exactly the run's items).

    ``prompt``: the template version and hash of the setting's mode (default: the letter templates). Per task
    besides accuracy: ``fewshot_truncated_items``, ``too_long_items``, ``item_errors`` (other items without an
    answer from the backend, counted wrong); in ``generate`` mode ``extraction_failures`` and
    ``extraction_failure_rate`` (answers no letter could be read from, counted wrong); in ``ppl`` mode
    ``accuracy_sum`` (the accuracy had the summed instead of the length-normalised log-likelihood decided);
    where a backend returned some letters' log-probabilities only, ``missing_letter_items``.
    """
    agg = aggregate([r["pred"] == r["gold"] for r in records], [r["task"] for r in records])
    shots = setting["shots"]
    mode = setting.get("mode", "letter")
    tasks = {}
    for t, row in agg["tasks"].items():
        mine = [r for r in records if r["task"] == t]
        entry = {
            **row,
            "fewshot_truncated_items": sum(1 for r in mine if r.get("pred") is not None and r["shots_used"] < shots),
            "too_long_items": [r["id"] for r in mine if r.get("error") and r.get("error_type", "context_length") == "context_length"],
        }
        other = [r["id"] for r in mine if r.get("error") and r.get("error_type", "context_length") != "context_length"]
        if other:
            entry["item_errors"] = other
        if mode == "generate":
            answered = [r for r in mine if not r.get("error")]
            failures = sum(1 for r in answered if r.get("extraction_failed"))
            entry["extraction_failures"] = failures
            entry["extraction_failure_rate"] = round(failures / len(answered), 6) if answered else None
        if mode == "ppl":
            entry["accuracy_sum"] = (sum(1 for r in mine if r.get("pred_sum") == r["gold"]) / len(mine)) if mine else None
        missing = sum(1 for r in mine if r.get("missing_letters"))
        if missing:
            entry["missing_letter_items"] = missing
        tasks[t] = entry
    limited = bool(n_available) and any(tasks[t]["total"] < n_available.get(t, 0) for t in tasks)
    return {
        "ancientbench_version": __version__,
        "results_format": RESULTS_FORMAT,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "model": model_info,
        "setting": setting,
        "prompt": prompt or template_info("letter"),
        "dataset_version": getattr(_tasks, "DATASET_VERSION", None),
        "data": data,
        "tasks": tasks,
        "competencies": agg["competencies"],
        "average": agg["average"],
        "micro_accuracy": agg["micro_accuracy"],
        **{k: agg[k] for k in ("user_tasks", "user_task_note") if k in agg},  # user tasks: rows apart (aggregate)
        "answer_letters": from_predictions(records) if records else None,  # the not-answering flag (ancientbench.letters)
        "complete": bool(agg["complete"] and not limited),
        "packages": package_versions(),
        "timing": timing,
        "predictions_file": predictions_file,
    }

