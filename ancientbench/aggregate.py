"""The paper's arithmetic, in one place: item correctness -> task accuracy -> competency -> average.

Task accuracy is the fraction of its items answered correctly; a competency score is the unweighted
mean of its tasks' accuracies; ``average`` is the unweighted mean of the four competency scores
(AncientBench paper, as in Tables 2-3). ``micro_accuracy`` (all items pooled) is reported beside it.
Used by the scorer's results files, the evaluate metric and the reports, so the figures always agree.
"""

from __future__ import annotations

from typing import Sequence

from .tasks import COMPETENCIES, COMPETENCY_TASKS, TASK_NAMES, TASK_TO_COMPETENCY, get_task


def aggregate(correct: Sequence[bool], tasks: Sequence[str]) -> dict:
    """Summarise per-item correctness (aligned with each item's task name).

    Returns ``{"tasks": {task: {"accuracy", "correct", "total", "competency"}}, "competencies":
    {competency: score}, "average": float | None, "micro_accuracy": float, "n": int, "complete": bool}``.
    Competencies with no scored task are left out; ``average`` is the mean of the competencies present
    and ``complete`` says whether all ten tasks were scored (only then is it the paper's average).
    """
    if len(correct) != len(tasks):
        raise ValueError(f"length mismatch: {len(correct)} correctness values for {len(tasks)} task labels")
    counts: dict[str, list[int]] = {}
    for ok, task in zip(correct, tasks):
        get_task(task)  # raises a clear error for unknown task names
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
        accs = [per_task[t]["accuracy"] for t in COMPETENCY_TASKS[comp] if t in per_task]
        if accs:
            competencies[comp] = sum(accs) / len(accs)
    n = sum(c[1] for c in counts.values())
    return {
        "tasks": per_task,
        "competencies": competencies,
        "average": sum(competencies.values()) / len(competencies) if competencies else None,
        "micro_accuracy": sum(c[0] for c in counts.values()) / n if n else None,
        "n": n,
        "complete": len(per_task) == len(TASK_NAMES),
    }
