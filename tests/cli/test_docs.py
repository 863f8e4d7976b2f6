"""17.13: help and docs that match the command: --help shows defaults, the README's option
tables list every option of `crawl`, and the README's demo block is what `make demo` prints."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from audit.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DEMO_README = ROOT / "fixtures" / "demo" / "README.md"


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices[name]
            assert isinstance(sub, argparse.ArgumentParser)
            return sub
    raise AssertionError(name)


def _long_options(sub: argparse.ArgumentParser) -> set[str]:
    return {
        opt
        for action in sub._actions
        for opt in action.option_strings
        if opt.startswith("--") and opt != "--help"
    }


def _readme_table_options(text: str) -> set[str]:
    """Every --option named in the first cell of a README table row."""
    found: set[str] = set()
    for line in text.splitlines():
        if line.startswith("| `--"):
            first = line.split("|")[1]
            found |= set(re.findall(r"--[a-z][a-z0-9-]*", first))
    return found


def test_readme_option_tables_list_every_crawl_option() -> None:
    missing = _long_options(_subparser("crawl")) - _readme_table_options(README.read_text())
    assert not missing, f"crawl options missing from the README's option tables: {missing}"


def test_help_shows_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for needle in (
        "per host (`unlimited`: no limit) (default: 10.0)",
        "requests in flight (default: 32)",
        "seconds per request (default: 30.0)",
        "retries with backoff (default: 2)",
        "url-rate-limited at once (default: 120.0)",
        "exit 1 at or above this severity (default: error)",
        "(default: from --output's extension, else text)",
    ):
        assert needle in text, needle
    assert "(default: None)" not in text and "(default: False)" not in text


def test_demo_readme_commands_parse() -> None:
    """Each `sitemap-audit ...` line of fixtures/demo/README.md is a valid command."""
    lines = [
        ln.split("#", 1)[0].split()
        for ln in DEMO_README.read_text().splitlines()
        if ln.startswith("sitemap-audit ")
    ]
    assert lines
    parser = build_parser()
    for words in lines:
        parser.parse_args(words[1:])  # exits 2 (SystemExit) on an unknown option


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
