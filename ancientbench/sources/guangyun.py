"""Source adapter for the 《廣韻》 (Guangyun) rhyme dictionary, as shipped by PyPI ``tshet-uinh`` (MIT).

Owns turning the package's 廣韻 data into plain records the builders use: every reading of every character
with its 小韻 (number and headword), 反切, 音韻地位 (the tshet-uinh 描述, e.g. ``端一東平``) and 釋義, plus
the phonological helpers the checkers need (the 音韻地位 a 反切 spells, via ``tshet_uinh.執行反切``) and
the gloss-cleaning rules (editorial （…） restorations, the 小韻 trailer ``德紅切十七``, reading notes).

Only the 廣韻 records are used (``tshet_uinh.data.廣韻``), not the two 王三 supplements the package's
``資料.query字頭`` injects. When ``tshet-uinh`` is not installed :func:`load` raises
:class:`~ancientbench.builders.common.SourceMissing` with the install command. Do not install PyPI ``qieyun``
for this: it pins an old networkx that breaks under numpy 2.

Typical use::

    from ancientbench.builders import guangyun
    g = guangyun.load()
    [r.fanqie for r in g.readings("行")]    # ['胡郎', '戶庚', '下浪', '下更']
    g.readings("東")[0].status              # '端一東平'
    g.fanqie_statuses("德", "紅")           # frozenset({'端一東平'})
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from itertools import product

from . import SourceMissing

PACKAGE = "tshet-uinh"
INSTALL_HINT = "pip install 'tshet-uinh==0.1.0' (Python >= 3.11; or `pip install -e '.[build]'`)"

_NUMERALS = "〇一二三四五六七八九十百"
_PARENS = re.compile(r"（[^（）]*）")
# Reading notes inside a gloss: 又音X, 又X Y切, 又XY二切, 又X Y X Y三切 (one to four fanqie pairs).
_READING_NOTE = re.compile(r"又(?:音.|(?:[^也又]{2}){1,4}[二三四]?切)|(?:[^也又]{2}){2,4}[二三四]切|[^也又]{2}切(?=又|$)")
_COUNT_TAIL = re.compile(rf"[{_NUMERALS}]+$")
# What a gloss segment is split on: the 也 that closes a definition, and the markers that open a new one.
_SEGMENT_SPLIT = re.compile(r"也|又|亦|一曰|或曰|[，。；、\s]")


@dataclass(frozen=True)
class Reading:
    """One 廣韻 entry: a character in one 小韻."""

    char: str
    xiaoyun: str  # 小韻號 as tshet-uinh numbers it ('1', '3708b' where one printed 小韻 holds two 音韻地位)
    book_index: int  # the printed 小韻's ordinal (原書小韻號)
    head: str  # the 小韻's first character (its name, e.g. 東 for 德紅切)
    fanqie: str | None  # '德紅' (without 切); None where the book gives another kind of note
    status: str | None  # the tshet-uinh 音韻地位 描述, e.g. '端一東平'; None where the data marks it invalid
    rhyme: str  # the rhyme heading as printed (韻目原貌)
    gloss: str  # the raw 釋義 as in the data
    order: int  # position in the book (0-based), a stable sort key
    is_head: bool = False  # the first entry of its 小韻 (its gloss ends with the 反切 and the 小韻's size)

    @property
    def citation(self) -> str:
        """A record id for items: ``廣韻 小韻1「東」德紅切 端一東平``."""
        fq = f"{self.fanqie}切" if self.fanqie else "無反切"
        return f"廣韻 小韻{self.xiaoyun}「{self.head}」{fq} {self.status or '地位未詳'}"


def strip_editorial(text: str) -> str:
    """Remove the editors' （…） restorations (e.g. the copied gloss after 上同)."""
    prev = None
    while prev != text:
        prev, text = text, _PARENS.sub("", text)
    return text


def meaning_text(reading: Reading) -> str:
    """The 釋義 of a reading reduced to its meanings: no editorial （…）, no 小韻 trailer of the head entry
    (``德紅切十七``: the 反切 and the count of characters), no reading notes (``又音支``, ``又丑江切``,
    ``又戶庚戶浪下孟三切``)."""
    text = strip_editorial(reading.gloss)
    if reading.is_head:
        if reading.fanqie:
            cut = text.rfind(f"{reading.fanqie}切")
            if cut >= 0:
                text = text[:cut]
        text = _COUNT_TAIL.sub("", text)
    return _READING_NOTE.sub("", text)


def quoted_gloss(reading: Reading, limit: int = 24) -> str:
    """The reading's meaning as an explanation quotes it: 「湯湯流皃」 (cut at ``limit`` characters with …);
    「釋義闕」 when the book gives none."""
    text = meaning_text(reading).strip()
    if not text:
        return "「釋義闕」"
    return "「" + (text if len(text) <= limit else text[:limit] + "…") + "」"


def gloss_segments(text: str) -> tuple[str, ...]:
    """Split a meaning text into its definition segments (on 也 / 又 / 亦 / 一曰 / 或曰): ``'無私也敬也'`` ->
    ``('無私', '敬')``; empty segments dropped, order kept, duplicates removed."""
    out: list[str] = []
    for seg in _SEGMENT_SPLIT.split(text):
        if seg and seg not in out:
            out.append(seg)
    return tuple(out)


# glosses that make an entry a written form of the entry before it (上同 "the same as above", 古文 "old form" …)
FORM_GLOSSES = ("上同", "同上", "古文", "籀文", "俗", "亦作", "或作", "今作", "篆文", "隸", "本亦作")


@dataclass
class Guangyun:
    """All 廣韻 readings, indexed by character and by 小韻."""

    version: str
    entries: tuple[Reading, ...]

    def __post_init__(self) -> None:
        self._by_char: dict[str, list[Reading]] = {}
        self._by_xiaoyun: dict[str, list[Reading]] = {}
        for r in self.entries:
            self._by_char.setdefault(r.char, []).append(r)
            self._by_xiaoyun.setdefault(r.xiaoyun, []).append(r)
        self._forms: dict[str, frozenset[str]] = {}  # forms_of, memoised: the glyph builders ask millions of times

    @property
    def source_label(self) -> str:
        """The ``source`` string items carry: ``tshet-uinh 0.1.0 (廣韻)``."""
        return f"{PACKAGE} {self.version} (廣韻)"

    def chars(self) -> tuple[str, ...]:
        """Every headword, in book order of first appearance."""
        return tuple(self._by_char)

    def readings(self, char: str) -> tuple[Reading, ...]:
        """All readings of a character in book order (empty when not a 廣韻 headword)."""
        return tuple(self._by_char.get(char, ()))

    def xiaoyun_ids(self) -> tuple[str, ...]:
        return tuple(self._by_xiaoyun)

    def members(self, xiaoyun: str) -> tuple[Reading, ...]:
        """The entries of one 小韻 in book order."""
        return tuple(self._by_xiaoyun.get(xiaoyun, ()))

    def xiaoyun_of(self, char: str) -> frozenset[str]:
        """The 小韻 numbers a character belongs to."""
        return frozenset(r.xiaoyun for r in self.readings(char))

    def statuses_of(self, char: str) -> frozenset[str]:
        """The 音韻地位 描述 of every reading of a character (readings without a valid 地位 are skipped)."""
        return frozenset(r.status for r in self.readings(char) if r.status)

    def fanqie_of(self, char: str) -> frozenset[str]:
        return frozenset(r.fanqie for r in self.readings(char) if r.fanqie)

    def forms_of(self, char: str) -> frozenset[str]:
        """The characters the book gives ``char`` as a form of: an entry glossed 上同 / 同上 / 古文 / 籀文 / 俗 /
        亦作 … is a written form of the entry before it in its 小韻 (and, through 上同 chains, of the first one):
        飌 古文 after 風."""
        if char not in self._forms:
            self._forms[char] = self._forms_of(char)
        return self._forms[char]

    def _forms_of(self, char: str) -> frozenset[str]:
        out: set[str] = set()
        for r in self.readings(char):
            members = self._by_xiaoyun[r.xiaoyun]
            at = members.index(r)
            while at > 0 and members[at].gloss.startswith(FORM_GLOSSES):
                at -= 1
                out.add(members[at].char)
        out.discard(char)
        return frozenset(out)

    def is_monophonic(self, char: str) -> bool:
        """One reading only (one 小韻, with a valid 音韻地位 and a 反切)."""
        rs = self.readings(char)
        return len(rs) == 1 and rs[0].status is not None and rs[0].fanqie is not None

    def fanqie_statuses(self, upper: str, lower: str) -> frozenset[str] | None:
        """Every 音韻地位 the 反切 ``upper``+``lower`` can spell, over all readings of both spellers
        (``tshet_uinh.執行反切``); None when a speller has no 廣韻 reading with a valid 地位."""
        return _fanqie_statuses(upper, lower, self.statuses_of(upper), self.statuses_of(lower))


@lru_cache(maxsize=65536)
def _fanqie_statuses_cached(upper_statuses: tuple[str, ...], lower_statuses: tuple[str, ...]) -> frozenset[str]:
    from tshet_uinh import 執行反切, 音韻地位  # lazy: tshet-uinh is installed only on Python >= 3.11 (pyproject marker); a missing one is SourceMissing

    out: set[str] = set()
    for up, lo in product(upper_statuses, lower_statuses):
        try:
            results = 執行反切(音韻地位.from描述(up), 音韻地位.from描述(lo))
        except ValueError:  # an impossible speller combination spells nothing
            continue
        out.update(s.描述 for s in results)
    return frozenset(out)


def _fanqie_statuses(upper: str, lower: str, ups: frozenset[str], los: frozenset[str]) -> frozenset[str] | None:
    if not ups or not los:
        return None
    return _fanqie_statuses_cached(tuple(sorted(ups)), tuple(sorted(los)))


@lru_cache(maxsize=1)
def load() -> Guangyun:
    """Read every 廣韻 entry from the installed ``tshet-uinh``; cached. Raises SourceMissing when absent."""
    try:
        from tshet_uinh.data import 廣韻  # lazy: tshet-uinh is installed only on Python >= 3.11 (pyproject marker); a missing one is SourceMissing
    except ImportError as e:
        raise SourceMissing(f"PyPI package {PACKAGE} (廣韻) is not importable ({e}); {INSTALL_HINT}") from None
    try:
        ver = version(PACKAGE)
    except PackageNotFoundError:
        ver = "unknown"
    entries: list[Reading] = []
    for book_index, group in enumerate(廣韻.iter原書小韻(), start=1):
        heads: dict[str, str] = {}
        for e in group:
            xy = e.來源.小韻號
            first = xy not in heads
            heads.setdefault(xy, e.字頭)
            entries.append(
                Reading(
                    char=e.字頭,
                    xiaoyun=xy,
                    book_index=book_index,
                    head=heads[xy],
                    fanqie=e.反切,
                    status=e.音韻地位.描述 if e.音韻地位 is not None else None,
                    rhyme=e.來源.韻目,
                    gloss=e.釋義,
                    order=len(entries),
                    is_head=first,
                )
            )
    if not entries:
        raise SourceMissing(f"{PACKAGE} is installed but holds no 廣韻 entries; {INSTALL_HINT}")
    return Guangyun(version=ver, entries=tuple(entries))


__all__ = ["INSTALL_HINT", "Guangyun", "Reading", "gloss_segments", "load", "meaning_text", "strip_editorial"]
