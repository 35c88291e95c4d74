"""The registry's copies in the two files that must load without the package: the metric's task -> competency
table (``metrics/ancientbench_metric/ancientbench_metric.py``) and the loading script's configs
(``dataset_script/ancientbench.py``). Both are generated from ``tasks.py`` between ``BEGIN/END GENERATED`` lines:

    python -m ancientbench.publish.copies            # rewrite them after a task row changes
    python -m ancientbench.publish.copies --check    # exit 1 if either is out of date (a test runs this)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..paths import REPO_ROOT
from ..tasks import TASKS

METRIC_FILE = REPO_ROOT / "metrics" / "ancientbench_metric" / "ancientbench_metric.py"
SCRIPT_FILE = REPO_ROOT / "dataset_script" / "ancientbench.py"
_BLOCK = re.compile(r"(# BEGIN GENERATED: tasks[^\n]*\n)(.*?)(# END GENERATED: tasks\n)", re.S)


def metric_block() -> str:
    return "TASK_TO_COMPETENCY = {\n" + "".join(f'    "{t.name}": "{t.competency}",\n' for t in TASKS) + "}\n"


def script_block() -> str:
    return "_TASKS = (\n" + "".join(f'    ("{t.name}", "{t.display_en}", "{t.display_zh}", "{t.competency}"),\n' for t in TASKS) + ")\n"


def refreshed(path: Path, block: str) -> str:
    """The file's text with its generated block replaced; an error naming the file when it has none."""
    text = path.read_text(encoding="utf-8")
    if not _BLOCK.search(text):
        raise SystemExit(f"error: {path} has no '# BEGIN GENERATED: tasks' ... '# END GENERATED: tasks' block")
    return _BLOCK.sub(lambda m: m.group(1) + block + m.group(3), text, count=1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ancientbench.publish.copies", description=__doc__.strip().splitlines()[0])
    p.add_argument("--check", action="store_true", help="do not write; exit 1 if a copy is out of date")
    args = p.parse_args(argv)
    stale = []
    for path, block in ((METRIC_FILE, metric_block()), (SCRIPT_FILE, script_block())):
        if not path.is_file():
            print(f"error: {path} not found (the copies live in a clone of the repository)", file=sys.stderr)
            return 2
        fresh = refreshed(path, block)
        if fresh != path.read_text(encoding="utf-8"):
            stale.append(path)
            if not args.check:
                path.write_text(fresh, encoding="utf-8")
    if args.check and stale:
        print("error: out of date: " + ", ".join(map(str, stale)) + "; run: python -m ancientbench.publish.copies", file=sys.stderr)
        return 1
    print(("wrote " if stale else "up to date: ") + ", ".join(str(p) for p in (stale or [METRIC_FILE, SCRIPT_FILE])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
