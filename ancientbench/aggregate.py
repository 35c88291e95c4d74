"""The paper's arithmetic, in one place: item correctness -> task accuracy -> competency -> average.

Task accuracy is the fraction of its items answered correctly; a competency score is the unweighted
mean of its tasks' accuracies; ``average`` is the unweighted mean of the four competency scores
(AncientBench paper, as in Tables 2-3). ``micro_accuracy`` (all items pooled) is reported beside it.
Used by the scorer's results files and the reports; the arithmetic between the ``METRIC COPY`` lines is
generated into the evaluate metric (``python -m ancientbench.publish.copies``), so the figures always agree.
A user task (any other valid task name, :func:`ancientbench.tasks.user_task`) gets its own row, after the ten, and
enters no competency, neither ``average`` nor ``micro_accuracy`` nor ``n``: the ten's figures are what they would be
without it.
:func:`bootstrap_ci` adds percentile-bootstrap confidence intervals for every one of those figures.
"""

from __future__ import annotations

from typing import Sequence

from .tasks import COMPETENCIES, TASK_BY_NAME, TASK_NAMES, TASK_TO_COMPETENCY, USER_TASK_NOTE, user_task

# BEGIN METRIC COPY: from here to END, the text is generated into metrics/ancientbench_metric (which must load
# without the package) by `python -m ancientbench.publish.copies`: it uses only numpy and the task table's names.
DEFAULT_BOOTSTRAP_SEED = 1234
DEFAULT_BOOTSTRAP_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95


def summarize(correct, tasks) -> dict:
    """Per-item correctness (aligned with the items' task names, both checked by the caller) -> ``{"tasks": {task:
    {"accuracy", "correct", "total", "competency"}}, "competencies": {competency: score}, "average": float | None,
    "micro_accuracy": float, "n": int, "complete": bool}``. Competencies with no scored task are left out;
    ``average`` is the mean of the competencies present and ``complete`` says whether all ten tasks were scored
    (only then is it the paper's average). User tasks (names outside the ten): rows ``{"accuracy", "correct",
    "total", "competency": None, "user_task": True}`` after the ten (by name), listed under ``user_tasks`` with
    ``user_task_note`` (both keys only when there are some); ``n`` and ``micro_accuracy`` count the ten's items only."""
    counts = {}
    for ok, task in zip(correct, tasks):
        c = counts.setdefault(task, [0, 0])
        c[0] += int(bool(ok))
        c[1] += 1
    per_task = {
        t: {"accuracy": counts[t][0] / counts[t][1], "correct": counts[t][0], "total": counts[t][1], "competency": TASK_TO_COMPETENCY[t]}
        for t in TASK_NAMES
        if t in counts
    }
    competencies = {}
    for comp in COMPETENCIES:
        accs = [row["accuracy"] for t, row in per_task.items() if TASK_TO_COMPETENCY[t] == comp]  # registry order
        if accs:
            competencies[comp] = sum(accs) / len(accs)
    n = sum(counts[t][1] for t in per_task)
    out = {
        "tasks": per_task,
        "competencies": competencies,
        "average": sum(competencies.values()) / len(competencies) if competencies else None,
        "micro_accuracy": sum(counts[t][0] for t in per_task) / n if n else None,
        "n": n,
        "complete": len(per_task) == len(TASK_NAMES),
    }
    users = sorted(t for t in counts if t not in TASK_TO_COMPETENCY)  # user tasks: own rows, in no figure above
    if users:
        for t in users:
            per_task[t] = {"accuracy": counts[t][0] / counts[t][1], "correct": counts[t][0], "total": counts[t][1],
                           "competency": None, "user_task": True}
        out["user_tasks"], out["user_task_note"] = users, USER_TASK_NOTE
    return out


def bootstrap_intervals(correct, tasks, n_resamples, confidence, seed) -> dict:
    """Stratified percentile bootstrap of every figure :func:`summarize` returns (inputs checked by the caller).

    Each resample draws, for every task, as many items as the task has, with replacement from that task's items
    (task sizes stay fixed), and recomputes the task accuracies, the competency means, ``average`` and
    ``micro_accuracy``. Only the number of correct items in a task's resample matters, and drawing n items with
    replacement from n items of which k are correct gives a Binomial(n, k/n) count, so that count is drawn
    directly (same distribution, O(resamples) per task instead of O(resamples x items)). Draws are made task by
    task in registry order from ``numpy.random.default_rng(seed)``: the same inputs and seed give the same
    intervals. Returns ``{"tasks": {task: [lo, hi]}, "competencies": {competency: [lo, hi]}, "average": [lo, hi]
    | None, "micro_accuracy": [lo, hi] | None, "confidence", "n_resamples", "seed", "method"}``.
    """
    import numpy as np  # lazy: the package's start-up (every command imports this module) does not need numpy

    point = summarize(correct, tasks)
    rng = np.random.default_rng(seed)
    acc, hits = {}, {}
    for t, row in point["tasks"].items():  # registry order, then user tasks: the ten's draws do not depend on them
        hits[t] = rng.binomial(row["total"], row["correct"] / row["total"], size=n_resamples)
        acc[t] = hits[t] / row["total"]
    comp = {}
    for c in point["competencies"]:
        comp[c] = np.mean([acc[t] for t in acc if TASK_TO_COMPETENCY.get(t) == c], axis=0)
    alpha = (1.0 - confidence) / 2.0

    def interval(samples):
        lo, hi = np.quantile(samples, [alpha, 1.0 - alpha])
        return [float(lo), float(hi)]

    n = point["n"]
    return {
        "tasks": {t: interval(a) for t, a in acc.items()},
        "competencies": {c: interval(s) for c, s in comp.items()},
        "average": interval(np.mean(list(comp.values()), axis=0)) if comp else None,
        "micro_accuracy": interval(np.sum([hits[t] for t in hits if t in TASK_TO_COMPETENCY], axis=0) / n) if n else None,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "method": "percentile bootstrap; items resampled with replacement within each task",
    }
# END METRIC COPY


def aggregate(correct: Sequence[bool], tasks: Sequence[str]) -> dict:
    """Summarise per-item correctness (aligned with each item's task name), checked first: :func:`summarize`."""
    _check_items(correct, tasks)
    return summarize(correct, tasks)


def bootstrap_ci(
    correct: Sequence[bool],
    tasks: Sequence[str],
    *,
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> dict:
    """Percentile-bootstrap confidence intervals for every figure :func:`aggregate` returns, the inputs checked
    first: :func:`bootstrap_intervals`."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    _check_items(correct, tasks)
    return bootstrap_intervals(correct, tasks, n_resamples, confidence, seed)


def _check_items(correct: Sequence[bool], tasks: Sequence[str]) -> None:
    if len(correct) != len(tasks):
        raise ValueError(f"length mismatch: {len(correct)} correctness values for {len(tasks)} task labels")
    for task in dict.fromkeys(tasks):  # first seen first: the error names the first bad item's task
        if task not in TASK_BY_NAME:
            user_task(task)  # a clear error for a name no task can have (blank, a competency's)
