"""Builder of the ``pronunciation`` task: the 《廣韻》 反切 of a character.

Owns turning the 廣韻 (:mod:`ancientbench.sources.guangyun`, PyPI ``tshet-uinh``) into 4-option items such
as 《廣韻》中「天」字的反切是？ (他前切 / 他甸切 / 他玷切 / 他典切: every option reads as well as the key in Mandarin).

* **Targets.** Characters with exactly one 廣韻 reading, so the question has one answer; most familiar
  first (known characters of :mod:`ancientbench.builders.charpool` lead), capped at ``MAX_ITEMS``; a target
  whose 反切 is already an option of ``MAX_OPTION_USES`` items is skipped.
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
* **Mandarin gives nothing away.** A distractor is kept only if its 反切, read through Mandarin (upper speller
  -> initial, lower speller -> final and tone; pypinyin, every heteronym), spells the target's Mandarin
  syllable at least as well as the answer does, with and without the tone (:func:`reads_as_well`). When no
  three such distractors share a speller with the answer, any 小韻 whose 反切 passes both checks serves
  (``subset`` ``mandarin_match``).
* Among valid triples the one that keeps every strategy of :mod:`ancientbench.quality.strategies` at chance
  is chosen (:class:`ancientbench.builders.debias.Balancer` with ``task=``); no 反切 is a distractor in more
  than ``MAX_OPTION_USES`` items (as key or distractor).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

from ..quality.strategies import fanqie_score, initial_final_tone
from ..sources.guangyun import Reading, quoted_gloss
from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test, task_rng
from .debias import TRIM_BOUND, Balancer, trim_to_bound

TASK = "pronunciation"
TEMPLATE = "《廣韻》中「{char}」字的反切是？"
DEV_KEYS = ("而", "子", "天", "我", "之")
MAX_ITEMS = 3505
POOL_SIZE = 20  # checked 反切 per item: 7 left both predictors 2-3 points higher (28 gains nothing more, twice the build time)
MAX_ALTERNATIVES = 1140  # every triple of a full pool (20 choose 3)
MAX_OPTION_USES = 4  # no 反切 is an option (key or distractor) of more than four items: keys recur as little as distractors
WEIGHTS = {"most_frequent_option": 3.0, "least_frequent_option": 3.0,  # recurrence is only known at the end
           "largest_xiaoyun": 8.0}  # a key's 小韻 holds a familiar character, so it tends to be large


def option(fanqie: str) -> str:
    return f"{fanqie}切"


def reads_as_well(target: str, distractor: str, answer: str) -> bool:
    """The distractor 反切 (two characters) spells the target's Mandarin reading at least as well as the
    answer's does, with and without tone (the strategies ``fanqie_mandarin`` and ``_toneless``)."""
    return all(fanqie_score(target, distractor + "切", t) >= fanqie_score(target, answer + "切", t) for t in (True, False))


class _Catalog:
    """The 小韻 of the 廣韻 by upper and lower speller."""

    def __init__(self, src: Sources):
        g = src.g
        self.heads: dict[str, Reading] = {}
        for r in g.entries:
            self.heads.setdefault(r.xiaoyun, r)
        self.by_upper: dict[str, list[str]] = defaultdict(list)
        self.by_lower: dict[str, list[str]] = defaultdict(list)
        # by the Mandarin initial of the upper speller and final of the lower one (every heteronym)
        self.by_mandarin: dict[tuple[str, str], list[str]] = defaultdict(list)
        for xy, r in self.heads.items():
            if r.fanqie and len(r.fanqie) == 2:
                self.by_upper[r.fanqie[0]].append(xy)
                self.by_lower[r.fanqie[1]].append(xy)
                keys = {(i, f) for i, _, _ in initial_final_tone(r.fanqie[0]) for _, f, _ in initial_final_tone(r.fanqie[1])}
                for k in sorted(keys):
                    self.by_mandarin[k].append(xy)


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


def _key_problem(src: Sources, bal: Balancer, ch: str) -> str | None:
    """Why ``ch`` cannot be asked (one plain, derivable, traditional 反切 not yet used up as an option), or None."""
    g = src.g
    if not g.is_monophonic(ch):
        return "several_readings_or_no_fanqie"
    r = g.readings(ch)[0]
    if len(r.fanqie) != 2:
        return "malformed_fanqie"
    if not src.traditional_text(r.fanqie):
        return "simplified_graph_in_fanqie"
    if bal.uses[option(r.fanqie)] >= MAX_OPTION_USES:
        return "answer_already_an_option_of_MAX_OPTION_USES_items"
    spelled = g.fanqie_statuses(r.fanqie[0], r.fanqie[1])
    if not spelled or r.status not in spelled:
        return "answer_spelling_not_derivable"
    return None


def _spellings(src: Sources, cat: _Catalog, bal: Balancer, ch: str, r: Reading, ids: list[str], rng) -> list[str]:
    """Up to ``POOL_SIZE`` checked 反切 of the 小韻 ``ids`` that read ``ch`` in Mandarin as well as its own."""
    g = src.g
    ok: list[str] = []
    seen = {r.fanqie}
    cands_x = [x for x in ids if x != r.xiaoyun]
    rng.shuffle(cands_x)
    # 小韻 at least as large as the key's first: "the 反切 of the largest 小韻" must not find the key
    cands_x.sort(key=lambda x: len(g.members(x)) < len(g.members(r.xiaoyun)))
    for x in cands_x:
        fq = cat.heads[x].fanqie
        if fq in seen or bal.uses[option(fq)] >= MAX_OPTION_USES or not reads_as_well(ch, fq, r.fanqie):
            continue
        if distractor_problem(src, ch, x):
            continue
        seen.add(fq)
        ok.append(fq)
        if len(ok) >= POOL_SIZE:
            break
    return ok


def _designs(src: Sources, cat: _Catalog, bal: Balancer, ch: str, r: Reading, rng) -> list[tuple[str, list[str]]]:
    """``(design, pool)`` of the designs with three checked distractors: the shared-speller ones first, the
    Mandarin-matched one only when neither works."""
    mandarin_ids = sorted({x for i, f, _ in initial_final_tone(ch) for x in cat.by_mandarin[(i, f)]}, key=lambda x: (len(x), x))
    modes = []
    for mode, ids in (("same_lower_speller", cat.by_lower[r.fanqie[1]]), ("same_upper_speller", cat.by_upper[r.fanqie[0]]),
                      ("mandarin_match", mandarin_ids)):
        ok = _spellings(src, cat, bal, ch, r, ids, rng)
        if len(ok) >= 3:
            modes.append((mode, ok))
        if len(modes) == 2 or (modes and mode == "same_upper_speller"):
            break
    return modes


SHARED = {"same_lower_speller": "與之同反切下字的", "same_upper_speller": "與之同反切上字的",
          "mandarin_match": "以今音讀之與本字讀音同樣相合的"}  # how the distractors relate to the key, per design


def _candidate(src: Sources, ch: str, r: Reading, mode: str, q: str, triple: tuple[str, ...]) -> Candidate:
    return Candidate(
        key=ch,
        question=q,
        answer=option(r.fanqie),
        distractors=triple,
        source=src.g.source_label,
        citation=r.citation,
        subset=mode,
        explanation=(
            f"《廣韻》「{ch}」只有一讀，屬小韻{r.xiaoyun}「{r.head}」，{r.fanqie}切，音韻地位{r.status}，"
            f"釋義{quoted_gloss(r)}。"
            f"其餘選項是{SHARED[mode]}其他小韻的反切，其音韻地位與「{ch}」不同。"
        ),
    )


def build_from(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
               max_items: int = MAX_ITEMS, trim: float | None = TRIM_BOUND) -> BuildResult:
    """Build the task over ``targets`` (default: every known character); see the module docstring."""
    cat = _Catalog(src)
    rng = task_rng(TASK + ":distractors", seed)
    bal = Balancer(src.audit_freq, task=TASK, prefer_first=0.01, weights=WEIGHTS)
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
        why = _key_problem(src, bal, ch)
        if why:
            dropped[why] += 1
            continue
        r = src.g.readings(ch)[0]
        modes = _designs(src, cat, bal, ch, r, rng)
        if not modes:
            dropped["fewer_than_three_checked_distractors_reading_as_well"] += 1
            continue
        # alternate the shared-speller mode between items (seeded) when both are possible
        if len(modes) == 2 and rng.random() < 0.5:
            modes.reverse()
        mode, pool = modes[0]
        triples = [tuple(option(f) for f in t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        q = TEMPLATE.format(char=ch)
        k = bal.choose(q, option(r.fanqie), triples)
        cands.append(_candidate(src, ch, r, mode, q, triples[k]))
    # the greedy choice leaves a strategy a little above the bound where pools run short: the fewest items go
    if trim is not None:
        cands, trimmed = trim_to_bound(TASK, cands, src.audit_freq, bound=trim, keep=frozenset(dev_keys))
        dropped["left_out_to_keep_every_shortcut_strategy_within_the_bound"] += trimmed
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered)


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
