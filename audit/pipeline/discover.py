"""Discovery: which sitemaps does a site declare or expose?

Order (as search engines and site owners use them): robots.txt `Sitemap:`
lines, then the common paths, then `<link rel="sitemap">` on the home page.
It uses the HTTP layer and the robots cache; it never parses a sitemap (a
cheap sniff of the first bytes tells a sitemap from an HTML error page).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urljoin

from audit.core.errors import TargetError
from audit.core.records import Finding, finding
from audit.http import HttpClient
from audit.http.robots import RobotsPolicy
from audit.rules.urls import is_absolute_http, normalize_url

COMMON_PATHS = ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml", "/sitemap.xml.gz")
GZIP_COPY = "/sitemap.xml.gz"  # beside /sitemap.xml, the same sitemap compressed
HOME_BYTES = 256 * 1024
SNIFF_BYTES = 2048

_LINK_TAG = re.compile(rb"<link\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(rb"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_SITEMAP_START = re.compile(
    rb"^(?:\xef\xbb\xbf)?\s*(?:<\?xml|<urlset|<sitemapindex|<rss|<feed|https?://)", re.I
)


@dataclass(frozen=True, slots=True)
class Discovered:
    url: str
    source: str  # "robots.txt" | "common path" | "home page" | "target"
    relative: bool = False  # a robots.txt line written relative, resolved against its URL

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"type": "discovered", "url": self.url, "source": self.source}
        if self.relative:
            record["relative"] = True
        return record


def robots_discovered(policy: RobotsPolicy, findings: list[Finding]) -> list[Discovered]:
    """The `Sitemap:` lines of a robots.txt policy, each saying whether it was relative;
    a line that is no http(s) URL even after resolving is a finding in `findings`."""
    out: list[Discovered] = []
    for url in policy.sitemaps:
        if is_absolute_http(url):
            out.append(Discovered(url, "robots.txt", url in policy.relative_sitemaps))
            continue
        findings.append(
            finding(
                "sitemap-not-found",
                f"robots.txt declares Sitemap: {url[:200]!r}, which is not an http(s) URL: "
                "it cannot be fetched; give the sitemap's absolute https:// URL",
                url=policy.url,
            )
        )
    return out


def looks_like_sitemap(body: bytes) -> bool:
    """Gzip data, or a document that starts as a sitemap does (an HTML page, starting
    '<!doctype html', '<html', '<head' or '<body', never does)."""
    if body[:2] == b"\x1f\x8b":
        return True
    return bool(_SITEMAP_START.match(body))


def sitemap_links(html: bytes, base: str) -> list[str]:
    """hrefs of <link rel="sitemap"> in an HTML document, resolved against base."""
    out: list[str] = []
    for tag in _LINK_TAG.findall(html):
        # an attribute's value is the one of its three groups that matched (double
        # quoted, single quoted, bare): the other two are empty
        attrs = {name.lower(): b"".join(value) for name, *value in _ATTR.findall(tag)}
        rels = attrs.get(b"rel", b"").lower().split()
        href = attrs.get(b"href")
        if b"sitemap" in rels and href:
            out.append(urljoin(base, href.decode("utf-8", "replace").strip()))
    return out


RobotsGetter = Callable[[str], Awaitable[RobotsPolicy]]


class _Found:
    """The sitemaps found so far, each once (compared normalised)."""

    def __init__(self) -> None:
        self.items: list[Discovered] = []
        self.seen: set[str] = set()

    def has(self, url: str) -> bool:
        return normalize_url(url) in self.seen

    def add(self, key_url: str, found: Discovered) -> None:
        """Record `found` unless `key_url` (its URL, or the URL it answered at) was seen."""
        key = normalize_url(key_url)
        if key not in self.seen:
            self.seen.add(key)
            self.items.append(found)


async def discover(
    client: HttpClient,
    robots_get: RobotsGetter,
    site: str,
    *,
    exhaustive: bool = False,
) -> tuple[list[Discovered], list[Finding]]:
    """Find the sitemaps of a site root. With `exhaustive`, try every source
    (the `discover` command); otherwise stop at the first source that yields."""
    root = site.rstrip("/")
    found = _Found()
    findings: list[Finding] = []
    policy = await _robots_sitemaps(client, robots_get, root, found, findings)
    for source in (  # the sources after robots.txt, in order
        partial(_common_paths, client, policy, root, found, exhaustive=exhaustive),
        partial(_home_page_links, client, root, found),
    ):
        if found.items and not exhaustive:
            break
        await source()
    if not found.items:
        findings.append(
            finding(
                "sitemap-not-found",
                "no sitemap found: robots.txt has no Sitemap: line, none of "
                + ", ".join(COMMON_PATHS)
                + ' answers with a sitemap, and the home page has no <link rel="sitemap">; '
                "publish one and declare it in robots.txt",
                url=root + "/",
            )
        )
    return found.items, findings


async def _robots_sitemaps(
    client: HttpClient,
    robots_get: RobotsGetter,
    root: str,
    found: _Found,
    findings: list[Finding],
) -> RobotsPolicy:
    """The `Sitemap:` lines of robots.txt; TargetError when the site does not answer."""
    policy = await robots_get(root + "/")
    if policy.status == "unreachable" and policy.http_status is None:
        home = await client.fetch(root + "/", method="GET", body_bytes=1)
        if home.status is None:
            raise TargetError(f"{root}/: site cannot be reached: {home.error}")
    for d in robots_discovered(policy, findings):
        found.add(d.url, d)
    if policy.status == "ok" and not policy.sitemaps:
        findings.append(
            finding(
                "robots-no-sitemap",
                "robots.txt declares no Sitemap: line; add one so every crawler finds the sitemaps",
                url=root + "/robots.txt",
            )
        )
    return policy


async def _common_paths(
    client: HttpClient, policy: RobotsPolicy, root: str, found: _Found, *, exhaustive: bool
) -> None:
    """The common sitemap paths robots.txt allows that answer with a sitemap."""
    for path in COMMON_PATHS:
        url = root + path
        if not policy.allowed(url):
            continue  # probing a disallowed path would be impolite
        if path == GZIP_COPY and not exhaustive and found.has(root + "/sitemap.xml"):
            # generators (MkDocs, others) write sitemap.xml and its gzip copy: one sitemap,
            # audited once, or every URL would read as listed twice
            continue
        res = await client.fetch(url, method="GET", body_bytes=SNIFF_BYTES, confirm_with_get=False)
        if _answered_2xx(res.status) and looks_like_sitemap(res.body_head):
            # /sitemap.xml often redirects to /sitemap_index.xml: audit the target once.
            found.add(res.final_url, Discovered(url, "common path"))


async def _home_page_links(client: HttpClient, root: str, found: _Found) -> None:
    """The `<link rel="sitemap">` elements of the home page."""
    home = await client.fetch(
        root + "/", method="GET", body_bytes=HOME_BYTES, confirm_with_get=False
    )
    if _answered_2xx(home.status):
        for url in sitemap_links(home.body_head, home.final_url):
            found.add(url, Discovered(url, "home page"))


def _answered_2xx(status: int | None) -> bool:
    return status is not None and 200 <= status < 300
