"""`fix` on saved reports (contracts/fix.md): refusals, the order of evidence for
`<lastmod>`, deduplication, alternates, shards across nights, gzip. The reports are
written here as files in the jsonl format a crawl writes; `fix` runs as the CLI does."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.fix import fix_sitemaps
from audit.fix.plan import shard_key

B = "https://www.example.com"
SM = f"{B}/sitemap.xml"


def url(
    path: str,
    status: int | None = 200,
    *,
    final: str | None = None,
    lastmod: str | None = None,
    last_modified: str | None = None,
    robots: str = "allowed",
    sitemap: str | None = SM,
    **extra: Any,
) -> dict[str, Any]:
    u = path if path.lower().startswith("http") else B + path
    redirects = [{"url": u, "status": 301}] if final else []
    return {
        "type": "url",
        "url": u,
        "sitemap": sitemap,
        "line": 3,
        "status": status,
        "final_url": (final if final.startswith("http") else B + final) if final else u,
        "redirects": redirects,
        "lastmod": lastmod,
        "last_modified": last_modified,
        "robots": robots,
        "elapsed_ms": 1.0,
        "error": None,
        **extra,
    }


def found(code: str, path: str | None, sitemap: str | None = SM) -> dict[str, Any]:
    u = None if path is None else (path if path.startswith("http") else B + path)
    return {
        "type": "finding",
        "code": code,
        "severity": "warning",
        "url": u,
        "sitemap": sitemap,
        "line": 3,
        "message": "...",
    }


def summary(**extra: Any) -> dict[str, Any]:
    return {"type": "summary", "sitemaps": 1, "urls": 1, "findings": {}, **extra}


def report(tmp_path: Path, *records: dict[str, Any], name: str = "r.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def fix(src: Path, out: Path, *args: str) -> int:
    return main(["fix", str(src), "--output", str(out), *args])


def fixes(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "fix-report.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["url"]: r for r in map(json.loads, lines) if r["type"] == "fix"}


def fix_summary(out: Path) -> dict[str, Any]:
    lines = (out / "fix-report.jsonl").read_text(encoding="utf-8").splitlines()
    last: dict[str, Any] = json.loads(lines[-1])
    return last


# --- refusals --------------------------------------------------------------------------


# --- actions -----------------------------------------------------------------------


def test_scope_of_base_url_path(tmp_path: Path) -> None:
    src = report(
        tmp_path,
        url("/blog/a"),
        url("/shop/b"),
        url("/blog/old", final="/shop/new"),  # a target out of scope is not written
        found("url-redirect", "/blog/old"),
        summary(),
    )
    out = tmp_path / "o"
    assert fix(src, out, "--base-url", f"{B}/blog") == 0
    got = fixes(out)
    assert got[f"{B}/blog/a"]["action"] == "kept"
    assert got[f"{B}/shop/b"]["code"] == "loc-outside-path"
    assert (got[f"{B}/blog/old"]["action"], got[f"{B}/blog/old"]["code"]) == (
        "dropped",
        "url-redirect",
    )
    index = (out / "sitemap_index.xml").read_text(encoding="utf-8")
    assert f"<loc>{B}/blog/sitemap-blog.xml</loc>" in index
    assert fix_summary(out)["base_url"] == f"{B}/blog/"


def test_dropped_codes_follow_the_contract_order(tmp_path: Path) -> None:
    src = report(
        tmp_path,
        url("/held", None, robots="unreachable"),
        url("/both", 404),
        found("url-canonical-mismatch", "/both"),
        found("url-not-found", "/both"),
        url("/soft", 200),
        found("url-soft-404", "/soft"),
        found("url-slow", "/soft"),
        url("/loop", None, final="/loop"),
        found("url-redirect", "/loop"),
        found("url-redirect-loop", "/loop"),
        summary(),
    )
    out = tmp_path / "o"
    assert fix(src, out) == 0
    got = fixes(out)
    assert got[f"{B}/held"]["code"] == "robots-unreachable"
    assert got[f"{B}/both"]["code"] == "url-not-found"
    assert got[f"{B}/soft"]["action"] == "kept"  # soft 404 and slow never drop a URL
    assert got[f"{B}/loop"]["code"] == "url-redirect-loop"
    s = fix_summary(out)
    assert (s["kept"], s["dropped"], s["written"]) == (1, 3, 1)
    assert s["by_code"] == {"robots-unreachable": 1, "url-not-found": 1, "url-redirect-loop": 1}


def test_a_written_url_appears_once(tmp_path: Path) -> None:
    """A target kept as listed, and a target several redirects reach: one entry each; the
    shared target's evidence is the first redirecting URL's in code-point order."""
    lm1, lm2 = "Mon, 01 Jan 2024 00:00:00 GMT", "Tue, 02 Jan 2024 00:00:00 GMT"
    src = report(
        tmp_path,
        url("/z-old", final="/new", last_modified=lm2),
        url("/a-old", final="/new", last_modified=lm1),
        url("/kept", lastmod="2024-03-03"),
        url("/to-kept", final="/KEPT".lower(), last_modified=lm2),
        url("HTTPS://WWW.EXAMPLE.COM:443/kept"),  # the same URL listed twice
        summary(),
    )
    out = tmp_path / "o"
    assert fix(src, out) == 0
    got = fixes(out)
    assert len(got) == 4  # the second listing of /kept is the same URL
    xml = (out / "sitemap-root.xml").read_text(encoding="utf-8")
    assert xml.count("<url>") == 2
    assert xml.index(f"{B}/kept") < xml.index(f"{B}/new")  # code-point order
    assert (
        got[f"{B}/a-old"]["lastmod"]
        == got[f"{B}/z-old"]["lastmod"]
        == ("2024-01-01T00:00:00+00:00")
    )
    assert got[f"{B}/to-kept"]["target"] == f"{B}/kept"
    assert got[f"{B}/to-kept"]["lastmod"] == "2024-03-03"  # the kept entry's
    assert got[f"{B}/to-kept"]["lastmod_source"] == "sitemap"
    assert fix_summary(out)["written"] == 2


# --- <lastmod> -----------------------------------------------------------------------


def test_lastmod_takes_the_strongest_evidence(tmp_path: Path) -> None:
    now = datetime(2024, 6, 1, tzinfo=UTC)
    src = report(
        tmp_path,
        url(
            "/content",
            lastmod="2024-01-01",
            last_modified="Fri, 05 Jan 2024 10:00:00 GMT",
            content_changed="2024-05-05T05:05:05+00:00",
        ),
        url("/rfc850", lastmod="2024-01-01", last_modified="Friday, 05-Jan-24 10:00:00 GMT"),
        url("/asctime", last_modified="Fri Jan  5 10:00:00 2024"),
        url("/later-than-now", lastmod=" 2024-02-02 ", last_modified="Fri, 05 Jul 2024 1:0:0 GMT"),
        url("/ahead", lastmod="2024-02-02", last_modified="Fri, 05 Jul 2024 10:00:00 GMT"),
        url("/dynamic", lastmod="2024-02-03", last_modified="Fri, 05 Jan 2024 10:00:00 GMT"),
        found("last-modified-dynamic", "/dynamic"),
        url("/churn", lastmod="2024-02-04"),
        found("lastmod-churn", "/churn", sitemap=None),
        url("/imprecise", lastmod="2024-02"),
        found("lastmod-imprecise", "/imprecise"),
        url("/moved", final="/moved-to", lastmod="2024-02-05"),  # listed date was the old URL's
        url("/other", lastmod="2024-02-06", sitemap=f"{B}/uniform.xml"),
        found("lastmod-uniform", None, sitemap=f"{B}/uniform.xml"),
        summary(),
    )
    out = tmp_path / "o"
    fix_sitemaps(str(src), out, now=now)
    got = {u.removeprefix(B): (r["lastmod"], r["lastmod_source"]) for u, r in fixes(out).items()}
    assert got == {
        "/content": ("2024-05-05T05:05:05+00:00", "content"),
        "/rfc850": ("2024-01-05T10:00:00+00:00", "last-modified"),
        "/asctime": ("2024-01-05T10:00:00+00:00", "last-modified"),
        "/later-than-now": ("2024-02-02", "sitemap"),  # unparsable date, then trimmed
        "/ahead": ("2024-02-02", "sitemap"),  # Last-Modified after the time of fix
        "/dynamic": ("2024-02-03", "sitemap"),
        "/churn": (None, None),
        "/imprecise": (None, None),
        "/moved": (None, None),
        "/other": (None, None),
    }
    codes = {u.removeprefix(B): r["lastmod_code"] for u, r in fixes(out).items()}
    assert codes["/churn"] == "lastmod-churn"
    assert codes["/imprecise"] == "lastmod-imprecise"
    assert codes["/other"] == "lastmod-uniform"
    assert codes["/content"] is None and codes["/asctime"] is None
    index = (out / "sitemap_index.xml").read_text(encoding="utf-8")
    assert "<lastmod>2024-05-05T05:05:05+00:00</lastmod>" in index


def test_the_index_compares_dates_as_instants(tmp_path: Path) -> None:
    src = report(
        tmp_path,
        url("/p/a", lastmod="2024-03-02"),
        url("/p/b", lastmod="2024-03-01T23:30:00-02:00"),  # 2024-03-02T01:30Z: the newest
        url("/p/c", lastmod="2024-03-01T23:59:59+00:00"),
        summary(),
    )
    out = tmp_path / "o"
    assert fix(src, out) == 0
    index = (out / "sitemap_index.xml").read_text(encoding="utf-8")
    assert "<lastmod>2024-03-01T23:30:00-02:00</lastmod>" in index


# --- alternates ----------------------------------------------------------------------


def alts(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"hreflang": h, "href": B + p} for h, p in pairs]


def test_alternates_only_among_kept_urls(tmp_path: Path) -> None:
    cluster = alts(("en", "/en/"), ("de", "/de/"), ("fr", "/fr/"), ("x-default", "/x"))
    pair = alts(("en", "/en/solo"), ("it", "/it/solo"))
    src = report(
        tmp_path,
        url("/en/", alternates=cluster),
        url("/de/", alternates=cluster),
        url("/fr/", 404, alternates=cluster),
        found("url-not-found", "/fr/"),
        url("/en/solo", alternates=pair),
        url("/it/solo", final="/it/solo-2", alternates=pair),
        summary(),
    )
    out = tmp_path / "o"
    assert fix(src, out) == 0
    got = fixes(out)
    assert got[f"{B}/en/"]["alternates_dropped"] == [
        {"hreflang": "fr", "href": f"{B}/fr/", "code": "url-not-found"},
        {"hreflang": "x-default", "href": f"{B}/x", "code": None},
    ]
    en = (out / "sitemap-en.xml").read_text(encoding="utf-8")
    assert 'xmlns:xhtml="http://www.w3.org/1999/xhtml"' in en
    first = en.split("</url>")[0]
    assert first.count("<xhtml:link") == 2  # en and de
    # /en/solo's only partner was replaced: a cluster of one is no cluster
    solo = en.split("</url>")[1]
    assert f"<loc>{B}/en/solo</loc>" in solo and "xhtml:link" not in solo
    assert got[f"{B}/en/solo"]["alternates_dropped"] == [
        {"hreflang": "it", "href": f"{B}/it/solo", "code": "url-redirect"}
    ]
    it = (out / "sitemap-it.xml").read_text(encoding="utf-8")
    assert "xhtml" not in it  # a replaced entry gets no alternates


def test_text_is_escaped(tmp_path: Path) -> None:
    src = report(tmp_path, url("/search?q=a&b=<c>"), summary())
    out = tmp_path / "o"
    assert fix(src, out) == 0
    xml = (out / "sitemap-root.xml").read_text(encoding="utf-8")
    assert f"<loc>{B}/search?q=a&amp;b=&lt;c&gt;</loc>" in xml


# --- shards --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/", "root"),
        ("/about", "root"),
        ("/faq.html", "root"),
        ("/en/", "en"),
        ("/products/oak-table", "products"),
        ("/Pro_Ducts!!/x", "pro-ducts"),
        ("/--/x", "root"),
        ("//x", "root"),
        (f"/{'a' * 50}/x", "a" * 40),
        ("/Über/x", "ber"),
    ],
)
def test_shard_key(path: str, key: str) -> None:
    assert shard_key(B + path) == key


def h(path: str) -> int:
    return int(hashlib.sha256(path.encode()).hexdigest()[:8], 16)


def night(tmp_path: Path, name: str, paths: list[str]) -> dict[str, str]:
    src = report(tmp_path, *(url(p) for p in paths), summary(), name=f"{name}.jsonl")
    out = tmp_path / "public"
    assert fix(src, out, "--shard-size", "10") == 0
    return {u.removeprefix(B): r["shard"] for u, r in fixes(out).items()}


def parts_for(paths: list[str], size: int) -> int:
    """The contract's B: the smallest power of two with at most `size` URLs a part."""
    b = 1
    while max(sum(1 for p in paths if h(p) % b == i) for i in range(b)) > size:
        b *= 2
    return b


def test_shards_keep_their_urls_across_nights(tmp_path: Path) -> None:
    first = [f"/blog/post-{i}" for i in range(30)]
    one = night(tmp_path, "one", first)
    b = parts_for(first, 10)
    assert b >= 4
    for path, shard in one.items():  # the part is 1 + (H mod B)
        assert shard == f"sitemap-blog-{1 + h(path) % b}.xml"
    assert max(list(one.values()).count(s) for s in set(one.values())) <= 10
    # the next night: three pages gone, two new; the rest stay in their files
    second = [p for p in first if p not in first[:3]] + ["/blog/new-1", "/blog/new-2"]
    assert parts_for(second, 10) == b
    two = night(tmp_path, "two", second)
    assert {p: two[p] for p in first[3:]} == {p: one[p] for p in first[3:]}
    # the earlier night's files that hold nothing now are gone; the reports replaced
    on_disk = {p.name for p in (tmp_path / "public").iterdir()}
    assert on_disk == {*two.values(), "sitemap_index.xml", "fix-report.jsonl", "fix-report.md"}


def test_links_only_pages_are_not_added(tmp_path: Path) -> None:
    src = report(tmp_path, url("/a"), url("/found-by-links", sitemap=None), summary())
    out = tmp_path / "o"
    assert fix(src, out) == 0
    assert list(fixes(out)) == [f"{B}/a"]


@pytest.mark.parametrize(
    "u",
    [
        "https://a.example/x/y?q=1#f",
        "https://a.example",
        "https://a.example?x=1",
        "https://a.example/",
        "http://h.example:8080/p#x?y",
        "https://a.example/p?",
        "https://a.example/%C3%BC/b;p?x=%20&y",
    ],
)
def test_path_query_reads_as_urlsplit_does(u: str) -> None:
    from urllib.parse import urlsplit

    from audit.fix.plan import path_query

    parts = urlsplit(u)
    assert path_query(u) == (parts.path, parts.query)
