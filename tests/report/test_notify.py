"""--notify over real loopback: a webhook receiver (aiohttp) and an SMTP server
(aiosmtpd) see exactly one message on a night that got worse and none on an
unchanged night."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.main import main
from audit.report.notify import Notice, NotifyError, parse_smtp, send, validate_dest
from tests.crawlkit import HTML, XML, Serve, Site, urlset
from tests.state.test_lastmod_runs import MutatingSite, Page
from tests.state.test_store import crawl_argv, run_main


def _site() -> MutatingSite:
    return MutatingSite({f"p{i}": Page(f"Page {i}.", "2024-05-01") for i in range(4)})


async def _receiver(serve: Serve) -> tuple[str, list[dict[str, Any]]]:
    got: list[dict[str, Any]] = []

    async def hook(request: web.Request) -> web.Response:
        got.append(await request.json())
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/hook", hook)
    return await serve(app) + "/hook", got


@pytest.mark.slow
async def test_webhook_once_on_a_worse_night_never_on_an_unchanged_one(
    serve: Serve, tmp_path: Path
) -> None:
    site = _site()
    site.base = await serve(site.app())
    url, got = await _receiver(serve)
    state, target = tmp_path / "s.sqlite", site.base + "/sitemap.xml"

    def night(n: int) -> list[str]:
        return crawl_argv(target, state, tmp_path / f"{n}.jsonl", "--notify", url)

    assert await run_main(night(1)) == 0
    assert got == []  # a clean first night: nothing got worse
    assert await run_main(night(2)) == 0
    assert got == []  # unchanged
    site.pages["p3"].status = 404  # still listed, now gone
    assert await run_main(night(3)) == 1
    assert len(got) == 1
    message = got[0]
    assert message["verdict"] == "worse"
    assert message["text"].startswith("sitemap-audit WORSE: " + target)
    assert "ALERT: 1 new finding(s) at or above --notify-on error" in message["alerts"]
    assert message["summary"]["findings"]["error"] == 1
    assert message["targets"] == [target]
    assert await run_main(night(4)) == 1  # still broken, but not worse than last night
    assert len(got) == 1


@pytest.mark.slow
async def test_mail_once_on_a_worse_night(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    mails: list[Any] = []

    class Keep(Message):
        def handle_message(self, message: Any) -> None:
            mails.append(message)

    with socket.socket() as probe:  # a free port (aiosmtpd's Controller wants one given)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        smtp = f"127.0.0.1:{port}"
        monkeypatch.setenv("SITEMAP_AUDIT_SMTP_FROM", "audit@example.test")
        site = _site()
        site.base = await serve(site.app())
        state, target = tmp_path / "s.sqlite", site.base + "/sitemap.xml"
        extra = ("--notify", "mailto:team@example.test", "--smtp", smtp)
        for n in (1, 2):
            assert await run_main(crawl_argv(target, state, tmp_path / f"{n}.jsonl", *extra)) == 0
        assert mails == []
        del site.pages["p1"], site.pages["p0"]  # the sitemap lost half its URLs
        await run_main(crawl_argv(target, state, tmp_path / "3.jsonl", *extra))
        assert len(mails) == 1
        mail = mails[0]
        assert mail["To"] == "team@example.test"
        assert mail["From"] == "audit@example.test"
        assert mail["Subject"].startswith("sitemap-audit WORSE")
        body = mail.get_payload()
        assert "sitemap" in body and "ALERT:" in body
    finally:
        controller.stop()


async def test_webhook_error_is_one_line(serve: Serve) -> None:
    async def refuse(request: web.Request) -> web.Response:
        return web.Response(status=500)

    app = web.Application()
    app.router.add_post("/hook", refuse)
    url = await serve(app) + "/hook"
    notice = Notice(["t"], {"urls": 0, "findings": {}}, ["ALERT: x"], True)
    with pytest.raises(NotifyError, match="answered HTTP 500"):
        import asyncio

        await asyncio.to_thread(send, url, notice)
    assert json.loads(json.dumps(notice.payload()))["text"].splitlines()[1] == "ALERT: x"


def test_smtp_spec() -> None:
    assert parse_smtp("127.0.0.1:2525") == ("127.0.0.1", 2525)
    assert parse_smtp("[::1]:25") == ("::1", 25)
    for bad in ("host", "host:x", ":25", "h:70000"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_smtp(bad)


def test_a_notify_destination_is_a_webhook_or_a_mail_address_with_a_server() -> None:
    assert validate_dest("https://hooks.example.test/x", None) == "https://hooks.example.test/x"
    assert validate_dest("MAILTO:team@example.test", "mail:25") == "MAILTO:team@example.test"
    for blank in ("mailto:", "mailto:   ", "mailto:team"):
        with pytest.raises(NotifyError, match=f"^--notify {blank}: no mail address after"):
            validate_dest(blank, "mail:25")
    with pytest.raises(NotifyError, match="needs --smtp HOST:PORT"):
        validate_dest("mailto:team@example.test", None)
    with pytest.raises(NotifyError, match="give an http\\(s\\) webhook URL or mailto:"):
        validate_dest("ftp://example.test/", "mail:25")


async def _redirect_site(serve: Serve) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[f"{base}/p/{i}" for i in range(3)]))
    for i in range(3):
        site.routes[f"/p/{i}"] = (200, HTML, f"page {i}")
    return site, base


async def test_notify_on_is_its_own_threshold_not_fail_on(serve: Serve, tmp_path: Path) -> None:
    """--fail-on never (the recipe's) does not silence --notify; --notify-on warning makes
    a new warning worse, the default (error) does not."""
    site, base = await _redirect_site(serve)
    url, got = await _receiver(serve)
    target = base + "/sitemap.xml"

    def night(n: int, state: str, *extra: str) -> list[str]:
        out = tmp_path / f"{state}-{n}.jsonl"
        argv = crawl_argv(target, tmp_path / f"{state}.sqlite", out, "--notify", url)
        return [*argv, "--fail-on", "never", *extra]

    for state, extra in (("default", ()), ("warning", ("--notify-on", "warning"))):
        assert await run_main(night(1, state, *extra)) == 0
    assert got == []  # clean first nights: no baseline, nothing to tell
    site.routes["/p/1"] = (301, {"Location": f"{base}/p/2"}, "")  # url-redirect: a warning
    assert await run_main(night(2, "default")) == 0
    assert got == []  # a new warning is not worse at --notify-on error
    assert await run_main(night(2, "warning", "--notify-on", "warning")) == 0
    assert len(got) == 1 and got[0]["verdict"] == "worse"
    assert got[0]["alerts"] == ["ALERT: 1 new finding(s) at or above --notify-on warning"]
    site.routes["/p/0"] = (404, HTML, "gone")  # and a new error, at the default level
    assert await run_main(night(3, "default")) == 0  # --fail-on never: exit 0 all the same
    assert len(got) == 2
    assert got[1]["alerts"] == ["ALERT: 1 new finding(s) at or above --notify-on error"]


async def test_a_run_without_a_baseline_is_never_unchanged(serve: Serve, tmp_path: Path) -> None:
    site, base = await _redirect_site(serve)
    url, got = await _receiver(serve)
    target, state = base + "/sitemap.xml", tmp_path / "s.sqlite"
    always = ("--notify", url, "--notify-always", "--fail-on", "never")
    assert await run_main(crawl_argv(target, state, tmp_path / "1.jsonl", *always)) == 0
    assert [m["verdict"] for m in got] == ["baseline"]
    assert got[0]["text"].splitlines() == [
        f"sitemap-audit BASELINE: {target}: 3 URLs, 0 errors, 0 warnings",
        "no previous complete run to compare with: this run is the baseline",
    ]
    assert await run_main(crawl_argv(target, state, tmp_path / "2.jsonl", *always)) == 0
    assert [m["verdict"] for m in got] == ["baseline", "unchanged"]  # now there is one
    # without --state there is never a baseline: errors are told as such, not as new
    site.routes["/p/2"] = (404, HTML, "gone")
    argv = crawl_argv(target, state, tmp_path / "3.jsonl", "--notify", url, "--fail-on", "never")
    stateless = [a for a in argv if a not in ("--state", str(state))]
    assert await run_main(stateless) == 0
    assert got[2]["verdict"] == "baseline"
    assert got[2]["alerts"] == [
        "ALERT: 1 finding(s) at or above --notify-on error; no previous complete run to "
        "compare with"
    ]


def test_notify_on_needs_notify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(urlset("https://www.example.com/a"))
    code = main(["crawl", str(sitemap), "--notify-on", "warning"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--notify-on" in err[0] and "need --notify DEST" in err[0]


async def test_a_night_cut_by_max_urls_is_judged_on_what_both_nights_checked(
    serve: Serve, tmp_path: Path
) -> None:
    """--max-urls 3 every night: the sitemap's order changes, so tonight checks pages the
    last night never reached; their 404s are not "new" (the last night cannot say), a 404
    on a page both nights checked is."""
    site = Site()
    base = await serve(site)
    pages = [f"{base}/p/{i}" for i in range(6)]
    site.routes["/sitemap.xml"] = (200, XML, urlset(*pages))
    for i in range(6):
        site.routes[f"/p/{i}"] = (404, HTML, "gone") if i >= 3 else (200, HTML, "ok")
    url, got = await _receiver(serve)
    state = tmp_path / "s.sqlite"

    def night(n: int) -> list[str]:
        out = tmp_path / f"{n}.jsonl"
        return [*crawl_argv(base + "/sitemap.xml", state, out, "--notify", url),
                "--fail-on", "never", "--max-urls", "3", "--concurrency", "1"]  # fmt: skip

    assert await run_main(night(1)) == 0  # p/0..2, all fine
    site.routes["/sitemap.xml"] = (200, XML, urlset(*pages[2:], *pages[:2]))
    assert await run_main(night(2)) == 0  # p/2..4: two 404s the first night never saw
    assert got == []
    site.routes["/p/2"] = (404, HTML, "gone")
    assert await run_main(night(3)) == 0  # p/2..4 again: p/2, checked both nights, broke
    assert len(got) == 1
    assert got[0]["alerts"] == ["ALERT: 1 new finding(s) at or above --notify-on error"]
