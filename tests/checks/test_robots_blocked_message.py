"""url-robots-blocked names the robots.txt token it was judged for (issue 16.2): a crawl with
Googlebot's real, browser-like user agent string is blocked by a Googlebot-only Disallow and
says "for Googlebot", not "for this user agent" or "for Mozilla"."""

from __future__ import annotations

from audit.checks.response import robots_blocked_finding
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, audit, urlset

GOOGLEBOT_UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


async def test_a_googlebot_only_disallow_says_for_googlebot(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, "User-agent: Googlebot\nDisallow: /private\n\nUser-agent: *\n"),
        "/sitemap.xml": (200, XML, urlset(f"{base}/private", f"{base}/ok")),
        "/private": (200, HTML, "<html></html>"),
        "/ok": (200, HTML, "<html></html>"),
    }
    run = await audit(f"{base}/sitemap.xml", user_agent=GOOGLEBOT_UA)
    [blocked] = run.findings("url-robots-blocked")
    assert blocked["url"] == f"{base}/private"
    assert f"robots.txt disallows {base}/private for Googlebot," in blocked["message"]
    assert "/private" not in site.paths()  # judged, never requested


def test_the_agent_defaults_to_the_old_words() -> None:
    f = robots_blocked_finding("http://e.test/x", None, None)
    assert "disallows http://e.test/x for this user agent," in f.message
    assert "for GPTBot," in robots_blocked_finding("http://e.test/x", None, None, "GPTBot").message
