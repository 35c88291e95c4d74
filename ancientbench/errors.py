"""The one base class for errors caused by the user's input (data, options, files, models, servers).

The CLI prints an ``AncientBenchError`` as one ``error:`` line and exits 2; anything else is a bug and
keeps its traceback. Each subclass also derives from the built-in it replaced (``ValueError``,
``RuntimeError``, ``OSError``), so ``except ValueError`` in user code keeps working.
"""

from __future__ import annotations


class AncientBenchError(Exception):
    """A problem with what the user gave us; the message names the file, row, field or option."""


class RecordsMissing(AncientBenchError, FileNotFoundError):
    """A file of ``records/`` (curation sources, probe records, the changelog), which only a clone of the repository
    has: an installed package does not ship them."""
