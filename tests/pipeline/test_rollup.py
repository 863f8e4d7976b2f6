"""The per-sitemap roll-up (contracts/nights.md 5): `rollup` records after the last url
and finding record, before `hosts` and `summary`, one per sitemap record in order, with
counts as the contract defines them; `counts` in json; the sitemaps table in text,
markdown and html. Real HTTP over loopback: an index, two urlsets and a missing child."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from lxml import html as lxml_html

from audit.api import Audit
from audit.cli.main import main
from audit.core.config import CrawlConfig
from audit.report import convert
from tests.crawlkit import FAST, HTML, XML, Serve, Site

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def _index(base: str) -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n'
        f"<sitemap><loc>{base}/a.xml</loc><lastmod>2024-01-01</lastmod></sitemap>\n"
        f"<sitemap><loc>{base}/b.xml</loc></sitemap>\n"
        f"<sitemap><loc>{base}/missing.xml</loc><lastmod>2024-13-01</lastmod></sitemap>\n"
        "</sitemapindex>\n"
    )


def _urlset(*entries: tuple[str, str | None]) -> str:
    body = "".join(
        f"<url><loc>{loc}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else "")
        + "</url>\n"
        for loc, lastmod in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{body}</urlset>\n'


async def _site(serve: Serve) -> tuple[str, Site]:
    """The index lists a.xml (a valid lastmod), b.xml (none) and missing.xml (404, an
    invalid lastmod). a.xml lists a clean page, a noindex page with an impossible lastmod,
    a 404 without lastmod and a redirect with a month lastmod; b.xml one clean page."""
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, _index(base))
    site.routes["/a.xml"] = (
        200,
        XML,
        _urlset(
            (f"{base}/p/ok", "2024-01-01"),
            (f"{base}/p/noindex", "2024-02-30"),
            (f"{base}/p/404", None),
            (f"{base}/p/redirect", "2024-05"),
        ),
    )
    site.routes["/b.xml"] = (200, XML, _urlset((f"{base}/p/b1", "2024-03-03T10:00:00+02:00")))
    site.routes["/p/ok"] = (200, HTML, "<p>ok</p>")
    site.routes["/p/b1"] = (200, HTML, "<p>b1</p>")
    site.routes["/p/noindex"] = (200, {**HTML, "X-Robots-Tag": "noindex"}, "<p>no</p>")
    site.routes["/p/redirect"] = (301, {"Location": f"{base}/p/ok"}, "")
    return base, site


async def _crawl(target: str, ignore: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    run = Audit(target, CrawlConfig(**FAST), mode="crawl", sinks=[records.append])
    run.recorder.ignore(ignore)
    await asyncio.wait_for(run.run(), timeout=50)
    run.finish()
    return records


def _counts(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    return {r["url"]: r["counts"] for r in records if r["type"] == "rollup"}


def _row(urls: int, indexable: int, with_lastmod: int, e: int, w: int, i: int) -> dict[str, int]:
    return {
        "urls": urls,
        "indexable": indexable,
        "with_lastmod": with_lastmod,
        "errors": e,
        "warnings": w,
        "info": i,
    }


async def test_each_count_of_each_sitemap(serve: Serve) -> None:
    base, _ = await _site(serve)
    records = await _crawl(f"{base}/sitemap.xml")
    counts = _counts(records)
    # the index: no URLs of its own; one entry with a valid lastmod (2024-13-01 is
    # lastmod-invalid); the 404 child and that lastmod (errors), a.xml's entry behind
    # its 2024-05 (index-lastmod-behind) and the entry without lastmod (info) are
    # findings about the index, where it lists them
    assert counts[f"{base}/sitemap.xml"] == _row(0, 0, 1, 2, 1, 1)
    # a.xml: 4 URLs, one indexable (the redirect, the noindex and the 404 are not);
    # valid lastmods 2024-01-01 and 2024-05; lastmod-invalid, url-noindex and
    # url-not-found; lastmod-imprecise and url-redirect; lastmod-missing
    assert counts[f"{base}/a.xml"] == _row(4, 1, 2, 3, 2, 1)
    assert counts[f"{base}/b.xml"] == _row(1, 1, 1, 0, 0, 0)
    # a sitemap that could not be read: zeros
    assert counts[f"{base}/missing.xml"] == _row(0, 0, 0, 0, 0, 0)
    # every severity count is what the findings naming the sitemap say
    for sitemap, row in counts.items():
        found = [r for r in records if r["type"] == "finding" and r["sitemap"] == sitemap]
        for sev, key in (("error", "errors"), ("warning", "warnings"), ("info", "info")):
            assert row[key] == sum(f["severity"] == sev for f in found), (sitemap, key)


async def test_one_rollup_per_sitemap_record_in_order_before_hosts_and_summary(
    serve: Serve,
) -> None:
    base, _ = await _site(serve)
    records = await _crawl(f"{base}/sitemap.xml")
    kinds = [r["type"] for r in records]
    sitemaps = [r["url"] for r in records if r["type"] == "sitemap"]
    rollups = [r["url"] for r in records if r["type"] == "rollup"]
    assert rollups == sitemaps and len(sitemaps) == 4
    first = kinds.index("rollup")
    last_content = max(i for i, k in enumerate(kinds) if k in ("url", "finding"))
    assert last_content < first
    assert kinds[first : first + 4] == ["rollup"] * 4
    assert kinds[first + 4 :] == ["hosts", "summary"]


async def test_counts_respect_ignore(serve: Serve) -> None:
    base, _ = await _site(serve)
    records = await _crawl(f"{base}/sitemap.xml", ignore=("lastmod-imprecise", "url-noindex"))
    counts = _counts(records)
    assert counts[f"{base}/a.xml"] == _row(4, 1, 2, 2, 1, 1)
    # the ignored codes change no other count: the noindex page stays not indexable
    assert counts[f"{base}/b.xml"] == _row(1, 1, 1, 0, 0, 0)


async def test_validate_writes_no_rollup(serve: Serve) -> None:
    """The roll-up is the crawl's: validate checks no URL, so it has none to count."""
    base, _ = await _site(serve)
    records: list[dict[str, Any]] = []
    run = Audit(f"{base}/sitemap.xml", CrawlConfig(**FAST), mode="validate", sinks=[records.append])
    await run.run()
    run.finish()
    assert not [r for r in records if r["type"] == "rollup"]
    assert [r["type"] for r in records if r["type"] == "sitemap"]


def _report(tmp_path: Path, target: str, *extra: str) -> Path:
    out = tmp_path / "report.jsonl"
    argv = ["crawl", target, "--format", "jsonl", "-o", str(out), "--no-progress"]
    argv += ["--fail-on", "never", "--retries", "0", "--timeout", "5", *extra]
    assert main(argv) == 0
    return out


def _converted(path: Path, fmt: str) -> str:
    stream = io.StringIO()
    convert(path, fmt, stream)
    return stream.getvalue()


def _jsonl_counts(path: Path) -> list[tuple[str, list[int]]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    keys = ("urls", "indexable", "with_lastmod", "errors", "warnings", "info")
    return [(r["url"], [r["counts"][k] for k in keys]) for r in rows if r["type"] == "rollup"]


async def test_every_format_shows_the_rollup(serve: Serve, tmp_path: Path) -> None:
    base, _ = await _site(serve)
    path = await asyncio.to_thread(_report, tmp_path, f"{base}/sitemap.xml")
    expected = _jsonl_counts(path)
    assert len(expected) == 4 and expected[1] == (f"{base}/a.xml", [4, 1, 2, 3, 2, 1])

    doc = json.loads(_converted(path, "json"))
    assert [(s["url"], list(s["counts"].values())) for s in doc["sitemaps"]] == expected
    assert "other" not in doc  # the rollup records are not repeated elsewhere

    text = _converted(path, "text").splitlines()
    start = text.index("sitemaps")
    assert text[start + 1].split()[:3] == ["sitemap", "urls", "indexable"]
    rows = text[start + 2 : start + 2 + len(expected)]
    assert [(r.split()[0], [int(n) for n in r.split()[1:]]) for r in rows] == expected
    assert all(r.startswith("  ") for r in rows)
    assert text[start + 2 + len(expected)] == ""  # a blank line ends the section
    assert text.index("hosts") > start

    md = _converted(path, "markdown").splitlines()
    head = md.index("## Sitemaps")
    assert (
        md[head + 2] == "| Sitemap | URLs | Indexable | With lastmod | Errors | Warnings | Info |"
    )
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in md[head + 4 :][:4]]
    assert [(c[0].strip("`"), [int(n) for n in c[1:]]) for c in cells] == expected

    page = lxml_html.fromstring(_converted(path, "html"))
    table = page.get_element_by_id("sitemaps")
    assert table.tag == "table"
    assert [th.text_content() for th in table.xpath("./thead//th")] == [
        "Sitemap",
        "URLs",
        "Indexable",
        "With lastmod",
        "Errors",
        "Warnings",
        "Info",
    ]
    html_rows = [[td.text_content() for td in tr.xpath("./td")] for tr in table.xpath("./tbody/tr")]
    assert [(r[0], [int(n) for n in r[1:]]) for r in html_rows] == expected


@pytest.mark.slow
async def test_text_and_markdown_show_100_sitemaps_html_all(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    children = [f"{base}/s{i}.xml" for i in range(103)]
    site.routes["/sitemap.xml"] = (
        200,
        XML,
        f'<?xml version="1.0"?>\n<sitemapindex {NS}>\n'
        + "".join(f"<sitemap><loc>{c}</loc></sitemap>\n" for c in children)
        + "</sitemapindex>\n",
    )
    for i in range(103):
        site.routes[f"/s{i}.xml"] = (200, XML, _urlset((f"{base}/p{i}", None)))
        site.routes[f"/p{i}"] = (200, HTML, "<p>page</p>")
    path = await asyncio.to_thread(_report, tmp_path, f"{base}/sitemap.xml", "--rate", "1000")
    expected = _jsonl_counts(path)
    assert len(expected) == 104
    text = _converted(path, "text").splitlines()
    start = text.index("sitemaps")
    rows = text[start + 2 : start + 102]
    assert [r.split()[0] for r in rows] == [url for url, _ in expected[:100]]
    assert text[start + 102] == "  ... and 4 more sitemaps"
    assert text[start + 103] == ""
    md = _converted(path, "markdown").split("## Sitemaps\n", 1)[1].split("\n## ", 1)[0]
    rows_md = [line for line in md.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows_md] == [url for url, _ in expected[:100]]
    assert "... and 4 more sitemaps." in md
    page = lxml_html.fromstring(_converted(path, "html"))
    tbody = page.get_element_by_id("sitemaps").xpath("./tbody/tr")
    assert [tr.xpath("string(td[1])") for tr in tbody] == [url for url, _ in expected]


Counts = list[tuple[str, list[int]]]


async def _carried_nights(serve: Serve, tmp_path: Path) -> tuple[Counts, Counts]:
    """Two --state runs; on the second the child sitemap and its pages answer 304 (carried
    from the state). Returns the roll-up counts of both."""
    site = Site()
    base = await serve(site)

    def conditional(status: int, headers: dict[str, str], body: str) -> Any:
        async def handler(request: web.Request) -> web.StreamResponse:
            if request.headers.get("If-None-Match") == '"v1"':
                return web.Response(status=304, headers={"ETag": '"v1"'})
            answer = {**headers, "ETag": '"v1"'}
            if request.method == "HEAD":
                return web.Response(status=status, headers=answer)
            return web.Response(status=status, headers=answer, text=body)

        return handler

    site.routes["/sitemap.xml"] = (
        200,
        XML,
        f'<?xml version="1.0"?>\n<sitemapindex {NS}>\n'
        f"<sitemap><loc>{base}/a.xml</loc><lastmod>2024-01-01</lastmod></sitemap>\n"
        "</sitemapindex>\n",
    )
    site.routes["/a.xml"] = conditional(
        200,
        XML,
        _urlset(
            (f"{base}/p/ok", "2024-01-01"),
            (f"{base}/p/two", "2024-01-02"),
            (f"{base}/p/none", None),
        ),
    )
    for path in ("/p/ok", "/p/two", "/p/none"):
        site.routes[path] = conditional(200, HTML, "<p>page</p>")
    state = str(tmp_path / "state.sqlite")
    first = await asyncio.to_thread(_report, tmp_path, f"{base}/sitemap.xml", "--state", state)
    night1 = _jsonl_counts(first)
    second = await asyncio.to_thread(_report, tmp_path, f"{base}/sitemap.xml", "--state", state)
    records = [json.loads(line) for line in second.read_text().splitlines()]
    carried = [r for r in records if r["type"] == "sitemap" and r.get("carried")]
    assert [r["url"] for r in carried] == [f"{base}/a.xml"]  # the child was carried
    assert night1 == [
        (f"{base}/sitemap.xml", [0, 0, 1, 0, 1, 0]),  # behind its child's 2024-01-02
        (f"{base}/a.xml", [3, 3, 2, 0, 0, 1]),
    ]
    return night1, _jsonl_counts(second)


async def test_a_carried_sitemap_has_the_counts_it_would_have_if_read(
    serve: Serve, tmp_path: Path
) -> None:
    """--state, second run: the child and its pages answer 304 (carried from the state);
    the roll-up is the one of the first run, the index's included (its entry is judged
    against the carried child's entries as against the child read)."""
    night1, night2 = await _carried_nights(serve, tmp_path)
    assert night2 == night1


SM_URLSET = "https://e.example/sitemap.xml"


def test_an_rfc_822_lastmod_counts_only_in_an_rss_feed() -> None:
    """with_lastmod counts a W3C Datetime anywhere, an RFC 822 date only in an RSS feed
    (where it is valid), an invalid one nowhere; a url record without a sitemap is no
    sitemap's."""
    from audit.pipeline.rollup import Rollup

    rollup = Rollup()
    dates = ("2024-01-01", "Mon, 01 Jan 2024 10:00:00 GMT", "2024-13-01", None)
    for sitemap, kind in (("https://e.example/feed.rss", "rss"), (SM_URLSET, "urlset")):
        rollup.add({"type": "sitemap", "url": sitemap, "kind": kind})
        for lastmod in dates:
            rollup.add({"type": "url", "sitemap": sitemap, "indexable": True, "lastmod": lastmod})
    rollup.add({"type": "url", "sitemap": None, "indexable": True, "lastmod": dates[0]})
    feed, urlset = (r["counts"] for r in rollup.records())
    assert (feed["urls"], feed["indexable"], feed["with_lastmod"]) == (4, 4, 2)
    assert (urlset["urls"], urlset["indexable"], urlset["with_lastmod"]) == (4, 4, 1)
