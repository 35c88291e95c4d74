"""Where a shipped item shows a graph that a simplified-to-traditional conversion chose among several.

Owns: the list of places a reviewer reads for issue 34's decision 4 ("quotes match the received text"). A place is
one character of an item's text that (a) went through a conversion, by us (OpenCC ``s2t`` for 論語, 詩經, 楚辭 in
:mod:`ancientbench.sources.classics`; ``s2t``/``s2tw`` of the curated entries quoting them in
``builders.curated.one_script``) or upstream (古文觀止 is machine-converted in npm chinese-poetry), and (b) is one of
the traditional graphs of an OpenCC ``STCharacters`` entry that has several (复→復/複/覆, 于→於/于, 余→餘/余 …).
The one-to-many set is read from OpenCC's own dictionary (:func:`ancientbench.sources.classics.one_to_many`); the
graph is matched as a *target* of that table, so 覆 (which folds to itself) is listed as well as 於 (folds to 于).

    python -m ancientbench.quality.conversion [TASK …] [--out places.tsv]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..fileio import atomic_write
from ..paths import DATASET_PATH
from ..sources.classics import one_to_many

QUOTE_TASKS = ("cloze", "tradoc_word", "translation", "phonetic_loan")
CONVERTED_BOOKS = ("論語", "詩經", "楚辭", "古文觀止")  # converted by us (s2t) or upstream (古文觀止)
SIMPLIFIED_BOOKS = ("論語", "詩經", "楚辭")  # curated entries quoting these have their options converted too
# The quoted text of each task's question (the template around it is the project's own wording, never converted).
QUOTE = {
    "cloze": re.compile(r"下列哪個字最適合填入「(?P<q>.*)」的空格？"),
    "translation": re.compile(r"下列哪一項是「(?P<q>.*)」的正確現代漢語翻譯？"),
    "tradoc_word": re.compile(r"(?P<q>.*)一詞的意思是？"),
    "phonetic_loan": re.compile(r"(?P<q>.*)通哪個字？"),
}
CONTEXT = 8  # characters shown on each side of a place
# OpenCC s2t maps these simplified graphs to one traditional graph, yet each is itself a classical word (洒埽, 痒 'sickness',
# 肴/殽, 机, 凭, 坏, 号): traditional -> that word, listed like a one-to-many choice (records/reviews/2026-12-06-one-to-one-conversion.md).
ONE_TO_ONE_WORDS = {"灑": "洒", "癢": "痒", "餚": "肴", "機": "机", "憑": "凭", "壞": "坏", "號": "号"}


@dataclass(frozen=True)
class Place:
    item: str  # item id
    field: str  # "question" or an option letter
    position: int  # index of the character in that field
    char: str  # the graph the item shows
    alternatives: tuple[str, ...]  # the other traditional graphs the conversion could have written
    context: str  # the field's text around it, the place marked 【】

    def row(self) -> str:
        return "\t".join((self.item, self.field, str(self.position), self.char, "/".join(self.alternatives), self.context))


@lru_cache(maxsize=1)
def choice_graphs() -> dict[str, tuple[str, ...]]:
    """Traditional graph -> the other traditional graphs of every one-to-many OpenCC entry it is a target of, and
    both graphs of each :data:`ONE_TO_ONE_WORDS` pair."""
    out: dict[str, set[str]] = {}
    for forms in [*one_to_many().values(), *ONE_TO_ONE_WORDS.items()]:
        for f in forms:
            out.setdefault(f, set()).update(x for x in forms if x != f)
    return {f: tuple(sorted(alts)) for f, alts in out.items()}


def book_of(row: dict) -> str:
    """The book an item quotes, from its citation (``古文觀止·卷六·論貴粟疏·4.5`` -> 古文觀止); "" if none."""
    head = row.get("citation", "").split("·", 1)[0]
    return head if head in CONVERTED_BOOKS else ""


def converted_fields(task: str, row: dict) -> list[tuple[str, int, str]]:
    """(field, offset of the text in the field, text) of the row's converted text: the quoted text of the question,
    the cloze answer (it fills the blank), and the options of a curated item quoting a book we convert."""
    book = book_of(row)
    if task not in QUOTE or not book or (task == "phonetic_loan" and row.get("subset") != "transmitted"):
        return []
    m = QUOTE[task].fullmatch(row["question"])
    if m is None:
        raise ValueError(f"{row['id']}: question does not have the {task} template: {row['question']!r}")
    out = [("question", m.start("q"), m.group("q"))]
    if task == "cloze":
        out.append((row["answer"], 0, row[row["answer"]]))
    elif book in SIMPLIFIED_BOOKS and task in ("translation", "phonetic_loan"):
        out.extend((letter, 0, row[letter]) for letter in "ABCD")
    return out


def places(task: str, rows) -> list[Place]:
    """Every place of ``rows`` (schema dicts of one task) where a conversion chose among several graphs."""
    graphs = choice_graphs()
    out = []
    for row in rows:
        for field, offset, text in converted_fields(task, row):
            whole = row[field] if field != "question" else row["question"]
            for i, ch in enumerate(text):
                if ch in graphs:
                    k = offset + i
                    ctx = whole[max(0, k - CONTEXT):k] + "【" + ch + "】" + whole[k + 1:k + 1 + CONTEXT]
                    out.append(Place(row["id"], field, k, ch, graphs[ch], ctx))
    return out


def shipped_rows(task: str, data_dir: str | Path = DATASET_PATH) -> list[dict]:
    rows = []
    for split in ("dev", "test"):
        path = Path(data_dir) / "data" / task / f"{split}.jsonl"
        rows.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return rows


HEADER = "item\tfield\tposition\tchar\talternatives\tcontext"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.quality.conversion", description=__doc__.split("\n")[0])
    p.add_argument("tasks", nargs="*", metavar="TASK", help=f"any of {', '.join(QUOTE_TASKS)} (default: all)")
    p.add_argument("--out", help="write every place as TSV here (else only the counts are printed)")
    args = p.parse_args(argv)
    unknown = sorted(set(args.tasks) - set(QUOTE_TASKS))
    if unknown:
        p.error(f"not a quote-based task: {', '.join(unknown)} (choose from {', '.join(QUOTE_TASKS)})")
    args.tasks = args.tasks or list(QUOTE_TASKS)
    found, counts = [], Counter()
    for task in args.tasks:
        rows = shipped_rows(task)
        ps = places(task, rows)
        found.extend(ps)
        items = {pl.item for pl in ps}
        converted = sum(1 for r in rows if converted_fields(task, r))
        print(f"{task}: {converted} items with converted text, {len(items)} with a place, {len(ps)} places")
        counts.update(pl.char for pl in ps)
    print("by graph: " + ", ".join(f"{c} {n}" for c, n in counts.most_common()))
    if args.out:
        atomic_write(args.out, "\n".join([HEADER, *(pl.row() for pl in found)]) + "\n")
        print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
