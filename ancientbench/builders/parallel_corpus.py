"""A user's classical/modern parallel corpus as a separate translation config, ``translation_parallel``.

``ancientbench build translation --parallel-corpus DIR --out MYDATA`` reads every ``bitext.txt`` under
DIR in the ``古文：… / 现代文：…`` format (NiuTrans/Classical-Modern and its sample in
``../shared/sources/classical-modern-sample``) and writes ``MYDATA/data/translation_parallel/{test,dev}.jsonl``.
The corpus's translations are the user's (their rights are the user's business), so this config is built
on request and never committed; it lives only in the user's output folder.

Recipe (DATA-SOURCES §3.10): the answer is the aligned modern sentence; the three distractors are the
modern translations of other sentences of the same book, those sharing as many characters with the
classical sentence as the answer does first (so word overlap with the question does not give the answer
away), then the nearest neighbours in the same text, restricted to similar lengths (so length never gives the answer away) and to character-level similarity < 0.9 with the
answer and with each other (difflib ratio), never the translation of an identical classical sentence.
Pairs that are too short or too long, or for which no three such distractors exist, are dropped and
counted.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..han import count_han
from .common import BuildResult, Candidate, length_giveaway, split_dev_test, task_rng
from .curated import in_script, item_script

TASK = "translation"
CONFIG = "translation_parallel"
MAX_SIMILARITY = 0.9
MIN_HAN, MAX_HAN = 6, 80  # classical side
MIN_MODERN, MAX_MODERN = 8, 160  # modern side
LENGTH_BAND = 0.3  # a distractor's length is within ±30% of the answer's
_ANCIENT = re.compile(r"^\s*古文[：:](.*)$")
_MODERN = re.compile(r"^\s*现代文[：:](.*)$")


@dataclass(frozen=True)
class Pair:
    file: str  # bitext path relative to the corpus root, e.g. 双语数据/论语/学而篇/bitext.txt
    index: int  # 1-based pair number in the file
    ancient: str
    modern: str

    @property
    def work(self) -> str:
        parts = Path(self.file).parent.parts
        parts = parts[1:] if parts and parts[0] == "双语数据" else parts
        return "·".join(parts) or Path(self.file).parent.name

    @property
    def key(self) -> str:
        digest = hashlib.sha1(f"{self.file}\n{self.index}\n{self.ancient}".encode()).hexdigest()[:12]
        return f"parallel-{digest}"


def _clean(text: str) -> str:
    return re.sub(r"\s+", "", text)


def read_bitext(path: Path, root: Path) -> list[Pair]:
    """The (古文, 现代文) pairs of one file, in order; a 古文 line without its 现代文 line is skipped."""
    pairs: list[Pair] = []
    pending: str | None = None
    rel = str(path.relative_to(root))
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _ANCIENT.match(line)
        if m:
            pending = _clean(m.group(1))
            continue
        m = _MODERN.match(line)
        if m and pending is not None:
            pairs.append(Pair(rel, len(pairs) + 1, pending, _clean(m.group(1))))
            pending = None
    return pairs


def read_corpus(root: str | Path) -> list[list[Pair]]:
    """Every bitext.txt under ``root`` (sorted paths), as lists of pairs."""
    root = Path(root)
    files = sorted(root.rglob("bitext.txt"))
    if not files:
        raise FileNotFoundError(f"no bitext.txt (古文：… / 现代文：… pairs) under {root}")
    return [read_bitext(f, root) for f in files]


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def question(ancient: str) -> str:
    script = item_script(ancient)
    return in_script("下列哪一項是「", script) + ancient + in_script("」的正確現代漢語翻譯？", script)


def _overlap(a: frozenset[str], text: str) -> int:
    return len(a & set(text))


def pick_distractors(pairs: list[Pair], i: int, pool: list[Pair] | None = None) -> tuple[str, str, str] | None:
    """Three translations of other sentences (same text first, then the rest of ``pool``, the same book).

    Candidates are ranked so that the answer does not stand out by the characters it shares with the
    classical sentence (names, key words): first those sharing at least as many characters with it as the
    answer does, then nearest in the text. Each must be within ±30% of the answer's length and have
    similarity < 0.9 with the answer and with the other distractors."""
    target = pairs[i]
    answer = target.modern
    n = len(answer)
    q = frozenset(target.ancient)
    need = _overlap(q, answer)
    def fits(p: Pair) -> bool:
        m = len(p.modern)
        return MIN_MODERN <= m <= MAX_MODERN and abs(m - n) <= LENGTH_BAND * n and p.ancient != target.ancient

    others = [(0, abs(j - i), p) for j, p in enumerate(pairs) if j != i and fits(p)]
    if pool:
        own = set(id(p) for p in pairs)
        others += [(1, k, p) for k, p in enumerate(pool) if id(p) not in own and fits(p)]
    ranked = sorted(others, key=lambda t: (-min(_overlap(q, t[2].modern), need), t[0], t[1]))
    chosen: list[str] = []
    for _, _, cand in ranked:
        text = cand.modern
        if text == answer or text in chosen:
            continue
        if similarity(text, answer) >= MAX_SIMILARITY or any(similarity(text, c) >= MAX_SIMILARITY for c in chosen):
            continue
        chosen.append(text)
        if len(chosen) == 3:
            if length_giveaway(answer, chosen):
                chosen.pop()
                continue
            return tuple(chosen)  # type: ignore[return-value]
    return None


def build_from(root: str | Path, seed: int) -> BuildResult:
    dropped: Counter = Counter()
    cands: list[Candidate] = []
    seen: set[str] = set()
    total = 0
    files = read_corpus(root)
    books: dict[str, list[Pair]] = {}
    for pairs in files:
        for p in pairs:
            books.setdefault(p.work.split("·")[0], []).append(p)
    for pairs in files:
        for i, p in enumerate(pairs):
            total += 1
            if not (MIN_HAN <= count_han(p.ancient, unified_only=True) <= MAX_HAN) or not (MIN_MODERN <= len(p.modern) <= MAX_MODERN):
                dropped["sentence too short or too long"] += 1
                continue
            if p.ancient in seen:
                dropped["classical sentence already used"] += 1
                continue
            ds = pick_distractors(pairs, i, books.get(p.work.split("·")[0]))
            if ds is None:
                dropped["no three distractors pass the length and similarity checks"] += 1
                continue
            seen.add(p.ancient)
            cands.append(
                Candidate(
                    key=p.key,
                    question=question(p.ancient),
                    answer=p.modern,
                    distractors=ds,
                    source=f"user-supplied parallel corpus ({Path(root).name})",
                    citation=f"{p.work} #{p.index}",
                    explanation="aligned modern translation from the user's corpus; distractors are translations of other sentences of the same text",
                )
            )
    if len(cands) < 6:
        raise ValueError(f"{root}: only {len(cands)} usable pairs; a translation_parallel config needs at least 6")
    rng = task_rng(CONFIG, seed)
    dev_keys = tuple(c.key for c in rng.sample(cands, 5))
    dev, test = split_dev_test(TASK, cands, dev_keys, seed)
    return BuildResult(task=TASK, test=test, dev=dev, dropped=dropped, candidates=total, config=CONFIG)


def build_variants(ctx):
    """The ``translation_parallel`` config from ``ctx.parallel_corpus`` (one BuildResult)."""
    return [build_from(ctx.parallel_corpus, ctx.seed)]
