"""Builder of the ``tradoc_word`` task: the meaning of a word in a transmitted text, in two subsets.

* ``in_context`` (the paper's TraDoc Word, the counterpart of ``excdoc_word``): 「《孟子·梁惠王上》「…句…」中「詞」一詞的
  意思是？」. The team-written sense inventory ``curated/tradoc_senses.jsonl`` gives each word its senses (a
  short modern-Chinese definition each, classical or ``modern``: 古今異義) and, where the word is also an
  ``excdoc_word`` entry, the excdoc key it pairs with; ``curated/tradoc_word.jsonl`` records per item the
  book, chapter, the context and the sense meant. The context must occur verbatim in one sentence of that
  chapter of npm ``chinese-poetry`` (:mod:`ancientbench.sources.classics`), in the books it ships in
  traditional script (孟子, 大學, 中庸, 古文觀止; 論語, 詩經, 楚辭 are shipped simplified and are not used), and
  the word must occur in it exactly once. The answer is the sense's definition; the three distractors are
  the word's *other* senses (one modern sense where the word has one), never leaving the answer the odd one
  out by length; among the admissible triples the balancer (:mod:`ancientbench.builders.debias`) keeps the
  audit strategies and two options-only sense guesses (:func:`sense_strategies`) near chance. At most
  :data:`MAX_PER_SENSE` scored items share a (word, sense). An item is annotated only when no other sense
  of the word fits it. Design and figures: ``docs/tradoc_word.md``.
* ``guangyun_gloss``: the character-level variant, 《廣韻》釋「忠」爲？ (無私也敬也 / 器虛也 / 竈突 / 擇也), capped
  at :data:`MAX_GLOSS_ITEMS` so it does not dominate the task, each distractor gloss used in at most
  :data:`MAX_GLOSS_REUSE` items. Its design follows.

  * **Answer.** The first usable gloss of the character (:func:`usable_gloss`): the 釋義 reduced to its
    meanings (no editorial （…）, 小韻 trailer or reading notes), cut before the first 又/亦/一曰/或曰, its
    leading quotation formula (說文曰 …) removed, at most two definitions, 2–8 characters; glosses that
    are only about names, surnames, graph forms or sources (``NOT_A_MEANING``), or that contain the
    character itself or one of its variants, are not used.
  * **Distractors.** Usable glosses of other known characters (:mod:`ancientbench.builders.charpool`), most
    plausible first: same Kangxi radical (same semantic field) and the same shape as the answer (length,
    ending in 也 or not), then the same shape from any radical; nearest headword frequency first, half of the
    pool commoner than the key's character and half not, and the balancer keeps "the gloss of the commonest
    (rarest) headword" near chance (:func:`headword_strategies`): a reader who knows which character a gloss
    belongs to would otherwise pick the commonest (its key in 95% of data 2.5.3's items). Pools are drawn in a
    seeded order; the chosen items offer each gloss at most :data:`MAX_GLOSS_REUSE` times.
  * **Checker** (:func:`distractor_problem`): a distractor is rejected if any of its definition segments
    is among the segments of *any* reading of the target, if it shares a content character with any gloss
    of the target, if its headword is the target, a Unihan variant of it, in the same 小韻 (上同 and
    phonetic-loan entries), or has an English ``kDefinition`` sharing a content word with the target's
    (a second, independent check against near-synonyms), or if it contains the target character.
  * Among valid triples the one that keeps surface strategies at chance is chosen
    (:mod:`ancientbench.builders.debias`).

The task's score is over both subsets; ``subset`` is on every row.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

from ..han import all_han, is_han
from ..paths import CURATED_DIR, record
from ..quality.audit import corpus_frequencies
from ..quality.strategies import BALANCED_V1
from ..quality.strategies import BALANCED_V1_WITH_CENTRAL as AUDIT_STRATEGIES
from ..schema import DataError
from ..sources.classics import BOOK_BY_KEY, fold, load_corpus
from ..sources.classics import SOURCE_LABEL as SOURCE_LABEL_CP
from ..sources.guangyun import Reading, gloss_segments, meaning_text
from .charpool import Sources, load_sources
from .common import BuildResult, Candidate, as_excerpt, length_giveaway, split_dev_test, task_rng
from .curated import KEY_RE, SOURCE, has_private_use, parse_lines
from .debias import pick_balanced

TASK = "tradoc_word"
TEMPLATE = "《廣韻》釋「{char}」爲？"
GLOSS_SUBSET, CONTEXT_SUBSET = "guangyun_gloss", "in_context"
# Dev exemplars of the gloss-only builder (:func:`build_from`, used alone in tests).
GLOSS_DEV_KEYS = ("忠", "選", "盅", "囪", "看")
DEV_KEYS = GLOSS_DEV_KEYS
# At most this many gloss items (test + dev), so the in-context subset carries at least about half the score.
MAX_GLOSS_ITEMS = 1000
# A distractor gloss is offered in at most this many chosen gloss items (the balancer's max_option_uses).
MAX_GLOSS_REUSE = 3
# a gloss may be in POOL_REUSE times MAX_GLOSS_REUSE candidate pools (of six); chosen items hold it at most MAX_GLOSS_REUSE times
POOL_REUSE = 2
# targets drawn: this many times max_items, since items whose every triple breaks the reuse bound are dropped
TARGET_SLACK = 1.25
# the gloss items' balanced rules: version 1's six, and the gloss that shares a component with the character
# (「奕」 大也), which the commoner-and-rarer pools pushed past 30% over the task when left out
GLOSS_BALANCED = (*BALANCED_V1, "shares_component")
MAX_ITEMS = MAX_GLOSS_ITEMS
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
        if not all_han(option, unified_only=True) or not src.traditional_text(option):
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
               max_items: int = MAX_ITEMS, max_reuse: int = MAX_GLOSS_REUSE, subset: str = "") -> BuildResult:
    """The gloss items alone over ``targets`` (default: every known character), split into dev and test."""
    cands, dropped, considered = gloss_candidates(src, seed, targets, dev_keys, max_items, max_reuse, subset)
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered)


class _Glosses:
    """The usable gloss of every known character, with the glossed characters by radical and by gloss shape."""

    def __init__(self, src: Sources):
        self.of: dict[str, tuple[str, Reading]] = {}
        for ch in src.by_familiarity(src.known):
            ug = usable_gloss(src, ch)
            if ug:
                self.of[ch] = ug
        self.by_radical: dict[str, list[str]] = defaultdict(list)
        self.by_shape: dict[tuple[int, bool], list[str]] = defaultdict(list)
        for ch in self.of:
            rs = src.u.radical_strokes(ch)
            if rs:
                self.by_radical[rs[0].number].append(ch)
            self.by_shape[_shape(self.of[ch][0])].append(ch)

    def text(self, ch: str) -> str:
        return self.of[ch][0]


def _log_distance(src: Sources, a: str, b: str) -> float:
    """How far apart two headwords are in corpus frequency (log scale; unattested counts as 1)."""
    return abs(math.log(max(src.freq(a), 1)) - math.log(max(src.freq(b), 1)))


def _split_by_frequency(src: Sources, ch: str, chars) -> tuple[list[str], list[str]]:
    """(headwords commoner than ``ch``, the others but ``ch``), each nearest in frequency first."""
    near = sorted((x for x in chars if x != ch), key=lambda x: _log_distance(src, x, ch))
    return [x for x in near if src.freq(x) > src.freq(ch)], [x for x in near if src.freq(x) <= src.freq(ch)]


def _gloss_pool(src: Sources, gl: _Glosses, ch: str, answer: str, reuse: Counter, max_reuse: int, rng) -> list[str]:
    """Up to ``POOL_SIZE`` characters whose glosses are checked distractors for ``ch``: glosses of the answer's
    shape, at most three of characters of its radical, then of any radical, nearest in frequency first, half of
    them commoner than ``ch`` where there are such (else the key's headword is the commonest of the four)."""
    shape = _shape(answer)
    rs = src.u.radical_strokes(ch)
    radical_c, radical_r = _split_by_frequency(src, ch, [x for x in (gl.by_radical[rs[0].number] if rs else [])
                                                           if _shape(gl.text(x)) == shape])
    any_radical = list(gl.by_shape[shape])
    rng.shuffle(any_radical)  # ties in frequency in a seeded order
    any_c, any_r = _split_by_frequency(src, ch, any_radical)
    pool: list[str] = []
    used_glosses = {answer}

    def take(candidates: list[str], n: int) -> None:
        for x in candidates:
            if n <= 0 or len(pool) >= POOL_SIZE:
                return
            g_x = gl.text(x)
            if x in pool or g_x in used_glosses or reuse[g_x] >= max_reuse or distractor_problem(src, ch, x, g_x):
                continue
            # distractor glosses must also be distinct in content from one another
            if any(set(g_x) - FUNCTION_CHARS & set(gl.text(p)) for p in pool):
                continue
            used_glosses.add(g_x)
            pool.append(x)
            n -= 1

    half = POOL_SIZE // 2
    take(radical_c, 1)
    take(radical_r, 3 - len(pool))
    take(any_c, half - sum(src.freq(x) > src.freq(ch) for x in pool))
    take(any_r, POOL_SIZE - len(pool))
    take(any_c, POOL_SIZE - len(pool))  # too few others: commoner ones fill the pool
    return pool


def _gloss_candidate(src: Sources, q: str, ch: str, answer: str, r: Reading, triple: tuple, whose_chars: tuple,
                     subset: str) -> Candidate:
    whose = "、".join(f"「{g}」（{x}）" for g, x in zip(triple, whose_chars))
    return Candidate(
        key=ch,
        question=q,
        answer=answer,
        distractors=triple,
        source=src.g.source_label,
        citation=f"{r.citation} 釋義「{r.gloss[:40]}{'…' if len(r.gloss) > 40 else ''}」",
        explanation=(
            f"《廣韻》小韻{r.xiaoyun}「{ch}」下釋義作「{answer}」。其餘選項是他字的釋義：{whose}，"
            f"與「{ch}」各讀音的釋義無共同義項或實詞。"
        ),
        subset=subset,
    )


def gloss_candidates(src: Sources, seed: int, targets: list[str] | None = None, dev_keys: tuple[str, ...] = DEV_KEYS,
                     max_items: int = MAX_ITEMS, max_reuse: int = MAX_GLOSS_REUSE, subset: str = GLOSS_SUBSET):
    """(candidates, dropped, considered) of the 《廣韻》 gloss subset; see the module docstring."""
    rng = task_rng(TASK + ":distractors", seed)
    dropped: Counter = Counter()
    gl = _Glosses(src)
    chars = src.by_familiarity(src.known if targets is None else targets)
    chars = [c for c in dev_keys if c in chars] + [c for c in chars if c not in dev_keys]
    targets, considered = [], 0
    for ch in chars:
        if len(targets) >= max_items * TARGET_SLACK:  # some are dropped below; the commonest max_items are kept
            break
        considered += 1
        ug = gl.of.get(ch) or usable_gloss(src, ch)
        if ug:
            targets.append((ch, ug))
        else:
            dropped["no_usable_gloss"] += 1
    # pools are drawn in a seeded order, not by familiarity: in that order each gloss's uses went to the commoner
    # characters before it, so a key's headword was the commonest of the four in 95% of items (data 2.5.3)
    n_dev = sum(ch in dev_keys for ch, _ in targets)
    order = targets[:n_dev] + rng.sample(targets[n_dev:], len(targets) - n_dev)
    reuse: Counter = Counter()  # distractor gloss -> candidate pools it is in; the chosen items are bounded below
    staged = []
    for ch, (answer, reading) in order:
        pool = _gloss_pool(src, gl, ch, answer, reuse, POOL_REUSE * max_reuse, rng)
        if len(pool) < 3:
            dropped["fewer_than_three_checked_distractors"] += 1
            continue
        reuse.update(gl.text(x) for x in pool)
        triples = [tuple(gl.text(x) for x in t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        sources = [tuple(t) for t in combinations(pool, 3)][:MAX_ALTERNATIVES]
        staged.append((ch, answer, reading, triples, sources))
    questions = [TEMPLATE.format(char=ch) for ch, *_ in staged]
    picks = pick_balanced([(q, a, t) for q, (ch, a, r, t, s) in zip(questions, staged)], src.audit_freq, prefer_first=0.02,
                          task=TASK, strategies=GLOSS_BALANCED, extra=headword_strategies(src, questions, staged),
                          max_option_uses=max_reuse)
    cands = []
    for q, (ch, answer, r, triples, sources), k in zip(questions, staged, picks):
        if k < 0:
            dropped[f"every triple offers a gloss already in {max_reuse} items"] += 1
            continue
        cands.append(_gloss_candidate(src, q, ch, answer, r, triples[k], sources[k], subset))
    rank = {ch: i for i, (ch, _) in enumerate(targets)}
    cands.sort(key=lambda c: rank[c.key])
    if len(cands) > max_items:
        dropped["beyond the commonest max_items characters"] = len(cands) - max_items
    cands = cands[:max_items]
    return cands, dropped, considered


def headword_strategies(src: Sources, questions, staged) -> dict:
    """Options-only guesses of an examinee who recognises the character behind each gloss (「危也阻也」 is 險):
    the gloss of the commonest headword, and of the rarest; balanced near chance like the audit's rules."""
    count = {q: {answer: src.freq(ch), **{gl: src.freq(x) for t, s in zip(triples, sources) for gl, x in zip(t, s)}}
             for q, (ch, answer, _, triples, sources) in zip(questions, staged)}
    return {"commonest_headword": lambda q, options: [count[q][o] for o in options],
            "rarest_headword": lambda q, options: [-count[q][o] for o in options]}


# ---- the in-context subset ------------------------------------------------------------------------------

SENSES_FILE = "tradoc_senses.jsonl"
ITEMS_FILE = "tradoc_word.jsonl"
SENSE_KEYS = ("word", "slug", "pair", "senses")
SENSE_ENTRY_KEYS = ("id", "gloss", "modern")
ITEM_KEYS = ("key", "word", "sense", "book", "chapter", "context", "author")
# Books shipped in traditional script (the others are simplified in chinese-poetry and are not quoted).
CONTEXT_BOOKS = ("mengzi", "daxue", "zhongyong", "guwenguanzhi")
# Keys of the five dev exemplars: three in-context items and two gloss items (both forms are in the task).
CONTEXT_DEV_KEYS = ("fa.mengzi.3.40.10", "zuo.guwenguanzhi.192.3.1", "jia.mengzi.9.40.2")
MIXED_DEV_KEYS = (*CONTEXT_DEV_KEYS, "忠", "選")
# At most this many items share one (word, sense) key, so no one sense of a word dominates its items.
MAX_PER_SENSE = 4


def _curated_dir(directory=None) -> Path:
    return Path(directory) if directory else record(CURATED_DIR)


def load_senses(directory=None) -> dict[str, dict]:
    """The sense inventory, word -> entry (``senses``: list of {id, gloss, modern}); DataError on a bad line."""

    path = _curated_dir(directory) / SENSES_FILE
    if not path.is_file():
        raise DataError(path, None, None, "missing sense inventory of tradoc_word")
    out: dict[str, dict] = {}
    slugs: set[str] = set()
    for n, obj in parse_lines(path):
        if not isinstance(obj, dict) or tuple(obj) != SENSE_KEYS:
            raise DataError(path, n, None, f"expected an object with keys {', '.join(SENSE_KEYS)} in this order")
        word, slug, senses = obj["word"], obj["slug"], obj["senses"]
        if not isinstance(word, str) or not word or not all(is_han_char(c) for c in word):
            raise DataError(path, n, "word", f"must be Han characters, got {word!r}")
        if word in out:
            raise DataError(path, n, "word", f"duplicate word {word!r}")
        if not isinstance(slug, str) or not re.fullmatch(r"[a-z][a-z0-9]*", slug) or slug in slugs:
            raise DataError(path, n, "slug", f"must be a unique lower-case ascii slug, got {slug!r}")
        if not isinstance(obj["pair"], str):
            raise DataError(path, n, "pair", "must be a string (an excdoc_word key or empty)")
        if not isinstance(senses, list) or len(senses) < 4:
            raise DataError(path, n, "senses", "need at least four senses (one answer and three distractors)")
        ids, glosses = set(), set()
        for s in senses:
            if not isinstance(s, dict) or tuple(s) != SENSE_ENTRY_KEYS:
                raise DataError(path, n, "senses", f"each sense is an object with keys {', '.join(SENSE_ENTRY_KEYS)}")
            if not isinstance(s["id"], str) or not s["id"] or s["id"] in ids:
                raise DataError(path, n, "senses", f"sense ids must be unique non-empty strings, got {s['id']!r}")
            if not isinstance(s["gloss"], str) or not s["gloss"] or s["gloss"] in glosses or word in s["gloss"]:
                raise DataError(path, n, "senses", f"gloss {s['gloss']!r}: empty, repeated, or contains the word itself")
            if not isinstance(s["modern"], bool):
                raise DataError(path, n, "senses", "modern must be true or false")
            ids.add(s["id"])
            glosses.add(s["gloss"])
        if sum(not s["modern"] for s in senses) < 2:
            raise DataError(path, n, "senses", "need at least two classical senses")
        slugs.add(slug)
        out[word] = {**obj, "line": n, "file": str(path)}
    return out


def is_han_char(ch: str) -> bool:
    return is_han(ch)


def load_items(senses: dict[str, dict], directory=None) -> list[tuple[int, dict]]:
    """The annotated occurrences, (line, entry); DataError naming file, line and field on a bad one."""

    path = _curated_dir(directory) / ITEMS_FILE
    if not path.is_file():
        raise DataError(path, None, None, "missing annotated occurrences of tradoc_word")
    out, keys, seen = [], set(), set()
    for n, obj in parse_lines(path):
        if not isinstance(obj, dict) or tuple(obj) != ITEM_KEYS:
            raise DataError(path, n, None, f"expected an object with keys {', '.join(ITEM_KEYS)} in this order")
        for k in ITEM_KEYS:
            if not isinstance(obj[k], str) or not obj[k]:
                raise DataError(path, n, k, "must be a non-empty string")
        if not KEY_RE.match(obj["key"]) or obj["key"] in keys:
            raise DataError(path, n, "key", f"key {obj['key']!r} is not a unique ascii slug")
        word = obj["word"]
        if word not in senses:
            raise DataError(path, n, "word", f"{word!r} has no entry in {SENSES_FILE}")
        sense = {s["id"]: s for s in senses[word]["senses"]}.get(obj["sense"])
        if sense is None:
            raise DataError(path, n, "sense", f"{word!r} has no sense {obj['sense']!r}")
        if sense["modern"]:
            raise DataError(path, n, "sense", "a modern sense cannot be the meaning in a transmitted text")
        if obj["book"] not in CONTEXT_BOOKS:
            raise DataError(path, n, "book", f"{obj['book']!r} is not one of {', '.join(CONTEXT_BOOKS)}")
        if re.search(r"[()（）]", obj["context"]):
            raise DataError(path, n, "context", "editorial notes in parentheses (一作…, 通…) are not part of the quoted text")
        if has_private_use(obj["context"]):
            raise DataError(path, n, "context", "a private-use code point stands for a glyph no font shows; correct the source line")
        if obj["context"].count(word) != 1:
            raise DataError(path, n, "context", f"the word {word!r} must occur exactly once in the context")
        if (word, obj["context"]) in seen:
            raise DataError(path, n, "context", "duplicate item (same word and context)")
        keys.add(obj["key"])
        seen.add((word, obj["context"]))
        out.append((n, obj))
    return out


def locate(corpus, book: str, chapter: str, context: str):
    """The sentence of ``book``/``chapter`` that holds ``context`` verbatim (package script), or None."""
    for s in corpus.sentences:
        if s.book == book and s.chapter == chapter and context in s.original:
            return s
    return None


def source_label(corpus, sentence) -> str:
    """How the question names the text: 《孟子·梁惠王上》, 《左傳·鄭伯克段于鄢》, 韓愈《師說》."""
    book = BOOK_BY_KEY[sentence.book]
    if sentence.book != "guwenguanzhi":
        return f"《{book.title}·{sentence.chapter}》" if sentence.book == "mengzi" else f"《{book.title}》"
    title = sentence.chapter.split("·", 1)[1]
    note = next(p.note for p in corpus.passages if p.book == sentence.book and p.chapter == sentence.chapter)
    m = re.fullmatch(r"《([^》·]+)》", note)
    if m:
        return f"《{m.group(1)}·{title}》"
    m = re.fullmatch(r"\(([^)]+)\)", note)
    if m:
        return f"{m.group(1)}《{title}》"
    if note.startswith("《"):
        return f"{note}〈{title}〉"
    return f"《古文觀止·{title}》"


def distractor_triples(item_key: str, word_entry: dict, sense_id: str, seed: int) -> list[tuple[str, str, str]]:
    """Every admissible set of three other senses of the word, seeded per item: one modern sense where the
    word has one (古今異義), else classical senses only; none leaving the answer the odd one out by length."""

    senses = word_entry["senses"]
    answer = next(s["gloss"] for s in senses if s["id"] == sense_id)
    rng = task_rng(f"{TASK}:{item_key}", seed)
    classical = [s["gloss"] for s in senses if s["id"] != sense_id and not s["modern"]]
    modern = [s["gloss"] for s in senses if s["modern"]]
    rng.shuffle(classical)
    rng.shuffle(modern)
    k = min(1, len(modern)) if len(classical) >= 2 else min(len(modern), 3 - len(classical))
    triples = [(*modern[:k], *combo) for combo in combinations(classical, 3 - k)]
    return [t for t in triples if not length_giveaway(answer, list(t))]


def choose_distractors(item_key: str, word_entry: dict, sense_id: str, seed: int) -> tuple[str, str, str] | None:
    """The first admissible triple (:func:`distractor_triples`), or None when every choice gives the answer away."""
    triples = distractor_triples(item_key, word_entry, sense_id, seed)
    return triples[0] if triples else None


def context_candidates(ctx, seed: int, directory=None):
    """(candidates, dropped, considered) of the in-context subset; DataError when a context is not in the source."""
    senses = load_senses(directory)
    items = load_items(senses, directory)
    corpus = load_corpus(ctx.sources_dir)
    path = _curated_dir(directory) / ITEMS_FILE
    dropped: Counter = Counter()
    per_sense: Counter = Counter()
    staged, cands = [], []
    for n, it in items:
        s = locate(corpus, it["book"], it["chapter"], it["context"])
        if s is None:
            raise DataError(path, n, "context", f"not found verbatim in {it['book']}·{it['chapter']} of {SOURCE_LABEL_CP}")
        word = it["word"]
        entry = senses[word]
        scored = it["key"] not in CONTEXT_DEV_KEYS  # the dev exemplars are not scored, so not capped
        if scored and per_sense[(word, it["sense"])] >= MAX_PER_SENSE:
            dropped[f"more than {MAX_PER_SENSE} items of one sense of a word"] += 1
            continue
        triples = distractor_triples(it["key"], entry, it["sense"], seed)[:MAX_ALTERNATIVES]
        if not triples:
            dropped["answer stands out by length whatever the distractors"] += 1
            continue
        per_sense[(word, it["sense"])] += scored
        answer = next(x["gloss"] for x in entry["senses"] if x["id"] == it["sense"])
        staged.append((it, s, entry, answer, triples))
    # among the admissible triples, the one that keeps every audit strategy (option similarity too) near chance
    questions = [f"{source_label(corpus, s)}「{as_excerpt(it['context'])}」中「{it['word']}」一詞的意思是？" for it, s, *_ in staged]
    picks = pick_balanced([(q, a, t) for q, (_, _, _, a, t) in zip(questions, staged)], corpus_frequencies(ctx.sources_dir),
                          prefer_first=0.02, strategies=AUDIT_STRATEGIES, extra=sense_strategies(staged, questions))
    for q, (it, s, entry, answer, triples), k in zip(questions, staged, picks):
        word, triple = it["word"], triples[k]
        modern = [g for g in triple if any(x["gloss"] == g and x["modern"] for x in entry["senses"])]
        note = f"（其中「{modern[0]}」是今義）" if modern else ""
        pair = f"；與 excdoc_word「{entry['pair']}」同詞" if entry["pair"] else ""
        cands.append(
            Candidate(
                key=it["key"],
                question=q,
                answer=answer,
                distractors=triple,
                source=f"{SOURCE_LABEL_CP}; {SOURCE} sense annotation",
                citation=s.citation,
                explanation=f"此句「{word}」義為「{answer}」；其餘選項是「{word}」的其他義項{note}，不合此句{pair}。",
                subset=CONTEXT_SUBSET,
            )
        )
    return cands, dropped, len(items)


def sense_strategies(staged, questions) -> dict:
    """Options-only guesses an examinee who recognises the word could make, balanced like the audit's:
    the sense most often meant in the items of that word, and the sense listed first (the commonest)."""
    word_of = {q: entry for q, (_, _, entry, _, _) in zip(questions, staged)}
    keyed = Counter((it["word"], it["sense"]) for it, *_ in staged)

    def most_keyed(question, options):
        entry = word_of[question]
        ids = {x["gloss"]: x["id"] for x in entry["senses"]}
        return [keyed[(entry["word"], ids[o])] for o in options]

    def first_listed(question, options):
        order = [x["gloss"] for x in word_of[question]["senses"]]
        return [-order.index(o) for o in options]

    return {"most_keyed_sense": most_keyed, "first_listed_sense": first_listed}


def pairing(directory=None) -> dict[str, str]:
    """In-context item key -> the ``excdoc_word`` key of the same word (only the paired items)."""
    senses = load_senses(directory)
    return {it["key"]: senses[it["word"]]["pair"] for _, it in load_items(senses, directory) if senses[it["word"]]["pair"]}


def build(ctx) -> BuildResult:
    """Both subsets: the annotated in-context items and at most MAX_GLOSS_ITEMS 《廣韻》 gloss items."""
    ctx_cands, dropped, considered = context_candidates(ctx, ctx.seed)
    gloss, g_dropped, g_considered = gloss_candidates(load_sources(ctx), ctx.seed, max_items=MAX_GLOSS_ITEMS)
    dropped.update({f"gloss: {k}": v for k, v in g_dropped.items()})
    dev, test = split_dev_test(TASK, ctx_cands + gloss, MIXED_DEV_KEYS, ctx.seed)
    return BuildResult(TASK, test=test, dev=dev, dropped=dropped, candidates=considered + g_considered)
