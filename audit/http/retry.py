"""The retry policy: one predicate for every request, backoff, Retry-After (STYLE lesson 6).

`should_retry()` is the one predicate: a plain check, a page-check GET and a sitemap stream
are retried for the same statuses and the same network failures. `after_status()` and
`after_error()` turn an attempt's outcome into what the client's one retry loop does next
(`DONE`, `BACKOFF`, `AGAIN`); a 429/503's Retry-After defers the whole host (`after_status`),
unless it asks for longer than --max-retry-after: then the URL's answer is final at once and
the host is not deferred (one URL asking for an hour must not stall the run).

Imports the standard library, audit.core.records and audit.http.hosts only (no aiohttp).
"""

from __future__ import annotations

import email.utils
import random
from datetime import UTC, datetime
from typing import Final

from audit.core.records import header_value
from audit.http.hosts import Host

__all__ = [
    "AGAIN",
    "BACKOFF",
    "DONE",
    "RETRY_ERROR_KINDS",
    "RETRY_STATUSES",
    "after_error",
    "after_status",
    "backoff_delay",
    "parse_retry_after",
    "should_retry",
    "unavailable",
]

# 408 request timeout, 429 too many requests, 500/502/503/504 transient server trouble
RETRY_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})
# DNS and TLS failures do not heal in seconds; a refused or reset connection may
RETRY_ERROR_KINDS: Final = frozenset({"timeout", "connect", "reset"})
# the statuses whose Retry-After is a signal for the whole host
DEFER_STATUSES: Final = frozenset({429, 503})

# What an attempt asks of the retry loop (plain ints: this is decided once per request)
DONE: Final = 0  # the answer or the failure is final
BACKOFF: Final = 1  # try again after an exponential backoff
AGAIN: Final = 2  # try again at once: a Retry-After already deferred the host


def should_retry(status: int | None, error_kind: str | None) -> bool:
    """The one retry predicate: transient statuses and transient network failures."""
    if error_kind is not None:
        return error_kind in RETRY_ERROR_KINDS
    return status in RETRY_STATUSES  # (None is no status of it)


def unavailable(status: int | None) -> bool:
    """No answer, a 429 or a 5xx: the server cannot answer now. A robots.txt read so is
    unreachable (RULES.md: disallow all), and IndexNow's POST tries again (post.py); any
    other answer is final (a 408 too)."""
    return status is None or status == 429 or status >= 500


def backoff_delay(retry: int, base: float, cap: float, rand: float | None = None) -> float:
    """Exponential backoff with jitter for the `retry`-th retry (0-based): in [d/2, d],
    d = min(cap, base * 2**retry)."""
    ceiling = min(cap, base * (2.0**retry))
    r = random.random() if rand is None else rand
    return max(0.0, ceiling / 2 + r * ceiling / 2)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After value (delay-seconds or HTTP date); None if unusable.

    A date in the past means "now" (0.0). The cap is applied by the host, not here.
    """
    value = (value or "").strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):  # an empty value too
        return None
    if when.tzinfo is None:  # asctime and RFC 850 forms carry no zone: HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def after_status(
    host: Host, status: int, headers: tuple[tuple[str, str], ...], retryable: bool
) -> int:
    """What an answer's status asks of the retry loop. The host counts every status and
    takes a Retry-After; a retry status is retried only when the attempt is `retryable`
    (retries left, status retries wanted), at once if the host was deferred."""
    deferred = False
    if status in DEFER_STATUSES:
        delay = parse_retry_after(header_value(headers, "retry-after"))
        if delay is not None:
            if host.over_cap(delay):
                host.record_status(status)
                return DONE  # reported at once; the host's other URLs go on
            host.defer(delay)  # a host-wide signal: every request to the host waits
            deferred = True
    host.record_status(status, deferred=deferred)  # a deferred 429 does not halve the rate
    if retryable and should_retry(status, None):
        return AGAIN if deferred else BACKOFF
    return DONE


def after_error(error_kind: str) -> int:
    """What a failed attempt asks of the retry loop: a transient failure backs off."""
    return BACKOFF if should_retry(None, error_kind) else DONE
