"""AncientBench metric for Hugging Face ``evaluate``: the paper's scores from per-item predictions.

Self-contained, as evaluate metric modules are (a metric Space installs only ``requirements.txt``): the task
table and the arithmetic (task accuracy -> competency mean -> average, micro accuracy, stratified bootstrap
intervals) are generated into it from ``ancientbench/tasks.py`` and ``ancientbench/aggregate.py`` (the package's
scorer and reports run the same text) by ``python -m ancientbench.publish.copies``; never edit those blocks here.
Inputs are checked up front, before evaluate stores anything, so a bad call names the offending element and leaves
the metric usable.
"""

import datasets
import evaluate
import numpy as np

LETTERS = ("A", "B", "C", "D")
# task -> competency, in the paper's order: generated from ancientbench/tasks.py (python -m ancientbench.publish.copies)
# BEGIN GENERATED: tasks
TASK_TO_COMPETENCY = {
    "radical": "glyph",
    "radical_meaning": "glyph",
    "pronunciation": "pronunciation",
    "phonetic_radical": "pronunciation",
    "homophone": "pronunciation",
    "excdoc_word": "meaning",
    "tradoc_word": "meaning",
    "cloze": "context",
    "phonetic_loan": "context",
    "translation": "context",
}
TASK_NAMES = tuple(TASK_TO_COMPETENCY)
COMPETENCIES = ("glyph", "pronunciation", "meaning", "context")
USER_TASK_NOTE = ("user task: not one of the ten AncientBench tasks; its own row, outside the "
                  "competency means, the average and micro accuracy")
# END GENERATED: tasks

_CITATION = """\
@misc{zhou2025ancientbench,
  title         = {AncientBench: Towards Comprehensive Evaluation on Excavated and Transmitted Chinese Corpora},
  author        = {Zhou, Zhihan and Shi, Daqian and Song, Rui and Shi, Lida and Diao, Xiaolei and Xu, Hao},
  year          = {2025},
  eprint        = {2512.17756},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL},
  url           = {https://arxiv.org/abs/2512.17756}
}
"""

_DESCRIPTION = """\
Scores four-option multiple-choice answers on the ten AncientBench tasks the way the AncientBench paper
does: accuracy per task, each competency (glyph, pronunciation, meaning, context) as the unweighted mean
of its tasks' accuracies, and `average` as the unweighted mean of the four competencies. Also reports
micro accuracy (all items pooled) and 95% percentile-bootstrap confidence intervals for every figure,
resampling items within each task with a fixed seed.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str` or `int`): predicted answers, letters "A"-"D" or indices 0-3 (the two may be
        mixed). `None` or an empty string means the model gave no parsable answer; it is scored as wrong.
        Booleans are rejected (True is not index 1).
    references (`list` of `str` or `int`): gold answers, letters "A"-"D" or indices 0-3.
        Every input is checked before anything is stored: a bad element raises a ValueError naming it
        (e.g. `predictions[3]: invalid label 'E'`) and the metric stays usable for the next call.
    tasks (`list` of `str`): each item's task (config) name, one of: radical, radical_meaning,
        pronunciation, phonetic_radical, homophone, excdoc_word, tradoc_word, cloze, phonetic_loan,
        translation.
    n_resamples (`int`, default 10000): bootstrap resamples; 0 turns the intervals off.
    confidence (`float`, default 0.95): confidence level of the intervals.
    seed (`int`, default 1234): seed of the bootstrap, so the intervals are reproducible.
    user_tasks (`list` of `str`, optional): names of tasks of your own that `tasks` may hold besides the ten
        (not one of the ten, nor a competency). Each gets its own row in `tasks` (`competency` None,
        `user_task` True), outside the competencies, `average`, `micro_accuracy` and `n`.

Returns:
    tasks (`dict`): per task, `accuracy`, `correct`, `total` and `competency`.
    competencies (`dict`): per competency, the mean accuracy of its tasks (competencies with no task
        in the input are left out).
    average (`float`): mean of the competency scores, the paper's headline figure.
    micro_accuracy (`float`): correct items / all items.
    n (`int`): number of items of the ten tasks. complete (`bool`): whether all ten tasks were scored (only
        then is `average` the paper's average).
    user_tasks (`list`), user_task_note (`str`): the user tasks scored and what their rows mean (only when
        there are some).
    ci (`dict`): `[low, high]` intervals with the same keys (`tasks`, `competencies`, `average`,
        `micro_accuracy`) plus `confidence`, `n_resamples`, `seed` and `method`; absent when
        n_resamples is 0.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/ancientbench_metric")
    >>> r = metric.compute(predictions=["A", "B"], references=["A", "C"], tasks=["radical", "cloze"])
    >>> r["tasks"]["radical"]["accuracy"], r["tasks"]["cloze"]["accuracy"], r["average"]
    (1.0, 0.0, 0.5)
"""


# the arithmetic: the text of ancientbench/aggregate.py between its METRIC COPY lines (python -m ancientbench.publish.copies)
# BEGIN GENERATED: arithmetic
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
# END GENERATED: arithmetic


def _as_letter(value, column, position, allow_empty):
    """"A"-"D" or 0-3 -> the letter; None or "" -> "" (no answer, scored wrong) where allowed; else a clear error."""
    if isinstance(value, str) and value in LETTERS:
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and 0 <= int(value) < len(LETTERS):
        return LETTERS[int(value)]
    if allow_empty and (value is None or value == ""):
        return ""
    raise ValueError(
        f"{column}[{position}]: invalid label {value!r}; expected one of 'A', 'B', 'C', 'D' or an index 0-3"
        + (" (or None / '' for no answer)" if allow_empty else "")
    )


def _user_tasks(user_tasks):
    """The ``user_tasks`` option as a set of names; a name of the ten or of a competency is refused."""
    if user_tasks is None:
        return set()
    if isinstance(user_tasks, (str, bytes)) or not hasattr(user_tasks, "__iter__"):
        raise ValueError(f"user_tasks must be a list of task names, got {type(user_tasks).__name__}")
    names = set(user_tasks)
    for name in sorted(names, key=str):
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(f"user_tasks: a user task's name must be a non-empty string without outer spaces, got {name!r}")
        if name in TASK_TO_COMPETENCY or name in COMPETENCIES or name == "all" or name.startswith("competency:"):
            raise ValueError(f"user_tasks: {name!r} is one of the ten tasks or a competency: a user task needs a name of its own")
    return names


def _checked(predictions, references, tasks, user_tasks=None):
    """Validate a whole batch before evaluate stores any of it; labels come back as letters."""
    columns = {"predictions": predictions, "references": references, "tasks": tasks}
    for name, col in columns.items():
        if col is None:
            raise ValueError(f"{name} is missing: pass predictions, references and tasks")
        if isinstance(col, (str, bytes)) or not hasattr(col, "__len__"):
            raise ValueError(f"{name} must be a list, got {type(col).__name__}")
    if not (len(predictions) == len(references) == len(tasks)):
        raise ValueError(
            f"length mismatch: {len(predictions)} predictions, {len(references)} references, {len(tasks)} tasks"
        )
    users = _user_tasks(user_tasks)
    for i, task in enumerate(tasks):
        if task not in TASK_TO_COMPETENCY and task not in users:
            raise ValueError(f"tasks[{i}]: unknown task {task!r}; valid tasks: {', '.join(TASK_NAMES)} "
                             "(a task of your own: name it in user_tasks=[...])")
    pred = [_as_letter(p, "predictions", i, allow_empty=True) for i, p in enumerate(predictions)]
    gold = [_as_letter(r, "references", i, allow_empty=False) for i, r in enumerate(references)]
    return pred, gold, list(tasks)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AncientbenchMetric(evaluate.Metric):
    """AncientBench accuracy per task and competency, paper average, micro accuracy, bootstrap CIs."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            # labels are normalised to letters before evaluate sees them (see compute/add_batch)
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string"), "tasks": datasets.Value("string")}
            ),
            reference_urls=["https://arxiv.org/abs/2512.17756"],
        )

    def _known_users(self, user_tasks=None):
        """User tasks named so far (by add/add_batch or this compute) together with ``user_tasks``, checked."""
        return getattr(self, "_users", set()) | _user_tasks(user_tasks)

    def add_batch(self, *, predictions=None, references=None, tasks=None, user_tasks=None, **kwargs):
        """Add a batch of (prediction, reference, task) rows; every row is checked first."""
        users = self._known_users(user_tasks)
        pred, gold, tasks = _checked(predictions, references, tasks, users)
        self._users = users
        out = super().add_batch(predictions=pred, references=gold, tasks=tasks, **kwargs)
        self._pending = getattr(self, "_pending", 0) + len(pred)
        return out

    def add(self, *, prediction=None, reference=None, task=None, user_tasks=None, **kwargs):
        """Add one (prediction, reference, task) row, checked first."""
        users = self._known_users(user_tasks)
        pred, gold, tasks = _checked([prediction], [reference], [task], users)
        self._users = users
        out = super().add(prediction=pred[0], reference=gold[0], tasks=tasks[0], **kwargs)
        self._pending = getattr(self, "_pending", 0) + 1
        return out

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score the given rows (or those added with add/add_batch); inputs are checked before anything is stored.
"""
        options = {k: kwargs.pop(k) for k in ("n_resamples", "confidence", "seed") if k in kwargs}
        _check_options(**options)
        users = self._known_users(kwargs.pop("user_tasks", None))
        options["user_tasks"] = sorted(users)
        if predictions is None and references is None and kwargs.get("tasks") is None:
            if not getattr(self, "_pending", 0):
                raise ValueError("no items to score: pass predictions, references and tasks, or add_batch() first")
            return self._compute_and_reset(**options, **kwargs)
        pred, gold, tasks = _checked(predictions, references, kwargs.pop("tasks", None), users)
        self._users = users  # evaluate's compute calls add_batch with these rows
        if not pred and not getattr(self, "_pending", 0):
            raise ValueError("no items to score: predictions, references and tasks are empty")
        return self._compute_and_reset(predictions=pred, references=gold, tasks=tasks, **options, **kwargs)

    def _compute_and_reset(self, **kwargs):
        try:
            return super().compute(**kwargs)  # evaluate's compute calls add_batch, which counts rows again
        finally:
            self._pending, self._users = 0, set()

    def _compute(
        self,
        predictions,
        references,
        tasks,
        n_resamples=DEFAULT_BOOTSTRAP_RESAMPLES,
        confidence=DEFAULT_CONFIDENCE,
        seed=DEFAULT_BOOTSTRAP_SEED,
        user_tasks=None,
    ):
        predictions, references, tasks = _checked(predictions, references, tasks, user_tasks)  # also when called directly
        if not predictions:
            raise ValueError("no items to score: predictions, references and tasks are empty")
        correct = [p != "" and p == g for p, g in zip(predictions, references)]
        result = summarize(correct, tasks)
        if n_resamples:
            result["ci"] = bootstrap_intervals(correct, tasks, n_resamples, confidence, seed)
        return result


def _check_options(n_resamples=DEFAULT_BOOTSTRAP_RESAMPLES, confidence=DEFAULT_CONFIDENCE, seed=DEFAULT_BOOTSTRAP_SEED):
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 0:
        raise ValueError(f"n_resamples must be a non-negative integer (0 turns intervals off), got {n_resamples!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
