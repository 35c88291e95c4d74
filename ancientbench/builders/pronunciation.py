"""Builder of the ``pronunciation`` task: the 《廣韻》 反切 of a character.

Owns turning the 廣韻 (:mod:`ancientbench.builders.guangyun`, PyPI ``tshet-uinh``) into 4-option items such
as 《廣韻》中「東」字的反切是？ (德紅切 / 徒紅切 / 薄紅切 / 盧紅切).

* **Targets.** Known characters (:mod:`ancientbench.builders.charpool`) with exactly one 廣韻 reading, so the
  question has one answer; most familiar first, capped at ``MAX_ITEMS``.
* **Answer check.** The answer is the 反切 of the character's 小韻 record, and ``tshet_uinh.執行反切``
  must derive the record's 音韻地位 from that 反切 (else ``answer_spelling_not_derivable``).
* **Distractors.** Real 廣韻 反切 of other 小韻 that share the answer's lower speller (same rhyme,
  another initial: tests the initial) or its upper speller (same initial, another rhyme: tests the rhyme).
  All three distractors of an item share the same speller with the answer, so the answer is never the
  option that shares most with the others (``subset`` says which: ``same_lower_speller`` /
  ``same_upper_speller``).
* **Checker** (:func:`distractor_problem`): a distractor 反切 is rejected if its 小韻 has the 音韻地位 of any
  reading of the target (廣韻 has duplicate 小韻 that spell one syllable twice), if the target is in its
  小韻, if ``執行反切`` over any readings of its spellers can give a 音韻地位 of the target, if it is spelled
  like the answer, or if it contains the target character or a simplified-only graph (与, 兹: the item
  would mix scripts); a 小韻 without a valid 地位 is inconclusive. Targets whose own 反切 has such a graph
  are dropped (``simplified_graph_in_fanqie``).
* Distractors that read like the target in Mandarin come first (:func:`modern_match`), and among valid
  triples the one that keeps surface strategies at chance is chosen
  (:func:`ancientbench.builders.debias.pick_balanced`): the audit's plus "read the 反切 in Mandarin"
  (:func:`extra_strategies`), so modern pronunciation alone does not give the answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import lru_cache
from itertools import combinations

from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test, task_rng
from .guangyun import Reading

TASK = "pronunciation"
TEMPLATE = "《廣韻》中「{char}」字的反切是？"
DEV_KEYS = ("東", "江", "魚", "歌", "陽")
MAX_ITEMS = 4005
POOL_SIZE = 6
MAX_ALTERNATIVES = 20


def option(fanqie: str) -> str:
    return f"{fanqie}切"


@lru_cache(maxsize=None)
def _initials(ch: str) -> frozenset[str]:
    from pypinyin import Style, pinyin

    return frozenset(p for grp in pinyin(ch, style=Style.INITIALS, heteronym=True, strict=False) for p in grp)


@lru_cache(maxsize=None)
def _finals(ch: str) -> frozenset[str]:
    from pypinyin import Style, pinyin

    return frozenset(p for grp in pinyin(ch, style=Style.FINALS, heteronym=True, strict=False) for p in grp)


def modern_match(target: str, fanqie: str) -> int:
    """How well a 反切 spells the target's *Mandarin* reading (pypinyin): +1 when the upper speller's initial
    is one of the target's, +1 when the lower speller's final is one of the target's."""
    return int(bool(_initials(fanqie[0]) & _initials(target))) + int(bool(_finals(fanqie[1]) & _finals(target)))


def extra_strategies() -> dict:
    """Surface strategy of this task kept at chance with the audit's: read the 反切 in Mandarin and pick the
    option that spells the target's modern initial and final."""

    def modern_fanqie(question, options):
        target = question[question.index("「") + 1]
        return [float(modern_match(target, o[:2])) for o in options]

    return {"modern_fanqie": modern_fanqie}


class _Catalog:
    """The 小韻 of the 廣韻 by upper and lower speller."""

    def __init__(self, src: Sources):
        g = src.g
        self.heads: dict[str, Reading] = {}
        for r in g.entries:
            self.heads.setdefault(r.xiaoyun, r)
        self.by_upper: dict[str, list[str]] = defaultdict(list)
        self.by_lower: dict[str, list[str]] = defaultdict(list)
        for xy, r in self.heads.items():
            if r.fanqie and len(r.fanqie) == 2:
                self.by_upper[r.fanqie[0]].append(xy)
                self.by_lower[r.fanqie[1]].append(xy)


def distractor_problem(src: Sources, char: str, xiaoyun: str) -> str | None:
    """Why the 反切 of 小韻 ``xiaoyun`` cannot be a wrong option for ``char`` (None: provably not its 反切)."""
    g = src.g
    members = g.members(xiaoyun)
    if not members:
        return "unknown_xiaoyun"
    head = members[0]
    if not head.fanqie or len(head.fanqie) != 2:
        return "no_fanqie"
    if head.status is None:
        return "status_unknown"
    if any(m.char == char for m in members):
        return "target_in_xiaoyun"
    if head.status in g.statuses_of(char):
        return "same_status_as_a_reading"
    if head.fanqie in g.fanqie_of(char):
        return "same_spelling_as_a_reading"
    if char in head.fanqie:
        return "contains_the_character"
    if not src.traditional_text(head.fanqie):
        return "simplified_graph_in_fanqie"
    spelled = g.fanqie_statuses(head.fanqie[0], head.fanqie[1])
    if spelled and spelled & g.statuses_of(char):
        return "spelling_can_give_a_reading"
    return None


def build_from(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
               max_items: int = MAX_ITEMS) -> BuildResult:
    """Build the task over ``targets`` (default: every known character); see the module docstring."""
    from .debias import pick_balanced

    g = src.g
    cat = _Catalog(src)
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
            dropped["several_readings_or_no_fanqie"] += 1
            continue
        r = g.readings(ch)[0]
        if len(r.fanqie) != 2:
            dropped["malformed_fanqie"] += 1
            continue
        if not src.traditional_text(r.fanqie):
            dropped["simplified_graph_in_fanqie"] += 1
            continue
        spelled = g.fanqie_statuses(r.fanqie[0], r.fanqie[1])
        if not spelled or r.status not in spelled:
            dropped["answer_spelling_not_derivable"] += 1
            continue
        modes = []
        for mode, ids in (("same_lower_speller", cat.by_lower[r.fanqie[1]]), ("same_upper_speller", cat.by_upper[r.fanqie[0]])):
            ok: list[str] = []
            seen = {r.fanqie}
            cands = [x for x in ids if x != r.xiaoyun]
            rng.shuffle(cands)
            # hardest first: spellings that read like the target in Mandarin, then the same tone
            cands.sort(key=lambda x: (-modern_match(ch, cat.heads[x].fanqie or "??"),
                                      (cat.heads[x].status or "")[-1:] != r.status[-1:]))
            for x in cands:
                fq = cat.heads[x].fanqie
                if fq in seen or distractor_problem(src, ch, x):
                    continue
                seen.add(fq)
                ok.append(fq)
                if len(ok) >= POOL_SIZE:
                    break
            if len(ok) >= 3:
                modes.append((mode, ok))
        if not modes:
            dropped["fewer_than_three_checked_distractors"] += 1
            continue
        # alternate the mode between items (seeded) when both are possible
        if len(modes) == 2 and rng.random() < 0.5:
            modes.reverse()
        mode, pool = modes[0]
        triples = [tuple(option(f) for f in t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        staged.append((ch, r, mode, triples))
    questions = [TEMPLATE.format(char=ch) for ch, *_ in staged]
    picks = pick_balanced([(q, option(r.fanqie), t) for q, (ch, r, m, t) in zip(questions, staged)], src.audit_freq,
                          extra=extra_strategies(), prefer_first=0.02)
    cands = []
    for q, (ch, r, mode, triples), k in zip(questions, staged, picks):
        shared = "下字" if mode == "same_lower_speller" else "上字"
        cands.append(
            Candidate(
                key=ch,
                question=q,
                answer=option(r.fanqie),
                distractors=triples[k],
                source=g.source_label,
                citation=r.citation,
                subset=mode,
                explanation=(
                    f"《廣韻》「{ch}」只有一讀，屬小韻{r.xiaoyun}「{r.head}」，{r.fanqie}切，音韻地位{r.status}。"
                    f"其餘選項是與之同反切{shared}的其他小韻的反切，其音韻地位與「{ch}」不同。"
                ),
            )
        )
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered)


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
