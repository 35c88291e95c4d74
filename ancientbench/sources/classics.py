"""Source adapter for the transmitted classics in npm ``chinese-poetry`` 2.0.1 (MIT).

Owns: reading 論語, 孟子, 大學, 中庸, 詩經, 楚辭 and 古文觀止 from ``<sources>/node_modules/chinese-poetry``,
normalising them to traditional script, splitting sentences, and the corpus statistics the builders
need: character frequencies, an n-gram index, and a ``contains`` lookup that matches a text in the
corpus's original script, after normalisation, and in a script-folded form.

Script handling (OpenCC, PyPI ``opencc``):

* 孟子, 大學, 中庸 and 古文觀止 are traditional in the package and are kept exactly as they are. 古文觀止 was
  itself machine-converted upstream (OpenCC forms 爲/衆 throughout, slips such as 餘 for the pronoun 余),
  so its graphs with an ambiguous conversion are flagged like those of the books we convert.
* 論語, 詩經 and 楚辭 are simplified in the package; they are converted with OpenCC ``s2t`` (phrase-aware,
  OpenCC standard forms such as 爲, 衆). ``s2t`` is one-to-many and can err where one simplified graph
  stands for several traditional ones (余→餘 for the pronoun 余, 艳→豔/艷, 后→後, 于→於, 云→雲 …). Which
  graphs are one-to-many is read from OpenCC's own character dictionary (``STCharacters``, dumped with
  the ``opencc_dict`` tool shipped in the PyPI wheel): :func:`one_to_many`. Each sentence of a converted
  book records the positions whose graph went through such a conversion (:attr:`Sentence.ambiguous`),
  so builders can avoid them (the cloze builder drops every sentence that has one).
* **Corrections.** Where the package's 論語 or 孟子 differs from the received text by a misprint or a note
  printed into the text (諫志不從 for 見志不從, a footnote inside 盡心上), the reviewed correction in
  ``classics_corrections.tsv`` beside this module is applied to the paragraph before anything else
  (:func:`corrections`; each line: place, reading in the package's script, corrected reading, decision, reason; a
  ``convert`` line fixes the text after OpenCC, graph for graph, where s2t has one answer and the classic another;
  lines decided ``keep`` record a difference from the second edition that is not an error). The differences
  come from collating with a second edition (``scripts/collate_classics.py``).
* **Title corrections.** A chapter label the conversion got wrong (鄭伯克段於鄢 for 于, 季樑 for 季梁, 穀風 for 谷風)
  is replaced by the reviewed title of ``classics_title_corrections.tsv`` (:func:`title_corrections`; each line:
  book, chapter number, the label as converted, the received label, decision, graphs, reason), so every builder
  and citation sees the received title.
* **Pinned counts.** The character counts the builders balance options with (frequency bands, familiarity ranks, the
  common-word floor) are read from ``classics_frequencies.tsv`` (:class:`PinnedCounts`), written from the corrected
  corpus by ``ancientbench build --repin``; a later quote fix then changes only the items that quote the line,
  while "is this attested?" always reads the live text.
* Comparisons use a *folded* key, OpenCC ``t2s`` of the text: many-to-one, so variant forms (爲/為,
  衆/眾) and conversion choices (餘/余) compare equal. Folding errs only towards matching too much,
  which is the safe side for "is this attested?" checks.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from ..fileio import atomic_write
from ..han import han_only, is_han
from ..paths import TANG_GLOB
from ..schema import DataError
from . import SourceMissing

PACKAGE = "chinese-poetry"
VERSION = "2.0.1"
SOURCE_LABEL = f"npm {PACKAGE} {VERSION} (MIT)"
INSTALL_HINT = f"npm install --prefix .sources {PACKAGE}@{VERSION}   (or: bash scripts/install.sh)"


@dataclass(frozen=True)
class Book:
    key: str  # short ascii id, used in item ids
    title: str  # traditional title
    path: str  # file under dist/
    script: str  # "traditional" or "simplified" in the package
    converted: bool  # the traditional text is machine-converted (by us with s2t, or upstream)


BOOKS: tuple[Book, ...] = (
    Book("lunyu", "論語", "lunyu/lunyu.json", "simplified", True),
    Book("mengzi", "孟子", "sishuwujing/mengzi.json", "traditional", False),
    Book("daxue", "大學", "sishuwujing/daxue.json", "traditional", False),
    Book("zhongyong", "中庸", "sishuwujing/zhongyong.json", "traditional", False),
    Book("shijing", "詩經", "shijing/shijing.json", "simplified", True),
    Book("chuci", "楚辭", "chuci/chuci.json", "simplified", True),
    # Traditional in the package, but machine-converted upstream: OpenCC forms (爲, 衆) throughout and
    # s2t slips such as 五人墓碑記 "故餘與同社諸君子" (the pronoun 余/予 written 餘).
    Book("guwenguanzhi", "古文觀止", "mengxue/guwenguanzhi.json", "traditional", True),
)
BOOK_BY_KEY = {b.key: b for b in BOOKS}

# Sentence ends: the punctuation that closes a sentence, with any closing quotes right after it.
_SENT_END = re.compile(r"[。！？；!?;][」』”’〞\"']*")
QUOTES = "「」『』“”‘’〝〞\"'《》〈〉"
# What the reviewers found in the source's typography (issue 34): editors' variant notes inside the text, stray
# spaces, half-width punctuation. Removed or made full-width in every paragraph, after the reviewed corrections.
_VARIANT_NOTE = re.compile(r"[(（][^()（）]*(?:一作|通)[：:][^()（）]*[)）]")
_STRAY_SPACE = re.compile(r"(?<=[^\x00-\x7f])[ \u3000]+|[ \u3000]+(?=[^\x00-\x7f])")
_HALF_WIDTH = re.compile(r"(?<=[^\x00-\x7f])[?!,;:]")
_FULL_WIDTH = {"?": "？", "!": "！", ",": "，", ";": "；", ":": "："}


def tidy(para: str) -> str:
    """A paragraph without variant notes or stray spaces, its punctuation after Han text full-width."""
    para = _STRAY_SPACE.sub("", _VARIANT_NOTE.sub("", para))
    return _HALF_WIDTH.sub(lambda m: _FULL_WIDTH[m.group()], para)


MIN_SENTENCE_HAN = 10  # shorter pieces are merged with the next one (e.g. "孟子對曰：「王何必曰利？")


@cache
def converter(config: str):
    """The OpenCC converter of ``config`` (``t2s``, ``s2t``, ``s2tw`` …), made once."""
    return _opencc_module().OpenCC(config)


def _opencc_module():
    try:
        import opencc  # lazy: PyPI opencc (Apache-2.0); a build dependency (pyproject extra "build")
    except ImportError as err:
        raise SourceMissing(f"PyPI package opencc is not importable ({err}); pip install 'ancientbench[build]'") from None
    return opencc


def to_traditional(text: str) -> str:
    """Simplified -> traditional (OpenCC ``s2t``); may err on one-to-many graphs, see the module doc."""
    return converter("s2t").convert(text)


@lru_cache(maxsize=1 << 18)
def fold(text: str) -> str:
    """The comparison key: OpenCC ``t2s`` (many-to-one, so variant forms and conversion choices match)."""
    return converter("t2s").convert(text)


@lru_cache(maxsize=1 << 16)
def variant_key(ch: str) -> str:
    """Folds only variant forms (爲/為, 衆/眾), keeping distinct words apart (後/后, 餘/余): OpenCC ``t2tw``."""
    return converter("t2tw").convert(ch)


@lru_cache(maxsize=1)
def one_to_many() -> dict[str, tuple[str, ...]]:
    """Simplified graph -> its traditional graphs, for those OpenCC's ``STCharacters`` maps to two or more.

    The dictionary ships compiled (``.ocd2``) in the PyPI wheel; its ``opencc_dict`` tool dumps it as text.
    """
    clib = Path(_opencc_module().__file__).parent / "clib"
    tool, ocd2 = clib / "bin" / "opencc_dict", clib / "share" / "opencc" / "STCharacters.ocd2"
    if not (tool.is_file() and ocd2.is_file()):
        raise SourceMissing(f"OpenCC's opencc_dict tool or STCharacters.ocd2 not found under {clib}; install PyPI opencc>=1.1.9")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "STCharacters.txt"
        subprocess.run([str(tool), "-i", str(ocd2), "-o", str(out), "-f", "ocd2", "-t", "text"], check=True, capture_output=True)
        table = {}
        for line in out.read_text(encoding="utf-8").splitlines():
            simplified, _, targets = line.partition("\t")
            forms = tuple(targets.split())
            if len(forms) > 1:
                table[simplified] = forms
    return table


def is_one_to_many(ch: str) -> bool:
    """True when the (traditional or simplified) graph ``ch`` folds to a graph that s2t converts one-to-many."""
    return fold(ch) in one_to_many() or ch in one_to_many()




@lru_cache(maxsize=4)
def tang_bigrams(sources_dir: str | Path) -> frozenset[str]:
    """Folded Han 2-grams of every poem of 全唐詩 in chinese-poetry (about 3 million characters).

    Lines are joined over punctuation, which only adds attestations (the safe side for rejection checks).
    """
    dist = corpus_root(sources_dir)
    files = sorted(dist.glob(TANG_GLOB))
    if not files:
        raise SourceMissing(f"npm {PACKAGE} {VERSION}: no {TANG_GLOB} under {dist}; install it with: {INSTALL_HINT}")
    grams: set[str] = set()
    for f in files:
        for poem in json.loads(f.read_text(encoding="utf-8")):
            for line in poem.get("paragraphs") or []:
                h = converter("t2s").convert(han_only(unicodedata.normalize("NFC", line)))
                grams.update(h[i : i + 2] for i in range(len(h) - 1))
    return frozenset(grams)


@dataclass(frozen=True)
class Sentence:
    book: str  # Book.key
    chapter: str  # traditional chapter label, e.g. "梁惠王上", "國風·周南·關雎"
    chapter_no: int  # 1-based position of the chapter in the book (stable ids)
    passage: int  # 1-based paragraph / stanza index in the chapter
    index: int  # 1-based sentence index in the passage
    original: str  # as in the package
    text: str  # traditional
    ambiguous: frozenset[int] = frozenset()  # positions in ``text`` whose graph's s2t conversion is one-to-many

    @property
    def citation(self) -> str:
        return f"{BOOK_BY_KEY[self.book].title}·{self.chapter}·{self.passage}.{self.index}"


@dataclass(frozen=True)
class Passage:
    book: str
    chapter: str
    chapter_no: int
    index: int
    original: str
    text: str  # traditional
    note: str = ""  # e.g. the original source of a 古文觀止 text, 《左傳》


@dataclass(frozen=True)
class Match:
    book: str
    chapter: str
    passage: int
    how: str  # "original", "traditional" or "folded"

    @property
    def citation(self) -> str:
        return f"{BOOK_BY_KEY[self.book].title}·{self.chapter}·{self.passage}"


def corpus_root(sources_dir: str | Path) -> Path:
    """The ``dist`` folder of the installed package, or SourceMissing with the install command."""
    root = Path(sources_dir) / "node_modules" / PACKAGE
    dist = root / "dist"
    missing = [b.path for b in BOOKS if not (dist / b.path).is_file()]
    if missing:
        raise SourceMissing(
            f"npm {PACKAGE} {VERSION} not found under {root} (missing {', '.join(missing)}); install it with: {INSTALL_HINT}"
        )
    version = json.loads((root / "package.json").read_text(encoding="utf-8")).get("version")
    if version != VERSION:
        raise SourceMissing(f"npm {PACKAGE} {version} at {root}, the build expects {VERSION}; install it with: {INSTALL_HINT}")
    return dist


def _chapters(book: Book, data) -> list[tuple[str, list[str], str]]:
    """(chapter label in the package's script, paragraphs, note) for each chapter of a book file."""
    if book.key in ("daxue", "zhongyong"):
        return [(data["chapter"], data["paragraphs"], "")]
    if book.key in ("lunyu", "mengzi"):
        return [(c["chapter"], c["paragraphs"], "") for c in data]
    if book.key == "shijing":
        return [("·".join((p["chapter"], p["section"], p["title"])), p["content"], "") for p in data]
    if book.key == "chuci":
        return [(p["title"] if p["section"] == p["title"] else f"{p['section']}·{p['title']}", p["content"], "") for p in data]
    if book.key == "guwenguanzhi":
        out = []
        for volume in data["content"]:
            vol = volume["title"].split("・")[0]
            for text in volume["content"]:
                out.append((f"{vol}·{text['chapter'].strip()}", text["paragraphs"], (text.get("source") or "").strip()))
        return out
    raise ValueError(f"no reader for book {book.key!r}")


def split_sentences(text: str, min_han: int = MIN_SENTENCE_HAN) -> list[str]:
    """Split a paragraph at sentence-final punctuation; pieces under ``min_han`` characters join the next."""
    pieces, start = [], 0
    for m in _SENT_END.finditer(text):
        pieces.append(text[start : m.end()])
        start = m.end()
    if text[start:].strip():
        pieces.append(text[start:])
    out: list[str] = []
    buf = ""
    for piece in pieces:
        buf += piece
        if len(han_only(buf)) >= min_han:
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        if out and len(han_only(buf)) < min_han:
            out[-1] += buf.strip()
        else:
            out.append(buf.strip())
    return out


class Corpus:
    """The seven classics, normalised, with frequencies, an n-gram index and lookups."""

    def __init__(self, passages: list[Passage], sentences: list[Sentence], ambiguous_simplified: frozenset[str], max_n: int = 4,
                 pinned: PinnedCounts | None = None):
        self.passages = passages
        self.sentences = sentences
        self.ambiguous_simplified = ambiguous_simplified
        self.max_n = max_n
        # Han-only streams per passage: n-grams never span two passages; punctuation is ignored (conservative:
        # an n-gram across a comma counts as attested).
        self._folded_streams = [fold(han_only(p.text)) for p in passages]
        self._joined = "\n".join(self._folded_streams)
        self.ngrams: dict[int, Counter] = {n: Counter() for n in range(1, max_n + 1)}
        for s in self._folded_streams:
            for n in range(1, max_n + 1):
                self.ngrams[n].update(s[i : i + n] for i in range(len(s) - n + 1))
        # Traditional character frequencies (as written) and folded frequencies (variants merged).
        self.char_freq: Counter = Counter(ch for p in passages for ch in p.text if is_han(ch))
        self.book_char_freq: dict[str, Counter] = defaultdict(Counter)
        for p in passages:
            self.book_char_freq[p.book].update(ch for ch in p.text if is_han(ch))
        # what the builders balance with: the pinned counts when given (a quote fix then moves no other item), else live
        self.pinned = pinned
        self.written_counts: Counter = pinned.written if pinned else self.char_freq
        self.folded_counts: Counter = pinned.folded if pinned else self.ngrams[1]
        texts = {
            "original": [unicodedata.normalize("NFC", p.original) for p in passages],
            "traditional": [p.text for p in passages],
            "folded": [fold(p.text) for p in passages],
        }
        # (with punctuation, Han only) per way of matching
        self._texts = {how: (ts, [han_only(t) for t in ts]) for how, ts in texts.items()}

    # ---- statistics -------------------------------------------------------------------------------
    @property
    def total_chars(self) -> int:
        return sum(self.char_freq.values())

    def attested_chars(self) -> frozenset[str]:
        """Every (traditional) character that occurs in the corpus."""
        return frozenset(self.char_freq)

    def frequency(self, ch: str) -> int:
        """Occurrences of a character, variant forms and conversion choices merged (folded); pinned when loaded so."""
        return self.folded_counts.get(fold(ch), 0)

    def balancing_frequencies(self) -> dict[str, int]:
        """{traditional character: :meth:`frequency`} over the (pinned) written characters: what builders balance with."""
        return {ch: self.frequency(ch) for ch in self.written_counts}

    def count(self, text: str) -> int:
        """Occurrences of a Han string (punctuation ignored, folded) within passages; any length."""
        key = fold(han_only(text))
        if not key:
            return 0
        if len(key) <= self.max_n:
            return self.ngrams[len(key)].get(key, 0)
        return _count_overlapping(self._joined, key)

    def attested(self, text: str) -> bool:
        return self.count(text) > 0

    def display_form(self, ch: str, book: str | None = None) -> str:
        """The traditional form a book (else the corpus) writes most often for the folded graph of ``ch``."""
        if not hasattr(self, "_display_cache"):
            self._display_cache: dict[tuple[str, str | None], str] = {}
        k = (ch, book)
        if k not in self._display_cache:
            self._display_cache[k] = self._display_form(ch, book)
        return self._display_cache[k]

    def _display_form(self, ch: str, book: str | None) -> str:
        key = fold(ch)
        counts = self.book_char_freq.get(book, Counter()) if book else Counter()
        forms = sorted((c for c in self._forms_of(key) if counts.get(c)), key=lambda c: (-counts[c], c))
        if not forms:
            forms = sorted(self._forms_of(key), key=lambda c: (-self.char_freq[c], c))
        return forms[0] if forms else ch

    def _forms_of(self, key: str) -> list[str]:
        if not hasattr(self, "_forms"):
            forms: dict[str, set[str]] = defaultdict(set)
            for c in self.char_freq:
                forms[fold(c)].add(c)
            self._forms = {k: sorted(v) for k, v in forms.items()}
        return self._forms.get(key, [])

    # ---- lookups ------------------------------------------------------------------------------------
    def contains(self, text: str, *, ignore_punctuation: bool = True) -> list[Match]:
        """Where ``text`` occurs: in the package's original script, in the traditional text, or folded.

        Each passage is reported once, with the strictest way it matched. With ``ignore_punctuation``
        (default) only the Han characters of both sides are compared, so punctuation differences between
        editions do not hide a match.
        """
        needle = unicodedata.normalize("NFC", text)
        if ignore_punctuation:
            needle = han_only(needle)
        if not needle:
            return []
        probes = {"original": needle, "traditional": needle, "folded": fold(needle)}
        found: dict[int, str] = {}
        for how in ("original", "traditional", "folded"):
            probe = probes[how]
            hays = self._texts[how][1 if ignore_punctuation else 0]
            for i, hay in enumerate(hays):
                if i not in found and probe in hay:
                    found[i] = how
        return [
            Match(self.passages[i].book, self.passages[i].chapter, self.passages[i].index, how) for i, how in sorted(found.items())
        ]

    def books(self) -> list[Book]:
        return list(BOOKS)


def _count_overlapping(hay: str, needle: str) -> int:
    n, i = 0, hay.find(needle)
    while i >= 0:
        n += 1
        i = hay.find(needle, i + 1)
    return n


CORRECTIONS_FILE = Path(__file__).with_name("classics_corrections.tsv")
DECISIONS = ("correct", "convert", "keep")


@dataclass(frozen=True)
class Correction:
    book: str
    chapter: int  # 1-based, in the package's order
    paragraph: int  # 1-based within the chapter
    context: str  # the package's text around the difference (unique in the paragraph), its own script
    corrected: str  # that text as the received text reads it (equal to ``context`` when kept)
    decision: str  # "correct" (applied), "convert" (applied to the converted text) or "keep" (not an error)
    reading: str  # the package's differing characters (∅: none), as the collation found them
    second_edition: str  # the second edition's characters there (∅: none)
    reason: str


@cache
def corrections() -> tuple[Correction, ...]:
    """Every reviewed difference of ``classics_corrections.tsv``; a malformed line raises ValueError naming it."""
    out = []
    lines = CORRECTIONS_FILE.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != 9 or cells[5] not in DECISIONS or cells[0] not in BOOK_BY_KEY:
            raise ValueError(f"{CORRECTIONS_FILE}:{n}: expected 9 tab-separated cells with a known book and "
                             f"decision {'|'.join(DECISIONS)}, got {line!r}")
        if cells[5] == "convert" and BOOK_BY_KEY[cells[0]].script != "simplified":
            raise ValueError(f"{CORRECTIONS_FILE}:{n}: a convert line fixes what OpenCC converted; {cells[0]} is not converted")
        if cells[5] == "convert" and len(cells[3]) != len(cells[4]):
            raise ValueError(f"{CORRECTIONS_FILE}:{n}: a convert line replaces graph for graph: {cells[3]!r} and "
                             f"{cells[4]!r} differ in length")
        out.append(Correction(cells[0], int(cells[1]), int(cells[2]), *cells[3:]))
    return tuple(out)


def applied_by_place(decision: str = "correct") -> dict[tuple[str, int, int], list[Correction]]:
    """The corrections of one decision (``correct``: before conversion; ``convert``: after it), by place (book,
    chapter, paragraph)."""
    out: dict[tuple[str, int, int], list[Correction]] = {}
    for c in corrections():
        if c.decision == decision:
            out.setdefault((c.book, c.chapter, c.paragraph), []).append(c)
    return out


def reconverted(book: str, chapter_no: int, k: int, texts: list[str], fixes: dict) -> list[str]:
    """One paragraph's converted sentences with its ``convert`` lines applied: OpenCC s2t maps a few graphs one to one
    where a classic writes the simplified-identical graph (桑柔 稼穡卒痒: 痒 sickness, not 癢 itch)."""
    for c in fixes.get((book, chapter_no, k), ()):
        found = sum(t.count(c.context) for t in texts)
        if found != 1:
            raise ValueError(f"{CORRECTIONS_FILE}: {c.book} {c.chapter}.{c.paragraph}: converted text {c.context!r} "
                             f"occurs {found} times in the paragraph, not once")
        texts = [t.replace(c.context, c.corrected) for t in texts]
    return texts


def corrected(book: str, chapter_no: int, k: int, para: str, applied: dict | None = None) -> str:
    """One paragraph with its applied corrections (``applied``: :func:`applied_by_place`, built once by a caller
    that corrects every paragraph); a correction whose context is not found once raises."""
    for c in (applied_by_place() if applied is None else applied).get((book, chapter_no, k), ()):
        if para.count(c.context) != 1:
            raise ValueError(f"{CORRECTIONS_FILE}: {c.book} {c.chapter}.{c.paragraph}: context {c.context!r} "
                             f"occurs {para.count(c.context)} times in the paragraph, not once")
        para = para.replace(c.context, c.corrected)
    return para


FREQUENCIES_FILE = Path(__file__).with_name("classics_frequencies.tsv")


@dataclass(frozen=True)
class PinnedCounts:
    """Character counts frozen at a data version: every builder balances options with these, so a later fix to a
    quote changes only the items that quote it (``ancientbench build --repin`` re-pins them: a data change)."""

    written: Counter  # traditional character as written -> occurrences
    folded: Counter  # folded key (:func:`fold`) -> occurrences, as :meth:`Corpus.frequency` counts them
    note: str  # the header line: when and from what the counts were pinned


def read_pinned_counts(path: Path = FREQUENCIES_FILE) -> PinnedCounts | None:
    """The pinned counts, or None when the file is absent; a malformed line raises DataError naming it."""
    if not path.exists():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    counts: dict[str, Counter] = {"written": Counter(), "folded": Counter()}
    for n, line in enumerate(lines[2:], start=3):
        cells = line.split("\t")
        if len(cells) != 3 or cells[0] not in counts or len(cells[1]) != 1 or not cells[2].isdigit():
            raise DataError(path, n, None, f"expected 'written|folded<TAB>one character<TAB>count', got {line!r}")
        counts[cells[0]][cells[1]] = int(cells[2])
    return PinnedCounts(counts["written"], counts["folded"], lines[0].lstrip("# "))


def write_pinned_counts(corpus: Corpus, note: str, path: Path = FREQUENCIES_FILE) -> Path:
    """Pin the corpus's live counts (not its pinned ones) into ``path``, with ``note`` as the header."""
    rows = [f"written\t{ch}\t{n}" for ch, n in sorted(corpus.char_freq.items())]
    rows += [f"folded\t{ch}\t{n}" for ch, n in sorted(corpus.ngrams[1].items())]
    atomic_write(path, "\n".join([f"# {note}", "kind\tchar\tcount", *rows]) + "\n")
    return path


TITLE_CORRECTIONS_FILE = Path(__file__).with_name("classics_title_corrections.tsv")


@dataclass(frozen=True)
class TitleCorrection:
    book: str
    chapter: int  # 1-based, in the package's order
    title: str  # the chapter label as the conversion gives it (traditional)
    corrected: str  # the received label (equal to ``title`` when kept)
    decision: str  # "correct" (applied) or "keep" (reviewed, not an error)
    reading: str  # the label's graphs in question
    received: str  # the received text's graphs there
    reason: str


@cache
def title_corrections() -> dict[tuple[str, int], TitleCorrection]:
    """Every reviewed chapter title of ``classics_title_corrections.tsv`` by (book, chapter); a malformed line raises."""
    out = {}
    lines = TITLE_CORRECTIONS_FILE.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != 8 or cells[4] not in ("correct", "keep") or cells[0] not in BOOK_BY_KEY or not cells[1].isdigit():
            raise ValueError(f"{TITLE_CORRECTIONS_FILE}:{n}: expected 8 tab-separated cells with a known book, a chapter "
                             f"number and decision correct|keep, got {line!r}")
        if (cells[0], int(cells[1])) in out:
            raise ValueError(f"{TITLE_CORRECTIONS_FILE}:{n}: a second line for {cells[0]} chapter {cells[1]}")
        out[(cells[0], int(cells[1]))] = TitleCorrection(cells[0], int(cells[1]), *cells[2:])
    return out


def corrected_title(book: str, chapter_no: int, label: str) -> str:
    """The received label of a chapter (``label`` as converted); a reviewed line whose title is not ``label`` raises."""
    c = title_corrections().get((book, chapter_no))
    if c is None:
        return label
    if c.title != label:
        raise ValueError(f"{TITLE_CORRECTIONS_FILE}: {book} chapter {chapter_no} is {label!r} in the package, "
                         f"the file reviewed {c.title!r}")
    return c.corrected if c.decision == "correct" else label


@lru_cache(maxsize=8)
def load_corpus(sources_dir: str | Path, pinned: bool = True) -> Corpus:
    """Read and normalise the seven classics (cached per sources folder); ``pinned``: balance with
    :data:`FREQUENCIES_FILE` where it exists, else with the live counts."""
    dist = corpus_root(sources_dir)
    applied = applied_by_place()
    raw: list[tuple[Book, str, int, int, str, str]] = []
    for book in BOOKS:
        data = json.loads((dist / book.path).read_text(encoding="utf-8"))
        for chapter_no, (chapter, paragraphs, note) in enumerate(_chapters(book, data), start=1):
            chapter_t = to_traditional(chapter) if book.script == "simplified" else chapter
            chapter_t = corrected_title(book.key, chapter_no, chapter_t)
            for k, para in enumerate(paragraphs, start=1):
                para = tidy(unicodedata.normalize("NFC", corrected(book.key, chapter_no, k, para.strip(), applied)))
                if han_only(para):
                    raw.append((book, chapter_t, chapter_no, k, para, note))
    ambiguous = frozenset(one_to_many())
    passages: list[Passage] = []
    sentences: list[Sentence] = []
    fixes = applied_by_place("convert")
    for book, chapter, chapter_no, k, para, note in raw:
        pieces = split_sentences(para)
        converted = reconverted(book.key, chapter_no, k, [to_traditional(p) for p in pieces], fixes) if book.script == "simplified" else []
        texts = []
        for j, piece in enumerate(pieces, start=1):
            if book.script == "simplified":
                text = converted[j - 1]
                amb = frozenset(i for i, (ch, tc) in enumerate(zip(piece, text)) if ch in ambiguous or (is_han(tc) and is_one_to_many(tc)))
                if len(text) != len(piece):  # OpenCC maps graph to graph; a length change would break positions
                    amb = frozenset(range(len(text)))
            elif book.converted:  # converted upstream: flag graphs whose conversion could have gone either way
                text = piece
                amb = frozenset(i for i, ch in enumerate(piece) if is_han(ch) and is_one_to_many(ch))
            else:
                text, amb = piece, frozenset()
            texts.append(text)
            sentences.append(Sentence(book.key, chapter, chapter_no, k, j, piece, text, amb))
        passages.append(Passage(book.key, chapter, chapter_no, k, para, "".join(texts), note))
    return Corpus(passages, sentences, ambiguous, pinned=read_pinned_counts() if pinned else None)


__all__ = [
    "BOOKS",
    "INSTALL_HINT",
    "SOURCE_LABEL",
    "Corpus",
    "Correction",
    "FREQUENCIES_FILE",
    "PinnedCounts",
    "corrected",
    "corrected_title",
    "corrections",
    "read_pinned_counts",
    "write_pinned_counts",
    "Match",
    "Passage",
    "Sentence",
    "corpus_root",
    "fold",
    "is_one_to_many",
    "load_corpus",
    "one_to_many",
    "split_sentences",
    "tang_bigrams",
    "title_corrections",
    "to_traditional",
    "variant_key",
]
