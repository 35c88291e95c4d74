"""Every knowledge-free shortcut strategy, as code: what an examinee without knowledge of ancient Chinese
could use to pick an option. The audit measures them and the builders balance them.

API (for builders and the audit)::

    from ancientbench.quality.strategies import Item, Context, STRATEGIES, credits, item_from_row, Frequencies

    ctx = Context(freq)                       # freq: Frequencies (classics counts); Unihan loads lazily
    item = Item.make("homophone", question, [key, d1, d2, d3])   # head character taken from the question
    credits(item, 0, ctx)                     # {strategy name: credit of the option at index 0} (ties 1/k)

A strategy is ``fn(item, ctx) -> list[float]``, one score per option; its guess is the best-scored option
and a tie among k options including the key earns 1/k (:func:`strategy_credit`). ``STRATEGIES`` holds them
all, by family (``FAMILY``): *form* (longest, shortest, most_central (text similarity with the other
options), most_central_glyph (the option that contains, or lies in, most other
options: the option whose parts are the other options) and least_central_glyph (the reverse: the odd one
out), unrelated_glyph (the option sharing no graph with the others), most/least_frequent_option (how often the option string is an option in the task:
``ctx.option_counts``), most_strokes (Unihan kTotalStrokes), most_frequent_char, rarest_char,
question_overlap, unigram_lm), *mandarin* (pypinyin, all heteronyms: same_syllable_tone, same_syllable,
nearest_initial_final, fanqie_mandarin and fanqie_mandarin_toneless: a 反切 option read through Mandarin,
upper speller -> initial, lower speller -> final (and tone)), *glyph* (decompositions of
:mod:`ancientbench.sources.decomposition`: is_component: the option is a part of the head character;
shares_component; same_phonetic_series: Unihan kGSR series or kPhonetic group shared with the head;
most_populous_radical: the option that writes the Kangxi radical Unihan files the most characters under;
not_a_radical: the option that writes no Kangxi radical;
composes_with_option: the option that writes a two-part character with another option, more strokes first;
composes_sounding: the same, when that character sounds (Mandarin) like a third option; odd_family: the option
that is no piece of a radical another option is a piece of, and neither contains nor lies in another).
Strategies that need the head character (the one the question asks about) use :func:`head_char`: the last
single-character 「…」 quotation of the question (every generated template, excdoc_word and phonetic_loan
have one); where there is none they score every option alike (chance). ``pick_balanced`` in
:mod:`ancientbench.builders.debias` takes ``task=`` to balance all of them (and ``max_option_uses=``
to cap recurrence); its ``Balancer`` does the same item by item, for builders that draw each item's
distractors from what earlier items left unused. ``BALANCED_V1`` /
``BALANCED_V1_WITH_CENTRAL`` are the form strategies of data version 1 with their old signature
``fn(question, options, freq)``, kept so builders not yet moved to ``task=`` rebuild byte-identically.

Imports go one way: builders.<task> -> builders.debias -> quality.strategies -> builders' source adapters
(unihan, classics, decomposition), never a task builder.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from itertools import combinations
from typing import NamedTuple

from ..sources import SourceMissing, guangyun, unihan
from ..sources.decomposition import components, fold, graph_set, two_part_characters
from ..tasks import LETTERS

# ---------------------------------------------------------------------------------------------- inputs


@lru_cache(maxsize=1 << 18)  # pure; the builders score the same options across thousands of candidate items
def chars(text: str) -> tuple[str, ...]:
    """The characters of a text that carry content: letters, digits, ideographs (no spaces or punctuation)."""
    return tuple(ch for ch in text if unicodedata.category(ch)[0] in ("L", "N"))


class Frequencies:
    """Character unigram counts with an add-one smoothed log-probability."""

    def __init__(self, counts: Mapping[str, int], label: str):
        self.counts = counts
        self.label = label
        self.total = sum(counts.values())
        self.vocab = len(counts) + 1

    def __getitem__(self, ch: str) -> int:
        return self.counts.get(ch, 0)

    def logprob(self, ch: str) -> float:
        return math.log((self.counts.get(ch, 0) + 1) / (self.total + self.vocab))


_QUOTE = re.compile(r"「([^「」]*)」")


def head_char(question: str) -> str | None:
    """The character the question asks about: the last 「X」 quotation holding one character, else None
    (cloze and translation quote a sentence and have none)."""
    for q in reversed(_QUOTE.findall(question)):
        if len(q) == 1:
            return q
    return None


class Item(NamedTuple):
    task: str
    question: str
    options: tuple[str, ...]
    head: str | None

    @classmethod
    def make(cls, task: str, question: str, options: Sequence[str]) -> Item:
        return cls(task, question, tuple(o.strip() for o in options), head_char(question))


def item_from_row(row: Mapping[str, str]) -> tuple[Item, int]:
    """An item and the index of its key, from a dataset row."""
    return Item.make(row["task"], row["question"], [row[L] for L in LETTERS]), LETTERS.index(row["answer"])


@dataclass
class Context:
    """What strategies read besides the item: character frequencies, Unihan (loaded on first use) and the
    number of times each option string is an option in the task (set by the audit or the builder)."""

    freq: Frequencies
    option_counts: Counter = field(default_factory=Counter)
    unihan_dir: str | None = None

    @cached_property
    def unihan(self):
        return unihan.load(self.unihan_dir)


# ---------------------------------------------------------------------------------------------- sound


@cache
def _pypinyin():
    """The pypinyin module (a dependency of the package), or SourceMissing with its install command."""
    try:
        import pypinyin  # lazy: pypinyin loads its dictionaries on import (0.8 s); a missing one is SourceMissing
    except ImportError:
        raise SourceMissing("pypinyin (Mandarin readings) is not installed; pip install 'pypinyin>=0.50'") from None
    return pypinyin


@cache
def syllables(ch: str) -> frozenset[str]:
    """Mandarin syllables with tone number of a character, every heteronym (pypinyin TONE3): 東 -> {'dong1'}."""
    pypinyin = _pypinyin()
    out = {p for grp in pypinyin.pinyin(ch, style=pypinyin.Style.TONE3, heteronym=True, neutral_tone_with_five=True, errors="ignore")
           for p in grp}
    return frozenset(p for p in out if p and p[-1].isdigit())


@cache
def toneless(ch: str) -> frozenset[str]:
    return frozenset(p.rstrip("12345") for p in syllables(ch))


@cache
def initial_final_tone(ch: str) -> frozenset[tuple[str, str, str]]:
    """(initial, final, tone) of every Mandarin reading (pypinyin, strict=False: y/w count as initials)."""
    _pypinyin()
    from pypinyin.contrib.tone_convert import to_finals, to_initials  # lazy: pypinyin loads its dictionaries on import (0.8 s)

    out = set()
    for s in syllables(ch):
        tone = s[-1]
        base = s[:-1]
        out.add((to_initials(base, strict=False), to_finals(base, strict=False), tone))
    return frozenset(out)


_INITIAL_CLASS = {i: n for n, grp in enumerate(("bpmf", ("d", "t", "n", "l"), "gkh", "jqx", ("zh", "ch", "sh", "r"), "zcs", "yw"))
                  for i in grp}


def _coda(final: str) -> str:
    for end in ("ng", "n", "i", "u", "o", "r"):
        if final.endswith(end):
            return end
    return ""


def _initial_closeness(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return 0.5 if a and b and _INITIAL_CLASS.get(a, -1) == _INITIAL_CLASS.get(b, -2) else 0.0


def _final_closeness(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return 0.5 if a and b and _coda(a) == _coda(b) else 0.0


def _any_char_with(option: str, test: Callable[[str], bool]) -> float:
    return 1.0 if any(test(c) for c in chars(option)) else 0.0


# ---------------------------------------------------------------------------------------------- strategies

Strategy = Callable[[Item, Context], list[float]]
_FANQIE = re.compile(r"^(.)(.)切$")


def longest(it: Item, ctx: Context) -> list[float]:
    return [float(len(o)) for o in it.options]


def shortest(it: Item, ctx: Context) -> list[float]:
    return [-float(len(o)) for o in it.options]


@lru_cache(maxsize=1 << 20)  # pure in two options; one item's candidate triples share their pairs
def _similarity(a: str, b: str) -> float:
    if len(a) == 1 and len(b) == 1:  # difflib's ratio of two characters, without building a matcher (glyph tasks)
        return float(a == b)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def most_central(it: Item, ctx: Context) -> list[float]:
    # the key wins when every distractor is the key with one small edit
    return [sum(_similarity(o, p) for j, p in enumerate(it.options) if j != i) for i, o in enumerate(it.options)]


@cache  # pure in one option
def graph_parts(option: str) -> frozenset[str]:
    out: set[str] = set()
    for c in chars(option):
        out |= graph_set(c)
    return frozenset(out)


def most_central_glyph(it: Item, ctx: Context) -> list[float]:
    # the option whose parts are the other options (斯 beside 其 and 斤): other options it contains or lies in
    return _glyph_link_parts(it.options, ctx).sum(axis=1).tolist()


def least_central_glyph(it: Item, ctx: Context) -> list[float]:
    # the odd one out: the option that neither contains nor lies in another (其 beside 斯, 斤 … reversed)
    return [-s for s in most_central_glyph(it, ctx)]


def unrelated_glyph(it: Item, ctx: Context) -> list[float]:
    # the option sharing no graph (itself or a component) with the other options: distractors built from one
    # family of parts leave the key alone
    return _unrelated_glyph_parts(it.options, ctx).sum(axis=1).tolist()


def most_frequent_option(it: Item, ctx: Context) -> list[float]:
    return [float(ctx.option_counts[o]) for o in it.options]


def least_frequent_option(it: Item, ctx: Context) -> list[float]:
    # a key used once beside fillers that recur across items
    return [-float(ctx.option_counts[o]) for o in it.options]


def most_strokes(it: Item, ctx: Context) -> list[float]:
    u = ctx.unihan
    return [float(sum(u.total_strokes(c) or 0 for c in chars(o))) for o in it.options]


@cache
def _xiaoyun_sizes() -> tuple[dict[str, int], dict[str, int]]:
    """How many characters the largest 小韻 spelled by each 反切 holds, and the largest 小韻 of each character."""
    g = guangyun.load()
    by_fanqie: dict[str, int] = {}
    by_char: dict[str, int] = {}
    for x in g.xiaoyun_ids():
        members = g.members(x)
        for m in members:
            by_char[m.char] = max(by_char.get(m.char, 0), len(members))
            if m.fanqie:
                by_fanqie[m.fanqie] = max(by_fanqie.get(m.fanqie, 0), len(members))
    return by_fanqie, by_char


def largest_xiaoyun_size(option: str) -> int:
    """The option's score under :func:`largest_xiaoyun`: the size of the largest 小韻 its 反切 spells, or that
    the character belongs to; 0 for anything else."""
    by_fanqie, by_char = _xiaoyun_sizes()
    m = _FANQIE.match(option)
    return by_fanqie.get(m.group(1) + m.group(2), 0) if m else by_char.get(option, 0) if len(option) == 1 else 0


def largest_xiaoyun(it: Item, ctx: Context) -> list[float]:
    """The 反切 whose 小韻 holds the most characters (a 反切 option), or the character in the largest 小韻:
    the reading a reader meets most often, the cue the blind examinees named on pronunciation (issue 22)."""
    return [float(largest_xiaoyun_size(o)) for o in it.options]


def most_frequent_char(it: Item, ctx: Context) -> list[float]:
    return [float(max((ctx.freq[c] for c in chars(o)), default=0)) for o in it.options]


def rarest_char(it: Item, ctx: Context) -> list[float]:
    return [-float(min((ctx.freq[c] for c in chars(o)), default=0)) for o in it.options]


def question_overlap(it: Item, ctx: Context) -> list[float]:
    qs = set(chars(it.question))
    return [float(len(set(chars(o)) & qs)) for o in it.options]


def unigram_lm(it: Item, ctx: Context) -> list[float]:
    return [sum(ctx.freq.logprob(c) for c in chars(o)) for o in it.options]


def _flat(it: Item) -> list[float]:
    return [0.0] * len(it.options)


def same_syllable_tone(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    h = syllables(it.head)
    return [_any_char_with(o, lambda c: bool(syllables(c) & h)) for o in it.options]


def same_syllable(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    h = toneless(it.head)
    return [_any_char_with(o, lambda c: bool(toneless(c) & h)) for o in it.options]


@cache  # pure in two characters; the glyph builders ask it for the same pairs millions of times
def closeness(a: str, b: str) -> float:
    return max((_initial_closeness(i1, i2) + _final_closeness(f1, f2)
                for i1, f1, _ in initial_final_tone(a) for i2, f2, _ in initial_final_tone(b)), default=0.0)


class ClosenessIndex:
    """:func:`closeness` of one character against a fixed list of graphs at once (numpy over every reading pair):
    what the glyph builders need for each of thousands of characters against thousands of candidate graphs."""

    def __init__(self, graphs: Sequence[str]):
        import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

        rows = [(j, i, f) for j, g in enumerate(graphs) for i, f, _ in initial_final_tone(g)]
        self.size = len(graphs)
        self._owner = np.array([r[0] for r in rows], dtype=np.int64)
        # per side (initial, final): each reading's value id, and its class id (-1: empty or classless, never half-close)
        self._sides = [self._side([r[1] for r in rows], lambda i: _INITIAL_CLASS.get(i)),
                       self._side([r[2] for r in rows], _coda)]  # "" (an open final) is a coda class too

    @staticmethod
    def _side(values: list[str], cls: Callable[[str], object]) -> tuple:
        import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

        value_ids: dict[str, int] = {}
        class_ids: dict[object, int] = {}
        ids = np.array([value_ids.setdefault(v, len(value_ids)) for v in values], dtype=np.int64)
        kinds = np.array([class_ids.setdefault(cls(v), len(class_ids)) if v and cls(v) is not None else -1 for v in values],
                         dtype=np.int64)
        return ids, kinds, value_ids, class_ids, cls

    def scores(self, ch: str):
        """An array: ``closeness(ch, graphs[j])`` for every j (0.0 where either has no Mandarin reading)."""
        import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

        best = np.zeros(self.size)
        for reading in initial_final_tone(ch):
            part = np.zeros(len(self._owner))
            for value, (ids, kinds, value_ids, class_ids, cls) in zip(reading[:2], self._sides):
                same = ids == value_ids.get(value, -1)
                part += same
                kind = class_ids.get(cls(value), -1) if value and cls(value) is not None else -1
                if kind != -1:
                    part += 0.5 * (~same & (kinds == kind))
            np.maximum.at(best, self._owner, part)
        return best


def nearest_initial_final(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    return [max((closeness(it.head, c) for c in chars(o) if c != it.head), default=0.0) for o in it.options]


def fanqie_score(head: str, option: str, with_tone: bool) -> float:
    m = _FANQIE.match(option)
    if not m:
        return 0.0
    up, lo = initial_final_tone(m.group(1)), initial_final_tone(m.group(2))
    best = 0.0
    for hi, hf, ht in initial_final_tone(head):
        s_up = max((1.0 for i, _, _ in up if i == hi), default=0.0)
        s_lo = max(((1.0 if f == hf else 0.0) + (1.0 if with_tone and t == ht else 0.0) for _, f, t in lo), default=0.0)
        best = max(best, s_up + s_lo)
    return best


def fanqie_mandarin(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    return [fanqie_score(it.head, o, True) for o in it.options]


def fanqie_mandarin_toneless(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    return [fanqie_score(it.head, o, False) for o in it.options]


def is_component(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    parts = components(it.head)
    return [1.0 if len(o) == 1 and fold(o) in parts else 0.0 for o in it.options]


def shares_component(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    h = graph_parts(it.head)
    return [float(len(graph_parts(o) & h)) for o in it.options]


@cache
def _radical_population(unihan_dir: str | None) -> tuple[dict[str, int], dict[str, str]]:
    """(Kangxi radical number -> characters Unihan files under it, graph -> the radical number it writes)."""
    u = unihan.load(unihan_dir)
    pop: Counter = Counter()
    for ch in set(u.fields["kRSKangXi"]) | set(u.fields["kRSUnicode"]):
        rs = u.kangxi_radical_strokes(ch) or u.radical_strokes(ch)  # the dictionary's own radical first
        if rs:
            pop[rs[0].number.rstrip("'")] += 1
    writes: dict[str, str] = {}
    for num in u.kangxi_numbers():
        for g in sorted(u.radical_forms(num)):
            writes.setdefault(g, num)
    return dict(pop), writes


def most_populous_radical(it: Item, ctx: Context) -> list[float]:
    """The option that writes the Kangxi radical with the most characters under it (木, 水, 口 … head thousands):
    a reader who knows only which radicals are common picks it; options that write no radical score 0."""
    pop, writes = _radical_population(ctx.unihan_dir)
    return [float(pop.get(writes.get(o, ""), 0)) if len(o) == 1 else 0.0 for o in it.options]


def not_a_radical(it: Item, ctx: Context) -> list[float]:
    """The option that writes no Kangxi radical: a reader who takes radicals (人, 水, 二, 冂 …) for meaning parts
    or bare shapes rules them out and keeps the rest."""
    _, writes = _radical_population(ctx.unihan_dir)
    return [1.0 if len(o) == 1 and o not in writes else 0.0 for o in it.options]


def composes_with_option(it: Item, ctx: Context) -> list[float]:
    """The option that writes a two-part character together with another option (女 + 旦 -> 妲), the one with
    more strokes of the pair a little ahead: a reader rebuilds the hidden character from the options and
    takes its complex part (usually the phonetic). Needs no question."""
    return _composes_with_option_parts(it.options, ctx).sum(axis=1).tolist()


def _more_strokes(ctx: Context, a: str, b: str) -> bool:
    u = ctx.unihan
    return (u.total_strokes(a) or 0) > (u.total_strokes(b) or 0)


def composes_sounding(it: Item, ctx: Context) -> list[float]:
    """The option that writes, with another option, a character whose Mandarin reading is close to a third
    option's (九 with 酒 beside 酉 and 氵: 氵 + 酉 = 酒 sounds like 九), the one with more strokes of the pair a
    little ahead: sound-alike distractors betray the hidden character's sound, the options its shape."""
    pairs = two_part_characters()
    scores = [0.0] * len(it.options)
    for i, a in enumerate(it.options):
        for j, b in enumerate(it.options):
            if i == j or len(a) != 1 or len(b) != 1:
                continue
            ahead = 0.01 if _more_strokes(ctx, a, b) else 0.0
            for c in pairs.get(frozenset((fold(a), fold(b))), ()):
                for k, o in enumerate(it.options):
                    near = closeness(c, o) if k not in (i, j) and len(o) == 1 else 0.0
                    if near > 0:  # only when the rebuilt character sounds like another option
                        scores[i] = max(scores[i], near + ahead)
    return scores


@cache
def _radical_parents(option: str, unihan_dir: str | None) -> frozenset[str]:
    _, writes = _radical_population(unihan_dir)
    f = fold(option)
    return frozenset(r for r in writes if len(r) == 1 and r != option and (f in components(r) or option in components(r)))


def odd_family(it: Item, ctx: Context) -> list[float]:
    """The option outside the others' family: not a part of another option, not containing one, and not a piece
    of a Kangxi radical another option is a piece of too (廿, 十, 口 all lie in 革): distractors cut from one
    radical leave the key alone."""
    if any(len(o) != 1 for o in it.options):
        return _flat(it)
    return _odd_family_parts(it.options, ctx).sum(axis=1).tolist()


def _series(u, ch: str) -> frozenset[str]:
    return frozenset({"g" + s for s in u.gsr_series(ch)} | {"k" + p for p in u.phonetic_groups(ch)})


def same_phonetic_series(it: Item, ctx: Context) -> list[float]:
    if not it.head:
        return _flat(it)
    u = ctx.unihan
    h = _series(u, it.head)
    return [_any_char_with(o, lambda c: c != it.head and bool(_series(u, c) & h)) for o in it.options]


STRATEGIES: dict[str, Strategy] = {
    "longest": longest, "shortest": shortest, "most_central": most_central, "most_central_glyph": most_central_glyph,
    "least_central_glyph": least_central_glyph, "unrelated_glyph": unrelated_glyph,
    "most_frequent_option": most_frequent_option, "least_frequent_option": least_frequent_option,
    "most_strokes": most_strokes, "largest_xiaoyun": largest_xiaoyun, "most_frequent_char": most_frequent_char, "rarest_char": rarest_char,
    "question_overlap": question_overlap, "unigram_lm": unigram_lm,
    "same_syllable_tone": same_syllable_tone, "same_syllable": same_syllable,
    "nearest_initial_final": nearest_initial_final, "fanqie_mandarin": fanqie_mandarin,
    "fanqie_mandarin_toneless": fanqie_mandarin_toneless,
    "is_component": is_component, "shares_component": shares_component, "same_phonetic_series": same_phonetic_series,
    "most_populous_radical": most_populous_radical, "not_a_radical": not_a_radical,
    "composes_with_option": composes_with_option, "composes_sounding": composes_sounding, "odd_family": odd_family,
}
FAMILY: dict[str, str] = {
    **{n: "form" for n in ("longest", "shortest", "most_central", "most_central_glyph", "least_central_glyph",
                           "unrelated_glyph", "most_frequent_option",
                           "least_frequent_option", "most_strokes", "largest_xiaoyun", "most_frequent_char",
                           "rarest_char", "question_overlap", "unigram_lm")},
    **{n: "mandarin" for n in ("same_syllable_tone", "same_syllable", "nearest_initial_final", "fanqie_mandarin",
                               "fanqie_mandarin_toneless")},
    **{n: "glyph" for n in ("is_component", "shares_component", "same_phonetic_series", "most_populous_radical",
                            "not_a_radical", "composes_with_option", "composes_sounding", "odd_family")},
}
# Strategies that read the stem (the question text or its head character); every other strategy reads the four
# options alone (with corpus frequencies, Unihan, the 廣韻 and the task's option counts): the options-only predictor
# of quality.predictors uses only those (issue 34).
READS_STEM: frozenset[str] = frozenset({
    "question_overlap", "same_syllable_tone", "same_syllable", "nearest_initial_final", "fanqie_mandarin",
    "fanqie_mandarin_toneless", "is_component", "shares_component", "same_phonetic_series"})


def _pairwise(n: int, f: Callable[[int, int], float]):
    """An n x n array of ``f(i, j)`` off the diagonal (0 on it): what option j adds to option i's score in a pair
    strategy. The strategy is its row sums; :class:`PoolScores` sums a combination's rows of a whole pool's array."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                out[i, j] = f(i, j)
    return out


def _glyph_link_parts(options: Sequence[str], ctx: Context):
    folded = [fold(o) for o in options]
    parts = [components(o) if len(o) == 1 else frozenset() for o in options]
    return _pairwise(len(options), lambda i, j: float(folded[j] in parts[i] or folded[i] in parts[j]))


def _unrelated_glyph_parts(options: Sequence[str], ctx: Context):
    sets = [graph_parts(o) for o in options]
    return _pairwise(len(options), lambda i, j: -float(bool(sets[i] & sets[j])))


def _composes_with_option_parts(options: Sequence[str], ctx: Context):
    pairs = two_part_characters()
    a = options
    return _pairwise(len(a), lambda i, j: (1.0 + (0.5 if _more_strokes(ctx, a[i], a[j]) else 0.0))
                     if a[i] != a[j] and len(a[i]) == len(a[j]) == 1 and frozenset((fold(a[i]), fold(a[j]))) in pairs else 0.0)


def _odd_family_parts(options: Sequence[str], ctx: Context):
    par = [_radical_parents(o, ctx.unihan_dir) for o in options]
    folded, parts = [fold(o) for o in options], [components(o) for o in options]
    return _pairwise(len(options), lambda i, j: -float(bool(par[i] & par[j]) or folded[i] in parts[j] or folded[j] in parts[i]))


def _composes_sounding_parts(options: Sequence[str], ctx: Context):
    """:func:`composes_sounding`'s triple parts for a pool of distinct single characters at once: ``[i, j, k]`` is
    option i's score in the item of options i, j and k alone (most pairs compose nothing, so this visits few)."""
    import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

    pairs = two_part_characters()
    n = len(options)
    g = np.zeros((n, n, n))  # [i, j, k]: option i rebuilt with partner j, sounding like option k
    for i, a in enumerate(options):
        for j, b in enumerate(options):
            rebuilt = pairs.get(frozenset((fold(a), fold(b))), ()) if i != j else ()
            ahead = 0.01 if rebuilt and _more_strokes(ctx, a, b) else 0.0
            for c in rebuilt:
                for k, o in enumerate(options):
                    near = closeness(c, o) if k not in (i, j) else 0.0
                    if near > 0:
                        g[i, j, k] = max(g[i, j, k], near + ahead)
    return np.maximum(g, g.transpose(0, 2, 1))  # either other option may be the partner


# How a strategy's score of an option depends on the other options, so that :class:`PoolScores` can score every
# combination drawn from one pool of options with each part computed once: "option" reads the option alone,
# "pair" sums a score over each other option, "triple" keeps the best over each pair of other options.
SHAPE: dict[str, str] = {
    **{n: "option" for n in ("longest", "shortest", "most_frequent_option", "least_frequent_option", "most_strokes",
                             "largest_xiaoyun",
                             "most_frequent_char", "rarest_char", "question_overlap", "unigram_lm",
                             "same_syllable_tone", "same_syllable", "nearest_initial_final", "fanqie_mandarin",
                             "fanqie_mandarin_toneless", "is_component", "shares_component", "same_phonetic_series",
                             "most_populous_radical", "not_a_radical")},
    **{n: "pair" for n in ("most_central", "most_central_glyph", "least_central_glyph", "unrelated_glyph",
                           "composes_with_option", "odd_family")},
    "composes_sounding": "triple",
}
# every pair and triple strategy's parts for a whole pool at once (PoolScores takes pools of distinct single
# characters apart only, where most_central's difflib ratio of two is 0)
POOL_PARTS: dict[str, Callable[[Sequence[str], Context], object]] = {
    "composes_sounding": _composes_sounding_parts, "most_central": lambda options, ctx: _pairwise(len(options), lambda i, j: 0.0),
    "most_central_glyph": _glyph_link_parts, "least_central_glyph": lambda options, ctx: -_glyph_link_parts(options, ctx),
    "unrelated_glyph": _unrelated_glyph_parts, "composes_with_option": _composes_with_option_parts,
    "odd_family": _odd_family_parts,
}
BOUND = 0.30  # every strategy at or below 30% on every task (issue 12), except a task's answer_rule (tasks.py)
# Need the whole task (option counts), so builders balance them from running counts.
TASK_LEVEL = ("most_frequent_option", "least_frequent_option")


def strategy_credit(scores: Sequence[float], gold: int) -> float:
    """1/k when the gold option is among the k best-scored options, else 0 (fair tie-breaking)."""
    best = max(scores)
    winners = [i for i, s in enumerate(scores) if math.isclose(s, best, rel_tol=0, abs_tol=1e-12)]
    return 1.0 / len(winners) if gold in winners else 0.0


def credits(item: Item, gold: int, ctx: Context, names: Sequence[str] | None = None) -> dict[str, float]:
    """The credit each strategy earns on one item."""
    return {n: strategy_credit(STRATEGIES[n](item, ctx), gold) for n in (names or STRATEGIES)}


class PoolScores:
    """Every strategy's scores for the items that share one question and draw their options from one ``pool``
    (a glyph builder's key and candidate distractors, scored over every triple): :meth:`credits` equals
    :func:`credits` on ``Item.make(task, question, options)`` for each combination, with each strategy's parts
    (``SHAPE``) computed once per pool and combined with numpy rather than once per combination. Pair and triple
    parts are only taken apart when the pool's options are distinct single characters (what the glyph tasks
    hold, and where ``odd_family`` is not flat); otherwise those strategies are called on each combination."""

    def __init__(self, task: str, question: str, pool: Sequence[str], ctx: Context, names: Sequence[str]):
        import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

        self.pool = Item.make(task, question, pool)
        self.ctx, self.names = ctx, list(names)
        opts = self.pool.options
        self.index = {o: i for i, o in enumerate(opts)}
        parted = len(self.index) == len(opts) and all(len(o) == 1 for o in opts)
        self.shape = {n: SHAPE.get(n, "item") if parted or SHAPE.get(n) == "option" else "item" for n in self.names}
        # option: a score per pool option; pair [i, j]: what option j adds to option i's score; triple [i, j, k]:
        # option i's score beside options j and k alone (POOL_PARTS)
        self.part = {name: np.array(STRATEGIES[name](self.pool, ctx), dtype=float) if self.shape[name] == "option"
                     else POOL_PARTS[name](opts, ctx) for name in self.names if self.shape[name] != "item"}

    def credits(self, combos: Sequence[Sequence[str]], gold: int) -> dict[str, list[float]]:
        """{strategy name: the credit of option ``gold`` in each combination} (every combination the same size)."""
        import numpy as np  # lazy: numpy only for vectorised scoring; the audit and eval commands import this module

        if not combos:
            return {name: [] for name in self.names}
        idx = np.array([[self.index[o.strip()] for o in c] for c in combos], dtype=np.int64).reshape(len(combos), -1)
        width = idx.shape[1]
        distinct = all(len(set(row)) == width for row in idx.tolist())
        out = {}
        for name in self.names:
            shape, part = self.shape[name], self.part.get(name)
            if shape == "item" or not distinct:
                out[name] = [strategy_credit(STRATEGIES[name](Item.make(self.pool.task, self.pool.question, c),
                                                              self.ctx), gold) for c in combos]
                continue
            if shape == "option":
                s = part[idx]
            elif shape == "pair":
                s = part[idx[:, :, None], idx[:, None, :]].sum(axis=2)  # the diagonal is 0
            else:
                s = np.zeros(idx.shape)
                for p in range(width):
                    others = [q for q in range(width) if q != p]
                    for q, r in combinations(others, 2):
                        s[:, p] = np.maximum(s[:, p], part[idx[:, p], idx[:, q], idx[:, r]])
            win = np.abs(s - s.max(axis=1, keepdims=True)) <= 1e-12  # strategy_credit's ties
            out[name] = np.where(win[:, gold], 1.0 / win.sum(axis=1), 0.0).tolist()
        return out


def guesses(item: Item, ctx: Context, names: Sequence[str] | None = None) -> dict[str, list[int]]:
    """The options each strategy picks (its best-scored options), for explaining a figure."""
    out = {}
    for n in names or STRATEGIES:
        s = STRATEGIES[n](item, ctx)
        out[n] = [i for i, v in enumerate(s) if math.isclose(v, max(s), rel_tol=0, abs_tol=1e-12)]
    return out


def accuracies(rows: Sequence[Mapping[str, str]], ctx: Context, names: Sequence[str] | None = None,
               count_rows: Sequence[Mapping[str, str]] | None = None) -> dict[str, float]:
    """Each strategy's accuracy (ties 1/k) over dataset rows of one task; option recurrence is counted over
    ``count_rows`` (default: the rows; the audit passes test and dev, the items a builder chooses together)."""
    ctx.option_counts = Counter(r[L].strip() for r in (rows if count_rows is None else count_rows) for L in LETTERS)
    totals: Counter = Counter()
    for r in rows:
        item, gold = item_from_row(r)
        totals.update(credits(item, gold, ctx, names))
    n = len(rows)
    return {name: (totals[name] / n if n else 0.0) for name in (names or STRATEGIES)}


# ------------------------------------------------------------------- data version 1 form strategies (old signature)


def _v1(fn: Strategy) -> Callable[[str, Sequence[str], Frequencies], list[float]]:
    def old(question, options, freq):
        return fn(Item("", question, tuple(o.strip() for o in options), None), Context(freq))

    old.__name__ = fn.__name__
    return old


BALANCED_V1 = {n: _v1(STRATEGIES[n]) for n in ("longest", "most_frequent_char", "question_overlap", "unigram_lm",
                                                "shortest", "rarest_char")}
BALANCED_V1_WITH_CENTRAL = {**BALANCED_V1, "most_central": _v1(most_central)}


def credits_v1(question: str, options: Sequence[str], gold: int, freq: Frequencies, strategies=None) -> dict[str, float]:
    """Credits of old-signature strategies (``fn(question, options, freq)``), data version 1's balancing."""
    strategies = strategies or BALANCED_V1
    return {name: strategy_credit(fn(question, options, freq), gold) for name, fn in strategies.items()}


__all__ = [
    "BALANCED_V1",
    "BALANCED_V1_WITH_CENTRAL",
    "BOUND",
    "FAMILY",
    "STRATEGIES",
    "TASK_LEVEL",
    "Context",
    "Frequencies",
    "Item",
    "PoolScores",
    "READS_STEM",
    "SHAPE",
    "accuracies",
    "chars",
    "credits",
    "credits_v1",
    "guesses",
    "head_char",
    "initial_final_tone",
    "item_from_row",
    "strategy_credit",
    "syllables",
    "toneless",
]
