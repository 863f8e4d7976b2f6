"""migrate reports keep the migration (issue 17.9), from a real `migrate` run over
loopback HTTP: csv rows carry each old URL's outcome, the map's expected target and the
URL checked on the new site; markdown and html show the outcome table."""

from __future__ import annotations

import asyncio
import csv
import io
from pathlib import Path

import pytest
from lxml import html as lhtml

from audit.cli.main import main
from tests.crawlkit import HTML, XML, Serve, Site, urlset

PAGE = (200, HTML, "<html><body>page</body></html>")


async def migrate_to(serve: Serve, tmp_path: Path, fmt: str) -> tuple[str, str, str]:
    """(report text, old origin, new origin) of `migrate --map` written as `fmt`."""
    old, new = Site(), Site()
    o, n = await serve(old), await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a", o + "/b", o + "/c"))}
    new.routes = {
        "/a": (301, {"Location": "/x"}, ""),
        "/x": PAGE,
        "/b": (301, {"Location": "/"}, ""),  # the map expects /y: the home page instead
        "/": PAGE,
        # /c: 404 on the new site
    }
    rmap = tmp_path / "map.csv"
    rmap.write_text(f"old,new\n/a,{n}/x\n/b,{n}/y\n/c,{n}/z\n")
    out = tmp_path / f"report.{fmt}"
    argv = ["migrate", o + "/s.xml", n, "--map", str(rmap), "--format", fmt, "-o", str(out)]
    code = await asyncio.to_thread(main, [*argv, "--no-progress", "--rate", "inf"])
    assert code == 1  # a lost old URL is an error
    return out.read_text(encoding="utf-8-sig"), o, n


@pytest.mark.slow
async def test_csv_rows_carry_outcome_expected_and_checked_url(
    serve: Serve, tmp_path: Path
) -> None:
    text, o, n = await migrate_to(serve, tmp_path, "csv")
    rows = {r["url"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows[o + "/a"]["outcome"] == "ok"
    assert rows[o + "/a"]["expected"] == n + "/x"
    assert rows[o + "/a"]["checked_url"] == n + "/a"
    assert rows[o + "/b"]["outcome"] == "to-homepage"
    assert rows[o + "/b"]["expected"] == n + "/y"
    assert rows[o + "/c"]["outcome"] == "not-found"
    assert rows[o + "/c"]["checked_url"] == n + "/c"


@pytest.mark.slow
async def test_markdown_and_html_show_the_outcome_table(serve: Serve, tmp_path: Path) -> None:
    md, _, _ = await migrate_to(serve, tmp_path, "markdown")
    assert "## Migration" in md and "3 old URLs checked on" in md
    assert "| `ok` | 1 | 33.3% |" in md and "| `to-homepage` | 1 | 33.3% |" in md
    assert "| `not-found` | 1 | 33.3% |" in md
    page, _, _ = await migrate_to(serve, tmp_path, "html")
    doc = lhtml.fromstring(page)
    table = doc.get_element_by_id("migration")
    rows = [[c.text_content() for c in tr] for tr in table.iter("tr")][1:]
    assert ["not-found", "1", "33.3%"] in rows and ["ok", "1", "33.3%"] in rows
    notes = doc.xpath('//*[@id="notes"]')
    assert not notes or '"outcomes"' not in notes[0].text_content()  # no raw JSON blob
    assert doc.get_element_by_id("verdict").text_content() == "FAIL"
