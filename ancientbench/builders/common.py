"""What every builder shares: seeded option placement, the item record, the dev/test split, drop counts.

A builder proposes (key, question, answer, distractors, provenance) candidates whose answer it has
checked against the source and whose distractors it has proven wrong; this module turns them into
schema rows with balanced answer letters, deterministically for a given seed and item by item (one item's
change moves no other item's options).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..schema import FIELDS, split_file, validate_rows, write_jsonl
from ..tasks import LETTERS


@dataclass(frozen=True)
class Candidate:
    key: str  # what the item is about (a character, a sentence id); unique within a task, used in the id
    question: str
    answer: str
    distractors: tuple[str, str, str]
    source: str
    citation: str
    explanation: str = ""
    subset: str = ""


@dataclass
class BuildResult:
    task: str
    test: list[dict[str, str]]
    dev: list[dict[str, str]]
    dropped: Counter = field(default_factory=Counter)  # reason -> number of candidates dropped
    candidates: int = 0
    config: str | None = None  # folder name when it differs from the task (user-built variants, e.g. "radical_shuowen")


def task_rng(task: str, seed: int) -> random.Random:
    """A random generator private to one task, so building one task never changes another's output."""
    digest = hashlib.sha256(f"{task}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _item_rng(task: str, seed: int, key: str) -> random.Random:
    """A generator private to one item: its letters never depend on which other items were built."""
    digest = hashlib.sha256(f"{task}:{seed}:{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def balanced_letters(keys: list[str], task: str, seed: int) -> dict[str, str]:
    """{key: answer letter}: every letter within one of n/4, each item as close to its own seeded preference as
    the balance allows. Items propose to letters in their hashed order and a full letter keeps the items it
    ranks first (deferred acceptance), so adding or removing one item moves a short chain of others, not all."""
    prefs = {k: _item_rng(task, seed, k).sample(LETTERS, len(LETTERS)) for k in keys}
    rank = {(L, k): hashlib.sha256(f"{task}:{seed}:{L}:{k}".encode()).digest() for L in LETTERS for k in keys}
    extra = task_rng(task, seed).sample(LETTERS, len(LETTERS))[: len(keys) % len(LETTERS)]
    capacity = {L: len(keys) // len(LETTERS) + (L in extra) for L in LETTERS}
    held: dict[str, list[str]] = {L: [] for L in LETTERS}
    proposed = {k: 0 for k in keys}
    free = sorted(keys)
    while free:
        k = free.pop()
        L = prefs[k][proposed[k]]
        proposed[k] += 1
        held[L].append(k)
        if len(held[L]) > capacity[L]:
            held[L].sort(key=lambda x: rank[L, x])
            free.append(held[L].pop())
    return {k: L for L, ks in held.items() for k in ks}


def place_options(cands: list[Candidate], task: str, seed: int) -> list[dict[str, str]]:
    """Turn candidates into rows: balanced answer letters (:func:`balanced_letters`), distractors in an order
    seeded by the item's key, so a change to one item leaves every other item's letters as they were."""
    if len({c.key for c in cands}) != len(cands):
        raise ValueError(f"{task}: two candidates share a key, so their ids would collide")
    golds = balanced_letters([c.key for c in cands], task, seed)
    rows: list[dict[str, str]] = []
    for c in cands:
        if len({c.answer, *c.distractors}) != 4:
            raise ValueError(f"{task} candidate {c.key!r}: the answer and distractors are not four distinct options")
        gold = golds[c.key]
        others = list(c.distractors)
        _item_rng(task, seed, c.key).shuffle(others)
        options = {letter: c.answer if letter == gold else others.pop() for letter in LETTERS}
        rows.append(
            {
                "id": f"{task}-{c.key}",
                "task": task,
                "question": c.question,
                **options,
                "answer": gold,
                "subset": c.subset,
                "source": c.source,
                "citation": c.citation,
                "explanation": c.explanation,
            }
        )
    return rows


def split_dev_test(
    task: str, cands: list[Candidate], dev_keys: tuple[str, ...], seed: int
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Put the five hand-checked exemplars (by key) in dev and everything else in test, never both."""
    by_key = {c.key: c for c in cands}
    missing = [k for k in dev_keys if k not in by_key]
    if missing:
        raise ValueError(f"{task}: dev exemplar keys not among the built candidates: {missing}")
    dev = place_options([by_key[k] for k in dev_keys], task, seed + 1)
    test = place_options([c for c in cands if c.key not in set(dev_keys)], task, seed)
    return dev, test


def write_result(result: BuildResult, out_dir: str | Path) -> list[Path]:
    """Validate and write one task's splits into a dataset folder; return the paths written."""
    paths = []
    for split, rows in (("test", result.test), ("dev", result.dev)):
        path = split_file(out_dir, result.config or result.task, split)
        validate_rows(rows, path, task=result.task)
        write_jsonl(path, rows)
        paths.append(path)
    return paths


__all__ = [
    "FIELDS",
    "BuildResult",
    "Candidate",
    "balanced_letters",
    "place_options",
    "split_dev_test",
    "task_rng",
    "write_result",
]

# Quotation marks as the sources print them: opening -> closing.
QUOTE_PAIRS = {"「": "」", "『": "』", "“": "”", "‘": "’"}
_OPENING_OF = {c: o for o, c in QUOTE_PAIRS.items()}


def unpaired_quotes(text: str) -> list[int]:
    """Positions of the quotation marks in ``text`` whose partner lies outside it (a quotation opened and not closed,
    or closed and not opened), in order."""
    stack: list[int] = []
    unpaired: list[int] = []
    for i, ch in enumerate(text):
        if ch in QUOTE_PAIRS:
            stack.append(i)
        elif ch in _OPENING_OF:
            if stack and text[stack[-1]] == _OPENING_OF[ch]:
                stack.pop()
            else:
                unpaired.append(i)
    return sorted(unpaired + stack)


def as_excerpt(text: str) -> str:
    """A quoted passage as a question shows it: without the quotation marks whose partner lies outside the passage.
    Punctuation is the editor's, not the received text's, and a mark left open reads as a quotation cut short
    (「宮之奇諫曰：“虢，虞之表也。」 -> 「宮之奇諫曰：虢，虞之表也。」); every character is kept."""
    drop = set(unpaired_quotes(text))
    return "".join(ch for i, ch in enumerate(text) if i not in drop)


# Length giveaway: the answer is the unique longest (or shortest) option and differs from the nearest
# option by at least LENGTH_MIN_GAP characters and LENGTH_MAX_RATIO of its own length.
LENGTH_MIN_GAP = 3
LENGTH_MAX_RATIO = 0.25


def _length(text: str) -> int:
    """Length of an option without spaces and punctuation (what a reader sees as its size)."""
    return sum(1 for ch in text if ch.isalnum())


def length_giveaway(answer: str, distractors: list[str]) -> str | None:
    """Why the answer's length gives it away, or None: unique longest/shortest by a clear margin."""
    a = _length(answer)
    others = [_length(d) for d in distractors]
    if a > max(others):
        gap = a - max(others)
        if gap >= LENGTH_MIN_GAP and gap >= LENGTH_MAX_RATIO * a:
            return f"the answer is the longest option by {gap} characters ({a} vs at most {max(others)})"
    if a < min(others):
        gap = min(others) - a
        if gap >= LENGTH_MIN_GAP and gap >= LENGTH_MAX_RATIO * min(others):
            return f"the answer is the shortest option by {gap} characters ({a} vs at least {min(others)})"
    return None
