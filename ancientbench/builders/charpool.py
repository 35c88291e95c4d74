"""The character pool shared by the 廣韻/Unihan task builders (radical, radical_meaning, pronunciation,
homophone, tradoc_word): which characters a reader of the classics meets, how frequent they are, and the
loaded sources bundled together.

A *known* character is a 廣韻 headword that is either attested in the chinese-poetry classics or a
kUnihanCore2020 character for a traditional-script region (H or T), and that is not a simplified-only
form (Unihan kTraditionalVariant), a graph OpenCC s2t rewrites that is not a Taiwan core character
(况, 从, 礼), or a compatibility ideograph. Frequencies are the classics corpus
counts (the same ones :mod:`ancientbench.quality.strategies` use for its frequency strategies), with Unihan
``kFrequency`` as a tie-break for characters the corpus lacks. The builders choose among checked
distractor triples with :func:`ancientbench.builders.debias.pick_balanced`, so that the audit's surface
strategies *and* task-specific ones stay at chance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..han import is_han
from ..quality.strategies import Frequencies
from ..sources import classics, guangyun, unihan


@dataclass
class Sources:
    """Unihan, 廣韻 and the classics corpus, loaded once for a build."""

    u: unihan.Unihan
    g: guangyun.Guangyun
    corpus: classics.Corpus

    @cached_property
    def known(self) -> frozenset[str]:
        core = self.u.core_chars("HT")
        attested = self.corpus.attested_chars()
        return frozenset(ch for ch in self.traditional_headwords if ch in core or ch in attested)

    @cached_property
    def traditional_headwords(self) -> frozenset[str]:
        """廣韻 headwords in the unified blocks that are not simplified-only or OpenCC-rewritten forms (the
        known characters without the familiarity condition: a wider pool for distractors)."""
        out = set()
        for ch in self.g.chars():
            if not is_han(ch, unified_only=True):
                continue  # compatibility ideographs and anything outside the unified blocks
            if self.u.is_simplified_only(ch):
                continue
            if classics.to_traditional(ch) != ch and "T" not in self.u.core_sources(ch):
                continue  # a simplified or variant graph (况, 从, 礼) that is not a Taiwan core character
            out.add(ch)
        return frozenset(out)

    @cached_property
    def audit_freq(self):
        """The audit's Frequencies over the classics (for :func:`ancientbench.builders.debias.pick_balanced`)."""
        return Frequencies(self.corpus.balancing_frequencies(), f"classics corpus ({classics.SOURCE_LABEL})")

    def traditional_text(self, text: str) -> bool:
        """No simplified-only graph (Unihan kTraditionalVariant) in the text: the 廣韻 data writes a few
        spellers and glosses with graphs such as 与, 兹, 兖, 毁, which would mix scripts in an item."""
        return not any(self.u.is_simplified_only(ch) for ch in text)

    def freq(self, ch: str) -> int:
        """Occurrences in the classics corpus (variant forms merged)."""
        return self.corpus.frequency(ch)

    def rank_key(self, ch: str) -> tuple:
        """Sort key, most familiar first: corpus count, then kFrequency (1 best), then code point."""
        return (-self.freq(ch), self.u.frequency(ch) or 9, ord(ch))

    def by_familiarity(self, chars) -> list[str]:
        return sorted(chars, key=self.rank_key)


def load_sources(ctx) -> Sources:
    """Load the three sources for a BuildContext (each adapter raises SourceMissing with its install hint)."""
    return Sources(u=unihan.load(), g=guangyun.load(), corpus=classics.load_corpus(ctx.sources_dir))


__all__ = ["Sources", "load_sources"]
