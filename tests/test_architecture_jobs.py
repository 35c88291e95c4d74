"""The layer table (``ancientbench/layers.py``) holds for the job and report folders: every import of a module in
reports/, finetune/, mini/, human/ or publish/, module level and function level alike, goes to its own layer or
below (the package-wide check is ``tests/test_architecture.py``'s)."""

from __future__ import annotations

from test_architecture import import_graph

from ancientbench.layers import layer_of

FOLDERS = ("reports", "finetune", "mini", "human", "publish")


def upward_imports(graph: dict[str, set[str]], folders=FOLDERS) -> list[str]:
    """``module (layer) -> target (layer)`` for each import of a module under ``folders`` that goes up a layer."""
    prefixes = tuple(f"ancientbench.{f}" for f in folders)
    return sorted(f"{m} ({layer_of(m)}) -> {t} ({layer_of(t)})" for m, targets in graph.items()
                  if m.startswith(prefixes) for t in targets if layer_of(t) > layer_of(m))


def test_the_checker_sees_a_function_level_import_up_a_layer():
    graph = {"ancientbench.reports.x": {"ancientbench.cli", "ancientbench.tasks"}, "ancientbench.cli": {"ancientbench.mini"}}
    assert upward_imports(graph) == ["ancientbench.reports.x (4) -> ancientbench.cli (6)"]


def test_job_and_report_folders_import_only_their_layer_or_below():
    bad = upward_imports(import_graph())
    assert not bad, "upward imports (move the module up a layer or the fact down one; ancientbench/layers.py): " + "; ".join(bad)
