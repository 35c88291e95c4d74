"""Writing a file whole or not at all: a crash, Ctrl-C or a full disk never leaves a half-written file or a
stray temporary beside it (the one home of this rule; every writer of results, records and state uses it)."""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from .errors import AncientBenchError, DiskFullError

# out of space, over a file-size limit (RLIMIT_FSIZE), over a quota: one user error, whichever the filesystem says
DISK_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


@contextmanager
def disk_full(path: str | Path):
    """Turn a disk-full ``OSError`` raised inside the block into one :class:`DiskFullError` line naming ``path``."""
    try:
        yield
    except OSError as err:
        raised = write_error(path, err)
        if raised is err:
            raise
        raise raised from None


def write_error(path: str | Path, err: OSError) -> OSError:
    """``err`` (raised while writing ``path``) as the error to raise: a full disk, quota or file-size limit becomes
    one :class:`DiskFullError` line naming ``path``; any other error is returned as it is."""
    if err.errno in DISK_FULL and not isinstance(err, AncientBenchError):
        return DiskFullError(path, err)
    return err


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


@contextmanager
def whole_folder(out: str | Path, owned: Callable[[str], object], what: str) -> Iterator[Path]:
    """A temporary sibling folder to write a folder's files into; when the block ends without an error it is
    swapped in for ``out`` whole (a kill or a full disk midway leaves the earlier ``out`` as it was).

    ``out`` may hold only entries whose names ``owned`` accepts (what ``what`` writes there): anything else is the
    user's and is refused, before anything is written. A kill between the swap's two renames is undone by the next
    call (the earlier folder is put back); temporaries of killed runs are removed."""
    out = Path(out)
    _recover(out)
    if out.exists():
        if not out.is_dir():
            raise AncientBenchError(f"{out}: exists and is not a folder; choose another output folder")
        foreign = sorted(p.name for p in out.iterdir() if not owned(p.name))
        if foreign:
            raise AncientBenchError(f"{out}: holds {foreign[0]!r}, which {what} did not write, and the folder is replaced "
                                    "whole; choose another output folder (or move it away)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-{os.getpid()}-", dir=out.parent))
    try:
        yield tmp
        mask = os.umask(0)
        os.umask(mask)
        tmp.chmod(0o777 & ~mask)  # mkdtemp's folder is private; the result is an ordinary folder
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _recover(out: Path) -> None:
    """Undo what a killed :func:`whole_folder` left beside ``out``: put the earlier folder back if the new one never
    arrived, and remove the temporaries of runs that are gone."""
    if not out.parent.is_dir():
        return
    leftover = re.compile(rf"\.{re.escape(out.name)}\.(old|new)-(\d+)(-.*)?")
    for p in sorted(out.parent.iterdir()):
        m = leftover.fullmatch(p.name)
        if not m or (int(m.group(2)) != os.getpid() and _alive(int(m.group(2)))):
            continue
        if m.group(1) == "old" and not out.exists():
            os.rename(p, out)
        else:
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
