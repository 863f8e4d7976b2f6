"""The HTTP layer: one client session, per-host politeness, redirects by hand, retries.

Public API (knows nothing of sitemaps; see client.py for the design choices):

- `HttpClient(config)`: async context manager; `fetch(url, ...) -> FetchResult`,
  `stream(url)` -> async context manager yielding a `StreamResponse`, `host(url) -> Host`,
  `host_stats() -> list[HostStats]`; `fetch_page(url, sink, cap=...) -> FetchResult`: one
  GET whose body goes to a `BodySink` until it has enough (page checks).
- `Host`, `HostPool`, `HostStats`, `origin_of()`: per scheme://host:port politeness;
  `url_prefix()`: the scheme://netloc text of a URL, a cheap memo key for per-origin state.
- `should_retry()`, `backoff_delay()`, `parse_retry_after()`: the retry policy (retry.py),
  one predicate for every request.
- Fetch workers (workers.py, fetchworker.py): processes that run a crawl's plain exchanges
  (`exchange.exchange()`), and read pages into remote body sinks (`exchange.RemoteSink`),
  on other cores; `HttpClient` starts them itself (config.fetch_workers).

Inside, one way: client -> {asagent, opened} -> {chain, credentials, dispatch} ->
workers -> exchange -> retry -> hosts; fetchworker -> exchange.
"""

from audit.http.client import BODY_EXCERPT, HttpClient, StreamResponse
from audit.http.exchange import BodySink
from audit.http.hosts import MIN_RATE, Host, HostPool, HostStats, origin_of, url_prefix
from audit.http.retry import backoff_delay, parse_retry_after, should_retry

__all__ = [
    "BODY_EXCERPT",
    "MIN_RATE",
    "BodySink",
    "Host",
    "HostPool",
    "HostStats",
    "HttpClient",
    "StreamResponse",
    "backoff_delay",
    "origin_of",
    "parse_retry_after",
    "should_retry",
    "url_prefix",
]
