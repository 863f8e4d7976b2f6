"""The <loc> of an entry (RULES.md "Entries"): its syntax (audit.rules.urls.check_loc),
and where it points against the sitemap's own URL (loc-cross-host, loc-outside-path).

    locs = LocCheck(source, sitemap_url=url_or_None, cross_submitted=fn_or_None)
    locs.plain(raw) -> truthy                   # the fast path: valid, in scope, normalised
    locs.check(entry, out) -> (loc, norm)       # the full checks, findings appended to out
"""

from __future__ import annotations

from collections.abc import Callable

from audit.core.records import Entry, Finding
from audit.rules.findings import XML_SPACE, add, show
from audit.rules.urls import LocScope, check_loc, is_plain_url, normalize_url, origin

__all__ = ["LocCheck"]


class LocCheck:
    """The <loc> checks of one sitemap. `sitemap_url` (None for a local file without a
    public URL) enables loc-cross-host and loc-outside-path; `cross_submitted(loc)` True
    lets a URL on another host pass (its robots.txt lists this sitemap)."""

    __slots__ = ("cross_submitted", "plain", "scope", "source")

    def __init__(
        self,
        source: str,
        *,
        sitemap_url: str | None,
        cross_submitted: Callable[[str], bool] | None,
    ) -> None:
        self.source = source
        self.cross_submitted = cross_submitted
        self.scope = LocScope(sitemap_url) if sitemap_url else None
        # The <loc> fast path: a plain URL (in scope, with a sitemap URL) is valid and
        # already normalised.
        self.plain: Callable[[str], object] = (
            self.scope.is_plain if self.scope is not None else is_plain_url
        )

    def check(self, entry: Entry, out: list[Finding]) -> tuple[str | None, str | None]:
        """Full <loc> checks; returns (loc as stripped, normalised URL or None if unusable)."""
        raw, line = entry.loc, entry.line
        loc = raw.strip(XML_SPACE) if raw is not None else ""
        url = loc or None
        for code, message in check_loc(raw):
            add(out, self.source, code, message, line, url)
        if origin(loc) is None:  # also for "": not an http(s) URL with a host
            return url, None  # nothing to compare
        norm = normalize_url(loc)
        scope = self.scope
        if scope is None:
            return loc, norm
        scope_code = scope.classify(loc, norm)
        # loc-cross-host, unless the other host's robots.txt submits this sitemap
        if scope_code == "loc-cross-host" and (
            self.cross_submitted is None or not self.cross_submitted(loc)
        ):
            add(
                out,
                self.source,
                "loc-cross-host",
                f"<loc> {show(loc)} is on another host, scheme or port than the "
                f"sitemap {show(scope.sitemap_url)}: list it in a sitemap on "
                "its own host, or declare this sitemap in that host's robots.txt",
                line,
                loc,
            )
        elif scope_code == "loc-outside-path":
            add(
                out,
                self.source,
                "loc-outside-path",
                f"<loc> {show(loc)} is outside {show(scope.prefix or '')}, the "
                "directory of the sitemap: move the sitemap up to the site root or list the URL "
                "in a sitemap in its directory",
                line,
                loc,
            )
        return loc, norm
