"""`sitemap-audit migrate`: old URLs judged on a new site, over two loopback servers.

Every test starts an 'old' and a 'new' server (the serve fixture, twice) with inline
handlers, runs the real migration (real HTTP) and reads its records.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.core.config import CrawlConfig
from audit.fixtures.server import REQUEST_LOG, make_app
from audit.migrate.auditor import MigrationRecorder, MigrationStats, run_migrate
from audit.migrate.redirect_map import NO_MAP, RedirectMap, load_map
from tests.crawlkit import FAST, HTML, TEXT, XML, Run, Serve, Site, urlset

ROOT = Path(__file__).resolve().parents[2]


def moved(location: str, status: int = 301) -> tuple[int, dict[str, str], str]:
    return status, {"Location": location}, ""


PAGE = (200, HTML, "<html><body>page</body></html>")


async def migrate(
    old: str,
    new: str,
    *,
    redirect_map: RedirectMap = NO_MAP,
    new_sitemap: str | None = None,
    **cfg: Any,
) -> Run:
    config = CrawlConfig(**{**FAST, **cfg})
    records: list[dict[str, Any]] = []
    recorder = MigrationRecorder([records.append], MigrationStats(new))
    outcome: dict[str, Any] = {}
    await asyncio.wait_for(
        run_migrate(
            old,
            new,
            config,
            recorder,
            redirect_map=redirect_map,
            new_sitemap=new_sitemap,
            outcome=outcome,
        ),
        timeout=50,
    )
    recorder.emit(recorder.summary())
    return Run(records, outcome)


def outcome_of(run: Run, url: str) -> str:
    return str(run.url(url)["outcome"])


def outcomes(run: Run) -> dict[str, int]:
    block = run.summary["migration"]["outcomes"]
    return {k: v["count"] for k, v in block.items() if v["count"]}


# --- every outcome ------------------------------------------------------------


async def test_each_outcome_without_a_map(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    paths = [
        "/ok-redirect",
        "/same",
        "/gone",
        "/deleted",
        "/temp",
        "/chain",
        "/home",
        "/error",
        "/loop",
        "/away",
        "/noindex",
        "/private/x",
    ]
    old.routes = {"/sitemap.xml": (200, XML, urlset(*(o + p for p in paths)))}
    new.routes = {
        "/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /private/\n"),
        "/": PAGE,
        "/ok-redirect": moved("/new/ok"),
        "/new/ok": PAGE,
        "/same": PAGE,
        "/gone": (404, HTML, "nope"),
        "/deleted": (410, HTML, "gone"),
        "/temp": moved("/new/temp", 302),
        "/new/temp": PAGE,
        "/chain": moved("/step"),
        "/step": moved(n + "/new/chain"),
        "/new/chain": PAGE,
        "/home": moved("/"),
        "/error": (500, HTML, "boom"),
        "/loop": moved("/loop2"),
        "/loop2": moved("/loop"),
        "/away": moved(o + "/elsewhere"),
        "/noindex": moved("/new/noindex"),
        "/new/noindex": (200, {**HTML, "X-Robots-Tag": "noindex"}, "x"),
    }
    old.routes["/elsewhere"] = PAGE
    run = await migrate(o + "/sitemap.xml", n, retries=0)
    assert run.outcome == {}
    got = {p: outcome_of(run, o + p) for p in paths}
    assert got == {
        "/ok-redirect": "ok",
        "/same": "ok",
        "/gone": "not-found",
        "/deleted": "not-found",
        "/temp": "temporary-redirect",
        "/chain": "chain",
        "/home": "to-homepage",
        "/error": "lost",
        "/loop": "lost",
        "/away": "lost",
        "/noindex": "noindex",
        "/private/x": "robots-blocked",
    }
    # the blocked URL was never requested on the new site
    assert "/private/x" not in new.paths()
    rec = run.url(o + "/ok-redirect")
    assert rec["checked_url"] == n + "/ok-redirect"
    assert rec["final_url"] == n + "/new/ok"
    assert rec["redirects"] == [{"url": n + "/ok-redirect", "status": 301}]
    codes = sorted(run.codes())
    assert codes == sorted(
        [
            "migrate-not-found",
            "migrate-not-found",
            "migrate-temporary-redirect",
            "migrate-chain",
            "migrate-to-homepage",
            "migrate-lost",
            "migrate-lost",
            "migrate-lost",
            "migrate-noindex",
            "migrate-robots-blocked",
        ]
    )
    # findings name the old URL and say where it was checked
    (f,) = run.findings("migrate-temporary-redirect")
    assert f["url"] == o + "/temp" and f["sitemap"] == o + "/sitemap.xml" and f["line"] == 7
    assert n + "/temp (302)" in f["message"]
    (away,) = [x for x in run.findings("migrate-lost") if x["url"] == o + "/away"]
    assert "leaves the new origin" in away["message"]
    m = run.summary["migration"]
    assert m["old_urls"] == 12
    assert m["outcomes"]["ok"] == {"count": 2, "percent": 16.7}
    assert m["ok_direct"] == 1 and m["ok_redirect"] == 1
    assert sum(v["percent"] for v in m["outcomes"].values()) == pytest.approx(100, abs=0.5)
    assert run.summary["by_code"]["migrate-lost"] == 3
    # one home-page redirect is reported per URL, not as a mass redirect
    assert len(run.findings("migrate-to-homepage")) == 1


async def test_temporary_and_chain_both_reported_outcome_is_the_worse(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a"))}
    new.routes = {"/a": moved("/b", 307), "/b": moved("/c", 301), "/c": PAGE}
    run = await migrate(o + "/s.xml", n)
    assert outcome_of(run, o + "/a") == "temporary-redirect"
    assert sorted(run.codes()) == ["migrate-chain", "migrate-temporary-redirect"]


async def test_old_validation_findings_are_left_to_validate(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    # a duplicate and no lastmod: validate's findings, not the migration's
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a", o + "/a"))}
    new.routes = {"/a": PAGE}
    run = await migrate(o + "/s.xml", n)
    assert run.codes() == []
    assert len(run.of("url")) == 1
    # loc-duplicate, lastmod-missing, and robots-missing of both hosts
    assert run.summary["migration"]["old_sitemap_findings_skipped"] == 4


async def test_text_file_of_urls_and_site_root_as_old(serve: Any, tmp_path: Path) -> None:
    new = Site()
    n = await serve(new)
    new.routes = {"/a": PAGE, "/b": moved("/", 302), "/": PAGE}
    urls = tmp_path / "old-urls.txt"
    urls.write_text("https://old.example/a\nhttps://old.example/b?x=1\n")
    run = await migrate(str(urls), n)
    assert outcome_of(run, "https://old.example/a") == "ok"
    assert outcome_of(run, "https://old.example/b?x=1") == "to-homepage"
    assert run.url("https://old.example/b?x=1")["checked_url"] == n + "/b?x=1"

    old = Site()
    o = await serve(old)
    old.routes = {
        "/robots.txt": (200, TEXT, f"User-agent: *\nSitemap: {o}/sm.xml\n"),
        "/sm.xml": (200, XML, urlset(o + "/a")),
    }
    run = await migrate(o + "/", n)
    assert [r["url"] for r in run.of("discovered")] == [o + "/sm.xml"]
    assert outcome_of(run, o + "/a") == "ok"


async def test_unreachable_old_sitemap_is_fatal(serve: Any) -> None:
    new = Site()
    n = await serve(new)
    run = await migrate("http://127.0.0.1:9/sitemap.xml", n, retries=0)
    assert "nothing could be checked" in run.outcome["fatal"]


async def test_an_unreachable_new_sitemap_is_fatal_and_named(serve: Any) -> None:
    old, new = Site(), Site()
    o, n = await serve(old), await serve(new)
    old.routes = {"/sm.xml": (200, XML, urlset(o + "/a"))}
    run = await migrate(o + "/sm.xml", n, new_sitemap="http://127.0.0.1:9/", retries=0)
    assert run.outcome["fatal"].startswith(
        "--new-sitemap: http://127.0.0.1:9/: site cannot be reached"
    )
    assert run.of("url") == []  # OLD was never judged


# --- mass redirects to the home page ------------------------------------------


async def test_many_urls_to_the_home_page(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    gone = [f"/old/{i}" for i in range(8)]
    kept = [f"/kept/{i}" for i in range(4)]
    old.routes = {"/s.xml": (200, XML, urlset(*(o + p for p in gone + kept)))}
    new.routes = {"/": PAGE, **{p: moved(n + "/") for p in gone}, **{p: PAGE for p in kept}}
    run = await migrate(o + "/s.xml", n)
    home = run.findings("migrate-to-homepage")
    per_url = [f for f in home if f["url"] != n + "/"]
    mass = [f for f in home if f["url"] == n + "/"]
    assert len(per_url) == 8
    assert len(mass) == 1
    assert mass[0]["message"].startswith("8 of 12 old URLs (66.7%) redirect to the new home page")
    assert run.summary["migration"]["outcomes"]["to-homepage"] == {"count": 8, "percent": 66.7}


async def test_home_page_itself_is_not_a_home_page_redirect(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/", o + "/index.html"))}
    new.routes = {"/": PAGE, "/index.html": moved("/")}
    run = await migrate(o + "/s.xml", n)
    assert outcome_of(run, o + "/") == "ok"
    assert outcome_of(run, o + "/index.html") == "to-homepage"


# --- the map ------------------------------------------------------------------


async def test_regex_map_with_backreferences_and_exact_rows(serve: Any, tmp_path: Path) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {
        "/s.xml": (
            200,
            XML,
            urlset(
                o + "/products/rake",
                o + "/products/hose",
                o + "/blog/2020/roses",
                o + "/about",
                o + "/unmapped",
                o + "/products/shears",
            ),
        )
    }
    new.routes = {
        "/": PAGE,
        "/products/rake": moved("/shop/rake"),
        "/shop/rake": PAGE,
        "/products/hose": moved("/shop/hoses"),  # the map says /shop/hose
        "/shop/hoses": PAGE,
        "/blog/2020/roses": moved("/journal/roses-2020"),
        "/journal/roses-2020": PAGE,
        "/about": moved("/"),  # the map says /about-us
        "/unmapped": PAGE,
        "/products/shears": PAGE,  # a 200 at the old path, not the mapped target
    }
    csv = tmp_path / "map.csv"
    csv.write_text(
        "old,new\n"
        f"{o}/about,{n}/about-us\n"
        f"regex:^/products/([a-z]+)$,{n}/shop/\\1\n"
        f"~^{o}/blog/(?P<year>\\d+)/(?P<slug>[a-z]+)$,https://prod.example/journal/\\g<slug>-\\g<year>\n"
    )
    rmap = load_map(csv)
    run = await migrate(o + "/s.xml", n, redirect_map=rmap)
    assert outcome_of(run, o + "/products/rake") == "ok"
    assert run.url(o + "/products/rake")["expected"] == n + "/shop/rake"
    assert run.url(o + "/products/rake")["map_line"] == 3
    assert outcome_of(run, o + "/products/hose") == "wrong-target"
    # a target on another origin (production) is compared by path on NEW (staging)
    assert outcome_of(run, o + "/blog/2020/roses") == "ok"
    assert run.url(o + "/blog/2020/roses")["expected"] == "https://prod.example/journal/roses-2020"
    assert outcome_of(run, o + "/about") == "to-homepage"
    assert outcome_of(run, o + "/unmapped") == "ok"
    assert outcome_of(run, o + "/products/shears") == "wrong-target"
    (wrong,) = [f for f in run.findings("migrate-wrong-target") if f["url"].endswith("/hose")]
    assert f"not the expected {n}/shop/hose" in wrong["message"]
    assert run.summary["migration"]["map"] == {"file": str(csv), "entries": 3, "unmapped": 1}


async def test_malformed_map_stops_the_cli_before_any_request(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"old,new\n{o}/a,{n}/b\nregex:^/x/(.*,{n}/y/\\1\n")

    def run_cli() -> int:
        return main(["migrate", o + "/s.xml", n, "--map", str(bad), "--no-progress"])

    code = await asyncio.to_thread(run_cli)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert f"{bad}:3: broken regular expression" in err
    assert old.hits == [] and new.hits == []

    missing = tmp_path / "nope.csv"
    code = await asyncio.to_thread(
        main, ["migrate", o + "/s.xml", n, "--map", str(missing), "--no-progress"]
    )
    assert code == 2
    assert f"{missing}: no such map file" in capsys.readouterr().err
    assert old.hits == [] and new.hits == []


# --- the new sitemap ----------------------------------------------------------


async def test_new_sitemap_coverage_and_redirecting_entries(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a", o + "/b", o + "/c", o + "/gone"))}
    new.routes = {
        "/new-sitemap.xml": (200, XML, urlset(n + "/new/a", n + "/new/b-old", n + "/c")),
        "/a": moved("/new/a"),
        "/new/a": PAGE,
        "/b": moved("/new/b"),
        "/new/b": PAGE,
        "/new/b-old": moved("/new/b"),  # the new sitemap lists a redirecting URL
        "/c": PAGE,
        "/gone": (404, HTML, ""),
    }
    run = await migrate(o + "/s.xml", n, new_sitemap=n + "/new-sitemap.xml")
    missing = run.findings("migrate-not-in-new-sitemap")
    assert [f["url"] for f in missing] == [o + "/b"]
    assert f"lands on {n}/new/b, which the new sitemap does not list" in missing[0]["message"]
    (redir,) = run.findings("migrate-new-sitemap-redirect")
    assert redir["url"] == n + "/new/b-old" and redir["sitemap"] == n + "/new-sitemap.xml"
    assert redir["line"] == 4
    block = run.summary["migration"]["new_sitemap"]
    assert block == {
        "url": n + "/new-sitemap.xml",
        "urls": 3,
        "redirecting": 1,
        "old_urls_missing": 1,
    }
    # only the old URLs are url records
    assert sorted(r["url"] for r in run.of("url")) == [o + p for p in ("/a", "/b", "/c", "/gone")]


async def test_new_sitemap_listing_production_urls_matches_staging_paths(serve: Any) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a"))}
    new.routes = {
        "/sm.xml": (200, XML, urlset("https://www.prod.example/new/a")),
        "/a": moved("/new/a"),
        "/new/a": PAGE,
    }
    run = await migrate(o + "/s.xml", n, new_sitemap=n + "/sm.xml", max_urls=1)
    assert run.findings("migrate-not-in-new-sitemap") == []


# --- the command line ---------------------------------------------------------


@pytest.mark.slow
async def test_cli_migrate_jsonl_exit_codes_and_bad_new(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a", o + "/b"))}
    new.routes = {"/a": moved("/x"), "/x": PAGE, "/b": moved("/y", 302), "/y": PAGE}
    out = tmp_path / "r.jsonl"
    argv = ["migrate", o + "/s.xml", n + "/", "--format", "jsonl", "-o", str(out)]
    code = await asyncio.to_thread(main, [*argv, "--no-progress", "--rate", "inf"])
    assert code == 0  # a temporary redirect is a warning
    code = await asyncio.to_thread(
        main, [*argv, "--no-progress", "--rate", "inf", "--fail-on", "warning"]
    )
    assert code == 1
    text = out.read_text()
    assert '"code":"migrate-temporary-redirect"' in text.replace(" ", "")
    code = await asyncio.to_thread(main, ["migrate", o + "/s.xml", n + "/shop", "--no-progress"])
    assert code == 2
    assert "an origin has no path" in capsys.readouterr().err
    code = await asyncio.to_thread(main, ["migrate", o + "/s.xml", n, "--no-progress"])
    assert code == 0
    report = capsys.readouterr().out
    assert f"migration: 2 old URLs checked on {n}" in report
    assert re.search(r"\n  ok +1 +50\.0%\n", report)
    assert re.search(r"\n  temporary-redirect +1 +50\.0%\n", report)


# --- the demo pair ------------------------------------------------------------


async def test_demo_migration(serve: Serve) -> None:
    """fixtures/demo (old) against fixtures/demo-new (new) with the demo map: the outcomes
    fixtures/demo-new/README.md promises."""
    o = await serve(make_app(ROOT / "fixtures" / "demo"))
    new_app = make_app(ROOT / "fixtures" / "demo-new")
    n = await serve(new_app)
    rmap = load_map(ROOT / "fixtures" / "migration" / "redirect-map.csv")
    run = await migrate(o + "/", n, redirect_map=rmap, new_sitemap=n + "/sitemap.xml")
    assert outcomes(run) == {
        "ok": 16,
        "temporary-redirect": 2,
        "chain": 1,
        "to-homepage": 6,
        "wrong-target": 2,
        "noindex": 1,
        "not-found": 2,
        "lost": 1,
        "robots-blocked": 1,
    }
    by_code = run.summary["by_code"]
    assert by_code == {
        "migrate-to-homepage": 7,
        "migrate-not-found": 2,
        "migrate-not-in-new-sitemap": 2,
        "migrate-temporary-redirect": 2,
        "migrate-wrong-target": 2,
        "migrate-chain": 1,
        "migrate-lost": 1,
        "migrate-new-sitemap-redirect": 1,
        "migrate-noindex": 1,
        "migrate-robots-blocked": 1,
    }
    assert all(
        not h.path.startswith("/private/") for h in new_app[REQUEST_LOG] if h.method != "GET"
    )
    assert "/private/staff-discounts" not in [h.path for h in new_app[REQUEST_LOG]]
