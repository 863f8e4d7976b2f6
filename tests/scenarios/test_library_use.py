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
from audit.core.errors import TargetError
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
    from tests.state.test_store import run_main

    site = NightSite(4, n=30)
    site.base = await serve(site.app())
    target = site.base + "/sitemap.xml"
    cli_out, lib_out = tmp_path / "cli.jsonl", tmp_path / "lib.jsonl"
    await run_main(_argv(target, cli_out, *flags))
    records: list[dict[str, Any]] = []
    await crawl_async(target, on_record=records.append, rate="unlimited", retries=0, **options)
    lib_out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert_same(truth(lib_out), truth(cli_out), f"library against CLI {flags}")


# --- the run options: state, content, notify, intent, ignore (issue 29.4) ----------------

# how long a run took or when a page changed: the run's own, not the site's
VOLATILE = frozenset({"elapsed_ms", "duration_s", "content_changed", "checked_at"})


def _comparable(records: list[dict[str, Any]]) -> list[str]:
    """The records without their timings, in a stable order (the two runs interleave
    their URLs differently)."""
    import json

    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in VOLATILE}, sort_keys=True)
        for r in records
    )


def _page(text: str) -> str:
    return f"<html><head><title>t</title></head><body><main><p>{text}</p></main></body></html>"


def _night_routes(base: str, night: int) -> dict[str, Any]:
    """Night 2: /a's text changed under the same <lastmod> (lastmod-frozen), /b's <lastmod>
    moved over the same text (lastmod-churn); /c answers 404 both nights."""
    lastmod = {"a": "2024-05-01", "b": "2024-05-01" if night == 1 else "2024-06-01"}
    body = "".join(
        f"<url><loc>{base}/{p}</loc><lastmod>{lastmod[p]}</lastmod></url>\n" for p in "ab"
    )
    sitemap = urlset(f"{base}/c").replace("<url>", body + "<url>", 1)
    return {
        "/sitemap.xml": (200, XML, sitemap),
        "/a": (200, HTML, _page(f"alpha words of night {night}")),
        "/b": (200, HTML, _page("beta words every night")),
        "/c": (404, HTML, "gone"),
    }


def _cli_argv(target: str, out: Path, *flags: str) -> list[str]:
    return [
        "crawl", target, "--format", "jsonl", "--output", str(out), "--no-progress",
        "--rate", "unlimited", "--retries", "0", "--fail-on", "never", *flags,
    ]  # fmt: skip


def _read(path: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_state_and_content_two_nights_report_what_the_command_line_reports(
    serve: Serve, tmp_path: Path
) -> None:
    """`state=` and `content=True` on two nights give the records of `--state --content`,
    record by record: the ledger, the carried answers and lastmod over time included."""
    from tests.state.test_store import run_main

    site = Site()
    base = await serve(site)
    target = base + "/sitemap.xml"
    for night in (1, 2):
        site.routes = _night_routes(base, night)
        cli_out = tmp_path / f"cli{night}.jsonl"
        flags = ("--state", str(tmp_path / "cli.sqlite"), "--content")
        assert await run_main(_cli_argv(target, cli_out, *flags)) == 0
        records: list[dict[str, Any]] = []
        result = await audit.crawl_async(
            target,
            on_record=records.append,
            state=tmp_path / "lib.sqlite",
            content=True,
            rate="unlimited",
            retries=0,
        )
        assert _comparable(records) == _comparable(_read(cli_out)), f"night {night}"
        assert result.summary["ledger"]["listed"] == 3
    by_code = result.summary["by_code"]  # the second night's: the state and content at work
    assert by_code["lastmod-frozen"] == by_code["lastmod-churn"] == 1


async def test_budget_intent_and_ignore_report_what_the_command_line_reports(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = _night_routes(base, 1)
    target = base + "/sitemap.xml"
    plan = tmp_path / "intent.csv"
    plan.write_text(f"url,action\n{base}/a,gone\n/c,keep\n", encoding="utf-8")
    cli_out = tmp_path / "cli.jsonl"
    flags = ("--state", str(tmp_path / "cli.sqlite"), "--budget", "2", "--intent", str(plan))
    from tests.state.test_store import run_main

    assert await run_main(_cli_argv(target, cli_out, *flags, "--ignore", "url-not-found")) == 0
    records: list[dict[str, Any]] = []
    result = await audit.crawl_async(
        target,
        on_record=records.append,
        state=str(tmp_path / "lib.sqlite"),
        budget=2,
        intent=str(plan),
        ignore="url-not-found",
        rate="unlimited",
        retries=0,
    )
    assert _comparable(records) == _comparable(_read(cli_out))
    summary = result.summary
    assert summary["ignored"] == ["url-not-found"] and "url-not-found" not in summary["by_code"]
    assert summary["intent"]["gone"] == {"judged": 1, "violated": 1}  # /a answers 200
    assert summary["budget"] == {"limit": 2, "checked": 2, "carried": 1}
    assert summary["by_code"]["budget-unchecked"] == 1  # the third URL, never checked


async def test_notify_sends_what_the_command_line_sends(serve: Serve, tmp_path: Path) -> None:
    """`notify=URL` posts the notification `--notify URL` posts (by default only when the
    night got worse: the second night's new 404 is)."""
    from aiohttp import web

    from tests.state.test_store import run_main

    posts: list[dict[str, Any]] = []

    async def hook(request: web.Request) -> web.Response:
        posts.append(await request.json())
        return web.Response(text="ok")

    site = Site()
    base = await serve(site)
    target = base + "/sitemap.xml"
    site.routes = _night_routes(base, 1)
    site.routes["/hook"] = hook
    for night in (1, 2):
        if night == 2:
            site.routes["/b"] = (404, HTML, "gone now")
        flags = ("--state", str(tmp_path / "cli.sqlite"), "--notify", base + "/hook")
        await run_main(_cli_argv(target, tmp_path / "cli.jsonl", *flags))
        result = await audit.crawl_async(
            target,
            state=str(tmp_path / "lib.sqlite"),
            notify=[base + "/hook"],
            rate="unlimited",
            retries=0,
        )
        assert result.notify_errors == []
    assert [p["verdict"] for p in posts] == ["baseline", "baseline", "worse", "worse"]
    cli, lib = posts[2], posts[3]
    for post in (cli, lib):
        del post["summary"]["duration_s"]
    assert cli == lib
    assert cli["alerts"] == ["ALERT: 1 new finding(s) at or above --notify-on error"]
    assert cli["summary"]["findings"]["error"] == 2  # /b's new 404 beside /c's


@pytest.mark.slow
async def test_migrate_reports_what_the_command_line_reports(serve: Serve, tmp_path: Path) -> None:
    from tests.state.test_store import run_main

    old, new = Site(), Site()
    old_base, new_base = await serve(old), await serve(new)
    old.routes = {"/sitemap.xml": (200, XML, urlset(*(f"{old_base}/p{i}" for i in range(4))))}
    new.routes = {
        "/p0": (200, HTML, _page("zero")),
        "/p1": (301, {"Location": "/p0"}, ""),
        "/p2": (404, HTML, "gone"),
    }
    cli_out = tmp_path / "cli.jsonl"
    argv = ["migrate", old_base + "/sitemap.xml", new_base, "--format", "jsonl", "--output",
            str(cli_out), "--no-progress", "--retries", "0", "--state",
            str(tmp_path / "cli.sqlite")]  # fmt: skip
    assert await run_main(argv) == 1
    records: list[dict[str, Any]] = []
    from audit.api import migrate_async

    result = await migrate_async(
        old_base + "/sitemap.xml",
        new_base,
        on_record=records.append,
        retries=0,
        state=str(tmp_path / "lib.sqlite"),
    )
    assert _comparable(records) == _comparable(_read(cli_out))
    assert result.failed("error") and result.summary["urls"] == 4


def _cli_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    from audit.cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("sitemap-audit: error: ")
    return err.removeprefix("sitemap-audit: error: ")


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--budget", "5"], {"budget": 5}),
        (["--fresh"], {"fresh": True}),
        (["--notify-on", "warning"], {"notify_on": "warning"}),
        (["--notify", "ftp://x.example/"], {"notify": "ftp://x.example/"}),
        (["--dry-run"], {"dry_run": True}),
        (["--indexnow", "short"], {"indexnow": "short"}),
        (["--indexnow", "abcdef0123456789"], {"indexnow": "abcdef0123456789"}),
        (
            ["--state", "S", "--budget", "3", "--changed-only"],
            {"state": "S", "budget": 3, "changed_only": True},
        ),
        (
            ["--state", "S", "--changed-only", "--links"],
            {"state": "S", "changed_only": True, "links": True},
        ),
        (["--agents-fetch", "3"], {"agents_fetch": 3}),
        (["--include", "("], {"include": "("}),
        (["--render-tabs", "17"], {"render_tabs": 17}),
        (["--auth", "u:p"], {"auth": ("u", "p")}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_library_input_errors_are_the_command_lines_messages(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    options: dict[str, Any],
) -> None:
    """The checks of options that go together run once, in the front door: a library caller
    gets the very line the command line prints (a ValueError), before anything is opened."""
    sitemap = str(ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml")
    state = str(tmp_path / "s.sqlite")
    flags = [state if f == "S" else f for f in flags]
    options = {k: state if v == "S" else v for k, v in options.items()}
    message = _cli_error(capsys, ["crawl", sitemap, "--no-progress", *flags])
    with pytest.raises(ValueError) as caught:
        audit.crawl(sitemap, **options)
    assert str(caught.value) == message
    assert not (tmp_path / "s.sqlite").exists()  # checked before the state was opened


def test_a_malformed_intent_file_is_the_command_lines_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sitemap = str(ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml")
    plan = tmp_path / "intent.csv"
    plan.write_text("url,action\nhttps://www.example.com/a,explode\n", encoding="utf-8")
    message = _cli_error(capsys, ["crawl", sitemap, "--intent", str(plan), "--no-progress"])
    with pytest.raises(audit.TargetError) as caught:
        audit.crawl(sitemap, intent=str(plan))
    assert str(caught.value) == message and str(plan) in message


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"state": 3}, TypeError, "state: expected a string"),
        ({"budget": 0}, ValueError, "budget: must be at least 1"),
        ({"notify_on": "loud"}, ValueError, "notify_on: one of error, warning, info"),
        ({"ignore": "no-such-code"}, ValueError, "unknown finding code no-such-code"),
    ],
)
def test_run_options_are_checked_like_the_config(
    options: dict[str, Any], error: type[Exception], words: str
) -> None:
    sitemap = str(ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml")
    with pytest.raises(error) as caught:
        audit.crawl(sitemap, **options)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_validate_takes_ignore_and_refuses_the_options_of_crawl() -> None:
    sitemap = str(ROOT / "fixtures" / "sitemaps" / "broken" / "element-unknown.xml")
    with pytest.raises(TypeError, match="'state' is an option of crawl, not of validate"):
        audit.validate(sitemap, state="x.sqlite")
    plain = audit.validate(sitemap)
    ignored = audit.validate(sitemap, ignore=["element-unknown"])
    assert plain.summary["by_code"].get("element-unknown")
    assert "element-unknown" not in ignored.summary["by_code"]


async def test_indexnow_submits_what_the_command_line_submits(serve: Serve, tmp_path: Path) -> None:
    """`indexnow=KEY` (with `state=`) posts the URLs `--indexnow KEY` posts, after a complete
    run, and the `indexnow` records are the same."""
    from tests.state.test_indexnow import KEY, night, of, start

    pages, endpoint = await start(serve)
    code, cli = await night(pages, endpoint, tmp_path / "cli.sqlite", tmp_path / "cli.jsonl")
    assert code == 0
    cli_posts = list(endpoint.urls())
    endpoint.posts.clear()
    records: list[dict[str, Any]] = []
    result = await audit.crawl_async(
        f"{pages.base}/sitemap.xml",
        on_record=records.append,
        state=str(tmp_path / "lib.sqlite"),
        indexnow=KEY,
        indexnow_endpoint=endpoint.url,
        rate=1000,
    )
    assert sorted(endpoint.urls()) == sorted(cli_posts) and len(cli_posts) == 6
    assert _comparable(of(records, "indexnow")) == _comparable(of(cli, "indexnow"))
    assert result.summary["indexnow"] == next(r for r in cli if r["type"] == "summary")["indexnow"]


@pytest.mark.parametrize(
    ("flags", "options", "error"),
    [
        (["https://staging.example.com/x"], {"new": "https://staging.example.com/x"}, TargetError),
        (["https://staging.example.com", "--fresh"], {"fresh": True}, ValueError),
        (["https://staging.example.com", "--map", "missing.csv"], {"map": "missing.csv"},
         TargetError),
        (["https://staging.example.com", "--exclude", "["], {"exclude": "["}, ValueError),
    ],
)  # fmt: skip
def test_library_migrate_errors_are_the_command_lines_messages(
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    options: dict[str, Any],
    error: type[Exception],
) -> None:
    """`audit.api.migrate` (the package's `audit.migrate` is the migration subpackage) checks
    NEW, the map and the options as `sitemap-audit migrate` does, with its lines."""
    from audit.api import migrate

    old = "https://www.example.com/sitemap.xml"
    message = _cli_error(capsys, ["migrate", old, *flags, "--no-progress"])
    new = options.pop("new", "https://staging.example.com")
    with pytest.raises(error) as caught:
        migrate(old, new, **options)
    assert str(caught.value) == message
