"""One state file, one run: the lock a run holds on its state.

`StateLock.take(PATH)` takes an exclusive flock on `PATH.lock` (held until `release`; the
kernel drops it when the process dies however it dies, so a killed run leaves no stale
lock) and writes the holder's pid, host and start time into it. A second run on the same
state is refused with a StateError naming the holder (exit 2) instead of resuming the
live run's rows. Without fcntl (Windows) there is no lock.

Imports only the standard library and audit.state.schema (StateError).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path

from audit.state.schema import StateError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock (see the docstring)
    fcntl = None  # type: ignore[assignment]

__all__ = ["StateLock"]


class StateLock:
    """An exclusive flock on PATH.lock for one run; the file tells who holds it."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    @classmethod
    def take(cls, state: Path) -> StateLock:
        """The lock of the state file `state`; StateError naming the holder when another
        run (in this process or another) holds it."""
        if fcntl is None:  # pragma: no cover - Windows
            return cls(None)
        lock_path = Path(str(state) + ".lock")
        try:
            # O_CLOEXEC: a child process (a fetch worker) never holds the lock
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StateError(
                f"{lock_path}: cannot create the state's lock file: {exc.strerror or exc}"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise StateError(
                f"{state}: in use by another run ({holder or 'holder unknown'}); wait for it "
                "to end, or use another --state path"
            ) from None
        # Rewritten, never removed: unlinking a lock file lets a third process lock a new
        # file while the second still holds the old one.
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        holder = f"pid {os.getpid()} on {socket.gethostname()}, started {started}"
        with contextlib.suppress(OSError):  # a full disk: the lock holds, its holder unnamed
            os.ftruncate(fd, 0)
            os.pwrite(fd, (holder + "\n").encode(), 0)
        return cls(fd)

    def release(self) -> None:
        """Drop the lock (again: nothing)."""
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing the last descriptor drops the flock
