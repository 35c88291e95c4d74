"""The code's shape the architecture asks for (issue 37): short functions, imports at module level, no module
reaching into another's private names. Layers and cycles: tests/test_architecture.py."""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO_ROOT

PACKAGE = REPO_ROOT / "ancientbench"
MAX_LINES = 80
MAX_FUNCTION_LEVEL_SHARE = 0.15


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))}


def _internal(node: ast.ImportFrom | ast.Import) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == "ancientbench"
    return any(a.name.split(".")[0] == "ancientbench" for a in node.names)


def _imports_by_depth(tree: ast.Module) -> tuple[list[ast.AST], list[ast.AST]]:
    """(module-level internal imports, internal imports inside a function)."""
    top, inner = [], []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and _internal(child):
                (inner if in_function else top).append(child)
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(tree, False)
    return top, inner


def test_no_function_is_longer_than_80_lines():
    def length(n) -> int:  # from the def line (or its first decorator) to the body's last line
        return n.end_lineno - min([n.lineno, *(d.lineno for d in n.decorator_list)]) + 1

    long = sorted(f"{p.relative_to(REPO_ROOT)}:{n.lineno} {n.name} ({length(n)} lines)"
                  for p, tree in _trees().items() for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and length(n) > MAX_LINES)
    assert not long, "split into named steps:\n" + "\n".join(long)


def test_internal_imports_are_at_module_level():
    top = inner = 0
    where = []
    for p, tree in _trees().items():
        t, i = _imports_by_depth(tree)
        top, inner = top + len(t), inner + len(i)
        where += [f"{p.relative_to(REPO_ROOT)}:{n.lineno}" for n in i]
    share = inner / max(1, top + inner)
    assert share <= MAX_FUNCTION_LEVEL_SHARE, (
        f"{inner} of {top + inner} internal imports are inside functions ({share:.0%} > 15%):\n" + "\n".join(where))


def test_every_import_inside_a_function_says_why():
    """Any import left inside a function (a heavy third-party module kept off the start-up path) carries a one-line
    ``# lazy: <reason>`` on its line."""
    bad = []
    for p, tree in _trees().items():
        lines = p.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bad += [f"{p.relative_to(REPO_ROOT)}:{n.lineno}" for n in ast.walk(fn)
                        if isinstance(n, (ast.Import, ast.ImportFrom)) and "# lazy: " not in lines[n.lineno - 1]]
    assert not bad, "imports inside functions without a '# lazy: <reason>' comment:\n" + "\n".join(sorted(set(bad)))


def test_the_import_counter_sees_both_kinds():
    tree = ast.parse("from . import a\nimport os\ndef f():\n    from .b import c\n    import json\n")
    top, inner = _imports_by_depth(tree)
    assert (len(top), len(inner)) == (1, 1)


def _private_reaches(tree: ast.Module) -> list[str]:
    """``from <package module> import _x`` and ``<imported package module>._x`` (dunder names aside)."""
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _internal(node):
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                if isinstance(node, ast.ImportFrom) and private:
                    found.append(f"{node.lineno} import {a.name}")
                modules.add((a.asname or a.name).split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_no_module_reaches_into_another_modules_private_names():
    bad = [f"{p.relative_to(REPO_ROOT)}:{hit}" for p, tree in _trees().items() for hit in _private_reaches(tree)]
    assert not bad, "make the name public or move it to its user:\n" + "\n".join(bad)


def test_the_private_check_sees_both_forms():
    tree = ast.parse("from .store import _matches\nfrom . import hf\nx = hf._sha(1)\ny = hf.__name__\n")
    assert _private_reaches(tree) == ["1 import _matches", "3 hf._sha"]


def _private_writes(tree: ast.Module) -> list[str]:
    """Assignments to ``obj._name`` where obj is not ``self``/``cls`` (writing another object's private state)."""
    return [f"{t.lineno} {ast.unparse(t)}" for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            for t in ([*t.elts] if isinstance(t, ast.Tuple) else [t])
            if isinstance(t, ast.Attribute) and t.attr.startswith("_") and not t.attr.startswith("__")
            and not (isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"))]


def test_no_module_writes_another_objects_private_attributes():
    bad = [f"{p.relative_to(REPO_ROOT)}:{hit}" for p, tree in _trees().items() for hit in _private_writes(tree)]
    assert not bad, "pass the value in (a constructor or load argument) instead:\n" + "\n".join(bad)


def test_the_private_write_check_sees_one():
    assert _private_writes(ast.parse("model._name = 'x'\nself._y = 1\n")) == ["1 model._name"]
