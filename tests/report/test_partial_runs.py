"""A partial run says so everywhere (issue 17.1), with real processes: a crawl is held
half-way by the test's own server, then interrupted (SIGINT, SIGTERM: the report is
still written) or killed (SIGKILL: only the jsonl has what was done, and converting it
with `sitemap-audit report` says the run did not finish)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lxml import html as lhtml

from tests.crawlkit import HeldSite, Serve
from tests.report.reportkit import parse_junit

N = 30
INTERRUPTED = re.compile(
    r"the run was interrupted by SIG(?:INT|TERM) after 1 sitemap and \d+ URLs?"
)
NOT_FINISHED = re.compile(r"the run did not finish after \d+ sitemaps? and \d+ URLs?")


@pytest.fixture
async def held_site(serve: Serve) -> AsyncIterator[HeldSite]:
    site = await HeldSite(N).serve(serve)
    yield site
    site.gate.set()


async def crawl_and_signal(site: HeldSite, fmt: str, out: Path, sig: signal.Signals) -> int:
    """`sitemap-audit crawl` in its own process, sent `sig` once it is held half-way."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        "crawl",
        f"{site.base}/sitemap.xml",
        "--format",
        fmt,
        "--output",
        str(out),
        "--no-progress",
        "--rate",
        "1000",
        "--concurrency",
        "1",
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await site.held.wait()
        proc.send_signal(sig)
        return await proc.wait()
    finally:
        site.gate.set()


def said_in(fmt: str, text: str) -> str:
    """Where the format states the run's completeness, as plain text."""
    if fmt == "html":
        doc = lhtml.fromstring(text)
        return (
            doc.get_element_by_id("verdict").text_content()
            + doc.get_element_by_id("partial").text_content()
        )
    if fmt == "junit":
        error = parse_junit(text).find("testsuite/testcase/error")
        assert error is not None, text
        return error.get("message") or ""
    if fmt == "sarif":
        invocation = json.loads(text)["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is False
        return str(invocation["toolExecutionNotifications"][0]["message"]["text"])
    return text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "fmt"),
    [
        (signal.SIGINT, "html"),
        (signal.SIGTERM, "text"),
        (signal.SIGINT, "markdown"),
        (signal.SIGTERM, "junit"),
        (signal.SIGINT, "sarif"),
    ],
)
async def test_an_interrupted_crawl_writes_a_report_that_says_so(
    held_site: HeldSite, tmp_path: Path, sig: signal.Signals, fmt: str
) -> None:
    out = tmp_path / f"report.{fmt}"
    assert await crawl_and_signal(held_site, fmt, out, sig) == 130
    text = out.read_text(encoding="utf-8")
    said = said_in(fmt, text)
    assert INTERRUPTED.search(said), said
    if fmt == "text":
        assert text.splitlines()[-1].startswith("INTERRUPTED: ")
    if fmt == "markdown":
        assert "| **INTERRUPTED**" in text and "**FAIL**" not in text
    if fmt == "html":
        assert "FAIL" not in said and "PASS" not in said


@pytest.mark.slow
async def test_a_killed_crawl_converts_to_reports_that_say_it_did_not_finish(
    held_site: HeldSite, tmp_path: Path
) -> None:
    killed = tmp_path / "killed.jsonl"
    assert await crawl_and_signal(held_site, "jsonl", killed, signal.SIGKILL) == -signal.SIGKILL
    assert '"summary"' not in killed.read_text(encoding="utf-8")
    for fmt in ("text", "markdown", "html", "junit", "sarif"):
        out = tmp_path / f"converted.{fmt}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "audit", "report", str(killed), "--format", fmt,
            "--output", str(out),
        )  # fmt: skip
        await proc.wait()
        said = said_in(fmt, out.read_text(encoding="utf-8"))
        assert NOT_FINISHED.search(said), (fmt, said)
