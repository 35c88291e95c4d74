"""`ancientbench compare`: paired differences, McNemar (exact and chi-square) on hand-built 2x2 tables."""

from __future__ import annotations

import argparse
import json
import math

import pytest
from results_fixtures import row, write_run

from ancientbench.reports import compare


def pairs(task: str, both: int, a_only: int, b_only: int, neither: int) -> tuple[list[dict], list[dict]]:
    """Predictions of A and B on the same items with the given 2x2 counts."""
    a, b = [], []
    kinds = [(True, True)] * both + [(True, False)] * a_only + [(False, True)] * b_only + [(False, False)] * neither
    for i, (ra, rb) in enumerate(kinds):
        gold = "ABCD"[i % 4]
        a.append(row(f"{task}-{i}", task, gold, ra))
        b.append(row(f"{task}-{i}", task, gold, rb))
    return a, b


@pytest.fixture
def files(tmp_path):
    a, b = [], []
    for spec in (("radical", 2, 7, 1, 0), ("pronunciation", 0, 3, 0, 0), ("cloze", 5, 20, 10, 5)):
        pa, pb = pairs(*spec)
        a += pa
        b += pb
    return write_run(tmp_path, "model-a", 0, a), write_run(tmp_path, "model-b", 5, b), a, b


def run_compare(argv):
    p = argparse.ArgumentParser()
    compare.add_arguments(p)
    return compare.run(p.parse_args(argv))


def test_mcnemar_by_hand():
    # b=7, c=1: exact two-sided binomial, 2 * P(X <= 1 | 8, 1/2) = 2 * (1 + 8) / 256
    m = compare.mcnemar(7, 1)
    assert m["test"] == "exact binomial" and m["p_value"] == pytest.approx(18 / 256)
    # b=20, c=10 (30 >= 25): chi2 = (|20-10| - 1)^2 / 30 = 2.7; P(chi2_1 > x) = erfc(sqrt(x / 2))
    m = compare.mcnemar(20, 10)
    assert m["test"] == "chi-square, continuity-corrected"
    assert m["statistic"] == pytest.approx(2.7) and m["p_value"] == pytest.approx(math.erfc(math.sqrt(1.35)))
    # b=3, c=0: 2 * (1/2)^3
    assert compare.mcnemar(3, 0)["p_value"] == pytest.approx(0.25)
    # symmetric tables give p = 1 (capped), and no discordant items too
    assert compare.mcnemar(4, 4)["p_value"] == pytest.approx(1.0)
    assert compare.mcnemar(0, 0)["p_value"] == 1.0


def test_compare_figures(files):
    a_path, b_path, _, _ = files
    res = compare.compare(a_path, b_path, n_resamples=500, seed=3)
    assert res["n_items"] == 10 + 3 + 40
    r = res["tasks"]["radical"]
    assert (r["a"], r["b"], r["diff"]) == (pytest.approx(0.9), pytest.approx(0.3), pytest.approx(0.6))
    assert (r["mcnemar"]["b"], r["mcnemar"]["c"]) == (7, 1) and r["mcnemar"]["p_value"] == pytest.approx(18 / 256)
    # every pronunciation item is right in A only: every resample gives +100
    p = res["tasks"]["pronunciation"]
    assert p["diff"] == pytest.approx(1.0) and p["ci"] == [pytest.approx(1.0), pytest.approx(1.0)]
    c = res["tasks"]["cloze"]
    assert c["diff"] == pytest.approx(25 / 40 - 15 / 40)
    assert c["mcnemar"]["test"] == "chi-square, continuity-corrected"
    assert c["ci"][0] < c["diff"] < c["ci"][1]
    # competencies: glyph = radical, pronunciation, context = cloze; average A (.9+1+.625)/3, B (.3+0+.375)/3
    assert res["competencies"]["glyph"]["diff"] == pytest.approx(0.6)
    assert res["average"]["a"] == pytest.approx((0.9 + 1 + 0.625) / 3)
    assert res["average"]["diff"] == pytest.approx((0.9 + 1 + 0.625) / 3 - (0.3 + 0 + 0.375) / 3)
    # pooled: A 9+3+25 = 37/53, B 3+0+15 = 18/53; b = 7+3+20 = 30, c = 1+0+10 = 11 -> chi2 (19-1)^2/41
    mi = res["micro_accuracy"]
    assert mi["diff"] == pytest.approx(19 / 53)
    assert (mi["mcnemar"]["b"], mi["mcnemar"]["c"]) == (30, 11)
    assert mi["mcnemar"]["statistic"] == pytest.approx(18**2 / 41)
    assert mi["mcnemar"]["p_value"] == pytest.approx(math.erfc(math.sqrt(18**2 / 41 / 2)))
    # seeded: the same call gives the same intervals
    assert compare.compare(a_path, b_path, n_resamples=500, seed=3)["average"]["ci"] == res["average"]["ci"]


def test_printed_table_and_json(files, tmp_path, capsys):
    a_path, b_path, _, _ = files
    out = tmp_path / "cmp.json"
    assert run_compare([str(a_path), str(b_path), "--resamples", "300", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if "radical" in ln and "部首" in ln)
    assert "90.0" in line and "30.0" in line and "+60.0" in line and "0.0703" in line and "exact binomial" in line
    assert "chi-square, continuity-corrected" in next(ln for ln in text.splitlines() if " cloze" in ln)
    assert "53 items matched by id" in text
    data = json.loads(out.read_text())
    assert data["tasks"]["radical"]["mcnemar"]["b"] == 7 and data["difference"] == "A - B"
    assert run_compare([str(a_path), str(b_path), "--resamples", "300", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["n_items"] == 53


def test_different_item_sets(files, tmp_path, capsys):
    a_path, _, a, b = files
    c_path = write_run(tmp_path / "c", "model-c", 0, b[:-2] + [row("extra-1", "cloze", "A", True)])
    assert run_compare([str(a_path), str(c_path)]) == 2
    err = capsys.readouterr().err
    assert "not on the same items" in err and "has 53" in err and "has 52" in err and "51 shared" in err
    assert "2 only in A" in err and "1 only in B" in err and "--shared-items" in err
    assert run_compare([str(a_path), str(c_path), "--shared-items", "--json", "-", "--resamples", "100"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_items"] == 51 and res["items_dropped"] == {"a": 2, "b": 1}
