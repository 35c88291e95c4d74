"""Calibration of the letter probabilities stored in predictions files: ECE, Brier score, reliability diagram.

The scorer stores, per item, the log-probabilities of the four letter tokens at the answer position.
Here they are turned into a distribution over the four options (softmax over the four, i.e. the
letters' probabilities renormalised), and

- confidence = the probability of the predicted letter (``pred``), correct = ``pred == gold``;
- expected calibration error (Guo et al. 2017): items are put into ``bins`` equal-width confidence
  bins, (0, 1/M], (1/M, 2/M], ..., ((M-1)/M, 1] (a confidence of exactly 0 goes to the first bin), and
  ECE = sum over bins of (items in bin / all items) * |accuracy in bin - mean confidence in bin|;
- Brier score, multi-class (as lm-eval's ``brier_score``): mean over items of sum over the four
  options of (p_option - 1[option is gold])^2; 0 is perfect, 2 the worst.

Figures are given per task, per competency and overall; a competency's (and the overall) figure pools
the items of its tasks (calibration is not an average of averages). Predictions without log-probs
(the human baseline; items too long for the model, whose ``pred`` is null) are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..table import render
from ..tasks import (
    COMPETENCIES,
    COMPETENCY_DISPLAY,
    COMPETENCY_TASKS,
    LETTERS,
    TASK_BY_NAME,
    TASK_NAMES,
)

DEFAULT_BINS = 10


def letter_probs(logprobs: Sequence[Sequence[float]]):
    """Softmax over the four letters of each row of log-probs: an (N, 4) array whose rows sum to 1."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    lp = np.asarray(logprobs, dtype=float)
    if lp.ndim != 2 or lp.shape[1] != 4:
        raise ValueError(f"expected N x 4 log-probabilities, got shape {lp.shape}")
    lp = lp - lp.max(axis=1, keepdims=True)
    p = np.exp(lp)
    return p / p.sum(axis=1, keepdims=True)


def bin_index(confidence, bins: int):
    """Bin of each confidence among ``bins`` equal-width bins (lo, hi]; 0 goes to the first bin."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    c = np.asarray(confidence, dtype=float)
    return np.clip(np.ceil(c * bins).astype(int) - 1, 0, bins - 1)


def reliability(confidence, correct, bins: int = DEFAULT_BINS) -> list[dict]:
    """Per bin: its edges, item count, accuracy and mean confidence (None for an empty bin)."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    c = np.asarray(confidence, dtype=float)
    y = np.asarray(correct, dtype=float)
    idx = bin_index(c, bins)
    out = []
    for b in range(bins):
        m = idx == b
        n = int(m.sum())
        out.append(
            {
                "lo": b / bins,
                "hi": (b + 1) / bins,
                "n": n,
                "accuracy": float(y[m].mean()) if n else None,
                "confidence": float(c[m].mean()) if n else None,
            }
        )
    return out


def expected_calibration_error(confidence, correct, bins: int = DEFAULT_BINS) -> float:
    """ECE over ``bins`` equal-width bins (see the module docstring)."""
    n = len(confidence)
    if n == 0:
        raise ValueError("expected_calibration_error needs at least one item")
    return float(sum(b["n"] / n * abs(b["accuracy"] - b["confidence"]) for b in reliability(confidence, correct, bins) if b["n"]))


def brier_score(probs, gold_index) -> float:
    """Multi-class Brier score: mean over items of sum over options of (p - onehot(gold))^2."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    p = np.asarray(probs, dtype=float)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(p)), np.asarray(gold_index, dtype=int)] = 1.0
    return float(((p - onehot) ** 2).sum(axis=1).mean())


def scorable(predictions: list[dict]) -> list[dict]:
    """The predictions that carry log-probs and a predicted letter (others, e.g. human answers or items
    too long for the model, have nothing to calibrate)."""
    return [p for p in predictions if p.get("logprobs") is not None and p.get("pred") in LETTERS]


def _arrays(predictions: list[dict]):
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    probs = letter_probs([p["logprobs"] for p in predictions])
    pred = np.array([LETTERS.index(p["pred"]) for p in predictions])
    gold = np.array([LETTERS.index(p["gold"]) for p in predictions])
    conf = probs[np.arange(len(pred)), pred]
    return probs, conf, pred == gold, gold


def _figures(probs, conf, correct, gold, bins: int) -> dict:
    return {
        "n": int(len(conf)),
        "ece": expected_calibration_error(conf, correct, bins),
        "brier": brier_score(probs, gold),
        "accuracy": float(correct.mean()),
        "mean_confidence": float(conf.mean()),
    }


def calibration(predictions: list[dict], bins: int = DEFAULT_BINS) -> dict | None:
    """ECE, Brier score, accuracy and mean confidence per task, competency and overall, plus the overall
    reliability bins, over the items with log-probs (``excluded_items`` counts the others); None when no
    item has them (nothing to calibrate)."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    usable = scorable(predictions)
    if not usable:
        return None
    probs, conf, correct, gold = _arrays(usable)
    tasks = np.array([p["task"] for p in usable])
    out: dict = {"bins": bins, "binning": "equal-width, (lo, hi]", "excluded_items": len(predictions) - len(usable), "tasks": {}, "competencies": {}}
    for t in TASK_NAMES:
        m = tasks == t
        if m.any():
            out["tasks"][t] = _figures(probs[m], conf[m], correct[m], gold[m], bins)
    for c in COMPETENCIES:
        m = np.isin(tasks, COMPETENCY_TASKS[c])
        if m.any():
            out["competencies"][c] = _figures(probs[m], conf[m], correct[m], gold[m], bins)
    out["overall"] = _figures(probs, conf, correct, gold, bins)
    out["reliability"] = reliability(conf, correct, bins)
    return out


def markdown_table(rows: list[tuple[str, dict]]) -> str:
    """One row per model: overall ECE and Brier, then ECE per competency (in %)."""
    head = ["Model", "ECE (%)", "Brier", *(f"ECE {COMPETENCY_DISPLAY[c][0]} {COMPETENCY_DISPLAY[c][1]}" for c in COMPETENCIES), "mean conf. (%)", "acc. (%)"]
    body = []
    for label, cal in rows:
        comp = [f"{100 * cal['competencies'][c]['ece']:.1f}" if c in cal["competencies"] else "–" for c in COMPETENCIES]
        o = cal["overall"]
        body.append([label, f"{100 * o['ece']:.1f}", f"{o['brier']:.3f}", *comp, f"{100 * o['mean_confidence']:.1f}", f"{100 * o['accuracy']:.1f}"])
    return render(head, body, style="markdown")


def task_markdown_table(label: str, cal: dict) -> str:
    """Per task ECE, Brier, accuracy and mean confidence for one result."""
    head = [f"{label}: task", "n", "ECE (%)", "Brier", "acc. (%)", "mean conf. (%)"]
    body = [[TASK_BY_NAME[t].display_en, str(f["n"]), f"{100 * f['ece']:.1f}", f"{f['brier']:.3f}", f"{100 * f['accuracy']:.1f}", f"{100 * f['mean_confidence']:.1f}"]
            for t, f in cal["tasks"].items()]
    return render(head, body, style="markdown")


def reliability_plot(entries: list[tuple[str, list[dict]]], path: str | Path, *, bins: int = DEFAULT_BINS, title: str = "Reliability") -> None:
    """Reliability diagram saved to ``path`` (see :func:`reliability_figure`)."""
    import matplotlib.pyplot as plt  # lazy: matplotlib takes a second to import; only the plots need it

    fig = reliability_figure(entries, bins=bins, title=title)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def reliability_figure(entries: list[tuple[str, list[dict]]], *, bins: int = DEFAULT_BINS, title: str = "Reliability"):
    """Reliability diagram, one panel per result: accuracy per confidence bin against the diagonal,
    with the bin counts as a histogram underneath and the ECE in the panel title."""
    import matplotlib  # lazy: matplotlib takes a second to import; only the plots need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib takes a second to import; only the plots need it
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    n = len(entries)
    if n == 0:
        raise ValueError("reliability_plot needs at least one result")
    ncols = min(3, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        2 * nrows, ncols, figsize=(4.4 * ncols, 4.8 * nrows), squeeze=False, gridspec_kw={"height_ratios": [3, 1] * nrows},
        layout="constrained",
    )
    width = 1.0 / bins
    for k, (label, preds) in enumerate(entries):
        r, c = divmod(k, ncols)
        ax, hx = axes[2 * r][c], axes[2 * r + 1][c]
        probs, conf, correct, gold = _arrays(scorable(preds))
        rel = reliability(conf, correct, bins)
        centers = np.array([(b["lo"] + b["hi"]) / 2 for b in rel])
        acc = np.array([b["accuracy"] if b["n"] else 0.0 for b in rel])
        mconf = np.array([b["confidence"] if b["n"] else np.nan for b in rel])
        ax.bar(centers, acc, width=width * 0.95, color="tab:blue", edgecolor="white", label="accuracy")
        ax.bar(centers, np.where(np.isnan(mconf), 0, mconf - acc), bottom=acc, width=width * 0.95, color="tab:red", alpha=0.25, hatch="//", edgecolor="tab:red", label="gap to confidence")
        ax.plot([0, 1], [0, 1], color="0.3", linestyle="--", linewidth=1, label="perfect calibration")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.set_title(f"{label}\nECE {100 * expected_calibration_error(conf, correct, bins):.1f}%, Brier {brier_score(probs, gold):.3f}", fontsize=10)
        if k == 0:
            ax.legend(fontsize=7, loc="upper left", frameon=False)
        hx.bar(centers, [b["n"] for b in rel], width=width * 0.95, color="0.5")
        hx.set_xlim(0, 1)
        hx.set_xlabel("confidence")
        hx.set_ylabel("items")
    for k in range(n, nrows * ncols):
        r, c = divmod(k, ncols)
        axes[2 * r][c].axis("off")
        axes[2 * r + 1][c].axis("off")
    fig.suptitle(title)
    fig.supxlabel(f"confidence = probability of the predicted letter, {bins} bins", fontsize=9)
    return fig
