"""RULES.md last-modified-deploy: a host whose Last-Modified is one build time is judged
on its first 50 qualifying answers (at least 20); its lastmod-stale/-ahead are then not
reported, and a host with genuinely different Last-Modified values keeps them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

from audit.checks.deploystamp import clustered
from tests.crawlkit import HTML, TEXT, XML, Site, audit

BUILD = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def _sitemap(base: str, n: int) -> str:
    body = "".join(
        f"<url><loc>{base}/p{i}</loc><lastmod>2023-01-{1 + i % 28:02d}</lastmod></url>\n"
        for i in range(n)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n"
    )


def _site(n: int, modified: Any) -> Site:
    routes: dict[str, Any] = {"/robots.txt": (404, TEXT, "")}
    for i in range(n):
        headers = {**HTML, "Last-Modified": format_datetime(modified(i), usegmt=True)}
        routes[f"/p{i}"] = (200, headers, "<html></html>")
    return Site(routes=routes)


async def test_a_deploy_stamp_is_one_info_finding_and_no_stale_noise(serve: Any) -> None:
    site = _site(60, lambda i: BUILD + timedelta(seconds=i))  # 60 pages built in one minute
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, _sitemap(base, 60))
    run = await audit(f"{base}/sitemap.xml")
    (deploy,) = run.findings("last-modified-deploy")
    assert deploy["severity"] == "info" and deploy["url"] == f"{base}/"
    assert "first 50 answers" in deploy["message"] and "60 lastmod-stale" in deploy["message"]
    assert not run.findings("lastmod-stale") and not run.findings("lastmod-ahead")
    assert len(run.of("url")) == 60


async def test_genuinely_different_dates_keep_lastmod_stale(serve: Any) -> None:
    # each page's own modification time, months apart: a content date, not a build
    site = _site(30, lambda i: datetime(2023, 2 + i % 10, 1 + i % 20, tzinfo=UTC))
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, _sitemap(base, 30))
    run = await audit(f"{base}/sitemap.xml")
    assert not run.findings("last-modified-deploy")
    assert len(run.findings("lastmod-stale")) == 30


async def test_too_few_answers_to_judge_keep_their_findings(serve: Any) -> None:
    site = _site(10, lambda i: BUILD)  # one stamp, but only 10 answers: under the 20 needed
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, _sitemap(base, 10))
    run = await audit(f"{base}/sitemap.xml")
    assert not run.findings("last-modified-deploy")
    assert len(run.findings("lastmod-stale")) == 10


def test_clustered_needs_ninety_percent_in_ten_minutes() -> None:
    base = datetime(2024, 1, 1, tzinfo=UTC)
    inside = [base + timedelta(minutes=i % 10) for i in range(18)]
    assert clustered([*inside, base + timedelta(days=1), base + timedelta(days=2)])  # 18/20
    assert not clustered(inside + [base + timedelta(days=d) for d in (1, 2, 3)])  # 18/21
    assert not clustered(inside[:19])  # fewer than 20 answers: no verdict


async def test_right_after_a_deploy_no_page_reads_as_dynamic(serve: Any) -> None:
    """A build that ended seconds ago: the last files' times are as close to the request as
    a dynamic Last-Modified, but the host is a deploy stamp, which explains them: no
    last-modified-dynamic (issue 28.7)."""
    now = datetime.now(UTC).replace(microsecond=0)
    site = _site(60, lambda i: now - timedelta(seconds=59 - i))  # built over the last minute
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, _sitemap(base, 60))
    run = await audit(f"{base}/sitemap.xml")
    assert len(run.findings("last-modified-deploy")) == 1
    assert not run.findings("last-modified-dynamic")
    assert not run.findings("lastmod-stale")


async def test_a_dynamic_last_modified_is_not_a_deploy_stamp(serve: Any) -> None:
    """Last-Modified is the time of each request: its values cluster because the crawl is
    quick, yet it is last-modified-dynamic on every page, not a deploy stamp."""

    async def dynamic(request: Any) -> Any:
        from aiohttp import web

        stamp = format_datetime(datetime.now(UTC), usegmt=True)
        return web.Response(
            text="<html></html>", content_type="text/html",
            headers={"Last-Modified": stamp, "Date": stamp},
        )  # fmt: skip

    site = Site(routes={"/robots.txt": (404, TEXT, "")})
    for i in range(30):
        site.routes[f"/p{i}"] = dynamic
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, _sitemap(base, 30))
    run = await audit(f"{base}/sitemap.xml")
    assert not run.findings("last-modified-deploy")
    assert len(run.findings("last-modified-dynamic")) == 30


async def test_a_rewritten_host_is_judged_on_the_verdicts_it_was_checked_by(serve: Any) -> None:
    """With --rewrite each finding says where it was checked; the deploy hook holds the
    very finding the URL's verdict names (checks/verdict.py), suffix and all, so a stamped
    host shows no stale noise and a host of content dates keeps every lastmod-stale."""
    prod = "https://prod.example"
    stamped = _site(30, lambda i: BUILD + timedelta(seconds=i))
    base = await serve(stamped)
    stamped.routes["/sitemap.xml"] = (200, XML, _sitemap(prod, 30))
    run = await audit(f"{base}/sitemap.xml", rewrites=((prod, base),))
    (deploy,) = run.findings("last-modified-deploy")
    assert deploy["url"] == f"{prod}/"
    assert not run.findings("lastmod-stale") and not run.findings("lastmod-ahead")
    assert all(r["checked_url"].startswith(base) for r in run.of("url"))
    dated = _site(30, lambda i: datetime(2023, 2 + i % 10, 1 + i % 20, tzinfo=UTC))
    base = await serve(dated)
    dated.routes["/sitemap.xml"] = (200, XML, _sitemap(prod, 30))
    run = await audit(f"{base}/sitemap.xml", rewrites=((prod, base),))
    stale = run.findings("lastmod-stale")
    assert len(stale) == 30 and not run.findings("last-modified-deploy")
    assert all(f["url"].startswith(prod) and "(checked at " in f["message"] for f in stale)


async def test_one_host_is_one_judgement_whatever_the_case_and_a_port_is_another_host(
    serve: Any,
) -> None:
    """The deploy judgement is per host as everywhere else in the tool (scheme://host:port,
    letter case and a default port aside): URLs of one host written in two cases share one
    judgement (one finding over all their answers), and a host on another port is judged
    on its own."""
    site = _site(60, lambda i: BUILD + timedelta(seconds=i))
    base = await serve(site)
    upper = base.replace("http://", "HTTP://")
    body = "".join(
        f"<url><loc>{upper if i % 2 else base}/p{i}</loc><lastmod>2023-01-02</lastmod></url>\n"
        for i in range(60)
    )
    site.routes["/sitemap.xml"] = (200, XML, _urlset(body))
    run = await audit(f"{base}/sitemap.xml")
    (deploy,) = run.findings("last-modified-deploy")
    assert deploy["url"] == f"{base}/" and "60 lastmod-stale" in deploy["message"]
    assert not run.findings("lastmod-stale") and len(run.of("url")) == 60

    other = _site(30, lambda i: BUILD + timedelta(seconds=i))
    other_base = await serve(other)
    assert other_base.rsplit(":", 1)[0] == base.rsplit(":", 1)[0] != other_base
    body = "".join(
        f"<url><loc>{b}/p{i}</loc><lastmod>2023-01-02</lastmod></url>\n"
        for b in (base, other_base)
        for i in range(30)
    )
    site.routes["/sitemap.xml"] = (200, XML, _urlset(body))
    run = await audit(f"{base}/sitemap.xml")
    deploys = run.findings("last-modified-deploy")
    assert sorted(f["url"] for f in deploys) == sorted([f"{base}/", f"{other_base}/"])
    assert all("30 lastmod-stale" in f["message"] for f in deploys)
    assert not run.findings("lastmod-stale") and len(run.of("url")) == 60


def _urlset(body: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n"
    )
