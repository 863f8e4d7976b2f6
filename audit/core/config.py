"""Run configuration: one frozen dataclass, defaults as library constants."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from difflib import get_close_matches
from operator import itemgetter
from typing import Any

from audit.core.version import __version__

DEFAULT_RATE = 10.0
DEFAULT_CONCURRENCY = 32
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 2
DEFAULT_USER_AGENT = f"sitemap-audit/{__version__}"
DEFAULT_SLOW_MS = 5000.0
MAX_REDIRECTS = 10  # Google's limit
ROBOTS_MAX_REDIRECTS = 5  # RFC 9309 section 2.3.1.2
ROBOTS_MAX_BYTES = 500 * 1024  # RFC 9309: parse at least the first 500 KiB
RETRY_AFTER_CAP = 120.0  # seconds: a Retry-After is honoured up to this
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
DEFAULT_MAX_PER_HOST: int | None = (
    None  # None: --concurrency (most audits are one host); --max-per-host caps it
)
STREAM_TIMEOUT_FACTOR = 4.0
SECRET_MIN_CHARS = 4  # shorter credential values are not redacted from reports
AUTH_ENV = "SITEMAP_AUDIT_AUTH"  # user:password for --auth, kept out of shell history  # a sitemap body may take this many --timeout to arrive
FETCH_WORKERS_MAX = 8
DEFAULT_FETCH_WORKERS_AFTER = 500  # plain exchanges before a crawl starts its fetch workers
FETCH_WORKERS_MIN_RATE = 1000.0  # exchanges/s from which auto starts them (one process: ~7,000)
# ... or the share of one core this process used over that window (page reads: ~600/s keep
# one process busy, far below the rate; a slow or polite site leaves it mostly idle)
FETCH_WORKERS_MIN_BUSY = 0.6
DEFAULT_PAGE_CAP = 512 * 1024  # --page-checks: bytes of a page read at most (its head)
DEFAULT_MAX_PAGES = 100_000  # --links: pages fetched beyond the listed ones
DEFAULT_DROPPED_MAX = 10_000  # --dropped-max: ledger URLs that left the sitemaps asked per run
DEFAULT_RENDER = 50  # --render alone: pages rendered per host at most
RENDER_ALL = 0  # --render all: every candidate
DEFAULT_RENDER_TABS = 2  # --render-tabs: pages rendered at once
MAX_RENDER_TABS = 16
DEFAULT_RENDER_TIMEOUT = 20.0  # --render-timeout: seconds until a page's load event
DEFAULT_SHARD_SIZE = 10_000  # fix --shard-size: URLs per sitemap file written
MAX_SHARD_SIZE = 50_000  # sitemaps.org: 50,000 URLs per file


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    rate: float = DEFAULT_RATE  # requests per second per host; 0 or inf = unlimited
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    user_agent: str = DEFAULT_USER_AGENT
    page_checks: bool = False
    page_cap: int = DEFAULT_PAGE_CAP  # bytes of a page read at most by --page-checks
    max_urls: int | None = None
    slow_ms: float = DEFAULT_SLOW_MS
    lastmod_tolerance_s: float = 0.0
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include_sitemap: tuple[str, ...] = ()
    exclude_sitemap: tuple[str, ...] = ()
    base_url: str | None = None
    retry_after_cap: float = RETRY_AFTER_CAP
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP
    max_redirects: int = MAX_REDIRECTS
    # --header: sent only to credential origins, like --auth (never into a report)
    extra_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    max_per_host: int | None = (
        DEFAULT_MAX_PER_HOST  # in-flight cap per politeness group; None = concurrency
    )
    # --politeness-key: what shares one rate and in-flight cap: each scheme://host:port
    # ("host"), every host on one address ("ip"), or of one registrable domain ("domain")
    politeness_key: str = "host"

    @property
    def per_host_cap(self) -> int:
        return max(1, self.max_per_host if self.max_per_host is not None else self.concurrency)

    stream_timeout: float | None = (
        None  # total deadline of one sitemap body; None = factor x timeout
    )
    # --rewrite FROM=TO: listed URLs on origin FROM are requested at origin TO
    rewrites: tuple[tuple[str, str], ...] = ()
    # Staging access. Credentials (auth, cookies, extra_headers) go only to these origins
    # (scheme://host[:port]); empty = only the origin a request chain starts at, never a
    # redirect's other host. repr=False: an echo of the config never shows a secret.
    auth: tuple[str, str] | None = field(default=None, repr=False)  # HTTP basic (user, password)
    cookies: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    credential_origins: tuple[str, ...] = ()
    insecure_hosts: tuple[str, ...] = ()
    # --allow-private: follow redirects from a public host to private, loopback and
    # link-local addresses (169.254.169.254 ...); off, they are reported, not followed
    allow_private: bool = False  # host names whose TLS certificate is not verified
    # --fetch-workers: processes that run plain HTTP exchanges on other cores (None: auto,
    # one per core up to 4, none on one core); they start after this many exchanges here
    fetch_workers: int | None = None
    fetch_workers_after: int = DEFAULT_FETCH_WORKERS_AFTER
    # auto only: and only while the last `fetch_workers_after` exchanges ran at this many a
    # second or more (a polite --rate never needs a second process)
    fetch_workers_min_rate: float = FETCH_WORKERS_MIN_RATE
    # auto only: or while this process was busy (CPU time over wall time) this share of the
    # window or more: the work per exchange (page parsing) made one core the bottleneck
    fetch_workers_min_busy: float = FETCH_WORKERS_MIN_BUSY
    # --robots-agent: the product token robots.txt groups and scoped noindex are matched
    # with; None = the one named in user_agent (core/agent.py robots_token)
    robots_agent: str | None = None
    # --online: a local sitemap file's index children not on disk are fetched (off:
    # validating a local file sends no request; a missing sibling is sitemap-not-found)
    online: bool = False
    # --agents: product tokens also judged from robots.txt and scoped noindex (presets
    # expanded by checks/agents.py parse_agents); no request is made for them
    agents: tuple[str, ...] = ()
    # --cluster: the URL checks on a Dask cluster, `local:N` or `tcp://HOST:PORT`
    # (audit/cluster); None = this process tree, exactly as without it
    cluster: str | None = None
    cluster_batch: int | None = None  # URLs per batch (None: 2 s of a host's rate)
    # what a resumed run (--state) takes over from a killed one: its tasks stop
    cluster_fence: str | None = None
    # --links: also crawl the audited origins' internal links (coverage); --max-pages bounds
    # the pages it fetches beyond the listed ones, --max-depth its hops from a seed
    links: bool = False
    max_pages: int = DEFAULT_MAX_PAGES
    max_depth: int | None = None
    # --intent FILE: what listed URLs (and the file's own exact URLs) must do (keep, redirect,
    # gone; audit/rules/intent.py); not part of a --state file's identity
    intent: str | None = None
    # --llms: also audit /llms.txt and /llms-full.txt of every audited origin, and check
    # llms.txt's links like listed URLs (contracts/agents.md)
    llms: bool = False
    # --agents-fetch N: N sampled listed URLs per host fetched again as each named agent
    # that has a User-Agent string (contracts/agents.md); None = off
    agents_fetch: int | None = None
    # --render [N|all]: render at most N candidates per host in headless Chromium and
    # compare them with their raw HTML (RENDER_ALL: every one; None: off); --render-tabs
    # pages at once, --render-timeout seconds until the load event, --browser the executable
    render: int | None = None
    render_tabs: int = DEFAULT_RENDER_TABS
    render_timeout: float = DEFAULT_RENDER_TIMEOUT
    browser: str | None = None

    def secrets(self) -> tuple[str, ...]:
        """The secret values of the config, longest first, for redacting reports: the
        password and basic token, cookie and extra header values. Values shorter than
        SECRET_MIN_CHARS are left out: redacting "1" or "yes" would garble every report."""
        import base64

        out: list[str] = []
        if self.auth is not None:
            user, password = self.auth
            out.append(password)
            out.append(base64.b64encode(f"{user}:{password}".encode()).decode("ascii"))
        out += map(itemgetter(1), self.cookies)  # every value (two cookies may share a name)
        out += [v for k, v in self.extra_headers if k.lower() != "user-agent"]
        found = {v for v in out if len(v) >= SECRET_MIN_CHARS}
        return tuple(sorted(found, key=len, reverse=True))


# --- options given by a library caller ----------------------------------------------------

NOTIFY_LEVELS = ("error", "warning", "info")  # --notify-on: the least severity that notifies

# the range of each option with one (a number's, or a word's): what the message says, and
# the test of a value
_POSITIVE = ("must be greater than 0", lambda v: v > 0)
_NOT_NEGATIVE = ("must be 0 or more", lambda v: v >= 0)
_AT_LEAST_0 = ("must be at least 0", lambda v: v >= 0)
_AT_LEAST_1 = ("must be at least 1", lambda v: v >= 1)
_RANGES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "rate": _AT_LEAST_0,
    "concurrency": _AT_LEAST_1,
    "timeout": _POSITIVE,
    "retries": _AT_LEAST_0,
    "page_cap": _AT_LEAST_1,
    "max_urls": _AT_LEAST_1,
    "slow_ms": _POSITIVE,
    "lastmod_tolerance_s": _NOT_NEGATIVE,
    "retry_after_cap": _NOT_NEGATIVE,
    "backoff_base": _NOT_NEGATIVE,
    "backoff_cap": _NOT_NEGATIVE,
    "max_redirects": _AT_LEAST_0,
    "max_per_host": _AT_LEAST_1,
    "stream_timeout": _POSITIVE,
    "fetch_workers": _AT_LEAST_0,
    "fetch_workers_after": _AT_LEAST_0,
    "cluster_batch": _AT_LEAST_1,
    "max_pages": _AT_LEAST_1,
    "max_depth": _AT_LEAST_0,
    # the run options of audit.front.options.RunOptions, checked by check_fields too
    "budget": _AT_LEAST_1,
    "dropped_max": _NOT_NEGATIVE,
    "notify_on": (f"one of {', '.join(NOTIFY_LEVELS)}", lambda v: v in NOTIFY_LEVELS),
}
_TEXTS = ("include", "exclude", "include_sitemap", "exclude_sitemap", "agents")
# the keywords a library caller may give: CrawlConfig's fields (as RUN_OPTIONS are RunOptions')
_OPTIONS = frozenset(f.name for f in fields(CrawlConfig))


def config_from_options(options: dict[str, Any]) -> CrawlConfig:
    """A CrawlConfig from a library caller's keywords, checked as the command line checks its
    flags: an unknown keyword is a TypeError naming it (and the nearest option), a value of
    the wrong type a TypeError, a value out of range a ValueError, each one line.
    `rate="unlimited"` (or "inf"), the command line's word, is no limit; a single string
    for a list option (`agents="ai"`) is that one item."""
    for key in options:
        if key not in _OPTIONS:
            near = get_close_matches(key, sorted(_OPTIONS), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise TypeError(
                f"{key!r} is not an audit option{hint}; options are CrawlConfig's fields"
            )
    given = dict(options)
    rate = given.get("rate")
    if isinstance(rate, str):
        word = rate.strip().lower()
        if word not in ("unlimited", "inf"):
            raise ValueError(
                f"rate: {rate!r} is neither a number of requests per second nor 'unlimited'"
            )
        given["rate"] = math.inf
    as_tuples(given, _TEXTS)
    return check_config(CrawlConfig(**given))


def as_tuples(given: dict[str, Any], keys: Iterable[str]) -> None:
    """A caller's list options (`keys` of `given`) as tuples, in place: a single string is
    that one item, a list its items."""
    for key in keys:
        value = given.get(key)
        if isinstance(value, str | list):
            given[key] = tuple([value] if isinstance(value, str) else value)


# what an option of each type must hold: (the test, what the message expects; None: a
# tuple of strings, which check_fields' caller names); an option of another type (pairs
# of strings) is not checked. A number is never a bool, nor NaN (_NUMBERS).
_HOLDS: dict[str, tuple[Callable[[Any], bool], str | None]] = {
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "tuple[str, ...]": (
        lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v),
        None,
    ),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "float": (lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number"),
}
_NUMBERS = frozenset({"int", "float"})
_ANYTHING: tuple[Callable[[Any], bool], str | None] = (lambda v: True, "")
_ANY_NUMBER = ("", lambda v: True)  # an option without a range


def check_config(config: CrawlConfig) -> CrawlConfig:
    """`config` when every numeric and switch option has a value of its type and range, else a
    one-line TypeError or ValueError naming the option."""
    check_fields(config)
    return config


def check_fields(options: Any, tuple_words: str = "a tuple of strings") -> None:
    """A one-line TypeError or ValueError naming the first field of the dataclass `options`
    whose value is not of its type (numbers: and range, _RANGES); `tuple_words` is what a
    message calls a tuple of strings."""
    for f in fields(options):
        value = getattr(options, f.name)
        kind = str(f.type)
        if value is None and kind.endswith("| None"):
            continue
        base = kind.removesuffix(" | None")
        holds, what = _HOLDS.get(base, _ANYTHING)
        if not holds(value):
            raise TypeError(
                f"{f.name}: expected {tuple_words if what is None else what}, got {value!r}"
            )
        if base in _NUMBERS and math.isnan(value):
            raise ValueError(f"{f.name}: not a number")
        words, within = _RANGES.get(f.name, _ANY_NUMBER)
        if not within(value):
            raise ValueError(f"{f.name}: {words}, got {value!r}")
