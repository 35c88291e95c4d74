"""Collate the 四書 text the builders read (npm chinese-poetry) with a second edition: every difference, one line each.

The second edition is the classical side of the Classical-Modern corpus (NiuTrans, MIT) for 論語 and 孟子, the
copy in ``../shared/sources/classical-modern-sample`` (no registry package ships another 四書 edition; 大學 and
中庸 have no second edition there). Texts are compared as Han characters only, in simplified script (OpenCC
t2s), chapter by chapter; each difference is printed with its place (book, chapter, paragraph), the reading of
chinese-poetry with enough of its paragraph around it to be unique, and the other edition's reading. The
reviewed decisions live in ``ancientbench/sources/classics_corrections.tsv`` (its context may be widened by
hand); ``--check`` exits 1 when a difference found here has no line there.

    python scripts/collate_classics.py [--second DIR] [--sources DIR] [--check]
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ancientbench.paths import DEFAULT_SOURCES_DIR  # noqa: E402
from ancientbench.sources import classics  # noqa: E402

DIGITS = "零一二三四五六七八九"


def _section_no(name: str) -> int:
    """第二十三节 -> 23."""
    s = name.removeprefix("第").removesuffix("节")
    if "十" in s:
        tens, ones = s.split("十")
        return (DIGITS.index(tens) if tens else 1) * 10 + (DIGITS.index(ones) if ones else 0)
    return DIGITS.index(s)


def second_edition(folder: Path, book: str, chapter: str) -> str | None:
    """The classical text of one chapter (simplified chapter name as chinese-poetry has it), or None."""
    if book == "lunyu":
        files = [folder / "论语" / chapter / "bitext.txt"]
    elif book == "mengzi":
        d = folder / "孟子" / f"{chapter[:-1]}章句{chapter[-1]}"
        files = [d / s / "bitext.txt" for s in sorted((p.name for p in d.iterdir()), key=_section_no)] if d.is_dir() else []
    else:
        return None
    if not files or not all(f.is_file() for f in files):
        return None
    return "".join(line[3:] for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.startswith("古文："))


def differences(second: Path, sources: Path):
    """(book, chapter no., paragraph no., chinese-poetry reading in context, its reading, the other's reading)."""
    t2s = classics._converter("t2s")
    dist = classics.corpus_root(sources)
    for book in (classics.BOOK_BY_KEY[k] for k in ("lunyu", "mengzi")):
        data = json.loads((dist / book.path).read_text(encoding="utf-8"))
        for chapter_no, (chapter, paragraphs, _) in enumerate(classics._chapters(book, data), start=1):
            other = second_edition(second, book.key, t2s.convert(chapter))
            if other is None:
                continue
            # chinese-poetry as Han characters with each one's (paragraph, offset in the paragraph)
            han, where = [], []
            for k, para in enumerate(paragraphs, start=1):
                for i, ch in enumerate(para):
                    if classics.is_han(ch):
                        han.append(ch)
                        where.append((k, i))
            a = t2s.convert("".join(han))
            b = classics.han_only(t2s.convert(other))
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
                if op == "equal":
                    continue
                # an insertion sits before the character that follows it (a paragraph's opening 曰 lacking 子)
                k, start = where[min(i1, len(where) - 1)]
                para = paragraphs[k - 1]
                end = where[i2 - 1][1] + 1 if i2 > i1 and where[i2 - 1][0] == k else start + (0 if i1 == i2 else 1)
                lo, hi = start, end
                while para.count(para[lo:hi]) != 1 or sum(map(classics.is_han, para[lo:hi])) < 4:  # widen until unique
                    if lo == 0 and hi == len(para):
                        break
                    lo, hi = max(0, lo - 1), min(len(para), hi + 1)
                yield book.key, chapter_no, k, para[lo:hi], "".join(han[i1:i2]) or "∅", b[j1:j2] or "∅"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--second", default=str(REPO.parent / "shared" / "sources" / "classical-modern-sample" / "双语数据"))
    p.add_argument("--sources", default=str(DEFAULT_SOURCES_DIR))
    p.add_argument("--check", action="store_true", help="exit 1 when a difference has no reviewed line")
    args = p.parse_args(argv)
    rows = list(differences(Path(args.second), Path(args.sources)))
    if args.check:
        known = {(c.book, c.chapter, c.paragraph, c.reading, c.second_edition) for c in classics.corrections()}
        missing = [r for r in rows if (*r[:3], *r[4:]) not in known]
        for r in missing:
            print("unreviewed:", "\t".join(map(str, r)))
        print(f"{len(rows)} differences, {len(rows) - len(missing)} reviewed")
        return 1 if missing else 0
    print("book\tchapter\tparagraph\tcontext\treading\tsecond_edition")
    for r in rows:
        print("\t".join(map(str, r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
