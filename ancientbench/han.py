"""What counts as a Han character: the package's one definition (``tests/test_han.py`` checks no module writes a
second set of CJK ranges).

A Han character is a code point of the CJK Unified Ideographs blocks (the basic block, Extension A, and the
supplementary planes 2 and 3 that hold Extensions B onwards), a CJK Compatibility Ideograph (U+F900..U+FAFF) or
〇 (U+3007, the ideographic zero of dates and counts). ``unified_only=True`` leaves out the compatibility
ideographs and 〇: the character pool of the 廣韻 tasks (a compatibility ideograph is another code point for a
unified one, so never a headword of its own), the mini-LM corpus's Han count, and the other places that count or
accept only unified ideographs.
"""

from __future__ import annotations

BASIC_BLOCK = (0x4E00, 0x9FFF)  # CJK Unified Ideographs (the block a tokenizer's CJK vocabulary is usually drawn from)
UNIFIED_BLOCKS: tuple[tuple[int, int], ...] = (
    (0x3400, 0x4DBF),  # Extension A
    BASIC_BLOCK,
    (0x20000, 0x3FFFF),  # planes 2 and 3: Extensions B onwards
)
COMPATIBILITY_BLOCK = (0xF900, 0xFAFF)  # CJK Compatibility Ideographs
IDEOGRAPHIC_ZERO = "〇"


def is_han(ch: str, *, unified_only: bool = False) -> bool:
    """``ch`` (one character) is a Han character; ``unified_only`` leaves out compatibility ideographs and 〇."""
    o = ord(ch)
    if any(lo <= o <= hi for lo, hi in UNIFIED_BLOCKS):
        return True
    if unified_only:
        return False
    return COMPATIBILITY_BLOCK[0] <= o <= COMPATIBILITY_BLOCK[1] or ch == IDEOGRAPHIC_ZERO


def han_only(text: str, *, unified_only: bool = False) -> str:
    """The Han characters of ``text``, in order."""
    return "".join(ch for ch in text if is_han(ch, unified_only=unified_only))


def count_han(text: str, *, unified_only: bool = False) -> int:
    """How many Han characters ``text`` holds."""
    return sum(1 for ch in text if is_han(ch, unified_only=unified_only))


def all_han(text: str, *, unified_only: bool = False) -> bool:
    """``text`` is non-empty and every character of it is Han."""
    return bool(text) and all(is_han(ch, unified_only=unified_only) for ch in text)
