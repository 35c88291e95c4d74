"""Option-order robustness: the four cyclic rotations and plain / circular accuracy, checked by hand."""

from __future__ import annotations

import pytest

from ancientbench.evaluation import circular

ITEM = {"id": "cloze-7", "task": "cloze", "question": "q", "A": "甲", "B": "乙", "C": "丙", "D": "丁", "answer": "C",
        "subset": "", "source": "s", "citation": "c", "explanation": ""}


def test_rotations_by_hand():
    rots = circular.expand_items([ITEM])
    assert [r["id"] for r in rots] == ["cloze-7#rot0", "cloze-7#rot1", "cloze-7#rot2", "cloze-7#rot3"]
    assert [(r["A"], r["B"], r["C"], r["D"]) for r in rots] == [
        ("甲", "乙", "丙", "丁"),  # ABCD
        ("乙", "丙", "丁", "甲"),  # BCDA
        ("丙", "丁", "甲", "乙"),  # CDAB
        ("丁", "甲", "乙", "丙"),  # DABC
    ]
    assert [r["answer"] for r in rots] == ["C", "B", "A", "D"]
    for r in rots:  # the gold letter always points at the same text
        assert r[r["answer"]] == "丙"
        assert {k: r[k] for k in ("task", "question", "source")} == {"task": "cloze", "question": "q", "source": "s"}
    assert ITEM["A"] == "甲" and ITEM["id"] == "cloze-7"  # the original is left alone
    with pytest.raises(ValueError, match="rotation must be"):
        circular.rotate_item(ITEM, 4)
    with pytest.raises(ValueError, match="already a rotation"):
        circular.rotate_item(rots[1], 1)
    assert circular.split_id("a#rot1#rot3") == ("a#rot1", 3)
    with pytest.raises(ValueError, match="not a rotated item id"):
        circular.split_id("cloze-7")


def rec(base, task, k, correct):
    return {"id": f"{base}#rot{k}", "task": task, "gold": "A", "pred": "A" if correct else "B"}


def test_plain_and_circular_accuracy_by_hand():
    pattern = {  # item -> correctness of rotations 0..3
        ("r1", "radical"): [1, 1, 1, 1],
        ("r2", "radical"): [1, 0, 1, 1],
        ("r3", "radical"): [0, 1, 1, 1],
        ("r4", "radical"): [0, 0, 0, 0],
        ("c1", "cloze"): [1, 1, 1, 1],
        ("c2", "cloze"): [1, 1, 1, 0],
    }
    records = [rec(b, t, k, bool(ok)) for (b, t), oks in pattern.items() for k, ok in enumerate(oks)]
    records[-1]["pred"] = None  # an item too long for the context counts as wrong
    fig = circular.circular_figures(records)
    r, c = fig["tasks"]["radical"], fig["tasks"]["cloze"]
    # radical: plain (rotation 0) 2/4, circular 1/4, all rotations 4+3+3+0 = 10/16
    assert (r["plain_accuracy"], r["circular_accuracy"], r["rotation_accuracy"]) == (0.5, 0.25, 10 / 16)
    assert (r["plain_correct"], r["circular_correct"], r["items"]) == (2, 1, 4)
    # cloze: plain 2/2, circular 1/2, all rotations 7/8
    assert (c["plain_accuracy"], c["circular_accuracy"], c["rotation_accuracy"]) == (1.0, 0.5, 7 / 8)
    # competencies glyph = radical, context = cloze; average of the two present
    assert fig["competencies"]["glyph"]["circular_accuracy"] == 0.25
    assert fig["average"]["circular_accuracy"] == pytest.approx((0.25 + 0.5) / 2)
    assert fig["average"]["plain_accuracy"] == pytest.approx((0.5 + 1.0) / 2)
    assert fig["micro_accuracy"]["circular_accuracy"] == pytest.approx(2 / 6)
    assert fig["n_items"] == 6
    results = {"tasks": {"radical": {"accuracy": 10 / 16}, "cloze": {"accuracy": 7 / 8}}, "setting": {"shots": 0}}
    circular.add_circular_figures(results, records)
    assert results["tasks"]["radical"]["circular_accuracy"] == 0.25 and results["tasks"]["cloze"]["plain_accuracy"] == 1.0
    assert results["circular_accuracy"] == pytest.approx(0.375) and results["setting"]["circular"] is True


def test_missing_or_duplicate_rotations_are_refused():
    records = [rec("x", "cloze", k, True) for k in range(3)]
    with pytest.raises(ValueError, match=r"item 'x': rotations \[3\] missing"):
        circular.circular_figures(records)
    with pytest.raises(ValueError, match="appears twice"):
        circular.circular_figures(records + [rec("x", "cloze", 2, True)])


def test_expand_questions_scales_counts():
    from dataclasses import dataclass, field

    @dataclass
    class QS:  # the fields of dataset.QuestionSet that circular touches
        items: dict
        exemplars: dict
        n_available: dict = field(default_factory=dict)

    qs = QS(items={"cloze": [ITEM]}, exemplars={"cloze": [ITEM]}, n_available={"cloze": 10})
    out = circular.expand_questions(qs)
    assert len(out.items["cloze"]) == 4 and out.n_available == {"cloze": 40}
    assert out.exemplars["cloze"][0]["id"] == "cloze-7"  # exemplars are not rotated
    assert len(qs.items["cloze"]) == 1


def test_eval_circular_end_to_end(tmp_path, capsys):
    """`ancientbench eval --circular` on the tiny random model: rotated items scored, figures added, and
    rotation 0 gives the same answers as a plain run (it is the original prompt)."""
    import argparse
    import json

    from ancientbench import evaluation
    from ancientbench.reports import results as rs
    from ancientbench.schema import write_jsonl

    ds = tmp_path / "ds"
    for t in ("radical", "cloze"):
        write_jsonl(ds / "data" / t / "test.jsonl", [
            {"id": f"{t}-{i}", "task": t, "question": f"{t}題{i}：何者為是？", "A": f"甲{i}", "B": f"乙{i}", "C": f"丙{i}",
             "D": f"丁{i}", "answer": "ABCD"[i % 4], "subset": "", "source": "team-curated", "citation": "t", "explanation": ""}
            for i in range(3)
        ])

    def run(*extra):
        p = argparse.ArgumentParser()
        evaluation.add_arguments(p)
        args = p.parse_args(["--model", "tiny-random", "--shots", "0", "--data", str(ds), "--output", str(tmp_path / "out"),
                             "--no-progress", "--batch-size", "4", "--tasks", "radical", "cloze", *extra])
        assert evaluation.run(args) == 0

    run("--circular")
    assert "circular (all 4 rotations)" in capsys.readouterr().out
    run()
    folder = tmp_path / "out" / "tiny-random-circular"
    res = json.loads((folder / "results_0shot.json").read_text(encoding="utf-8"))
    preds = [json.loads(x) for x in (folder / "predictions_0shot.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(preds) == 6 * 4 and res["setting"]["circular"] is True
    by_base: dict[str, dict[int, dict]] = {}
    for p in preds:
        base, k = p["id"].split("#rot")
        by_base.setdefault(base, {})[int(k)] = p
        g = "ABCD"[int(base.rsplit("-", 1)[1]) % 4]
        assert p["gold"] == "ABCD"[("ABCD".index(g) - int(k)) % 4]  # gold moved with its option
    for t in ("radical", "cloze"):
        items = {b: r for b, r in by_base.items() if b.startswith(t)}
        circ = sum(all(r[k]["pred"] == r[k]["gold"] for k in range(4)) for r in items.values()) / 3
        plain = sum(r[0]["pred"] == r[0]["gold"] for r in items.values()) / 3
        assert res["tasks"][t]["circular_accuracy"] == pytest.approx(circ)
        assert res["tasks"][t]["plain_accuracy"] == pytest.approx(plain)
        assert res["tasks"][t]["total"] == 12  # the ordinary figures are over all rotated items
    assert res["circular_accuracy"] == pytest.approx(res["circular"]["average"]["circular_accuracy"])
    plain_run = [json.loads(x) for x in (tmp_path / "out" / "tiny-random" / "predictions_0shot.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {p["id"]: p["pred"] for p in plain_run} == {b: r[0]["pred"] for b, r in by_base.items()}
    r = rs.load_result(folder / "results_0shot.json")  # and report reads it
    assert r.figures["n"] == 24
