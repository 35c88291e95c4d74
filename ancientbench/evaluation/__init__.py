"""``ancientbench eval``: score a model on the tasks zero-shot and few-shot, write results, print the table.

Python: ``evaluate_model(model, tokenizer=None, tasks=None, shots=(0, 5), ..., backend="hf", mode="letter")``
returns ``{shots: results}``. For every (model, setting) it writes, under ``<output>/<name>/``:

- ``predictions_<k>shot.jsonl``: one line per item (layout in :mod:`.runner` and ``docs/evaluation.md``),
  appended and flushed batch by batch; rewritten in dataset order when the setting is complete.
- ``predictions_<k>shot.meta.json``: the setting's fingerprint (:class:`.settings.Settings` plus the
  backend's: model, revision/weights hash, dtype, tokenizer files, chat template, context limit) and the
  data files' hashes. A rerun with the same ``--output`` resumes: it keeps a prediction only when its
  ``item_sha256`` and ``fewshot_sha256`` equal this run's for that id, its gold and prediction agree with
  the item and its stored numbers, and it is no error record (those are retried), and scores the rest; a rerun whose
  setting differs reuses nothing: a warning names what changed, the old files are set aside as
  ``*.superseded-<time>.*`` and every item is scored again (``--overwrite`` deletes them instead).
- ``results_<k>shot.json``: the self-describing results (:mod:`.results`).

``<name>`` is the Hub id with ``/`` -> ``__`` or the local folder's name, plus ``-<backend>`` (other than
hf), ``-ppl``/``-generate``, ``-chat``, ``-space`` and ``-circular`` (:meth:`.settings.Settings.output_name`),
so differently scored runs never share files.

Modules: :mod:`.settings` (the frozen setting), :mod:`.api` (``evaluate_model``), :mod:`.runner` (prompts,
fitting; plan -> score -> assemble), :mod:`.requests` (one class per mode: requests, record fields), :mod:`.lock` (one run per output folder), :mod:`.extract` (letters from generated answers), :mod:`.store` (predictions on disk, resume),
:mod:`.results` (results JSON, table), :mod:`.distributed` (data parallel), :mod:`.command` (the CLI).
"""

from __future__ import annotations

from .api import evaluate_model
from .command import add_arguments, run
from .layout import results_path
from .results import build_results, package_versions
from .runner import EvaluationError, TaskRun, run_setting, score_task
from .settings import Settings
from .store import PredictionStore, ResumeError, fewshot_sha256, item_sha256

__all__ = [
    "EvaluationError", "PredictionStore", "ResumeError", "Settings", "TaskRun", "add_arguments", "build_results",
    "evaluate_model", "fewshot_sha256", "item_sha256", "package_versions", "results_path", "run",
    "run_setting", "score_task",
]
