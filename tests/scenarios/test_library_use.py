"""The README's "Library use" example runs as written and prints a real summary; the front
door raises TargetError when nothing could be audited and checks its options (issue 33.3)."""

from __future__ import annotations

import ast
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import audit
from audit.core.codes import CODES
from audit.core.severity import Severity
from tests.crawlkit import HTML, XML, Serve, Site, urlset

ROOT = Path(__file__).resolve().parents[2]


def _library_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Library use", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the Library use section has no python block"
    return match.group(1)


@pytest.mark.slow
def test_the_readme_library_example_runs_and_prints_a_real_summary() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _library_example()],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    first, second, *examples = out.stdout.splitlines()
    urls, _, findings = first.partition(" URLs checked; ")
    counts = ast.literal_eval(findings)
    assert int(urls) > 0 and set(counts) == {"error", "warning", "info"}
    assert second == f"fails --fail-on error: {counts['error'] > 0}"
    assert len(examples) == min(3, counts["error"])
    for line in examples:  # each one an error of the registry, on the demo server
        code, url = line.split()
        assert CODES[code].severity is Severity.ERROR and url.startswith("http://127.0.0.1:")


def test_the_front_door_is_sorted_and_every_name_resolves() -> None:
    assert audit.__all__ == sorted(audit.__all__)
    for name in audit.__all__:
        assert getattr(audit, name) is not None, name
    assert "aiohttp" not in audit.__all__


def test_a_target_that_cannot_be_audited_is_one_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.xml"
    try:
        audit.validate(str(missing))
    except audit.TargetError as exc:
        assert str(missing) in str(exc) and "\n" not in str(exc)
    else:  # pragma: no cover - the assertion below says what went wrong
        raise AssertionError("validate of a missing file did not raise TargetError")


def test_validate_streams_records_to_the_callback() -> None:
    records: list[dict[str, object]] = []
    sitemap = ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml"
    result = audit.validate(str(sitemap), on_record=records.append)
    assert records[-1] == result.summary and result.summary["type"] == "summary"
    assert [r["type"] for r in records].count("sitemap") == result.summary["sitemaps"] == 1
    assert not result.failed("error")


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_unreachable_site_raises_target_error_not_a_passing_result() -> None:
    site = f"http://127.0.0.1:{_closed_port()}/"
    records: list[dict[str, object]] = []
    with pytest.raises(audit.TargetError) as caught:
        audit.crawl(site, on_record=records.append, timeout=2, retries=0)
    message = str(caught.value)
    assert site in message and "cannot be reached" in message and "\n" not in message
    assert records[-1]["type"] == "summary"  # the stream still ends with its summary


async def test_a_site_without_sitemaps_raises_and_one_of_two_fails_the_result(
    serve: Serve,
) -> None:
    empty = Site()  # answers 404 to everything: no robots.txt, no sitemap anywhere
    bare = await serve(empty)
    with pytest.raises(audit.TargetError, match="no sitemap found"):
        await audit.crawl_async(bare + "/", timeout=2, retries=0)
    good = Site()
    base = await serve(good)
    good.routes = {"/sitemap.xml": (200, XML, urlset(base + "/")), "/": (200, HTML, "<p>hi</p>")}
    result = await audit.crawl_async([base + "/sitemap.xml", bare + "/"], timeout=2)
    assert result.summary["urls"] == 1  # the first was audited
    assert len(result.fatal) == 1 and bare in result.fatal[0]
    assert result.failed("error") and result.failed("never")  # a target was not audited


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"rate": "fast"}, ValueError, "rate: 'fast' is neither"),
        ({"rate": -1}, ValueError, "rate: must be at least 0"),
        ({"concurrency": 0}, ValueError, "concurrency: must be at least 1"),
        ({"timeout": "30"}, TypeError, "timeout: expected a number"),
        ({"retries": 1.5}, TypeError, "retries: expected an integer"),
        ({"page_checks": "yes"}, TypeError, "page_checks: expected True or False"),
        ({"rat": 5}, TypeError, "'rat' is not an audit option (did you mean 'rate'?)"),
        ({"bogus": 1}, TypeError, "'bogus' is not an audit option"),
    ],
)
def test_options_are_checked_with_one_clear_error(
    tmp_path: Path, options: dict[str, object], error: type[Exception], words: str
) -> None:
    sitemap = ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml"
    with pytest.raises(error) as caught:
        audit.validate(str(sitemap), **options)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert not isinstance(caught.value, audit.TargetError)


async def test_rate_unlimited_is_the_command_lines_word(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*(f"{base}/p{i}" for i in range(5)))),
        **{f"/p{i}": (200, HTML, "<p>x</p>") for i in range(5)},
    }
    result = await audit.crawl_async(base + "/sitemap.xml", rate="unlimited", agents="search")
    assert result.summary["urls"] == 5 and not result.failed()
    assert set(result.summary["agents"]) == {"Googlebot", "Bingbot"}


def test_dir_lists_the_front_door() -> None:
    shown = dir(audit)
    assert shown == sorted(audit.__all__)
    for helper in ("Any", "TYPE_CHECKING", "annotations", "importlib"):
        assert helper not in shown


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        ([], {}),
        (
            ["--page-checks", "--agents", "all", "--links"],
            {"page_checks": True, "agents": ("all",), "links": True},
        ),
    ],
    ids=["head", "page-checks-agents-links"],
)
async def test_the_library_reports_what_the_command_line_reports(
    serve: Serve, tmp_path: Path, flags: list[str], options: dict[str, Any]
) -> None:
    """`audit.crawl_async(target, **options)` and `sitemap-audit crawl TARGET --flags` on
    the same generated site give the same records and findings, record by record."""
    import json

    from audit import crawl_async
    from tests.state.nightsite import NightSite
    from tests.state.test_nights_equal_fresh import _argv, assert_same, truth
    from tests.state.test_state import run_main

    site = NightSite(4, n=30)
    site.base = await serve(site.app())
    target = site.base + "/sitemap.xml"
    cli_out, lib_out = tmp_path / "cli.jsonl", tmp_path / "lib.jsonl"
    await run_main(_argv(target, cli_out, *flags))
    records: list[dict[str, Any]] = []
    await crawl_async(target, on_record=records.append, rate="unlimited", retries=0, **options)
    lib_out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert_same(truth(lib_out), truth(cli_out), f"library against CLI {flags}")
