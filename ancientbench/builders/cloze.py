"""Builder of the ``cloze`` task: restore the masked character of a sentence from the classics.

Owns turning the chinese-poetry classics (:mod:`ancientbench.sources.classics`) into 4-option cloze items:

* **Blank.** One content character (not a particle, pronoun or negator; see ``FUNCTION_WORDS``) of a
  sentence of 10–40 characters, at least two characters from either end, that does not occur elsewhere in
  the question. The blank must have a *unique answer in the corpus*: no other character ``Y`` makes all
  three 3-grams around the blank (``s[i-2:i+1]``, ``s[i-1:i+2]``, ``s[i:i+3]`` with ``Y`` at ``i``)
  attested anywhere in the corpus. Sentences that occur twice (refrains, quotations) are used once.
* **Script.** A stem is never a conversion's guess: a sentence of a machine-converted book (論語, 詩經,
  楚辭 converted by us with OpenCC s2t; 古文觀止 converted upstream) is dropped when any of its graphs is
  one that OpenCC's character dictionary converts one-to-many (余→餘/余, 艳→豔/艷, 后→後/后 …; see
  :func:`classics.one_to_many`). 孟子, 大學, 中庸 are traditional in the package and used as they are.
* **Distractors.** Characters of the corpus within a factor of 1.1 of the answer's corpus frequency (the
  same frequency band: the option's frequency is what the predictors read), locally plausible (each forms an attested 2-gram with the character before or
  after the blank), not a function word, not a variant of the answer (OpenCC folding, Unihan variants),
  not in the question.
* **Checker.** A distractor is rejected if *any* of the three 3-grams it creates around the blank is
  attested anywhere in the corpus (compared script-folded, so 爲/為 or 餘/余 differences cannot hide an
  attestation), and if it forms an attested 2-gram with *both* neighbours in the classics or in the
  poems of 全唐詩 (a second idiomatic fill: 「位＿列卿」 with 至, 位至 in 全唐詩 and 至列 in 古文觀止; a
  distractor may read as a word with one neighbour, never with both). Distractors are never graphs
  OpenCC converts one-to-many either. Among the valid distractor triples the one that keeps surface strategies at chance is
  chosen (:mod:`ancientbench.builders.debias`): data version 1's six and the two option-recurrence rules
  (``BALANCED``), which the narrower band would otherwise push past 30%.
* **Answer check.** The sentence, with the answer restored, is looked up in the corpus
  (``Corpus.contains``) and must be found in the cited passage.

Items are sampled (seeded) down to ``MAX_TEST`` per build. Questions are in traditional script: every
character of question and options is checked not to be a simplified-only graph (Unihan).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ..han import han_only, is_han
from ..quality.strategies import BALANCED_V1, Frequencies
from ..sources import unihan
from ..sources.classics import (
    BOOK_BY_KEY,
    QUOTES,
    SOURCE_LABEL,
    Corpus,
    fold,
    is_one_to_many,
    load_corpus,
    tang_bigrams,
    variant_key,
)
from . import BuildContext
from .common import BuildResult, Candidate, split_dev_test, task_rng
from .debias import pick_balanced

TASK = "cloze"
TEMPLATE = "下列哪個字最適合填入「{sentence}」的空格？"
BLANK = "＿"
MIN_HAN, MAX_HAN = 10, 40
MIN_ANSWER_FREQ = 3  # the answer is a character a reader of the classics meets more than once or twice
BAND = 1.1  # distractor frequency within [f / BAND, f * BAND] of the answer's (folded) frequency (2.0: predictor 9 points higher)
ALTERNATIVES = 30  # distractor triples offered to the debiasing selector (6 left the options-only predictor 3 points higher)
MAX_TEST = 4000
# strategies the selector balances: version 1's six and the option-recurrence rules (a narrower band with the six alone: least_frequent_option over 30%)
BALANCED = (*BALANCED_V1, "least_frequent_option", "most_frequent_option")

# Particles, pronouns, negators, copulas and other grammatical words: never blanked, never distractors
# (folded forms are compared, so 爲/為, 與/与 both count).
FUNCTION_WORDS = frozenset(
    "之乎者也矣焉哉兮而以於于其爲為則乃所與不亦曰夫蓋且若或莫無毋弗勿未非是此斯彼何安惡豈誰孰"
    "吾我予余爾汝女諸然耳邪耶歟已云猶尚即既皆又故因雖苟如及自由將與"
)
FUNCTION_KEYS = frozenset(fold(c) for c in FUNCTION_WORDS)

# Hand-checked dev exemplars (keys): answer checked against the received text, each distractor read in place.
DEV_KEYS: tuple[str, ...] = (
    "lunyu.2.15.1",  # 論語·爲政：學而不思則罔，思而不學則殆
    "lunyu.17.2.1",  # 論語·陽貨：性相近也，習相遠也
    "mengzi.1.2.1",  # 孟子·梁惠王上：孟子對曰：王何必曰利
    "shijing.256.11.2",  # 詩經·大雅·抑：投我以桃，報之以李
    "guwenguanzhi.15.1.1",  # 古文觀止·介之推不言祿：晉侯賞從亡者，介之推不言祿
)


class _Index:
    """Folded 3-gram neighbourhoods: which characters fill a slot given its left/right/both neighbours."""

    def __init__(self, corpus: Corpus, wide_bigrams: frozenset[str] = frozenset()):
        self.left: dict[str, set[str]] = defaultdict(set)  # ab -> {Y : abY}
        self.mid: dict[str, set[str]] = defaultdict(set)  # a+c -> {Y : aYc}
        self.right: dict[str, set[str]] = defaultdict(set)  # bc -> {Y : Ybc}
        for g in corpus.ngrams[3]:
            self.left[g[:2]].add(g[2])
            self.mid[g[0] + g[2]].add(g[1])
            self.right[g[1:]].add(g[0])
        self.after: dict[str, set[str]] = defaultdict(set)  # a -> {Y : aY}
        self.before: dict[str, set[str]] = defaultdict(set)  # c -> {Y : Yc}
        for g in corpus.ngrams[2]:
            self.after[g[0]].add(g[1])
            self.before[g[1]].add(g[0])
        self.wide_after: dict[str, set[str]] = defaultdict(set)  # a -> {Y : aY in the classics or 全唐詩}
        self.wide_before: dict[str, set[str]] = defaultdict(set)
        for g in set(corpus.ngrams[2]) | wide_bigrams:
            self.wide_after[g[0]].add(g[1])
            self.wide_before[g[1]].add(g[0])

    def fillers(self, h: str, i: int) -> set[str]:
        """Characters making all three 3-grams around position i of folded string h attested."""
        return self.left[h[i - 2 : i]] & self.mid[h[i - 1] + h[i + 1]] & self.right[h[i + 1 : i + 3]]

    def any_attested(self, h: str, i: int) -> set[str]:
        """Characters making at least one of the three 3-grams attested (the checker's rejection set)."""
        return self.left[h[i - 2 : i]] | self.mid[h[i - 1] + h[i + 1]] | self.right[h[i + 1 : i + 3]]

    def second_fills(self, h: str, i: int) -> set[str]:
        """Characters forming an attested 2-gram with both neighbours (classics or 全唐詩): second idiomatic fills."""
        return self.wide_after[h[i - 1]] & self.wide_before[h[i + 1]]

    def plausible(self, h: str, i: int) -> set[str]:
        """Characters forming an attested 2-gram with the left or the right neighbour."""
        return self.after[h[i - 1]] | self.before[h[i + 1]]


def trigrams_with(h: str, i: int, y: str) -> tuple[str, str, str]:
    """The three 3-grams around position i of h with y in the slot."""
    s = h[:i] + y + h[i + 1 :]
    return s[i - 2 : i + 1], s[i - 1 : i + 2], s[i : i + 3]


def check_distractor(corpus: Corpus, h: str, i: int, y: str) -> bool:
    """The checker: True when no 3-gram the distractor y creates around the blank of h is attested (folded)."""
    return all(corpus.ngrams[3].get(g, 0) == 0 for g in trigrams_with(fold(h), i, fold(y)))


def reads_with_both_neighbours(corpus: Corpus, wide_bigrams: frozenset[str], h: str, i: int, y: str) -> bool:
    """True when y forms an attested (folded) 2-gram with the character before and the one after the blank."""
    f, fy = fold(h), fold(y)
    left, right = f[i - 1] + fy, fy + f[i + 1]
    return all(corpus.ngrams[2].get(g, 0) > 0 or g in wide_bigrams for g in (left, right))


def _display_sentence(text: str) -> tuple[str, list[int]]:
    """Drop quote marks (the question quotes the sentence itself); return it with the Han positions."""
    shown = "".join(ch for ch in text if ch not in QUOTES)
    return shown, [k for k, ch in enumerate(shown) if is_han(ch)]


class _Sources:
    """What one build reads: the classics corpus, Unihan (variants cached), the 全唐詩 bigrams, the 3-gram index,
    and the distractor universe by frequency band."""

    def __init__(self, sources_dir):
        self.corpus = load_corpus(sources_dir)
        self.uh = unihan.load()
        self._variants: dict[str, frozenset[str]] = {}
        self.wide = tang_bigrams(sources_dir)
        self.index = _Index(self.corpus, self.wide)
        self.folded_freq = self.corpus.folded_counts
        # distractor universe: folded content characters that a reader meets (frequency >= MIN_ANSWER_FREQ)
        self.universe = sorted((n, k) for k, n in self.folded_freq.items() if n >= MIN_ANSWER_FREQ and k not in FUNCTION_KEYS)
        self._bands: dict[int, frozenset[str]] = {}
        self.template_keys = {fold(c) for c in TEMPLATE}

    def variants(self, ch: str) -> frozenset[str]:
        if ch not in self._variants:
            self._variants[ch] = self.uh.variants(ch)
        return self._variants[ch]

    def band(self, f: int) -> frozenset[str]:
        """Folded universe characters whose frequency is within a factor BAND of f."""
        if f not in self._bands:
            self._bands[f] = frozenset(k for n, k in self.universe if f / BAND <= n <= f * BAND)
        return self._bands[f]


def _blank_positions(src: _Sources, h: str, hf: str) -> list[int]:
    """Positions of the Han string ``h`` (folded ``hf``) whose character is the only corpus fill of its 3-grams."""
    positions = []
    for i in range(2, len(h) - 2):
        a = h[i]
        if hf[i] in FUNCTION_KEYS or fold(a) in FUNCTION_KEYS:  # per graph too: phrase folding keeps 於穆
            continue
        if src.folded_freq.get(hf[i], 0) < MIN_ANSWER_FREQ:
            continue
        if hf.count(hf[i]) > 1 or fold(a) in src.template_keys:
            continue
        if src.index.fillers(hf, i) - {hf[i]}:
            continue  # another corpus character fits all three 3-grams: the blank has no unique answer
        positions.append(i)
    return positions


def _distractor_pool(src: _Sources, s, h: str, hf: str, i: int) -> list[str]:
    """Display forms of the band's characters that read with a neighbour but make no attested 3-gram in the slot."""
    a, af = h[i], hf[i]
    question_chars = set(TEMPLATE) | set(h)
    question_keys = {fold(c) for c in question_chars}
    rejected = src.index.any_attested(hf, i) | src.index.second_fills(hf, i)
    plausible = src.index.plausible(hf, i)
    a_variants = {fold(v) for v in src.variants(a)} | {fold(a)}
    pool = []
    for y in sorted((plausible & src.band(src.folded_freq[af])) - rejected - a_variants):
        shown_y = src.corpus.display_form(y, s.book)
        if variant_key(shown_y) == variant_key(a) or shown_y in question_chars or y in question_keys:
            continue
        if a in src.variants(shown_y) or src.uh.is_simplified_only(shown_y) or is_one_to_many(shown_y):
            continue
        pool.append(shown_y)
    return pool


def _propose(src: _Sources, s, seed: int, seen: set[str]) -> tuple | str:
    """``(key, sentence, question, answer, alternatives, blank position)`` for one corpus sentence, or the reason
    it gives no item (``seen``: the folded sentences already proposed)."""
    shown, han_pos = _display_sentence(s.text)
    h = "".join(shown[k] for k in han_pos)
    if not (MIN_HAN <= len(h) <= MAX_HAN):
        return "sentence length outside 10-40"
    hf = fold(h)
    if hf in seen:
        return "repeated sentence"
    seen.add(hf)
    # map positions of the displayed sentence back to s.text to read the ambiguity flags
    text_pos = [k for k, ch in enumerate(s.text) if ch not in QUOTES]
    if any(text_pos[k] in s.ambiguous for k in han_pos):
        return "graph converted one-to-many (OpenCC) in the sentence"
    positions = _blank_positions(src, h, hf)
    if not positions:
        return "no blank with a unique answer"
    srng = task_rng(f"{TASK}:{s.book}.{s.chapter_no}.{s.passage}.{s.index}", seed)
    srng.shuffle(positions)
    made = next(((i, pool) for i in positions if len(pool := _distractor_pool(src, s, h, hf, i)) >= 3), None)
    if made is None:
        return "fewer than 3 distractors pass the checker"
    i, pool = made
    a = h[i]
    k = han_pos[i]
    question = TEMPLATE.format(sentence=shown[:k] + BLANK + shown[k + 1 :])
    if any(src.uh.is_simplified_only(ch) for ch in question + a):
        return "simplified graph in question"
    key = f"{s.book}.{s.chapter_no}.{s.passage}.{s.index}"
    alternatives = []
    for _ in range(ALTERNATIVES):
        triple = tuple(srng.sample(pool, 3))
        if triple not in alternatives:
            alternatives.append(triple)
    # the checker, run on every offered distractor (the pool was built from the same 3-gram index)
    if not all(
        check_distractor(src.corpus, h, i, y) and not reads_with_both_neighbours(src.corpus, src.wide, h, i, y)
        for t in alternatives for y in t
    ):
        return "checker rejected a pooled distractor"
    return key, s, question, a, alternatives, i


def _restored(question: str, answer: str) -> str:
    """The quoted sentence of a question with the blank filled by ``answer``."""
    return question.split("「", 1)[1].rsplit("」", 1)[0].replace(BLANK, answer)


def _in_passage(src: _Sources, proposals: list[tuple], dropped: Counter) -> list[tuple]:
    """Answer check (fast, before sampling): the restored sentence is in the cited passage's text."""
    passages = {(p.book, p.chapter_no, p.index): p for p in src.corpus.passages}
    verified = []
    for v in proposals:
        key, s, question, a = v[:4]
        if han_only(_restored(question, a)) not in han_only(passages[(s.book, s.chapter_no, s.passage)].text):
            dropped["answer not found in the cited passage"] += 1
            continue
        verified.append(v)
    return verified


def _sample(verified: list[tuple], proposals: list[tuple], rng, dropped: Counter) -> list[tuple]:
    """Sample down to ``MAX_TEST`` (seeded), keeping the hand-checked dev keys; corpus order restored."""
    if len(verified) <= MAX_TEST + len(DEV_KEYS):
        return verified
    keep_dev = [v for v in verified if v[0] in DEV_KEYS]
    rest = [v for v in verified if v[0] not in DEV_KEYS]
    sampled = rng.sample(range(len(rest)), MAX_TEST)
    dropped["sampled out (size cap)"] += len(rest) - MAX_TEST
    chosen_ids = set(sampled)
    verified = keep_dev + [v for j, v in enumerate(rest) if j in chosen_ids]
    order = {v[0]: n for n, v in enumerate(proposals)}
    verified.sort(key=lambda v: order[v[0]])
    return verified


def _found_by_lookup(src: _Sources, verified: list[tuple], dropped: Counter) -> list[tuple]:
    """Answer check (independent lookup) on what is kept: Corpus.contains must find the cited passage."""
    final = []
    for v in verified:
        key, s, question, a = v[:4]
        matches = src.corpus.contains(_restored(question, a))
        if not any((m.book, m.chapter, m.passage) == (s.book, s.chapter, s.passage) for m in matches):
            dropped["answer not found in the cited passage"] += 1
            continue
        final.append(v)
    return final


def _candidate(v: tuple, triple: tuple[str, str, str]) -> Candidate:
    key, s, question, a, _, i = v
    h = han_only("".join(ch for ch in s.text if ch not in QUOTES))
    grams = "、".join(f"「{trigrams_with(h, i, y)[1]}」" for y in triple)
    book = BOOK_BY_KEY[s.book]
    return Candidate(
        key=key,
        question=question,
        answer=a,
        distractors=triple,
        source=SOURCE_LABEL + ("; OpenCC s2t" if book.script == "simplified" else ""),
        citation=s.citation,
        explanation=f"原文作「{a}」（{s.citation}）；各干擾字與空格前後文構成的三字組均不見於語料（如{grams}）。",
        subset=book.title,
    )


def build(ctx: BuildContext) -> BuildResult:
    src = _Sources(ctx.sources_dir)
    dropped: Counter = Counter()
    rng = task_rng(TASK, ctx.seed)
    freq = src.corpus.balancing_frequencies()
    seen: set[str] = set()
    proposals = []
    for s in src.corpus.sentences:
        made = _propose(src, s, ctx.seed, seen)
        if isinstance(made, str):
            dropped[made] += 1
        else:
            proposals.append(made)
    verified = _in_passage(src, proposals, dropped)
    candidates_total = len(verified) + sum(dropped.values())
    verified = _found_by_lookup(src, _sample(verified, proposals, rng, dropped), dropped)
    picks = pick_balanced([(q, a, alts) for _, _, q, a, alts, _ in verified], Frequencies(freq, "classics"),
                          task=TASK, strategies=BALANCED)
    cands = [_candidate(v, v[4][p]) for v, p in zip(verified, picks)]
    dev, test = split_dev_test(TASK, cands, DEV_KEYS, ctx.seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=candidates_total)
