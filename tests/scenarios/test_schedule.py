"""The scheduling examples of docs/schedule/ (README "Running on a schedule"): each file
parses, and every `sitemap-audit` command in it is a valid invocation of this version.
The nightly sequence they all run (crawl with --state, then diff) is run for real, and
the crontab entry itself, word for word, night after night through /bin/sh, with its
alerts going to a real webhook receiver and a real SMTP server on loopback."""

from __future__ import annotations

import asyncio
import configparser
import json
import os
import re
import shlex
import socket
import sys
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.configfile import _subparser, load_config_file
from audit.cli.main import build_parser, main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset

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
    # the recipe alerts: a webhook and a mail, on new errors whatever --fail-on says
    assert [d.split(":")[0] for d in values["notify"]] == ["https", "mailto"]
    assert values["smtp"] and values["notify_on"] == "error"


_ALERT_KEYS = ("notify", "smtp", "notify-on")


def recipe_config(
    path: Path, target: str, notify: list[str] | None = None, smtp: str | None = None
) -> Path:
    """docs/schedule/audit.toml as it is, but for its example values: the target, and the
    alert destinations (None: the alert lines left out)."""
    lines = []
    for line in (DOCS / "audit.toml").read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if key == "targets":
            line = f"targets = [{json.dumps(target)}]"
        elif key in _ALERT_KEYS and notify is None:
            continue
        elif key == "notify":
            line = f"notify = {json.dumps(notify)}"
        elif key == "smtp":
            line = f"smtp = {json.dumps(smtp)}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return path


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
        str(recipe_config(tmp_path / "audit.toml", base + "/")),
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


# --- the crontab entry, night after night ---------------------------------------------


class Receivers:
    """A webhook receiver (aiohttp) and an SMTP server (aiosmtpd), both on loopback."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.mails: list[Message] = []

    async def webhook(self, serve: Serve) -> str:
        async def hook(request: web.Request) -> web.Response:
            self.posts.append(await request.json())
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_post("/hook", hook)
        return await serve(app) + "/hook"

    def smtp(self) -> Any:
        from aiosmtpd.controller import Controller
        from aiosmtpd.handlers import Message as Keep

        mails = self.mails

        class Handler(Keep):
            def handle_message(self, message: Message) -> None:
                mails.append(message)

        with socket.socket() as probe:  # a free port (aiosmtpd's Controller wants one)
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return Controller(Handler(), hostname="127.0.0.1", port=port)

    def count(self) -> tuple[int, int]:
        return len(self.posts), len(self.mails)


def crontab_command() -> str:
    for line in (DOCS / "crontab").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#") and not re.match(r"^\w+=", line):
            return line.split(None, 5)[5]
    raise AssertionError("no crontab entry")


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_the_crontab_recipe_alerts_once_per_worse_night(serve: Serve, tmp_path: Path) -> None:
    """The crontab entry of docs/schedule/, word for word but for its paths, run by
    /bin/sh as cron runs it, with docs/schedule/audit.toml (its example target and alert
    destinations replaced by loopback ones): a night with new errors sends exactly one
    webhook post and one mail, although the crawl runs with --fail-on never; a night like
    the one before sends nothing; the first night, with no baseline, is never
    "unchanged"; a sitemap that loses 2 URLs and gains 2 others lost 2."""
    site = Site()
    base = await serve(site)
    n = 10
    listed = [f"/p/{i}" for i in range(n)]

    def publish() -> None:
        site.routes["/sitemap.xml"] = (200, XML, urlset(*[base + path for path in listed]))

    site.routes["/robots.txt"] = (
        200,
        TEXT,
        f"User-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml\n",
    )
    for i in range(n):
        site.routes[f"/p/{i}"] = (200, HTML, f"page {i}")
    site.routes["/p/9"] = (404, HTML, "gone")  # an old problem, there from the first night
    publish()

    got = Receivers()
    hook = await got.webhook(serve)
    controller = got.smtp()
    controller.start()
    work = tmp_path / "var-lib"
    work.mkdir()
    config = recipe_config(
        tmp_path / "audit.toml",
        base + "/",
        [hook, "mailto:seo-team@example.test"],
        f"127.0.0.1:{controller.port}",
    )
    command = crontab_command()
    assert command.count("/var/lib/sitemap-audit") == 1
    assert command.count("/etc/sitemap-audit/audit.toml") == 1
    command = command.replace("/var/lib/sitemap-audit", shlex.quote(str(work)))
    command = command.replace("/etc/sitemap-audit/audit.toml", shlex.quote(str(config)))
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["SITEMAP_AUDIT_SMTP_FROM"] = "audit@example.test"

    async def night() -> tuple[int, str]:
        """One cron run: the exit status, and the output cron would mail."""
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await proc.communicate()
        return await proc.wait(), out.decode()

    try:
        # night 1: no baseline. It has an error, so it tells, once, as BASELINE
        assert await night() == (0, "")
        assert got.count() == (1, 1)
        first = got.posts[0]
        assert first["verdict"] == "baseline"
        assert first["text"].startswith(f"sitemap-audit BASELINE: {base}/")
        assert "UNCHANGED" not in first["text"] and "UNCHANGED" not in got.mails[0]["Subject"]
        assert first["alerts"] == [
            "ALERT: 1 finding(s) at or above --notify-on error; no previous complete run to "
            "compare with"
        ]
        made = {p.name for p in work.iterdir()}
        assert {"last.jsonl", "report.html", "state.sqlite"} <= made
        assert not {"run.jsonl", "previous.jsonl", "diff.txt"} & made  # nothing to diff yet

        # night 2: the same site: nothing is sent, cron has nothing to mail
        assert await night() == (0, "")
        assert got.count() == (1, 1)
        assert (work / "diff.txt").read_text().splitlines()[2] == (
            "0 new findings, 0 fixed findings, 2 still failing"
        )

        # night 3: five pages now answer 404: one webhook post and one mail
        for i in range(5):
            site.routes[f"/p/{i}"] = (404, HTML, "gone")
        code, output = await night()
        assert (code, output) == (1, "")  # the diff's exit: regressions; cron mails nothing
        assert got.count() == (2, 2)
        worse, mail = got.posts[1], got.mails[1]
        assert worse["verdict"] == "worse"
        assert worse["alerts"] == ["ALERT: 5 new finding(s) at or above --notify-on error"]
        assert worse["summary"]["findings"]["error"] == 6
        assert mail["Subject"].startswith(f"sitemap-audit WORSE: {base}/: 10 URLs, 6 errors")
        assert mail["To"] == "seo-team@example.test" and mail["From"] == "audit@example.test"
        assert parsedate_to_datetime(mail["Date"]).tzinfo is not None
        assert re.fullmatch(r"<[^<>@\s]+@example\.test>", mail["Message-ID"])
        assert mail["Message-ID"] != got.mails[0]["Message-ID"]
        assert "ALERT: 5 new finding(s)" in str(mail.get_payload())
        assert "5 new findings" in (work / "diff.txt").read_text()

        # night 4: still broken, not worse: nothing
        assert await night() == (0, "")
        assert got.count() == (2, 2)

        # night 5: the sitemap loses 2 URLs and gains 2 others (the count stays 10):
        # 2 of 10 URLs left the sitemaps, 20% >= 10%
        listed[5:7] = ["/q/0", "/q/1"]
        site.routes["/q/0"] = site.routes["/q/1"] = (200, HTML, "new")
        publish()
        assert await night() == (0, "")
        assert got.count() == (3, 3)
        dropped = got.posts[2]
        assert dropped["verdict"] == "worse" and dropped["summary"]["urls"] == n
        assert f"ALERT: the audit lost 20% of its URLs (2 of {n} no longer listed; " in (
            "\n".join(dropped["alerts"])
        )
    finally:
        controller.stop()
