"""Blind-examinee probes: the quiz hides what it must (stem in options mode, keys, ids), reshuffles options,
and scoring against the key is exact; the committed probe records re-derive their summaries."""

from __future__ import annotations

import json
import shutil

import pytest

from ancientbench.quality import probes
from ancientbench.schema import load_split


def test_quiz_hides_the_stem_and_keys_and_scores_exactly(fixture_data, tmp_path):
    out = probes.write_quiz(fixture_data, "cloze", tmp_path / "q", mode="options", n=5, seed=1)
    quiz = (out / "quiz.md").read_text(encoding="utf-8")
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    items = {it["id"]: it for it in load_split(fixture_data, "cloze", "test")}
    assert key["n"] == 5 and sorted(key["items"]) == [f"q00{i}" for i in range(1, 6)]
    for qid, k in key["items"].items():
        item = items[k["id"]]
        assert item["question"] not in quiz and k["id"] not in quiz  # stem and real id hidden
        block = quiz.split(f"## {qid}\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert block == [f"{L}. {item[k['perm'][i]]}" for i, L in enumerate("ABCD")]
        assert item[k["perm"]["ABCD".index(k["gold"])]] == item[item["answer"]]  # the key follows the reshuffle
    answers = [{"qid": q, "answer": k["gold"] if i < 3 else "ABCD"[("ABCD".index(k["gold"]) + 1) % 4]} for i, (q, k) in enumerate(sorted(key["items"].items()))]
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    s = probes.score(out)
    assert (s["correct"], s["n"], s["accuracy"]) == (3, 5, 0.6)


def test_full_mode_collects_disagreements_and_flags_for_adjudication(fixture_data, tmp_path):
    out = probes.write_quiz(fixture_data, "radical", tmp_path / "f", mode="full", n=4, seed=3)
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    q = sorted(key["items"])
    wrong = "ABCD"[("ABCD".index(key["items"][q[1]]["gold"]) + 1) % 4]
    rows = [
        {"qid": q[0], "answer": key["items"][q[0]]["gold"], "confidence": 3, "flag": ""},
        {"qid": q[1], "answer": wrong, "confidence": 2, "flag": ""},
        {"qid": q[2], "answer": key["items"][q[2]]["gold"], "confidence": 1, "flag": "two correct: A,B"},
        {"qid": q[3], "answer": key["items"][q[3]]["gold"], "confidence": 3, "flag": ""},
    ]
    (out / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    s = probes.score(out)
    assert [r["qid"] for r in s["to_adjudicate"]] == [q[1], q[2]] and "defect_rate" not in s
    (out / "adjudication.jsonl").write_text(
        json.dumps({"qid": q[1], "verdict": "key stands", "note": "examinee misread"}) + "\n"
        + json.dumps({"qid": q[2], "verdict": "defect", "note": "B also fits"}) + "\n", encoding="utf-8")
    s = probes.score(out)
    assert s["adjudicated"] is True and s["defects"] == 1 and s["defect_rate"] == 0.25


def test_committed_probe_records_rederive_their_summaries(tmp_path):
    found = sorted(probes.PROBES_DIR.glob("*/summary.json"))
    if not found:
        pytest.skip("no probe records committed yet")
    for path in found:
        copy = tmp_path / path.parent.name
        shutil.copytree(path.parent, copy)
        recorded = json.loads(path.read_text(encoding="utf-8"))
        assert probes.score(copy) == recorded, path.parent.name


def test_full_probe_answers_become_review_sheet_choices(fixture_data, tmp_path):
    out = probes.write_quiz(fixture_data, "excdoc_word", tmp_path / "r", mode="full", n=7, seed=5)
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    items = {it["id"]: it for it in load_split(fixture_data, "excdoc_word", "test")}
    answers, sheet, expected = [], [], {}
    for i, (qid, k) in enumerate(sorted(key["items"].items())):
        item = items[k["id"]]
        letter = k["gold"] if i % 2 == 0 else "ABCD"[("ABCD".index(k["gold"]) + 1) % 4]
        answers.append({"qid": qid, "answer": letter, "confidence": 2, "flag": ""})
        chosen = item[k["perm"]["ABCD".index(letter)]]
        order = [item[L] for L in "DCBA"]  # the reviewer's sheet shows the options in another order
        row = {"key": k["id"].removeprefix("excdoc_word-"), "question": item["question"], **dict(zip("ABCD", order)), "choice": ""}
        sheet.append(row)
        expected[row["key"]] = "ABCD"[order.index(chosen)]
    (out / "answers.jsonl").write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
    (tmp_path / "sheet.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sheet), encoding="utf-8")
    assert probes.review_choices(out, fixture_data, tmp_path / "sheet.jsonl") == expected


def test_records_name_the_dataset_version_they_sampled(fixture_data, tmp_path):
    from ancientbench import DATASET_PATH
    from ancientbench.publish.card import render_probes
    from ancientbench.tasks import DATASET_VERSION

    key = json.loads((probes.write_quiz(DATASET_PATH, "cloze", tmp_path / "p", mode="options", n=2, seed=1) / "key.json").read_text(encoding="utf-8"))
    assert key["dataset_version"] == DATASET_VERSION  # the package's own files
    key = json.loads((probes.write_quiz(fixture_data, "cloze", tmp_path / "o", mode="options", n=2, seed=1) / "key.json").read_text(encoding="utf-8"))
    assert key["dataset_version"] is None  # another folder: not known
    rows = probes.summaries()
    by_folder = {r["folder"]: r for r in rows}
    assert by_folder["2026-12-01-phonetic_radical-options-round4"]["dataset_version"] == "2.3.0"
    pr = [r["dataset_version"] for r in rows if r["task"] == "phonetic_radical" and r["mode"] == "options"]
    assert pr == [None, "2.1.0", "2.2.0", "2.3.0"]  # oldest first; unrecorded (older than the field) first
    assert "| options only (stem hidden) | 2.3.0 |" in render_probes()
    assert key["data_sha256"] is not None and len(key["data_sha256"]) == 64  # which build of a version was sampled


def test_a_wrong_folder_is_one_line_naming_it(tmp_path, capsys):
    assert probes.main(["make", "cloze", "--mode", "full", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "q")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(tmp_path / "none") in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert probes.main(["score", str(tmp_path / "none")]) == 2
    assert "key.json" in capsys.readouterr().err
