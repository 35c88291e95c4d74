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

An answer that names two or more different options in one breath - the letter the rule found joined to another
by 或/和/與/及/、/,/or/and (``答案是A或B``, ``選項A和選項C都對``, ``A, C``) - is unparsed, never its first letter; a
letter repeated (``答案是A。A正確``) and another option named in a later clause (``答案是B，A項錯誤``) are not.

Anything else is an extraction failure: the item counts as wrong and the failure rate is reported per task
(never a guessed letter). ``EXTRACTOR_VERSION`` names these rules and is hashed into the generate-mode
template hash, so results extracted differently are never mixed.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Mapping, Sequence

from ..tasks import LETTERS

EXTRACTOR_VERSION = "extract-2"  # 2: an answer naming two options is unparsed
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
# another option joined to the one found: "或B", "和選項C", "、C", ", C", " or B" (the joined letter ends there: "A項錯誤"
# after a comma is another clause, not a second answer)
_JOIN = r"(?:或者|或是|或|以及|和|与|與|及|跟|、|,|/|&|\band\b|\bor\b)"
_PREFIX = r"(?:选项|選項|选|選|option)?\s*[（(\[【]?\s*"
_AFTER = re.compile(r"\s*[)）\]】]?\s*(?:项|項)?\s*" + _JOIN + r"\s*" + _PREFIX + "(" + _L + r")(?![A-Za-z])\s*(?:项|項)?"
                    r"(?=\s*(?:$|[)）\]】.。!?;:,、/&]|都|皆|均|也|两|兩|二|或|和|与|與|及|跟|and\b|or\b))")
_BEFORE = re.compile(r"(?<![A-Za-z])(" + _L + r")(?![A-Za-z])\s*(?:项|項)?\s*[)）\]】]?\s*" + _JOIN + r"\s*" + _PREFIX + "$")
_LEADING_CUE = re.compile(r"^(?:答案|正确答案|正確答案)\s*(?:是|为|為)?\s*[:：]?\s*")

EXTRACTOR_SPEC = {
    "version": EXTRACTOR_VERSION,
    "rules": list(RULES),
    "cue": _CUE.pattern,
    "letter": _LONE.pattern,
    "think": "<think>...</think> removed; text before a lone </think> removed; unclosed <think> -> no answer",
    "normalisation": "NFKC",
    "two_options": "the found letter joined to another (" + _AFTER.pattern + " / " + _BEFORE.pattern + ") -> no answer",
}


def _joined_letters(answer: str, start: int, end: int) -> set[str]:
    """Letters joined by a conjunction to the letter found at ``answer[start:end]`` (before and after it)."""
    found: set[str] = set()
    pos = end
    while m := _AFTER.match(answer, pos):
        found.add(m.group(1))
        pos = m.end()
    before = answer[:start]
    while m := _BEFORE.search(before):
        found.add(m.group(1))
        before = before[: m.start(1)]
    return found


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
        letter = next(g for g in last.groups() if g)
        return (None, None) if _joined_letters(answer, last.start(), last.end()) - {letter} else (letter, "cue")
    stripped = answer.strip()
    m = _LONE.match(stripped)
    if m:
        return (None, None) if _joined_letters(stripped, m.start(1), m.end(1)) - {m.group(1)} else (m.group(1), "letter")
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
