"""The evaluate metric (metrics/ancientbench_metric) and ancientbench.aggregate.bootstrap_ci, checked by hand.

Every figure below is worked out in the comments from the item lists, not read back from the code.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import ancientbench
import ancientbench.tasks
from ancientbench.aggregate import aggregate, bootstrap_ci
from ancientbench.tasks import TASK_NAMES

REPO = Path(__file__).resolve().parents[1]

# Hand example: (task, gold letter, predicted letter) — 20 items over all ten tasks.
#   radical          4 items, 3 right -> 0.75      radical_meaning 2 items, 1 right -> 0.5
#   glyph = (0.75 + 0.5) / 2 = 0.625
#   pronunciation    2 items, 2 right -> 1.0       phonetic_radical 1 item, 0 right -> 0.0
#   homophone        2 items, 1 right -> 0.5       pronunciation competency = 1.5 / 3 = 0.5
#   excdoc_word      1 item,  1 right -> 1.0       tradoc_word 2 items, 0 right -> 0.0
#   meaning = 0.5
#   cloze            2 items, 1 right -> 0.5       phonetic_loan 1 item, 1 right -> 1.0
#   translation      3 items, 1 right -> 1/3       context = (0.5 + 1 + 1/3) / 3 = 11/18
#   average = (45/72 + 36/72 + 36/72 + 44/72) / 4 = 161/288;  micro = 11 / 20 = 0.55
ITEMS = [
    ("radical", "A", "A"), ("radical", "B", "B"), ("radical", "C", "C"), ("radical", "D", "A"),
    ("radical_meaning", "A", "A"), ("radical_meaning", "B", "C"),
    ("pronunciation", "C", "C"), ("pronunciation", "D", "D"),
    ("phonetic_radical", "A", "B"),
    ("homophone", "B", "B"), ("homophone", "C", ""),  # "" = no parsable answer: wrong
    ("excdoc_word", "D", "D"),
    ("tradoc_word", "A", "D"), ("tradoc_word", "B", "A"),
    ("cloze", "C", "C"), ("cloze", "D", "B"),
    ("phonetic_loan", "A", "A"),
    ("translation", "B", "B"), ("translation", "C", "A"), ("translation", "D", "C"),
]
TASKS = [t for t, _, _ in ITEMS]
GOLD = [g for _, g, _ in ITEMS]
PRED = [p for _, _, p in ITEMS]
EXPECTED_TASKS = {
    "radical": (3, 4), "radical_meaning": (1, 2), "pronunciation": (2, 2), "phonetic_radical": (0, 1),
    "homophone": (1, 2), "excdoc_word": (1, 1), "tradoc_word": (0, 2), "cloze": (1, 2),
    "phonetic_loan": (1, 1), "translation": (1, 3),
}
EXPECTED_COMPETENCIES = {"glyph": 0.625, "pronunciation": 0.5, "meaning": 0.5, "context": 11 / 18}
LETTER_INDEX = {"A": 0, "B": 1, "C": 2, "D": 3}


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(ancientbench.METRIC_PATH)


def check_point_figures(r: dict) -> None:
    assert list(r["tasks"]) == list(TASK_NAMES)
    for task, (right, total) in EXPECTED_TASKS.items():
        row = r["tasks"][task]
        assert (row["correct"], row["total"]) == (right, total), task
        assert row["accuracy"] == pytest.approx(right / total), task
    assert r["tasks"]["radical"]["competency"] == "glyph"
    assert r["tasks"]["translation"]["competency"] == "context"
    assert r["competencies"] == pytest.approx(EXPECTED_COMPETENCIES)
    assert r["average"] == pytest.approx(161 / 288)
    assert r["micro_accuracy"] == pytest.approx(0.55)
    assert r["n"] == 20 and r["complete"] is True


def test_every_figure_of_the_hand_example(metric):
    r = metric.compute(predictions=PRED, references=GOLD, tasks=TASKS)
    check_point_figures(r)
    ci = r["ci"]
    assert (ci["confidence"], ci["n_resamples"], ci["seed"]) == (0.95, 10_000, 1234)
    # all right / all wrong tasks cannot move under resampling
    for task in ("pronunciation", "excdoc_word", "phonetic_loan"):
        assert ci["tasks"][task] == [1.0, 1.0]
    for task in ("phonetic_radical", "tradoc_word"):
        assert ci["tasks"][task] == [0.0, 0.0]
    # radical: Binomial(4, 3/4); P(X<=0) = 1/256 < 2.5% < P(X<=1) = 13/256 -> low 1/4; P(X<=3) = 0.68 -> high 1
    assert ci["tasks"]["radical"] == [0.25, 1.0]
    # translation: Binomial(3, 1/3); P(X=0) = 8/27 > 2.5% -> low 0; P(X<=2) = 26/27 = 0.963 < 97.5% -> high 1
    assert ci["tasks"]["translation"] == [0.0, 1.0]
    # every interval contains its point estimate
    for task, (lo, hi) in ci["tasks"].items():
        assert lo <= r["tasks"][task]["accuracy"] <= hi
    for comp, (lo, hi) in ci["competencies"].items():
        assert lo <= r["competencies"][comp] <= hi
    assert ci["average"][0] < r["average"] < ci["average"][1]
    assert ci["micro_accuracy"][0] < r["micro_accuracy"] < ci["micro_accuracy"][1]


def test_bootstrap_average_and_micro_intervals_by_hand():
    # Only radical varies (10 items, 9 right); every other task is all right or all wrong:
    #   radical_meaning 2/2, pronunciation 1/1, phonetic_radical 0/1, homophone 1/1, excdoc 1/1, tradoc 0/1,
    #   cloze 1/1, phonetic_loan 1/1, translation 0/1  (10 items, 7 right)
    # X ~ Binomial(10, 0.9): P(X<=6) = 0.013 < 2.5% < P(X<=7) = 0.070, P(X<=9) = 0.65 -> radical CI [0.7, 1.0]
    # glyph = (acc + 1) / 2 -> [0.85, 1.0];  average = (glyph + 2/3 + 1/2 + 2/3) / 4 -> [(0.85 + 11/6) / 4, (1 + 11/6) / 4]
    # micro = (X + 7) / 20 -> [14/20, 17/20]
    correct = [True] * 9 + [False] + [True, True, True, False, True, True, False, True, True, False]
    tasks = ["radical"] * 10 + ["radical_meaning"] * 2 + [
        "pronunciation", "phonetic_radical", "homophone", "excdoc_word", "tradoc_word", "cloze", "phonetic_loan", "translation"
    ]
    point = aggregate(correct, tasks)
    assert point["average"] == pytest.approx(((0.9 + 1) / 2 + 2 / 3 + 1 / 2 + 2 / 3) / 4)
    assert point["micro_accuracy"] == pytest.approx(16 / 20)
    ci = bootstrap_ci(correct, tasks, seed=7)
    assert ci["tasks"]["radical"] == pytest.approx([0.7, 1.0])
    assert ci["competencies"]["glyph"] == pytest.approx([0.85, 1.0])
    assert ci["competencies"]["pronunciation"] == pytest.approx([2 / 3, 2 / 3])
    assert ci["average"] == pytest.approx([(0.85 + 11 / 6) / 4, (1 + 11 / 6) / 4])
    assert ci["micro_accuracy"] == pytest.approx([14 / 20, 17 / 20])


def test_bootstrap_matches_literal_item_resampling():
    # An independent, slow implementation: resample items within each task with random.Random, recompute the
    # whole aggregate each time, take percentiles. The fast binomial draw must give the same intervals up to
    # Monte Carlo noise (the grid of possible values is 1/12 wide or finer here).
    correct = [p == g for p, g in zip(PRED, GOLD)]
    by_task: dict[str, list[bool]] = {}
    for ok, t in zip(correct, TASKS):
        by_task.setdefault(t, []).append(ok)
    rng = random.Random(99)
    averages, micros = [], []
    for _ in range(4000):
        res_c, res_t = [], []
        for t, oks in by_task.items():
            res_c += [rng.choice(oks) for _ in oks]
            res_t += [t] * len(oks)
        a = aggregate(res_c, res_t)
        averages.append(a["average"])
        micros.append(a["micro_accuracy"])

    def pct(xs, q):
        xs = sorted(xs)
        return xs[round(q * (len(xs) - 1))]

    fast = bootstrap_ci(correct, TASKS)
    assert fast["average"][0] == pytest.approx(pct(averages, 0.025), abs=0.025)
    assert fast["average"][1] == pytest.approx(pct(averages, 0.975), abs=0.025)
    assert fast["micro_accuracy"][0] == pytest.approx(pct(micros, 0.025), abs=0.051)
    assert fast["micro_accuracy"][1] == pytest.approx(pct(micros, 0.975), abs=0.051)


def test_bootstrap_seed_confidence_and_off_switch(metric):
    correct = [p == g for p, g in zip(PRED, GOLD)]
    a = bootstrap_ci(correct, TASKS, seed=1)
    assert bootstrap_ci(correct, TASKS, seed=1) == a
    assert bootstrap_ci(correct, TASKS, seed=2)["average"] != a["average"]
    narrow = bootstrap_ci(correct, TASKS, seed=1, confidence=0.5)
    assert a["average"][0] < narrow["average"][0] <= narrow["average"][1] < a["average"][1]
    r = metric.compute(predictions=PRED, references=GOLD, tasks=TASKS, seed=1)
    assert r["ci"] == a
    r = metric.compute(predictions=PRED, references=GOLD, tasks=TASKS, n_resamples=0)
    assert "ci" not in r
    check_point_figures(r)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(correct, TASKS, confidence=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(correct, TASKS, n_resamples=-5)


def test_indices_letters_mixed_and_add_batch_agree(metric):
    letters = metric.compute(predictions=PRED, references=GOLD, tasks=TASKS)
    gold_idx = [LETTER_INDEX[g] for g in GOLD]
    pred_idx = [LETTER_INDEX.get(p, (LETTER_INDEX[g] + 1) % 4) for p, g in zip(PRED, GOLD)]  # "" -> a wrong index
    assert metric.compute(predictions=pred_idx, references=gold_idx, tasks=TASKS) == letters
    assert metric.compute(predictions=PRED, references=gold_idx, tasks=TASKS) == letters
    assert metric.compute(predictions=pred_idx, references=GOLD, tasks=TASKS) == letters
    for start in range(0, len(ITEMS), 7):
        metric.add_batch(predictions=PRED[start:start + 7], references=GOLD[start:start + 7], tasks=TASKS[start:start + 7])
    batched = metric.compute()
    assert batched == letters
    check_point_figures(batched)


def test_card_example(metric):
    # metrics/ancientbench_metric/README.md "How to Use"
    r = metric.compute(
        predictions=["A", "C", "B", "D"], references=["A", "B", "B", "D"], tasks=["radical", "radical", "cloze", "homophone"]
    )
    assert r["tasks"]["radical"] == {"accuracy": 0.5, "correct": 1, "total": 2, "competency": "glyph"}
    assert r["average"] == pytest.approx(2.5 / 3)
    assert r["complete"] is False


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"predictions": ["E"], "references": ["A"], "tasks": ["radical"]}, r"predictions\[0\]: invalid label 'E'"),
        ({"predictions": ["A", "a"], "references": ["A", "A"], "tasks": ["radical"] * 2}, r"predictions\[1\]: invalid label 'a'"),
        ({"predictions": [0, 4], "references": [0, 1], "tasks": ["cloze"] * 2}, r"predictions\[1\]: invalid label 4"),
        ({"predictions": ["A"], "references": [""], "tasks": ["radical"]}, r"references\[0\]: invalid label ''"),
        ({"predictions": [1], "references": [-1], "tasks": ["radical"]}, r"references\[0\]: invalid label -1"),
        ({"predictions": ["A", "B"], "references": ["A", "B"], "tasks": ["radical", "Radical"]}, r"tasks\[1\]: unknown task 'Radical'"),
        ({"predictions": ["A", "B"], "references": ["A"], "tasks": ["radical", "cloze"]}, r"length mismatch: 2 predictions, 1 references, 2 tasks"),
        ({"predictions": ["A"], "references": ["A"], "tasks": ["radical", "cloze"]}, r"length mismatch: 1 predictions, 1 references, 2 tasks"),
        ({"predictions": [True], "references": ["A"], "tasks": ["radical"]}, r"predictions\[0\]: invalid label True"),
        ({"predictions": ["A"], "references": [False], "tasks": ["radical"]}, r"references\[0\]: invalid label False"),
        ({"predictions": [], "references": [], "tasks": []}, r"no items to score"),
        ({"predictions": ["A"], "references": ["A"]}, r"tasks is missing"),
        ({"predictions": ["A"], "references": ["A"], "tasks": ["radical"], "n_resamples": -1}, r"n_resamples"),
    ],
)
def test_clear_errors(kwargs, message):
    import evaluate

    metric = evaluate.load(ancientbench.METRIC_PATH)
    with pytest.raises(ValueError, match=message):
        metric.compute(**kwargs)
    # inputs are checked before evaluate stores anything: the same object scores the next valid call
    r = metric.compute(predictions=["A", 1], references=["A", "B"], tasks=["radical", "cloze"], n_resamples=0)
    assert r["micro_accuracy"] == 1.0 and r["n"] == 2


def test_a_rejected_batch_leaves_earlier_batches_intact(metric):
    metric.add_batch(predictions=["A", None], references=["A", "B"], tasks=["cloze", "cloze"])
    with pytest.raises(ValueError, match=r"predictions\[1\]: invalid label 'Z'"):
        metric.add_batch(predictions=["B", "Z"], references=["B", "B"], tasks=["cloze", "cloze"])
    r = metric.compute(n_resamples=0)
    assert r["tasks"]["cloze"] == {"accuracy": 0.5, "correct": 1, "total": 2, "competency": "context"}
    with pytest.raises(ValueError, match="no items to score"):
        metric.compute()  # nothing left after a compute


def test_none_prediction_scores_wrong(metric):
    # the scorer's own too-long records carry pred: null
    r = metric.compute(predictions=[None, "A"], references=["A", "A"], tasks=["radical", "radical"], n_resamples=0)
    assert r["tasks"]["radical"]["correct"] == 1


def _metric_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_abm", Path(ancientbench.METRIC_PATH) / "ancientbench_metric.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_self_contained_metric_equals_the_package_arithmetic():
    module = _metric_module()
    assert module.TASK_TO_COMPETENCY == ancientbench.tasks.TASK_TO_COMPETENCY
    assert module.TASK_NAMES == TASK_NAMES and module.LETTERS == ancientbench.tasks.LETTERS
    assert "import ancientbench" not in (Path(ancientbench.METRIC_PATH) / "ancientbench_metric.py").read_text()
    rng = random.Random(7)
    for trial in range(300):
        n = rng.randint(1, 60)
        tasks = [rng.choice(TASK_NAMES[: rng.randint(1, len(TASK_NAMES))]) for _ in range(n)]
        correct = [rng.random() < rng.random() for _ in range(n)]
        assert module.summarize(correct, tasks) == aggregate(correct, tasks), trial
        if trial % 10 == 0:
            kw = {"n_resamples": 500, "confidence": 0.9, "seed": trial}
            assert module.bootstrap_intervals(correct, tasks, *kw.values()) == bootstrap_ci(correct, tasks, **kw), trial


def test_requirements_are_registry_packages_only():
    reqs = (Path(ancientbench.METRIC_PATH) / "requirements.txt").read_text().split()
    names = {r.split(">")[0].split("<")[0].split("=")[0].lower() for r in reqs if not r.startswith("#")}
    assert names == {"evaluate", "datasets", "numpy"}


def test_compute_is_pure_and_checks_lengths_itself(metric):
    # _compute called directly (as evaluate does after gathering) checks its own inputs and keeps them untouched
    preds, refs, tasks = list(PRED), list(GOLD), list(TASKS)
    out = metric._compute(preds, refs, tasks, n_resamples=0)
    check_point_figures(out)
    assert (preds, refs, tasks) == (PRED, GOLD, TASKS)
    with pytest.raises(ValueError, match="length mismatch: 2 predictions, 1 references, 2 tasks"):
        metric._compute(["A", "B"], ["A"], ["radical", "cloze"])
    with pytest.raises(ValueError, match="no items"):
        metric._compute([], [], [])


def test_load_by_relative_path_from_repo_root_and_by_metric_path_elsewhere(tmp_path, monkeypatch):
    import evaluate

    monkeypatch.chdir(REPO)
    by_rel = evaluate.load("metrics/ancientbench_metric")
    monkeypatch.chdir(tmp_path)
    by_abs = evaluate.load(ancientbench.METRIC_PATH)
    assert Path(ancientbench.METRIC_PATH, "ancientbench_metric.py").is_file()
    args = {"predictions": PRED, "references": GOLD, "tasks": TASKS, "n_resamples": 200}
    assert by_rel.compute(**args) == by_abs.compute(**args)


def test_metric_card_examples_hold(metric):
    card = (Path(ancientbench.METRIC_PATH) / "README.md").read_text(encoding="utf-8")
    assert "## Examples" in card and "## Further References" in card and "2512.17756" in card
    r = metric.compute(predictions=["A", 1, None], references=["A", "B", "C"], tasks=["radical", "cloze", "cloze"], n_resamples=0)
    assert (r["average"], r["n"], r["complete"]) == (0.75, 3, False)
    r = metric.compute(predictions=["B"] * 10, references=["B"] * 10, tasks=list(TASK_NAMES))
    assert (r["average"], r["complete"], r["ci"]["average"]) == (1.0, True, [1.0, 1.0])


def test_registry_copies_are_generated_and_current(tmp_path, monkeypatch, capsys):
    """The metric's and the loading script's task tables are generated from tasks.py: --check passes on the clone and
    fails (naming the file) once a copy is edited by hand; a run rewrites it back."""
    from ancientbench.publish import copies

    assert copies.main(["--check"]) == 0
    for name in ("METRIC_FILE", "SCRIPT_FILE"):
        stale = tmp_path / getattr(copies, name).name
        stale.write_text(getattr(copies, name).read_text(encoding="utf-8").replace('"context"', '"meaning"', 1), encoding="utf-8")
        with monkeypatch.context() as m:
            m.setattr(copies, name, stale)
            assert copies.main(["--check"]) == 1
            assert str(stale) in capsys.readouterr().err
            assert copies.main([]) == 0 and copies.main(["--check"]) == 0
        assert stale.read_text(encoding="utf-8") == getattr(copies, name).read_text(encoding="utf-8")


def test_the_metric_arithmetic_is_generated_from_aggregate_py(tmp_path, monkeypatch, capsys):
    """The metric's aggregate/bootstrap block is aggregate.py's METRIC COPY text byte for byte: editing either side
    alone fails --check (naming the metric file); a run regenerates the metric from aggregate.py."""
    from ancientbench.publish import copies

    shipped_metric, shipped_source = copies.METRIC_FILE, copies.AGGREGATE_FILE
    assert copies.arithmetic_block() in shipped_metric.read_text(encoding="utf-8")
    metric, source = tmp_path / "metric.py", tmp_path / "aggregate.py"
    monkeypatch.setattr(copies, "METRIC_FILE", metric)
    monkeypatch.setattr(copies, "AGGREGATE_FILE", source)
    edits = {  # the file edited alone, and its edit: one line of the arithmetic on either side
        metric: ("c[0] += int(bool(ok))", "c[0] += 1"),
        source: ("alpha = (1.0 - confidence) / 2.0", "alpha = 1.0 - confidence"),
    }
    for edited, (old, new) in edits.items():
        metric.write_bytes(shipped_metric.read_bytes())
        source.write_bytes(shipped_source.read_bytes())
        assert copies.main(["--check"]) == 0
        text = edited.read_text(encoding="utf-8")
        assert text.count(old) == 1
        edited.write_text(text.replace(old, new), encoding="utf-8")
        assert copies.main(["--check"]) == 1
        assert str(metric) in capsys.readouterr().err
        assert copies.main([]) == 0 and copies.main(["--check"]) == 0
        assert (new if edited == source else old) in metric.read_text(encoding="utf-8")
