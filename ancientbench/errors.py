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


class DiskFullError(AncientBenchError, OSError):
    """A write that failed for want of space (ENOSPC, EFBIG past a file-size limit, EDQUOT): one line naming the file."""

    def __init__(self, path, err: OSError):
        detail = err.strerror or str(err)
        super().__init__(f"{path}: no space left to write it ({detail}); free some space (or raise the limit) "
                         "and run the same command again")
        self.errno, self.strerror, self.filename = err.errno, detail, str(path)

    def __str__(self) -> str:  # OSError's own str() would print "[Errno 28] …" once errno is set
        return str(self.args[0])
