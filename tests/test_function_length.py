"""No function longer than MAX_LINES (issue 37): a long function is split into named steps. Covers the folders
listed in CHECKED (the whole package once every folder holds; widen the list, never raise the limit)."""

from __future__ import annotations

import ast
from pathlib import Path

import ancientbench

PACKAGE = Path(ancientbench.__file__).parent
MAX_LINES = 80  # from the ``def`` line (or its first decorator) to the last line of the body
CHECKED = ("builders", "sources", "quality", "paths.py", "han.py")


def long_functions(path: Path, limit: int = MAX_LINES) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = node.end_lineno - start + 1
            if lines > limit:
                out.append(f"{path.parent.name}/{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return out


def _files() -> list[Path]:
    files = []
    for name in CHECKED:
        p = PACKAGE / name
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return files


def test_no_function_over_the_limit():
    found = [hit for f in _files() for hit in long_functions(f)]
    assert not found, f"functions over {MAX_LINES} lines (split them into named steps): {found}"


def test_the_check_counts_methods_nested_functions_and_decorators(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(79))
    f = tmp_path / "m.py"
    f.write_text(
        "import functools\n\n\n"
        f"class C:\n    def long(self):\n{body}\n\n"  # 80 lines: the limit
        "def outer():\n    @functools.cache\n    def inner():\n" + "\n".join(f"        y{i} = {i}" for i in range(78)) + "\n",
        encoding="utf-8")  # inner: decorator + def + 78 = 80 lines; outer: 81
    assert [h.split()[1] for h in long_functions(f)] == ["outer"]
    assert sorted(h.split()[1] for h in long_functions(f, limit=79)) == ["inner", "long", "outer"]
