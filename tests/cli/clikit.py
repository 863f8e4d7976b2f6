"""Helpers of the command-line tests: run `main` in-process, write a file, assert a one-line
error."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.cli.main import main
from tests.crawlkit import urlset

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sitemaps"

GOOD = urlset(
    "https://www.example.com/a",
    "https://www.example.com/b",
    extra="<lastmod>2024-05-01T10:00:00+00:00</lastmod>",
)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, data: bytes | str) -> str:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(p)


def assert_one_line_error(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
