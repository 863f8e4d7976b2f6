"""Requests that leave the audit (IndexNow): one JSON POST with its own retry loop, and
one small GET that follows no redirect (a key file).

`post_json(url, body, ...)` sends `body` (already encoded) with
`Content-Type: application/json; charset=utf-8` and returns a `PostResult`, never
raising for a failed request. A 429, a 5xx, a timeout or a failed connection is tried
again up to `retries` times; the wait is the answer's `Retry-After` (seconds or an HTTP
date) when it gives one, else the crawl's backoff. A `Retry-After` longer than
`max_retry_after` is not waited for: the POST ends at once with that answer. Any other
4xx is final at once (a refusal is not transient; 408 too).

A session of its own, without the crawl's credentials, cookies or per-host limiter: the
endpoint is not a site under audit. Knows nothing of what is posted.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from audit.core.errors import translate_exception
from audit.http.retry import backoff_delay, parse_retry_after, unavailable

__all__ = ["PostResult", "get_text", "post_json"]


@dataclass(frozen=True, slots=True)
class PostResult:
    status: int | None  # the last answer's status; None when nothing answered
    attempts: int  # requests sent, retries included
    error: str | None = None  # the last failure without an answer, one line
    gave_up: str | None = None  # why a retryable answer was not retried (Retry-After too long)


async def post_json(
    url: str,
    body: bytes,
    *,
    user_agent: str,
    timeout: float,
    retries: int,
    backoff_base: float,
    backoff_cap: float,
    max_retry_after: float,
) -> PostResult:
    import aiohttp

    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": user_agent}
    attempts = 0
    status: int | None = None
    error: str | None = None
    async with aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=timeout), cookie_jar=aiohttp.DummyCookieJar()
    ) as session:
        for retry in range(retries + 1):
            attempts += 1
            retry_after: str | None = None
            try:
                async with session.post(
                    url, data=body, headers=headers, allow_redirects=False
                ) as resp:
                    status, error = resp.status, None
                    retry_after = resp.headers.get("Retry-After")
                    await resp.read()
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                # no answer: no Retry-After either (even one read before the body broke off)
                status, error, retry_after = None, str(translate_exception(exc, url)), None
            if not unavailable(status) or retry == retries:  # other answers are final
                break
            wait = parse_retry_after(retry_after)  # None without the header
            if wait is None:
                wait = backoff_delay(retry, backoff_base, backoff_cap)
            elif wait > max_retry_after:
                return PostResult(
                    status,
                    attempts,
                    error,
                    f"Retry-After {wait:.0f} s is longer than --max-retry-after "
                    f"{max_retry_after:.0f} s",
                )
            await asyncio.sleep(wait)
    return PostResult(status, attempts, error)


async def get_text(
    url: str, *, user_agent: str, timeout: float, limit: int
) -> tuple[int | None, str | None, str | None]:
    """One GET, redirects not followed: (status, the first `limit` bytes of the body as
    text, the failure without an answer). Never raises for a failed request."""
    import aiohttp

    try:
        async with (
            aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=timeout),
                cookie_jar=aiohttp.DummyCookieJar(),
            ) as session,
            session.get(url, headers={"User-Agent": user_agent}, allow_redirects=False) as resp,
        ):
            data = await resp.content.read(limit)
            return resp.status, data.decode("utf-8", "replace"), None
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return None, None, str(translate_exception(exc, url))
