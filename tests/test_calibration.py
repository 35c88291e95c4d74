"""Calibration: ECE, Brier score and reliability bins on six hand-computed items; the reliability PNG."""

from __future__ import annotations

import math

import pytest
from results_fixtures import row

from ancientbench.reports import calibration

# Six items with letter probabilities chosen away from bin edges; log-probs are their logs, so the
# softmax over the four letters gives the probabilities back.
ITEMS = [  # task, probabilities, pred, gold
    ("radical", [0.72, 0.12, 0.08, 0.08], "A", "A"),  # confidence .72, right
    ("radical", [0.72, 0.12, 0.08, 0.08], "A", "B"),  # .72, wrong
    ("radical", [0.04, 0.92, 0.02, 0.02], "B", "B"),  # .92, right
    ("cloze", [0.42, 0.30, 0.18, 0.10], "A", "A"),  # .42, right
    ("cloze", [0.42, 0.30, 0.18, 0.10], "A", "C"),  # .42, wrong
    ("cloze", [0.28, 0.24, 0.24, 0.24], "A", "D"),  # .28, wrong
]


def predictions(scale: float = 0.0) -> list[dict]:
    # adding a constant to every log-prob of an item must not change its softmax
    return [row(f"i{k}", t, g, pred == g, [math.log(x) + scale for x in p], pred=pred) for k, (t, p, pred, g) in enumerate(ITEMS)]


def test_figures_by_hand():
    cal = calibration.calibration(predictions(-7.5), bins=10)
    # bins (0.7,0.8]: 2 items, acc .5, conf .72 -> .22; (0.9,1]: acc 1, conf .92 -> .08;
    # (0.4,0.5]: acc .5, conf .42 -> .08; (0.2,0.3]: acc 0, conf .28 -> .28
    # ECE = (2*.22 + .08 + 2*.08 + .28) / 6 = .96 / 6 = .16
    assert cal["overall"]["ece"] == pytest.approx(0.16)
    # Brier per item: .1056, 1.3056, .0088, .4688, .9488, .7712 -> mean 3.6088 / 6
    assert cal["overall"]["brier"] == pytest.approx(3.6088 / 6)
    assert cal["overall"]["accuracy"] == pytest.approx(3 / 6)
    assert cal["overall"]["mean_confidence"] == pytest.approx((0.72 * 2 + 0.92 + 0.42 * 2 + 0.28) / 6)
    # radical: (2*.22 + .08)/3; Brier (.1056 + 1.3056 + .0088)/3.  cloze: (2*.08 + .28)/3; (.4688 + .9488 + .7712)/3
    assert cal["tasks"]["radical"]["ece"] == pytest.approx(0.52 / 3)
    assert cal["tasks"]["radical"]["brier"] == pytest.approx(1.42 / 3)
    assert cal["tasks"]["cloze"]["ece"] == pytest.approx(0.44 / 3)
    assert cal["tasks"]["cloze"]["brier"] == pytest.approx(2.1888 / 3)
    # a competency pools its tasks' items (here one task each)
    assert cal["competencies"]["glyph"]["ece"] == pytest.approx(0.52 / 3)
    assert cal["competencies"]["context"]["brier"] == pytest.approx(2.1888 / 3)
    assert set(cal["competencies"]) == {"glyph", "context"}
    rel = cal["reliability"]
    assert [b["n"] for b in rel] == [0, 0, 1, 0, 2, 0, 0, 2, 0, 1]
    assert rel[7]["accuracy"] == pytest.approx(0.5) and rel[7]["confidence"] == pytest.approx(0.72)
    assert rel[0]["accuracy"] is None
    assert cal["bins"] == 10


def test_bins_change_ece():
    # two bins, (0, .5] and (.5, 1]: low = {.42, .42, .28} acc 1/3 conf 1.12/3; high = {.72, .72, .92} acc 2/3 conf 2.36/3
    # ECE = 3/6 * |1/3 - 1.12/3| + 3/6 * |2/3 - 2.36/3| = .5 * .12/3 + .5 * .36/3 = .08
    cal = calibration.calibration(predictions(), bins=2)
    assert cal["overall"]["ece"] == pytest.approx(0.08)
    assert [b["n"] for b in cal["reliability"]] == [3, 3]


def test_edge_bins_and_single_bin():
    # a confidence of exactly 1 belongs to the last bin, 0 to the first
    assert list(calibration.bin_index([0.0, 0.05, 0.1, 0.1000001, 1.0], 10)) == [0, 0, 0, 1, 9]
    # with one bin ECE is |accuracy - mean confidence| = |.5 - .58| = .08
    assert calibration.calibration(predictions(), bins=1)["overall"]["ece"] == pytest.approx(0.08)


def test_items_without_logprobs_are_left_out():
    preds = predictions()
    preds[2]["logprobs"] = None  # the .92 item: left are (.72 x2: acc .5), (.42 x2: acc .5), (.28: acc 0)
    cal = calibration.calibration(preds)
    assert cal["excluded_items"] == 1 and cal["overall"]["n"] == 5
    assert cal["overall"]["ece"] == pytest.approx((2 * 0.22 + 2 * 0.08 + 0.28) / 5)
    preds[0]["pred"] = None  # no answer (too long for the context): nothing to calibrate either
    assert calibration.calibration(preds)["excluded_items"] == 2
    assert calibration.calibration([{**p, "logprobs": None} for p in predictions()]) is None
    with pytest.raises(ValueError, match="bins must be at least 1"):
        calibration.calibration(predictions(), bins=0)
    with pytest.raises(ValueError, match="N x 4"):
        calibration.letter_probs([[0.0, 0.0, 0.0]])


def test_reliability_png(tmp_path):
    from PIL import Image

    path = tmp_path / "rel.png"
    calibration.reliability_plot([("model a", predictions()), ("model b", predictions(1.0)[:3])], path, bins=10)
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        assert im.format == "PNG" and im.size[0] > 500 and im.size[1] > 300
