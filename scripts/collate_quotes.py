"""Collate the quoted text of shipped items from 詩經, 楚辭 and 古文觀止 with a second witness: every difference, one line.

The witness is the classical side of the Classical-Modern corpus (NiuTrans, MIT), its ``古文原文/<書>/…/text.txt`` files,
read from a folder the user supplies (a checkout of github.com/NiuTrans/Classical-Modern; nothing of it is copied into
this repository). It holds the books many 古文觀止 pieces were taken from (左傳, 國語, 戰國策, 史記, 禮記, 公羊傳,
穀梁傳, 漢書, 後漢書, 三國志, 晉書, 貞觀政要, 郁離子, 舊唐書) but no 詩經, 楚辭 or 唐宋 prose collection: items it does not
hold are listed as ``uncovered`` (they go to an independent reviewer). Texts are compared as Han characters in
simplified script (OpenCC t2s), so a difference is a different word, never a script or variant-form choice that t2s folds
(於/于, 餘/余 … are invisible here; ``python -m ancientbench.quality.conversion`` lists those).

    python scripts/collate_quotes.py WITNESS_DIR [--out collation.tsv]

Output columns: item, status (agree | differ | uncovered), witness book, our text around the difference, our reading,
the witness's reading (the differing characters only).
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ancientbench.quality import conversion  # noqa: E402
from ancientbench.sources import classics  # noqa: E402

BOOKS = ("左传", "国语", "战国策", "史记", "礼记", "公羊传", "谷梁传", "汉书", "后汉书", "三国志", "晋书", "贞观政要", "郁离子", "旧唐书")
SCOPE = ("詩經", "楚辭", "古文觀止")
ANCHOR = 5
MIN_SHARE = 0.85  # of the quote's characters found in order in the window, else the witness does not hold it


def witness_text(folder: Path) -> tuple[str, list[tuple[int, str]]]:
    """All witness books as one folded Han string, with (start offset, book) marks."""
    parts, marks, at = [], [], 0
    for book in BOOKS:
        files = sorted((folder / book).rglob("*.txt"))
        text = classics.fold(classics.han_only("".join(f.read_text(encoding="utf-8") for f in files)))
        marks.append((at, book))
        parts.append(text + "\n")
        at += len(text) + 1
    return "".join(parts), marks


def book_at(marks, pos: int) -> str:
    return [b for start, b in marks if start <= pos][-1]


def quote_of(task: str, row: dict) -> str:
    """The item's quoted text, Han only; a cloze blank is filled with the key."""
    field, offset, text = conversion.converted_fields(task, row)[0] if conversion.book_of(row) else ("", 0, "")
    if task == "cloze":
        text = text.replace("＿", row[row["answer"]])
    if task == "tradoc_word":
        text = re.sub(r"^[^「]*「|」中「[^」]*」$", "", text)
    if task == "phonetic_loan":
        text = re.sub(r"」中的「[^」]*」$", "", text).lstrip("「")
    return classics.han_only(text)


def locate(hay: str, needle: str) -> int | None:
    """Start of the best window for ``needle`` in ``hay``: votes of its ANCHOR-grams' occurrences."""
    votes: Counter = Counter()
    for i in range(0, max(1, len(needle) - ANCHOR + 1), 2):
        gram = needle[i:i + ANCHOR]
        j, seen = hay.find(gram), 0
        while j >= 0 and seen < 40:
            votes[j - i] += 1
            j, seen = hay.find(gram, j + 1), seen + 1
    if not votes:
        return None
    start, n = votes.most_common(1)[0]
    return start if n >= 2 or len(needle) < 2 * ANCHOR else None


def collate(task: str, row: dict, hay: str, marks) -> list[tuple]:
    ours = quote_of(task, row)
    key = classics.fold(ours)
    if not key:
        return []
    j = hay.find(key)
    if j >= 0:
        return [(row["id"], "agree", book_at(marks, j), ours, "", "")]
    start = locate(hay, key)
    if start is None:
        return [(row["id"], "uncovered", "", ours, "", "")]
    lo = max(0, start - 3)
    window = hay[lo:start + len(key) + 3]
    matcher = difflib.SequenceMatcher(None, key, window, autojunk=False)
    if sum(b.size for b in matcher.get_matching_blocks()) < MIN_SHARE * len(key):
        return [(row["id"], "uncovered", "", ours, "", "")]  # anchors hit another passage (a quotation of it, a formula)
    out = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or (op == "insert" and (i1 == 0 or i1 == len(key))):
            continue  # window margins around the quote
        out.append((row["id"], "differ", book_at(marks, start), ours[max(0, i1 - 4):i2 + 4], ours[i1:i2] or "∅", window[j1:j2] or "∅"))
    return out or [(row["id"], "agree", book_at(marks, start), ours, "", "")]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("witness", type=Path, help="the 古文原文 folder of a Classical-Modern checkout")
    p.add_argument("--out", type=Path, help="write every line as TSV here")
    args = p.parse_args(argv)
    if not (args.witness / "左传").is_dir():
        p.error(f"{args.witness}: no 左传 folder; give the 古文原文 folder of a Classical-Modern checkout")
    hay, marks = witness_text(args.witness)
    lines, status = [], Counter()
    for task in conversion.QUOTE_TASKS:
        for row in conversion.shipped_rows(task):
            if row.get("citation", "").split("·")[0] not in SCOPE or not conversion.converted_fields(task, row):
                continue
            if row["citation"].startswith(("詩經", "楚辭")):  # quotations of a poem in 左傳 etc. are no witness of 毛詩/王逸本
                found = [(row["id"], "uncovered", "", quote_of(task, row), "", "")]
            else:
                found = collate(task, row, hay, marks)
            status.update({(task, s) for _, s, *_ in found})
            lines.extend(found)
    for (task, s), n in sorted(status.items()):
        print(f"{task}\t{s}\t{n} items")
    if args.out:
        args.out.write_text("\n".join("\t".join(map(str, x)) for x in lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
