"""The <loc> of an entry (RULES.md "Entries"): its syntax (audit.rules.urls.check_loc),
and where it points against the sitemap's own URL (loc-cross-host, loc-outside-path).

    locs = LocCheck(source, sitemap_url=url_or_None, cross_submitted=fn_or_None)
    locs.locate(entries, outs) -> (locs, norms) # a batch: each <loc> as shown, normalised
    locs.plain(raw) -> truthy                   # the fast path: valid, in scope, normalised
    locs.check(entry, out) -> (loc, norm)       # the full checks, findings appended to out

What a `<loc>` is good for travels with the findings as a value, so the pipeline never
matches finding codes: an entry whose `<loc>` took the full checks gets its findings in
a `LocFindings`, whose `use` says whether the URL can be requested as a page and read as
a child sitemap, and `why` names the finding that says why not (`loc_use(found)`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from audit.core.records import Entry, Finding
from audit.rules.findings import XML_SPACE, add, show
from audit.rules.urls import LocScope, check_loc, normalize_url, origin

__all__ = ["LocCheck", "LocFindings", "LocUse", "loc_use"]


class LocUse(Enum):
    """What a `<loc>` can be used for."""

    URL = "url"  # an http(s) URL: requested as a page, read as a child sitemap
    NO_PAGE = "no-page"  # over the length limit: read as a child, never requested as a page
    NONE = "none"  # missing, relative or not http(s): nothing to request or read


# what a <loc> problem leaves of its use (the other problems leave it whole)
_LEAVES = {
    "loc-too-long": LocUse.NO_PAGE,
    "loc-missing": LocUse.NONE,
    "loc-relative": LocUse.NONE,
    "loc-invalid": LocUse.NONE,
}


class LocFindings(list[Finding]):
    """The findings of an entry whose `<loc>` took the full checks, with what the `<loc>`
    can be used for (`use`) and the code of the first finding that limits it (`why`)."""

    __slots__ = ("use", "why")

    def __init__(self) -> None:
        super().__init__()
        self.use = LocUse.URL
        self.why = ""


def loc_use(found: list[Finding]) -> tuple[LocUse, str]:
    """What the `<loc>` of an entry with these findings (the validator's) can be used for,
    and the code of the finding that says why not ("" for a URL): a `<loc>` that passed
    the fast path, or whose findings say nothing of it, is a URL."""
    if isinstance(found, LocFindings):
        return found.use, found.why
    return LocUse.URL, ""


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
        # no sitemap URL: a scope without an origin, which puts every URL in it
        self.scope = LocScope(sitemap_url or "")
        # The <loc> fast path: a plain URL (in scope) is valid and already normalised.
        self.plain: Callable[[str], object] = self.scope.is_plain

    def locate(
        self, entries: Sequence[Entry], outs: list[list[Finding]]
    ) -> tuple[list[str | None], list[str | None]]:
        """The <loc> of each entry of a batch as findings show it and normalised (None: no
        usable URL). A plain <loc> (one C call, `plain`) is both as written; any other
        takes the full checks, whose findings become `outs[i]` (a LocFindings)."""
        locs = [entry.loc for entry in entries]
        norms = locs.copy()
        plain = self.plain
        for i, raw in enumerate(locs):
            if raw is None or not plain(raw):
                found = LocFindings()
                locs[i], norms[i] = self.check(entries[i], found)
                if found:
                    outs[i] = found
        return locs, norms

    def check(self, entry: Entry, out: LocFindings) -> tuple[str | None, str | None]:
        """Full <loc> checks; returns (loc as stripped, normalised URL or None if unusable).
        `out` is also told what the <loc> can be used for."""
        raw, line = entry.loc, entry.line
        loc = raw.strip(XML_SPACE) if raw is not None else ""
        url = loc or None
        for code, message in check_loc(raw):
            add(out, self.source, code, message, line, url)
            leaves = _LEAVES.get(code)
            if leaves is not None:
                if not out.why:
                    out.why = code
                if out.use is not LocUse.NONE:
                    out.use = leaves
        if origin(loc) is None:  # also for "": not an http(s) URL with a host
            return url, None  # nothing to compare
        norm = normalize_url(loc)
        scope = self.scope
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
                f"<loc> {show(loc)} is outside {show(scope.prefix)}, the "
                "directory of the sitemap: move the sitemap up to the site root or list the URL "
                "in a sitemap in its directory",
                line,
                loc,
            )
        return loc, norm
