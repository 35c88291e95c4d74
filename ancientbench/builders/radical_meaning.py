"""Builder of the ``radical_meaning`` task: what does a Kangxi radical mean?

Owns three kinds of 4-option item over the 214 康熙 radicals, each a separate ``subset`` (a small
vocabulary, so every radical is asked in up to three different ways; see docs/data-sources-A.md):

* ``guangyun`` — 部首「彳」，《廣韻》釋其字義爲？ The answer is an excerpt of the 廣韻 釋義 of the radical's
  graph, picked by hand for each radical in ``RADICAL_GLOSS`` (the meaning the radical carries, e.g. 彳
  小步也, 隹 鳥之短尾者總名, 宀 深屋). The builder verifies that each excerpt occurs verbatim in a 廣韻
  gloss of that graph (``excerpt_not_in_guangyun`` otherwise) and drops radicals the table leaves out
  (no gloss, only names, or a gloss that contains the graph itself).
* ``in_character`` — 「鴻」字的部首，《廣韻》釋其義爲？ The answer is the ``RADICAL_GLOSS`` excerpt of the
  character's Kangxi radical (kRSKangXi = kRSUnicode, as in the ``radical`` task); the distractors are
  the excerpts of radicals the ``radical`` task's checker proves are not the character's radical, taken
  from its visible components and phonetic siblings first. The model has to find the radical and know
  its meaning. One example character per radical: the most familiar known character filed under it.
* ``component`` — 部首「宀」作偏旁時表示的意義是？ The answer is the team's Chinese gloss of the radical as a
  component (``records/curated/radical_glosses.jsonl``, :mod:`.radical_glosses`: 宀 房屋住所, 攴 輕擊驅使), each
  with its reference (the 說文 部首) and a reviewer; the distractors are the glosses of radicals of the SAME semantic
  field (body parts with body parts, tools with tools), so that no option is the odd one out. Component items on
  which a per-item shortcut or option recurrence still finds the key are left out until each strategy is within
  :data:`ancientbench.builders.debias.TRIM_BOUND` (the 廣韻 items and dev exemplars are never left out).

Version 2.5 dropped the ``kdefinition`` subset (Unihan's English definitions: an English gloss tests English).

**Checker** (:func:`gloss_problem`, :func:`component_problem`): a distractor radical must not be the target
radical, one of its written forms or a radical written like it (:func:`ancientbench.builders.radical.distractor_problem`
at radical level); a Chinese distractor must share no definition segment and no content character
with any 廣韻 gloss of the target graph; an English distractor must share no content word with the
target's whole kDefinition; in both cases the two radicals' English definitions must share no content
word (a second, independent check against near-synonyms). A team-gloss distractor (:func:`component_problem`) must
be of the target's semantic field, share no content character with the target's gloss, not be a near-synonym the
exclusions file pairs with the target (冖/襾), and hold no character that is or is built on the target radical
(:func:`writes_the_radical`; a key that does drops its item). Among valid triples the one that keeps surface
strategies at chance is chosen (the cost of :mod:`ancientbench.builders.debias`).

**Reuse cap** (:data:`REUSE_CAP`): within a subset an option text is the key of at most one item and a
distractor of at most 3 items, so no gloss or definition is a filler a reader learns to avoid (before the
cap, 火藏 was a distractor in 59 items, 北方之行也 and 細絲也 in 41). Items left with fewer than three
distractors under the cap are dropped (``<subset>:reuse_cap``).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from ..quality.strategies import TASK_LEVEL, Context, Item, credits
from ..sources.decomposition import components, fold
from ..sources.guangyun import gloss_segments, meaning_text, strip_editorial
from . import radical as radical_task
from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, split_dev_test, task_rng
from .curated import SOURCE as TEAM_SOURCE
from .debias import TRIM_BOUND, Balancer, ties_the_key, trim_to_bound
from .radical_glosses import GLOSSES_FILE, TeamGloss, content_chars, load_exclusions, load_glosses
from .tradoc_word import FUNCTION_CHARS, english_words

TASK = "radical_meaning"
TEMPLATE_GY = "部首「{graph}」，《廣韻》釋其字義爲？"
TEMPLATE_CHAR = "「{char}」字的部首，《廣韻》釋其義爲？"
TEMPLATE_CO = "部首「{graph}」作偏旁時表示的意義是？"
DEV_KEYS = ("gy-彳", "gy-宀", "ch-功", "co-隹", "co-水")
POOL_SIZE = 16  # checked candidates kept per item, most similar first; the cap draws on them in order
ALT_POOL = 9  # the first ALT_POOL candidates still under the cap form the alternative triples
MAX_ALTERNATIVES = 84  # C(9, 3): every triple of the offered candidates
REUSE_CAP = 3  # items of a subset in which one option text may be a distractor
# the team glosses are drawn from one semantic field of 8-17 radicals: every gloss is a key once and must fill about
# three distractor slots, so the field needs a little slack (the option-recurrence strategies stay measured)
SUBSET_CAP = {"component": 4}
TRIM_ROUNDS = 5
# Shortcut strategies scored option by option (the key's sound or shape against the asked graph's)
PER_OPTION = ("shares_component", "same_syllable", "same_syllable_tone", "nearest_initial_final", "same_phonetic_series")

# Radical number -> an excerpt of the 廣韻 釋義 of the radical's graph (verbatim; verified by the builder).
# Hand-picked to give the sense the radical carries; radicals whose 廣韻 gloss has no such excerpt that
# avoids the graph itself (人 天地人爲三才, 手 手足 …) are left out.
RADICAL_GLOSS: dict[str, str] = {
    "1": "數之始也", "2": "上下相通", "3": "有所絕止而識之也", "4": "右戾", "7": "地之數也",
    "11": "得也內也", "13": "以巾覆從一下垂", "15": "水凍也", "16": "案屬", "17": "張口皃",
    "18": "兵也", "19": "筋也", "20": "包也", "22": "受物之器", "23": "有所藏也", "24": "數名",
    "27": "山石之崖巖", "28": "姦衺也", "31": "回也", "33": "事也", "34": "後至也", "35": "行遲皃",
    "36": "暮也", "40": "深屋", "42": "微也", "43": "曲脛", "44": "主也陳也", "45": "草初生皃",
    "48": "工巧也", "51": "求也犯也", "52": "小也", "53": "因巖爲屋", "54": "長行之皃",
    "55": "竦手也", "56": "橜", "58": "豕之頭", "59": "毛飾", "60": "小步也", "61": "火藏",
    "62": "平頭戟也", "63": "半門", "66": "小擊也", "68": "十升也", "69": "斫木也", "70": "正也道也",
    "72": "太陽精", "73": "辝也", "76": "張口气悟也", "77": "停也足也", "79": "兵器", "80": "止之辝",
    "81": "和也並也", "82": "眉髮之屬", "85": "北方之行也", "86": "燬也", "87": "覆手",
    "88": "家長率教者", "91": "半也判也", "93": "大牲也", "94": "狗有懸蹄者", "95": "黑也",
    "97": "蓏也", "99": "美也", "101": "使也", "102": "土已耕者", "103": "足也", "104": "病也",
    "106": "西方色", "109": "人眼", "111": "陳也誓也", "114": "獸跡", "115": "粟苗", "116": "窟也",
    "117": "住也成也", "118": "冬生草也", "119": "穀實", "120": "細絲也", "121": "瓦器",
    "124": "鳥長毛也", "126": "頰毛也", "127": "手耕曲木也", "128": "主聽也", "129": "所以書也",
    "131": "伏也", "132": "從也用也", "133": "到也", "136": "對臥也", "138": "止也", "141": "虎文也",
    "142": "鱗介摠名", "144": "適也往也", "146": "覆也", "147": "視也", "150": "泉出通川",
    "152": "豬也", "154": "海介蟲也", "155": "南方色", "156": "趨也", "158": "親也躬也",
    "160": "薑味也", "162": "乍行乍止", "165": "辨別也", "168": "久也遠也", "170": "土山",
    "171": "及也", "172": "鳥之短尾者總名", "173": "水从雲下也", "175": "不是也", "176": "顏前也",
    "177": "獸皮也", "178": "柔皮也", "180": "聲也", "181": "頭也", "185": "頭也始也", "186": "芳也",
    "188": "肉之覈也", "189": "上也崇也", "190": "髮長皃", "191": "兩士相對", "192": "香草",
    "193": "鼎屬也", "195": "水蟲也", "196": "長尾禽總名也", "201": "中央色也", "202": "禾屬而黏也",
    "203": "北方色", "204": "鍼縷所紩", "205": "蛙屬", "206": "三足兩耳", "208": "穴蟲之總名也",
    "209": "引气自畀也", "210": "整也", "212": "鱗蟲之長也", "214": "量器",
}

def guangyun_texts(src: Sources, graph: str) -> list[str]:
    """The 廣韻 釋義 of a graph, one per reading, editorial （…） removed."""
    return [strip_editorial(r.gloss) for r in src.g.readings(graph)]


def radical_problem(src: Sources, target: str, other: str) -> str | None:
    """Why radical ``other`` cannot stand as a wrong answer for radical ``target`` (forms, look-alike writing)."""
    u = src.u
    if other == target:
        return "same_radical"
    if other in u.confusable_radicals(target):
        return "written_like_the_radical"
    if u.radical_forms(other) & u.radical_forms(target):
        return "variant_form_of_the_radical"
    if english_words(src, u.radical_char(target)) & english_words(src, u.radical_char(other)):
        return "english_definitions_overlap"
    return None


def gloss_problem(src: Sources, target: str, other: str) -> str | None:
    """Why the RADICAL_GLOSS excerpt of ``other`` cannot be a wrong option for radical ``target``."""
    why = radical_problem(src, target, other)
    if why:
        return why
    graph = src.u.radical_char(target)
    excerpt = RADICAL_GLOSS[other]
    segs: set[str] = set()
    chars: set[str] = set()
    for r in src.g.readings(graph):
        text = meaning_text(r)
        segs.update(gloss_segments(text))
        chars.update(c for c in strip_editorial(r.gloss) if c not in FUNCTION_CHARS)
    chars.update(c for c in RADICAL_GLOSS.get(target, "") if c not in FUNCTION_CHARS)
    if set(gloss_segments(excerpt)) & segs:
        return "shares_a_gloss_segment"
    if any(c in chars for c in excerpt if c not in FUNCTION_CHARS):
        return "shares_a_content_character"
    if graph in excerpt or any(f in excerpt for f in src.u.radical_forms(target)):
        return "contains_the_radical"
    return None


def radical_graphs(src: Sources, number: str) -> frozenset[str]:
    """Every graph that writes radical ``number`` (its Unihan forms: 水 氵 氺), each also folded as the decomposition
    folds it (氵 -> 水, 阜 -> 阝)."""
    forms = set(src.u.radical_forms(number)) | {src.u.radical_char(number)}
    return frozenset(forms | {fold(f) for f in forms})


def writes_the_radical(src: Sources, number: str, text: str) -> str | None:
    """The first character of ``text`` that is radical ``number`` or has it among its components (two levels of
    :func:`ancientbench.sources.decomposition.components`, as the shares_component strategy reads them): a gloss so
    written gives its item away by shape (言 說話議論)."""
    forms = radical_graphs(src, number)
    for c in text:
        if c in forms or fold(c) in forms or components(c) & forms:
            return c
    return None


def component_problem(src: Sources, glosses: dict[str, TeamGloss], target: str, other: str,
                      exclusions: frozenset[frozenset[str]] = frozenset()) -> str | None:
    """Why the team gloss of radical ``other`` cannot be a wrong option for radical ``target``."""
    why = radical_problem(src, target, other)
    if why:
        return why
    mine, theirs = glosses[target], glosses[other]
    if mine.field != theirs.field:
        return "another_semantic_field"
    if frozenset((mine.graph, theirs.graph)) in exclusions:
        return "near_synonym_gloss"
    if writes_the_radical(src, target, theirs.gloss):
        return "writes_the_radical"
    if content_chars(mine.gloss) & content_chars(theirs.gloss):
        return "shares_a_content_character"
    if any(f in theirs.gloss for f in src.u.radical_forms(target) | {mine.graph}):
        return "contains_the_radical"
    return None


def _pair_problem(src: Sources, glosses: dict[str, TeamGloss], one: str, other: str,
                  exclusions: frozenset[frozenset[str]]) -> str | None:
    """Why two distractors cannot stand together: as :func:`component_problem`, except the shape rule, which is about
    the asked radical only (two wrong options may write each other's radical)."""
    why = component_problem(src, glosses, one, other, exclusions)
    return None if why == "writes_the_radical" else why


def _pool(src: Sources, target: str, candidates: list[str], check, shape_of, pair_check=None) -> list[str]:
    """Checked distractor radicals, the most similar in shape (option length) and stroke count first; any two of them
    also pass ``pair_check`` (default ``check``) both ways."""
    pair_check = pair_check or check
    u = src.u
    want = shape_of(target)
    strokes = u.total_strokes(u.radical_char(target)) or 0
    order = sorted(
        candidates,
        key=lambda n: (abs(shape_of(n) - want), abs((u.total_strokes(u.radical_char(n)) or 0) - strokes), int(n)),
    )
    pool: list[str] = []
    for n in order:
        if check(src, target, n) is None and all(pair_check(src, p, n) is None and pair_check(src, n, p) is None for p in pool):
            pool.append(n)
            if len(pool) >= POOL_SIZE:
                break
    return pool


def build_from(src: Sources, seed: int, dev_keys: tuple[str, ...] = DEV_KEYS, radicals: list[str] | None = None,
               glosses: dict[str, TeamGloss] | None = None,
               exclusions: frozenset[frozenset[str]] | None = None) -> BuildResult:
    """Build the three subsets (over ``radicals``, default all 214; ``glosses`` and ``exclusions`` default: the team
    files); see the module docstring."""

    rng = task_rng(TASK + ":distractors", seed)
    dropped: Counter = Counter()
    numbers = list(radicals or src.u.kangxi_numbers())
    # (key, subset, question, answer, triples, citation, explanation)
    staged, all_glossed = _guangyun_items(src, numbers, dropped)
    staged += _in_character_items(src, numbers, all_glossed, rng, dropped)
    team = glosses if glosses is not None else load_glosses()
    if exclusions is None:  # the shipped groups name shipped glosses only: check them against the shipped file
        exclusions = load_exclusions(glosses=team if glosses is None else None)
    staged += _component_items(src, team, exclusions, numbers, dropped)
    return _choose_and_trim(src, staged, dev_keys, seed, numbers, dropped)


def _guangyun_items(src: Sources, numbers: list[str], dropped: Counter) -> tuple[list[tuple], list[str]]:
    """Staged ``guangyun`` items, and the radicals whose RADICAL_GLOSS excerpt the 廣韻 holds verbatim."""
    u, g = src.u, src.g
    staged = []
    gloss_ok: list[str] = []
    for n in numbers:
        graph = u.radical_char(n)
        if n not in RADICAL_GLOSS:
            dropped["guangyun:no_usable_gloss"] += 1
            continue
        texts = guangyun_texts(src, graph)
        if not any(RADICAL_GLOSS[n] in t for t in texts):
            dropped["guangyun:excerpt_not_in_guangyun"] += 1
            continue
        gloss_ok.append(n)
    all_glossed = [n for n in RADICAL_GLOSS if any(RADICAL_GLOSS[n] in t for t in guangyun_texts(src, u.radical_char(n)))]
    for n in gloss_ok:
        graph = u.radical_char(n)
        pool = _pool(src, n, [m for m in all_glossed if m != n], gloss_problem, lambda m: len(RADICAL_GLOSS[m]))
        if len(pool) < 3:
            dropped["guangyun:fewer_than_three_checked_distractors"] += 1
            continue
        r = next(r for r in g.readings(graph) if RADICAL_GLOSS[n] in strip_editorial(r.gloss))
        staged.append((
            f"gy-{graph}", "guangyun", TEMPLATE_GY.format(graph=graph), RADICAL_GLOSS[n],
            [RADICAL_GLOSS[m] for m in pool],
            f"第{n}部「{graph}」; {r.citation} 釋義「{strip_editorial(r.gloss)[:40]}」",
            f"《廣韻》「{graph}」字釋義含「{RADICAL_GLOSS[n]}」；其餘選項是其他部首字的《廣韻》釋義，與「{graph}」的釋義無共同義項或實詞。",
        ))

    return staged, all_glossed


def _in_character_items(src: Sources, numbers: list[str], all_glossed: list[str], rng, dropped: Counter) -> list[tuple]:
    """Staged ``in_character`` items: one example character per glossed radical, distractors the excerpts of radicals
    the ``radical`` task's checker proves are not its radical."""
    u = src.u
    staged = []
    idx = radical_task.Index(src)
    glossed = set(all_glossed)
    by_radical: dict[str, list[str]] = {}
    for ch in src.by_familiarity(src.known):
        ans, _ = radical_task.answer_of(src, ch)
        if ans is not None and ans in glossed:
            by_radical.setdefault(ans, []).append(ch)
    for n in numbers:
        if n not in glossed:
            continue
        done = False
        for ch in by_radical.get(n, [])[:20]:
            if ch in RADICAL_GLOSS[n]:
                continue  # the example character must not echo in its answer (內: 得也內也)
            cands, _ = radical_task.distractor_pool(src, idx, ch, n, rng)
            # extend with further productive radicals so that enough of them have a gloss
            extra = [m for m in radical_task.lookalikes(n) + idx.productive if m not in cands]
            checked = [
                m for m in cands + extra
                if m in glossed and radical_task.distractor_problem(src, ch, m) is None and gloss_problem(src, n, m) is None
                and ch not in RADICAL_GLOSS[m]
            ]
            pool: list[str] = []
            for m in checked:
                if all(gloss_problem(src, p, m) is None for p in pool) and m not in pool:
                    pool.append(m)
                if len(pool) >= 2 * POOL_SIZE:  # narrower candidates (the character's parts first): keep more
                    break
            if len(pool) < 3:
                continue
            graph = u.radical_char(n)
            _, citation = radical_task.answer_of(src, ch)
            staged.append((
                f"ch-{ch}", "in_character", TEMPLATE_CHAR.format(char=ch), RADICAL_GLOSS[n],
                [RADICAL_GLOSS[m] for m in pool],
                f"{citation}; 第{n}部「{graph}」《廣韻》釋義「{RADICAL_GLOSS[n]}」",
                (f"「{ch}」屬第{n}部「{graph}」部（Unihan kRSKangXi 與 kRSUnicode 一致），《廣韻》釋「{graph}」含「{RADICAL_GLOSS[n]}」；"
                 f"其餘選項是「{ch}」所不屬的部首的釋義。"),
            ))
            done = True
            break
        if not done:
            dropped["in_character:no_example_with_three_checked_distractors"] += 1

    return staged


def _choose_and_trim(src: Sources, staged: list[tuple], dev_keys: tuple[str, ...], seed: int, numbers: list[str],
                     dropped: Counter) -> BuildResult:
    """Pick each staged item's triple under the reuse cap, leave out component items a shortcut still finds, split."""
    chosen = pick_capped([(subset, q, a, pool) for _, subset, q, a, pool, _, _ in staged], src.audit_freq, prefer_first=0.02)
    cands = []
    for (key, subset, q, a, _, c, e), triple in zip(staged, chosen):
        if triple is None:
            dropped[f"{subset}:reuse_cap"] += 1
            continue
        cands.append(Candidate(key=key, question=q, answer=a, distractors=triple, source=_source(src, subset), citation=c,
                               explanation=e, subset=subset))
    # the team-gloss items give way where a shortcut still finds their key; the 廣韻 items and dev exemplars stay
    keep = frozenset(dev_keys) | {c.key for c in cands if c.subset != "component"}
    for _ in range(TRIM_ROUNDS):  # leaving items out for recurrence can lift a per-item share again: repeat until both hold
        cands, n = trim_to_bound(TASK, cands, src.audit_freq, bound=TRIM_BOUND, keep=keep)
        dropped["component:left_out_for_a_per_item_shortcut"] += n
        cands, m = _trim_recurrence(cands, src.audit_freq, keep, frozenset(dev_keys))
        dropped["component:left_out_for_option_recurrence"] += m
        if m == 0:
            break
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=+dropped, candidates=len(numbers) * 3)


def _trim_recurrence(cands: list[Candidate], freq, keep: frozenset[str], dev: frozenset[str] = frozenset()
                     ) -> tuple[list[Candidate], int]:
    """Drop candidates (not ``keep``) until every option-recurrence strategy is at or below TRIM_BOUND, counting
    recurrence over what is left of the test split (the ``dev`` exemplars stay and are not counted: the audit reads
    the test split); the one adding most to the worst goes first."""
    dev_items = [c for c in cands if c.key in dev]
    alive = [c for c in cands if c.key not in dev]
    while True:
        ctx = Context(freq)
        ctx.option_counts.update(o.strip() for c in alive for o in (c.answer, *c.distractors))
        credit = [credits(Item.make(TASK, c.question, [c.answer, *c.distractors]), 0, ctx, TASK_LEVEL) for c in alive]
        totals: Counter = Counter()
        for c in credit:
            totals.update(c)
        worst = max(TASK_LEVEL, key=lambda k: totals[k])
        if totals[worst] <= TRIM_BOUND * len(alive) + 1e-9:
            break
        helpful = [i for i, c in enumerate(alive) if c.key not in keep and credit[i][worst] > TRIM_BOUND]
        if not helpful:
            break
        alive.pop(max(helpful, key=lambda i: (credit[i][worst], i)))
    kept = {id(c) for c in alive + dev_items}
    return [c for c in cands if id(c) in kept], len(cands) - len(kept)


def pick_capped(items, freq, *, prefer_first: float = 0.0, cap: int = REUSE_CAP) -> list[tuple[str, str, str] | None]:
    """For each (subset, question, answer, candidates) a distractor triple, or None when the cap leaves too few.

    Greedy, items with the fewest candidates first (the order does not change the result's item order), with the cost of :class:`ancientbench.builders.debias.Balancer` (running credit of
    every strategy of :mod:`ancientbench.quality.strategies` as close to 25% as possible, plus ``prefer_first`` per alternative index), drawing
    only on candidates that are distractors in fewer than ``cap`` items of the subset so far (``SUBSET_CAP`` per subset), least used first.
    """
    bal = Balancer(freq, prefer_first=prefer_first, task=TASK)
    used: Counter = Counter()
    out: list[tuple[str, str, str] | None] = [None] * len(items)
    for j in sorted(range(len(items)), key=lambda j: (len(items[j][3]), j)):
        subset, question, answer, pool = items[j]
        # least-used first (spreads the uses so that later items still find three), then most similar
        free = sorted((o for o in pool if used[subset, o] < SUBSET_CAP.get(subset, cap)), key=lambda o: (used[subset, o], pool.index(o)))
        # plus a few that tie the key on a shortcut (a gloss of 力 holds 力 in 筋: offer one that holds it too)
        ties = ties_the_key(TASK, question, answer, free, bal.ctx, PER_OPTION)
        free = free[:ALT_POOL] + [o for o in ties if o not in free[:ALT_POOL]][:3]
        alternatives = list(combinations(free, 3))[:MAX_ALTERNATIVES]
        if not alternatives:
            continue
        triple = alternatives[bal.choose(question, answer, alternatives)]  # the option counts run on in bal.ctx
        used.update((subset, o) for o in triple)
        out[j] = triple
    return out


def _component_items(src: Sources, glosses: dict[str, TeamGloss], exclusions: frozenset[frozenset[str]], numbers: list[str],
                     dropped: Counter) -> list[tuple]:
    """Staged ``component`` items: each glossed radical whose gloss does not write it, its distractors the glosses of
    checked radicals of its field."""
    staged = []
    for n in numbers:
        if n not in glosses:
            dropped["component:no_team_gloss"] += 1
            continue
        g = glosses[n]
        if src.u.radical_char(n) != g.graph:
            raise ValueError(f"{GLOSSES_FILE}: radical {n} is {src.u.radical_char(n)!r}, the file says {g.graph!r}")
        if writes_the_radical(src, n, g.gloss):
            dropped["component:key_writes_the_radical"] += 1
            continue
        same_field = [m for m in glosses if m != n and glosses[m].field == g.field]
        pool = _pool(src, n, same_field, lambda s, t, o: component_problem(s, glosses, t, o, exclusions),
                     lambda m: len(glosses[m].gloss), pair_check=lambda s, t, o: _pair_problem(s, glosses, t, o, exclusions))
        if len(pool) < 3:
            dropped["component:fewer_than_three_checked_distractors"] += 1
            continue
        staged.append((
            f"co-{g.graph}", "component", TEMPLATE_CO.format(graph=g.graph), g.gloss, [glosses[m].gloss for m in pool],
            f"第{n}部「{g.graph}」; {g.reference}; team gloss (records/curated/{GLOSSES_FILE}, line {g.line})",
            f"部首「{g.graph}」作偏旁表「{g.gloss}」之義（{g.reference}）；其餘選項是同屬「{g.field}」類的其他部首的意義。",
        ))
    return staged


def _source(src: Sources, subset: str) -> str:
    if subset == "component":
        return TEAM_SOURCE
    if subset == "in_character":
        return f"{src.u.source_label}; {src.g.source_label}"
    return src.g.source_label


def build(ctx) -> BuildResult:
    return build_from(load_sources(ctx), ctx.seed)
