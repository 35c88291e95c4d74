"""Logging: every library module logs through ``logging.getLogger(__name__)``; the command line configures the
``ancientbench`` logger once per run (``configure``), so ``print`` is left for a command's own output.

A program that imports the library keeps its own logging set-up: nothing here runs unless the CLI (or the
program) calls ``configure``.
"""

from __future__ import annotations

import logging
import sys

ROOT = "ancientbench"
HANDLER_NAME = "ancientbench-cli"
LEVELS = {-1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}  # --quiet, default, --verbose


class StderrHandler(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is at each record (tests and notebooks replace it after set-up)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):  # noqa: D401 - a property standing in for StreamHandler's attribute
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def configure(verbosity: int = 0) -> logging.Logger:
    """Progress and notices (INFO) to stderr as plain lines; ``verbosity`` -1 keeps warnings only, 1 adds debug.
    Calling it again replaces its own handler, never another one, so a second run in one process logs once."""
    logger = logging.getLogger(ROOT)
    for handler in [h for h in logger.handlers if h.get_name() == HANDLER_NAME]:
        logger.removeHandler(handler)
    handler = StderrHandler()
    handler.set_name(HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(LEVELS[max(-1, min(1, verbosity))])
    return logger


def add_arguments(parser) -> None:
    """``--verbose`` / ``--quiet``, the same on every subcommand."""
    group = parser.add_argument_group("logging").add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="store_const", const=1, dest="verbosity", default=0,
                       help="also print debug messages")
    group.add_argument("-q", "--quiet", action="store_const", const=-1, dest="verbosity",
                       help="print warnings and errors only (a command's own output still prints)")
