"""evaluate_model: results files, the paper's arithmetic, resume after interruption, data selection."""

import json
import re
from pathlib import Path

import pytest
from support import FIXTURE_TASKS, N_TEST, logged_warning, read_jsonl

from ancientbench.backends import hf_scoring
from ancientbench.dataset import load_questions
from ancientbench.evaluation import build_results, evaluate_model
from ancientbench.prompts import TEMPLATE_SHA256, TEMPLATE_VERSION
from ancientbench.schema import DataError, write_jsonl
from ancientbench.table import results_table
from ancientbench.tasks import LETTERS

TASKS = list(FIXTURE_TASKS)


def run(lm, data, out=None, **kw):
    kw.setdefault("tasks", TASKS)
    kw.setdefault("shots", (0, 5))
    return evaluate_model(lm.model, lm.tokenizer, data=data, output_dir=out, batch_size=kw.pop("batch_size", 4),
                          progress=False, **kw)


def test_results_files_have_the_documented_layout(tiny_qwen2, fixture_data, tmp_path):
    res = run(tiny_qwen2, fixture_data, tmp_path)
    assert set(res) == {0, 5}
    folder = tmp_path / tiny_qwen2.model.name_or_path.rstrip("/").split("/")[-1]
    for k in (0, 5):
        on_disk = json.loads((folder / f"results_{k}shot.json").read_text(encoding="utf-8"))
        assert on_disk == json.loads(json.dumps(res[k]))
        assert set(on_disk) >= {
            "ancientbench_version", "created", "model", "setting", "prompt", "data", "tasks", "competencies",
            "average", "micro_accuracy", "complete", "packages", "timing", "predictions_file",
        }
        assert set(on_disk["model"]) >= {"name_or_path", "revision", "weights_sha256", "num_parameters", "dtype",
                                          "device", "smoke_model"}
        assert on_disk["model"]["dtype"] == "float32" and on_disk["model"]["smoke_model"] is False
        assert len(on_disk["model"]["weights_sha256"]) == 64
        s = on_disk["setting"]
        assert (s["shots"], s["letter_style"], s["chat"], s["batch_size"]) == (k, "bare", False, 4)
        assert s["letter_token_ids"] == {x: tiny_qwen2.tokenizer.convert_tokens_to_ids(x) for x in LETTERS}
        assert isinstance(s["prefix_cache"], bool)
        assert on_disk["prompt"] == {"template_version": TEMPLATE_VERSION, "template_sha256": TEMPLATE_SHA256}
        d = on_disk["data"]
        assert d["n_items"] == N_TEST * len(TASKS)
        assert "data/cloze/test.jsonl" in d["files_sha256"] and ("data/cloze/dev.jsonl" in d["files_sha256"]) == (k > 0)
        assert set(on_disk["tasks"]) == set(TASKS)
        for t, row in on_disk["tasks"].items():
            assert set(row) >= {"accuracy", "correct", "total", "competency", "fewshot_truncated_items"}
            assert row["total"] == N_TEST and row["accuracy"] == row["correct"] / N_TEST
        assert set(on_disk["competencies"]) == {"glyph", "pronunciation", "meaning", "context"}
        assert on_disk["complete"] is False  # five of ten tasks
        assert on_disk["packages"]["torch"] and on_disk["packages"]["transformers"]
        assert on_disk["timing"]["seconds"] > 0 and on_disk["timing"]["items_scored"] == d["n_items"]

        preds = read_jsonl(on_disk["predictions_file"])
        assert [p["id"] for p in preds] == [f"{t}-t{i}" for t in TASKS for i in range(N_TEST)]  # dataset order
        for p in preds:
            assert set(p) == {"id", "task", "gold", "pred", "logprobs", "shots_used", "item_sha256", "fewshot_sha256",
                              "block_sha256"}
            assert p["pred"] == LETTERS[max(range(4), key=lambda j: p["logprobs"][j])] and p["shots_used"] == k
        correct = sum(p["pred"] == p["gold"] for p in preds if p["task"] == "cloze")
        assert on_disk["tasks"]["cloze"]["correct"] == correct


def test_competency_and_average_arithmetic_by_hand():
    def recs(task, right, wrong):
        return [{"id": f"{task}{i}", "task": task, "gold": "A", "pred": "A" if i < right else "B", "shots_used": 0}
                for i in range(right + wrong)]

    records = recs("radical", 3, 1) + recs("radical_meaning", 1, 1) + recs("homophone", 1, 3) \
        + recs("excdoc_word", 2, 0) + recs("cloze", 0, 2)
    r = build_results(records, model_info={}, setting={"shots": 0}, data={}, timing={}, predictions_file=None)
    assert r["tasks"]["radical"]["accuracy"] == 0.75 and r["tasks"]["radical_meaning"]["accuracy"] == 0.5
    # glyph = mean(0.75, 0.5); pronunciation = 1/4; meaning = 2/2; context = 0/2
    assert r["competencies"] == {"glyph": 0.625, "pronunciation": 0.25, "meaning": 1.0, "context": 0.0}
    assert r["average"] == (0.625 + 0.25 + 1.0 + 0.0) / 4 == 0.46875  # mean of competencies, not of tasks
    assert r["micro_accuracy"] == 7 / 14
    assert r["complete"] is False


def test_item_errors_count_as_wrong():
    records = [{"id": "a", "task": "cloze", "gold": "A", "pred": None, "logprobs": None, "shots_used": 0,
                "error": "question alone is 90 tokens"},
               {"id": "b", "task": "cloze", "gold": "B", "pred": "B", "logprobs": [0, 0, 0, 0], "shots_used": 0}]
    r = build_results(records, model_info={}, setting={"shots": 0}, data={}, timing={}, predictions_file=None)
    assert r["tasks"]["cloze"]["accuracy"] == 0.5 and r["tasks"]["cloze"]["too_long_items"] == ["a"]


def test_resume_after_interruption_equals_an_uninterrupted_run(tiny_llama, fixture_data, tmp_path, monkeypatch):
    straight = run(tiny_llama, fixture_data, tmp_path / "a")

    calls = {"n": 0}
    real_full, real_suffixes = hf_scoring.Runner.full, hf_scoring.Runner.suffixes

    def interrupt_after_three(fn):
        def wrapped(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] > 3:
                raise KeyboardInterrupt
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(hf_scoring.Runner, "full", interrupt_after_three(real_full))
    monkeypatch.setattr(hf_scoring.Runner, "suffixes", interrupt_after_three(real_suffixes))
    with pytest.raises(KeyboardInterrupt):
        run(tiny_llama, fixture_data, tmp_path / "b", shots=(5,))
    monkeypatch.undo()
    pred_file = next((tmp_path / "b").glob("*/predictions_5shot.jsonl"))
    partial = read_jsonl(pred_file)
    assert 0 < len(partial) < N_TEST * len(TASKS)
    with pred_file.open("a", encoding="utf-8") as fh:  # a write torn by the kill
        fh.write('{"id": "cloze-t3", "task": "clo')

    resumed = run(tiny_llama, fixture_data, tmp_path / "b")
    for k in (0, 5):
        a, b = straight[k], resumed[k]
        for key in ("tasks", "competencies", "average", "micro_accuracy", "complete", "setting", "data", "prompt"):
            assert a[key] == b[key], key
        pa, pb = read_jsonl(a["predictions_file"]), read_jsonl(b["predictions_file"])
        assert [(p["id"], p["pred"], p["shots_used"]) for p in pa] == [(p["id"], p["pred"], p["shots_used"]) for p in pb]
        assert [p["logprobs"] for p in pa] == [q["logprobs"] for q in pb]  # bit-identical: same blocks, same batches
    # a task with some of its items stored is scored again whole (one block per task here), the others reused
    complete = [t for t in TASKS if sum(p["task"] == t for p in partial) == N_TEST]
    assert resumed[5]["timing"]["items_resumed"] == len(complete) * N_TEST
    assert resumed[5]["timing"]["items_scored"] == N_TEST * (len(TASKS) - len(complete))

    again = run(tiny_llama, fixture_data, tmp_path / "b")  # nothing left to do
    assert again[5]["timing"]["items_scored"] == 0 and again[5]["tasks"] == straight[5]["tasks"]


def test_resume_refuses_another_setting_and_rescores_changed_data(tiny_qwen2, fixture_data, tmp_path, caplog):
    first = run(tiny_qwen2, fixture_data, tmp_path, shots=(0,), tasks=["cloze"])[0]
    with logged_warning(caplog, r"another setting \(max_length: .* -> 90\); scoring every item again"):
        other = run(tiny_qwen2, fixture_data, tmp_path, shots=(0,), tasks=["cloze"], max_length=90)[0]
    assert other["timing"]["items_resumed"] == 0 and other["setting"]["max_length"] == 90
    kept = sorted(p.name for p in Path(first["predictions_file"]).parent.glob("*.superseded-*"))
    assert sorted(re.sub(r"superseded-\w+", "S", n) for n in kept) == [
        "predictions_0shot.S.jsonl", "predictions_0shot.meta.S.json", "results_0shot.S.json"]  # set aside, not lost
    ok = run(tiny_qwen2, fixture_data, tmp_path, shots=(0,), tasks=["cloze"], max_length=100, overwrite=True)
    assert ok[0]["setting"]["max_length"] == 100 and ok[0]["timing"]["items_resumed"] == 0

    changed = tmp_path / "changed"
    for t in ("cloze",):
        rows = json.loads(json.dumps(load_questions([t], fixture_data, shots=(0,)).items[t]))
        rows[0]["question"] += "改"
        write_jsonl(changed / "data" / t / "test.jsonl", rows)
    with logged_warning(caplog, r"1 stored prediction\(s\).*: cloze-t0; scoring them again"):
        redone = run(tiny_qwen2, changed, tmp_path, shots=(0,), tasks=["cloze"], max_length=100)
    assert redone[0]["timing"]["items_scored"] == 1 and redone[0]["timing"]["items_resumed"] == N_TEST - 1


def test_jsonl_question_set_with_fewshot_folder(tiny_qwen2, fixture_data, fixture_items, tmp_path):
    rows = fixture_items["homophone"][0][:3] + fixture_items["cloze"][0][:2]
    write_jsonl(tmp_path / "q.jsonl", rows)
    res = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=tmp_path / "q.jsonl", shots=(5,),
                         fewshot_data=fixture_data, progress=False)
    r = res[5]
    assert {t: v["total"] for t, v in r["tasks"].items()} == {"homophone": 3, "cloze": 2}
    assert "q.jsonl" in r["data"]["files_sha256"] and any(f.endswith("cloze/dev.jsonl") for f in r["data"]["files_sha256"])
    assert r["predictions_file"] is None and [p["id"] for p in r["predictions"]] == [x["id"] for x in rows]
    # same predictions as scoring the folder itself
    folder = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, tasks=["homophone", "cloze"],
                            shots=(5,), limit=3, progress=False)[5]
    by_id = {p["id"]: p for p in folder["predictions"]}
    assert all(p["pred"] == by_id[p["id"]]["pred"] for p in r["predictions"])


def test_task_selection_and_missing_data(tiny_qwen2, fixture_data):
    with pytest.warns(UserWarning, match="no test data for task"):
        res = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, shots=0, limit=2, progress=False)
    r = res[0]
    assert set(r["tasks"]) == set(TASKS) and "translation" in r["data"]["missing_tasks"] and r["complete"] is False
    assert r["data"]["limit"] == 2 and all(v["total"] == 2 for v in r["tasks"].values())
    with pytest.raises(DataError, match="no test split for task 'phonetic_loan'"):
        evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, tasks=["context"], shots=0, progress=False)
    only_glyph = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, tasks=["glyph"], shots=0,
                                progress=False)[0]
    assert set(only_glyph["tasks"]) == {"radical", "radical_meaning"} and set(only_glyph["competencies"]) == {"glyph"}


def test_table_has_the_papers_shape(tiny_qwen2, fixture_data):
    res = run(tiny_qwen2, fixture_data, limit=2)
    table = results_table(list(res.values()))
    lines = table.splitlines()
    assert lines[0].split() == ["model", "setting", "Glyph", "Pronunciation", "Meaning", "Context", "Average", "top", "answer", "%"]
    assert "0-shot" in lines[2] and "5-shot" in lines[3]
    assert f"{100 * res[5]['average']:.2f}" in lines[3]
    assert any(line.startswith("cloze 完形填空") for line in lines)


# ----------------------------------------------------------------------- resume checks every item it reuses


def _rotated(rows):
    """Same ids, options cycled by one (so the gold letters change)."""
    out = []
    for r in rows:
        r = dict(r)
        a, b, c, d = r["A"], r["B"], r["C"], r["D"]
        r["A"], r["B"], r["C"], r["D"] = b, c, d, a
        r["answer"] = LETTERS[(LETTERS.index(r["answer"]) - 1) % 4]
        out.append(r)
    return out


def _flat(records):
    return [x for r in records for x in r["logprobs"]]


def _eval_file(lm, path, out, **kw):
    return evaluate_model(lm.model, lm.tokenizer, data=path, output_dir=out, shots=kw.pop("shots", 0),
                          batch_size=3, progress=False, **kw)


def test_resume_never_reuses_predictions_of_other_questions(tiny_qwen2, fixture_items, tmp_path, caplog):
    rows = fixture_items["cloze"][0][:6]
    write_jsonl(tmp_path / "q1.jsonl", rows)
    write_jsonl(tmp_path / "q2.jsonl", _rotated(rows))
    out = tmp_path / "out"
    first = _eval_file(tiny_qwen2, tmp_path / "q1.jsonl", out)[0]
    assert first["timing"]["items_scored"] == 6
    with logged_warning(caplog, r"6 stored prediction\(s\).*cloze-t0"):
        second = _eval_file(tiny_qwen2, tmp_path / "q2.jsonl", out)[0]
    fresh = _eval_file(tiny_qwen2, tmp_path / "q2.jsonl", None)[0]
    assert second["timing"]["items_resumed"] == 0 and second["timing"]["items_scored"] == 6
    assert second["tasks"] == fresh["tasks"]
    on_disk = read_jsonl(second["predictions_file"])
    assert [p["gold"] for p in on_disk] == [r["answer"] for r in _rotated(rows)]  # the old records are gone
    assert [p["pred"] for p in on_disk] == [p["pred"] for p in fresh["predictions"]]

    # one item edited (even a field the prompt does not show): only that one is scored again
    edited = _rotated(rows)
    edited[2]["explanation"] += "（改）"
    write_jsonl(tmp_path / "q3.jsonl", edited)
    with logged_warning(caplog, r"1 stored prediction\(s\).*cloze-t2"):
        third = _eval_file(tiny_qwen2, tmp_path / "q3.jsonl", out)[0]
    assert third["timing"]["items_resumed"] == 5 and third["timing"]["items_scored"] == 1
    assert third["tasks"] == fresh["tasks"]


def test_resume_rescores_when_the_fewshot_exemplars_change(tiny_qwen2, fixture_data, fixture_items, tmp_path, caplog):
    test_rows, dev_rows = fixture_items["cloze"]
    write_jsonl(tmp_path / "q.jsonl", test_rows[:4])
    write_jsonl(tmp_path / "dev_a.jsonl", dev_rows)
    write_jsonl(tmp_path / "dev_b.jsonl", dev_rows[::-1])  # other first two exemplars
    out = tmp_path / "out"
    _eval_file(tiny_qwen2, tmp_path / "q.jsonl", out, shots=2, fewshot_data=tmp_path / "dev_a.jsonl")
    same = _eval_file(tiny_qwen2, tmp_path / "q.jsonl", out, shots=2, fewshot_data=tmp_path / "dev_a.jsonl")[2]
    assert same["timing"]["items_resumed"] == 4
    with logged_warning(caplog, "few-shot exemplars"):
        other = _eval_file(tiny_qwen2, tmp_path / "q.jsonl", out, shots=2, fewshot_data=tmp_path / "dev_b.jsonl")[2]
    fresh = _eval_file(tiny_qwen2, tmp_path / "q.jsonl", None, shots=2, fewshot_data=tmp_path / "dev_b.jsonl")[2]
    assert other["timing"]["items_resumed"] == 0 and other["timing"]["items_scored"] == 4
    assert _flat(read_jsonl(other["predictions_file"])) == pytest.approx(_flat(fresh["predictions"]), abs=1e-5)


def test_resume_refuses_a_model_whose_weights_changed_in_memory(tiny_qwen2, fixture_items, tmp_path, caplog):
    import copy

    import torch

    lm = copy.deepcopy(tiny_qwen2)  # the session fixture stays untouched
    write_jsonl(tmp_path / "q.jsonl", fixture_items["cloze"][0][:4])
    out = tmp_path / "out"
    before = _eval_file(lm, tmp_path / "q.jsonl", out)[0]
    before_logprobs = _flat(read_jsonl(before["predictions_file"]))
    with torch.no_grad():
        for p in lm.model.parameters():
            p.add_(torch.randn_like(p, generator=torch.Generator().manual_seed(1)))
    with logged_warning(caplog, "weights_sha256"):  # never reused: scored again
        after = _eval_file(lm, tmp_path / "q.jsonl", out)[0]
    fresh = _eval_file(lm, tmp_path / "q.jsonl", None)[0]
    assert after["timing"]["items_scored"] == 4 and after["model"]["weights_sha256"] != before["model"]["weights_sha256"]
    logprobs = _flat(read_jsonl(after["predictions_file"]))
    assert logprobs == pytest.approx(_flat(fresh["predictions"]), abs=1e-5)
    assert logprobs != pytest.approx(before_logprobs, abs=1e-3)
    assert before["model"]["weights_sha256_of"] == "tensors"  # hashed in memory, not the folder on disk


def test_loaded_model_with_device_auto(tiny_qwen2, fixture_items, tmp_path, monkeypatch):
    from ancientbench import models
    from ancientbench.models import select_device

    seen = []
    real = models.select_dtype
    monkeypatch.setattr(models, "select_dtype", lambda dtype, device="cpu": seen.append(device) or real(dtype, device))
    write_jsonl(tmp_path / "q.jsonl", fixture_items["cloze"][0][:2])
    r = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=tmp_path / "q.jsonl", shots=0, device="auto",
                       dtype="auto", progress=False)[0]
    assert r["model"]["device"].split(":")[0] == select_device().split(":")[0]
    assert r["tasks"]["cloze"]["total"] == 2
    assert seen == [select_device()]  # the dtype is chosen for the device picked, not for "auto" (fp32)


def test_load_keeps_a_matching_record_over_a_later_stale_one(tmp_path):
    from ancientbench.evaluation import PredictionStore

    path = tmp_path / "predictions_0shot.jsonl"
    base = {"task": "cloze", "gold": "A", "pred": "B", "logprobs": [0, 0, 0, 0], "shots_used": 0}
    good = {"id": "x", **base, "item_sha256": "i1", "fewshot_sha256": "f1"}
    stale = {"id": "x", **base, "item_sha256": "i0", "fewshot_sha256": "f1"}
    later = {"id": "y", **base, "item_sha256": "j1", "fewshot_sha256": "f1"}
    store = PredictionStore(path, {"shots": 0}, {})
    store.write_meta()
    store.append([good])
    PredictionStore(path, {"shots": 0}, {}, part=1).append([stale, {**later, "pred": "C"}])
    store.append([later])  # the main file is read first, part files after it
    got = store.load({"x": ("i1", "f1"), "y": ("j1", "f1")})
    assert got["x"] == good and got["y"]["pred"] == "C"  # without a stale one, the last record wins as before
    assert store.load()["x"] == stale  # no expectations: the last record


def test_tensors_sha256_is_stable_and_sees_dtype_and_values(tiny_llama):
    import copy

    import torch

    from ancientbench.models import tensors_sha256

    m = copy.deepcopy(tiny_llama.model)
    h = tensors_sha256(m)
    assert h == tensors_sha256(m) == tensors_sha256(copy.deepcopy(m)) and len(h) == 64
    half = copy.deepcopy(m).to(torch.bfloat16)  # no numpy dtype: hashed through a byte view
    assert tensors_sha256(half) not in (h, None)
    with torch.no_grad():
        next(m.parameters()).view(-1)[0] += 1e-3
    assert tensors_sha256(m) != h
