"""checks/verdict.py: one URL's verdict as a value, judged on real answers over loopback.

Every answer here is a real response of an inline aiohttp handler on 127.0.0.1, read by
the project's own HttpClient (HEAD, or GET with the page checks' sink), then judged by
`judge_url`. The values are checked against what the findings say and against the
record-and-findings reading a report allows (`index_reason` from the codes), so the values and the
codes cannot drift apart; stored evidence read back gives the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from aiohttp import web

from audit.checks.agents import index_reason
from audit.checks.page import PageSink
from audit.checks.response import judge_answer
from audit.checks.verdict import (
    Indexability,
    Lastmod,
    Listing,
    UrlVerdict,
    judge_unrequested,
    judge_url,
)
from audit.core.config import CrawlConfig
from audit.core.evidence import Evidence, decode_evidence, encode_evidence
from audit.core.records import FetchResult
from audit.http import HttpClient
from tests.crawlkit import Serve

AGENT = "sitemap-audit"
CAP = 64 * 1024
PAGE = (
    "<!doctype html><html><head><title>A page</title></head><body><main>"
    + "<p>Plenty of visible text on this page, read by every crawler. </p>" * 8
    + "</main></body></html>"
)
SHELL = (
    "<!doctype html><html><head><script src='/app.js'></script></head>"
    "<body><div id='root'></div></body></html>"
)


def _http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(UTC), usegmt=True)


def _app() -> web.Application:
    """One handler per case, each answering as a real site does."""

    def html(text: str, **headers: str) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=text, content_type="text/html", headers=headers)

        return handler

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/plain")

    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=404, text="not here")

    async def pdf(request: web.Request) -> web.Response:
        return web.Response(body=b"%PDF-1.4", content_type="application/pdf")

    async def now(request: web.Request) -> web.Response:  # Last-Modified: the request's time
        stamp = _http_date(datetime.now(UTC))
        return web.Response(text=PAGE, content_type="text/html", headers={"Last-Modified": stamp})

    app = web.Application()
    app.router.add_get("/plain", html(PAGE))
    app.router.add_get("/noindex-header", html(PAGE, **{"X-Robots-Tag": "noindex"}))
    app.router.add_get(
        "/canonical-header", html(PAGE, Link='<https://example.com/other>; rel="canonical"')
    )
    app.router.add_get(
        "/meta-noindex",
        html(PAGE.replace("<title>", '<meta name="robots" content="noindex"><title>')),
    )
    app.router.add_get(
        "/both-noindex",
        html(
            PAGE.replace("<title>", '<meta name="robots" content="noindex"><title>'),
            **{"X-Robots-Tag": "noindex"},
        ),
    )
    app.router.add_get(
        "/head-canonical", html(PAGE.replace("<title>", '<link rel="canonical" href="/x">'))
    )
    app.router.add_get("/shell", html(SHELL))
    app.router.add_get("/dated", html(PAGE, **{"Last-Modified": "Wed, 10 Jan 2024 12:00:00 GMT"}))
    app.router.add_get("/now", now)
    app.router.add_get("/moved", moved)
    app.router.add_get("/gone", gone)
    app.router.add_get("/file.pdf", pdf)
    return app


def _config() -> CrawlConfig:
    return CrawlConfig(rate=0.0, timeout=2.0, retries=0, user_agent=f"{AGENT}/1.0")


async def _answer(url: str, *, page: bool = False) -> tuple[FetchResult, Any]:
    """The real answer (HEAD, or GET through the page checks' sink) and the page's facts."""
    async with HttpClient(_config()) as client:
        if not page:
            return await client.fetch(url), None
        sink = PageSink(CAP)
        result = await client.fetch_page(url, sink, cap=CAP)
        return result, sink.facts


async def _judged(url: str, *, page: bool = False, lastmod: str | None = None) -> UrlVerdict:
    result, facts = await _answer(url, page=page)
    listed = Listing(url, "https://example.com/sitemap.xml", 7, lastmod)
    return judge_url(result, listed, _config(), agent_token=AGENT, facts=facts)


def _codes(verdict: UrlVerdict) -> list[str]:
    return [f.code for f in verdict.findings]


def _agrees(verdict: UrlVerdict, result: FetchResult | None) -> None:
    """The values say what the findings say: the report's reading of them by code gives
    the same indexability, and noindex / canonical / shell match their codes."""
    codes = set(_codes(verdict))
    reason = verdict.reason.value if verdict.reason is not None else None
    said = index_reason(
        verdict.record,
        result,
        noindex="url-noindex" in codes,
        canonical="url-canonical-mismatch" in codes,
    )
    assert (said.value if said is not None else None) == reason
    assert verdict.noindex == ("url-noindex" in codes)
    assert verdict.canonical == ("url-canonical-mismatch" in codes)
    assert verdict.shell == ("url-empty-shell" in codes)
    held = verdict.deploy_held
    assert (held is not None) == bool(
        codes & {"lastmod-stale", "lastmod-ahead", "last-modified-dynamic"}
    )
    if held is not None:
        assert held in verdict.findings


async def test_a_plain_page_is_indexable_with_its_record(serve: Serve) -> None:
    base = await serve(_app())
    verdict = await _judged(f"{base}/plain")
    assert verdict.indexable and verdict.reason is None and verdict.findings == []
    assert verdict.record.status == 200 and verdict.record.line == 7
    assert verdict.record.sitemap == "https://example.com/sitemap.xml"
    assert verdict.index_fields() == {"indexable": True, "indexability": None}
    assert not (verdict.noindex or verdict.canonical or verdict.shell)
    assert verdict.lastmod is Lastmod.NONE and verdict.deploy_held is None
    _agrees(verdict, (await _answer(f"{base}/plain"))[0])


async def test_header_noindex_and_canonical_are_values_and_reasons(serve: Serve) -> None:
    base = await serve(_app())
    noindex = await _judged(f"{base}/noindex-header")
    assert noindex.noindex and noindex.reason is Indexability.NOINDEX
    assert _codes(noindex) == ["url-noindex"]
    assert noindex.index_fields() == {"indexable": False, "indexability": "noindex"}
    elsewhere = await _judged(f"{base}/canonical-header")
    assert elsewhere.canonical and not elsewhere.noindex
    assert elsewhere.reason is Indexability.CANONICAL
    for verdict, path in ((noindex, "noindex-header"), (elsewhere, "canonical-header")):
        _agrees(verdict, (await _answer(f"{base}/{path}"))[0])


async def test_page_checks_join_the_header_findings_into_one_verdict(serve: Serve) -> None:
    base = await serve(_app())
    meta = await _judged(f"{base}/meta-noindex", page=True)
    assert meta.noindex and meta.reason is Indexability.NOINDEX
    assert _codes(meta) == ["url-noindex"] and "meta" in meta.findings[0].message
    assert meta.record.extra is not None and "page" in meta.record.extra
    both = await _judged(f"{base}/both-noindex", page=True)
    assert _codes(both) == ["url-noindex"]  # the header's finding, naming the meta too
    assert "X-Robots-Tag" in both.findings[0].message and "<meta" in both.findings[0].message
    head = await _judged(f"{base}/head-canonical", page=True)
    assert head.canonical and head.reason is Indexability.CANONICAL
    # without the page read, the head's meta and canonical are not seen
    assert (await _judged(f"{base}/meta-noindex")).indexable
    for verdict, path in ((meta, "meta-noindex"), (both, "both-noindex"), (head, "head-canonical")):
        _agrees(verdict, (await _answer(f"{base}/{path}", page=True))[0])


async def test_an_empty_shell_is_a_value(serve: Serve) -> None:
    base = await serve(_app())
    shell = await _judged(f"{base}/shell", page=True)
    assert shell.shell and "url-empty-shell" in _codes(shell)
    assert shell.indexable  # a shell is indexable: what it shows is the question
    assert not (await _judged(f"{base}/plain", page=True)).shell
    _agrees(shell, (await _answer(f"{base}/shell", page=True))[0])


async def test_the_lastmod_comparison_and_what_a_deploy_stamp_may_explain(serve: Serve) -> None:
    base = await serve(_app())
    url = f"{base}/dated"  # Last-Modified: 2024-01-10 12:00:00 GMT
    cases = {
        "2024-01-10": (Lastmod.EQUAL, None),  # a day's lastmod matches any time that day
        "2024-01-01": (Lastmod.STALE, "lastmod-stale"),
        "2024-02-01": (Lastmod.AHEAD, "lastmod-ahead"),
    }
    result, _ = await _answer(url)
    for lastmod, (match, code) in cases.items():
        verdict = await _judged(url, lastmod=lastmod)
        assert verdict.lastmod is match, lastmod
        assert verdict.lastmod.deploy_may_explain == (code is not None)
        held = verdict.deploy_held
        assert (held.code if held is not None else None) == code
        assert verdict.indexable  # a lastmod finding says nothing of indexability
        _agrees(verdict, result)
    # without a lastmod nothing is compared
    assert (await _judged(url)).lastmod is Lastmod.NONE
    # a Last-Modified that is the time of the request cannot be compared
    dynamic = await _judged(f"{base}/now", lastmod="2024-01-01")
    assert dynamic.lastmod is Lastmod.DYNAMIC
    assert dynamic.deploy_held is not None
    assert dynamic.deploy_held.code == "last-modified-dynamic"


async def test_reasons_before_the_page_redirect_status_type_unreachable(serve: Serve) -> None:
    base = await serve(_app())
    moved = await _judged(f"{base}/moved")
    assert moved.reason is Indexability.REDIRECT and "url-redirect" in _codes(moved)
    # a redirect's Last-Modified is another URL's: not compared
    assert moved.lastmod is Lastmod.NONE
    gone = await _judged(f"{base}/gone")
    assert gone.reason is Indexability.STATUS and _codes(gone) == ["url-not-found"]
    pdf = await _judged(f"{base}/file.pdf")
    assert pdf.reason is Indexability.NOT_HTML and pdf.findings == []
    # a port nothing listens on: no answer at all
    async with HttpClient(_config()) as client:
        down = await client.fetch("http://127.0.0.1:9/nothing")
    unreachable = judge_url(down, Listing(down.url), _config(), agent_token=AGENT)
    assert unreachable.reason is Indexability.UNREACHABLE
    assert _codes(unreachable) == ["url-unreachable"]
    for verdict, path in ((moved, "moved"), (gone, "gone"), (pdf, "file.pdf")):
        _agrees(verdict, (await _answer(f"{base}/{path}"))[0])
    _agrees(unreachable, down)


async def test_the_verdict_equals_the_url_checks_findings(serve: Serve) -> None:
    """judge_url's findings are the URL checks' (judge_answer's) for the same answer, in order."""
    base = await serve(_app())
    for path in ("plain", "noindex-header", "canonical-header", "moved", "gone", "dated"):
        result, _ = await _answer(f"{base}/{path}")
        listed = Listing(result.url, "s.xml", 3, "2024-01-01")
        verdict = judge_url(result, listed, _config(), agent_token=AGENT)
        assert (
            verdict.findings
            == judge_answer(
                result,
                lastmod="2024-01-01",
                sitemap="s.xml",
                line=3,
                config=_config(),
                agent_token=AGENT,
            ).findings
        ), path


async def test_stored_evidence_gives_the_same_verdict(serve: Serve) -> None:
    """Lesson 21: a night that reads the stored answer back derives the same verdict."""
    base = await serve(_app())
    for path, page in (("dated", False), ("both-noindex", True), ("shell", True)):
        async with HttpClient(_config()) as client:
            sink = PageSink(CAP)
            if page:
                result = await client.fetch_page(f"{base}/{path}", sink, cap=CAP)
            else:
                result = await client.fetch(f"{base}/{path}")
        stored = decode_evidence(encode_evidence(Evidence(result, sink.outcome())))
        assert stored is not None
        again = PageSink(CAP)
        again.accept(stored.facts)
        listed = Listing(result.url, "s.xml", 1, "2024-01-01")
        first = judge_url(result, listed, _config(), agent_token=AGENT, facts=sink.facts)
        second = judge_url(stored.result, listed, _config(), agent_token=AGENT, facts=again.facts)
        assert second == first, path


async def test_a_rewritten_url_says_where_it_was_checked(serve: Serve) -> None:
    base = await serve(_app())
    result, _ = await _answer(f"{base}/dated")
    listed = Listing(result.url, "s.xml", 2, "2024-01-01")
    checked = "https://staging.example.com/dated"
    verdict = judge_url(
        result,
        listed,
        _config(),
        agent_token=AGENT,
        extra={"checked_url": checked, "rewritten": True},
        checked_at=checked,
    )
    assert verdict.findings and all(
        f.message.endswith(f"(checked at {checked})") for f in verdict.findings
    )
    assert verdict.deploy_held is not None and verdict.deploy_held in verdict.findings
    assert verdict.record.extra is not None and verdict.record.extra["checked_url"] == checked


def test_a_url_robots_txt_keeps_back_is_judged_without_a_request() -> None:
    listed = Listing("https://example.com/private", "https://example.com/s.xml", 4, None)
    blocked = judge_unrequested(listed, "blocked", agent_token=AGENT)
    assert blocked.reason is Indexability.ROBOTS and blocked.record.robots == "blocked"
    assert _codes(blocked) == ["url-robots-blocked"] and AGENT in blocked.findings[0].message
    held = judge_unrequested(listed, "unreachable", agent_token=AGENT)
    assert held.reason is Indexability.ROBOTS and held.findings == []
    assert held.record.robots == "unreachable" and held.record.status is None
    _agrees(blocked, None)
    _agrees(held, None)
