"""The distractor selectors share one cost (``debias.chance_distance``): no builder writes its own squared
distance from chance (issue 37: ``phonetic_loan.reoption`` had re-implemented it)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import ancientbench.builders as builders
from ancientbench.builders.debias import chance_distance

HOME = "debias.py"


def _own_costs(path: Path) -> list[int]:
    """Lines holding ``(… - 0.25 * …) ** 2``: a squared distance from chance written out."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.left, ast.BinOp):
            inner = ast.unparse(node.left)
            if "0.25 *" in inner and isinstance(node.left.op, ast.Sub):
                hits.append(node.lineno)
    return hits


def test_no_builder_writes_its_own_selection_cost():
    folder = Path(builders.__file__).parent
    found = {f.name: lines for f in sorted(folder.glob("*.py")) if f.name != HOME and (lines := _own_costs(f))}
    assert not found, f"use debias.chance_distance / Balancer instead of a copy of the cost: {found}"
    assert _own_costs(folder / HOME), "the scan no longer sees the cost in its home"


def test_chance_distance():
    credit = {"a": 1.0, "b": 0.0}
    assert chance_distance(Counter(), credit, ["a", "b"], 2) == 0.5  # (1 - 0.5)² + (0 - 0.5)²
    assert chance_distance(Counter(), credit, ["a", "b"], 2, {"a": 3.0}) == 1.0  # 3 · 0.25 + 0.25
    assert chance_distance(Counter({"a": 1.0, "b": 1.0}), credit, ["a", "b"], 4) == 1.0  # (2 - 1)² + (1 - 1)²
