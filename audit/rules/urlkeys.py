"""loc-duplicate: each entry's normalised URL against a table of those seen before.

A `<url>` is looked up in the run's table (`SeenUrls`, shared by every sitemap of the
audit), an index's `<sitemap>` in the index's own; a news listing only against the
other news listings of its sitemap (RULES.md loc-duplicate).

    keys = UrlKeys(source, seen=run_table_or_None, seen_sitemaps=table_or_None)
    keys.check_all(entries, locs, norms, outs)   # a batch: findings into outs[i]
    keys.check(entry, is_url, loc, norm, out) -> out (or a new list when it reports)
"""

from __future__ import annotations

from collections.abc import Sequence

from audit.core.records import Entry, Finding
from audit.rules.findings import add, show, writable
from audit.rules.fingerprints import SeenUrls

__all__ = ["UrlKeys"]


class UrlKeys:
    """The duplicate tables of one sitemap; `src_url` is its source id in the run's."""

    __slots__ = ("_news_locs", "_tables", "seen", "seen_sitemaps", "source", "src_url")

    def __init__(
        self, source: str, *, seen: SeenUrls | None, seen_sitemaps: SeenUrls | None
    ) -> None:
        self.source = source
        self.seen = seen
        self.seen_sitemaps = seen_sitemaps if seen_sitemaps is not None else SeenUrls()
        self.src_url = seen.source_id(source) if seen is not None else 0
        # by `is_url`: the table an entry is looked up in, and this sitemap's id in it
        self._tables = {
            True: (seen, self.src_url),
            False: (self.seen_sitemaps, self.seen_sitemaps.source_id(source)),
        }
        self._news_locs: set[str] = set()  # normalised news listings of this sitemap

    def check_all(
        self,
        entries: Sequence[Entry],
        locs: Sequence[str | None],
        norms: Sequence[str | None],
        outs: list[list[Finding]],
    ) -> None:
        """loc-duplicate for each entry of a batch with a usable URL (`norms[i]`), in order.

        The common entry, a <url> without <news:news>, goes into the run's table with the
        batch's others in one pass (SeenUrls.add_all); a news listing and an index's
        <sitemap> go through check() one by one. The two never share a table, so the
        order within each table is the entries' order.
        """
        listed = [
            norm if entry.kind == "url" and entry.news is None else None
            for entry, norm in zip(entries, norms, strict=True)
        ]
        seen = self.seen
        if seen is not None:
            for i, norm, first in seen.add_all(listed, self.src_url):
                outs[i] = out = writable(outs[i])
                self.report(entries[i], seen, first, locs[i] or norm, norm, out)
        if listed != norms:  # a news listing or an index's <sitemap> among them
            for i, key in enumerate(norms):
                if key is not None and listed[i] is None:
                    entry = entries[i]
                    outs[i] = self.check(entry, entry.kind == "url", locs[i], key, outs[i])

    def check(
        self, entry: Entry, is_url: bool, loc: str | None, norm: str, out: list[Finding]
    ) -> list[Finding]:
        """loc-duplicate: a <url> against the run's table, a <sitemap> against the index's."""
        shown = loc or norm
        if entry.news is not None:
            # A news listing (a <url> with <news:news>) is never a duplicate of a listing in
            # another sitemap, and never makes one (RULES.md loc-duplicate: Google News asks
            # for a separate news sitemap whose articles may also stand in the regular
            # ones). Listed twice in the same news sitemap, it is one.
            if norm not in self._news_locs:
                self._news_locs.add(norm)  # at most 1,000 news URLs per sitemap
                return out
            out = writable(out)
            self._add_duplicate(entry, "earlier in this sitemap", shown, norm, out)
            return out
        table, source_id = self._tables[is_url]
        if table is None:
            return out
        again = table.add_all((norm,), source_id)
        if not again:
            return out
        out = writable(out)
        self.report(entry, table, again[0][2], shown, norm, out)
        return out

    def report(
        self, entry: Entry, table: SeenUrls, first: int, loc: str, norm: str, out: list[Finding]
    ) -> None:
        """loc-duplicate for an entry `table` saw first at source id `first`."""
        where = table.source_name(first)
        if where == self.source:
            place = "earlier in this sitemap"
        elif where is not None:
            place = f"already in {show(where)}"
        else:
            place = "already, in a sitemap of this audit"
        self._add_duplicate(entry, place, loc, norm, out)

    def _add_duplicate(
        self, entry: Entry, place: str, loc: str, norm: str, out: list[Finding]
    ) -> None:
        same = "" if norm == loc else f" (normalised: {show(norm)})"
        add(
            out,
            self.source,
            "loc-duplicate",
            f"{show(loc)}{same} is listed again; it was listed {place}: keep one entry",
            entry.line,
            loc,
        )
