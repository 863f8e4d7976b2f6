"""The browser's keeper (audit/http/browserguard.py) as its own process, guarding a stand-in
browser (a Python process that starts a helper in a session of its own, as Chromium's
zygote does): when the audit closes the keeper's pipe, or is killed, no process naming the
profile and no profile directory are left."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from audit.http.browserguard import profile_processes

BROWSER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    profile = sys.argv[1].split("=", 1)[1]
    # a helper that leaves the browser's process group but names the profile
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", profile],
                     start_new_session=True)
    open(os.path.join(profile, "ready"), "w").close()
    time.sleep(60)
    """
)


def _keeper(profile: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "audit.http.browserguard", str(profile), sys.executable, "-c", BROWSER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )  # fmt: skip


def _wait_for(path: Path, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _until_gone(profile: Path, seconds: float = 20.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := profile_processes(str(profile))) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_closing_the_pipe_ends_the_browser_its_helpers_and_the_profile(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    keeper = _keeper(profile)
    assert keeper.stdout is not None and keeper.stdin is not None
    assert keeper.stdout.readline().startswith(b"started ")
    _wait_for(profile / "ready")
    assert len(profile_processes(str(profile))) == 2  # the browser and its helper
    keeper.stdin.close()
    assert keeper.wait(30) == 0
    keeper.stdout.close()
    assert _until_gone(profile) == []
    assert not profile.exists()


def test_a_killed_audit_still_leaves_nothing(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    audit = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import subprocess, sys, time
            keeper = subprocess.Popen(
                [sys.executable, "-m", "audit.http.browserguard", {str(profile)!r},
                 sys.executable, "-c", {BROWSER!r}], stdin=subprocess.PIPE)
            time.sleep(60)
        """)],
    )  # fmt: skip
    try:
        _wait_for(profile / "ready")
    finally:
        audit.kill()  # SIGKILL: the kernel closes the keeper's pipe
        audit.wait()
    assert _until_gone(profile) == []
    deadline = time.monotonic() + 20
    while profile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not profile.exists()


def test_a_browser_that_cannot_start_says_so(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    done = subprocess.run(
        [sys.executable, "-m", "audit.http.browserguard", str(profile), str(tmp_path / "nope")],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout.decode().startswith(f"cannot start {tmp_path / 'nope'}: ")
    assert not profile.exists()


def test_usage() -> None:
    done = subprocess.run([sys.executable, "-m", "audit.http.browserguard"],
                          capture_output=True, timeout=30)  # fmt: skip
    assert done.returncode == 2 and b"usage:" in done.stdout


def test_profile_processes_names_only_those_naming_the_profile(tmp_path: Path) -> None:
    marker = str(tmp_path / "a-profile")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker])
    try:
        deadline = time.monotonic() + 10
        while proc.pid not in profile_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.pid in profile_processes(marker)
        assert os.getpid() not in profile_processes(marker)
        assert proc.pid not in profile_processes(str(tmp_path / "another"))
    finally:
        proc.kill()
        proc.wait()
