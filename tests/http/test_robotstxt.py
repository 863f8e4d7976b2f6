"""robots.txt groups (RFC 9309 2.2.1, 2.2.4) and the agent's product token (issue 16).

Other records (Crawl-delay, Request-rate, Sitemap, unknown lines) end no group; consecutive
user-agent lines share one; groups naming one agent merge; a forgotten colon is forgiven
for every key alike. The token is the crawler a browser-like User-Agent names, or
`--robots-agent`. Pure cases first, then over loopback HTTP through RobotsCache and the CLI.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.core.agent import is_product_token, robots_token
from audit.core.config import CrawlConfig
from audit.http import HttpClient
from audit.http.robots import RobotsCache, RobotsPolicy, parse_robots
from audit.http.robotstxt import parse_robots_txt
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset

GOOGLEBOT_UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
GPTBOT_UA = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
    "+https://openai.com/gptbot)"
)
# A Crawl-delay between two user-agent lines: one group, so FooBot obeys `Disallow: /`.
DELAY_INSIDE = "User-agent: FooBot\nCrawl-delay: 10\nUser-agent: *\nDisallow: /\n"


def policy(text: str, ua: str = "sitemap-audit/0.1.0", **kw: Any) -> RobotsPolicy:
    return parse_robots(text, ua, origin="http://e.test:80", url="http://e.test/robots.txt", **kw)


def ok(p: RobotsPolicy, path: str) -> bool:
    return p.allowed("http://e.test" + path)


# --- grouping ------------------------------------------------------------------------


def test_a_crawl_delay_inside_a_group_does_not_end_it() -> None:
    foo = policy(DELAY_INSIDE, "FooBot/1.0")
    assert not ok(foo, "/page") and ok(foo, "/robots.txt")
    assert foo.crawl_delay == 10.0  # the delay was written for FooBot
    star = policy(DELAY_INSIDE)
    assert not ok(star, "/page")
    assert star.crawl_delay is None  # named after the delay: it shares the rules only


@pytest.mark.parametrize(
    "record",
    ["Request-rate: 1/5", "Sitemap: http://e.test/s.xml", "Noindex: /x", "Host: e.test"],
)
def test_other_records_end_no_group_either(record: str) -> None:
    text = f"User-agent: FooBot\n{record}\nUser-agent: BarBot\nDisallow: /private\n"
    for ua in ("FooBot", "BarBot/2"):
        p = policy(text, ua)
        assert not ok(p, "/private/x"), (record, ua)
        assert ok(p, "/public"), (record, ua)


def test_two_consecutive_user_agent_lines_share_one_group_and_groups_merge() -> None:
    text = (
        "User-agent: FooBot/1.0\n"  # names the product FooBot, version aside
        "User-agent: BarBot\n"
        "Crawl-delay: 3\n"
        "Disallow: /shared\n"
        "\n"
        "User-agent: *\n"
        "Disallow: /\n"
        "\n"
        "User-agent: foobot\n"  # the same agent again: its rules add to the first group's
        "Disallow: /more\n"
    )
    foo, bar = policy(text, "FooBot"), policy(text, "BarBot")
    assert not ok(foo, "/shared/a") and not ok(foo, "/more") and ok(foo, "/other")
    assert not ok(bar, "/shared/a") and ok(bar, "/more") and ok(bar, "/other")
    assert foo.crawl_delay == bar.crawl_delay == 3.0
    assert not ok(policy(text, "BazBot"), "/other")  # `*`


def test_merged_groups_keep_the_longest_delay_and_the_lowest_rate() -> None:
    text = (
        "User-agent: FooBot\nCrawl-delay: 3\nRequest-rate: 1/5\nDisallow: /a\n\n"
        "User-agent: FooBot\nCrawl-delay: 7\nRequest-rate: 1/2\nDisallow: /b\n\n"
        "User-agent: BarBot\nDisallow: /c\n"
    )
    foo, bar = policy(text, "FooBot"), policy(text, "BarBot")
    assert foo.crawl_delay == 7.0 and foo.request_rate == 0.2
    assert bar.crawl_delay is None and bar.request_rate is None  # none said: none kept


def test_a_forgotten_colon_is_forgiven_for_user_agent_allow_and_disallow() -> None:
    text = "User-agent FooBot\nDisallow /\nAllow /open\n\nUser-agent: *\nDisallow: /closed\n"
    foo = policy(text, "FooBot")
    assert not ok(foo, "/page") and ok(foo, "/open/x")
    other = policy(text)
    assert ok(other, "/page") and not ok(other, "/closed")
    # three words without a colon are not a record
    assert ok(policy("User-agent: *\nDisallow / now\n"), "/page")


def test_group_names_are_whole_product_tokens_case_insensitive() -> None:
    text = "User-agent: GOOGLEBOT/2.1\nDisallow: /g\n\nUser-agent: Googlebot-News\nDisallow: /\n"
    g = policy(text, GOOGLEBOT_UA)
    assert g.agent == "Googlebot"
    assert not ok(g, "/g") and ok(g, "/news")  # Googlebot-News is another crawler
    robots = parse_robots_txt(text)
    assert robots.group("googlebot-news") is not robots.group("googlebot")


def test_matching_normalises_percent_encoding() -> None:
    p = policy("User-agent: *\nDisallow: /caf%c3%a9\nDisallow: /%7Euser\nAllow: /ok/ツ\n")
    assert not ok(p, "/café") and not ok(p, "/caf%C3%A9/menu")
    assert not ok(p, "/~user/x")  # %7E is `~`, unreserved: the same path
    assert ok(p, "/ok/%E3%83%84")
    # the other agents' view of the same file
    assert p.allowed("http://e.test/caf%C3%A9", agent="FooBot") is False


# --- the agent's token ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        (GOOGLEBOT_UA, "Googlebot"),
        (GPTBOT_UA, "GPTBot"),
        ("sitemap-audit/0.1.0", "sitemap-audit"),
        ("MyBot", "MyBot"),
        (
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 "
            "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; "
            "+http://www.google.com/bot.html)",
            "Googlebot",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like "
            "Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
            "Applebot",
        ),
        ("Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)", "Bytespider"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)", "Mozilla"),
        ("", "*"),
    ],
)
def test_robots_token_names_the_crawler(user_agent: str, token: str) -> None:
    assert robots_token(user_agent) == token


def test_robots_agent_sets_the_token_outright() -> None:
    assert robots_token(GOOGLEBOT_UA, "GPTBot") == "GPTBot"
    assert robots_token("sitemap-audit/0.1.0", None) == "sitemap-audit"
    text = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow:\n"
    p = policy(text, robots_agent="GPTBot")
    assert p.agent == "GPTBot" and not ok(p, "/page")
    assert ok(policy(text), "/page")
    assert is_product_token("Google-Extended") and not is_product_token("Googlebot/2.1")


# --- over HTTP -----------------------------------------------------------------------


async def test_robots_cache_groups_a_served_file(serve: Serve, fast_config: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {"/robots.txt": (200, TEXT, DELAY_INSIDE)}
    async with HttpClient(
        fast_config(user_agent="FooBot/1.0", rate=10, retry_after_cap=30)
    ) as client:
        p = await RobotsCache(client, "FooBot/1.0").get(base + "/")
        assert client.host(base + "/").rate == 0.1  # Crawl-delay: 10
    assert p.agent == "FooBot" and p.crawl_delay == 10.0
    assert not p.allowed(base + "/page")


async def test_robots_cache_takes_the_configured_robots_agent(
    serve: Serve, fast_config: Any
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, "User-agent GPTBot\nDisallow /\n\nUser-agent: *\nAllow: /\n")
    }
    config: CrawlConfig = fast_config(robots_agent="GPTBot")
    async with HttpClient(config) as client:
        cache = RobotsCache(client, config.user_agent)
        p = await cache.get(base + "/")
    assert cache.agent == p.agent == "GPTBot"
    assert not p.allowed(base + "/page")
    assert p.allowed(base + "/page", agent="sitemap-audit")


def _crawl(base: str, out: Path, *extra: str) -> list[dict[str, Any]]:
    argv = ["crawl", f"{base}/sitemap.xml", "--format", "jsonl", "--no-progress", *extra]
    rc = main([*argv, "--output", str(out), "--retries", "0", "--fail-on", "never"])
    assert rc == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _blocked(records: list[dict[str, Any]]) -> set[str]:
    return {r["url"] for r in records if r.get("code") == "url-robots-blocked"}


@pytest.mark.slow
async def test_crawl_honours_a_googlebot_group_for_googlebots_user_agent(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (
            200,
            TEXT,
            "User-agent: Googlebot\nCrawl-delay: 0.2\nUser-agent: Bingbot\nDisallow: /private\n\n"
            "User-agent: *\nDisallow: /star\n",
        ),
        "/sitemap.xml": (200, XML, urlset(f"{base}/private", f"{base}/star", f"{base}/ok")),
        "/private": (200, HTML, "<html></html>"),
        "/star": (200, HTML, "<html></html>"),
        "/ok": (200, HTML, "<html></html>"),
    }
    out = tmp_path / "g.jsonl"
    google = await asyncio.to_thread(_crawl, base, out, "--user-agent", GOOGLEBOT_UA)
    assert _blocked(google) == {f"{base}/private"}
    assert "/private" not in {h.path for h in site.hits}  # never requested
    assert {h.headers["User-Agent"] for h in site.hits} == {GOOGLEBOT_UA}
    plain = await asyncio.to_thread(_crawl, base, out)
    assert _blocked(plain) == {f"{base}/star"}
    # --robots-agent wins over the token of --user-agent
    bing = await asyncio.to_thread(_crawl, base, out, "--robots-agent", "bingbot")
    assert _blocked(bing) == {f"{base}/private"}
    config = tmp_path / "audit.toml"
    config.write_text('robots-agent = "Bingbot"\n')
    from_file = await asyncio.to_thread(_crawl, base, out, "--config", str(config))
    assert _blocked(from_file) == {f"{base}/private"}


def test_robots_agent_must_be_a_product_token(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "http://127.0.0.1:9/", "--robots-agent", "Googlebot/2.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--robots-agent" in err[-1] and "product token" in err[-1]
