"""The two combined knowledge-free predictors: readers who combine weak cues, as code (issues 22 and 34).

A single shortcut rule can be bounded while a reader who *combines* weak cues still finds the key. Two such
readers, named by what they read:

- the **options-only predictor** sees the four options alone, never the stem (no question text, no head
  character): the MCQ form of the hypothesis-only baseline of NLI. Its features: every strategy of
  :mod:`ancientbench.quality.strategies` that reads no stem (``READS_STEM`` lists those that do), the option's
  length, its recurrence as an option in the task (log, counted over test and dev as the builders choose them),
  how often its characters recur among the task's options, its number of Mandarin readings, and how many other
  options share a Mandarin syllable with it. Items are rebuilt with an empty question before any feature is
  computed, so no stem can reach it.
- the **stem-reading predictor** sees the question too: every strategy, the stem-reading ones included
  (is_component, same_phonetic_series, Mandarin closeness to the head character, question overlap, unigram LM),
  with the same option features. It is the test-wise reader who sees the question but lacks the knowledge; on
  the glyph tasks its features are the task's own knowledge (the head character's parts).

Each feature is also centred on its item's mean and ranked within the item (tied options share a rank), so the
models compare options within an item and no feature reads an option's letter; a guess among options the model
rates equally goes by a hash of their text (data 2.5.2: before, both went by letter, and dealing the letters
again moved a figure by up to two points). Models (scikit-learn): logistic regression on standardised features and
gradient-boosted trees (``HistGradientBoostingClassifier``); protocol: 5-fold cross-fitting over items (an item's
four options always in one fold, its fold a hash of its id, so a fixed fold whatever else is built), each held-out
item's guess the option with the highest predicted probability. A predictor's figure is the better model's accuracy
with a 95% Wilson interval; ``predictions`` gives its per-item guesses (the ladder's reference rows). Chance is 25%.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence

from ..tasks import LETTERS
from .strategies import READS_STEM, STRATEGIES, Context, Item, chars, toneless

FOLDS = 5
SEED = 0
MODELS = ("logistic", "trees")
MIN_ITEMS = 20  # fewer items than this: no cross-fitted figure (a fold would hold one or two items)
OPTIONS_ONLY = "options_only"
STEM_READING = "stem_reading"
PREDICTORS = (OPTIONS_ONLY, STEM_READING)
PREDICTOR_NAMES = {OPTIONS_ONLY: "options-only predictor", STEM_READING: "stem-reading predictor"}
OPTIONS_ONLY_STRATEGIES: tuple[str, ...] = tuple(n for n in STRATEGIES if n not in READS_STEM)


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _within_item(values):
    """Per-item centring and rank of a (items, 4) array; tied options share their mean rank, so no feature
    reads an option's letter."""
    from scipy.stats import rankdata  # lazy: with scikit-learn, only for the combined predictors

    centred = values - values.mean(axis=1, keepdims=True)
    return centred, rankdata(values.round(9), method="average", axis=1) - 1.0  # rounded: a sum's order is no rank


def tie_breaks(rows: Sequence[Mapping[str, str]]):
    """(items, 4) keys that order tied options by a hash of their text, not by their letter: a guess among options
    a model cannot tell apart then stays the same when the letters are dealt again."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    digest = lambda o: int.from_bytes(hashlib.sha256(o.strip().encode()).digest()[:6], "big")  # noqa: E731
    return np.array([[digest(r[L]) for L in LETTERS] for r in rows], dtype=float).reshape(-1, 4)


def _pick(proba, ties):
    """Each row's most probable option; among options equally probable, the lowest tie-break key."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    top = np.isclose(proba, proba.max(axis=1, keepdims=True), rtol=0, atol=1e-12)
    return np.where(top, ties, np.inf).argmin(axis=1)


def _shared_syllables(options: Sequence[str]) -> list[float]:
    """How many of the other options share a Mandarin syllable (toneless) with each option."""
    sounds = [frozenset().union(*(toneless(c) for c in chars(o))) if chars(o) else frozenset() for o in options]
    return [float(sum(1 for j, t in enumerate(sounds) if j != i and s & t)) for i, s in enumerate(sounds)]


def _item(row: Mapping[str, str], with_stem: bool) -> tuple[Item, int]:
    """The row as an item (options stripped) and its key's index; without the stem the question is empty."""
    return (Item.make(row["task"], row["question"] if with_stem else "", [row[L] for L in LETTERS]),
            LETTERS.index(row["answer"]))


def _option_features(items: Sequence[Item], ctx: Context, char_counts: Counter) -> dict:
    """Per-option features that read the options alone, each an (items, 4) array."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    n = len(items)
    out = {k: np.zeros((n, 4)) for k in ("length", "recurrence", "char_recurrence", "readings", "shared_syllables")}
    for i, item in enumerate(items):
        for j, o in enumerate(item.options):
            cs = chars(o)
            out["length"][i, j] = len(o)
            out["recurrence"][i, j] = math.log(max(1, ctx.option_counts[o]))
            out["char_recurrence"][i, j] = sum(math.log(max(1, char_counts[c])) for c in cs) / len(cs) if cs else 0.0
            out["readings"][i, j] = sum(len(toneless(c)) for c in cs) / len(cs) if cs else 0.0
        out["shared_syllables"][i] = _shared_syllables(item.options)
    return out


def feature_matrix(rows: Sequence[Mapping[str, str]], ctx: Context, names: Sequence[str] | None = None,
                   count_rows: Sequence[Mapping[str, str]] | None = None, *, with_stem: bool = True):
    """(X of shape (items*4, features), y of shape (items*4,), gold index per item, feature names). Strategies
    ``names`` (default: every strategy; without the stem, those that read none); option recurrence counted over
    ``count_rows`` (default: the rows). ``with_stem=False`` empties every question first: the options-only reader."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    names = list(names or (STRATEGIES if with_stem else OPTIONS_ONLY_STRATEGIES))
    if not with_stem and set(names) & READS_STEM:
        raise ValueError(f"strategies that read the stem in an options-only matrix: {sorted(set(names) & READS_STEM)}")
    counted = [r[L].strip() for r in (rows if count_rows is None else count_rows) for L in LETTERS]
    ctx.option_counts = Counter(counted)
    items, gold = zip(*(_item(r, with_stem) for r in rows)) if rows else ((), ())
    gold = np.array(gold, dtype=int)
    scores = np.zeros((len(names), len(items), 4))
    for i, item in enumerate(items):
        for k, name in enumerate(names):
            scores[k, i] = STRATEGIES[name](item, ctx)
    scores = np.nan_to_num(scores, nan=0.0, posinf=1e6, neginf=-1e6)
    columns, labels = [], []
    for k, name in enumerate(names):
        s = scores[k]
        picks = np.isclose(s, s.max(axis=1, keepdims=True), rtol=0, atol=1e-12).astype(float)
        centred, rank = _within_item(s)
        columns += [s, centred, rank, picks]
        labels += [name, f"{name}:centred", f"{name}:rank", f"{name}:picks"]
    for base, values in _option_features(items, ctx, Counter(c for o in counted for c in chars(o))).items():
        centred, rank = _within_item(values)
        columns += [values, centred, rank]
        labels += [base, f"{base}:centred", f"{base}:rank"]
    X = np.stack([c.reshape(-1) for c in columns], axis=1)
    y = (np.arange(4)[None, :] == gold[:, None]).astype(int).reshape(-1)
    return X, y, gold, labels


def new_model(kind: str):
    """An unfitted model of one family (``MODELS``), as the predictors fit it."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # lazy: scikit-learn only for the combined predictors (seconds to import)
    from sklearn.linear_model import LogisticRegression  # lazy: scikit-learn only for the combined predictors (seconds to import)
    from sklearn.pipeline import make_pipeline  # lazy: scikit-learn only for the combined predictors (seconds to import)
    from sklearn.preprocessing import StandardScaler  # lazy: scikit-learn only for the combined predictors (seconds to import)

    if kind == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=15, random_state=SEED)


def item_folds(rows: Sequence[Mapping[str, str]], folds: int = FOLDS, seed: int = SEED) -> list[int]:
    """Each item's fold, from a hash of its id: an item added or left out moves no other item to another fold."""
    return [int.from_bytes(hashlib.sha256(f"{seed}:{r['id']}".encode()).digest()[:8], "big") % folds for r in rows]


def cross_validated_guesses(X, y, n_items: int, kind: str, fold_of: Sequence[int], ties):
    """Each item's guessed option index, from a model trained on the other folds' items (``fold_of``:
    :func:`item_folds`; ``ties``: :func:`tie_breaks`, in the order of ``X``'s options)."""
    from sklearn.model_selection import PredefinedSplit  # lazy: scikit-learn only for the combined predictors
    from threadpoolctl import threadpool_limits  # lazy: with scikit-learn (a dependency of scikit-learn)

    with threadpool_limits(limits=1):  # one thread: the same figures on any machine, no oversubscribed cores
        return _guesses(X, y, n_items, kind, PredefinedSplit(fold_of), ties)


def _guesses(X, y, n_items: int, kind: str, split, ties):
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    guesses = np.zeros(n_items, dtype=int)
    items = np.arange(n_items)
    for train_items, test_items in split.split(items):
        rows_of = lambda idx: (idx[:, None] * 4 + np.arange(4)[None, :]).reshape(-1)  # noqa: E731
        tr, te = rows_of(train_items), rows_of(test_items)
        if len(set(y[tr])) < 2:
            continue
        model = new_model(kind).fit(X[tr], y[tr])
        proba = model.predict_proba(X[te])[:, 1].reshape(-1, 4)
        guesses[test_items] = _pick(proba, ties[test_items])
    return guesses


def _fit(X, y, gold, rows) -> dict:
    """Both models' cross-fitted accuracy and the better one's per-item predictions. Each item's options are fitted
    in the order of their tie-break keys, not their letters: dealing the letters again changes no figure."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    n = len(gold)
    out: dict = {"n": n, "models": {}}
    best = None
    ties = tie_breaks(rows)
    order = ties.argsort(axis=1)
    canonical = (np.arange(n)[:, None] * 4 + order).reshape(-1)
    X = X.round(9)[canonical]  # rounded: a value summed in another order differs in its last bits, and trees bin it
    y, ties, fold_of = y[canonical], np.take_along_axis(ties, order, axis=1), item_folds(rows)
    for kind in MODELS:
        picked = cross_validated_guesses(X, y, n, kind, fold_of, ties)
        g = order[np.arange(n), picked]
        correct = int((g == gold).sum())
        out["models"][kind] = {"accuracy": correct / n, "correct": correct, "ci95": wilson(correct, n)}
        if best is None or correct > out["models"][best[0]]["correct"]:
            best = (kind, g)
    out["best_model"] = best[0]
    out["accuracy"] = out["models"][best[0]]["accuracy"]
    out["ci95"] = out["models"][best[0]]["ci95"]
    out["predictions"] = [LETTERS[i] for i in best[1]]
    return out


def options_only_predictor(rows: Sequence[Mapping[str, str]], ctx: Context,
                           count_rows: Sequence[Mapping[str, str]] | None = None, names: Sequence[str] | None = None) -> dict:
    """The options-only predictor on one task's rows (strategies ``names``, default every one that reads no stem):
    both models' cross-fitted accuracy, the better one's figure, interval and per-item predictions. ``ctx.freq``
    must not be counted from the stems (the audit passes the classics corpus or the options' own characters)."""
    X, y, gold, _ = feature_matrix(rows, ctx, names, count_rows, with_stem=False)
    return {"predictor": OPTIONS_ONLY, **_fit(X, y, gold, rows)}


def stem_reading_predictor(rows: Sequence[Mapping[str, str]], ctx: Context, names: Sequence[str] | None = None,
                           count_rows: Sequence[Mapping[str, str]] | None = None) -> dict:
    """The stem-reading predictor on one task's rows (strategies ``names``, default all): as
    :func:`options_only_predictor`, with the stem."""
    X, y, gold, _ = feature_matrix(rows, ctx, names, count_rows, with_stem=True)
    return {"predictor": STEM_READING, **_fit(X, y, gold, rows)}
