"""Builder of the ``homophone`` task: which character was a homophone of the target in the 《廣韻》?

Owns turning the 廣韻 小韻 (:mod:`ancientbench.builders.guangyun`, PyPI ``tshet-uinh``) into 4-option items
such as 下列哪個字與「同」在《廣韻》中同音？ (銅 / 東 / 洞 / 彤): two characters of one 小韻 were homophones.

* **Targets.** Known characters (:mod:`ancientbench.builders.charpool`) with one 廣韻 reading; most familiar
  first, capped at ``MAX_ITEMS``.
* **Answer check.** Another known character in the target's 小韻 (the same 小韻 number, hence the same
  反切 and 音韻地位), not a variant form of the target (Unihan variants, OpenCC folding), the most familiar
  such character preferred.
* **Distractors, most plausible first.** (1) characters of the same phonetic series as the target or
  the answer (Karlgren GSR series, Casey kPhonetic group), which look like homophones; (2) **modern**
  homophones of the target or answer (same Mandarin syllable and tone, ``pypinyin``) that were distinct
  in Middle Chinese, so modern pronunciation does not help; (3) same initial and tone, another rhyme;
  (4) same rhyme and tone, another initial. Within a tier, characters of similar corpus frequency to
  the answer come first.
* **Checker** (:func:`distractor_problem`): the distractor's 小韻 set must be disjoint from the target's
  and none of its readings may have a 音韻地位 of the target's (the second check catches duplicate 小韻 that
  spell one syllable twice); it must not be a variant of the target or the answer; a character with a
  reading of unknown 地位 is inconclusive.
* The pool is ordered hardest first (:func:`hardness`), and among valid triples the one that keeps
  surface strategies at chance is chosen (:func:`ancientbench.builders.debias.pick_balanced`): the audit's,
  plus "pick the Mandarin homophone of the target" and "pick the option of the target's phonetic
  series" (:func:`extra_strategies`), so neither modern pronunciation nor glyph shape gives the answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import lru_cache
from itertools import combinations

from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test, task_rng

TASK = "homophone"
TEMPLATE = "下列哪個字與「{char}」在《廣韻》中同音？"
DEV_KEYS = ("同", "江", "魚", "歌", "陽")
MAX_ITEMS = 4005
POOL_SIZE = 6
PER_TIER = 3
MAX_ALTERNATIVES = 20


def series(src: Sources, ch: str) -> frozenset[str]:
    """Phonetic-series keys of a character (GSR series, kPhonetic groups)."""
    return frozenset({"gsr" + c[:4] for c in src.u.gsr(ch)} | {"k" + g for g in src.u.phonetic_groups(ch)})


def hardness(src: Sources, target: str, d: str) -> int:
    """How much a distractor looks like the answer to a reader without Middle Chinese: a Mandarin homophone
    of the target (+2 same tone, +1 toneless), a member of its phonetic series (+1)."""
    mt = modern_readings(target)
    md = modern_readings(d)
    score = 2 if mt & md else (1 if {p.rstrip("12345") for p in mt} & {p.rstrip("12345") for p in md} else 0)
    return score + (1 if series(src, target) & series(src, d) else 0)


def _qchar(question: str) -> str:
    return question[question.index("「") + 1]


def extra_strategies(src: Sources) -> dict:
    """Surface strategies of this task kept at chance with the audit's: the option that is a Mandarin
    homophone of the target (pypinyin), the option of the target's phonetic series (looks alike)."""

    def modern_homophone(question, options):
        m = modern_readings(_qchar(question))
        return [float(len(modern_readings(o) & m)) for o in options]

    def same_series(question, options):
        s = series(src, _qchar(question))
        return [float(len(series(src, o) & s)) for o in options]

    return {"modern_homophone": modern_homophone, "same_phonetic_series": same_series}


@lru_cache(maxsize=None)
def modern_readings(ch: str) -> frozenset[str]:
    """Mandarin syllables with tone number (``pypinyin`` TONE3, all heteronyms): 東 -> {'dong1'}."""
    from pypinyin import Style, pinyin

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
    from .classics import fold

    if d in related_forms(src, target) or d in related_forms(src, answer) or fold(d) in (fold(target), fold(answer)):
        return "variant_of_target_or_answer"
    if target in src.u.variants(d) or answer in src.u.variants(d):
        return "variant_of_target_or_answer"
    return None


class _Index:
    def __init__(self, src: Sources):
        u, g = src.u, src.g
        self.known = src.by_familiarity(src.known)
        self.by_series: dict[str, list[str]] = defaultdict(list)
        self.by_modern: dict[str, list[str]] = defaultdict(list)
        self.by_initial_tone: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.by_rhyme_tone: dict[tuple[str, str], list[str]] = defaultdict(list)
        from tshet_uinh import 音韻地位

        for ch in self.known:
            for code in u.gsr(ch):
                self.by_series["gsr" + code[:4]].append(ch)
            for grp in sorted(u.phonetic_groups(ch)):
                self.by_series["k" + grp].append(ch)
            for p in sorted(modern_readings(ch)):
                self.by_modern[p].append(ch)
            for st in sorted(g.statuses_of(ch)):
                s = 音韻地位.from描述(st)
                self.by_initial_tone[(s.母, s.聲)].append(ch)
                self.by_rhyme_tone[(s.韻, s.聲)].append(ch)

    def series_keys(self, src: Sources, ch: str) -> list[str]:
        return ["gsr" + c[:4] for c in src.u.gsr(ch)] + ["k" + grp for grp in sorted(src.u.phonetic_groups(ch))]


def build_from(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
               max_items: int = MAX_ITEMS) -> BuildResult:
    """Build the task over ``targets`` (default: every known character); see the module docstring."""
    from tshet_uinh import 音韻地位

    from .debias import pick_balanced
    from .classics import fold

    g = src.g
    idx = _Index(src)
    rng = task_rng(TASK + ":distractors", seed)
    dropped: Counter = Counter()
    chars = src.by_familiarity(src.known if targets is None else targets)
    chars = [c for c in dev_keys if c in chars] + [c for c in chars if c not in dev_keys]
    staged = []
    considered = 0
    for ch in chars:
        if len(staged) >= max_items:
            break
        considered += 1
        if not g.is_monophonic(ch):
            dropped["several_readings"] += 1
            continue
        r = g.readings(ch)[0]
        related = related_forms(src, ch)
        answers = [
            m.char for m in g.members(r.xiaoyun)
            if m.char != ch and m.char in src.known and m.char not in related and ch not in src.u.variants(m.char)
            and fold(m.char) != fold(ch)
        ]
        if not answers:
            dropped["no_known_homophone"] += 1
            continue
        answer = src.by_familiarity(set(answers))[0]
        band = src.freq_band(answer)
        s = 音韻地位.from描述(r.status)
        tiers = [
            [x for k in idx.series_keys(src, ch) + idx.series_keys(src, answer) for x in idx.by_series[k]],
            [x for p in sorted(modern_readings(ch) | modern_readings(answer)) for x in idx.by_modern[p]],
            idx.by_initial_tone[(s.母, s.聲)],
            idx.by_rhyme_tone[(s.韻, s.聲)],
        ]
        pool: list[str] = []
        seen: set[str] = set()
        for tier in tiers:
            cands = sorted({x for x in tier if x not in seen}, key=lambda x: (abs(src.freq_band(x) - band), src.rank_key(x)))
            took = 0  # at most PER_TIER per tier so the pool mixes kinds of plausibility
            for x in cands:
                seen.add(x)
                if distractor_problem(src, ch, answer, x):
                    continue
                pool.append(x)
                took += 1
                if took >= PER_TIER:
                    break
        # hardest first: Mandarin homophones of the target, then look-alikes (same phonetic series)
        pool.sort(key=lambda x: (-hardness(src, ch, x), abs(src.freq_band(x) - band), src.rank_key(x)))
        if len(pool) < 3:
            dropped["fewer_than_three_checked_distractors"] += 1
            continue
        pool = pool[:POOL_SIZE]
        triples = list(combinations(pool, 3))[:MAX_ALTERNATIVES]
        staged.append((ch, answer, r, triples))
    questions = [TEMPLATE.format(char=ch) for ch, *_ in staged]
    picks = pick_balanced([(q, a, t) for q, (ch, a, r, t) in zip(questions, staged)], src.audit_freq,
                          extra=extra_strategies(src), prefer_first=0.02)
    cands = []
    for q, (ch, answer, r, triples), k in zip(questions, staged, picks):
        others = "、".join(f"「{d}」" for d in triples[k])
        cands.append(
            Candidate(
                key=ch,
                question=q,
                answer=answer,
                distractors=triples[k],
                source=g.source_label,
                citation=r.citation,
                explanation=(
                    f"「{ch}」「{answer}」同屬《廣韻》小韻{r.xiaoyun}「{r.head}」（{r.fanqie}切，{r.status}），故同音；"
                    f"{others}的各讀音皆不在此小韻，音韻地位亦不同。"
                ),
            )
        )
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered)


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
