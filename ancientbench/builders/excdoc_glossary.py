"""The ``excdoc_word`` field glossary (``curated/excdoc_glossary.jsonl``) and how an item's options come from it.

Each glossary entry is one term with a short modern-Chinese definition, its field and an optional ``group`` of
near-synonyms. :func:`resolve` fills an item's answer, three distractors and rationale: definitions of *other*
terms of the same field, never of its group, chosen for all items of the curated file together (:func:`plan`) or,
for a single item, deterministically from the siblings nearest in length (:func:`draw`). The curated-file reader
(:mod:`.curated`) calls :func:`resolve` while validating, and the builder (:mod:`.excdoc_word`) reads the result.
"""

from __future__ import annotations

import hashlib
import json
import random
from functools import lru_cache
from itertools import combinations
from pathlib import Path

from ..paths import CURATED_DIR, record
from ..quality.strategies import chars as _chars
from ..schema import DataError
from .common import length_giveaway

TASK = "excdoc_word"  # seeds the draw
GLOSSARY_NAME = "excdoc_glossary.jsonl"
GLOSS_KEYS: tuple[str, ...] = ("id", "term", "field", "group", "definition", "source")
# Distractors come from this many same-field siblings nearest in length to the key (then a seeded pick).
POOL = 6
def _alnum_len(text: str) -> int:
    return sum(1 for ch in text if ch.isalnum())


def glossary_path(items_file: str | Path | None = None) -> Path:
    """The glossary beside the items file when there is one there, else the package's own."""
    if items_file is not None:
        beside = Path(items_file).with_name(GLOSSARY_NAME)
        if beside.is_file():
            return beside
    return record(CURATED_DIR) / GLOSSARY_NAME


def load_glossary(path: str | Path | None = None) -> dict[str, dict]:
    p = Path(path) if path else record(CURATED_DIR) / GLOSSARY_NAME
    return dict(_load_glossary(str(p), p.stat().st_mtime_ns if p.is_file() else 0))


@lru_cache(maxsize=8)
def _load_glossary(path: str, _mtime: int) -> tuple[tuple[str, dict], ...]:
    """Read and validate the glossary: keys in order, unique ids and definitions, every field ≥ 4 groups."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, None, None, "missing excdoc_word glossary")
    rows: dict[str, dict] = {}
    defs: dict[str, int] = {}
    lines: dict[str, int] = {}
    with p.open(encoding="utf-8") as fh:
        for n, text in enumerate(fh, start=1):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                raise DataError(p, n, None, f"not valid JSON: {e.msg}") from None
            if not isinstance(obj, dict) or tuple(obj) != GLOSS_KEYS:
                raise DataError(p, n, None, f"expected an object with keys {', '.join(GLOSS_KEYS)} in that order")
            for k in GLOSS_KEYS:
                v = obj[k]
                if not isinstance(v, str) or v != v.strip() or "\n" in v or (k != "group" and not v):
                    raise DataError(p, n, k, "must be a non-empty single-line string without outer spaces")
            if obj["id"] in rows:
                raise DataError(p, n, "id", f"duplicate id {obj['id']!r} (first at line {lines[obj['id']]})")
            if not obj["id"].startswith(obj["term"]):
                raise DataError(p, n, "id", f"id {obj['id']!r} must be the term, optionally with a '#sense' suffix")
            if obj["definition"] in defs:
                raise DataError(p, n, "definition", f"same definition as line {defs[obj['definition']]}")
            defs[obj["definition"]] = n
            lines[obj["id"]] = n
            rows[obj["id"]] = obj
    for field in {r["field"] for r in rows.values()}:
        groups = {r["group"] or r["id"] for r in rows.values() if r["field"] == field}
        if len(groups) < 4:
            first = min(lines[i] for i, r in rows.items() if r["field"] == field)
            raise DataError(p, first, "field", f"field {field!r} has {len(groups)} groups; a term needs 3 siblings")
    return tuple(rows.items())


def siblings(gloss: dict, glossary: dict[str, dict]) -> list[dict]:
    """Entries that may serve as distractors for ``gloss``: same field, other group, other term."""
    own = gloss["group"] or gloss["id"]
    return [
        s for s in glossary.values()
        if s["field"] == gloss["field"] and (s["group"] or s["id"]) != own and s["term"] != gloss["term"]
    ]


def candidate_triples(key: str, gloss: dict, glossary: dict[str, dict], question_text: str = "") -> list[list[dict]]:
    """The admissible distractor triples for item ``key``, best first: three sibling entries of three different
    groups among the POOL nearest in length, in an order seeded by the key; triples whose key option neither
    stands out by length nor alone shares most characters with the question (the audit's
    ``question_overlap``) come first, then those without a length giveaway, then the rest."""

    target = _alnum_len(gloss["definition"])

    def h(s: dict) -> str:
        return hashlib.sha256(f"{TASK}:{key}:{s['id']}".encode()).hexdigest()

    ranked = sorted(siblings(gloss, glossary), key=lambda s: (abs(_alnum_len(s["definition"]) - target), h(s)))
    if len(ranked) < 3:
        return [ranked]
    # at most one sibling per group: two synonymous distractors would rule each other out
    triples = [list(t) for t in combinations(ranked[:POOL], 3) if len({s["group"] or s["id"] for s in t}) == 3]
    if not triples:
        distinct: list[dict] = []
        for s in ranked:
            if (s["group"] or s["id"]) not in {d["group"] or d["id"] for d in distinct}:
                distinct.append(s)
        triples = [distinct[:3]] if len(distinct) >= 3 else [ranked[:3]]
    random.Random(int(hashlib.sha256(f"{TASK}:{key}".encode()).hexdigest()[:16], 16)).shuffle(triples)
    ranks = _ranks(triples, gloss, question_text)
    return [t for _, t in sorted(zip(ranks, triples), key=lambda rt: rt[0])]  # stable: the seeded order within each rank


def draw(key: str, gloss: dict, glossary: dict[str, dict], question_text: str = "") -> list[dict]:
    """The first candidate triple for one item on its own (:func:`candidate_triples`)."""
    return candidate_triples(key, gloss, glossary, question_text)[0]


def plan(entries: list[dict], glossary: dict[str, dict], passes: int = 30) -> dict[str, list[dict]]:
    """Distractors for every entry of the items file, chosen together so no definition becomes a recognisable
    filler and a key is not the rarest option of its item. First, items in file order take, among their
    best-ranked candidate triples, the one whose definitions have appeared least so far; then up to ``passes``
    repair rounds move an item whose key would be the least frequent of its four options (over the whole task)
    to another good triple that holds a definition no more frequent than the key. Without this, "pick the least
    frequent option" found the key in 37.9% of items (audit, 2026-12-01)."""
    cands: dict[str, list[list[dict]]] = {}
    good: dict[str, list[list[dict]]] = {}
    for e in entries:
        gloss = glossary.get(e["gloss"])
        if gloss is None:
            continue
        cands[e["key"]] = candidate_triples(e["key"], gloss, glossary, question(e))
        ranks = _ranks(cands[e["key"]], gloss, question(e)) if len(cands[e["key"]][0]) == 3 else [0]
        good[e["key"]] = [t for t, r in zip(cands[e["key"]], ranks) if r <= min(1, min(ranks))] or cands[e["key"]][:1]
    freq: dict[str, int] = {}
    for e in entries:
        if e["key"] in cands:
            freq[e["gloss"]] = freq.get(e["gloss"], 0) + 1
    out: dict[str, list[dict]] = {}
    for e in entries:
        if e["key"] not in cands:
            continue
        best = [t for t in good[e["key"]] if _ranks([t], glossary[e["gloss"]], question(e))[0] == 0] or good[e["key"]]
        pick = min(best, key=lambda t: (min(freq.get(s["id"], 0) for s in t), sum(freq.get(s["id"], 0) for s in t), best.index(t)))
        for s in pick:
            freq[s["id"]] = freq.get(s["id"], 0) + 1
        out[e["key"]] = pick
    for _ in range(passes):
        moved = 0
        for e in entries:
            key = e["key"]
            if key not in out:
                continue
            own = freq.get(e["gloss"], 0)
            if min(freq.get(s["id"], 0) for s in out[key]) <= own:
                continue
            for s in out[key]:
                freq[s["id"]] -= 1
            better = [t for t in good[key] if min(freq.get(s["id"], 0) + 1 for s in t) <= own]
            if better:
                out[key] = min(better, key=lambda t: (min(freq.get(s["id"], 0) for s in t), good[key].index(t)))
                moved += 1
            for s in out[key]:
                freq[s["id"]] = freq.get(s["id"], 0) + 1
        # a key still rarer than all its distractors: use its definition as a distractor of another item
        by_gloss = {e["key"]: e["gloss"] for e in entries if e["key"] in out}
        for key, g in by_gloss.items():
            if min(freq.get(s["id"], 0) for s in out[key]) <= freq.get(g, 0):
                continue
            for other, og in by_gloss.items():
                if other == key:
                    continue
                options = [t for t in good[other] if g in {s["id"] for s in t} and t != out[other]]
                if not options:
                    continue
                t = options[0]
                after = dict(freq)
                for s in out[other]:
                    after[s["id"]] -= 1
                for s in t:
                    after[s["id"]] = after.get(s["id"], 0) + 1
                if min(after[s["id"]] for s in t) > after.get(og, 0):
                    continue  # would make the other item's key the rarest instead
                out[other], freq, moved = t, after, moved + 1
                break
        if not moved:
            break
    return out


def _ranks(triples: list[list[dict]], gloss: dict, question_text: str) -> list[int]:
    """Per triple: 2 if the key stands out by length, 1 if the key alone shares most characters with the
    question (the audit's ``question_overlap``), else 0."""
    q = set(_chars(question_text))
    ranks = []
    for t in triples:
        if length_giveaway(gloss["definition"], [s["definition"] for s in t]):
            ranks.append(2)
            continue
        overlap = [len(set(_chars(o)) & q) for o in [gloss["definition"], *(s["definition"] for s in t)]]
        ranks.append(1 if overlap[0] > max(overlap[1:]) else 0)
    return ranks


@lru_cache(maxsize=4)
def _file_plan(path: str, _mtime: int, _gmtime: int) -> dict[str, tuple[str, ...]]:
    glossary = load_glossary(glossary_path(path))
    entries = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue  # the validator reports the line
            if isinstance(obj, dict) and isinstance(obj.get("key"), str) and isinstance(obj.get("gloss"), str):
                entries.append(obj)
    return {k: tuple(s["id"] for s in t) for k, t in plan(entries, glossary).items()}


def resolve(obj: dict, file: str | Path, line: int | None) -> dict:
    """The item with ``answer``, ``distractors`` and ``rationale`` filled from the glossary."""
    glossary = load_glossary(glossary_path(file))
    gloss = glossary.get(obj["gloss"])
    if gloss is None:
        raise DataError(file, line, "gloss", f"unknown glossary id {obj['gloss']!r}")
    path = Path(file)
    planned = None
    if path.is_file() and path.name == "excdoc_word.jsonl":  # the curated file: options chosen for all items together
        planned = _file_plan(str(path), path.stat().st_mtime_ns, glossary_path(file).stat().st_mtime_ns).get(obj["key"])
    picked = [glossary[i] for i in planned] if planned else draw(obj["key"], gloss, glossary, question(obj))
    if len(picked) < 3:
        raise DataError(file, line, "gloss", f"field {gloss['field']!r} has fewer than 3 siblings for {gloss['id']!r}")
    others = "、".join(f"「{s['term']}」" for s in picked)
    rationale = f"「{gloss['term']}」（{gloss['field']}）：{gloss['definition']}；其餘三項依次是{others}的意思（{gloss['source']}）"
    return {**obj, "answer": gloss["definition"], "distractors": [s["definition"] for s in picked], "rationale": rationale}


def question(entry) -> str:
    word, ctx, doc = entry["word"], entry["context"], entry["document"]
    if ctx == word:
        return f"{doc}中「{word}」一詞的意思是？"
    return f"{doc}「{ctx}」中「{word}」一詞的意思是？"
