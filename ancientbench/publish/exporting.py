"""What the four harness exporters (``export-lm-eval``, ``-opencompass``, ``-lighteval``, ``-evalscope``) share: their
user error (:class:`ExportError`), which asked tasks have data to export (:func:`present_tasks`), the checked letter
style, and the command's tail (:func:`run_export`: write, say what was written and what was left out, how to run it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from ..errors import AncientBenchError
from ..prompts import letter_prefix
from ..schema import split_file
from ..tasks import resolve_tasks


class ExportError(AncientBenchError, ValueError):
    """An export that cannot be written as asked: nothing to export, a bad option, or a folder holding what the export
    did not write (the message names it)."""


def checked_letter_prefix(letter_style: str) -> str:
    try:
        return letter_prefix(letter_style)
    except ValueError as e:
        raise ExportError(str(e)) from None


def present_tasks(folder: Path, hub_id: str | None, tasks: list[str] | None) -> list[str]:
    """The asked tasks that have both split files (all asked tasks for a Hub source)."""
    wanted = list(resolve_tasks(tasks))
    present = wanted if hub_id else [t for t in wanted if all(split_file(folder, t, s).is_file() for s in ("test", "dev"))]
    if not present:
        raise ExportError(f"no task has both test and dev files under {folder / 'data'}")
    return present


def run_export(args: argparse.Namespace, write: Callable[[], dict], *, tasks: Callable[[dict], list[str]],
               wrote: Callable[[dict, list[str]], str], how_to_run: Callable[[dict, list[str]], str | None],
               left_out_note: str = "") -> int:
    """An export command's run: ``write()`` (an :class:`ExportError` is one ``error:`` line, exit 2), then the line
    ``wrote(written, tasks)``, the asked tasks left out for want of test/dev data, and ``how_to_run`` (if any)."""
    try:
        written = write()
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    exported = tasks(written)
    print(wrote(written, exported))
    missing = [t for t in resolve_tasks(args.tasks) if t not in exported]
    if missing:
        print(f"warning: left out (no test/dev data): {', '.join(missing)}{left_out_note}")
    line = how_to_run(written, exported)
    if line:
        print(line)
    return 0
