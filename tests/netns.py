"""A Python script run inside a network namespace of its own (loopback only) with its own
/etc/hosts, for the tests that need host names resolving to loopback addresses; the test
is skipped where `unshare`, `ip` or namespaces are unavailable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def namespace_command(hosts: Path, script: Path) -> list[str] | None:
    """The command that runs `script` in a new network and mount namespace with `hosts` as
    /etc/hosts, or None when `unshare` or `ip` is not installed."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return None
    inner = (
        f"{ip} link set lo up && mount --bind {hosts} /etc/hosts && exec {sys.executable} {script}"
    )
    flags = "--net --mount" if os.geteuid() == 0 else "-rnm"
    return [unshare, *flags.split(), "sh", "-c", inner]


def run_in_namespace(tmp_path: Path, hosts: str, script: str, timeout: float) -> Any:
    """Run `script` (Python source) in a namespace whose /etc/hosts is `hosts`, and return
    the JSON of the last line it printed; the test is skipped where that cannot be done."""
    hosts_file, script_file = tmp_path / "hosts", tmp_path / "inside.py"
    hosts_file.write_text(hosts)
    script_file.write_text(script)
    command = namespace_command(hosts_file, script_file)
    if command is None:
        pytest.skip("unshare or ip is not installed")
    probe = subprocess.run([*command[:-1], "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"network namespaces are unavailable here: {probe.stderr.strip()[:200]}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
