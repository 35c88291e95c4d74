"""說文解字 (shuowenjiezi/shuowen data, user-supplied): the paper-faithful variant configs (the data: :mod:`ancientbench.sources.shuowen`; the agreement figures: :mod:`ancientbench.quality.agreement`).

Owns two things, both reading a folder of the ``shuowenjiezi/shuowen`` JSON entries (``data/<id>.json`` with
``wordhead``, ``explanation``, ``radical`` (540 部), ``pronunciation`` (大徐 fanqie), ``components``). The data
is not a registry package, so nothing built from it is committed; tests read ``../shared/sources/shuowen``.

* :func:`agreement` (``ancientbench audit --shuowen DIR``): how the committed answers agree with 說文 —
  phonetic_radical answers vs the ``从X Y聲`` analysis (plain 聲 only; 亦聲/省聲 counted apart), Kangxi
  radicals (radical task) vs the 說文 部, and 廣韻 fanqie (pronunciation task) vs 大徐 fanqie, both as
  identical spelling and as "the 大徐 fanqie can spell the 廣韻 音韻地位" (tshet-uinh 執行反切).
* :func:`build_variants` (``ancientbench build --shuowen DIR``): configs ``pronunciation_shuowen`` (大徐
  fanqie), ``radical_shuowen`` (540 部), ``phonetic_radical_shuowen`` (``从X Y聲``) and
  ``radical_meaning_shuowen`` (說文 gloss of the 部首). Rows keep the base task in ``task``; the folder name
  is the config. Every distractor passes a checker (see each builder) and drops are counted by reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ..quality.strategies import BALANCED_V1_WITH_CENTRAL as AUDIT_STRATEGIES
from ..quality.strategies import Frequencies
from ..sources import SourceMissing, guangyun, unihan
from ..sources.classics import load_corpus
from ..sources.shuowen import GLOSS_FUNCTION_CHARS, SOURCE_LABEL, Entry, Shuowen, analyse, load, same_graph
from .common import BuildResult, Candidate, split_dev_test, task_rng
from .debias import pick_balanced

# ---------------------------------------------------------------------------------------------------
# variant configs


def _known_chars(ctx) -> frozenset[str]:
    uh = unihan.load()
    chars = set(uh.core_chars())
    try:
        chars |= load_corpus(ctx.sources_dir).attested_chars()
    except SourceMissing:
        pass
    return frozenset(c for c in chars if not uh.is_simplified_only(c))


def _frequencies(ctx):
    try:
        corpus = load_corpus(ctx.sources_dir)
    except SourceMissing:
        return Frequencies({}, "none")
    return Frequencies(corpus.balancing_frequencies(), "classics")


def _finish(task: str, config: str, items, dev_prefs, ctx, dropped: Counter, freq) -> BuildResult:
    """items: (key, question, answer, alternatives, citation, explanation) -> BuildResult with dev/test."""
    # balance option similarity too: 大徐 fanqie distractors share a speller with the answer
    picks = pick_balanced([(q, a, alts) for _, q, a, alts, _, _ in items], freq, strategies=AUDIT_STRATEGIES)
    cands = [
        Candidate(key=k, question=q, answer=a, distractors=alts[p], source=SOURCE_LABEL, citation=c, explanation=x)
        for (k, q, a, alts, c, x), p in zip(items, picks)
    ]
    keys = {c.key for c in cands}
    dev_keys = tuple(k for k in dev_prefs if k in keys)[:5]
    dev, test = split_dev_test(config, cands, dev_keys, ctx.seed)
    for row in dev + test:
        row["task"] = task  # variants keep their base task; the id keeps the config name
    return BuildResult(task, test=test, dev=dev, dropped=dropped, candidates=len(cands) + sum(dropped.values()), config=config)


def _alternatives(pool: list[str], key: str, ctx, fixed: tuple[str, ...] = (), n: int = 8) -> list[tuple[str, str, str]]:
    rng = task_rng(f"shuowen:{key}", ctx.seed)
    if len(pool) > 10:  # a seeded sample of ten keeps the combinations few
        keep = set(rng.sample(range(len(pool)), 10))
        pool = [d for i, d in enumerate(pool) if i in keep]
    need = 3 - len(fixed)
    combos: list[tuple[str, ...]] = []
    if need == 1:
        combos = [(a,) for a in pool]
    elif need == 2:
        combos = [(a, b) for i, a in enumerate(pool) for b in pool[i + 1 :]]
    else:
        combos = [(a, b, c) for i, a in enumerate(pool) for j, b in enumerate(pool[i + 1 :], i + 1) for c in pool[j + 1 :]]
    rng.shuffle(combos)
    return [tuple(fixed) + c for c in combos[:n]]


def build_pronunciation(ctx, sw: Shuowen) -> BuildResult:
    """大徐 fanqie. Distractors: other 大徐 fanqie sharing the upper or the lower speller whose spelled
    音韻地位 (tshet-uinh) is disjoint from every 廣韻 reading of the target and from the answer's."""
    gy = guangyun.load()
    known = _known_chars(ctx)
    dropped: Counter = Counter()
    all_fq = sorted({e.fanqie for e in sw.entries if e.fanqie})
    by_upper, by_lower = defaultdict(list), defaultdict(list)
    for f in all_fq:
        by_upper[f[0]].append(f)
        by_lower[f[1]].append(f)
    items = []
    for ch in sorted(sw.by_head, key=lambda c: sw.by_head[c][0].id):
        entries = sw.get(ch)
        fqs = {e.fanqie for e in entries}
        if len(fqs) != 1 or None in fqs:
            dropped["no single 大徐 fanqie"] += 1
            continue
        if ch not in known:
            dropped["target not a core or classics character"] += 1
            continue
        answer = fqs.pop()
        answer_status = gy.fanqie_statuses(answer[0], answer[1])
        target_status = gy.statuses_of(ch)
        if not answer_status or not target_status:
            dropped["fanqie not checkable against 廣韻 (speller or target not in tshet-uinh)"] += 1
            continue
        forbidden = answer_status | target_status
        pool = []
        for f in sorted(set(by_upper[answer[0]] + by_lower[answer[1]])):
            if f == answer or f in gy.fanqie_of(ch):
                continue
            st = gy.fanqie_statuses(f[0], f[1])
            if not st or st & forbidden:
                continue
            pool.append(f + "切")
        if len(pool) < 3:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        q = f"大徐本《說文解字》中「{ch}」字的反切是？"
        items.append((ch, q, answer + "切", _alternatives(pool, ch, ctx), f"說文解字 id {entries[0].id}「{ch}」{entries[0].pronunciation}",
                      f"大徐本《說文》「{ch}」{answer}切；其餘反切所切的音韻地位（據 tshet-uinh）與「{ch}」的各讀音不同。"))
    return _finish("pronunciation", "pronunciation_shuowen", items, ("東", "江", "河", "請", "聞"), ctx, dropped, _frequencies(ctx))


def build_radical(ctx, sw: Shuowen) -> BuildResult:
    """540 部. Distractors: other 部首 — components of the character first, then its Kangxi radical, then
    部首 of characters sharing a component; a distractor may not be the character's 部 in any 說文 entry
    nor a variant form of it."""
    uh = unihan.load()
    known = _known_chars(ctx)
    sections = set(sw.sections)
    dropped: Counter = Counter()
    by_component: dict[str, Counter] = defaultdict(Counter)
    for e in sw.entries:
        for c in e.components:
            by_component[c][e.radical] += 1
    items = []
    for ch in sorted(sw.by_head, key=lambda c: sw.by_head[c][0].id):
        entries = sw.get(ch)
        rads = {e.radical for e in entries}
        if len(rads) != 1:
            dropped["entries disagree on the 部"] += 1
            continue
        r = next(iter(rads))
        if r == ch:
            dropped["the character heads its own 部"] += 1
            continue
        if ch not in known:
            dropped["target not a core or classics character"] += 1
            continue
        comps = [c for e in entries for c in e.components]
        kangxi = [uh.radical_char(n) for n in uh.radical_numbers(ch) if n in uh.radical_table]
        similar = [s for c in comps for s, _ in sorted(by_component[c].items(), key=lambda kv: (-kv[1], kv[0]))]
        pool = []
        for d in [*comps, *kangxi, *similar]:
            if d in pool or d not in sections or d == ch or same_graph(d, r, uh) or d in rads or d not in known:
                continue
            pool.append(d)
        if len(pool) < 3:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        pool = pool[:8]
        q = f"「{ch}」字在《說文解字》中屬於哪一部？"
        items.append((ch, q, r, _alternatives(pool, ch, ctx), f"說文解字 id {entries[0].id}「{ch}」{r}部",
                      f"《說文》將「{ch}」列於{r}部；其餘選項亦爲說文部首，但不是「{ch}」所屬之部。"))
    return _finish("radical", "radical_shuowen", items, ("江", "河", "請", "聞", "問"), ctx, dropped, _frequencies(ctx))


def build_phonetic_radical(ctx, sw: Shuowen) -> BuildResult:
    """从X Y聲. Options: Y, X (the semantic component), and phonetics of other characters of the same 部;
    a distractor may not be any graph the entry calls 聲 (plain, 亦, 省), nor share a Karlgren series with
    the character or Y (Unihan kGSR), nor be a graph whose 說文 analysis contains Y."""
    uh = unihan.load()
    known = _known_chars(ctx)
    dropped: Counter = Counter()
    parsed = {}
    for ch, entries in sw.by_head.items():
        analyses = [analyse(e.explanation) for e in entries]
        ps = {a.phonetic for a in analyses}
        if len(ps) == 1 and None not in ps:
            parsed[ch] = (ps.pop(), analyses[0])
    by_section: dict[str, Counter] = defaultdict(Counter)
    for ch, (p, _) in parsed.items():
        by_section[sw.get(ch)[0].radical][p] += 1

    items = []
    for ch in sorted(sw.by_head, key=lambda c: sw.by_head[c][0].id):
        if ch not in parsed:
            dropped["no single plain 从X Y聲 analysis"] += 1
            continue
        p, a = parsed[ch]
        if ch not in known or p not in known:
            dropped["target or phonetic not a core or classics character"] += 1
            continue
        sem = [s for s in a.semantic if s not in (p, ch)]
        if not sem or sem[0] not in known:
            dropped["no semantic component to offer"] += 1
            continue
        called = set(a.plain) | set(a.yisheng) | set(a.shengsheng)
        series = uh.gsr_series(ch) | uh.gsr_series(p)

        def ok(d: str) -> bool:
            return (d in known and d not in called and d != ch and not (uh.gsr_series(d) & series)
                    and not sw.contains(d, p) and not same_graph(d, p, uh))

        if not ok(sem[0]):
            dropped["semantic component fails the checker"] += 1
            continue
        section = sw.get(ch)[0].radical
        similar = [q for q, _ in sorted(by_section[section].items(), key=lambda kv: (-kv[1], kv[0]))]
        pool = []
        for d in [*sem[1:], *similar]:
            if d not in pool and d != sem[0] and ok(d):
                pool.append(d)
            if len(pool) >= 8:
                break
        if len(pool) < 2:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        e = sw.get(ch)[0]
        q = f"據《說文解字》，形聲字「{ch}」的聲符為？"
        if any(d in q for d in (p, sem[0])):
            dropped["option appears in the question"] += 1
            continue
        items.append((ch, q, p, _alternatives([d for d in pool if d not in q], ch, ctx, fixed=(sem[0],)),
                      f"說文解字 id {e.id}「{ch}」{e.explanation[e.explanation.find('从'):][:24]}",
                      f"《說文》：「{ch}」从{sem[0]}{p}聲。"))
    items = [it for it in items if it[3]]
    return _finish("phonetic_radical", "phonetic_radical_shuowen", items, ("江", "河", "請", "聞", "問"), ctx, dropped,
                   _frequencies(ctx))


def _gloss(e: Entry) -> str:
    """The first clause of a 部首's explanation (up to the first 。), or ''."""
    return e.explanation.split("。", 1)[0].strip()


def build_radical_meaning(ctx, sw: Shuowen) -> BuildResult:
    """說文 gloss of the 部首. Distractors: glosses of other 部首 of similar length that share no content
    character with the target's gloss (說文 boilerplate such as 也/象形/从 ignored) and do not contain the
    target graph; the distractor 部首 may not be a variant of the target."""
    uh = unihan.load()
    dropped: Counter = Counter()
    heads = []
    for e in sw.section_heads():
        g = _gloss(e)
        if not (2 <= len(g) <= 12):
            dropped["gloss missing or longer than 12 characters"] += 1
            continue
        if e.wordhead in g:
            dropped["gloss contains the 部首 itself"] += 1
            continue
        heads.append((e, g))
    items = []
    for e, g in heads:
        content = set(g) - GLOSS_FUNCTION_CHARS
        pool = []
        for e2, g2 in sorted(heads, key=lambda h: (abs(len(h[1]) - len(g)), h[0].id)):
            if e2.id == e.id or g2 == g or e.wordhead in g2 or same_graph(e.wordhead, e2.wordhead, uh):
                continue
            if content & (set(g2) - GLOSS_FUNCTION_CHARS):
                continue
            pool.append(g2)
            if len(pool) >= 8:
                break
        if len(pool) < 3:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        q = f"《說文解字》部首「{e.wordhead}」的釋義是？"
        items.append((e.wordhead, q, g, _alternatives(pool, e.wordhead, ctx), f"說文解字 id {e.id}「{e.wordhead}」",
                      f"《說文》：「{e.wordhead}，{g}。」其餘選項是其他部首的說文釋義。"))
    return _finish("radical_meaning", "radical_meaning_shuowen", items, ("水", "木", "口", "門", "馬", "牛", "羊", "鳥", "言"), ctx, dropped,
                   _frequencies(ctx))


def build_variants(ctx) -> list[BuildResult]:
    """The four 說文-based variant configs (for ``ancientbench build --shuowen DIR``)."""
    sw = load(ctx.shuowen_dir)
    return [
        build_pronunciation(ctx, sw),
        build_radical(ctx, sw),
        build_phonetic_radical(ctx, sw),
        build_radical_meaning(ctx, sw),
    ]
