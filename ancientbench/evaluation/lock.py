"""An exclusive lock on an output folder, so two runs never write one predictions file at once.

:class:`OutputLock` holds an OS file lock (PyPI ``filelock``: ``flock`` on POSIX, ``msvcrt`` on Windows) on
``<folder>/.ancientbench.lock`` for as long as a setting is scored, and writes who holds it (pid, host,
command, start time) to ``.ancientbench.lock.json`` beside it. A second run gets :class:`OutputLockedError`
naming that process. The OS drops the lock of a process that dies (even by SIGKILL), so a lock left by a
killed run is never held: the next run takes it over and warns, naming the dead run from its info file.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import AncientBenchError
from ..fileio import atomic_write

log = logging.getLogger(__name__)

LOCK_NAME = ".ancientbench.lock"
INFO_NAME = ".ancientbench.lock.json"


class OutputLockedError(AncientBenchError, RuntimeError):
    """Another ancientbench run is writing into the same output folder."""


def _describe(info: dict | None) -> str:
    if not info:
        return "process unknown (it has not written its details yet)"
    return (f"pid {info.get('pid')} on {info.get('host')}, started {info.get('started')}, "
            f"command: {info.get('command')}")


class OutputLock:
    """``with OutputLock(folder):`` - fail at once (no waiting) when another run holds the folder."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.info_path = self.folder / INFO_NAME
        self._lock = FileLock(str(self.folder / LOCK_NAME), timeout=0)

    def _read_info(self) -> dict | None:
        try:
            info = json.loads(self.info_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def _take_now(self) -> None:
        """Take the lock without waiting, or raise :class:`OutputLockedError` naming the run that holds it."""
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise OutputLockedError(
                f"{self.folder} is in use by another ancientbench run: {_describe(self._read_info())}; wait for it "
                f"to finish or give another --output"
            ) from None

    def acquire(self) -> "OutputLock":
        self.folder.mkdir(parents=True, exist_ok=True)
        self._take_now()
        stale = self._read_info()  # details left behind by a run that ended without releasing (killed)
        if stale and stale.get("pid") != os.getpid():
            log.warning(f"{self.folder}: taking over a stale lock left by a run that is gone ({_describe(stale)})")
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": " ".join(sys.argv)}
        atomic_write(self.info_path, json.dumps(info, ensure_ascii=False))
        return self

    def check(self) -> None:
        """Raise :class:`OutputLockedError` now if another run holds the folder (nothing is written; used to
        refuse before a model is loaded - the lock itself is taken later, by :meth:`acquire`)."""
        if not (self.folder / LOCK_NAME).exists():
            return
        self._take_now()
        self._lock.release()

    def release(self) -> None:
        if not self._lock.is_locked:
            return
        try:
            self.info_path.unlink()
        except FileNotFoundError:
            pass
        self._lock.release()

    def __enter__(self) -> "OutputLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
