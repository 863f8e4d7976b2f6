"""The scheduling examples of docs/schedule/ (README "Running on a schedule"): each file
parses, and every `sitemap-audit` command in it is a valid invocation of this version.
The nightly sequence they all run (crawl with --state, then diff) is run for real."""

from __future__ import annotations

import asyncio
import configparser
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from audit.cli.configfile import _subparser, load_config_file
from audit.cli.main import build_parser, main
from tests.crawlkit import HTML, XML, Serve, Site, urlset

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schedule"
OPERATORS = {"&&", "||", ";", "(", ")", "|", "&"}


def commands(shell: str) -> list[list[str]]:
    """The simple commands of a shell line (split at && || ; ( ) |), as argv lists."""
    lexer = shlex.shlex(shell, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    for token in lexer:
        if token in OPERATORS:
            out.append([])
        elif token.startswith((">", "<")) or token in (">>", ">"):
            out[-1].append("\0redirect")
        else:
            out[-1].append(token)
    cleaned = []
    for argv in out:
        # drop a redirection and its target (`>> "$GITHUB_STEP_SUMMARY"`)
        words: list[str] = []
        skip = False
        for w in argv:
            if w == "\0redirect":
                skip = True
                continue
            if not skip:
                words.append(w)
            skip = False
        if words:
            cleaned.append(words)
    return cleaned


def check_invocations(shell_lines: list[str]) -> int:
    """Parse every sitemap-audit command with the real parser; return how many there were."""
    parser = build_parser()
    seen = 0
    for line in shell_lines:
        for argv in commands(line):
            program = argv[0].lstrip("-")
            if Path(program).name != "sitemap-audit":
                continue
            try:
                args = parser.parse_args(argv[1:])
            except SystemExit as exc:  # pragma: no cover - the failure message says which
                raise AssertionError(f"not a valid invocation: {shlex.join(argv)}") from exc
            if getattr(args, "config", None):
                sub = _subparser(parser, args.command)
                name = Path(args.config).name
                assert (DOCS / name).is_file(), f"{args.config}: no example of it in docs/schedule"
                load_config_file(str(DOCS / name), sub)  # the example config is valid too
            seen += 1
    return seen


def test_example_config_is_valid() -> None:
    sub = _subparser(build_parser(), "crawl")
    values, targets = load_config_file(str(DOCS / "audit.toml"), sub)
    assert targets and values["rate"] == 5


def test_crontab() -> None:
    entries = []
    for line in (DOCS / "crontab").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#") or re.match(r"^\w+=", line):
            continue
        fields = line.split(None, 5)
        assert len(fields) == 6, f"not a crontab entry: {line}"
        for f in fields[:5]:
            assert re.fullmatch(r"[\d*/,-]+", f), f"bad time field {f!r}"
        assert "%" not in fields[5]  # cron turns % into a newline
        entries.append(fields[5])
    assert len(entries) == 1
    assert check_invocations(entries) == 3  # crawl, report, diff
    assert "--state" in entries[0] and " diff " in entries[0]


def test_systemd_units() -> None:
    service = configparser.ConfigParser(strict=False, interpolation=None)
    service.optionxform = str  # type: ignore[assignment,method-assign]
    service.read(DOCS / "sitemap-audit.service")
    assert service["Service"]["Type"] == "oneshot"
    assert service["Unit"]["Description"]
    # systemd allows a key several times (ExecStartPost): read every Exec line itself
    execs = [
        line.split("=", 1)[1]
        for line in (DOCS / "sitemap-audit.service").read_text().splitlines()
        if re.match(r"^Exec\w*=", line)
    ]
    assert all(cmd.lstrip("-").startswith("/") for cmd in execs)  # systemd wants full paths
    assert check_invocations(execs) == 3

    timer = configparser.ConfigParser(strict=True, interpolation=None)
    timer.optionxform = str  # type: ignore[assignment,method-assign]
    timer.read(DOCS / "sitemap-audit.timer")
    assert re.fullmatch(r"\*-\*-\* \d\d:\d\d:\d\d", timer["Timer"]["OnCalendar"])
    assert timer["Timer"]["Persistent"] == "true"
    assert timer["Install"]["WantedBy"] == "timers.target"


def _yaml_runs(text: str) -> list[str]:
    """The shell lines of every `run:` of a workflow (inline or `|` block), without YAML."""
    lines = text.splitlines()
    runs: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(?:- )?run:\s*(.*)$", lines[i])
        i += 1
        if not m:
            continue
        indent, value = len(m.group(1)), m.group(2).strip()
        if value not in ("|", ">"):
            runs.append(value)
            continue
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
        ):
            if lines[i].strip():
                runs.append(lines[i].strip())
            i += 1
    return runs


def test_github_actions_workflow() -> None:
    text = (DOCS / "sitemap-audit.yml").read_text()
    assert "\t" not in text  # YAML forbids tabs for indentation
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        yaml = None
    if yaml is not None:  # pragma: no cover - PyYAML is not a dependency
        doc: Any = yaml.safe_load(text)
        assert doc["jobs"]["audit"]["steps"]
    # structure: a schedule with a valid cron, a job with steps
    cron = re.search(r'^\s*- cron:\s*"([^"]+)"', text, re.M)
    assert cron and len(cron.group(1).split()) == 5
    assert re.search(r"^on:\s*$", text, re.M) and re.search(r"^jobs:\s*$", text, re.M)
    steps = re.findall(r"^      - (?:name|uses):", text, re.M)
    assert len(steps) >= 8
    assert "actions/upload-artifact@" in text and "report.html" in text
    runs = _yaml_runs(text)
    assert check_invocations(runs) == 3  # crawl, report, diff
    # the job fails on regressions: the diff's exit status is the step's
    diff_step = text[text.index("Fail on regressions") :].split("      - name:")[0]
    assert "sitemap-audit diff" in diff_step and "exit ${status:-0}" in diff_step
    assert "if: always()" not in diff_step and "continue-on-error" not in diff_step


async def test_nightly_sequence(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the examples run, night after night: crawl with --state, diff, exit 1 only on
    a regression."""
    site = Site()
    base = await serve(site)
    site.routes = {
        "/sitemap.xml": (200, XML, urlset(f"{base}/a", f"{base}/b")),
        "/a": (200, HTML, "a"),
        "/b": (200, HTML, "b"),
    }
    state, last, tonight = tmp_path / "state.sqlite", tmp_path / "last.jsonl", tmp_path / "t.jsonl"
    crawl = [
        "crawl",
        f"{base}/sitemap.xml",
        "--config",
        str(DOCS / "audit.toml"),
        "--state",
        str(state),
        "--format",
        "jsonl",
        "--output",
        str(tonight),
        "--fail-on",
        "never",
        "--rate",
        "1000",
    ]
    assert await asyncio.to_thread(main, crawl) == 0
    tonight.rename(last)
    assert await asyncio.to_thread(main, crawl) == 0  # nothing changed
    assert main(["diff", str(last), str(tonight), "--output", str(tmp_path / "d.txt")]) == 0
    tonight.rename(last)
    site.routes["/b"] = (404, HTML, "gone")
    assert await asyncio.to_thread(main, crawl) == 0  # --fail-on never
    assert main(["diff", str(last), str(tonight), "--output", str(tmp_path / "d.txt")]) == 1
    assert "url-not-found" in (tmp_path / "d.txt").read_text()
    capsys.readouterr()
