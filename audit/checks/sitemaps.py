"""Verdicts on how a sitemap (and its host's robots.txt) answered.

RULES.md "Discovery and fetching sitemaps": each function judges one fact the
pipeline observed (a status, a redirect chain, a content type, a broken body,
an index inside an index, a robots.txt that could not be read) and returns the
finding's code and message; the pipeline only places it (which sitemap, which
line). Pure: no I/O, no HTTP types.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from audit.core.records import Hop

__all__ = [
    "Verdict",
    "content_type_ok",
    "index_loop",
    "index_nested",
    "robots_unreachable",
    "robots_verdict",
    "sitemap_answer",
    "sitemap_broke_off",
    "sitemap_content_type",
    "sitemap_redirected",
    "sitemap_robots_blocked",
    "sitemap_unreadable",
]

Verdict = tuple[str, str]  # (code, message)

# Content types a sitemap may be served as (RULES.md sitemap-content-type).
_OK_TYPES = re.compile(
    r"^(?:text/(?:xml|plain)|application/(?:xml|(?:[\w.+-]+\+xml)|x-gzip|gzip|x-gunzip|gzip-compressed))$"
)


def content_type_ok(ctype: str) -> bool:
    """Is this (lower-cased, parameter-free) Content-Type one a sitemap may have?"""
    return bool(_OK_TYPES.match(ctype))


def sitemap_content_type(ctype: str) -> Verdict:
    return (
        "sitemap-content-type",
        f"served as {ctype or 'no Content-Type'}; serve sitemaps as "
        "application/xml, text/xml, text/plain or application/gzip",
    )


def sitemap_robots_blocked(agent_token: str) -> Verdict:
    return (
        "sitemap-robots-blocked",
        f"robots.txt disallows this sitemap for {agent_token}: search engines will "
        "not read it; allow it in robots.txt",
    )


def sitemap_redirected(redirects: Sequence[Hop], final_url: str) -> Verdict:
    chain = " -> ".join(f"{h.url} ({h.status})" for h in redirects)
    return (
        "sitemap-redirected",
        f"the sitemap redirects: {chain} -> {final_url}; list the final URL",
    )


def sitemap_answer(status: int | None, error: str | None) -> Verdict | None:
    """The finding for a sitemap's final answer; None when it answered 2xx."""
    if status is None:
        return "sitemap-http-error", f"the sitemap could not be fetched: {error}"
    if status in (404, 410):
        return (
            "sitemap-not-found",
            f"the sitemap answers {status}; publish it or remove the reference to it",
        )
    if not 200 <= status < 300:
        return "sitemap-http-error", f"the sitemap answers HTTP {status}; it must answer 200"
    return None


def sitemap_broke_off(compressed_bytes: int, error: str) -> Verdict:
    return (
        "sitemap-http-error",
        f"the sitemap body broke off after {compressed_bytes} bytes: {error}; "
        "entries read before it were kept",
    )


def sitemap_unreadable(error: str) -> Verdict:
    return "sitemap-http-error", f"{error}; the sitemap could not be read"


def index_nested() -> Verdict:
    return (
        "index-nested",
        "a sitemap index lists another sitemap index; search engines do not follow "
        "nested indexes: list its children in the top index",
    )


def index_loop() -> Verdict:
    return (
        "index-loop",
        "this sitemap is reached again through its own descendants; remove the "
        "reference that closes the loop",
    )


def robots_verdict(status: str, error: str | None, http_status: int | None) -> Verdict | None:
    """robots.txt of a host as read (RFC 9309 §2.3.1): missing, or fine. An unreachable
    robots.txt is judged at the end of the run (`robots_unreachable`), with its count."""
    if status == "missing":
        return "robots-missing", f"robots.txt answers {http_status}: everything is allowed"
    return None


def robots_unreachable(cause: str, held: int) -> Verdict:
    """RULES.md robots-unreachable: one finding per host, with the URLs it held back."""
    urls = "1 listed URL was" if held == 1 else f"{held} listed URLs were"
    return (
        "robots-unreachable",
        f"robots.txt could not be read ({cause}); search engines treat the whole host as "
        f"disallowed until it answers, so {urls} not checked: make robots.txt answer 200 "
        "(or 404 if there is none)",
    )
