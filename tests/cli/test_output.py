"""--output may be a device or a pipe, not only a file: /dev/null (benchmarks, cron jobs
that want only the exit status) and a named pipe read by another process are written
to as they are; the writability probe is for regular files only."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITEMAP = ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml"


def _validate(output: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "audit", "validate", str(SITEMAP), "--format", "jsonl",
         "--output", output],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_output_to_dev_null() -> None:
    done = _validate(os.devnull)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_output_to_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    done = _validate(str(fifo))
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert got, "the pipe's reader got nothing"
    last = got[0].splitlines()[-1].replace(" ", "")
    assert last.startswith('{"type":"summary"'), last
