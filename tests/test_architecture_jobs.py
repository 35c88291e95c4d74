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


def lazy_imports_without_reason(folders=FOLDERS) -> list[str]:
    """``path:line`` of each import inside a function of ``folders`` whose line carries no ``# lazy: <reason>``."""
    import ast

    from support import REPO_ROOT

    bad = []
    for folder in folders:
        for path in sorted((REPO_ROOT / "ancientbench" / folder).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for fn in ast.walk(ast.parse("\n".join(lines))):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    bad += [f"{path.relative_to(REPO_ROOT)}:{n.lineno}" for n in ast.walk(fn)
                            if isinstance(n, (ast.Import, ast.ImportFrom)) and "# lazy: " not in lines[n.lineno - 1]]
    return sorted(set(bad))


def test_job_and_report_folders_import_at_module_level():
    """Imports at module level; a heavy third-party one may stay in its function with a one-line ``# lazy:`` reason."""
    bad = lazy_imports_without_reason()
    assert not bad, "function-level imports without a '# lazy: <reason>' comment: " + ", ".join(bad)


MAX_FUNCTION_LINES = 80


def long_functions(folders=FOLDERS) -> list[str]:
    """``path:line name (N lines)`` of each function in ``folders`` longer than MAX_FUNCTION_LINES."""
    import ast

    from support import REPO_ROOT

    long = []
    for folder in folders:
        for path in sorted((REPO_ROOT / "ancientbench" / folder).rglob("*.py")):
            for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                n = fn.end_lineno - fn.lineno + 1 if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else 0
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO_ROOT)}:{fn.lineno} {fn.name} ({n} lines)")
    return long


def test_no_function_in_the_job_and_report_folders_is_over_80_lines():
    assert not long_functions(), "split into named steps: " + ", ".join(long_functions())
