"""The package's copies in the two files that must load without the package, generated between ``BEGIN/END
GENERATED: <name>`` lines: the metric's task -> competency table and its arithmetic (the text of
``ancientbench/aggregate.py`` between its ``METRIC COPY`` lines: aggregate and bootstrap, byte for byte) in
``metrics/ancientbench_metric/ancientbench_metric.py``, and the loading script's configs
(``dataset_script/ancientbench.py``) from ``tasks.py``:

    python -m ancientbench.publish.copies            # rewrite them after a task row or the arithmetic changes
    python -m ancientbench.publish.copies --check    # exit 1 if either is out of date (a test runs this)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..fileio import atomic_write
from ..paths import PACKAGE_DIR, REPO_ROOT
from ..tasks import COMPETENCIES, TASKS, USER_TASK_NOTE

METRIC_FILE = REPO_ROOT / "metrics" / "ancientbench_metric" / "ancientbench_metric.py"
SCRIPT_FILE = REPO_ROOT / "dataset_script" / "ancientbench.py"
AGGREGATE_FILE = PACKAGE_DIR / "aggregate.py"
_SOURCE = re.compile(r"# BEGIN METRIC COPY[^\n]*\n(?:#[^\n]*\n)*(.*?)# END METRIC COPY\n", re.S)


def _block(name: str) -> re.Pattern:
    return re.compile(rf"(# BEGIN GENERATED: {name}\b[^\n]*\n)(.*?)(# END GENERATED: {name}\n)", re.S)


def metric_block() -> str:
    return ("TASK_TO_COMPETENCY = {\n" + "".join(f'    "{t.name}": "{t.competency}",\n' for t in TASKS) + "}\n"
            "TASK_NAMES = tuple(TASK_TO_COMPETENCY)\n"
            f"COMPETENCIES = {tuple(COMPETENCIES)!r}\n".replace("'", '"') + _wrapped("USER_TASK_NOTE", USER_TASK_NOTE))


def _wrapped(name: str, text: str, width: int = 100) -> str:
    """``NAME = ("...", "...")``: a long string constant as adjacent literals, each line under ``width``."""
    parts, line = [], ""
    for word in text.split(" "):
        if line and len(line) + len(word) > width - len(name) - 8:
            parts.append(line + " ")
            line = word
        else:
            line = f"{line} {word}" if line else word
    parts.append(line)
    pad = "\n" + " " * (len(name) + 4)
    return f"{name} = (" + pad.join(f'"{p}"' for p in parts) + ")\n"


def arithmetic_block() -> str:
    """The text of aggregate.py between its ``METRIC COPY`` lines (the comment lines after BEGIN left out)."""
    m = _SOURCE.search(AGGREGATE_FILE.read_text(encoding="utf-8"))
    if not m:
        raise SystemExit(f"error: {AGGREGATE_FILE} has no '# BEGIN METRIC COPY' ... '# END METRIC COPY' block")
    return m.group(1)


def script_block() -> str:
    return "_TASKS = (\n" + "".join(f'    ("{t.name}", "{t.display_en}", "{t.display_zh}", "{t.competency}"),\n' for t in TASKS) + ")\n"


def refreshed(path: Path, blocks: dict[str, str]) -> str:
    """The file's text with each named generated block replaced; an error naming the file when one is missing."""
    text = path.read_text(encoding="utf-8")
    for name, block in blocks.items():
        pattern = _block(name)
        if not pattern.search(text):
            raise SystemExit(f"error: {path} has no '# BEGIN GENERATED: {name}' ... '# END GENERATED: {name}' block")
        text = pattern.sub(lambda m: m.group(1) + block + m.group(3), text, count=1)
    return text


def copies() -> dict[Path, dict[str, str]]:
    """Each file's generated blocks, freshly rendered."""
    return {METRIC_FILE: {"tasks": metric_block(), "arithmetic": arithmetic_block()}, SCRIPT_FILE: {"tasks": script_block()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.publish.copies", description=__doc__.strip().splitlines()[0])
    p.add_argument("--check", action="store_true", help="do not write; exit 1 if a copy is out of date")
    args = p.parse_args(argv)
    stale = []
    for path, blocks in copies().items():
        if not path.is_file():
            print(f"error: {path} not found (the copies live in a clone of the repository)", file=sys.stderr)
            return 2
        fresh = refreshed(path, blocks)
        if fresh != path.read_text(encoding="utf-8"):
            stale.append(path)
            if not args.check:
                atomic_write(path, fresh)
    if args.check and stale:
        print("error: out of date: " + ", ".join(map(str, stale)) + "; run: python -m ancientbench.publish.copies", file=sys.stderr)
        return 1
    print(("wrote " if stale else "up to date: ") + ", ".join(str(p) for p in (stale or [METRIC_FILE, SCRIPT_FILE])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
