"""URL checks: turn what the HTTP layer saw for one listed URL into findings.

Implements the 'URL checks (HTTP)' table of RULES.md: status classes, the
redirect chain, bot challenges, X-Robots-Tag, Link rel=canonical, slowness and
`<lastmod>` against `Last-Modified` (audit.checks.freshness). Pure and synchronous: it must not import
aiohttp or asyncio; it reads a FetchResult and returns values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Final, Literal

from audit.checks.botsigs import detect_bot_challenge
from audit.checks.freshness import Lastmod, lastmod_findings
from audit.checks.hrefs import joined_all, norm_url
from audit.core.config import CrawlConfig
from audit.core.records import STATUS_2XX, FetchResult, Finding, UrlResult, finding

__all__ = [
    "Answered",
    "canonical_links",
    "chain_text",
    "judge_answer",
    "noindex_directive",
    "robots_blocked_finding",
    "url_record",
]

_Add = Callable[[str, str], Finding]
_PERMANENT = frozenset({301, 308})
_BODY_EXCERPT_CHARS = 300
# Headers that explain a failure; copied into the url record of failed requests.
_DIAGNOSTIC_HEADERS = (
    "server",
    "content-type",
    "content-length",
    "retry-after",
    "x-robots-tag",
    "location",
    "www-authenticate",
    "cf-ray",
    "cf-mitigated",
    "x-cache",
    "via",
    "x-amzn-waf-action",
    "x-datadome",
    "x-iinfo",
    "x-sucuri-id",
    "x-served-by",
)


def robots_blocked_finding(
    url: str, sitemap: str | None, line: int | None, agent: str = "this user agent"
) -> Finding:
    """The finding for a listed URL that robots.txt disallows (never requested); `agent`
    is the robots.txt token the rules were read for (Googlebot, not Mozilla)."""
    return finding(
        "url-robots-blocked",
        f"robots.txt disallows {url} for {agent}, yet the sitemap lists it: "
        "remove it from the sitemap or allow it in robots.txt",
        sitemap=sitemap,
        line=line,
        url=url,
    )


# Built once per checked URL: not `frozen` (see UrlResult in core/records.py), a value
# all the same, never assigned to after construction.
@dataclass(slots=True)
class Answered:
    """What the URL checks made of one answer: the findings, and as values what later
    stages need of them (the finding a value stands for is the one in `findings`)."""

    findings: list[Finding]
    noindex: Finding | None = None  # X-Robots-Tag says noindex for the agent
    canonical: Finding | None = None  # the Link header names another URL (or several)
    lastmod: Lastmod = Lastmod.NONE
    lastmod_finding: Finding | None = None  # the finding of a stale/ahead/dynamic lastmod


def judge_answer(
    result: FetchResult,
    lastmod: str | None,
    sitemap: str | None,
    line: int | None,
    config: CrawlConfig,
    agent_token: str,
    now: datetime | None = None,
) -> Answered:
    """The URL checks of one requested URL: the findings in a stable order, and what
    they say as values (noindex, a canonical elsewhere, the lastmod comparison)."""
    out: list[Finding] = []

    def add(code: str, message: str) -> Finding:
        made = finding(code, message, sitemap=sitemap, line=line, url=result.url)
        out.append(made)
        return made

    status = result.status
    ok = status in STATUS_2XX  # (no answer, None, is not)
    # the common case, a 2xx without redirects: no error class (those come with a 3xx or
    # no answer), no failing status, no bot challenge to look for
    if (not ok or result.redirects) and not _answer_findings(result, config.retry_after_cap, add):
        return Answered(out)  # an error class or no answer: that one finding
    if result.elapsed_ms > config.slow_ms:
        add(
            "url-slow",
            f"the response took {result.elapsed_ms:.0f} ms, above the {config.slow_ms:.0f} ms "
            "threshold; speed up the page or its server",
        )
    if not ok:
        return Answered(out)
    return _check_ok(result, out, add, lastmod, config, agent_token, now)


# Error classes that end the checks of a URL with one finding: (code, message, the
# detail when the HTTP layer gave none).
_TERMINAL_KINDS: dict[str | None, tuple[str, str, str]] = {
    "redirect-loop": (
        "url-redirect-loop",
        "the redirect chain revisits a URL: {chain}; "
        "fix the redirects and list the final URL in the sitemap",
        "",
    ),
    "redirect-limit": (
        "url-redirect-loop",
        "the redirect chain exceeds the redirect limit: {chain}; "
        "fix the redirects and list the final URL in the sitemap",
        "",
    ),
    "redirect-invalid": (
        "url-redirect-error",
        "a redirect has no usable Location ({detail}): {chain}; "
        "fix the redirect or list the final URL in the sitemap",
        "Location is missing or invalid",
    ),
    "redirect-scheme": (
        "url-redirect-error",
        "a redirect has no usable Location ({detail}): {chain}; "
        "fix the redirect or list the final URL in the sitemap",
        "Location uses a scheme other than http/https",
    ),
    "redirect-private": (
        "url-redirect-error",
        "a redirect was not followed ({detail}): {chain}; "
        "fix the redirect or list the final URL in the sitemap",
        "Location uses a scheme other than http/https",
    ),
}
_NOT_FOUND = {404: "Not Found", 410: "Gone"}


def _answer_findings(result: FetchResult, cap: float, add: _Add) -> bool:
    """The findings of an answer that is not a plain 2xx: an error class, a redirect or a
    failing status. False when the checks end there (an error class, no answer)."""
    status = result.status
    chain = chain_text(result)
    terminal = _TERMINAL_KINDS.get(result.error_kind)
    if terminal is not None:
        code, message, detail = terminal
        add(code, message.format(chain=chain, detail=result.error or detail))
        return False
    if status is None:
        why = result.error or result.error_kind or "unknown error"
        add(
            "url-unreachable",
            f"no answer after {result.attempts} attempt(s): {why}"
            "; check DNS, the server and the network, or remove the URL from the sitemap",
        )
        return False
    blocker = detect_bot_challenge(status, result.headers, result.body_head)
    # A chain ending in a hard error is one url-redirect-error; a challenge or a
    # 429 at its end is transient, so the redirect and the block are both reported.
    if result.redirects and status >= 400 and blocker is None and status != 429:
        add(
            "url-redirect-error",
            f"the redirect chain ends in HTTP {status}: {chain}; "
            "point the redirect at a working page or remove the URL from the sitemap",
        )
    else:
        _redirect_findings(result, status, chain, add)
        _status_finding(result, status, blocker, add, cap)
    return True


def _status_finding(
    result: FetchResult, status: int, blocker: str | None, add: _Add, cap: float
) -> None:
    """The finding the final status itself calls for (a bot challenge first), if any."""
    if blocker is not None:
        add(
            "url-bot-blocked",
            f"HTTP {status} from a bot challenge: {blocker}; the auditor was blocked, "
            "the page may be fine: allow the auditor's user agent or IP, or lower --rate",
        )
    elif status == 429:
        _rate_limited_finding(result, add, cap)
    elif status in _NOT_FOUND:
        add(
            "url-not-found",
            f"HTTP {status} {_NOT_FOUND[status]}; remove the URL from the sitemap or restore "
            "the page",
        )
    elif status >= 500:
        add(
            "url-server-error",
            f"HTTP {status} after {result.attempts} attempt(s); fix the server error "
            "or remove the URL from the sitemap",
        )
    elif status >= 400:
        add(
            "url-client-error",
            f"HTTP {status}; the URL must answer 200 to be indexed: "
            "fix access or remove it from the sitemap",
        )


def _rate_limited_finding(result: FetchResult, add: _Add, cap: float) -> None:
    retry = (result.header("retry-after") or "").strip()
    hint = f" (Retry-After: {retry})" if retry else ""
    if retry.isdigit() and int(retry) > cap:  # the client did not wait: say why
        hint = f" (Retry-After: {retry} s asked, over the {cap:g} s cap of --max-retry-after)"
    add(
        "url-rate-limited",
        f"still HTTP 429 Too Many Requests after {result.attempts} attempt(s){hint}; "
        "lower --rate or ask the site to allow the auditor",
    )


# The headers a 2xx answer's checks read, gathered in one pass.
_CHECKED_HEADERS = frozenset({"last-modified", "date", "x-robots-tag", "link"})


def _check_ok(
    result: FetchResult,
    out: list[Finding],
    add: _Add,
    lastmod: str | None,
    config: CrawlConfig,
    agent_token: str,
    now: datetime | None,
) -> Answered:
    """The checks of a 2xx answer, after the redirect and slowness findings: one pass over
    the headers."""
    # locals, not a dict of lists: most answers have one Last-Modified and one Date and
    # neither X-Robots-Tag nor Link (their tuples stay the empty one)
    modified: str | None = None
    date: str | None = None
    robots_tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    for name, value in result.headers:
        if name in _CHECKED_HEADERS:
            if name == "last-modified":
                if modified is None:
                    modified = value
            elif name == "date":
                if date is None:
                    date = value
            elif name == "link":
                links += (value,)  # () + (value,) is (value,) itself: no copy
            else:
                robots_tags += (value,)
    noindex = None
    hit = noindex_directive(robots_tags, agent_token) if robots_tags else None
    if hit is not None:
        noindex = add(
            "url-noindex",
            f"X-Robots-Tag {hit!r} says noindex for {agent_token}: a listed URL must be "
            "indexable; remove the header or remove the URL from the sitemap",
        )
    canonical = _canonical_finding(result, links, add) if links else None
    # after a redirect, Last-Modified describes another URL than the listed one
    if lastmod is None or modified is None or result.redirects:
        return Answered(out, noindex, canonical)
    # positional: keyword arguments cost more, once per URL
    match, said = lastmod_findings(modified, date, lastmod, config.lastmod_tolerance_s, now, add)
    return Answered(out, noindex, canonical, match, said)


# --- redirects -------------------------------------------------------------


def chain_text(result: FetchResult) -> str:
    """The redirect chain as `url (status) -> ... -> final (status)`, for messages (the URL
    checks' and migrate's)."""
    parts = [f"{h.url} ({h.status})" for h in result.redirects]
    status = result.status
    last = f"{result.final_url} ({status if status is not None else 'no answer'})"
    if parts[-1:] != [last]:  # a loop's final answer is its last hop
        parts.append(last)
    return " -> ".join(parts)


def _redirect_findings(result: FetchResult, status: int, chain: str, add: _Add) -> None:
    hops = result.redirects
    if not hops:
        if 300 <= status < 400:
            # The HTTP layer follows every usable Location, so a final 3xx had none.
            add(
                "url-redirect-error",
                f"HTTP {status} without a usable Location; fix the redirect "
                "or list the final URL in the sitemap",
            )
        return
    statuses = list(map(attrgetter("status"), hops))
    kind = "permanent" if _PERMANENT.issuperset(statuses) else "temporary"
    final_url = result.final_url
    add(
        "url-redirect",
        f"{kind} redirect ({', '.join(map(str, statuses))}) to {final_url}; "
        f"list the final URL {final_url} in the sitemap instead",
    )
    if len(hops) > 1:
        add(
            "url-redirect-chain",
            f"{len(hops)} redirect hops before the final answer: {chain}; "
            "redirect in one hop and list the final URL in the sitemap",
        )


# --- X-Robots-Tag ----------------------------------------------------------

# Directives that take a value after a colon; anything else before a colon that
# looks like a product token (RFC 9309: letters, '_' and '-') is an agent scope.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_AGENT_TOKEN = re.compile(r"[a-z_-]+\Z")


_NOINDEX: Final = frozenset({"noindex", "none"})


def noindex_directive(
    values: Sequence[str],
    agent_token: str,
    *,
    scoped_only: bool = False,
    words: frozenset[str] = _NOINDEX,
) -> str | None:
    """The X-Robots-Tag header value that says noindex (or another of `words`: the link
    crawl asks for nofollow) for `agent_token`, or None.

    Each header value is a comma-separated list; `agent: directive` scopes it
    and the following directives of that value to one agent. `none` means
    noindex, nofollow. `unavailable_after: <date>` holds colons and commas,
    and its date pieces never look like an agent token, so they are ignored.
    With `scoped_only`, only a noindex scoped to that agent counts (not one for every agent).
    """
    agent = agent_token.strip().lower()
    scopes = {agent} if scoped_only else {agent, None}  # None: a directive for every agent
    for value in values:
        scope: str | None = None
        for raw in value.split(","):
            scope, token = _scoped_directive(raw.strip().lower(), scope)
            if token in words and scope in scopes:
                return value.strip()
    return None


def _scoped_directive(token: str, scope: str | None) -> tuple[str | None, str | None]:
    """The agent scope after one comma-separated token, and its directive (None for a
    valued directive or a piece of its date; an empty token is an empty directive)."""
    if ":" not in token:
        return scope, token
    key, _, rest = token.partition(":")
    key = key.strip()
    if key not in _VALUED_DIRECTIVES and _AGENT_TOKEN.match(key):
        return key, rest.strip()
    return scope, None


# --- Link rel=canonical ----------------------------------------------------


def canonical_links(values: Sequence[str]) -> list[str]:
    """The targets of every `rel=canonical` link in some Link header values (RFC 8288)."""
    found: list[str] = []
    for value in values:
        pos = 0
        while (start := value.find("<", pos)) >= 0 and (end := value.find(">", start + 1)) >= 0:
            rel, pos = _link_rel(value, end + 1)
            if rel is not None and "canonical" in rel.lower().split():
                found.append(value[start + 1 : end].strip())
    return found


# One `; name=value` parameter of a link and what ends it (`;`, the `,` ending the link, or
# the end). A name runs to `=` (a quote in it is a character like any other); a value is
# quoted strings (`\` escapes a character; an unterminated one runs to the end) and any
# other characters but `;` and `,`.
_PARAM = re.compile(r'([^=;,]*)(?:=((?:"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[^";,])*))?([;,]?)', re.S)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*\\?)"?', re.S)
_ESCAPED = re.compile(r"\\(.)", re.S)


def _link_rel(value: str, pos: int) -> tuple[str | None, int]:
    """The first `rel` parameter's value (unquoted; None without one) of the link whose
    parameters start at `pos`, and where the next link may start."""
    rel = None
    for m in _PARAM.finditer(value, pos):
        if rel is None and m.group(1).strip().lower() == "rel":
            quoted = m.group(2) or ""
            rel = _QUOTED.sub(lambda q: _ESCAPED.sub(r"\1", q.group(1)), quoted).strip()
        if m.group(3) != ";":
            return rel, m.end()
    return rel, len(value)  # not reached: the last match is the empty one at the end


def _canonical_finding(
    result: FetchResult, link_values: Sequence[str], add: _Add
) -> Finding | None:
    targets = canonical_links(link_values)
    if not targets:
        return None
    resolved = joined_all(result.final_url, targets)
    normal = set(map(norm_url, resolved))
    if len(normal) > 1:
        return add(
            "url-canonical-mismatch",
            f"conflicting rel=canonical Link headers: {', '.join(resolved)}; "
            "search engines ignore them all: send one canonical, the listed URL",
        )
    own = {norm_url(result.final_url), norm_url(result.url)}
    if normal.isdisjoint(own):
        return add(
            "url-canonical-mismatch",
            f"the Link header names {resolved[0]} as canonical, not {result.final_url}; "
            "list the canonical URL in the sitemap instead, or fix the header",
        )
    return None


# --- the url record --------------------------------------------------------


def url_record(
    result: FetchResult,
    sitemap: str | None,
    line: int | None,
    lastmod: str | None,
    robots: Literal["allowed", "blocked"] = "allowed",
) -> UrlResult:
    """The jsonl `url` record; failures carry diagnostic headers and a body excerpt."""
    status = result.status
    extra: dict[str, object] | None = None
    if (status is None or status >= 400 or result.error is not None) and robots == "allowed":
        extra = _failure_extra(result)
    answered = status is not None  # no final URL or time without an answer
    modified = None  # header_value(), written out: once per URL
    for name, value in result.headers:
        if name == "last-modified":
            modified = value
            break
    # positional: keyword arguments cost more, once per URL
    return UrlResult(
        result.url, sitemap, line, status, result.final_url if answered else None,
        result.redirects, lastmod, modified, robots,
        _round_ms(result.elapsed_ms) if answered else None, result.error, extra,
    )  # fmt: skip


def _failure_extra(result: FetchResult) -> dict[str, object]:
    """What a failed request's url record adds: how it was tried, diagnostic headers and
    a body excerpt."""
    extra: dict[str, object] = {"method": result.method, "attempts": result.attempts}
    if result.error_kind:
        extra["error_kind"] = result.error_kind
    headers: dict[str, str] = {}  # the headers that explain a failure, repeats joined
    for name, value in result.headers:
        if name in _DIAGNOSTIC_HEADERS:
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    if headers:
        extra["headers"] = headers
    if result.body_head:
        extra["body_excerpt"] = body_excerpt(result.body_head, result.header("content-type"))
    return extra


# round(x, 1) goes through a decimal string (~0.3 µs), and answer times repeat: the
# event loop's clock often ticks in whole milliseconds. Only floats > 0 are kept: not
# -0.0 (equal to 0.0, rounds to -0.0), NaN or an int (equal to its float, rounds to int).
_ROUNDED: dict[float, float] = {}
_ROUNDED_MAX = 4096


def _round_ms(ms: float) -> float:
    if type(ms) is not float or not ms > 0.0:
        return round(ms, 1)
    rounded = _ROUNDED.get(ms)
    if rounded is None:
        rounded = round(ms, 1)
        if len(_ROUNDED) < _ROUNDED_MAX:
            _ROUNDED[ms] = rounded
    return rounded


_CHARSET = re.compile(r"charset\s*=\s*\"?([\w.:-]+)", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def body_excerpt(body: bytes, content_type: str | None = None) -> str:
    """At most ~300 characters of a body, decoded safely, whitespace collapsed."""
    head = body[:2048]
    if head.startswith(b"\x1f\x8b") or b"\x00" in head[:512]:
        return f"<{len(body)} bytes of binary data>"
    m = _CHARSET.search(content_type or "")
    try:
        text = head.decode(m.group(1) if m else "utf-8", "replace")
    except LookupError:
        text = head.decode("utf-8", "replace")
    text = _SPACES.sub(" ", text).strip()
    if len(text) > _BODY_EXCERPT_CHARS:
        text = text[: _BODY_EXCERPT_CHARS - 1] + "…"
    return text
