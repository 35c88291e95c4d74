"""Reading the answer letter from a generated answer (``--mode generate``).

:func:`extract_letter` ``(text, options) -> (letter | None, rule | None)``. The text is NFKC-normalised
(full-width ``Ａ``/``：`` become ``A``/``:``) and thinking is removed first: every ``<think>…</think>`` block,
and everything up to a ``</think>`` whose opening tag was in the prompt; an answer still inside an unclosed
``<think>`` has no final answer. Then the first rule that matches decides:

1. ``cue``: an answer cue followed by a letter - ``答案是X``, ``答案：X``, ``答案为X``, ``正确答案是（X）``,
   ``选X``/``选项X``, ``answer is X``, ``Answer: X``. When the cue occurs several times the *last* one
   counts (a model that corrects itself ends with its final answer).
2. ``letter``: the answer is a lone letter, possibly bracketed or followed by punctuation or the option's
   text: ``B``, ``(B)``, ``B.``, ``B. 其``, ``**B**``.
3. ``option_text``: the answer, without surrounding punctuation and a leading cue, is exactly one option's
   text (``其`` when option B is ``其``).

Anything else is an extraction failure: the item counts as wrong and the failure rate is reported per task
(never a guessed letter). ``EXTRACTOR_VERSION`` names these rules and is hashed into the generate-mode
template hash, so results extracted differently are never mixed.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Mapping, Sequence

from ..tasks import LETTERS

EXTRACTOR_VERSION = "extract-1"
RULES = ("cue", "letter", "option_text")

_L = "[ABCD]"
_CUE = re.compile(
    r"(?:答案|正确答案|正確答案|正确选项|正確選項|最终答案|最終答案)\s*(?:应该|應該|应|應)?\s*(?:是|为|為)?\s*[:：]?\s*"
    r"[\*\s]*[（(\[【]?\s*(" + _L + r")(?![A-Za-z])"
    r"|(?:选|選)(?:项|項|择|擇)?\s*[（(\[【]?\s*(" + _L + r")(?![A-Za-z])"
    r"|\b(?:answer|Answer|ANSWER)\s*(?:is|:)\s*[\*\s]*[(\[]?\s*(" + _L + r")(?![A-Za-z])"
)
_LONE = re.compile(r"^[\s\*_`\"'“”]*[（(\[【]?\s*(" + _L + r")\s*[)）\]】]?[\*_`\"'”]*(?:[\s.．。,，、:：)）].*)?$", re.S)
_STRIP = " \t\r\n.．。,，、:：;；!！?？\"'“”‘’「」『』《》()（）[]【】*_`"
_LEADING_CUE = re.compile(r"^(?:答案|正确答案|正確答案)\s*(?:是|为|為)?\s*[:：]?\s*")

EXTRACTOR_SPEC = {
    "version": EXTRACTOR_VERSION,
    "rules": list(RULES),
    "cue": _CUE.pattern,
    "letter": _LONE.pattern,
    "think": "<think>...</think> removed; text before a lone </think> removed; unclosed <think> -> no answer",
    "normalisation": "NFKC",
}


def strip_thinking(text: str) -> str | None:
    """The answer without its thinking blocks; ``None`` when the text ends inside an unclosed ``<think>``."""
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    if "</think>" in text:  # the opening tag was part of the prompt (chat templates that start the block)
        text = text.rsplit("</think>", 1)[1]
    if "<think>" in text:
        return None
    return text


def extract_letter(text: str | None, options: Mapping[str, str] | Sequence[str] = ()) -> tuple[str | None, str | None]:
    """The letter a generated answer gives and the rule that found it, or ``(None, None)`` (see module doc).

    ``options``: the item (``{"A": …, "D": …}``) or the four option texts, for the ``option_text`` rule.
    """
    if not text:
        return None, None
    answer = strip_thinking(unicodedata.normalize("NFKC", text))
    if answer is None:
        return None, None
    cues = list(_CUE.finditer(answer))
    if cues:
        last = cues[-1]
        return next(g for g in last.groups() if g), "cue"
    m = _LONE.match(answer.strip())
    if m:
        return m.group(1), "letter"
    if isinstance(options, Mapping):
        texts = [options.get(x, "") for x in LETTERS]
    else:
        texts = list(options)
    bare = _LEADING_CUE.sub("", answer.strip()).strip(_STRIP)
    if bare:
        hits = [x for x, t in zip(LETTERS, texts) if t and unicodedata.normalize("NFKC", t).strip(_STRIP) == bare]
        if len(hits) == 1:
            return hits[0], "option_text"
    return None, None


__all__ = ["EXTRACTOR_SPEC", "EXTRACTOR_VERSION", "RULES", "extract_letter", "strip_thinking"]
