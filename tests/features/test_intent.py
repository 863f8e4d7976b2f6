"""`crawl --intent FILE` over real loopback HTTP (contracts/nights.md section 3).

A site whose sitemap lists one URL per case: every action satisfied and broken, prefix rows
with a `*` target, path rows, a clean control without a row; the file's own exact rows that
no sitemap lists are requested once (counted by the server). The same site crawled without
--intent yields no intent field and no intent-violated finding.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.api import Audit
from audit.cli.main import main
from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.core.records import UrlResult
from audit.features.intent import intent_of, violation
from audit.pipeline.context import RunContext
from audit.pipeline.hooks import Hook
from tests.crawlkit import FAST, HTML, XML, Run, Serve, Site, audit, urlset

PAGE = (200, HTML, "<html><head><title>t</title></head><body>a page</body></html>")

LISTED = [
    "/keep-ok",
    "/keep-noindex",
    "/gone-ok",
    "/gone-home",
    "/red-ok",
    "/red-temporary",
    "/shop/old/lamp",
    "/shop/old/chair",
    "/plain",
]


def moved(to: str, status: int = 301) -> tuple[int, dict[str, str], str]:
    return status, {"Location": to}, ""


async def intent_site(serve: Serve) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /no/\n"),
            "/sitemap.xml": (200, XML, urlset(*(base + p for p in LISTED))),
            "/": PAGE,
            "/keep-ok": PAGE,
            "/keep-noindex": (200, {**HTML, "X-Robots-Tag": "noindex"}, "<html></html>"),
            "/gone-ok": (410, HTML, "gone"),
            "/gone-home": moved("/"),
            "/red-ok": moved("/new"),
            "/red-temporary": moved("/new", 302),
            "/new": PAGE,
            "/shop/old/lamp": moved("/shop/new/lamp"),
            "/shop/new/lamp": PAGE,
            "/shop/old/chair": moved("/shop/new/table", 308),
            "/shop/new/table": PAGE,
            "/plain": PAGE,
            "/unlisted-gone": (410, HTML, "gone"),
            "/unlisted-live": PAGE,
        }
    )
    return site, base


def plan_text(base: str) -> str:
    return (
        "url,action,target\n"
        "# what the launch plan says\n"
        f"{base}/keep-ok,keep\n"
        f"{base}/keep-noindex,KEEP\n"
        "/gone-ok,gone\n"
        "/gone-home,gone\n"
        f"{base}/red-ok,redirect,{base}/new\n"
        "/red-temporary,redirect,/new\n"
        "/shop/old/*,redirect,/shop/new/*\n"
        f"{base}/unlisted-gone,gone\n"
        f"{base}/unlisted-live,gone\n"
        f"{base}/only-a-prefix/*,gone\n"
        "/no/*,keep\n"
        f"{base}/no/blocked,keep\n"
    )


def write_plan(tmp_path: Path, base: str) -> Path:
    path = tmp_path / "intent.csv"
    path.write_text(plan_text(base), encoding="utf-8")
    return path


def violated(run: Run) -> dict[str, dict[str, Any]]:
    return {f["url"]: f for f in run.findings("intent-violated")}


async def test_each_action_satisfied_and_broken(serve: Serve, tmp_path: Path) -> None:
    _site, base = await intent_site(serve)
    plan = write_plan(tmp_path, base)
    run = await audit(base + "/sitemap.xml", intent=str(plan))
    sitemap = base + "/sitemap.xml"

    bad = violated(run)
    assert set(bad) == {
        f"{base}/keep-noindex",
        f"{base}/gone-home",
        f"{base}/red-temporary",
        f"{base}/shop/old/chair",
        f"{base}/unlisted-live",
    }
    for f in bad.values():
        assert f["severity"] == "error"
    # a listed URL's finding is placed where the sitemap lists it
    assert bad[f"{base}/gone-home"]["sitemap"] == sitemap
    assert bad[f"{base}/gone-home"]["line"] == 3 + LISTED.index("/gone-home")
    assert bad[f"{base}/gone-home"]["message"] == (
        f"intent gone ({plan}:6), served 301 -> {base}/ (200)"
    )
    assert bad[f"{base}/keep-noindex"]["message"] == (
        f"intent keep ({plan}:4), served 200, not indexable (noindex)"
    )
    assert bad[f"{base}/red-temporary"]["message"] == (
        f"intent redirect to {base}/new ({plan}:8), served 302 -> {base}/new (200)"
    )
    assert bad[f"{base}/shop/old/chair"]["message"] == (
        f"intent redirect to {base}/shop/new/chair ({plan}:9), "
        f"served 308 -> {base}/shop/new/table (200)"
    )
    # ... on top of the ordinary findings, which do not change
    noindex = [f for f in run.findings("url-noindex") if f["url"] == f"{base}/keep-noindex"]
    assert len(noindex) == 1

    intents = {r["url"]: r.get("intent") for r in run.of("url")}
    assert intents[f"{base}/keep-ok"] == {"action": "keep", "line": 3, "ok": True}
    assert intents[f"{base}/gone-ok"] == {"action": "gone", "line": 5, "ok": True}
    assert intents[f"{base}/red-ok"] == {"action": "redirect", "line": 7, "ok": True}
    assert intents[f"{base}/shop/old/lamp"] == {"action": "redirect", "line": 9, "ok": True}
    assert intents[f"{base}/gone-home"] == {"action": "gone", "line": 6, "ok": False}
    assert intents[f"{base}/plain"] is None  # the control: no row, nothing added

    assert run.summary["urls"] == len(LISTED)  # the intent's own URLs are not listed ones
    assert run.summary["intent"] == {
        "file": str(plan),
        "rows": 12,
        "keep": {"judged": 2, "violated": 1},
        "redirect": {"judged": 4, "violated": 2},
        "gone": {"judged": 4, "violated": 2},
    }
    assert run.summary["by_code"]["intent-violated"] == 5


async def test_exact_rows_no_sitemap_lists_are_requested_once(serve: Serve, tmp_path: Path) -> None:
    site, base = await intent_site(serve)
    run = await audit(base + "/sitemap.xml", intent=str(write_plan(tmp_path, base)))
    # once each (a HEAD, and a GET to confirm the 410 as for any listed URL)
    assert site.paths("HEAD").count("/unlisted-live") == 1
    assert site.paths().count("/unlisted-live") == 1
    assert site.paths("HEAD").count("/unlisted-gone") == 1
    assert site.paths("GET").count("/unlisted-gone") <= 1
    # robots.txt first: a disallowed row is not requested, and not judged
    assert not any(p.startswith("/no/") for p in site.paths())
    blocked = run.url(f"{base}/no/blocked")
    assert blocked["robots"] == "blocked" and "intent" not in blocked
    # prefix and path rows never cause a request
    assert not any(p.startswith("/only-a-prefix") for p in site.paths())

    live = run.url(f"{base}/unlisted-live")
    assert live["sitemap"] is None and live["line"] is None
    assert live["source"] == "intent"
    assert live["status"] == 200 and live["indexable"] is True
    assert live["intent"] == {"action": "gone", "line": 11, "ok": False}
    gone = run.url(f"{base}/unlisted-gone")
    assert gone["intent"] == {"action": "gone", "line": 10, "ok": True}
    # only intent-violated for such a URL: not the url-not-found a listed 410 would get
    about = [f["code"] for f in run.of("finding") if f["url"] == f"{base}/unlisted-gone"]
    assert about == []
    about = [f for f in run.of("finding") if f["url"] == f"{base}/unlisted-live"]
    assert [f["code"] for f in about] == ["intent-violated"]
    assert about[0]["sitemap"] is None and about[0]["line"] is None


async def test_a_listed_exact_row_is_not_requested_again(serve: Serve, tmp_path: Path) -> None:
    site, base = await intent_site(serve)
    plan = tmp_path / "intent.csv"
    plan.write_text(f"{base}/plain,keep\n{base}/gone-ok,gone\n")
    run = await audit(base + "/sitemap.xml", intent=str(plan))
    assert site.paths("HEAD").count("/plain") == 1
    assert site.paths("HEAD").count("/gone-ok") == 1
    assert [r for r in run.of("url") if r.get("source") == "intent"] == []
    assert run.findings("intent-violated") == []


async def test_without_intent_nothing_is_added(serve: Serve, tmp_path: Path) -> None:
    site, base = await intent_site(serve)
    run = await audit(base + "/sitemap.xml")
    assert run.findings("intent-violated") == []
    assert all("intent" not in r for r in run.of("url"))
    assert "intent" not in run.summary
    assert not any(p.startswith("/unlisted") for p in site.paths())


async def test_path_rows_apply_on_the_targets_origin_only(serve: Serve, tmp_path: Path) -> None:
    other = Site()
    elsewhere = await serve(other)
    other.routes["/gone-home"] = moved("/")
    other.routes["/"] = PAGE
    site, base = await intent_site(serve)
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/gone-home", elsewhere + "/gone-home"))
    plan = tmp_path / "intent.csv"
    plan.write_text("/gone-home,gone\n")
    run = await audit(base + "/sitemap.xml", intent=str(plan))
    assert set(violated(run)) == {base + "/gone-home"}
    assert "intent" not in run.url(elsewhere + "/gone-home")


# --- the command line ----------------------------------------------------------------------


async def cli(*argv: str) -> int:
    quiet = ["--no-progress"] if argv[0] in ("crawl", "migrate") else []
    return await asyncio.to_thread(main, [*argv, *quiet])


@pytest.mark.parametrize(
    ("data", "line", "problem"),
    [
        (None, 1, "cannot be read"),
        (b"/a,keep\n/caf\xe9,gone\n", 2, "not UTF-8"),
        (b'/a,keep\n"/b"x,keep\n', 2, "not valid CSV"),
        (b"url,action\n/a,keep\n/b\n", 3, "expected 2 or 3 cells"),
        (b"/a,redirect,/b,/c\n", 1, "expected 2 or 3 cells"),
        (b"/a,remove\n", 1, "unknown action 'remove'"),
        (b"\xef\xbb\xbf# plan\nexample.com/a,keep\n", 2, "is neither an absolute http(s) URL"),
        (b"/a,redirect,mailto:x@example.com\n", 1, "is neither an absolute http(s) URL"),
        (b"/a,keep\n/a*b,gone\n", 2, "'*' may only be the last character"),
        (b"/a,gone,/b\n", 1, "a target is allowed only on a redirect row"),
        (b"/a,redirect,/b*\n", 1, "ends with '*' but the url '/a' does not"),
        (b"/a,keep\n\n/a,gone\n", 3, "is already on line 1"),
    ],
)
async def test_a_malformed_file_stops_the_crawl_before_any_request(
    serve: Serve,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    data: bytes | None,
    line: int,
    problem: str,
) -> None:
    site, base = await intent_site(serve)
    plan = tmp_path / "intent.csv"
    if data is not None:
        plan.write_bytes(data)
    out, state = tmp_path / "report.jsonl", tmp_path / "s.sqlite"
    code = await cli("crawl", base + "/", "--intent", str(plan), "--state", str(state),
                     "--format", "jsonl", "-o", str(out))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and f"{plan}:{line}: " in err and problem in err, err
    assert site.hits == []
    assert not out.exists() and not state.exists()


async def test_intent_from_config_and_the_report_sections(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _site, base = await intent_site(serve)
    plan = write_plan(tmp_path, base)
    config = tmp_path / "audit.toml"
    config.write_text(f'intent = "{plan}"\n')
    out = tmp_path / "report.jsonl"
    code = await cli("crawl", base + "/sitemap.xml", "--config", str(config), "--format", "jsonl",
                     "-o", str(out))  # fmt: skip
    assert code == 1
    records = [json.loads(line) for line in out.read_text().splitlines()]
    summary = records[-1]
    assert summary["intent"]["keep"] == {"judged": 2, "violated": 1}

    capsys.readouterr()
    assert await cli("report", str(out), "--format", "text") == 1  # it has errors
    text = capsys.readouterr().out
    section = text[text.index("\nIntent\n") :]
    assert f"{plan}: 12 rows" in section
    assert "keep              2          1    50.0%" in section
    assert "redirect          4          2    50.0%" in section

    assert await cli("report", str(out), "--format", "markdown") == 1
    md = capsys.readouterr().out
    assert "## Intent" in md
    assert "| `gone` | 4 | 2 | 50.0% |" in md

    assert await cli("report", str(out), "--format", "html") == 1
    html = capsys.readouterr().out
    panel = html[html.index('<section class="panel" id="intent">') :]
    panel = panel[: panel.index("</section>")]
    assert '<td class="mono">redirect</td><td class="num">4</td><td class="num">2</td>' in panel


async def test_diff_does_not_count_intent_records_as_listed_urls(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _site, base = await intent_site(serve)
    plain, planned = tmp_path / "plain.jsonl", tmp_path / "planned.jsonl"
    target = base + "/sitemap.xml"
    assert await cli("crawl", target, "--format", "jsonl", "-o", str(plain)) == 1
    plan = write_plan(tmp_path, base)
    args = ["crawl", target, "--intent", str(plan), "--format", "jsonl", "-o", str(planned)]
    assert await cli(*args) == 1
    capsys.readouterr()
    await cli("diff", str(plain), str(planned), "--format", "jsonl")
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    added = [r for r in rows if r.get("type") == "diff-url"]
    assert added == []
    new = {r["url"] for r in rows if r.get("type") == "diff-finding" and r.get("change") == "new"}
    assert f"{base}/unlisted-live" in new


# --- nights ------------------------------------------------------------------------------------


def conditional_site(site: Site, stamp: str) -> None:
    """/page and /gone answer 200 with a Last-Modified, and 304 to If-Modified-Since."""

    async def page(request: web.Request) -> web.StreamResponse:
        if request.headers.get("If-Modified-Since") == stamp:
            return web.Response(status=304)
        return web.Response(
            status=200, headers={**HTML, "Last-Modified": stamp}, text="<html>a page</html>"
        )

    site.routes["/page"] = page
    site.routes["/gone"] = page


STAMP = "Mon, 06 May 2024 07:08:09 GMT"


async def night(target: str, state: Path, out: Path, plan: Path | None) -> list[dict[str, Any]]:
    args = ["crawl", target, "--state", str(state), "--format", "jsonl", "-o", str(out)]
    if plan is not None:
        args += ["--intent", str(plan)]
    assert await cli(*args) in (0, 1)
    return [json.loads(line) for line in out.read_text().splitlines()]


async def test_a_state_without_intent_is_used_and_broken_rows_judged_again(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/page", base + "/gone"))
    conditional_site(site, STAMP)
    target = base + "/sitemap.xml"
    plan = tmp_path / "intent.csv"
    plan.write_text("/gone,gone\n")
    # the intent file does not tie the state: one written without it is used as it is
    bare = tmp_path / "bare.sqlite"
    first = await night(target, bare, tmp_path / "b1.jsonl", None)
    assert "intent" not in first[-1]
    second = await night(target, bare, tmp_path / "b2.jsonl", plan)
    assert second[-1]["intent"]["rows"] == 1
    assert any(r.get("carried") for r in second if r.get("type") == "url")
    # a broken row is an error: that URL is requested again in full each night and judged
    state = tmp_path / "s.sqlite"
    for n in (1, 2, 3):
        records = await night(target, state, tmp_path / f"n{n}.jsonl", plan)
        found = [r for r in records if r.get("code") == "intent-violated"]
        assert [f["message"] for f in found] == [f"intent gone ({plan}:1), served 200"]
        assert records[-1]["intent"]["gone"] == {"judged": 1, "violated": 1}


async def test_an_unchanged_plan_on_a_304_night_reports_what_night_one_did(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/page", base + "/gone"))
    conditional_site(site, STAMP)
    state, target = tmp_path / "s.sqlite", base + "/sitemap.xml"
    plan = tmp_path / "intent.csv"
    plan.write_text(f"/page,keep\n/gone,gone\n{base}/extra,gone\n")
    site.routes["/extra"] = (410, HTML, "gone")
    nights = [await night(target, state, tmp_path / f"n{n}.jsonl", plan) for n in (1, 2)]
    assert site.paths("HEAD").count("/extra") == 2  # once a night
    pages = [{r["url"]: r for r in records if r.get("type") == "url"} for records in nights]
    assert pages[1][base + "/page"].get("carried") is True  # answered 304
    for records, by_url in zip(nights, pages, strict=True):
        assert by_url[base + "/page"]["intent"] == {"action": "keep", "line": 1, "ok": True}
        assert by_url[base + "/gone"]["intent"] == {"action": "gone", "line": 2, "ok": False}
        assert records[-1]["intent"]["keep"] == {"judged": 1, "violated": 0}
        assert records[-1]["intent"]["gone"] == {"judged": 2, "violated": 1}
        found = [r for r in records if r.get("code") == "intent-violated"]
        assert [f["message"] for f in found] == [f"intent gone ({plan}:2), served 200"]
        extra = [r for r in records if r.get("url") == base + "/extra"]
        assert [(r["type"], r.get("source")) for r in extra] == [("url", "intent")]


async def test_an_answer_carried_on_304_is_judged_as_the_stored_answer(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/page", base + "/gone"))
    conditional_site(site, STAMP)
    state, target = tmp_path / "s.sqlite", base + "/sitemap.xml"
    plan = tmp_path / "intent.csv"
    plan.write_text("/page,keep\n")
    first = await night(target, state, tmp_path / "n1.jsonl", plan)
    plan.write_text("/page,gone\n/gone,keep\n")  # the plan is edited between nights
    second = await night(target, state, tmp_path / "n2.jsonl", plan)
    assert first[-1]["intent"]["keep"] == {"judged": 1, "violated": 0}
    assert any(r.get("carried") for r in second if r.get("type") == "url")
    found = [r for r in second if r.get("code") == "intent-violated"]
    assert [f["message"] for f in found] == [f"intent gone ({plan}:1), served 200"]
    pages = {r["url"]: r for r in second if r.get("type") == "url"}
    assert pages[base + "/page"]["intent"] == {"action": "gone", "line": 1, "ok": False}
    assert pages[base + "/gone"]["intent"] == {"action": "keep", "line": 2, "ok": True}
    assert second[-1]["intent"]["keep"] == {"judged": 1, "violated": 0}
    assert second[-1]["intent"]["gone"] == {"judged": 1, "violated": 1}


# --- several targets, the library --------------------------------------------------------------


async def test_several_targets_request_an_unlisted_row_once(serve: Serve, tmp_path: Path) -> None:
    first, second = Site(), Site()
    a = await serve(first)
    b = await serve(second)
    first.routes["/sitemap.xml"] = (200, XML, urlset(a + "/page"))
    second.routes["/sitemap.xml"] = (200, XML, urlset(b + "/page"))
    for site in (first, second):
        site.routes["/page"] = PAGE
        site.routes["/extra"] = PAGE
    plan = tmp_path / "intent.csv"
    # b/page is listed by the second target only; a/extra and b/extra by neither
    plan.write_text(f"{b}/page,gone\n{a}/extra,gone\n{b}/extra,keep\n")
    records: list[dict[str, Any]] = []
    run = Audit([a + "/sitemap.xml", b + "/sitemap.xml"], CrawlConfig(**FAST, intent=str(plan)),
                sinks=[records.append])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    summary = run.finish().summary
    assert first.paths().count("/extra") == 1 and second.paths().count("/extra") == 1
    assert second.paths("HEAD").count("/page") == 1
    sources = {r["url"]: r.get("source") for r in records if r["type"] == "url"}
    assert sources == {a + "/page": None, b + "/page": None, a + "/extra": "intent",
                       b + "/extra": "intent"}  # fmt: skip
    assert summary["urls"] == 2
    assert summary["intent"]["gone"] == {"judged": 2, "violated": 2}
    assert summary["intent"]["keep"] == {"judged": 1, "violated": 0}


async def test_the_library_refuses_a_malformed_file_before_any_request(
    serve: Serve, tmp_path: Path
) -> None:
    site, base = await intent_site(serve)
    plan = tmp_path / "intent.csv"
    plan.write_text("/a,keep\n/b,redirect,/c*\n")
    with pytest.raises(TargetError, match=rf"^{re.escape(str(plan))}:2: target '/c\*' ends"):
        Audit(base + "/sitemap.xml", CrawlConfig(**FAST, intent=str(plan)))
    assert site.hits == []


async def test_another_hook_judges_its_own_answers_through_the_run(
    serve: Serve, tmp_path: Path
) -> None:
    """What the ledger does with a dropped URL: the run's intent judges an answer the hook
    got itself (no request of the intent's), the record it writes is counted, and a URL it
    claims is not requested as an unlisted exact row."""
    site, base = await intent_site(serve)
    plan = tmp_path / "intent.csv"
    plan.write_text(f"{base}/dropped,gone\n{base}/unlisted-live,keep\n")
    seen: list[Any] = []

    class Ledger(Hook):
        def attach(self, ctx: RunContext) -> None:
            self.ctx = ctx
            self.run = intent_of(ctx)
            assert self.run is not None

        def claims(self, url: str) -> bool:  # judged here: not requested as an unlisted row
            return url == f"{base}/dropped"

        async def drain(self) -> None:
            answer = UrlResult(f"{base}/dropped", None, None, 200, f"{base}/dropped", (), None,
                               None, "allowed", 1.0, extra={"indexable": True})  # fmt: skip
            assert self.run is not None
            verdict = self.run.judge(f"{base}/dropped", answer)
            seen.append(verdict)
            assert verdict is not None
            self.ctx.recorder.unlisted(answer.with_extra({"intent": verdict.to_json()}))
            self.ctx.recorder.finding(violation(f"{base}/dropped", verdict))

    records: list[dict[str, Any]] = []
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST, intent=str(plan)),
                sinks=[records.append], hooks=lambda: [Ledger()])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    summary = run.finish().summary
    assert "/dropped" not in site.paths()
    assert site.paths().count("/unlisted-live") == 1
    assert seen[0].message == f"intent gone ({plan}:1), served 200"
    assert summary["intent"]["gone"] == {"judged": 1, "violated": 1}
    assert summary["intent"]["keep"] == {"judged": 1, "violated": 0}
    found = [r for r in records if r.get("code") == "intent-violated"]
    assert [(f["url"], f["sitemap"], f["line"]) for f in found] == [(f"{base}/dropped", None, None)]


async def test_a_local_file_with_base_url_and_rewrite(serve: Serve, tmp_path: Path) -> None:
    """Path rows apply on --base-url's origin; an unlisted row is requested where --rewrite
    sends the listed URLs, and its record still names the row's URL."""
    site = Site()
    staging = await serve(site)
    live = "https://www.example.com"
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(urlset(live + "/page"))
    site.routes.update(
        {"/robots.txt": (404, HTML, ""), "/page": PAGE, "/unlisted": (410, HTML, "gone")}
    )
    plan = tmp_path / "intent.csv"
    plan.write_text(f"/page,gone\n{live}/unlisted,gone\n")
    run = await audit(str(sitemap), base_url=live + "/sitemap.xml",
                      rewrites=((live, staging),), intent=str(plan))  # fmt: skip
    assert site.paths("HEAD").count("/unlisted") == 1
    unlisted = run.url(live + "/unlisted")
    assert unlisted["checked_url"] == staging + "/unlisted"
    assert unlisted["intent"] == {"action": "gone", "line": 2, "ok": True}
    assert [f["url"] for f in run.findings("intent-violated")] == [live + "/page"]
