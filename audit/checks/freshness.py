"""`<lastmod>` against `Last-Modified` (RULES.md lastmod-stale, lastmod-ahead,
last-modified-dynamic), as a value.

Compared at the precision the sitemap gives (a date-only lastmod is that UTC day), widened
by the tolerance option; a Last-Modified within two seconds of the answer's `Date` (or of
now) is the time of the request and cannot be compared. `Lastmod` names the outcome and
says which outcomes a host's deploy stamp may explain (audit.pipeline.deploy).

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import lru_cache

from audit.core.records import Finding
from audit.rules.dates import W3CDate, parse_http_date, parse_w3c_datetime

__all__ = ["Add", "Lastmod", "lastmod_findings"]

Add = Callable[[str, str], Finding]  # makes a finding of the URL (code, message), keeps it
_DYNAMIC_WINDOW = timedelta(seconds=2)
_DYNAMIC_BEFORE = -_DYNAMIC_WINDOW


class Lastmod(StrEnum):
    """`<lastmod>` against the answer's `Last-Modified`, as a value."""

    NONE = "none"  # not compared: no lastmod or Last-Modified, invalid, redirected, no 2xx
    EQUAL = "equal"  # Last-Modified within the lastmod's span (and the tolerance)
    STALE = "stale"  # Last-Modified later: the sitemap is behind (lastmod-stale)
    AHEAD = "ahead"  # lastmod later: the sitemap claims a change (lastmod-ahead)
    DYNAMIC = "dynamic"  # Last-Modified is the time of the request (last-modified-dynamic)

    @property
    def deploy_may_explain(self) -> bool:
        """A comparison a host's deploy stamp explains (RULES.md last-modified-deploy):
        a build time read as the content's, or one that happens to be the request's."""
        return self in _DEPLOY_EXPLAINS


_DEPLOY_EXPLAINS = frozenset({Lastmod.STALE, Lastmod.AHEAD, Lastmod.DYNAMIC})


# Most answers of a run repeat a few Last-Modified and Date values and most sitemaps a few
# lastmod values: parse each once (the results are immutable).
@lru_cache(maxsize=4096)
def _lastmod_window(text: str, tolerance_s: float) -> tuple[W3CDate, datetime, datetime] | None:
    """The lastmod's span and the [start, end) a Last-Modified may fall in, or None if invalid."""
    try:
        span = parse_w3c_datetime(text.strip())
    except ValueError:
        return None  # reported as lastmod-invalid by the validator
    tolerance = timedelta(seconds=tolerance_s)
    # HTTP dates have whole seconds: a fractional lastmod must not read as ahead.
    return span, span.start.replace(microsecond=0) - tolerance, span.end + tolerance


_http_date = lru_cache(maxsize=1024)(parse_http_date)


@lru_cache(maxsize=1024)
def _utc_text(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def lastmod_findings(
    header: str,
    date_header: str | None,
    lastmod: str,
    tolerance_s: float,
    now: datetime | None,
    add: Add,
) -> tuple[Lastmod, Finding | None]:
    """`<lastmod>` against the answer's `Last-Modified` (`header`; `date_header` its
    `Date`) as a value, and the finding `add` made when it calls for one."""
    window = _lastmod_window(lastmod, tolerance_s)
    if window is None:
        return _NOT_COMPARED
    span, start, end = window
    modified = _http_date(header)
    if modified is None:
        return _NOT_COMPARED
    served = _http_date(date_header) if date_header else None
    if now is None:
        now = datetime.now(UTC)
    # chained comparisons: abs() of a negative timedelta allocates one more
    if (served is not None and _DYNAMIC_BEFORE <= modified - served <= _DYNAMIC_WINDOW) or (
        _DYNAMIC_BEFORE <= modified - now <= _DYNAMIC_WINDOW
    ):
        said = add(
            "last-modified-dynamic",
            f"Last-Modified ({header}) is the time of the request, so <lastmod> {lastmod} "
            "cannot be checked against it; send the content's real modification time",
        )
        return Lastmod.DYNAMIC, said
    if not start <= modified < end:
        return _lastmod_mismatch(modified, span, end, lastmod, add)
    return _EQUAL


_NOT_COMPARED: tuple[Lastmod, Finding | None] = (Lastmod.NONE, None)
_EQUAL: tuple[Lastmod, Finding | None] = (Lastmod.EQUAL, None)


def _lastmod_mismatch(
    modified: datetime, span: W3CDate, end: datetime, lastmod: str, add: Add
) -> tuple[Lastmod, Finding]:
    """Last-Modified outside the lastmod's window: after it (stale) or before it (ahead)."""
    shown = _utc_text(modified)
    if modified >= end:
        return Lastmod.STALE, add(
            "lastmod-stale",
            f"Last-Modified {shown} is later than <lastmod> {lastmod} ({span.precision} "
            "precision): the sitemap under-reports changes; update <lastmod> to the page's "
            "last change",
        )
    return Lastmod.AHEAD, add(
        "lastmod-ahead",
        f"<lastmod> {lastmod} is later than Last-Modified {shown}: the sitemap claims a "
        "change the server does not show; set <lastmod> to the real last change "
        "(or fix the server's Last-Modified)",
    )
