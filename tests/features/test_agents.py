"""What each bot sees, over real loopback HTTP: the agents matrix from the robots.txt and the
answers the run already has (no request of its own), indexability, empty shells."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aiohttp import web

from tests.crawlkit import HTML, XML, Site, audit, urlset

ROBOTS = """\
User-agent: Googlebot
Disallow: /private/

User-agent: Bingbot
User-agent: CCBot
Disallow: /private/
Disallow: /b/

User-agent: GPTBot
Crawl-delay: 30
Disallow: /

User-agent: ClaudeBot
Allow: /public/
Disallow: /

User-agent: Google-Extended
Disallow: /articles/

User-agent: *
Disallow: /private/
"""

PAGE = "<html><head><title>t</title>{head}</head><body><p>{text}</p></body></html>"
TEXT = "A page that is rendered on the server and has plenty of words to read. " * 5


def page(head: str = "", text: str = TEXT) -> str:
    return PAGE.format(head=head, text=text)


AGENTS = ("search", "ai")
ALL = [
    "Googlebot",
    "Bingbot",
    "GPTBot",
    "ClaudeBot",
    "Google-Extended",
    "CCBot",
    "PerplexityBot",
    "Applebot-Extended",
]
# path -> the verdict of each agent of ALL, with page checks
EXPECTED = {
    "/public/a": ["allowed", "allowed", "blocked", "allowed", "allowed", "allowed", "allowed", "allowed"],
    "/b/page": ["allowed", "blocked", "blocked", "blocked", "allowed", "blocked", "allowed", "allowed"],
    "/articles/x": ["noindex", "allowed", "blocked", "blocked", "blocked", "allowed", "allowed", "allowed"],
    "/private/p": ["blocked", "blocked", "blocked", "blocked", "allowed", "blocked", "blocked", "blocked"],
    "/public/meta": ["allowed", "allowed", "blocked", "allowed", "allowed", "noindex", "allowed", "allowed"],
    "/public/xrt": ["allowed", "allowed", "blocked", "noindex", "allowed", "allowed", "allowed", "allowed"],
    "/public/none": ["noindex", "noindex", "blocked", "noindex", "noindex", "noindex", "noindex", "noindex"],
}  # fmt: skip


def agents_site() -> Site:
    site = Site()
    site.routes = {
        "/robots.txt": (200, {"Content-Type": "text/plain"}, ROBOTS),
        "/public/a": (200, HTML, page()),
        "/b/page": (200, HTML, page()),
        "/articles/x": (200, {**HTML, "X-Robots-Tag": "googlebot: noindex"}, page()),
        "/private/p": (200, HTML, page()),
        "/public/meta": (200, HTML, page('<meta name="CCBot" content="noindex, nofollow">')),
        "/public/xrt": (200, {**HTML, "X-Robots-Tag": "claudebot: noindex, nofollow"}, page()),
        "/public/none": (200, HTML, page('<meta name="robots" content="none">')),
    }
    return site


async def crawl_agents(serve: Any, **cfg: Any) -> tuple[Site, str, Any]:
    site = agents_site()
    base = await serve(site)
    locs = [base + path for path in EXPECTED]
    site.routes["/sitemap.xml"] = (200, XML, urlset(*locs))
    run = await audit(f"{base}/sitemap.xml", **cfg)
    return site, base, run


async def test_each_agent_verdict_from_the_robots_groups_and_scoped_noindex(serve: Any) -> None:
    _, base, run = await crawl_agents(serve, agents=tuple(ALL), page_checks=True)
    for path, verdicts in EXPECTED.items():
        assert run.url(base + path)["agents"] == dict(zip(ALL, verdicts, strict=True)), path
    # the main agent (sitemap-audit, the `*` group) keeps its own codes
    assert [f["url"] for f in run.findings("url-robots-blocked")] == [base + "/private/p"]
    summary = run.summary["agents"]
    totals = {agent: (s["blocked"], s["noindex"]) for agent, s in summary.items()}
    assert totals["GPTBot"] == (7, 0)
    assert totals["ClaudeBot"] == (3, 2)
    assert totals["CCBot"] == (2, 2)
    assert totals["Googlebot"] == (1, 2)
    assert totals["Applebot-Extended"] == (1, 1)
    assert list(summary) == ALL
    # one host: its entry holds the same counts (contracts/agents.md `hosts`)
    for agent, s in summary.items():
        (entry,) = s["hosts"].values()
        assert (entry["blocked"], entry["noindex"]) == totals[agent]
        assert entry["signals"] == entry["usage"] == {}


async def test_one_finding_per_agent_and_host_with_count_and_example(serve: Any) -> None:
    _, base, run = await crawl_agents(serve, agents=tuple(ALL), page_checks=True)
    blocked = {f["message"].split()[2]: f for f in run.findings("agent-blocked")}
    assert set(blocked) == set(ALL)  # each blocked somewhere; one finding each (one host)
    gpt = blocked["GPTBot"]
    assert gpt["severity"] == "info" and gpt["url"] == base + "/public/a"
    assert f"7 listed URLs of {base.lower()}" in gpt["message"]
    noindex = [f for f in run.findings("agent-noindex") if "for CCBot" in f["message"]]
    # /public/none's robots meta is for every agent: the main agent's url-noindex, not CCBot's
    assert len(noindex) == 1 and "1 listed URL of" in noindex[0]["message"]
    assert noindex[0]["url"] == base + "/public/meta"
    assert len(run.findings("agent-blocked")) == len(ALL)


async def test_without_page_checks_a_meta_is_not_seen(serve: Any) -> None:
    _, base, run = await crawl_agents(serve, agents=("CCBot",))
    assert run.url(base + "/public/meta")["agents"] == {"CCBot": "allowed"}
    assert run.summary["agents"] == {
        "CCBot": {
            "blocked": 2,
            "noindex": 0,
            "hosts": {base.lower(): {"blocked": 2, "noindex": 0, "signals": {}, "usage": {}}},
        }
    }


async def test_the_main_agent_gets_no_agent_finding(serve: Any) -> None:
    _, base, run = await crawl_agents(serve, agents=("search",), robots_agent="Googlebot")
    assert [f["url"] for f in run.findings("url-robots-blocked")] == [base + "/private/p"]
    assert all("Googlebot" not in f["message"] for f in run.findings("agent-blocked"))
    assert run.findings("agent-blocked")  # Bingbot's
    assert run.url(base + "/private/p")["agents"] == {
        "Googlebot": "blocked",
        "Bingbot": "blocked",
    }


def _requests(site: Site) -> list[str]:
    probe = re.compile(r"/sitemap-audit-probe-[0-9a-f]+")
    return sorted(f"{h.method} {probe.sub('/probe', h.path)}" for h in site.hits)


@pytest.mark.slow
async def test_agents_cost_no_request(serve: Any) -> None:
    plain, _, run_plain = await crawl_agents(serve, page_checks=True)
    judged, _, run_judged = await crawl_agents(serve, agents=AGENTS, page_checks=True)
    assert "agents" not in run_plain.summary and "agents" in run_judged.summary
    assert _requests(plain) == _requests(judged)
    assert len(plain.hits) == len(judged.hits) > len(EXPECTED)


async def test_no_agents_field_without_the_option(serve: Any) -> None:
    _, base, run = await crawl_agents(serve)
    assert "agents" not in run.url(base + "/public/a")
    assert not run.findings("agent-blocked") and not run.findings("agent-noindex")


# --- indexability ------------------------------------------------------------------------


async def _reset(request: web.Request) -> web.StreamResponse:
    assert request.transport is not None
    request.transport.close()
    return web.Response(text="never sent")


async def test_indexability_of_each_reason(serve: Any) -> None:
    site = agents_site()
    base = await serve(site)
    site.routes.update(
        {
            "/old": (301, {"Location": "/public/a"}, ""),
            "/gone": (404, HTML, "gone"),
            "/noindex": (200, {**HTML, "X-Robots-Tag": "noindex"}, page()),
            "/meta-noindex": (200, HTML, page('<meta name="robots" content="noindex">')),
            "/canon": (200, {**HTML, "Link": f'<{base}/public/a>; rel="canonical"'}, page()),
            "/file.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4"),
            "/reset": _reset,
        }
    )
    expected = {
        "/public/a": None,
        "/private/p": "robots",
        "/reset": "unreachable",
        "/old": "redirect",
        "/gone": "status",
        "/noindex": "noindex",
        "/meta-noindex": "noindex",
        "/canon": "canonical",
        "/file.pdf": "not-html",
    }
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[base + p for p in expected]))
    run = await audit(f"{base}/sitemap.xml", page_checks=True, retries=0)
    for path, reason in expected.items():
        record = run.url(base + path)
        assert (record["indexable"], record["indexability"]) == (reason is None, reason), path


async def test_indexability_without_page_checks(serve: Any) -> None:
    _, base, run = await crawl_agents(serve)
    assert run.url(base + "/public/a")["indexable"] is True
    assert run.url(base + "/public/none")["indexability"] is None  # a meta: page checks only
    assert run.url(base + "/private/p")["indexability"] == "robots"


# --- empty shells --------------------------------------------------------------------------

APP_ROOT = (
    '<!doctype html><html><head><meta charset="utf-8"><title>App</title>'
    '<script type="module" src="/assets/index-4f2a.js"></script></head>'
    "<body><noscript>You need to enable JavaScript to run this app.</noscript>"
    '<div id="root"></div></body></html>'
)
SERVER_RENDERED = (
    "<!doctype html><html><head><title>Article</title>"
    '<script src="/assets/analytics.js" defer></script></head><body><main><h1>Article</h1>'
    f"<p>{TEXT}</p></main><script>window.hydrate && hydrate();</script></body></html>"
)
NO_SCRIPT = "<html><head><title>Short</title></head><body><p>Short page.</p></body></html>"


async def test_empty_shell_fires_on_an_app_root_only(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/app": (200, HTML, APP_ROOT),
            "/article": (200, HTML, SERVER_RENDERED),
            "/short": (200, HTML, NO_SCRIPT),
        }
    )
    site.routes["/sitemap.xml"] = (
        200,
        XML,
        urlset(base + "/app", base + "/article", base + "/short"),
    )
    run = await audit(f"{base}/sitemap.xml", page_checks=True)
    shells = run.findings("url-empty-shell")
    assert [f["url"] for f in shells] == [base + "/app"]
    assert shells[0]["severity"] == "warning"
    assert "holds no visible text while it loads 1 script:" in shells[0]["message"]
    plain = await audit(f"{base}/sitemap.xml")
    assert not plain.findings("url-empty-shell")  # page checks only


async def test_a_url_that_cannot_be_requested_is_not_indexable(serve: Any) -> None:
    site = agents_site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/public/a", "/relative/page"))
    run = await audit(f"{base}/sitemap.xml")
    record = run.url("/relative/page")
    assert (record["indexable"], record["indexability"]) == (False, "unreachable")
    assert run.url(base + "/public/a")["indexable"] is True
