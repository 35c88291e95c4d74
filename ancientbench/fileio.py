"""Writing a file whole or not at all: a crash, Ctrl-C or a full disk never leaves a half-written file or a
stray temporary beside it (the one home of this rule; every writer of results, records and state uses it)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .errors import AncientBenchError

# what a full disk, a full quota or a file size limit makes the kernel answer a write
NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class WriteError(AncientBenchError, OSError):
    """A file that could not be written (disk full, quota, an I/O error); the message names the file."""


def write_error(path: str | Path, err: OSError) -> OSError:
    """``err`` (raised while writing ``path``) as one line naming ``path``; an error that names its own file (a
    folder that cannot be created, permissions) is returned as it is: the command line prints it in one line."""
    if isinstance(err, AncientBenchError) or (err.filename is not None and err.errno not in NO_SPACE):
        return err
    problem = f"no space left ({err.strerror})" if err.errno in NO_SPACE else (err.strerror or str(err))
    out = WriteError(f"{path}: {problem}; free some space and run the same command again (what was saved is kept)")
    out.errno = err.errno
    return out


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` newlines) to ``path`` via a temporary sibling, fsynced, then renamed into
    place; on any failure the temporary is removed and the old file, if any, is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        tmp.unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise write_error(path, err) from err
        raise


def append_whole(path: str | Path, text: str) -> None:
    """Append ``text`` to ``path``, or nothing: a write the disk refuses part-way is cut back off, so the file
    keeps only what was appended whole before (append-only logs a rerun resumes from)."""
    data = memoryview(text.encode("utf-8"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            while data:  # unbuffered: nothing is left in a buffer to be written after the cut
                data = data[os.write(fd, data):]
        except OSError as err:
            try:
                os.ftruncate(fd, start)  # a short write (the disk filled up) must not leave a torn line
            except OSError:
                pass  # the torn line is then cut by the next run's resume
            raise write_error(path, err) from err
    finally:
        os.close(fd)
