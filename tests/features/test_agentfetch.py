"""`--agents-fetch N` over real loopback HTTP (contracts/agents.md, "What each agent is
served"; issue 30): a server that branches on User-Agent, the requests counted server-side.

Each agent gets one finding per code and host; the agents' requests are exactly the sum over
agents of min(N, eligible URLs), each with the agent's exact User-Agent string, and nothing
else; a 429 to an agent does not slow the host down.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from aiohttp import web

from audit.checks.agents import PRESETS
from audit.cli.main import main
from audit.core.agent import user_agent_of
from audit.core.config import CrawlConfig
from audit.features.agentfetch import sample_key
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset

MAIN_UA = CrawlConfig().user_agent
TEXT_BODY = "A page rendered on the server, with plenty of words for every reader. " * 6
PAGE = f"<!doctype html><html><head><title>t</title></head><body><p>{TEXT_BODY}</p><script src=/a.js></script></body></html>"  # fmt: skip
SHELL = "<!doctype html><html><head><title>t</title></head><body><div id=root></div><script src=/app.js></script></body></html>"  # fmt: skip
ROBOTS = "User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /private\nDisallow: /nogpt/\n"  # fmt: skip
PAGES = [f"/p/{i}" for i in range(24)] + ["/nogpt/1", "/nogpt/2", "/nogpt/3", "/q?x=1&y=2"]
NOT_ELIGIBLE = ["/redir", "/file.pdf", "/gone", "/private/1"]
AGENTS = ("search", "ai")
FETCHED = [a for a in PRESETS["all"] if user_agent_of(a) is not None]
UA_TOKEN = {user_agent_of(a): a for a in FETCHED}


async def page(request: web.Request) -> web.StreamResponse:
    token = UA_TOKEN.get(request.headers.get("User-Agent", ""))
    if token == "GPTBot":
        return web.Response(status=403, text="blocked")
    if token == "ClaudeBot":
        return web.Response(status=402, headers={"crawler-price": "USD 0.01"}, text="pay")
    if token == "PerplexityBot":
        return web.Response(status=402, text="pay, but no price")
    if token == "OAI-SearchBot":
        return web.Response(status=200, content_type="text/html", text=SHELL)
    if token == "ChatGPT-User":
        return web.Response(status=301, headers={"Location": "/"})
    if token == "Claude-User":
        return web.Response(status=429, headers={"Retry-After": "30"}, text="slow down")
    if token == "Perplexity-User":
        assert request.transport is not None
        request.transport.close()  # no answer at all
        return web.Response(text="never sent")
    return web.Response(status=200, content_type="text/html", text=PAGE)


def fetch_site() -> Site:
    site = Site()
    site.routes = {
        "/robots.txt": (200, TEXT, ROBOTS),
        "/redir": (301, {"Location": "/p/0"}, ""),
        "/file.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4"),
        "/gone": (404, HTML, "gone"),
        "/private/1": (200, HTML, PAGE),
        **{p.split("?")[0]: page for p in PAGES},
    }
    return site


async def crawl(serve: Any, n: int, **cfg: Any) -> tuple[Site, str, Any]:
    site = fetch_site()
    base = await serve(site)
    listed = [base + p for p in [*PAGES, *NOT_ELIGIBLE]]
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[u.replace("&", "&amp;") for u in listed]))
    cfg = {"agents": AGENTS, "agents_fetch": n, "page_checks": True, **cfg}
    return site, base, await audit(f"{base}/sitemap.xml", retries=2, **cfg)


def eligible(agent: str) -> list[str]:
    return [p for p in PAGES if not (agent == "GPTBot" and p.startswith("/nogpt/"))]


def sample(agent: str, n: int) -> list[str]:
    digest = {p: hashlib.sha256(p.encode()).hexdigest() for p in eligible(agent)}
    return sorted(digest, key=digest.__getitem__)[:n]


def agent_hits(site: Site) -> Counter[str]:
    return Counter(UA_TOKEN.get(h.headers["User-Agent"], "?") for h in site.hits if h.headers["User-Agent"] != MAIN_UA)  # fmt: skip


async def test_budget_exact_strings_and_deterministic_samples(serve: Any) -> None:
    n = 25  # GPTBot has 25 eligible URLs, the others 28
    site, base, _run = await crawl(serve, n)
    hits = agent_hits(site)
    assert "?" not in hits  # every agent request carries a string of the table, exactly
    assert set(hits) == set(FETCHED)  # Google-Extended, Applebot-Extended: never fetched
    assert sum(hits.values()) == sum(min(n, len(eligible(a))) for a in FETCHED)
    for agent in FETCHED:
        got = [h.path for h in site.hits if h.headers["User-Agent"] == user_agent_of(agent)]
        assert sorted(got) == sorted(sample(agent, n)), agent  # each sampled URL once
        assert all(h.method == "GET" for h in site.hits if h.headers["User-Agent"] != MAIN_UA)
    # nothing but the sample as an agent: no robots.txt, no redirect target, no retry
    assert not [h for h in site.hits if h.path in ("/robots.txt", "/", *NOT_ELIGIBLE) and h.headers["User-Agent"] != MAIN_UA]  # fmt: skip
    assert sample_key(base + "/q?x=1&y=2") == hashlib.sha256(b"/q?x=1&y=2").hexdigest()
    assert sample_key("https://e.com") == sample_key("http://other:81/#x") == hashlib.sha256(b"/").hexdigest()  # fmt: skip


async def test_one_finding_per_agent_and_host_with_counts(serve: Any) -> None:
    n = 25
    _, base, run = await crawl(serve, n)
    found = [f for f in run.of("finding") if f["code"].startswith("agent-") and f["code"] not in ("agent-blocked", "agent-noindex")]  # fmt: skip
    by = {(f["code"], f["agent"]): f for f in found}
    assert len(by) == len(found)  # one per code, agent and host
    assert set(by) == {
        ("agent-challenged", "GPTBot"),
        ("agent-challenged", "Claude-User"),
        ("agent-payment-required", "ClaudeBot"),
        ("agent-served-differently", "PerplexityBot"),
        ("agent-served-differently", "ChatGPT-User"),
        ("agent-served-differently", "Perplexity-User"),
        ("agent-shell-only", "OAI-SearchBot"),
    }
    gpt = by["agent-challenged", "GPTBot"]
    assert (gpt["count"], gpt["sampled"], gpt["statuses"]) == (25, 25, {"403": 25})
    assert gpt["url"] == base + sample("GPTBot", n)[0] and gpt["severity"] == "warning"
    claude = by["agent-payment-required", "ClaudeBot"]
    assert (claude["count"], claude["statuses"], claude["severity"]) == (25, {"402": 25}, "info")
    assert by["agent-served-differently", "ChatGPT-User"]["statuses"] == {"301": 25}
    assert "25 of 25 sampled listed URLs" in gpt["message"] and "HTTP 403 x25" in gpt["message"]
    assert by["agent-challenged", "Claude-User"]["statuses"] == {"429": 25}
    assert by["agent-served-differently", "Perplexity-User"]["statuses"] == {"none": 25}
    shell = by["agent-shell-only", "OAI-SearchBot"]
    assert (shell["count"], shell["sampled"]) == (25, 25) and "statuses" not in shell
    hosts = run.summary["agents"]
    origin = base.lower()
    assert hosts["GPTBot"]["hosts"][origin]["fetched"] == {
        "sampled": 25,
        "served_differently": 0,
        "challenged": 25,
        "payment_required": 0,
        "shell_only": 0,
    }
    assert hosts["Googlebot"]["hosts"][origin]["fetched"]["sampled"] == 25
    assert "fetched" not in hosts["Google-Extended"]["hosts"][origin]


async def test_agents_carry_the_origin_s_extra_headers_and_credentials(serve: Any) -> None:
    site, _base, _run = await crawl(
        serve, 2, extra_headers=(("X-Staging", "s3cret-value"),), auth=("user", "pa55word")
    )
    agents = [h for h in site.hits if h.headers["User-Agent"] != MAIN_UA]
    assert len(agents) == 2 * len(FETCHED)
    assert {h.headers.get("X-Staging") for h in agents} == {"s3cret-value"}
    assert {h.headers.get("Authorization", "")[:6] for h in agents} == {"Basic "}
    assert not any("user-agent" in k.lower() and v == MAIN_UA for h in agents for k, v in h.headers.items())  # fmt: skip


async def test_an_agent_s_429_does_not_slow_the_host(serve: Any) -> None:
    site, _base, run = await crawl(serve, 40, rate=200.0)
    # 28 URLs for Claude-User, each once: no retry
    assert agent_hits(site)["Claude-User"] == 28
    (host,) = run.of("hosts")[-1]["hosts"]
    # 28 answers 429 with Retry-After: 30 to Claude-User, yet the host was not held back
    assert (host["rate"], host["rate_limited"], host["backoff_s"], host["retries"]) == (200.0, 0, 0.0, 0)  # fmt: skip


async def test_without_page_checks_no_shell_verdict(serve: Any) -> None:
    _, _, run = await crawl(serve, 3, page_checks=False)
    codes = {f["code"] for f in run.of("finding")}
    assert "agent-shell-only" not in codes and "agent-challenged" in codes


async def test_with_links_the_shell_is_judged_from_the_link_crawl_s_read(serve: Any) -> None:
    site, _base, run = await crawl(serve, 3, page_checks=False, links=True)
    (shell,) = run.findings("agent-shell-only")
    assert (shell["agent"], shell["count"], shell["sampled"]) == ("OAI-SearchBot", 3, 3)
    assert sum(agent_hits(site).values()) == 3 * len(FETCHED)  # the budget, --links or not


async def test_no_fetch_without_the_option_and_the_main_requests_unchanged(serve: Any) -> None:
    site_plain, _, _ = await crawl(serve, 1, agents_fetch=None)
    assert not agent_hits(site_plain)
    site_fetch, _, _ = await crawl(serve, 1)
    probe = re.compile(r"/sitemap-audit-probe-[0-9a-f]+")
    main_plain = sorted((h.method, probe.sub("/probe", h.path)) for h in site_plain.hits)
    main_fetch = sorted((h.method, probe.sub("/probe", h.path)) for h in site_fetch.hits if h.headers["User-Agent"] == MAIN_UA)  # fmt: skip
    assert main_plain == main_fetch
    assert sum(agent_hits(site_fetch).values()) == len(FETCHED)


def _cli(base: str, out: Path, *extra: str) -> int:
    return main(["crawl", f"{base}/sitemap.xml", "--format", "jsonl", "--no-progress", "--output", str(out), "--retries", "0", "--rate", "500", "--fail-on", "never", *extra])  # fmt: skip


async def test_cli_default_n_and_usage_errors(serve: Any, tmp_path: Path) -> None:
    site = fetch_site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[base + p for p in PAGES[:24]]))
    out = tmp_path / "r.jsonl"
    rc = await asyncio.to_thread(_cli, base, out, "--agents", "gptbot", "--agents-fetch")
    assert rc == 0
    assert agent_hits(site) == Counter({"GPTBot": 20})  # `--agents-fetch` alone: 20
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["agent"] for r in records if r.get("code") == "agent-challenged"] == ["GPTBot"]
    assert await asyncio.to_thread(_cli, base, out, "--agents-fetch", "3") == 2
    assert await asyncio.to_thread(_cli, base, out, "--agents", "ai", "--agents-fetch", "0") == 2
