"""The browser's keeper: a small process that outlives nothing it guards.

`python -m audit.http.browserguard PROFILE EXECUTABLE ARG...` starts the browser in a
session (and so a process group) of its own, with `--user-data-dir=PROFILE`, and waits on
its own standard input. When that reaches its end (the audit closed it, or the audit died:
the kernel closes the pipe of a killed process, SIGKILL included), the keeper ends the
browser's process group (SIGTERM, then SIGKILL after a grace period), then every process
left whose command line names the profile (a helper that left the group), removes the
profile directory and exits. So no browser process and no profile outlive the run, however
it ends. The audit reads the DevTools port from the profile's `DevToolsActivePort`.

Standard library only: must not import aiohttp, asyncio or the rest of the package (it
runs as its own small process).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

__all__ = ["main", "profile_processes"]

GRACE_S = 2.0  # a browser told to stop (SIGTERM) has this long before SIGKILL


def profile_processes(profile: str) -> list[int]:
    """The ids of the processes whose command line names `profile`, keepers excepted (this
    one among them: its command line names this module, as the `-m` it was run with)."""
    found: list[int] = []
    mark = profile.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):  # (gone meanwhile, or not ours to read)
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            if mark in cmdline and b"audit.http.browserguard" not in cmdline:
                found.append(int(entry))
    return found


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _end(proc: subprocess.Popen[bytes], profile: str) -> None:
    """The browser's group told to stop, then killed, then any straggler; the profile gone."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(GRACE_S)
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(GRACE_S)
    for _ in range(20):  # helpers that left the group, until none is left
        left = profile_processes(profile)
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m audit.http.browserguard PROFILE EXECUTABLE [ARG...]")
        return 2
    profile, command = argv[0], argv[1:]
    # the audit's Ctrl-C reaches the whole terminal group: the keeper waits for its pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: os.close(0))
    # the browser's own temp files (its singleton socket) inside the profile: gone with it
    scratch = os.path.join(profile, "tmp")
    os.makedirs(scratch, exist_ok=True)
    try:
        proc = subprocess.Popen(
            [*command, f"--user-data-dir={profile}"],
            env={**os.environ, "TMPDIR": scratch},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        print(f"cannot start {command[0]}: {exc.strerror}", flush=True)
        shutil.rmtree(profile, ignore_errors=True)
        return 1
    print(f"started {proc.pid}", flush=True)
    waiter = threading.Thread(target=proc.wait, daemon=True)
    waiter.start()
    try:
        with contextlib.suppress(OSError):
            while os.read(0, 4096):  # until the audit closes the pipe (or dies)
                pass
    finally:
        _end(proc, profile)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
