"""Builder of the ``tradoc_word`` task: the meaning of a character as the 《廣韻》 glosses it.

Owns turning the 廣韻 釋義 (:mod:`ancientbench.builders.guangyun`, PyPI ``tshet-uinh``) into 4-option items
such as 《廣韻》釋「忠」爲？ (無私也敬也 / 器虛也 / 竈突 / 擇也). This is the character-level variant of the
paper's transmitted-document word task: no open source aligns words in context with their meanings.

* **Answer.** The first usable gloss of the character (:func:`usable_gloss`): the 釋義 reduced to its
  meanings (no editorial （…）, 小韻 trailer or reading notes), cut before the first 又/亦/一曰/或曰, its
  leading quotation formula (說文曰 …) removed, at most two definitions, 2–8 characters; glosses that
  are only about names, surnames, graph forms or sources (``NOT_A_MEANING``), or that contain the
  character itself or one of its variants, are not used.
* **Distractors.** Usable glosses of other known characters (:mod:`ancientbench.builders.charpool`), most
  plausible first: same Kangxi radical (same semantic field) and the same shape as the answer (length,
  ending in 也 or not), then the same shape from any radical; similar headword frequency preferred.
* **Checker** (:func:`distractor_problem`): a distractor is rejected if any of its definition segments
  is among the segments of *any* reading of the target, if it shares a content character with any gloss
  of the target, if its headword is the target, a Unihan variant of it, in the same 小韻 (上同 and
  phonetic-loan entries), or has an English ``kDefinition`` sharing a content word with the target's
  (a second, independent check against near-synonyms), or if it contains the target character.
* Among valid triples the one that keeps surface strategies at chance is chosen
  (:mod:`ancientbench.builders.debias`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from itertools import combinations

from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test, task_rng
from .guangyun import Reading, gloss_segments, meaning_text

TASK = "tradoc_word"
TEMPLATE = "《廣韻》釋「{char}」爲？"
DEV_KEYS = ("忠", "選", "盅", "囪", "看")
MAX_ITEMS = 4005
MIN_LEN, MAX_LEN = 2, 8
POOL_SIZE = 6
MAX_ALTERNATIVES = 20

# A leading quotation formula is dropped from the option (the quoted definition is kept).
_QUOTE_INTRO = re.compile(r"^(?:說文|爾雅|廣雅|釋名|方言|字林|玉篇|字書|字統|蒼頡篇|埤蒼|聲類|通俗文|博雅|小爾雅)(?:曰|云)")
# Where the first meaning ends.
_FIRST_MEANING_END = re.compile(r"又|亦|一曰|或曰|今|俗|本")
# Glosses about names, forms or sources rather than meanings.
NOT_A_MEANING = re.compile(r"姓|名|上同|同上|古文|籀文|篆文|作|見|出|注|字|音|切|說文|爾雅|反|省|同|俗|通用|國|縣|州|郡|氏")
# Characters that carry no content when comparing glosses.
FUNCTION_CHARS = frozenset("也之其者所以而於爲為曰云然皃貌兒也乎焉矣與又亦一二三四則故曰")
_EN_STOP = frozenset(
    "a an the of to in on at by for with from as or and be is are was were it its this that "
    "used also same see u".split()
)
_EN_RADICAL_NOTE = re.compile(r"(?:kangxi |kangzi )?(?:radical|rad\.)(?: (?:number|no\.?))? ?\d*", re.I)


def usable_gloss(src: Sources, char: str) -> tuple[str, Reading] | None:
    """The first usable gloss of ``char`` over its readings in book order, with its reading, or None."""
    banned = {char, *src.u.variants(char)}
    for r in src.g.readings(char):
        text = _FIRST_MEANING_END.split(meaning_text(r), maxsplit=1)[0]
        text = _QUOTE_INTRO.sub("", text)
        if not text or NOT_A_MEANING.search(text) or any(c in banned for c in text):
            continue
        closed = text.split("也")[:-1]  # definitions closed by 也 ('A也B也C' -> ['A', 'B'])
        closed = [d for d in closed if d]
        option = "".join(f"{d}也" for d in closed[:2]) if closed else text
        if not re.fullmatch(r"[\u3400-\u9fff\U00020000-\U0003ffff]+", option) or not src.traditional_text(option):
            continue  # only ideographs, and no simplified-only graph (与, 毁) that would mix scripts
        if MIN_LEN <= len(option) <= MAX_LEN and option != "也":
            return option, r
    return None


def target_profile(src: Sources, char: str) -> tuple[frozenset[str], frozenset[str]]:
    """All definition segments and all content characters of every 廣韻 gloss of ``char``."""
    segs: set[str] = set()
    chars: set[str] = set()
    for r in src.g.readings(char):
        text = meaning_text(r)
        segs.update(gloss_segments(text))
        chars.update(c for c in text if c not in FUNCTION_CHARS)
    return frozenset(segs), frozenset(chars)


def _all_meanings(src: Sources, ch: str) -> str:
    cache = src.__dict__.setdefault("_tradoc_meanings", {})  # per loaded sources
    if ch not in cache:
        cache[ch] = "|".join(meaning_text(r) for r in src.g.readings(ch))
    return cache[ch]


def mutually_glossed(src: Sources, segs, d_segs) -> bool:
    """True when a one-character definition of one side is glossed by one of the other side's in the 廣韻
    (互訓: 戔 傷也 vs 殺也, where the 廣韻 glosses 殺 or 傷 with the other), a check against near-synonyms."""
    ones = [x for x in segs if len(x) == 1]
    d_ones = [y for y in d_segs if len(y) == 1]
    return any(y in _all_meanings(src, x) or x in _all_meanings(src, y) for x in ones for y in d_ones)


def english_words(src: Sources, char: str) -> frozenset[str]:
    d = src.u.definition(char) or ""
    d = re.sub(r"\(.*?\)", " ", d)
    d = _EN_RADICAL_NOTE.sub(" ", d)
    words = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]+", d)}
    return frozenset(w for w in words if len(w) > 2 and w not in _EN_STOP)


def distractor_problem(src: Sources, target: str, d_char: str, d_gloss: str) -> str | None:
    """Why gloss ``d_gloss`` (of ``d_char``) cannot be a wrong option for ``target`` (None: provably not its gloss)."""
    from .classics import fold

    if d_char == target or d_char in src.u.variants(target) or target in src.u.variants(d_char) or fold(d_char) == fold(target):
        return "headword_is_the_target_or_a_variant"
    if target in d_gloss or any(v in d_gloss for v in src.u.variants(target)):
        return "contains_the_target"
    if src.g.xiaoyun_of(d_char) & src.g.xiaoyun_of(target):
        return "headword_in_the_same_xiaoyun"
    segs, chars = target_profile(src, target)
    d_segs = set(gloss_segments(d_gloss))
    if d_segs & segs or any(s and s in t for s in d_segs for t in segs):
        return "shares_a_gloss_segment"
    if any(c in chars for c in d_gloss if c not in FUNCTION_CHARS):
        return "shares_a_content_character"
    if mutually_glossed(src, segs, d_segs):
        return "glosses_gloss_each_other"
    if english_words(src, target) & english_words(src, d_char):
        return "english_definitions_overlap"
    return None


def _shape(gloss: str) -> tuple[int, bool]:
    return len(gloss), gloss.endswith("也")


def build_from(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
               max_items: int = MAX_ITEMS) -> BuildResult:
    """Build the task over ``targets`` (default: every known character); see the module docstring."""
    from .debias import pick_balanced

    u = src.u
    rng = task_rng(TASK + ":distractors", seed)
    dropped: Counter = Counter()
    glosses: dict[str, tuple[str, Reading]] = {}
    for ch in src.by_familiarity(src.known):
        ug = usable_gloss(src, ch)
        if ug:
            glosses[ch] = ug
    by_radical: dict[str, list[str]] = defaultdict(list)
    by_shape: dict[tuple[int, bool], list[str]] = defaultdict(list)
    for ch in glosses:
        rs = u.radical_strokes(ch)
        if rs:
            by_radical[rs[0].number].append(ch)
        by_shape[_shape(glosses[ch][0])].append(ch)
    chars = src.by_familiarity(src.known if targets is None else targets)
    chars = [c for c in dev_keys if c in chars] + [c for c in chars if c not in dev_keys]
    staged = []
    considered = 0
    for ch in chars:
        if len(staged) >= max_items:
            break
        considered += 1
        ug = glosses.get(ch) or usable_gloss(src, ch)
        if not ug:
            dropped["no_usable_gloss"] += 1
            continue
        answer, reading = ug
        shape = _shape(answer)
        band = src.freq_band(ch)
        rs = u.radical_strokes(ch)
        same_radical = [x for x in (by_radical[rs[0].number] if rs else []) if _shape(glosses[x][0]) == shape]
        same_radical.sort(key=lambda x: (abs(src.freq_band(x) - band), src.rank_key(x)))
        any_radical = list(by_shape[shape])
        rng.shuffle(any_radical)
        any_radical.sort(key=lambda x: abs(src.freq_band(x) - band))
        pool: list[str] = []
        used_glosses = {answer}
        for tier, limit in ((same_radical, 3), (any_radical, POOL_SIZE)):
            took = 0
            for x in tier:
                if len(pool) >= POOL_SIZE or took >= limit:
                    break
                g_x = glosses[x][0]
                if g_x in used_glosses or distractor_problem(src, ch, x, g_x):
                    continue
                # distractor glosses must also be distinct in content from one another
                if any(set(g_x) - FUNCTION_CHARS & set(glosses[p][0]) for p in pool):
                    continue
                used_glosses.add(g_x)
                pool.append(x)
                took += 1
        if len(pool) < 3:
            dropped["fewer_than_three_checked_distractors"] += 1
            continue
        triples = [tuple(glosses[x][0] for x in t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        sources = [tuple(t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        staged.append((ch, answer, reading, triples, sources))
    questions = [TEMPLATE.format(char=ch) for ch, *_ in staged]
    picks = pick_balanced([(q, a, t) for q, (ch, a, r, t, s) in zip(questions, staged)], src.audit_freq, prefer_first=0.02)
    cands = []
    for q, (ch, answer, r, triples, sources), k in zip(questions, staged, picks):
        whose = "、".join(f"「{g}」（{x}）" for g, x in zip(triples[k], sources[k]))
        cands.append(
            Candidate(
                key=ch,
                question=q,
                answer=answer,
                distractors=triples[k],
                source=src.g.source_label,
                citation=f"{r.citation} 釋義「{r.gloss[:40]}{'…' if len(r.gloss) > 40 else ''}」",
                explanation=(
                    f"《廣韻》小韻{r.xiaoyun}「{ch}」下釋義作「{answer}」。其餘選項是他字的釋義：{whose}，"
                    f"與「{ch}」各讀音的釋義無共同義項或實詞。"
                ),
            )
        )
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered)


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
