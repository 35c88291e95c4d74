"""Prompt text exactly as documented in ancientbench.prompts (literal expected strings), prefix/suffix split, chat."""

import pytest

from ancientbench import prompts
from ancientbench.prompts import PromptParts, build_prompt, chat_wrap, prompt_text

ITEM = {"id": "radical-河", "question": "「河」字的部首是？", "A": "氵", "B": "可", "C": "口", "D": "丁", "answer": "A"}
SHOTS = [
    {"id": f"d{i}", "question": f"問{i}", "A": f"甲{i}", "B": f"乙{i}", "C": f"丙{i}", "D": f"丁{i}", "answer": "ABCDA"[i]}
    for i in range(5)
]


def test_zero_shot_text_is_exact():
    expected = (
        "以下是关于部首的单项选择题，请直接给出正确答案的选项。\n\n"
        "题目：「河」字的部首是？\n"
        "A. 氵\n"
        "B. 可\n"
        "C. 口\n"
        "D. 丁\n"
        "答案是："
    )
    assert prompt_text("radical", ITEM) == expected


def test_five_shot_text_is_exact():
    expected = (
        "以下是关于通假字的单项选择题，请直接给出正确答案的选项。\n\n"
        "题目：問0\nA. 甲0\nB. 乙0\nC. 丙0\nD. 丁0\n答案是：A\n\n"
        "题目：問1\nA. 甲1\nB. 乙1\nC. 丙1\nD. 丁1\n答案是：B\n\n"
        "题目：問2\nA. 甲2\nB. 乙2\nC. 丙2\nD. 丁2\n答案是：C\n\n"
        "题目：問3\nA. 甲3\nB. 乙3\nC. 丙3\nD. 丁3\n答案是：D\n\n"
        "题目：問4\nA. 甲4\nB. 乙4\nC. 丙4\nD. 丁4\n答案是：A\n\n"
        "题目：「河」字的部首是？\nA. 氵\nB. 可\nC. 口\nD. 丁\n答案是："
    )
    assert prompt_text("phonetic_loan", ITEM, SHOTS) == expected


def test_space_letter_style_changes_only_the_exemplar_answers():
    bare = prompt_text("cloze", ITEM, SHOTS[:2], "bare")
    space = prompt_text("cloze", ITEM, SHOTS[:2], "space")
    assert space == bare.replace("答案是：A\n\n", "答案是： A\n\n").replace("答案是：B\n\n", "答案是： B\n\n")
    assert space.endswith("答案是：")  # the prompt itself ends at the cue; the scorer appends " A"
    with pytest.raises(ValueError, match="letter_style"):
        prompt_text("cloze", ITEM, SHOTS[:1], "lower")


def test_prefix_is_shared_and_suffix_is_the_question():
    p1 = build_prompt("homophone", ITEM, SHOTS)
    p2 = build_prompt("homophone", {**ITEM, "question": "別的問題"}, SHOTS)
    assert p1.prefix == p2.prefix and p1.suffix != p2.suffix
    assert p1.prefix == prompts.shared_prefix("homophone", SHOTS)
    assert p1.suffix.startswith("题目：「河」") and p1.text == p1.prefix + p1.suffix
    assert build_prompt("homophone", ITEM).prefix == "以下是关于同音字的单项选择题，请直接给出正确答案的选项。\n\n"


def test_every_task_names_itself_in_chinese():
    from ancientbench.tasks import TASKS

    for task in TASKS:
        assert prompt_text(task.name, ITEM).startswith(f"以下是关于{task.display_zh}的单项选择题")
    # a user task (a name outside the ten, read from its own file) is named by its name in the same template
    assert prompt_text("couplet", ITEM).startswith("以下是关于couplet的单项选择题")
    with pytest.raises(ValueError, match="competency or a --tasks keyword"):
        prompt_text("glyph", ITEM)


def test_template_hash_covers_the_template_text(monkeypatch):
    assert len(prompts.TEMPLATE_SHA256) == 64 and prompts.TEMPLATE_VERSION
    assert prompts._template_sha256() == prompts.TEMPLATE_SHA256
    monkeypatch.setattr(prompts, "ANSWER_CUE", "答案：")
    monkeypatch.setattr(prompts, "QUESTION_TEMPLATE", prompts.QUESTION_TEMPLATE.replace("答案是：", "答案："))
    assert prompts._template_sha256() != prompts.TEMPLATE_SHA256


def test_chat_wrap_renders_one_user_turn_and_keeps_the_split(tiny_qwen2):
    tok = tiny_qwen2.tokenizer
    parts = build_prompt("radical", ITEM, SHOTS[:2])
    wrapped = chat_wrap(tok, parts)
    assert wrapped.text == "<|im_start|>user\n" + parts.text + "<|im_end|>\n<|im_start|>assistant\n"
    assert wrapped.prefix == "<|im_start|>user\n" + parts.prefix
    assert wrapped.suffix == parts.suffix + "<|im_end|>\n<|im_start|>assistant\n"


def test_chat_wrap_needs_a_chat_template(tiny_llama):
    with pytest.raises(ValueError, match="no chat template"):
        chat_wrap(tiny_llama.tokenizer, PromptParts("a", "b"))
