"""The combined knowledge-free predictor: the options-only examinee as code.

A single shortcut rule can be bounded while a reader who *combines* weak option cues still finds the key. This
module measures that: every strategy of :mod:`ancientbench.quality.strategies` scores each option, and those
scores, with option-level features, feed two models that predict which option is the key:

- features of an option (each also centred on its item's mean, so the model compares options within an item):
  every strategy's score and whether the strategy picks it (strokes, 小韻 size, glyph parts shared with the
  other options, Mandarin closeness … are strategies), the option's length in characters, how many times the
  option string is an option in the task (recurrence, log, counted over test and dev as the builders choose
  them), how many other options share a Mandarin syllable with it, and its rank on each of those within the item;
- models (scikit-learn): logistic regression on standardised features, and gradient-boosted trees
  (``HistGradientBoostingClassifier``) for the non-linear shapes single rules miss;
- protocol: 5-fold cross-validation over the task's items (an item's four options always in one fold, folds
  drawn with a fixed seed); in each held-out item the option with the highest predicted probability is the guess.

The figure reported for a task is the better model's accuracy with a 95% Wilson interval; ``predictions`` gives
its per-item guesses (the *shortcut ceiling* reference row). Chance is 25%.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from ..tasks import LETTERS
from .strategies import STRATEGIES, Context, chars, item_from_row, toneless

FOLDS = 5
SEED = 0
MODELS = ("logistic", "trees")


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _within_item(values):
    """Per-item centring and rank of a (items, 4) array."""

    centred = values - values.mean(axis=1, keepdims=True)
    rank = values.argsort(axis=1).argsort(axis=1).astype(float)
    return centred, rank


def _shared_syllables(options: Sequence[str]) -> list[float]:
    """How many of the other options share a Mandarin syllable (toneless) with each option."""
    sounds = [frozenset().union(*(toneless(c) for c in chars(o))) if chars(o) else frozenset() for o in options]
    return [float(sum(1 for j, t in enumerate(sounds) if j != i and s & t)) for i, s in enumerate(sounds)]


def feature_matrix(rows: Sequence[Mapping[str, str]], ctx: Context, names: Sequence[str] | None = None,
                   count_rows: Sequence[Mapping[str, str]] | None = None):
    """(X of shape (items*4, features), y of shape (items*4,), gold index per item, feature names); option
    recurrence is counted over ``count_rows`` (default: the rows)."""
    import numpy as np

    names = list(names or STRATEGIES)
    ctx.option_counts = Counter(r[L].strip() for r in (rows if count_rows is None else count_rows) for L in LETTERS)
    n = len(rows)
    scores = np.zeros((len(names), n, 4))
    length = np.zeros((n, 4))
    recurrence = np.zeros((n, 4))
    shared = np.zeros((n, 4))
    gold = np.zeros(n, dtype=int)
    for i, r in enumerate(rows):
        item, g = item_from_row(r)
        gold[i] = g
        for k, name in enumerate(names):
            scores[k, i] = STRATEGIES[name](item, ctx)
        length[i] = [len(o) for o in item.options]
        recurrence[i] = [math.log(max(1, ctx.option_counts[o])) for o in item.options]
        shared[i] = _shared_syllables(item.options)
    scores = np.nan_to_num(scores, nan=0.0, posinf=1e6, neginf=-1e6)
    columns, labels = [], []
    for k, name in enumerate(names):
        s = scores[k]
        picks = np.isclose(s, s.max(axis=1, keepdims=True), rtol=0, atol=1e-12).astype(float)
        centred, rank = _within_item(s)
        columns += [s, centred, rank, picks]
        labels += [name, f"{name}:centred", f"{name}:rank", f"{name}:picks"]
    for base, values in (("length", length), ("recurrence", recurrence), ("shared_syllables", shared)):
        centred, rank = _within_item(values)
        columns += [values, centred, rank]
        labels += [base, f"{base}:centred", f"{base}:rank"]
    X = np.stack([c.reshape(-1) for c in columns], axis=1)
    y = (np.arange(4)[None, :] == gold[:, None]).astype(int).reshape(-1)
    return X, y, gold, labels


def _model(kind: str):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=15, random_state=SEED)


MIN_ITEMS = 2  # k-fold cross-validation needs two folds at least (FOLDS when the task has that many items)


def cross_validated_guesses(X, y, n_items: int, kind: str, folds: int = FOLDS, seed: int = SEED):
    """Each item's guessed option index, from a model trained on the other folds' items."""
    import numpy as np
    from sklearn.model_selection import KFold

    guesses = np.zeros(n_items, dtype=int)
    split = KFold(n_splits=min(folds, n_items), shuffle=True, random_state=seed)
    items = np.arange(n_items)
    for train_items, test_items in split.split(items):
        rows_of = lambda idx: (idx[:, None] * 4 + np.arange(4)[None, :]).reshape(-1)  # noqa: E731
        tr, te = rows_of(train_items), rows_of(test_items)
        if len(set(y[tr])) < 2:
            continue
        model = _model(kind).fit(X[tr], y[tr])
        proba = model.predict_proba(X[te])[:, 1].reshape(-1, 4)
        guesses[test_items] = proba.argmax(axis=1)
    return guesses


def combined_predictor(rows: Sequence[Mapping[str, str]], ctx: Context, names: Sequence[str] | None = None,
                       count_rows: Sequence[Mapping[str, str]] | None = None) -> dict:
    """Both models' cross-validated accuracy on one task's rows, and the better one's per-item predictions."""
    X, y, gold, _ = feature_matrix(rows, ctx, names, count_rows)
    out: dict = {"n": len(rows), "models": {}}
    best = None
    for kind in MODELS:
        g = cross_validated_guesses(X, y, len(rows), kind)
        correct = int((g == gold).sum())
        out["models"][kind] = {"accuracy": correct / len(rows), "correct": correct, "ci95": wilson(correct, len(rows))}
        if best is None or correct > out["models"][best[0]]["correct"]:
            best = (kind, g)
    out["best_model"] = best[0]
    out["accuracy"] = out["models"][best[0]]["accuracy"]
    out["ci95"] = out["models"][best[0]]["ci95"]
    out["predictions"] = [LETTERS[i] for i in best[1]]
    return out
