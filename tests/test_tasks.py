"""The task registry: ten tasks, four competencies, and how user task lists are resolved."""

from pathlib import Path

import pytest

from ancientbench.tasks import COMPETENCIES, COMPETENCY_TASKS, TASK_NAMES, TASK_TO_COMPETENCY, resolve_tasks


def test_registry_matches_the_paper():
    assert len(TASK_NAMES) == 10
    assert COMPETENCIES == ("glyph", "pronunciation", "meaning", "context")
    assert COMPETENCY_TASKS == {
        "glyph": ("radical", "radical_meaning"),
        "pronunciation": ("pronunciation", "phonetic_radical", "homophone"),
        "meaning": ("excdoc_word", "tradoc_word"),
        "context": ("cloze", "phonetic_loan", "translation"),
    }
    assert TASK_TO_COMPETENCY["phonetic_loan"] == "context"


def test_task_name_wins_over_competency_of_the_same_name():
    assert resolve_tasks(["pronunciation"]) == ("pronunciation",)
    assert resolve_tasks(["competency:pronunciation"]) == ("pronunciation", "phonetic_radical", "homophone")


def test_competencies_expand_and_keep_registry_order():
    assert resolve_tasks(["cloze", "glyph"]) == ("radical", "radical_meaning", "cloze")
    assert resolve_tasks(None) == TASK_NAMES
    assert resolve_tasks(["all"]) == TASK_NAMES


@pytest.mark.parametrize("bad", ["radicals", "competency:syntax"])
def test_unknown_names_are_rejected_with_the_valid_ones(bad):
    with pytest.raises(ValueError, match="valid"):
        resolve_tasks([bad])


def test_card_and_readme_state_the_current_data_version():
    import re

    from ancientbench import DATASET_PATH
    from ancientbench.tasks import DATASET_VERSION

    root = Path(DATASET_PATH).parent
    card = (Path(DATASET_PATH) / "README.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    stated = re.findall(r"This is \*\*version ([0-9.]+)\*\* of the data", card)
    stated += re.findall(r"the AncientBench open dataset, version ([0-9.]+)", card)
    stated += re.findall(r"Data version\s+\*\*([0-9.]+)\*\*", readme)
    assert len(stated) == 3 and set(stated) == {DATASET_VERSION}, stated


def test_each_row_says_what_its_options_are_and_bounds_its_options_only_probe():
    """The blind quiz's option note and the card's options-only bound are read off the task row, not a side table."""
    from ancientbench import DATASET_PATH
    from ancientbench.quality.probes import make_quiz
    from ancientbench.tasks import TASKS

    # reported, not bounded, exactly where the options rebuild the stem (issue 22, decision 2)
    assert {t.name for t in TASKS if t.options_probe_bound is None} == {"radical", "phonetic_radical", "translation"}
    for t in TASKS:
        assert t.option_note.startswith("four ") and (t.options_probe_bound is None or 0.25 < t.options_probe_bound < 1), t.name
        text, _ = make_quiz(DATASET_PATH, t.name, mode="options", n=2, seed=0)
        assert t.option_note in text


def test_each_row_carries_its_predictor_bound_and_target():
    """Issue 34: the options-only predictor is bounded at 35% on the seven tasks whose options do not rebuild the stem
    (a field of its own: the blind probe's bound is 40% on the curated tasks), the stem-reading predictor has a
    target of 40% on five tasks and is reported elsewhere."""
    from ancientbench.tasks import TASKS

    bounded = {"radical_meaning", "pronunciation", "homophone", "excdoc_word", "tradoc_word", "cloze", "phonetic_loan"}
    assert {t.name: t.options_predictor_bound for t in TASKS} == {
        t.name: (0.35 if t.name in bounded else None) for t in TASKS}
    targeted = {"pronunciation", "homophone", "cloze", "phonetic_loan", "tradoc_word"}
    assert {t.name: t.stem_predictor_target for t in TASKS} == {t.name: (0.40 if t.name in targeted else None) for t in TASKS}
    assert {t.name for t in TASKS if t.options_predictor_bound is None} == {t.name for t in TASKS if t.options_probe_bound is None}


def test_each_row_names_its_hold_out_rule_and_the_leakage_check_follows_it(monkeypatch):
    """What the fine-tuning data must not contain of a test item is the row's hold_out rule: changing a row's rule
    changes what is held out (a new task defaults to the conservative "quoted")."""
    import dataclasses

    from ancientbench import tasks
    from ancientbench.finetune import leakage

    assert {t.hold_out for t in tasks.TASKS} <= set(tasks.HOLD_OUT_RULES)
    assert tasks.Task("x", "x", "X", "context", "generated", option_note="four x").hold_out == "quoted"
    row = {"id": "cloze-1", "task": "cloze", "question": "下列哪個字最適合填入「學而時習＿」的空格？", "A": "之", "B": "乎",
           "C": "也", "D": "矣", "answer": "A"}
    held = leakage.HeldOut()
    leakage.add_test_items(held, [row], "t.jsonl")
    assert list(held.sentences) == ["学而时习之"] and not held.chars  # the filled sentence (folded), no target
    quoted = dataclasses.replace(tasks.TASK_BY_NAME["cloze"], hold_out="quoted")
    monkeypatch.setattr(leakage, "TASK_BY_NAME", {**tasks.TASK_BY_NAME, "cloze": quoted})
    held = leakage.HeldOut()
    leakage.add_test_items(held, [row], "t.jsonl")
    assert list(held.sentences) == ["学而时习"] and held.items["cloze"] == 1  # the quoted span as it stands
