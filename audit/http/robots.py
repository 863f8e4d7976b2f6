"""robots.txt: fetch once per scheme://host:port, decide what the configured agent may fetch.

Semantics (RFC 9309, plus Google's documented behaviour; RULES.md "Behaviour the checks
rely on"):

- fetch `/robots.txt` once per origin per run, even under concurrent callers (one shared
  task per origin); follow up to ROBOTS_MAX_REDIRECTS redirects, the rules then apply to the
  original origin; read at most ROBOTS_MAX_BYTES (a partial last line is dropped);
  bytes that are not UTF-8 decode with replacement characters;
- 2xx: parse and obey -> status "ok"; 4xx other than 429 -> "missing", allow all;
  5xx, 429, timeouts and network failures (after the shared retry predicate) ->
  "unreachable", disallow all; a redirect chain that cannot be completed (more than five
  hops, a loop, no usable Location) is "unavailable" in RFC terms -> "missing";
- groups and matching are robotstxt.py's (RFC 9309: records other than user-agent, allow
  and disallow end no group; groups naming one agent merge; the token's own group, else
  `*`, else none: allow all; longest match wins, a tie goes to Allow, `*` and `$`
  wildcards, percent-encoding normalised); `/robots.txt` is always allowed, whatever the
  status;
- the agent is a product token (core/agent.py `robots_token`): `--robots-agent`, else the
  crawler named in the User-Agent (`Googlebot` of `Mozilla/5.0 (compatible; Googlebot/2.1;
  ...)`, `sitemap-audit` of `sitemap-audit/0.1.0`); the policy says which (`agent`);
- `Sitemap:` lines are global, case-insensitive, anywhere in the file; a relative one is
  resolved against the robots.txt URL (RFC 3986 §5, the base is where the file came from)
  and listed in `relative_sitemaps` too;
- `Crawl-delay` and `Request-rate` of the chosen group lower the host's request rate
  (never above --rate): not in the RFC, but a polite auditor honours them.

Knows nothing of sitemaps; imports the HTTP layer, never aiohttp directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin, urlsplit

from audit.core.agent import robots_token
from audit.core.config import ROBOTS_MAX_BYTES, ROBOTS_MAX_REDIRECTS
from audit.core.records import STATUS_2XX, FetchResult, Hop
from audit.http import HttpClient
from audit.http.hosts import DEFAULT_PORTS, Host
from audit.http.retry import unavailable

if TYPE_CHECKING:
    from audit.http.robotstxt import Group, RobotsTxt

RobotsStatus = Literal["ok", "missing", "unreachable"]

# a UTF-8 BOM, or its first one or two bytes
_BOM = re.compile(rb"\A\xef(?:\xbb\xbf?)?")
_REDIRECT_FAILURES = frozenset(
    {"redirect-loop", "redirect-limit", "redirect-invalid", "redirect-scheme"}
)

__all__ = ["RobotsCache", "RobotsPolicy", "RobotsStatus", "parse_robots", "product_token"]


def product_token(user_agent: str) -> str:
    """The robots.txt product token of a User-Agent string (core/agent.py `robots_token`)."""
    return robots_token(user_agent)


@dataclass(frozen=True, slots=True, eq=False)
class RobotsPolicy:
    """What one origin's robots.txt says for the configured agent."""

    origin: str  # scheme://host:port the rules apply to
    url: str  # the robots.txt URL requested
    status: RobotsStatus
    http_status: int | None = None
    sitemaps: list[str] = field(default_factory=list)
    relative_sitemaps: frozenset[str] = frozenset()  # those of `sitemaps` written relative
    crawl_delay: float | None = None  # seconds
    request_rate: float | None = None  # requests per second
    error: str | None = None
    redirects: tuple[Hop, ...] = ()
    truncated: bool = False  # longer than ROBOTS_MAX_BYTES: only the start was read
    agent: str = "*"  # the product token the policy was judged for
    _robots: RobotsTxt | None = None
    _group: Group | None = None  # the agent's group; None = no rule applies (allow all)

    def allowed(self, url: str, agent: str | None = None) -> bool:
        """May the configured agent (or the product token `agent`) fetch `url` of this origin?"""
        # RFC 9309 2.2.2: robots.txt itself is always allowed. urlsplit drops tabs and
        # newlines anywhere, so only a URL with none of them is ruled out by the substring
        # test alone (the test every listed URL takes, with no call)
        if "/robots.txt" in url or "\t" in url or "\n" in url or "\r" in url:
            with contextlib.suppress(ValueError):  # (not a URL urlsplit can read)
                if urlsplit(url).path == "/robots.txt":
                    return True
        if self.status != "ok":  # a file not read: missing allows all, unreachable nothing
            return self.status == "missing"
        if agent is not None and self._robots is not None:  # (its own: the same group)
            return self._robots.allowed(url, agent)
        return self._group is None or self._group.allowed(url)

    def usage(self, agent: str) -> tuple[dict[str, str], dict[str, str]]:
        """The product token's effective `Content-Signal` and `Content-Usage` values here
        (robotstxt.py `RobotsTxt.usage`); none for a file that was not read."""
        return self._robots.usage(agent) if self._robots is not None else ({}, {})


def parse_robots(
    text: str,
    user_agent: str,
    *,
    robots_agent: str | None = None,
    origin: str = "",
    url: str = "",
    http_status: int | None = 200,
    redirects: tuple[Hop, ...] = (),
    truncated: bool = False,
) -> RobotsPolicy:
    """Parse a robots.txt body (already decoded) into an "ok" policy for the agent.

    The agent is `robots_agent` when given (`--robots-agent`), else the product token of
    `user_agent`.
    """
    from audit.http.robotstxt import parse_robots_txt  # read once a robots.txt is: not for a file

    robots = parse_robots_txt(text)
    agent = robots_token(user_agent, robots_agent)
    group = robots.group(agent)
    sitemaps, relative = _resolve_sitemaps(robots.sitemaps, url)
    return RobotsPolicy(
        origin=origin,
        url=url,
        status="ok",
        http_status=http_status,
        sitemaps=sitemaps,
        relative_sitemaps=relative,
        crawl_delay=group.crawl_delay,
        request_rate=group.request_rate,
        redirects=redirects,
        truncated=truncated,
        agent=agent,
        _robots=robots,
        _group=group if group.rules else None,  # no rule: every URL allowed, no matching
    )


def _resolve_sitemaps(lines: list[str], base: str) -> tuple[list[str], frozenset[str]]:
    """The `Sitemap:` values as absolute URLs, and which of them were written relative."""
    out: list[str] = []
    relative: set[str] = set()
    for value in lines:
        with contextlib.suppress(ValueError):  # unusable (a bad IPv6 literal...): as written
            if base and not urlsplit(value).scheme:
                value = urljoin(base, value)
                relative.add(value)
        out.append(value)
    return out, frozenset(relative)


def _decode(body: bytes) -> tuple[str, bool]:
    """Decode at most ROBOTS_MAX_BYTES; a cut-off last line is dropped (half a rule lies)."""
    truncated = len(body) > ROBOTS_MAX_BYTES
    # without its BOM, or the start of one left by a broken encoder (no part of the first line)
    body = _BOM.sub(b"", body, count=1)
    if truncated:
        body = body[:ROBOTS_MAX_BYTES]
        cut = max(body.rfind(b"\n"), body.rfind(b"\r"))  # -1 without one: nothing kept
        body = body[: cut + 1]
    return body.decode("utf-8", errors="replace"), truncated


class RobotsCache:
    """robots.txt policies of the run, fetched once per origin and kept on the client's
    hosts (`Host.robots`), so every RobotsCache of one client shares them."""

    def __init__(self, client: HttpClient, user_agent: str) -> None:
        """The client's `--robots-agent`, when given, is the token outright."""
        self._client = client
        self._user_agent = user_agent
        self._robots_agent = client.config.robots_agent
        self.agent = robots_token(user_agent, self._robots_agent)  # the product token judged for
        self._started: list[Host] = []  # the hosts whose read this cache began

    async def get(self, url_or_origin: str) -> RobotsPolicy:
        """The policy of the URL's origin; the first caller fetches, the others wait for it.
        Kept on the host (`Host.robots`): one cache per run, whoever asks.

        Raises ValueError for a URL that is not absolute http(s).
        """
        host = self._client.hosts.get(url_or_origin)
        if host.robots is not None:
            policy: RobotsPolicy = host.robots
            return policy
        task = host.robots_task
        if task is None:
            task = host.robots_task = asyncio.create_task(self._load(host))
            self._started.append(host)
        # shield: a cancelled caller must not cancel the fetch other callers wait on
        return await asyncio.shield(task)

    def cached(self, url_or_origin: str) -> RobotsPolicy | None:
        """The policy if it is already known (no fetch), else None."""
        try:
            known: RobotsPolicy | None = self._client.hosts.get(url_or_origin).robots
        except ValueError:
            return None
        return known

    def read(self) -> list[RobotsPolicy]:
        """The policies this cache has read so far (any status), in the order first asked:
        its reads that finished without an error (a read keeps its policy on its host as it
        returns; nothing else sets it there, and nothing on a failed read)."""
        return [host.robots for host in self._started if host.robots is not None]

    async def _load(self, host: Host) -> RobotsPolicy:
        """Read and parse the host's robots.txt; its Crawl-delay and Request-rate slow
        the host down."""
        origin = host.key  # scheme://host:port, requested without a default port
        url = origin.removesuffix(f":{DEFAULT_PORTS[host.scheme]}") + "/robots.txt"
        result = await self._client.fetch(
            url,
            method="GET",
            body_bytes=ROBOTS_MAX_BYTES + 1,  # one more byte tells a cut-off file
            confirm_with_get=False,
            max_redirects=ROBOTS_MAX_REDIRECTS,
        )
        policy = _failed_read(origin, url, result)
        if policy is None:  # a 2xx answer: parsed and obeyed
            text, truncated = _decode(result.body_head)
            policy = parse_robots(
                text,
                self._user_agent,
                robots_agent=self._robots_agent,
                origin=origin,
                url=url,
                http_status=result.status,
                redirects=result.redirects,
                truncated=truncated,
            )
            if policy.crawl_delay:
                host.set_min_interval(policy.crawl_delay)
            if policy.request_rate:
                host.set_max_rate(policy.request_rate)
        host.robots = policy  # known to every RobotsCache of the client from now on
        return policy


def _failed_read(origin: str, url: str, result: FetchResult) -> RobotsPolicy | None:
    """The policy of a robots.txt that could not be read (missing: allow all; unreachable:
    disallow all), or None for a 2xx answer to parse."""
    status = result.status
    if result.error_kind in _REDIRECT_FAILURES:
        # RFC 9309 2.3.1.2: too many redirects may be treated as unavailable (allow all)
        return _failed_policy(origin, url, result, "missing", result.error)
    if unavailable(status):  # no answer, 429 or 5xx
        error = result.error or f"robots.txt answers HTTP {status}"
        return _failed_policy(origin, url, result, "unreachable", error)
    if status not in STATUS_2XX:  # (not None: unavailable)
        return _failed_policy(origin, url, result, "missing", None)
    return None


def _failed_policy(
    origin: str, url: str, result: FetchResult, kind: RobotsStatus, error: str | None
) -> RobotsPolicy:
    return RobotsPolicy(
        origin=origin,
        url=url,
        status=kind,
        http_status=result.status,
        error=error,
        redirects=result.redirects,
    )
