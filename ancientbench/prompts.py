"""The exact prompt templates (CMMLU / AC-EVAL style, as the AncientBench paper follows them), in one place.

Zero-shot prompt for an item of task ``t`` (``{subject}`` is ``Task.display_zh`` from :mod:`ancientbench.tasks`; a
user task's name)::

    以下是关于{subject}的单项选择题，请直接给出正确答案的选项。\\n\\n
    题目：{question}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\n答案是：

k-shot prompt: the same instruction, then k exemplars from the task's ``dev`` split, each written as the
question block followed by its answer letter and a blank line, then the question::

    以下是关于{subject}的单项选择题，请直接给出正确答案的选项。\\n\\n
    题目：{q1}\\nA. …\\nB. …\\nC. …\\nD. …\\n答案是：{answer1}\\n\\n
    …
    题目：{q}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\n答案是：

This is character for character the format of CMMLU's ``gen_prompt``/``format_example`` (and ACLUE /
AC-EVAL's). The model is scored on its next token after ``答案是：``: the letters A-D, written bare (``A``,
letter style ``"bare"``, the paper's and CMMLU's convention) or after a space (``" A"``, letter style
``"space"``, lm-evaluation-harness's convention). The letter style also applies to the exemplars' answers
(``答案是： A``), so a prompt always shows the convention it is scored with. Item text is used verbatim.

Each prompt is returned as :class:`PromptParts`: the shared ``prefix`` (instruction and exemplars, identical
for every item of a task at a given number of shots) and the per-question ``suffix``; ``prefix + suffix`` is
the prompt. The scorer uses the split to compute the prefix's KV cache once per task.

Chat mode (:func:`chat_wrap`): the whole prompt (exemplars included) becomes one user turn rendered with the
tokenizer's chat template and ``add_generation_prompt=True``; the letter is scored right after the generation
prompt. The rendered text is split again at the end of the shared prefix when the template keeps the user
content verbatim (all common templates do); otherwise the whole rendering is the suffix.

``TEMPLATE_VERSION`` names this template set and ``TEMPLATE_SHA256`` hashes its text; both go into every
results file, so results scored with different prompts can never be mixed up silently.

Mode variants (:func:`build_mode_prompt`, versions and hashes from :func:`template_info`):

- ``letter`` (default): the prompts above; the letter is the next token.
- ``ppl``: the same instruction and question block (options listed, so questions that refer to them, such
  as ``下列…``, stay answerable); the continuation scored is the *text* of each option right after
  ``答案是：``, and each exemplar ends in its correct option's text instead of its letter.
- ``generate``: the letter-mode prompt, always rendered as one chat user turn; the model writes its answer
  and :mod:`ancientbench.evaluation.extract` reads the letter (the extractor's version is hashed in).
"""

from __future__ import annotations

import hashlib
import json
from typing import Mapping, NamedTuple, Sequence

from .errors import AncientBenchError
from .tasks import LETTERS, task_row


class PromptError(AncientBenchError, ValueError):
    """A prompt option that does not exist, or a tokenizer that cannot render the asked prompt."""

TEMPLATE_VERSION = "cmmlu-zh-1"

INSTRUCTION = "以下是关于{subject}的单项选择题，请直接给出正确答案的选项。"
INSTRUCTION_SEPARATOR = "\n\n"
QUESTION_PREFIX = "题目："
ANSWER_CUE = "答案是："
QUESTION_TEMPLATE = QUESTION_PREFIX + "{question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\n" + ANSWER_CUE
EXEMPLAR_SEPARATOR = "\n\n"  # after each exemplar's answer letter
LETTER_STYLES: dict[str, str] = {"bare": "", "space": " "}  # text written before the letter
CHAT_WRAPPING = "one user turn: apply_chat_template([{'role': 'user', 'content': prompt}], add_generation_prompt=True)"


def _template_sha256() -> str:
    spec = {
        "version": TEMPLATE_VERSION,
        "instruction": INSTRUCTION,
        "instruction_separator": INSTRUCTION_SEPARATOR,
        "question": QUESTION_TEMPLATE,
        "exemplar_separator": EXEMPLAR_SEPARATOR,
        "letter_styles": LETTER_STYLES,
        "letters": list(LETTERS),
        "chat": CHAT_WRAPPING,
    }
    return hashlib.sha256(json.dumps(spec, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


TEMPLATE_SHA256: str = _template_sha256()


class PromptParts(NamedTuple):
    """A prompt split into the part shared by all items of a task (``prefix``) and the question (``suffix``)."""

    prefix: str
    suffix: str

    @property
    def text(self) -> str:
        return self.prefix + self.suffix


def letter_prefix(letter_style: str) -> str:
    """The text written before an answer letter: ``""`` for ``bare``, ``" "`` for ``space``."""
    try:
        return LETTER_STYLES[letter_style]
    except KeyError:
        raise PromptError(f"letter_style must be one of {', '.join(LETTER_STYLES)}, got {letter_style!r}") from None


def instruction(task: str) -> str:
    """The instruction line naming the task in Chinese (a user task by its name), with its trailing blank line."""
    return INSTRUCTION.format(subject=task_row(task).display_zh) + INSTRUCTION_SEPARATOR


def format_question(item: Mapping[str, str]) -> str:
    """The question block of one item, ending in the answer cue ``答案是：``."""
    return QUESTION_TEMPLATE.format(question=item["question"], A=item["A"], B=item["B"], C=item["C"], D=item["D"])


def format_exemplar(item: Mapping[str, str], letter_style: str = "bare") -> str:
    """One few-shot exemplar: the question block, its answer letter, a blank line."""
    return format_question(item) + letter_prefix(letter_style) + item["answer"] + EXEMPLAR_SEPARATOR


def shared_prefix(task: str, exemplars: Sequence[Mapping[str, str]] = (), letter_style: str = "bare") -> str:
    """Instruction plus the exemplars, in the order given: the part of the prompt every item of the task shares."""
    return instruction(task) + "".join(format_exemplar(e, letter_style) for e in exemplars)


def build_prompt(
    task: str, item: Mapping[str, str], exemplars: Sequence[Mapping[str, str]] = (), letter_style: str = "bare"
) -> PromptParts:
    """The prompt of ``item`` with the given exemplars (none for zero-shot), split into shared prefix and question."""
    return PromptParts(shared_prefix(task, exemplars, letter_style), format_question(item))


def prompt_text(
    task: str, item: Mapping[str, str], exemplars: Sequence[Mapping[str, str]] = (), letter_style: str = "bare"
) -> str:
    """The full prompt text of ``item`` (what the model reads before the answer letter)."""
    return build_prompt(task, item, exemplars, letter_style).text


def chat_wrap(tokenizer, parts: PromptParts) -> PromptParts:
    """Render the prompt as one user turn with the tokenizer's chat template, ending in the generation prompt.

    The returned parts still split at the end of the shared prefix when the rendering contains the user
    content verbatim; otherwise the prefix is empty (the scorer then reuses nothing, results are unchanged).
    """
    if not getattr(tokenizer, "chat_template", None):
        name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
        raise PromptError(f"tokenizer {name!r} has no chat template; chat mode needs a chat/instruct model's tokenizer")
    content = parts.text
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
    )
    if not isinstance(rendered, str):  # some versions return a list for batched input
        rendered = rendered[0]
    start = rendered.find(content)
    if start < 0:
        return PromptParts("", rendered)
    cut = start + len(parts.prefix)
    return PromptParts(rendered[:cut], rendered[cut:])


PPL_VERSION = TEMPLATE_VERSION + "+ppl-1"
GENERATE_VERSION = TEMPLATE_VERSION + "+gen-1"
MODE_TEMPLATES = ("letter", "ppl", "generate")


def format_ppl_exemplar(item: Mapping[str, str]) -> str:
    """One ppl-mode exemplar: the question block, its correct option's text, a blank line."""
    return format_question(item) + item[item["answer"]] + EXEMPLAR_SEPARATOR


def format_mode_exemplar(mode: str, item: Mapping[str, str], letter_style: str = "bare") -> str:
    """An exemplar as written in ``mode``'s prompts (what is dropped, longest first, to fit the context)."""
    return format_ppl_exemplar(item) if mode == "ppl" else format_exemplar(item, letter_style)


def build_mode_prompt(
    mode: str, task: str, item: Mapping[str, str], exemplars: Sequence[Mapping[str, str]] = (),
    letter_style: str = "bare",
) -> PromptParts:
    """The prompt of ``item`` in ``mode`` (``letter``, ``ppl``, ``generate``), split into shared prefix and question."""
    if mode not in MODE_TEMPLATES:
        raise PromptError(f"mode must be one of {', '.join(MODE_TEMPLATES)}, got {mode!r}")
    if mode == "ppl":
        prefix = instruction(task) + "".join(format_ppl_exemplar(e) for e in exemplars)
        return PromptParts(prefix, format_question(item))
    return build_prompt(task, item, exemplars, letter_style)


def template_info(mode: str = "letter", *, extractor: Mapping | None = None) -> dict[str, str]:
    """``{"template_version", "template_sha256"}`` of a mode's prompts (the ``prompt`` block of results). Generate
    mode's hash covers the answer extractor too: pass its spec (``evaluation.extract.EXTRACTOR_SPEC``)."""
    if mode == "letter":
        return {"template_version": TEMPLATE_VERSION, "template_sha256": TEMPLATE_SHA256}
    if mode == "ppl":
        spec = {"base": TEMPLATE_SHA256, "version": PPL_VERSION, "continuation": "option text after the answer cue",
                "exemplar_answer": "option text", "normalisation": "per character"}
        version = PPL_VERSION
    elif mode == "generate":
        if extractor is None:
            raise ValueError("generate mode's template hash covers the answer extractor: pass extractor=EXTRACTOR_SPEC")
        spec = {"base": TEMPLATE_SHA256, "version": GENERATE_VERSION, "chat": CHAT_WRAPPING, "extractor": dict(extractor)}
        version = GENERATE_VERSION
    else:
        raise ValueError(f"mode must be one of {', '.join(MODE_TEMPLATES)}, got {mode!r}")
    digest = hashlib.sha256(json.dumps(spec, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()
    return {"template_version": version, "template_sha256": digest}
