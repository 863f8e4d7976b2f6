"""`migrate OLD NEW --intent FILE` (contracts/nights.md section 3, "migrate --intent") over
two loopback servers: each old URL a row applies to is judged on the answer migrate gets
on NEW; a broken row replaces the migrate-* finding, a satisfied `gone` is the outcome
`gone`, a redirect row's target beats --map; URLs without a row are judged as before."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.core.config import CrawlConfig
from audit.migrate.auditor import MigrationRecorder, MigrationStats, run_migrate
from audit.migrate.redirect_map import NO_MAP, RedirectMap, parse_map
from audit.rules.intent import IntentPlan, load_intent
from tests.crawlkit import FAST, HTML, XML, Run, Serve, Site, urlset
from tests.migrate.test_auditor import PAGE, moved, outcome_of, outcomes


async def two_sites(serve: Serve) -> tuple[Site, str, Site, str]:
    old, new = Site(), Site()
    return old, await serve(old), new, await serve(new)


def plan(tmp_path: Path, text: str) -> IntentPlan:
    path = tmp_path / "intent.csv"
    path.write_text(text)
    return load_intent(path)


async def run_with(
    old: str, new: str, intent: IntentPlan | None, redirect_map: RedirectMap = NO_MAP
) -> Run:
    records: list[dict[str, Any]] = []
    recorder = MigrationRecorder([records.append], MigrationStats(new))
    outcome: dict[str, Any] = {}
    await asyncio.wait_for(
        run_migrate(
            old,
            new,
            CrawlConfig(**FAST),
            recorder,
            redirect_map=redirect_map,
            outcome=outcome,
            intent=intent,
        ),
        timeout=50,
    )
    recorder.emit(recorder.summary())
    return Run(records, outcome)


async def test_rows_judged_on_the_new_site(serve: Serve, tmp_path: Path) -> None:
    old, o, new, n = await two_sites(serve)
    paths = ["/a-gone", "/b-gone-home", "/c-keep", "/c-keep-noindex", "/d-moved", "/e-chain"]
    paths += ["/f-no-row"]
    old.routes["/s.xml"] = (200, XML, urlset(*(o + p for p in paths)))
    new.routes.update(
        {
            "/": PAGE,
            "/a-gone": (404, HTML, "no"),
            "/b-gone-home": moved("/"),
            "/c-keep": PAGE,
            "/c-keep-noindex": (200, {**HTML, "X-Robots-Tag": "noindex"}, "<html></html>"),
            "/d-moved": moved("/d-new"),
            "/d-new": PAGE,
            "/e-chain": moved("/e-mid"),
            "/e-mid": moved("/e-new"),
            "/e-new": PAGE,
            "/f-no-row": (404, HTML, "no"),
        }
    )
    intent = plan(
        tmp_path,
        "url,action,target\n"
        "/a-gone,gone\n"
        f"{o}/b-gone-home,gone\n"
        "/c-keep*,keep\n"
        "/d-moved,redirect,/d-new\n"
        "/e-chain,redirect,/e-new\n",
    )
    run = await run_with(o + "/s.xml", n, intent)
    assert outcome_of(run, o + "/a-gone") == "gone"
    assert outcome_of(run, o + "/b-gone-home") == "intent-violated"
    assert outcome_of(run, o + "/c-keep") == "ok"
    assert outcome_of(run, o + "/c-keep-noindex") == "intent-violated"
    # a path target is resolved on the old origin, so compared by path and query on NEW
    assert outcome_of(run, o + "/d-moved") == "ok"
    assert outcome_of(run, o + "/e-chain") == "chain"
    assert outcome_of(run, o + "/f-no-row") == "not-found"  # the control: as before

    by_url: dict[str, list[str]] = {}
    for f in run.of("finding"):
        by_url.setdefault(f["url"], []).append(f["code"])
    assert o + "/a-gone" not in by_url  # a satisfied gone: no migrate-not-found
    assert by_url[o + "/b-gone-home"] == ["intent-violated"]  # instead of migrate-to-homepage
    assert by_url[o + "/c-keep-noindex"] == ["intent-violated"]  # instead of migrate-noindex
    assert by_url[o + "/e-chain"] == ["migrate-chain"]
    assert by_url[o + "/f-no-row"] == ["migrate-not-found"]
    messages = {f["url"]: f["message"] for f in run.findings("intent-violated")}
    assert (
        messages[o + "/b-gone-home"] == f"intent gone ({intent.file}:3), served 301 -> {n}/ (200)"
    )
    assert messages[o + "/c-keep-noindex"] == (
        f"intent keep ({intent.file}:4), served 200, not indexable (noindex)"
    )
    assert run.url(o + "/a-gone")["intent"] == {"action": "gone", "line": 2, "ok": True}

    assert outcomes(run) == {"gone": 1, "intent-violated": 2, "ok": 2, "chain": 1, "not-found": 1}
    block = run.summary["migration"]["outcomes"]
    assert block["gone"] == {"count": 1, "percent": 14.3}
    assert block["intent-violated"] == {"count": 2, "percent": 28.6}
    assert run.summary["intent"] == {
        "file": intent.file,
        "rows": 5,
        "keep": {"judged": 2, "violated": 1},
        "redirect": {"judged": 2, "violated": 0},
        "gone": {"judged": 2, "violated": 1},
    }


async def test_a_redirect_target_beats_the_map(serve: Serve, tmp_path: Path) -> None:
    old, o, new, n = await two_sites(serve)
    old.routes["/s.xml"] = (200, XML, urlset(o + "/moved", o + "/wrong"))
    new.routes.update(
        {"/moved": moved("/planned"), "/wrong": moved("/mapped"), "/planned": PAGE, "/mapped": PAGE}
    )
    redirect_map = parse_map([f"/moved,{n}/mapped\n", f"/wrong,{n}/mapped\n"], "m.csv")
    intent = plan(tmp_path, f"/moved,redirect,{n}/planned\n/wrong,redirect,/planned\n")
    run = await run_with(o + "/s.xml", n, intent, redirect_map=redirect_map)
    assert outcome_of(run, o + "/moved") == "ok"
    assert run.url(o + "/moved")["expected"] == f"{n}/planned"
    assert outcome_of(run, o + "/wrong") == "intent-violated"
    assert [f["message"] for f in run.findings("intent-violated")] == [
        f"intent redirect to {o}/planned ({intent.file}:2), served 301 -> {n}/mapped (200)"
    ]
    assert run.findings("migrate-wrong-target") == []

    # without the intent file the map decides, as before
    run = await run_with(o + "/s.xml", n, None, redirect_map=redirect_map)
    assert outcome_of(run, o + "/moved") == "wrong-target"
    assert outcome_of(run, o + "/wrong") == "ok"
    assert "intent" not in run.summary
    assert all("intent" not in r for r in run.of("url"))


async def test_urls_with_a_row_are_left_out_of_the_mass_home_page_finding(
    serve: Serve, tmp_path: Path
) -> None:
    old, o, new, n = await two_sites(serve)
    kept = [f"/kept/{i}" for i in range(20)]
    homed = ["/home-1", "/home-2"]
    old.routes["/s.xml"] = (200, XML, urlset(*(o + p for p in kept + homed)))
    new.routes["/"] = PAGE
    for p in kept:
        new.routes[p] = PAGE
    for p in homed:
        new.routes[p] = moved("/")
    site_wide = f"{n}/"

    run = await run_with(o + "/s.xml", n, None)
    assert [f for f in run.findings("migrate-to-homepage") if f["url"] == site_wide] == []

    run = await run_with(o + "/s.xml", n, plan(tmp_path, "/kept/*,keep\n"))
    mass = [f for f in run.findings("migrate-to-homepage") if f["url"] == site_wide]
    assert len(mass) == 1
    assert mass[0]["message"].startswith(
        "2 of 2 old URLs without an --intent row (100.0%) redirect to the new home page"
    )


async def test_a_malformed_file_stops_migrate_before_any_request(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, o, new, n = await two_sites(serve)
    bad = tmp_path / "intent.csv"
    bad.write_text("/a,keep\n/b,gone,/c\n")
    argv = ["migrate", o + "/s.xml", n, "--intent", str(bad), "--no-progress"]
    code = await asyncio.to_thread(main, argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert f"{bad}:2: a target is allowed only on a redirect row" in err
    assert old.hits == [] and new.hits == []


async def test_cli_migrate_with_intent(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, o, new, n = await two_sites(serve)
    old.routes["/s.xml"] = (200, XML, urlset(o + "/a", o + "/b"))
    new.routes.update({"/a": (410, HTML, "gone"), "/b": PAGE})
    path = tmp_path / "intent.csv"
    path.write_text("/a,gone\n/b,gone\n")
    argv = ["migrate", o + "/s.xml", n, "--intent", str(path), "--no-progress"]
    code = await asyncio.to_thread(main, [*argv, "--format", "text"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"intent gone ({path}:2), served 200" in out
    assert "\nIntent\n" in out
    assert "gone              2          1    50.0%" in out
    for fmt, row in (
        ("markdown", "| `gone` | 2 | 1 | 50.0% |"),
        ("html", '<td class="mono">gone</td><td class="num">2</td><td class="num">1</td>'),
    ):
        assert await asyncio.to_thread(main, [*argv, "--format", fmt]) == 1
        out = capsys.readouterr().out
        assert row in out
        assert "intent-violated" in out
