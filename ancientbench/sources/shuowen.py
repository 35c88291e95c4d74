"""說文解字 (the shuowenjiezi/shuowen JSON data, user-supplied, never redistributed): the entries, their 从X Y聲
analyses, and when two forms are one graph (Unihan links, the classics fold, or the hand-checked list
``records/curated/shuowen_graph_pairs.tsv``). Read by the agreement figures (:mod:`ancientbench.quality.agreement`) and the
paper-faithful variant configs (:mod:`ancientbench.builders.shuowen`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..han import is_han
from ..paths import CURATED_DIR, record
from . import SourceMissing, reachable
from .classics import fold

SOURCE_LABEL = "說文解字 (shuowenjiezi/shuowen, Apache-2.0; user-supplied, not redistributed)"
_FANQIE = re.compile(r"^(.)(.)切$")
# boilerplate of 說文 glosses that two unrelated glosses may share
GLOSS_FUNCTION_CHARS = frozenset("也之其所者象形从凡屬皆曰一日而以於有為爲不")


@dataclass(frozen=True)
class Entry:
    id: int
    wordhead: str
    explanation: str
    radical: str
    pronunciation: str
    components: tuple[str, ...]

    @property
    def fanqie(self) -> str | None:
        """The 大徐 fanqie without 切 (``古雙``), or None when the entry has no plain ``XY切``."""
        m = _FANQIE.match(self.pronunciation.strip())
        return m.group(1) + m.group(2) if m else None

    @property
    def is_section_head(self) -> bool:
        """A 部首 entry: its explanation says 凡X之屬皆从X."""
        return f"凡{self.wordhead}之屬皆从{self.wordhead}" in self.explanation


@dataclass(frozen=True)
class Analysis:
    """What the explanation says about the phonetic: plain ``Y聲``, ``Y亦聲``, ``Y省聲``."""

    plain: tuple[str, ...]
    yisheng: tuple[str, ...]
    shengsheng: tuple[str, ...]
    semantic: tuple[str, ...]  # the graphs after 从

    @property
    def phonetic(self) -> str | None:
        """The single plain phonetic, when that is all the explanation says."""
        if len(set(self.plain)) == 1 and not self.yisheng and not self.shengsheng:
            return self.plain[0]
        return None


def analyse(explanation: str) -> Analysis:
    """Parse the ``从X Y聲`` analysis of a 說文 explanation (only the text from the first 从 on)."""
    k = explanation.find("从")
    if k < 0:
        return Analysis((), (), (), ())
    text = explanation[k:]
    plain, yi, sheng = [], [], []
    for m in re.finditer("聲", text):
        i = m.start()
        prev = text[i - 1] if i >= 1 else ""
        if prev == "省" and i >= 2:
            sheng.append(text[i - 2])
        elif prev == "亦" and i >= 2:
            yi.append(text[i - 2])
        elif prev and _is_han(prev) and prev not in "从之其":
            plain.append(prev)
    semantic = tuple(m.group(1) for m in re.finditer(r"从(.)", text) if _is_han(m.group(1)))
    return Analysis(tuple(plain), tuple(yi), tuple(sheng), semantic)


def _is_han(ch: str) -> bool:
    return bool(ch) and is_han(ch)


class Shuowen:
    def __init__(self, directory: Path, entries: list[Entry]):
        self.directory = directory
        self.entries = entries
        by: dict[str, list[Entry]] = defaultdict(list)
        for e in entries:
            by[e.wordhead].append(e)
        self.by_head = dict(by)
        self.sections = sorted({e.radical for e in entries})
        self._reach: dict[tuple[str, int], frozenset[str]] = {}  # memo of contains: one search per graph

    def get(self, char: str) -> list[Entry]:
        return self.by_head.get(char, [])

    def section_heads(self) -> list[Entry]:
        return [e for e in self.entries if e.is_section_head]

    def parts(self, char: str) -> list[str]:
        """The components the entries of ``char`` list (its own graph left out)."""
        return [c for e in self.get(char) for c in e.components if c != char]

    def contains(self, graph: str, part: str, depth: int = 6) -> bool:
        """Whether ``graph`` is ``part`` or is built from it, following the entries' components."""
        key = (graph, depth)
        if key not in self._reach:
            self._reach[key] = reachable(graph, self.parts, depth)
        return part in self._reach[key]


@lru_cache(maxsize=2)
def load(directory: str | Path) -> Shuowen:
    """Read every entry of a shuowen data folder (``DIR/data/*.json`` or ``DIR/*.json``), in id order."""
    d = Path(directory)
    files = sorted((d / "data").glob("*.json")) or sorted(d.glob("*.json"))
    if not files:
        raise SourceMissing(
            f"no 說文 entries (data/*.json) under {d}; pass the folder of a shuowenjiezi/shuowen checkout "
            "(github.com/shuowenjiezi/shuowen), e.g. --shuowen ../shared/sources/shuowen"
        )
    entries = []
    for f in files:
        try:
            raw = json.loads(f.read_text(encoding="utf-8"))
            entries.append(
                Entry(int(raw["id"]), raw["wordhead"], raw["explanation"], raw["radical"], raw.get("pronunciation", ""),
                      tuple(raw.get("components") or ()))
            )
        except (KeyError, ValueError, TypeError) as e:
            raise SourceMissing(f"{f}: not a 說文 entry ({e.__class__.__name__}: {e})") from None
    entries.sort(key=lambda e: e.id)
    return Shuowen(d, entries)


# ---------------------------------------------------------------------------------------------------
# agreement


def same_graph(a: str, b: str, uh) -> bool:
    """One graph: equal, equal after the classics corpus's variant fold, or Unihan variants of each other."""
    return a == b or fold(a) == fold(b) or (uh is not None and (b in uh.variants(a) or a in uh.variants(b)))


GRAPH_PAIRS_FILE = CURATED_DIR / "shuowen_graph_pairs.tsv"


@lru_cache(maxsize=2)
def graph_pairs(path: str | Path = GRAPH_PAIRS_FILE) -> dict[frozenset[str], dict]:
    """The hand-checked pairs of forms that are one graph beyond Unihan's links (our form, the 說文 text's form),
    each with the items it touches, its reason and reference: ``{frozenset({ours, shuowen}): row}``."""
    rows: dict[frozenset[str], dict] = {}
    lines = [ln for ln in record(Path(path)).read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    header = lines[0].split("\t")
    for n, line in enumerate(lines[1:], start=2):
        row = dict(zip(header, line.split("\t")))
        if len(row) != len(header) or not all(row.values()) or len(row["ours"]) != 1 or len(row["shuowen"]) != 1:
            raise ValueError(f"{path}, data line {n}: expected {len(header)} non-empty tab-separated fields "
                             f"({', '.join(header)}), one character each in ours and shuowen")
        rows[frozenset((row["ours"], row["shuowen"]))] = row
    return rows


def same_graph_listed(a: str, b: str, uh, item: str) -> bool:
    """:func:`same_graph`, or one of the hand-checked :func:`graph_pairs` for an item it names (graph-level agreement
    only: the builders keep :func:`same_graph`)."""
    row = graph_pairs().get(frozenset((a, b)))
    return same_graph(a, b, uh) or (row is not None and item in row["items"].split())
