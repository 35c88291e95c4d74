"""Scoring a task in one call: ``score_task(model, tokenizer, task, items, exemplars, shots=...)`` for a transformers
model in memory, in letter mode, through the evaluation layer (:func:`ancientbench.evaluation.runner.score_task`
builds the prompts and fits them to the model's context by dropping few-shot exemplars, longest first) and the hf
backend (kernel: :mod:`ancientbench.backends.hf_scoring`, whose ``score_items`` and errors are re-exported here).

One prediction record per item ``{"id", "task", "gold", "pred", "logprobs", "shots_used"}``; ``on_batch`` receives
the records of each finished batch (used to append predictions to disk as they are made).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from .backends.hf import HFBackend
from .backends.hf_scoring import (
    AutoBatchSize,
    ContextLengthError,
    LetterTokenError,
    Scores,
    ScoringOptionError,
    check_batch_size,
    context_limit,
    exemplar_drop_order,
    leading_special_ids,
    score_items,
)
from .evaluation.runner import score_task as run_task
from .evaluation.settings import Settings
from .tasks import get_task


@dataclass
class TaskScores:
    """Per-item prediction records of :func:`score_task` plus what the results file reports about them."""

    records: list[dict]
    letter_token_ids: dict[str, int]
    fewshot_truncated_items: int = 0  # items that lost at least one exemplar to the context limit
    too_long_items: list[str] = field(default_factory=list)  # ids whose question alone exceeds the context
    prefix_cache_items: int = 0
    batch_size: int | None = None  # the batch size in use at the end (smaller than asked after out-of-memory)




def score_task(
    model,
    tokenizer,
    task: str,
    items: Sequence[Mapping[str, str]],
    exemplars: Sequence[Mapping[str, str]] = (),
    *,
    shots: int = 0,
    batch_size: int | str | AutoBatchSize = 8,
    letter_style: str = "bare",
    chat: bool = False,
    prefix_cache: bool | str = "auto",
    max_length: int | None = None,
    progress=None,
    on_batch: Callable[[list[dict]], None] | None = None,
) -> TaskScores:
    """Score the items of one task ``shots``-shot with the first ``shots`` of ``exemplars`` (its dev split), in
    letter mode, through the evaluation layer (:func:`ancientbench.evaluation.runner.score_task`: prompts,
    context fitting) and the ``hf`` backend (this module's scorer).

    Returns a :class:`TaskScores` whose ``records`` follow the order of ``items``; ``on_batch(records)`` gets
    each finished batch's records (items too long for the context come first, as error records).
    """
    get_task(task)
    if shots < 0:
        raise ScoringOptionError(f"shots must be >= 0, got {shots}")
    backend = HFBackend(model, tokenizer, batch_size=batch_size, prefix_cache=prefix_cache, max_length=max_length)
    settings = Settings(mode="letter", shots=shots, letter_style=letter_style, chat=chat)
    run = run_task(backend, settings, task, items, exemplars, progress=progress, on_batch=on_batch)
    stats = backend.stats()
    return TaskScores(
        records=run.records,
        letter_token_ids=backend.letter_token_ids or {},
        fewshot_truncated_items=run.fewshot_truncated_items,
        too_long_items=run.too_long_items,
        prefix_cache_items=backend.prefix_cache_items,
        batch_size=stats["batch_size_used"],
    )


__all__ = [
    "AutoBatchSize",
    "ContextLengthError",
    "LetterTokenError",
    "Scores",
    "ScoringOptionError",
    "TaskScores",
    "check_batch_size",
    "context_limit",
    "exemplar_drop_order",
    "leading_special_ids",
    "score_items",
    "score_task",
]
