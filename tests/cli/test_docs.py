"""17.13: help and docs that match the command: --help shows defaults, the README's option
tables list every option of `crawl` (the README's demo block against what `make demo`
prints: tests/cli/test_demo.py)."""

from __future__ import annotations

import argparse
import re
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
