"""AncientBench metric for Hugging Face ``evaluate``: the paper's scores from per-item predictions.

Owns only the evaluate wrapper: label parsing and input checks. The arithmetic (task accuracy ->
competency mean -> average, micro accuracy, bootstrap intervals) is ``ancientbench.aggregate``, the
same code the scorer and the reports use, so every route gives the same figures.
"""

import datasets
import evaluate

from ancientbench.aggregate import DEFAULT_BOOTSTRAP_RESAMPLES
from ancientbench.aggregate import DEFAULT_BOOTSTRAP_SEED
from ancientbench.aggregate import DEFAULT_CONFIDENCE
from ancientbench.aggregate import aggregate
from ancientbench.aggregate import bootstrap_ci
from ancientbench.tasks import LETTERS
from ancientbench.tasks import TASK_NAMES

_CITATION = """\
@software{ancientbench,
  title   = {AncientBench: evaluating language models on ancient Chinese, excavated and transmitted documents},
  version = {0.1.0},
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
    predictions (`list` of `str` or `int`): predicted answers, letters "A"-"D" or indices 0-3.
        An empty string means the model gave no parsable answer; it is scored as wrong.
    references (`list` of `str` or `int`): gold answers, letters "A"-"D" or indices 0-3.
    tasks (`list` of `str`): each item's task (config) name, one of: radical, radical_meaning,
        pronunciation, phonetic_radical, homophone, excdoc_word, tradoc_word, cloze, phonetic_loan,
        translation.
    n_resamples (`int`, default 10000): bootstrap resamples; 0 turns the intervals off.
    confidence (`float`, default 0.95): confidence level of the intervals.
    seed (`int`, default 1234): seed of the bootstrap, so the intervals are reproducible.

Returns:
    tasks (`dict`): per task, `accuracy`, `correct`, `total` and `competency`.
    competencies (`dict`): per competency, the mean accuracy of its tasks (competencies with no task
        in the input are left out).
    average (`float`): mean of the competency scores, the paper's headline figure.
    micro_accuracy (`float`): correct items / all items.
    n (`int`): number of items. complete (`bool`): whether all ten tasks were scored (only then is
        `average` the paper's average).
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

_LABEL_TYPES = {"letter": datasets.Value("string"), "index": datasets.Value("int64")}


def _features(pred_type: str, ref_type: str) -> datasets.Features:
    return datasets.Features(
        {
            "predictions": _LABEL_TYPES[pred_type],
            "references": _LABEL_TYPES[ref_type],
            "tasks": datasets.Value("string"),
        }
    )


def _label_index(value, column: str, position: int, allow_empty: bool) -> int:
    """Map "A"-"D" or 0-3 to 0-3 (-1 for an allowed empty answer); anything else is a clear error."""
    if isinstance(value, str):
        if value in LETTERS:
            return LETTERS.index(value)
        if value == "" and allow_empty:
            return -1
    elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(LETTERS):
        return value
    raise ValueError(
        f"{column}[{position}]: invalid label {value!r}; expected one of 'A', 'B', 'C', 'D' or an index 0-3"
        + (" (or '' for no answer)" if allow_empty else "")
    )


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AncientbenchMetric(evaluate.Metric):
    """AncientBench accuracy per task and competency, paper average, micro accuracy, bootstrap CIs."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            # letters or indices, for predictions and references independently
            features=[_features(p, r) for p in _LABEL_TYPES for r in _LABEL_TYPES],
        )

    def _compute(
        self,
        predictions,
        references,
        tasks,
        n_resamples=DEFAULT_BOOTSTRAP_RESAMPLES,
        confidence=DEFAULT_CONFIDENCE,
        seed=DEFAULT_BOOTSTRAP_SEED,
    ):
        if not (len(predictions) == len(references) == len(tasks)):
            raise ValueError(
                f"length mismatch: {len(predictions)} predictions, {len(references)} references, {len(tasks)} tasks"
            )
        if not predictions:
            raise ValueError("no items to score: predictions, references and tasks are empty")
        for i, task in enumerate(tasks):
            if task not in TASK_NAMES:
                raise ValueError(f"tasks[{i}]: unknown task {task!r}; valid tasks: {', '.join(TASK_NAMES)}")
        pred = [_label_index(p, "predictions", i, allow_empty=True) for i, p in enumerate(predictions)]
        gold = [_label_index(r, "references", i, allow_empty=False) for i, r in enumerate(references)]
        correct = [p == g for p, g in zip(pred, gold)]
        result = aggregate(correct, list(tasks))
        if n_resamples:
            result["ci"] = bootstrap_ci(correct, list(tasks), n_resamples=n_resamples, confidence=confidence, seed=seed)
        return result
