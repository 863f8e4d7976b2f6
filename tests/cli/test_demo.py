"""`make demo` (audit/cli/demo.py) run as a newcomer runs it, in a directory of its own:
what it prints is the README's demo block, and it writes the reports it names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _normalized(text: str) -> str:
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    text = re.sub(r"\b\d+(\.\d+)? (s|ms)\b", r"N \2", text)
    return re.sub(r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} [\d:]{8} GMT", "DATE", text)


def _block_pattern(block: list[str]) -> re.Pattern[str]:
    """The README block as a regex over whole lines: a `...` line stands for any lines."""
    parts = [r"(?:.*\n)*?" if ln == "..." else re.escape(ln) + r"\n" for ln in block]
    return re.compile("".join(parts))


def _readme_demo_block() -> list[str]:
    text = README.read_text()
    start = text.index("<!-- demo-output -->")
    body = text[start:].split("```", 2)[1]
    lines = body.strip("\n").splitlines()
    assert lines[0] == "$ make demo"
    return [_normalized(ln) for ln in lines[1:]]


@pytest.mark.slow
def test_readme_demo_block_is_what_make_demo_prints(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "audit.cli.demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    printed = _normalized(run.stdout)
    pattern = _block_pattern(_readme_demo_block())
    assert pattern.fullmatch(printed if printed.endswith("\n") else printed + "\n"), printed
    # and it wrote the reports it names, in the directory it ran in
    jsonl = (tmp_path / "demo-out" / "report.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in jsonl]
    assert records[-1]["type"] == "summary" and records[-1]["urls"] > 0
    assert (tmp_path / "demo-out" / "report.html").read_text().startswith("<!DOCTYPE html>")
