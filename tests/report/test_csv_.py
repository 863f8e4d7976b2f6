"""The csv report (audit/report/csv_.py): one row per URL with its codes, a bounded
window of rows, the BOM, late findings."""

from __future__ import annotations

import io

from audit.report import (
    make_writer,
)
from tests.report.reportkit import (
    COMMA_QUOTE,
    FORMULA,
    JS_URL,
    OLD,
    PAGES,
    ROBOTS,
    URL_RECORDS,
    find,
    read_csv,
    run,
    stream,
    url_rec,
)


def test_csv_has_one_row_per_url_with_codes_joined_from_findings() -> None:
    rows = read_csv(run("csv", stream()))
    by_url = {r["url"]: r for r in rows}
    # + three entries never fetched (two invalid, one a 404 child sitemap of the
    # index); robots.txt is listed by no sitemap, so it is no row
    assert len(rows) == len(by_url) == URL_RECORDS + 3
    assert ROBOTS not in by_url
    assert by_url[OLD]["codes"] == "sitemap-not-found"
    # a comma and a quote survive the round trip, and the entry finding that
    # came before the url record is joined to it
    row = by_url[COMMA_QUOTE]
    assert (row["status"], row["worst_severity"], row["codes"]) == (
        "200",
        "warning",
        "loc-duplicate",
    )
    assert by_url["https://ex.com/missing"]["codes"] == "url-not-found"
    assert by_url["https://ex.com/missing"]["worst_severity"] == "error"
    chain = by_url["https://ex.com/chain"]
    assert chain["redirect_hops"] == "2"
    assert chain["codes"] == "url-redirect url-redirect-chain"
    assert chain["redirect_chain"] == "302 https://ex.com/chain -> 301 https://ex.com/chain2"
    assert by_url["https://ex.com/"]["codes"] == ""
    assert by_url["https://ex.com/ünï"]["status"] == "200"
    assert by_url["https://ex.com/post/2"]["status"] == ""
    assert by_url["https://ex.com/post/2"]["error"] == "timeout"
    # never fetched: a row from its findings alone, HTTP columns empty
    js = by_url[JS_URL]
    assert (js["sitemap"], js["line"], js["status"], js["codes"]) == (
        PAGES,
        "14",
        "",
        "loc-invalid",
    )
    # a cell a spreadsheet would evaluate is defused
    assert "'" + FORMULA in by_url
    assert list(rows[0]) == [
        "url",
        "sitemap",
        "line",
        "status",
        "final_url",
        "redirect_hops",
        "redirect_chain",
        "lastmod",
        "last_modified",
        "robots",
        "elapsed_ms",
        "worst_severity",
        "codes",
        "error",
        "outcome",
        "expected",
        "checked_url",
        "indexable",
        "indexability",
        "source",
        "inlinks",
    ]


def test_csv_rows_wait_only_a_bounded_window() -> None:
    """Rows are written while the stream goes on, not held until the end."""
    out = io.StringIO()
    writer = make_writer("csv", out)
    for i in range(2000):
        writer.write(url_rec(f"https://ex.com/p{i}", PAGES, i + 1))
    written = out.getvalue().count("\n") - 1
    assert 2000 - 300 < written < 2000
    writer.close()
    assert out.getvalue().count("\n") == 2001


def test_csv_without_bom() -> None:
    text = run("csv", stream(), csv_bom=False)
    assert text.startswith("url,sitemap,")


def test_csv_late_findings_get_a_row_of_their_own() -> None:
    """Findings computed at the end of a run (hreflang reciprocity) come after the row."""
    recs = [url_rec(f"https://ex.com/p{i}", PAGES, i + 1) for i in range(300)]
    recs.append(find("hreflang-not-reciprocal", "B does not name A", "https://ex.com/p0", PAGES, 1))
    rows = read_csv(run("csv", recs))
    assert len(rows) == 301
    assert rows[-1]["url"] == "https://ex.com/p0"
    assert (rows[-1]["status"], rows[-1]["codes"]) == ("", "hreflang-not-reciprocal")
