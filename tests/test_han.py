"""What counts as a Han character has one home (ancientbench/han.py); no other module writes CJK ranges."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import ancientbench
from ancientbench.han import BASIC_BLOCK, all_han, count_han, han_only, is_han

PACKAGE = Path(ancientbench.__file__).parent
HOME = PACKAGE / "han.py"
# the bounds of the Han blocks, as numbers or as characters (a regex class such as [\u4e00-\u9fff] or [一-龥])
BOUNDS = {0x3400, 0x4DBF, 0x4E00, 0x9FFF, 0x9FA5, 0xA000, 0xF900, 0xFAFF, 0x20000, 0x2A6DF, 0x3FFFF}
RANGE = re.compile("([\u3400-\U0003ffff])-([\u3400-\U0003ffff])")  # the scan's own pattern (tests/ is not scanned)
ESCAPED = re.compile(r"\\(u(3400|4dbf|4e00|9fff|9fa5|f900|faff)|U000(20000|2a6df|3ffff))", re.I)


def _range_literals(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Constant):
            continue
        v = node.value
        if isinstance(v, int) and not isinstance(v, bool) and v in BOUNDS:
            found.append(f"{path.name}:{node.lineno}: {hex(v)}")
        elif isinstance(v, str):
            spans = RANGE.findall(v)  # a class written with the characters themselves: 一-龥
            if ESCAPED.search(v) or any(ord(a) in BOUNDS or ord(b) in BOUNDS for a, b in spans):
                found.append(f"{path.name}:{node.lineno}: {v[:40]!r}")
    return found


def test_no_second_han_definition():
    found = [hit for f in sorted(PACKAGE.rglob("*.py")) if f != HOME for hit in _range_literals(f)]
    assert not found, f"CJK ranges outside ancientbench/han.py (import is_han/count_han/han_only from there): {found}"


def test_the_scan_sees_each_way_of_writing_a_range(tmp_path):
    samples = ['x = re.compile(r"[\\u3400-\\u9fff]")', "ok = 0x4E00 <= ord(ch) <= 0x9FFF", 'y = "[一-龥]"',
               'z = re.compile("[\\U00020000-\\U0003ffff]")']
    for i, line in enumerate(samples):
        f = tmp_path / f"m{i}.py"
        f.write_text(f"import re\n{line}\n", encoding="utf-8")
        assert _range_literals(f), line


def test_what_counts_as_han():
    assert is_han("一") and is_han("\u3400") and is_han("\U00020000") and is_han("龜")
    assert is_han("〇") and is_han("\uf900")  # ideographic zero and a compatibility ideograph
    assert not is_han("〇", unified_only=True) and not is_han("\uf900", unified_only=True)
    assert is_han("\U0002a6d6", unified_only=True)  # Extension B
    for ch in ("a", "。", "「", "ㄅ", "ア", "\u2f00"):  # \u2f00: a Kangxi radical symbol, not an ideograph
        assert not is_han(ch), ch
    assert not is_han("\u4dc0")  # a Yijing hexagram symbol sits between Extension A and the basic block
    assert han_only("學而時習之，不亦說乎？〇") == "學而時習之不亦說乎〇"
    assert count_han("學而〇\uf900", unified_only=True) == 2 and count_han("學而〇\uf900") == 4
    assert all_han("學而") and not all_han("") and not all_han("學a") and not all_han("〇", unified_only=True)
    assert BASIC_BLOCK == (0x4E00, 0x9FFF)
