"""Writing a file whole or not at all: a crash, Ctrl-C or a full disk never leaves a half-written file or a
stray temporary beside it (the one home of this rule; every writer of results, records and state uses it)."""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path

from .errors import DiskFullError

# out of space, over a file-size limit (RLIMIT_FSIZE), over a quota: one user error, whichever the filesystem says
DISK_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


@contextmanager
def disk_full(path: str | Path):
    """Turn a disk-full ``OSError`` raised inside the block into one :class:`DiskFullError` line naming ``path``."""
    try:
        yield
    except OSError as err:
        if err.errno in DISK_FULL and not isinstance(err, DiskFullError):
            raise DiskFullError(path, err) from None
        raise


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` newlines) to ``path`` via a temporary sibling, fsynced, then renamed into
    place; on any failure the temporary is removed and the old file, if any, is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with disk_full(path), tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
