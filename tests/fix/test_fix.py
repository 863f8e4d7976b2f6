"""`fix` closes the loop over loopback HTTP (contracts/fix.md): a site with planted
problems is crawled, `fix` writes the set from the report (and from the state), the
written set is served by the same site and crawled again, and it audits clean."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site

LM_A = "Tue, 02 Jan 2024 10:00:00 GMT"


def page(text: str, head: str = "") -> str:
    body = f"<main><h1>{text}</h1><p>{text}: a page with a real paragraph of text on it.</p></main>"
    return (
        f"<!doctype html><html><head><title>{text}</title>{head}</head><body>{body}</body></html>"
    )


def entry(loc: str, lastmod: str | None = None, alternates: str = "") -> str:
    when = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return f"<url><loc>{loc}</loc>{when}{alternates}</url>\n"


def urlset(entries: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "".join(entries) + "</urlset>\n"
    )


def redirect(to: str, status: int = 301) -> tuple[int, dict[str, str], str]:
    return (status, {"Location": to}, "")


def ok(text: str, head: str = "", **headers: str) -> tuple[int, dict[str, str], str]:
    return (200, {**HTML, **headers}, page(text, head))


class PlantedSite:
    """Every problem the fix must act on, and the healthy pages it must keep."""

    def __init__(self) -> None:
        self.site = Site()
        self.base = ""

    async def start(self, serve: Serve) -> PlantedSite:
        self.base = b = await serve(self.site)
        cluster = "".join(
            f'<xhtml:link rel="alternate" hreflang="{lang}" href="{b}/{lang}/page"/>'
            for lang in ("en", "de", "fr")
        )
        main_entries = [
            entry(f"{b}/ok-a", "2024-01-02T10:00:00+00:00"),
            entry(f"{b}/ok-b", "2024-03-04"),
            entry(f"{b}/doc.pdf", "2024-02-01"),
            entry(f"{b}/future", "2999-01-01"),
            entry(f"{b}/gone", "2024-01-01"),
            entry(f"{b}/old", "2024-01-01"),
            entry(f"{b}/old2"),
            entry(f"{b}/to-dead"),
            entry(f"{b}/to-noindex"),
            entry(f"{b}/noindex"),
            entry(f"{b}/canon"),
            entry(f"{b}/blocked"),
            entry(f"{b}/shop/oak-table", "2024-05-06"),
            entry(f"{b}/shop/pine-chair", "2024-05-07"),
            entry(f"{b}/en/page", "2024-04-01", cluster),
            entry(f"{b}/de/page", "2024-04-02", cluster),
            entry(f"{b}/fr/page", "2024-04-03", cluster),
            entry(b.replace("127.0.0.1", "localhost") + "/elsewhere"),
        ]
        # fake-fresh: 20 entries on one day (lastmod-uniform on this sitemap)
        uniform = [entry(f"{b}/blog/p{i}", "2024-06-01") for i in range(20)]
        routes: dict[str, Any] = {
            "/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /blocked\n"),
            "/sitemap.xml": (200, XML, urlset(main_entries)),
            "/uniform.xml": (200, XML, urlset(uniform)),
            "/index.xml": (
                200,
                XML,
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<sitemap><loc>{b}/sitemap.xml</loc></sitemap>"
                f"<sitemap><loc>{b}/uniform.xml</loc></sitemap></sitemapindex>\n",
            ),
            "/ok-a": ok("Alpha", **{"Last-Modified": LM_A}),
            "/ok-b": ok("Beta"),
            "/doc.pdf": (200, {"Content-Type": "application/pdf"}, "%PDF-1.4 not really"),
            "/future": ok("Future"),
            "/gone": (410, HTML, "gone"),
            "/old": redirect("/new-live"),
            "/new-live": ok("New live"),
            "/old2": redirect("/ok-a", 302),
            "/to-dead": redirect("/missing"),
            "/to-noindex": redirect("/ni-target"),
            "/ni-target": ok("Hidden", '<meta name="robots" content="noindex">'),
            "/noindex": ok("Noindex", **{"X-Robots-Tag": "noindex"}),
            "/canon": ok("Copy", f'<link rel="canonical" href="{b}/ok-a">'),
            "/blocked": ok("Blocked"),
            "/shop/oak-table": ok("Oak table"),
            "/shop/pine-chair": ok("Pine chair"),
            "/en/page": ok("English"),
            "/de/page": ok("Deutsch"),
            "/elsewhere": ok("Elsewhere"),
        }
        routes.update({f"/blog/p{i}": ok(f"Blog post {i}") for i in range(20)})
        self.site.routes.update(routes)
        return self

    def serve_dir(self, out: Path) -> None:
        """Serve the written set from the site's root (where --base-url says it lives)."""
        gz = {"Content-Type": "application/gzip"}
        for path in out.iterdir():
            if path.name.startswith("sitemap"):
                kind = gz if path.suffix == ".gz" else XML
                self.site.routes[f"/{path.name}"] = (200, kind, path.read_bytes())

    def healthy(self) -> set[str]:
        b = self.base
        return {
            f"{b}/ok-a",
            f"{b}/ok-b",
            f"{b}/doc.pdf",
            f"{b}/future",
            f"{b}/new-live",
            f"{b}/shop/oak-table",
            f"{b}/shop/pine-chair",
            f"{b}/en/page",
            f"{b}/de/page",
            *(f"{b}/blog/p{i}" for i in range(20)),
        }


async def run(argv: list[str]) -> int:
    return await asyncio.to_thread(main, argv)


def crawl_argv(target: str, out: Path, *extra: str) -> list[str]:
    return [
        "crawl",
        target,
        "--page-checks",
        "--format",
        "jsonl",
        "--output",
        str(out),
        "--no-progress",
        "--rate",
        "1000",
        "--retries",
        "0",
        "--timeout",
        "5",
        *extra,
    ]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def written_locs(out: Path) -> dict[str, list[str]]:
    """shard file -> its <loc>s, from the files on disk."""
    from lxml import etree

    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    shards: dict[str, list[str]] = {}
    for path in sorted(out.glob("sitemap-*.xml")):
        tree = etree.parse(str(path))
        shards[path.name] = [str(t) for t in tree.xpath("//s:url/s:loc/text()", namespaces=ns)]
    return shards


async def test_the_fixed_set_is_the_healthy_set_and_audits_clean(
    serve: Serve, tmp_path: Path
) -> None:
    site = await PlantedSite().start(serve)
    b = site.base
    first = tmp_path / "night1.jsonl"
    assert await run(crawl_argv(f"{b}/index.xml", first)) == 1  # errors planted
    out = tmp_path / "public"

    # the listed URLs span two origins (localhost/elsewhere): --base-url is required
    assert await run(["fix", str(first), "--output", str(out)]) == 2
    assert not out.exists()

    assert await run(["fix", str(first), "--output", str(out), "--base-url", b]) == 0
    fixes = {r["url"]: r for r in records(out / "fix-report.jsonl") if r["type"] == "fix"}
    summary = records(out / "fix-report.jsonl")[-1]

    # every written <loc> is a healthy URL, each once; every healthy URL is written
    shards = written_locs(out)
    locs = [loc for file in shards.values() for loc in file]
    assert sorted(locs) == sorted(site.healthy())
    assert summary["written"] == len(locs) == len(site.healthy())

    # every change names the finding of the audit that justified it
    expected = {
        f"{b}/gone": ("dropped", "url-not-found", None),
        f"{b}/old": ("replaced", "url-redirect", f"{b}/new-live"),
        f"{b}/old2": ("replaced", "url-redirect", f"{b}/ok-a"),
        f"{b}/to-dead": ("dropped", "url-redirect-error", None),
        f"{b}/to-noindex": ("dropped", "url-noindex", None),
        f"{b}/noindex": ("dropped", "url-noindex", None),
        f"{b}/canon": ("dropped", "url-canonical-mismatch", None),
        f"{b}/blocked": ("dropped", "url-robots-blocked", None),
        f"{b}/fr/page": ("dropped", "url-not-found", None),
        b.replace("127.0.0.1", "localhost") + "/elsewhere": ("dropped", "loc-cross-host", None),
    }
    changed = {u: (r["action"], r["code"], r["target"]) for u, r in fixes.items() if r["code"]}
    assert changed == expected
    audit_findings = [r for r in records(first) if r["type"] == "finding"]
    for url, (_, code, _) in expected.items():
        if code != "loc-cross-host":
            assert any(f["url"] == url and f["code"] == code for f in audit_findings), url
    assert summary["by_code"]["url-not-found"] == 2
    assert summary["kept"] + summary["replaced"] + summary["dropped"] == summary["urls_in"]
    assert summary["urls_in"] == len(fixes) == 38

    # <lastmod> from the strongest evidence
    assert fixes[f"{b}/ok-a"]["lastmod"] == "2024-01-02T10:00:00+00:00"
    assert fixes[f"{b}/ok-a"]["lastmod_source"] == "last-modified"
    assert fixes[f"{b}/ok-b"]["lastmod"] == "2024-03-04"
    assert fixes[f"{b}/ok-b"]["lastmod_source"] == "sitemap"
    assert fixes[f"{b}/future"]["lastmod"] is None
    assert fixes[f"{b}/future"]["lastmod_code"] == "lastmod-future"
    assert fixes[f"{b}/blog/p3"]["lastmod"] is None
    assert fixes[f"{b}/blog/p3"]["lastmod_code"] == "lastmod-uniform"
    # a replacement takes its target's entry: /old2's is the kept /ok-a
    assert fixes[f"{b}/old2"]["shard"] == fixes[f"{b}/ok-a"]["shard"] == "sitemap-root.xml"
    assert fixes[f"{b}/old"]["lastmod"] is None  # the listed date was the old URL's

    # hreflang among healthy members only; the broken one is named with its code
    en = fixes[f"{b}/en/page"]
    assert en["alternates_dropped"] == [
        {"hreflang": "fr", "href": f"{b}/fr/page", "code": "url-not-found"}
    ]
    en_xml = (out / "sitemap-en.xml").read_text(encoding="utf-8")
    assert f'hreflang="de" href="{b}/de/page"' in en_xml
    assert "fr/page" not in en_xml

    # the shards by first path segment, the index with each shard's newest date
    assert sorted(shards) == [
        "sitemap-blog.xml",
        "sitemap-de.xml",
        "sitemap-en.xml",
        "sitemap-root.xml",
        "sitemap-shop.xml",
    ]
    index = (out / "sitemap_index.xml").read_text(encoding="utf-8")
    assert f"<loc>{b}/sitemap-shop.xml</loc><lastmod>2024-05-07</lastmod>" in index
    assert f"<loc>{b}/sitemap-root.xml</loc><lastmod>2024-03-04</lastmod>" in index
    assert f"<loc>{b}/sitemap-blog.xml</loc></sitemap>" in index  # no dates to give
    md = (out / "fix-report.md").read_text(encoding="utf-8")
    assert f"| {b}/old | replaced | `url-redirect` | {b}/new-live |" in md

    # served again and audited: nothing at warning or above
    site.serve_dir(out)
    second = tmp_path / "night2.jsonl"
    code = await run(crawl_argv(f"{b}/sitemap_index.xml", second, "--fail-on", "warning"))
    again = records(second)
    bad = [
        (f["code"], f["url"]) for f in again if f["type"] == "finding" and f["severity"] != "info"
    ]
    assert bad == []
    assert code == 0
    assert {r["url"] for r in again if r["type"] == "url"} == site.healthy()


async def test_fix_from_the_state_gives_the_same_set(serve: Serve, tmp_path: Path) -> None:
    site = await PlantedSite().start(serve)
    b = site.base
    report, state = tmp_path / "night.jsonl", tmp_path / "audit.sqlite"
    await run(crawl_argv(f"{b}/index.xml", report, "--state", str(state)))
    from_report, from_state = tmp_path / "a", tmp_path / "b"
    assert await run(["fix", str(report), "-o", str(from_report), "--base-url", b]) == 0
    assert await run(["fix", str(state), "-o", str(from_state), "--base-url", b]) == 0
    for name in ["sitemap_index.xml", *written_locs(from_report)]:
        assert (from_report / name).read_bytes() == (from_state / name).read_bytes(), name
    assert sorted(p.name for p in from_report.iterdir()) == sorted(
        p.name for p in from_state.iterdir()
    )


async def test_a_deploy_stamp_host_gives_no_last_modified_dates(
    serve: Serve, tmp_path: Path
) -> None:
    """Every page answers the same build time: Last-Modified is no content date there."""
    site = Site()
    b = await serve(site)
    stamp = "Wed, 05 Jun 2024 03:00:00 GMT"
    locs = [f"{b}/p/{i}" for i in range(25)]
    site.routes["/robots.txt"] = (404, TEXT, "")
    site.routes["/sitemap.xml"] = (
        200,
        XML,
        urlset([entry(loc, f"2024-0{1 + i % 5}-1{i % 9}") for i, loc in enumerate(locs)]),
    )
    for i in range(25):
        site.routes[f"/p/{i}"] = ok(f"Page {i}", **{"Last-Modified": stamp})
    report = tmp_path / "r.jsonl"
    await run(crawl_argv(f"{b}/sitemap.xml", report))
    assert any(r.get("code") == "last-modified-deploy" for r in records(report))
    out = tmp_path / "out"
    assert await run(["fix", str(report), "-o", str(out)]) == 0
    fixes = [r for r in records(out / "fix-report.jsonl") if r["type"] == "fix"]
    assert len(fixes) == 25
    assert {r["lastmod_source"] for r in fixes} == {"sitemap"}
    assert fixes[0]["lastmod"] == "2024-01-10"


async def test_shards_stay_put_across_two_crawled_nights(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    b = await serve(site)
    site.routes["/robots.txt"] = (404, TEXT, "")
    names = [f"post-{i}" for i in range(40)]

    def publish(listed: list[str], gone: set[str]) -> None:
        site.routes["/sitemap.xml"] = (200, XML, urlset([entry(f"{b}/blog/{n}") for n in listed]))
        for n in listed:
            site.routes[f"/blog/{n}"] = (404, HTML, "") if n in gone else ok(f"Post {n}")

    def files(out: Path) -> dict[str, str]:
        return {loc: name for name, locs in written_locs(out).items() for loc in locs}

    publish(names, set())
    await run(crawl_argv(f"{b}/sitemap.xml", tmp_path / "1.jsonl"))
    out = tmp_path / "public"
    assert await run(["fix", str(tmp_path / "1.jsonl"), "-o", str(out), "--shard-size", "10"]) == 0
    one = files(out)
    assert len(one) == 40 and len(set(one.values())) >= 4  # split into parts
    # the next night: two posts more, three gone
    publish([*names, "post-new-a", "post-new-b"], {"post-3", "post-17", "post-29"})
    await run(crawl_argv(f"{b}/sitemap.xml", tmp_path / "2.jsonl"))
    assert await run(["fix", str(tmp_path / "2.jsonl"), "-o", str(out), "--shard-size", "10"]) == 0
    two = files(out)
    assert len(two) == 39
    assert {u: two[u] for u in one if u in two} == {u: one[u] for u in one if u in two}
    assert sorted(set(two.values())) == sorted(p.name for p in out.glob("sitemap-*.xml"))


async def test_the_gzip_set_audits_clean_too(serve: Serve, tmp_path: Path) -> None:
    site = await PlantedSite().start(serve)
    b = site.base
    first = tmp_path / "night1.jsonl"
    await run(crawl_argv(f"{b}/index.xml", first))
    out = tmp_path / "public"
    assert await run(["fix", str(first), "-o", str(out), "--base-url", b, "--gzip"]) == 0
    assert sorted(p.name for p in out.glob("sitemap-*")) == [
        "sitemap-blog.xml.gz",
        "sitemap-de.xml.gz",
        "sitemap-en.xml.gz",
        "sitemap-root.xml.gz",
        "sitemap-shop.xml.gz",
    ]
    site.serve_dir(out)
    second = tmp_path / "night2.jsonl"
    assert await run(crawl_argv(f"{b}/sitemap_index.xml", second, "--fail-on", "warning")) == 0
    again = records(second)
    assert [r["code"] for r in again if r["type"] == "finding" and r["severity"] != "info"] == []
    assert {r["url"] for r in again if r["type"] == "url"} == site.healthy()
    assert all(r["gzip"] for r in again if r["type"] == "sitemap" and "sitemap-" in r["url"])
