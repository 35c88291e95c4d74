"""The package's shape: no import cycle between its modules (counting the package ``__init__`` a submodule import
runs), and every module importable on its own in a fresh interpreter. Layers: ``docs/architecture.md``."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from support import REPO_ROOT

from ancientbench.layers import layer_of, render

PACKAGE = REPO_ROOT / "ancientbench"


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports, anywhere in its file (a function-level import is still an
    edge: hiding a cycle inside a function does not remove it), plus the packages whose ``__init__`` runs."""
    mods = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                    if node.level else (node.module or "")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                for k in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b first
                    mod = ".".join(parts[:k])
                    if mod in mods and mod != name and not name.startswith(mod + "."):
                        graph[name].add(mod)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    found = cycles(import_graph())
    assert not found, "import cycles (move the shared fact down a layer, see docs/architecture.md): " + "; ".join(
        " <-> ".join(c) for c in found)


def test_every_module_imports_on_its_own():
    """Each module, first in a fresh interpreter: an order-dependent import (a cycle papered over) fails here."""
    names = [n for n in _modules() if not n.endswith("__main__")]
    code = ("import importlib, sys\n"
            "bad = []\n"
            "for name in sys.argv[1:]:\n"
            "    for m in [m for m in sys.modules if m.startswith('ancientbench')]:\n"
            "        del sys.modules[m]\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except ImportError as e:\n"
            "        if 'ancientbench' in str(e) or 'circular' in str(e):\n"
            "            bad.append(f'{name}: {e}')\n"
            "print('\\n'.join(bad))\n"
            "sys.exit(1 if bad else 0)\n")
    proc = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_every_module_has_a_layer():
    unplaced = []
    for name in _modules():
        try:
            layer_of(name)
        except KeyError as e:
            unplaced.append(str(e))
    assert not unplaced, "\n".join(unplaced)


def test_no_import_goes_up_a_layer():
    """Every import, module-level or inside a function, goes to the importer's own layer or one below
    (ancientbench/layers.py); a package ``__init__`` an import runs counts as imported."""
    up = sorted(f"{mod} (layer {layer_of(mod)}) -> {t} (layer {layer_of(t)})"
                for mod, targets in import_graph().items() for t in targets if layer_of(t) > layer_of(mod))
    assert not up, "upward imports (move the shared fact down, or pass it in):\n" + "\n".join(up)


def test_the_layer_check_catches_an_upward_import():
    assert layer_of("ancientbench.tasks") < layer_of("ancientbench.evaluation.api") < layer_of("ancientbench.cli")
    assert layer_of("ancientbench.builders.radical") == layer_of("ancientbench.backends.hf")
    with pytest.raises(KeyError, match="no layer"):
        layer_of("ancientbench.nowhere")


def test_the_docs_show_the_layer_table():
    text = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- layers:begin -->")[1].split("<!-- layers:end -->")[0].strip()
    assert block == render(), "docs/architecture.md's layer table differs: paste `python -m ancientbench.layers`"


def test_every_subpackage_ships_in_the_wheel():
    """What pyproject has setuptools find (packages.find) holds every subpackage and the metric: one left out would
    import in a clone and fail when installed."""
    import tomllib
    from setuptools import find_namespace_packages

    find = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]["find"]
    assert find.get("namespaces", True), "without namespaces the data folders are 'Package would be ignored'"
    listed = {p for where in find["where"] for p in find_namespace_packages(str(REPO_ROOT / where), include=find["include"])}
    found = {".".join(p.parent.relative_to(REPO_ROOT).parts) for p in PACKAGE.rglob("__init__.py")}
    assert found <= listed, f"subpackages setuptools would not find: {sorted(found - listed)}"
    assert {"ancientbench_metric", "ancientbench.data.cloze"} <= listed
