"""One URL's answer and its redirect chain, as values: what the client's send path fills in.

`Answer` is a URL's final answer after retries, `Chain` the end of a redirect chain (its
hops, attempts and error), `fetch_result()` the `FetchResult` a checked URL's chain makes
(`answer_result()` builds it, called directly when the first answer is final).
The redirect rules of the client's loop (client.py `_follow`, STYLE lesson 7) are here
too: `next_location()` resolves a `Location`, `next_hop()` says where a redirect goes or
why it is not followed (no usable Location, a loop, too many hops, a public host pointing
into a private network), `loop_key()` is the form hops are compared in.

Imports audit.core, audit.http.{addresses, exchange, hosts, retry} only; no aiohttp at
run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from audit.core.errors import FetchError
from audit.core.records import FetchResult, Hop, header_value
from audit.http.addresses import redirect_to_private
from audit.http.exchange import Exchange
from audit.http.hosts import Host
from audit.http.retry import DONE, after_error, after_status

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "Answer",
    "Chain",
    "answer_result",
    "fetch_result",
    "loop_key",
    "next_hop",
    "next_location",
    "private_error",
    "take_exchange",
]


def loop_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path or '/'}?{parts.query}"


def next_location(current: str, location: str | None) -> str | FetchError:
    """Resolve a Location header against the current URL, or say why it cannot be followed."""
    if location is None or not location.strip():
        return FetchError(
            f"{current} redirects without a Location header", kind="redirect-invalid", url=current
        )
    location = location.strip()
    try:
        target = urljoin(current, location)
        parts = urlsplit(target)
        # never empty: urljoin keeps the current URL's scheme (a requested http(s) URL's)
        # unless the Location names its own
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            return FetchError(
                f"{current} redirects to a {scheme}: URL ({location[:200]}); not followed",
                kind="redirect-scheme",
                url=current,
            )
        if not parts.hostname:
            raise ValueError("no host")
        _ = parts.port  # ValueError for a bad port
    except ValueError:
        return FetchError(
            f"{current} redirects to an invalid Location: {location[:200]!r}",
            kind="redirect-invalid",
            url=current,
        )
    return target


def private_error(url: str) -> FetchError:
    """A URL on a private address that a public target lists or declares: not requested."""
    return FetchError(
        f"{url[:200]} is on a private, loopback or link-local address and the target is "
        "public; not requested (--allow-private requests it)",
        kind="redirect-private",
        url=url,
    )


def take_exchange(answer: Answer, host: Host, outcome: Exchange, retryable: bool) -> int:
    """Put a plain exchange's outcome into `answer`; what it asks of the retry loop."""
    status, headers, body, message, kind, answer.elapsed_ms = outcome
    if kind is not None:
        answer.error = FetchError(message, kind=kind, url=answer.url)
        return after_error(kind)
    assert status is not None
    step = after_status(host, status, headers, retryable)
    if step == DONE:  # a retried answer was discarded: it is nobody's answer
        answer.status, answer.headers, answer.body = status, headers, body
    return step


def answer_result(
    url: str,
    method: str,
    final: Answer,
    redirects: tuple[Hop, ...],
    error: FetchError | None,
    attempts: int,
) -> FetchResult:
    """The FetchResult of a checked URL: its final answer, the hops before it, the error
    and the attempts (the answer's own when its first answer is final: most URLs)."""
    # positional, in FetchResult's field order: this runs once per checked URL
    return FetchResult(
        url,
        final.url,
        final.status,
        final.headers,
        redirects,
        final.elapsed_ms,
        method,
        None if error is None else str(error),
        None if error is None else error.kind,
        final.body,
        attempts,
    )


def fetch_result(url: str, method: str, chain: Chain) -> FetchResult:
    """The FetchResult of a checked URL's redirect chain."""
    hops = tuple(chain.redirects)
    return answer_result(url, method, chain.final, hops, chain.error, chain.attempts)


@dataclass(slots=True)
class Answer:
    """One URL's final answer after retries (internal). A failed one (`error`) has no
    `status`: every attempt starts without one, and a failure sets none."""

    url: str
    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    error: FetchError | None = None
    attempts: int = 0
    elapsed_ms: float = 0.0
    resp: aiohttp.ClientResponse | None = None  # still open: only for streams


@dataclass(slots=True)
class Chain:
    """The end of a redirect chain (internal)."""

    final: Answer
    redirects: list[Hop] = field(default_factory=list)
    attempts: int = 0
    error: FetchError | None = None


def next_hop(
    url: str,
    current: str,
    headers: tuple[tuple[str, str], ...],
    chain: Chain,
    max_redirects: int,
    *,
    allow_private: bool,
) -> str | FetchError:
    """Where the redirect from `current` (the chain's last hop) goes, or why it is not
    followed: no usable Location, a loop (a URL among the chain's hops, compared by
    `loop_key`), too many hops, or a public host pointing into a private network (unless
    `allow_private`)."""
    target = next_location(current, header_value(headers, "location"))
    if isinstance(target, FetchError):
        return target
    if loop_key(target) in {loop_key(hop.url) for hop in chain.redirects}:
        return FetchError(
            f"redirect loop: {target} was already visited", kind="redirect-loop", url=url
        )
    if len(chain.redirects) > max_redirects:
        return FetchError(
            f"more than {max_redirects} redirects from {url}", kind="redirect-limit", url=url
        )
    if not allow_private and redirect_to_private(url, target):
        # a public host must not steer us into our own network (cloud metadata,
        # admin ports); a chain that starts there is the user's choice
        return FetchError(
            f"{current} redirects to a private, loopback or link-local address "
            f"({target[:200]}); not followed (--allow-private follows it)",
            kind="redirect-private",
            url=current,
        )
    return target
