"""Source adapter for the Unihan database and ``CJKRadicals.txt`` (Debian package ``unicode-data``).

Owns reading the Unicode Character Database files that the builders use: Kangxi radical/stroke values
(``kRSUnicode``, ``kRSKangXi``), the radical number -> graph table (``CJKRadicals.txt``), English
definitions (``kDefinition``), the core-character sets (``kUnihanCore2020``), variants (semantic,
specialized semantic, traditional/simplified, z-variants), Karlgren's GSR series (``kGSR``), Casey's
phonetic groups (``kPhonetic``), ``kFrequency`` and ``kTotalStrokes``.

Everything is read from the installed files (default ``/usr/share/unicode``, override with the
environment variable ``ANCIENTBENCH_UNICODE_DIR`` or the ``directory`` argument); nothing is downloaded.
When the files are absent :func:`load` raises :class:`~ancientbench.builders.common.SourceMissing` with the
install command. Unihan is distributed under the Unicode License (https://www.unicode.org/terms_of_use.html).

Typical use::

    from ancientbench.builders import unihan
    u = unihan.load()
    u.radical_numbers("河")      # ('85',)          all kRSUnicode/kRSKangXi radical numbers
    u.radical_char("85")          # '水'             the CJK unified ideograph of radical 85
    u.radical_forms("85")         # {'水', '氵', '氺', ...} every graph that writes radical 85
    u.definition("河")            # 'river; stream; the Yellow River'
"""

from __future__ import annotations

import bz2
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import SourceMissing

DEFAULT_DIR = Path(os.environ.get("ANCIENTBENCH_UNICODE_DIR", "/usr/share/unicode"))
INSTALL_HINT = "install the Debian/Ubuntu package unicode-data (`sudo apt-get install unicode-data`; scripts/install.sh does it)"

# Which Unihan file holds each field we read (Unihan 15.0 layout).
FIELD_FILES: dict[str, str] = {
    "kRSUnicode": "Unihan_IRGSources.txt.bz2",
    "kTotalStrokes": "Unihan_IRGSources.txt.bz2",
    "kRSKangXi": "Unihan_RadicalStrokeCounts.txt.bz2",
    "kDefinition": "Unihan_Readings.txt.bz2",
    "kMandarin": "Unihan_Readings.txt.bz2",
    "kUnihanCore2020": "Unihan_DictionaryLikeData.txt.bz2",
    "kFrequency": "Unihan_DictionaryLikeData.txt.bz2",
    "kPhonetic": "Unihan_DictionaryLikeData.txt.bz2",
    "kGSR": "Unihan_DictionaryIndices.txt.bz2",
    "kSBGY": "Unihan_DictionaryIndices.txt.bz2",
    "kSemanticVariant": "Unihan_Variants.txt.bz2",
    "kSpecializedSemanticVariant": "Unihan_Variants.txt.bz2",
    "kZVariant": "Unihan_Variants.txt.bz2",
    "kTraditionalVariant": "Unihan_Variants.txt.bz2",
    "kSimplifiedVariant": "Unihan_Variants.txt.bz2",
}
RADICALS_FILE = "CJKRadicals.txt"

_CODEPOINT = re.compile(r"U\+([0-9A-F]{4,6})")
_VERSION = re.compile(r"^# Unicode version: (\S+)", re.M)

# Kangxi radicals whose usual written forms coincide with another radical's graph, so that naming one for a
# character filed under the other would be contestable, not wrong: 月 (74) is also how 肉 (130) is written in
# 肝/胸; 阝 is the form of both 阜 (170, left) and 邑 (163, right). Hand-checked; both directions are excluded.
CONFUSABLE_RADICALS: tuple[frozenset[str], ...] = (
    frozenset({"74", "130"}),
    frozenset({"163", "170"}),
)


@dataclass(frozen=True)
class RadicalStroke:
    """One radical/stroke value: radical number (``"85"``, or ``"120'"`` for a simplified form) and residual strokes."""

    radical: str
    strokes: int

    @property
    def number(self) -> str:
        """The radical number without the simplified-form prime (``"120'"`` -> ``"120"``)."""
        return self.radical.rstrip("'")

    @property
    def simplified(self) -> bool:
        return self.radical.endswith("'")

    def __str__(self) -> str:
        return f"{self.radical}.{self.strokes}"


def _parse_rs(value: str) -> tuple[RadicalStroke, ...]:
    out = []
    for token in value.split():
        rad, _, strokes = token.partition(".")
        out.append(RadicalStroke(rad, int(strokes)))
    return tuple(out)


def _per_char(method):
    """Memoise a ``(self, char) -> immutable`` lookup on the instance: the glyph builders ask millions of times."""
    name = method.__name__

    def wrapper(self, char):
        key = (name, char)
        memo = self._memo
        if key not in memo:
            memo[key] = method(self, char)
        return memo[key]

    wrapper.__name__, wrapper.__doc__ = name, method.__doc__
    return wrapper


@lru_cache(maxsize=None)
def codepoints(value: str) -> tuple[str, ...]:
    """The characters named in a Unihan variant value (``'U+6C35<kMatthews U+6C3A'`` -> ``('氵', '氺')``)."""
    return tuple(chr(int(h, 16)) for h in _CODEPOINT.findall(value))


@dataclass
class Unihan:
    """The Unihan fields the builders need, keyed by field name then by character (raw string values)."""

    directory: Path
    version: str
    fields: dict[str, dict[str, str]]
    radical_table: dict[str, tuple[str, str]]  # radical number -> (Kangxi/supplement radical char, unified ideograph)
    _forms: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _memo: dict[tuple[str, str], object] = field(default_factory=dict, repr=False, compare=False)  # of the @_per_char lookups

    # --- provenance -------------------------------------------------------------------------------
    @property
    def source_label(self) -> str:
        """The ``source`` string items carry, e.g. ``Unihan 15.0.0 (Debian unicode-data)``."""
        return f"Unihan {self.version} (Debian unicode-data)"

    def get(self, char: str, name: str) -> str | None:
        """The raw value of a Unihan field for one character, or None."""
        if name not in self.fields:
            raise KeyError(f"field {name!r} was not loaded; loaded: {sorted(self.fields)}")
        return self.fields[name].get(char)

    # --- radicals ---------------------------------------------------------------------------------
    @_per_char
    def radical_strokes(self, char: str) -> tuple[RadicalStroke, ...]:
        """All ``kRSUnicode`` values of a character (the first is the primary one)."""
        v = self.fields["kRSUnicode"].get(char)
        return _parse_rs(v) if v else ()

    @_per_char
    def kangxi_radical_strokes(self, char: str) -> tuple[RadicalStroke, ...]:
        """All ``kRSKangXi`` values (the position in the 康熙字典 itself)."""
        v = self.fields["kRSKangXi"].get(char)
        return _parse_rs(v) if v else ()

    @_per_char
    def radical_numbers(self, char: str) -> tuple[str, ...]:
        """Every radical number (prime stripped) any kRSUnicode or kRSKangXi value gives the character, in order."""
        nums: list[str] = []
        for rs in (*self.radical_strokes(char), *self.kangxi_radical_strokes(char)):
            if rs.number not in nums:
                nums.append(rs.number)
        return tuple(nums)

    def radical_char(self, number: str) -> str:
        """The CJK unified ideograph of a radical number (``"85"`` -> ``水``), from ``CJKRadicals.txt``."""
        return self.radical_table[number][1]

    def radical_number_of_graph(self, graph: str) -> str | None:
        """The (unprimed) radical number whose unified ideograph is ``graph``, or None."""
        for num, (_, ideo) in self.radical_table.items():
            if ideo == graph and not num.endswith("'"):
                return num
        return None

    def kangxi_numbers(self) -> tuple[str, ...]:
        """The 214 Kangxi radical numbers ``'1'..'214'`` (no simplified primes)."""
        return tuple(n for n in self.radical_table if not n.endswith("'"))

    def radical_forms(self, number: str) -> frozenset[str]:
        """Every graph that writes radical ``number``: its radical-block characters and unified ideograph (also of
        the simplified form ``number'``), each unified character whose kRSUnicode/kRSKangXi is ``number.0``
        (水 氵 氺; 心 忄; 手 扌 …), and the semantic/z-variants of the radical's ideograph."""
        number = number.rstrip("'")
        if not self._forms:
            zero: dict[str, set[str]] = {}
            for name in ("kRSUnicode", "kRSKangXi"):
                for ch, v in self.fields[name].items():
                    if ".0" in v:
                        for rs in _parse_rs(v):
                            if rs.strokes == 0:
                                zero.setdefault(rs.number, set()).add(ch)
            for num in self.kangxi_numbers():
                forms = set(zero.get(num, ()))
                for n in (num, num + "'"):
                    if n in self.radical_table:
                        forms.update(self.radical_table[n])
                ideo = self.radical_char(num)
                forms.update(self.semantic_variants(ideo))
                forms.update(codepoints(self.fields["kZVariant"].get(ideo, "")))
                self._forms[num] = frozenset(forms)
        return self._forms[number]

    def confusable_radicals(self, number: str) -> frozenset[str]:
        """Radical numbers written with the same graph as ``number`` (see CONFUSABLE_RADICALS), itself included."""
        out = {number}
        for group in CONFUSABLE_RADICALS:
            if number in group:
                out |= group
        return frozenset(out)

    # --- meanings, variants, sets -----------------------------------------------------------------
    def definition(self, char: str) -> str | None:
        return self.fields["kDefinition"].get(char)

    @_per_char
    def semantic_variants(self, char: str) -> frozenset[str]:
        """kSemanticVariant + kSpecializedSemanticVariant of a character (both directions as listed)."""
        out: set[str] = set()
        for name in ("kSemanticVariant", "kSpecializedSemanticVariant"):
            out.update(codepoints(self.fields[name].get(char, "")))
        out.discard(char)
        return frozenset(out)

    @_per_char
    def variants(self, char: str) -> frozenset[str]:
        """Every variant Unihan lists for the character: semantic, specialized semantic, z, traditional, simplified."""
        out: set[str] = set(self.semantic_variants(char))
        for name in ("kZVariant", "kTraditionalVariant", "kSimplifiedVariant"):
            out.update(codepoints(self.fields[name].get(char, "")))
        out.discard(char)
        return frozenset(out)

    def is_simplified_only(self, char: str) -> bool:
        """True for a simplified form that is not itself traditional (its kTraditionalVariant names other chars only)."""
        trad = codepoints(self.fields["kTraditionalVariant"].get(char, ""))
        return bool(trad) and char not in trad

    def core_sources(self, char: str) -> str:
        """The kUnihanCore2020 source letters (G H J K M P T), or '' when the character is not core."""
        return self.fields["kUnihanCore2020"].get(char, "")

    def core_chars(self, sources: str = "") -> frozenset[str]:
        """kUnihanCore2020 characters; with ``sources`` (e.g. ``"HT"``), only those core for one of those regions."""
        return frozenset(c for c, v in self.fields["kUnihanCore2020"].items() if not sources or set(v) & set(sources))

    def frequency(self, char: str) -> int | None:
        """kFrequency (1 = most frequent .. 5), or None."""
        v = self.fields["kFrequency"].get(char)
        return int(v) if v else None

    def total_strokes(self, char: str) -> int | None:
        v = self.fields["kTotalStrokes"].get(char)
        return int(v.split()[0]) if v else None

    def gsr(self, char: str) -> tuple[str, ...]:
        """Karlgren GSR codes (``'0001g'``); the series is the leading four digits."""
        v = self.fields["kGSR"].get(char)
        return tuple(v.split()) if v else ()

    @_per_char
    def gsr_series(self, char: str) -> frozenset[str]:
        return frozenset(code[:4] for code in self.gsr(char))

    @_per_char
    def phonetic_groups(self, char: str) -> frozenset[str]:
        """Casey's phonetic group numbers (kPhonetic), letters/asterisks stripped (``'1471 103*'`` -> {'1471','103'})."""
        v = self.fields["kPhonetic"].get(char)
        return frozenset(re.sub(r"[^0-9]", "", t) for t in v.split()) if v else frozenset()

    def mandarin(self, char: str) -> tuple[str, ...]:
        v = self.fields["kMandarin"].get(char)
        return tuple(v.split()) if v else ()


def _read_lines(path: Path):
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        yield from fh


def load(directory: str | Path | None = None) -> Unihan:
    """Read the Unihan fields and CJKRadicals.txt from ``directory`` (default /usr/share/unicode); cached.

    Raises SourceMissing naming the missing file and the install command.
    """
    return _load_folder(Path(directory).resolve() if directory is not None else DEFAULT_DIR)


@lru_cache(maxsize=4)  # keyed by the folder, so load() and load(None) share one read (about 5 s each)
def _load_folder(d: Path) -> Unihan:
    needed = sorted({*FIELD_FILES.values()})
    missing = [f for f in (*needed, RADICALS_FILE) if not (d / f).is_file()]
    if missing:
        raise SourceMissing(f"Unihan files missing in {d}: {', '.join(missing)}; {INSTALL_HINT}")
    wanted_by_file: dict[str, set[str]] = {}
    for name, fname in FIELD_FILES.items():
        wanted_by_file.setdefault(fname, set()).add(name)
    fields: dict[str, dict[str, str]] = {name: {} for name in FIELD_FILES}
    version = ""
    for fname in needed:
        wanted = wanted_by_file[fname]
        for line in _read_lines(d / fname):
            if line.startswith("#"):
                if not version:
                    m = _VERSION.match(line)
                    if m:
                        version = m.group(1)
                continue
            parts = line.rstrip("\n").split("\t", 2)
            if len(parts) != 3 or parts[1] not in wanted:
                continue
            fields[parts[1]][chr(int(parts[0][2:], 16))] = parts[2]
    table: dict[str, tuple[str, str]] = {}
    for raw in (d / RADICALS_FILE).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        num, rad, ideo = (p.strip() for p in line.split(";"))
        table[num] = (chr(int(rad, 16)), chr(int(ideo, 16)))
    if len([n for n in table if not n.endswith("'")]) != 214:
        raise SourceMissing(f"{d / RADICALS_FILE}: expected 214 Kangxi radicals, found {len(table)} entries; {INSTALL_HINT}")
    return Unihan(directory=d, version=version or "unknown", fields=fields, radical_table=table)


__all__ = ["CONFUSABLE_RADICALS", "DEFAULT_DIR", "INSTALL_HINT", "RadicalStroke", "Unihan", "codepoints", "load"]
