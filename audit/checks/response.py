"""URL checks: turn what the HTTP layer saw for one listed URL into findings.

Implements the 'URL checks (HTTP)' table of RULES.md: status classes, the
redirect chain, bot challenges, X-Robots-Tag, Link rel=canonical, slowness and
`<lastmod>` against `Last-Modified` (audit.checks.freshness). Pure and synchronous: it must not import
aiohttp or asyncio; it reads a FetchResult and returns values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from urllib.parse import urldefrag, urljoin

from audit.checks.botsigs import detect_bot_challenge
from audit.checks.freshness import Lastmod, lastmod_findings
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, Hop, UrlResult, finding, header_value
from audit.rules.urls import normalize_url

__all__ = [
    "Answered",
    "canonical_links",
    "check_fetch",
    "judge_answer",
    "noindex_directive",
    "robots_blocked_finding",
    "url_record",
]

_Add = Callable[[str, str], Finding]
_PERMANENT = frozenset({301, 308})
_LOOP_KINDS = frozenset({"redirect-loop", "redirect-limit"})
_BAD_REDIRECT_KINDS = frozenset({"redirect-invalid", "redirect-scheme", "redirect-private"})
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


def check_fetch(
    result: FetchResult,
    *,
    lastmod: str | None,
    sitemap: str | None,
    line: int | None,
    config: CrawlConfig,
    agent_token: str,
    now: datetime | None = None,
) -> list[Finding]:
    """Every URL-check finding for one requested URL, in a stable order."""
    return judge_answer(
        result,
        lastmod=lastmod,
        sitemap=sitemap,
        line=line,
        config=config,
        agent_token=agent_token,
        now=now,
    ).findings


def judge_answer(
    result: FetchResult,
    *,
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
    if (
        result.error_kind is None
        and status is not None
        and 200 <= status < 300
        and not result.redirects
    ):
        # the common case: no redirect, no error class, no bot challenge to look for
        if result.elapsed_ms > config.slow_ms:
            _slow_finding(result, config, add)
        return _check_ok(result, out, add, lastmod, config, agent_token, now)
    if _check_not_plain(result, config, add):
        return _check_ok(result, out, add, lastmod, config, agent_token, now)
    return Answered(out)


def _check_not_plain(result: FetchResult, config: CrawlConfig, add: _Add) -> bool:
    """The findings of an answer that is not a plain 2xx: an error class, a redirect or a
    failing status. True when it still ended in a 2xx whose headers are to be checked."""
    status = result.status
    chain = _chain_text(result.redirects, result.final_url, status)
    terminal = _TERMINAL_KINDS.get(result.error_kind or "")
    if terminal is not None:
        terminal(result, chain, add)
        return False
    if status is None:
        _unreachable_finding(result, add)
        return False
    _answer_findings(result, status, chain, config.retry_after_cap, add)
    if result.elapsed_ms > config.slow_ms:
        _slow_finding(result, config, add)
    return 200 <= status < 300


def _answer_findings(result: FetchResult, status: int, chain: str, cap: float, add: _Add) -> None:
    """The redirect and status findings of an answer that is not a plain 2xx."""
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


def _loop_finding(result: FetchResult, chain: str, add: _Add) -> None:
    loop = result.error_kind == "redirect-loop"
    what = "revisits a URL" if loop else "exceeds the redirect limit"
    add(
        "url-redirect-loop",
        f"the redirect chain {what}: {chain}; "
        "fix the redirects and list the final URL in the sitemap",
    )


def _bad_redirect_finding(result: FetchResult, chain: str, add: _Add) -> None:
    kind = result.error_kind
    detail = result.error or (
        "Location is missing or invalid"
        if kind == "redirect-invalid"
        else "Location uses a scheme other than http/https"
    )
    what = "was not followed" if kind == "redirect-private" else "has no usable Location"
    add(
        "url-redirect-error",
        f"a redirect {what} ({detail}): {chain}; "
        "fix the redirect or list the final URL in the sitemap",
    )


# Error classes that end the checks of a URL with one finding.
_TERMINAL_KINDS: dict[str, Callable[[FetchResult, str, _Add], None]] = {
    **dict.fromkeys(_LOOP_KINDS, _loop_finding),
    **dict.fromkeys(_BAD_REDIRECT_KINDS, _bad_redirect_finding),
}


def _unreachable_finding(result: FetchResult, add: _Add) -> None:
    why = result.error or result.error_kind or "unknown error"
    add(
        "url-unreachable",
        f"no answer after {result.attempts} attempt(s): {why}"
        "; check DNS, the server and the network, or remove the URL from the sitemap",
    )


def _status_finding(
    result: FetchResult, status: int, blocker: str | None, add: _Add, cap: float
) -> None:
    """The finding the final status itself calls for (a bot challenge first), if any."""
    if blocker is not None:
        _bot_blocked_finding(status, blocker, add)
    elif status == 429:
        _rate_limited_finding(result, add, cap)
    elif status >= 400:
        _error_status_finding(result, status, add)


def _bot_blocked_finding(status: int, blocker: str, add: _Add) -> None:
    add(
        "url-bot-blocked",
        f"HTTP {status} from a bot challenge: {blocker}; the auditor was blocked, "
        "the page may be fine: allow the auditor's user agent or IP, or lower --rate",
    )


def _error_status_finding(result: FetchResult, status: int, add: _Add) -> None:
    """The finding of a 4xx (other than 429) or 5xx final status."""
    if status in (404, 410):
        word = "Not Found" if status == 404 else "Gone"
        add(
            "url-not-found",
            f"HTTP {status} {word}; remove the URL from the sitemap or restore the page",
        )
    elif status < 500:
        add(
            "url-client-error",
            f"HTTP {status}; the URL must answer 200 to be indexed: "
            "fix access or remove it from the sitemap",
        )
    else:
        add(
            "url-server-error",
            f"HTTP {status} after {result.attempts} attempt(s); fix the server error "
            "or remove the URL from the sitemap",
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
    robots_values: list[str] | None = None
    link_values: list[str] | None = None
    modified: str | None = None
    date: str | None = None
    for name, value in result.headers:
        if name == "last-modified":
            if modified is None:
                modified = value
        elif name == "date":
            if date is None:
                date = value
        elif name == "x-robots-tag":
            robots_values = [*(robots_values or ()), value]
        elif name == "link":
            link_values = [*(link_values or ()), value]
    noindex = _noindex_finding(robots_values, agent_token, add) if robots_values else None
    canonical = _canonical_finding(result, link_values, add) if link_values else None
    # after a redirect, Last-Modified describes another URL than the listed one
    if lastmod is None or modified is None or result.redirects:
        return Answered(out, noindex, canonical)
    match, said = lastmod_findings(
        modified, date, lastmod, tolerance_s=config.lastmod_tolerance_s, now=now, add=add
    )
    return Answered(out, noindex, canonical, match, said)


def _noindex_finding(robots_values: list[str], agent_token: str, add: _Add) -> Finding | None:
    hit = noindex_directive(robots_values, agent_token)
    if hit is None:
        return None
    return add(
        "url-noindex",
        f"X-Robots-Tag {hit!r} says noindex for {agent_token}: a listed URL must be "
        "indexable; remove the header or remove the URL from the sitemap",
    )


def _slow_finding(result: FetchResult, config: CrawlConfig, add: _Add) -> None:
    add(
        "url-slow",
        f"the response took {result.elapsed_ms:.0f} ms, above the {config.slow_ms:.0f} ms "
        "threshold; speed up the page or its server",
    )


# --- redirects -------------------------------------------------------------


def _chain_text(hops: tuple[Hop, ...], final_url: str, status: int | None) -> str:
    parts = [f"{h.url} ({h.status})" for h in hops]
    last = f"{final_url} ({status if status is not None else 'no answer'})"
    if not parts or parts[-1] != last:  # a loop's final answer is its last hop
        parts.append(last)
    return " -> ".join(parts)


def _redirect_findings(result: FetchResult, status: int, chain: str, add: _Add) -> None:
    hops = result.redirects
    if not hops:
        if 300 <= status < 400:
            _no_location_finding(status, add)
        return
    _redirected_finding(hops, result.final_url, add)
    if len(hops) > 1:
        add(
            "url-redirect-chain",
            f"{len(hops)} redirect hops before the final answer: {chain}; "
            "redirect in one hop and list the final URL in the sitemap",
        )


def _redirected_finding(hops: tuple[Hop, ...], final_url: str, add: _Add) -> None:
    permanent = all(h.status in _PERMANENT for h in hops)
    kind = "permanent" if permanent else "temporary"
    add(
        "url-redirect",
        f"{kind} redirect ({', '.join(str(h.status) for h in hops)}) to {final_url}; "
        f"list the final URL {final_url} in the sitemap instead",
    )


def _no_location_finding(status: int, add: _Add) -> None:
    # The HTTP layer follows every usable Location, so a final 3xx had none.
    add(
        "url-redirect-error",
        f"HTTP {status} without a usable Location; fix the redirect "
        "or list the final URL in the sitemap",
    )


# --- X-Robots-Tag ----------------------------------------------------------

# Directives that take a value after a colon; anything else before a colon that
# looks like a product token (RFC 9309: letters, '_' and '-') is an agent scope.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_AGENT_TOKEN = re.compile(r"[a-z_-]+\Z")


def noindex_directive(
    values: list[str], agent_token: str, *, scoped_only: bool = False
) -> str | None:
    """The X-Robots-Tag header value that says noindex for `agent_token`, or None.

    Each header value is a comma-separated list; `agent: directive` scopes it
    and the following directives of that value to one agent. `none` means
    noindex, nofollow. `unavailable_after: <date>` holds colons and commas,
    and its date pieces never look like an agent token, so they are ignored.
    With `scoped_only`, only a noindex scoped to that agent counts (not one for every agent).
    """
    agent = agent_token.strip().lower()
    for value in values:
        if _says_noindex(value, agent, scoped_only):
            return value.strip()
    return None


def _says_noindex(value: str, agent: str, scoped_only: bool = False) -> bool:
    """Whether one X-Robots-Tag value says noindex (or none) to every agent or to `agent`."""
    scope: str | None = None
    for raw in value.split(","):
        scope, token = _scoped_directive(raw.strip().lower(), scope)
        if token in ("noindex", "none") and (scope == agent or (scope is None and not scoped_only)):
            return True
    return False


def _scoped_directive(token: str, scope: str | None) -> tuple[str | None, str | None]:
    """The agent scope after one comma-separated token, and its directive (None for an
    empty token, a valued directive or a piece of its date)."""
    if ":" not in token:
        return scope, token or None
    key, _, rest = token.partition(":")
    key = key.strip()
    if key not in _VALUED_DIRECTIVES and _AGENT_TOKEN.match(key):
        return key, rest.strip()
    return scope, None


# --- Link rel=canonical ----------------------------------------------------


def canonical_links(values: list[str]) -> list[str]:
    """The targets of every `rel=canonical` link in some Link header values (RFC 8288)."""
    found: list[str] = []
    for value in values:
        for target, rel in _link_rels(value):
            if rel is not None and "canonical" in rel.lower().split():
                found.append(target)
    return found


def _link_rels(value: str) -> Iterator[tuple[str, str | None]]:
    """The target and the rel parameter (None without one) of each link in a Link value."""
    pos = 0
    n = len(value)
    while True:
        start = value.find("<", pos)
        if start < 0:
            return
        end = value.find(">", start + 1)
        if end < 0:
            return
        target = value[start + 1 : end].strip()
        params, pos = _link_params(value, end + 1, n)
        yield target, params.get("rel")


def _link_params(value: str, pos: int, n: int) -> tuple[dict[str, str], int]:
    """Parse `; name=value` parameters up to the comma ending this link."""
    params: dict[str, str] = {}
    name: list[str] = []
    val: list[str] = []
    current = name  # the name until its '=', then the value
    i = pos
    while i < n:
        c = value[i]
        if c == '"' and current is val:
            i = _quoted_value(value, i + 1, n, val)
        elif c in ";,":
            _keep_param(params, name, val)
            name, val = [], []
            current = name
            if c == ",":
                return params, i + 1
        elif c == "=" and current is name:
            current = val
        else:
            current.append(c)
        i += 1
    _keep_param(params, name, val)
    return params, n


def _quoted_value(value: str, i: int, n: int, val: list[str]) -> int:
    """Append a quoted string's characters (from `i`, after the opening quote) to `val`;
    the index of its closing quote, or `n` when it is unterminated."""
    while i < n:
        c = value[i]
        if c == "\\" and i + 1 < n:
            val.append(value[i + 1])
            i += 1
        elif c == '"':
            return i
        else:
            val.append(c)
        i += 1
    return n


def _keep_param(params: dict[str, str], name: list[str], val: list[str]) -> None:
    """The first value of a parameter name wins."""
    key = "".join(name).strip().lower()
    if key and key not in params:
        params[key] = "".join(val).strip()


def _canonical_finding(result: FetchResult, link_values: list[str], add: _Add) -> Finding | None:
    targets = canonical_links(link_values)
    if not targets:
        return None
    resolved = _resolved(result.final_url or result.url, targets)
    normal = {_normalize(u) for u in resolved}
    if len(normal) > 1:
        return add(
            "url-canonical-mismatch",
            f"conflicting rel=canonical Link headers: {', '.join(resolved)}; "
            "search engines ignore them all: send one canonical, the listed URL",
        )
    own = {_normalize(result.final_url), _normalize(result.url)}
    if normal.isdisjoint(own):
        return add(
            "url-canonical-mismatch",
            f"the Link header names {resolved[0]} as canonical, not {result.final_url}; "
            "list the canonical URL in the sitemap instead, or fix the header",
        )
    return None


def _resolved(base: str, targets: list[str]) -> list[str]:
    """The targets resolved against `base`, each once, in order."""
    return list(dict.fromkeys(urljoin(base, t) for t in targets))


# --- the url record --------------------------------------------------------


def url_record(
    result: FetchResult,
    *,
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
    # positional: keyword arguments cost more, once per URL
    return UrlResult(
        result.url, sitemap, line, status, result.final_url if answered else None,
        result.redirects, lastmod, header_value(result.headers, "last-modified"), robots,
        _round_ms(result.elapsed_ms) if answered else None, result.error, extra,
    )  # fmt: skip


def _failure_extra(result: FetchResult) -> dict[str, object]:
    """What a failed request's url record adds: how it was tried, diagnostic headers and
    a body excerpt."""
    extra: dict[str, object] = {"method": result.method, "attempts": result.attempts}
    if result.error_kind:
        extra["error_kind"] = result.error_kind
    headers = _diagnostic_headers(result.headers)
    if headers:
        extra["headers"] = headers
    if result.body_head:
        extra["body_excerpt"] = body_excerpt(result.body_head, result.header("content-type"))
    return extra


def _diagnostic_headers(headers: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The headers that explain a failure, repeated ones joined with ', '."""
    found: dict[str, str] = {}
    for name, value in headers:
        if name in _DIAGNOSTIC_HEADERS:
            found[name] = f"{found[name]}, {value}" if name in found else value
    return found


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
    try:
        text = head.decode(_charset_of(content_type), "replace")
    except LookupError:
        text = head.decode("utf-8", "replace")
    text = _SPACES.sub(" ", text).strip()
    if len(text) > _BODY_EXCERPT_CHARS:
        text = text[: _BODY_EXCERPT_CHARS - 1] + "…"
    return text


def _charset_of(content_type: str | None) -> str:
    """The charset a Content-Type names, utf-8 by default."""
    m = _CHARSET.search(content_type) if content_type else None
    return m.group(1) if m else "utf-8"


def _normalize(url: str) -> str:
    """normalize_url without the fragment (search engines ignore fragments)."""
    return normalize_url(urldefrag(url.strip())[0])
