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
* **Distractors.** Characters of the corpus within a factor of two of the answer's corpus frequency (the
  same frequency band), locally plausible (each forms an attested 2-gram with the character before or
  after the blank), not a function word, not a variant of the answer (OpenCC folding, Unihan variants),
  not in the question.
* **Checker.** A distractor is rejected if *any* of the three 3-grams it creates around the blank is
  attested anywhere in the corpus (compared script-folded, so 爲/為 or 餘/余 differences cannot hide an
  attestation), and if it forms an attested 2-gram with *both* neighbours in the classics or in the
  poems of 全唐詩 (a second idiomatic fill: 「位＿列卿」 with 至, 位至 in 全唐詩 and 至列 in 古文觀止; a
  distractor may read as a word with one neighbour, never with both). Distractors are never graphs
  OpenCC converts one-to-many either. Among the valid distractor triples the one that keeps surface strategies at chance is
  chosen (:mod:`ancientbench.builders.debias`).
* **Answer check.** The sentence, with the answer restored, is looked up in the corpus
  (``Corpus.contains``) and must be found in the cited passage.

Items are sampled (seeded) down to ``MAX_TEST`` per build. Questions are in traditional script: every
character of question and options is checked not to be a simplified-only graph (Unihan).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ..han import han_only, is_han
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

TASK = "cloze"
TEMPLATE = "下列哪個字最適合填入「{sentence}」的空格？"
BLANK = "＿"
MIN_HAN, MAX_HAN = 10, 40
MIN_ANSWER_FREQ = 3  # the answer is a character a reader of the classics meets more than once or twice
BAND = 2.0  # distractor frequency within [f / BAND, f * BAND] of the answer's (folded) frequency
ALTERNATIVES = 6  # distractor triples offered to the debiasing selector
MAX_TEST = 4000

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


def build(ctx: BuildContext) -> BuildResult:
    from ..sources import unihan as unihan_mod

    corpus = load_corpus(ctx.sources_dir)
    uh = unihan_mod.load()
    _variants: dict[str, frozenset[str]] = {}

    def variants(ch: str) -> frozenset[str]:
        if ch not in _variants:
            _variants[ch] = uh.variants(ch)
        return _variants[ch]
    wide = tang_bigrams(ctx.sources_dir)
    index = _Index(corpus, wide)
    dropped: Counter = Counter()
    rng = task_rng(TASK, ctx.seed)
    freq = {ch: corpus.frequency(ch) for ch in corpus.char_freq}
    folded_freq = corpus.ngrams[1]
    # distractor universe: folded content characters that a reader meets (frequency >= MIN_ANSWER_FREQ)
    universe = sorted((n, k) for k, n in folded_freq.items() if n >= MIN_ANSWER_FREQ and k not in FUNCTION_KEYS)
    _bands: dict[int, frozenset[str]] = {}

    def band(f: int) -> frozenset[str]:
        """Folded universe characters whose frequency is within a factor BAND of f."""
        if f not in _bands:
            _bands[f] = frozenset(k for n, k in universe if f / BAND <= n <= f * BAND)
        return _bands[f]

    template_keys = {fold(c) for c in TEMPLATE}
    seen_sentences: set[str] = set()
    proposals = []  # (key, sentence, question, answer, alternatives, explanation)
    for s in corpus.sentences:
        shown, han_pos = _display_sentence(s.text)
        h = "".join(shown[k] for k in han_pos)
        if not (MIN_HAN <= len(h) <= MAX_HAN):
            dropped["sentence length outside 10-40"] += 1
            continue
        hf = fold(h)
        if hf in seen_sentences:
            dropped["repeated sentence"] += 1
            continue
        seen_sentences.add(hf)
        # map positions of the displayed sentence back to s.text to read the ambiguity flags
        text_pos = [k for k, ch in enumerate(s.text) if ch not in QUOTES]
        if any(text_pos[k] in s.ambiguous for k in han_pos):
            dropped["graph converted one-to-many (OpenCC) in the sentence"] += 1
            continue
        question_chars = set(TEMPLATE) | set(h)
        question_keys = {fold(c) for c in question_chars}
        positions = []
        for i in range(2, len(h) - 2):
            a = h[i]
            if hf[i] in FUNCTION_KEYS or fold(a) in FUNCTION_KEYS:  # per graph too: phrase folding keeps 於穆
                continue
            if folded_freq.get(hf[i], 0) < MIN_ANSWER_FREQ:
                continue
            if hf.count(hf[i]) > 1 or fold(a) in template_keys:
                continue
            if index.fillers(hf, i) - {hf[i]}:
                continue  # another corpus character fits all three 3-grams: the blank has no unique answer
            positions.append(i)
        if not positions:
            dropped["no blank with a unique answer"] += 1
            continue
        srng = task_rng(f"{TASK}:{s.book}.{s.chapter_no}.{s.passage}.{s.index}", ctx.seed)
        srng.shuffle(positions)
        made = None
        for i in positions:
            a, af = h[i], hf[i]
            f = folded_freq[af]
            rejected = index.any_attested(hf, i) | index.second_fills(hf, i)
            plausible = index.plausible(hf, i)
            a_variants = {fold(v) for v in variants(a)} | {fold(a)}
            pool = []
            for y in sorted((plausible & band(f)) - rejected - a_variants):
                shown_y = corpus.display_form(y, s.book)
                if variant_key(shown_y) == variant_key(a) or shown_y in question_chars or y in question_keys:
                    continue
                if a in variants(shown_y) or uh.is_simplified_only(shown_y) or is_one_to_many(shown_y):
                    continue
                pool.append(shown_y)
            if len(pool) < 3:
                continue
            made = (i, pool)
            break
        if made is None:
            dropped["fewer than 3 distractors pass the checker"] += 1
            continue
        i, pool = made
        a = h[i]
        k = han_pos[i]
        question = TEMPLATE.format(sentence=shown[:k] + BLANK + shown[k + 1 :])
        if any(uh.is_simplified_only(ch) for ch in question + a):
            dropped["simplified graph in question"] += 1
            continue
        key = f"{s.book}.{s.chapter_no}.{s.passage}.{s.index}"
        alternatives = []
        for _ in range(ALTERNATIVES):
            triple = tuple(srng.sample(pool, 3))
            if triple not in alternatives:
                alternatives.append(triple)
        # the checker, run on every offered distractor (the pool was built from the same 3-gram index)
        if not all(
            check_distractor(corpus, h, i, y) and not reads_with_both_neighbours(corpus, wide, h, i, y) for t in alternatives for y in t
        ):
            dropped["checker rejected a pooled distractor"] += 1
            continue
        proposals.append((key, s, question, a, alternatives, i))
    # answer check (fast, before sampling): the restored sentence is in the cited passage's text
    passages = {(p.book, p.chapter_no, p.index): p for p in corpus.passages}
    verified = []
    for key, s, question, a, alternatives, i in proposals:
        restored = question.split("「", 1)[1].rsplit("」", 1)[0].replace(BLANK, a)
        if han_only(restored) not in han_only(passages[(s.book, s.chapter_no, s.passage)].text):
            dropped["answer not found in the cited passage"] += 1
            continue
        verified.append((key, s, question, a, alternatives, i))
    candidates_total = len(verified) + sum(dropped.values())
    # sample down (seeded), keeping the hand-checked dev keys; then restore corpus order
    if len(verified) > MAX_TEST + len(DEV_KEYS):
        keep_dev = [v for v in verified if v[0] in DEV_KEYS]
        rest = [v for v in verified if v[0] not in DEV_KEYS]
        sampled = rng.sample(range(len(rest)), MAX_TEST)
        dropped["sampled out (size cap)"] += len(rest) - MAX_TEST
        chosen_ids = set(sampled)
        verified = keep_dev + [v for j, v in enumerate(rest) if j in chosen_ids]
        order = {v[0]: n for n, v in enumerate(proposals)}
        verified.sort(key=lambda v: order[v[0]])
    # answer check (independent lookup) on what is kept: Corpus.contains must find the cited passage
    final = []
    for v in verified:
        key, s, question, a = v[:4]
        restored = question.split("「", 1)[1].rsplit("」", 1)[0].replace(BLANK, a)
        if not any((m.book, m.chapter, m.passage) == (s.book, s.chapter, s.passage) for m in corpus.contains(restored)):
            dropped["answer not found in the cited passage"] += 1
            continue
        final.append(v)
    verified = final
    from ..quality.strategies import Frequencies
    from .debias import pick_balanced

    fobj = Frequencies(freq, "classics")
    picks = pick_balanced([(q, a, alts) for _, _, q, a, alts, _ in verified], fobj)
    cands = []
    for (key, s, question, a, alternatives, i), p in zip(verified, picks):
        triple = alternatives[p]
        h = han_only("".join(ch for ch in s.text if ch not in QUOTES))
        grams = "、".join(f"「{trigrams_with(h, i, y)[1]}」" for y in triple)
        book = BOOK_BY_KEY[s.book]
        src = SOURCE_LABEL + ("; OpenCC s2t" if book.script == "simplified" else "")
        cands.append(
            Candidate(
                key=key,
                question=question,
                answer=a,
                distractors=triple,
                source=src,
                citation=s.citation,
                explanation=f"原文作「{a}」（{s.citation}）；各干擾字與空格前後文構成的三字組均不見於語料（如{grams}）。",
                subset=book.title,
            )
        )
    dev, test = split_dev_test(TASK, cands, DEV_KEYS, ctx.seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=candidates_total)
