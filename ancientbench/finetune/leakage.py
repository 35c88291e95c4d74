"""What the fine-tuning data must not contain (:func:`held_out_targets`: every target, fact and sentence of the
benchmark's test items and the team-curated files) and the leakage check over finished pairs (:func:`find_leaks`)."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..builders.curated import CURATED_TASKS
from ..han import han_only
from ..paths import CURATED_DIR, DATASET_PATH
from ..schema import DataError, load_split, read_jsonl, validate_rows
from ..sources.classics import fold
from ..tasks import TASK_BY_NAME, TASK_NAMES
from .kinds import FORMAT_VERSION, KIND_BY_NAME, NGRAM, QUOTED, FinetuneDataError, Pair

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------------- held out


@dataclass(frozen=True)
class Fact:
    item: str  # benchmark item id
    target: str
    gold: str


@dataclass
class HeldOut:
    """Everything the fine-tuning data must not contain, with the benchmark items it comes from."""

    chars: dict[str, list[str]] = field(default_factory=dict)  # character -> item ids
    words: dict[str, list[str]] = field(default_factory=dict)  # multi-character word -> item ids
    facts: list[Fact] = field(default_factory=list)
    sentences: dict[str, list[str]] = field(default_factory=dict)  # folded Han text -> item ids
    files: dict[str, str] = field(default_factory=dict)  # file read -> sha256
    items: Counter = field(default_factory=Counter)  # config or curated file -> items read
    ngram: int = NGRAM

    def add_char(self, ch: str, item: str) -> None:
        if len(ch) == 1:
            self.chars.setdefault(ch, []).append(item)
        elif ch:
            self.words.setdefault(ch, []).append(item)

    def add_sentence(self, text: str, item: str) -> None:
        key = _fold_han(text)
        if key:
            self.sentences.setdefault(key, []).append(item)

    # -- lookups built once ------------------------------------------------------------------------
    def _index(self):
        if getattr(self, "_idx", None) is None:
            grams: dict[str, str] = {}
            short: dict[str, str] = {}
            for s, items in self.sentences.items():
                if len(s) < self.ngram:
                    short.setdefault(s, items[0])
                for i in range(len(s) - self.ngram + 1):
                    grams.setdefault(s[i : i + self.ngram], items[0])
            by_target: dict[str, list[Fact]] = defaultdict(list)
            for f in self.facts:
                by_target[f.target].append(f)
            self._idx = (grams, short, dict(by_target))
            self._short_by_first: dict[str, list[tuple[int, str]]] = defaultdict(list)  # first character -> (rank, sentence)
            for n, s in enumerate(short):
                self._short_by_first[s[0]].append((n, s))
            self._slices: list[slice] = []
        return self._idx

    def sentence_overlap(self, text: str) -> tuple[str, str] | None:
        """(item id, shared run) when the folded Han text of ``text`` overlaps a held-out sentence, else None."""
        grams, short, _ = self._index()
        folded = _fold_han(text)
        windows = len(folded) - self.ngram + 1
        if windows > 0:
            while len(self._slices) < windows:  # slice objects reused, so the scan runs in C (map + isdisjoint)
                self._slices.append(slice(len(self._slices), len(self._slices) + self.ngram))
            if not grams.keys().isdisjoint(map(folded.__getitem__, self._slices[:windows])):
                for sl in self._slices[:windows]:
                    if folded[sl] in grams:
                        return grams[folded[sl]], folded[sl]
        # the first short sentence (in held-out order) inside the text, trying only those starting with one of its characters
        inside = [hit for c in set(folded) for hit in self._short_by_first.get(c, ()) if hit[1] in folded]
        if inside:
            s = min(inside)[1]
            return short[s], s
        return None

    def summary(self) -> dict:
        by_task: dict[str, int] = Counter()
        for ids in (*self.chars.values(), *self.words.values(), *self.sentences.values()):
            for i in set(ids):
                by_task[_item_origin(i)] += 1
        return {
            "characters": len(self.chars),
            "words": len(self.words),
            "facts": len(self.facts),
            "sentences": len(self.sentences),
            "items_read": dict(sorted(self.items.items())),
            "files_sha256": dict(sorted(self.files.items())),
            "ngram": self.ngram,
        }


def _item_origin(item_id: str) -> str:
    return item_id.split("-", 1)[0]


def _fold_han(text: str) -> str:
    return fold(han_only(text))


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _key_char(item: dict) -> str:
    """The character named by a character item's id: ``radical-河`` -> 河, ``radical_meaning-gy-一`` -> 一."""
    key = item["id"][len(item["task"]) + 1 :] if item["id"].startswith(item["task"] + "-") else item["id"]
    return key.rsplit("-", 1)[-1]


def add_test_items(held: HeldOut, rows: Sequence[dict], file: str | Path) -> None:
    """Add the targets, facts and sentences of benchmark test rows (any mix of tasks) to ``held``."""
    for n, it in enumerate(rows, start=1):
        task, item = it["task"], it["id"]
        gold = it[it["answer"]]
        quoted = QUOTED.findall(it["question"])
        rule = TASK_BY_NAME[task].hold_out if task in TASK_BY_NAME else "quoted"
        if rule == "character" and it.get("subset") != "in_context":  # an in-context item asks a word in a sentence
            if not quoted:
                raise DataError(file, n, "question", f"{task} item {item!r}: no 「…」 names its target character")
            targets = {quoted[0], _key_char(it)}
            for t in sorted(targets):
                held.add_char(t, item)
                held.facts.append(Fact(item, t, gold))
        elif rule == "cloze":
            sent = next((s for s in quoted if "＿" in s), None)
            if sent is None:
                raise DataError(file, n, "question", f"{task} item {item!r}: no 「…」 with a blank ＿")
            held.add_sentence(sent.replace("＿", gold), item)
        elif rule == "sentence":
            if not quoted:
                raise DataError(file, n, "question", f"{task} item {item!r}: no 「…」 holds the sentence")
            held.add_sentence(max(quoted, key=len), item)
            held.add_sentence(gold, item)
        elif rule == "loan":
            if len(quoted) < 2:
                raise DataError(file, n, "question", f"{task} item {item!r}: expected 「context」…「loan」")
            held.add_sentence(quoted[0], item)
            held.add_char(quoted[-1], item)
            held.facts.append(Fact(item, quoted[-1], gold))
        else:  # "quoted", and a character item asked in context: every quoted span, conservatively
            for s in quoted:
                if len(s) <= 4:
                    held.add_char(s, item)
                    held.facts.append(Fact(item, s, gold))
                else:
                    held.add_sentence(s, item)
        held.items[it["task"]] += 1


def add_curated(held: HeldOut, folder: str | Path) -> None:
    """Hold out every team-curated entry too (tasks whose test files may not be built yet): contexts,
    translations, loan graphs and words. Read leniently (a file being edited may be incomplete), but a line
    that is not JSON is an error naming the file and line."""
    folder = Path(folder)
    for task in CURATED_TASKS:  # the task files only (the folder also holds review logs)
        path = folder / f"{task}.jsonl"
        if not path.is_file():
            continue
        held.files[f"curated/{path.name}"] = _file_sha(path)
        for n, e in enumerate(read_jsonl(path), start=1):
            if not isinstance(e, dict):
                raise DataError(path, n, None, "expected a JSON object")
            item = f"{task}-{e.get('key', n)}@curated"
            ctx = e.get("context") or ""
            if ctx:
                held.add_sentence(ctx, item)
            answer = e.get("answer") or ""
            if TASK_BY_NAME[task].hold_out == "sentence" and answer:
                held.add_sentence(answer, item)
            for name in ("loan", "word"):
                if e.get(name):
                    held.add_char(e[name], item)
                    if answer:
                        held.facts.append(Fact(item, e[name], answer))
            held.items[f"curated/{task}"] += 1


def held_out_targets(benchmark: str | Path | None = None, *, curated: str | Path | None | bool = True) -> HeldOut:
    """What to hold out: every ``data/<config>/test.jsonl`` of the benchmark folder (default: the bundled
    dataset) and, unless ``curated=False``, the team-curated files (default: ``records/curated/`` of a clone)."""
    root = Path(benchmark) if benchmark is not None else Path(DATASET_PATH)
    held = HeldOut()
    tests = sorted((root / "data").glob("*/test.jsonl"))
    if not tests:
        raise FinetuneDataError(f"no test files under {root / 'data'}: nothing to hold out against; build the benchmark first")
    for path in tests:
        rows = read_jsonl(path)
        task = next((r.get("task") for r in rows if isinstance(r, dict)), None)
        if task not in TASK_NAMES:
            raise DataError(path, 1, "task", f"unknown task {task!r}")
        rows = load_split(root, path.parent.name, "test") if path.parent.name in TASK_NAMES else _validated(rows, path, task)
        held.files[path.relative_to(root).as_posix()] = _file_sha(path)
        add_test_items(held, rows, path)
    if curated:
        cdir = CURATED_DIR if curated is True else Path(curated)
        if cdir.is_dir():
            add_curated(held, cdir)
        elif curated is True:  # an installed package: the curated items' test rows are still held out above
            log.warning("note: %s not found (records/ comes with a clone of the repository): the team-curated files "
                        "are not held out beyond their test items", cdir)
        else:
            raise FinetuneDataError(f"--curated {cdir}: no such folder")
    return held


def _validated(rows, path, task):
    return validate_rows(rows, path, task=task)


@dataclass(frozen=True)
class Leak:
    pair: str
    rule: str  # subject | fact | sentence
    item: str
    detail: str


def mentions(pair: Pair) -> set[str]:
    """What a pair names: its input (for a character pair, its subject) and every 「…」 span of its fields."""
    out = {pair.input.strip()} if pair.input.strip() else set()
    for text in (pair.instruction, pair.input, pair.output):
        out.update(m for m in QUOTED.findall(text) if m)
    return out


def pair_leaks(pair: Pair, held: HeldOut) -> list[Leak]:
    """Every way one pair overlaps the held-out test targets (empty when clean)."""
    leaks: list[Leak] = []
    kind = KIND_BY_NAME.get(pair.kind)
    character_pair = kind is None or kind.subject == "character"  # an unknown kind is checked as strictly
    if character_pair:
        for ch in han_only(pair.input):
            if ch in held.chars:
                leaks.append(Leak(pair.id, "subject", held.chars[ch][0], f"input holds held-out character {ch}"))
        for w, items in held.words.items():
            if w in pair.input:
                leaks.append(Leak(pair.id, "subject", items[0], f"input holds held-out word {w}"))
    _, _, by_target = held._index()
    ms = mentions(pair)
    singles = {m for m in ms if len(m) == 1}
    for m in ms:
        for f in by_target.get(m, ()):
            hit = f.gold in singles if len(f.gold) == 1 else any(f.gold in x for x in ms)
            if hit:
                leaks.append(Leak(pair.id, "fact", f.item, f"mentions {f.target} with its gold answer {f.gold}"))
    ov = held.sentence_overlap(pair.text)
    if ov:
        leaks.append(Leak(pair.id, "sentence", ov[0], f"shares {ov[1]} with a held-out sentence"))
    return leaks


def find_leaks(pairs: Iterable[Pair], held: HeldOut) -> list[Leak]:
    """The leakage check: every overlap of the pairs with the held-out test targets (rules in the module doc)."""
    out: list[Leak] = []
    for p in pairs:
        out.extend(pair_leaks(p, held))
    return out


def leakage_report(pairs: Sequence[Pair], held: HeldOut, dropped: Counter | None = None) -> dict:
    leaks = find_leaks(pairs, held)
    return {
        "format": FORMAT_VERSION,
        "passed": not leaks,
        "pairs_checked": len(pairs),
        "violations": len(leaks),
        "violations_by_rule": dict(sorted(Counter(lk.rule for lk in leaks).items())),
        "examples": [lk.__dict__ for lk in leaks[:20]],
        "rules": {
            "subject": "a character pair whose input (its subject) holds a held-out character or word",
            "fact": "a pair naming (input or 「…」) a test item's target together with that item's gold answer",
            "sentence": f"a pair sharing a run of {held.ngram} Han characters (OpenCC t2s folded) with a held-out sentence, "
            "or holding a shorter held-out sentence whole",
        },
        "held_out": held.summary(),
        "dropped_during_build": dict(sorted((dropped or Counter()).items())),
    }
