"""audit.front.migrate: a migration check's options checked before the first request (one
line each), its run over loopback, its --state store resumed, and its credentials scoped to
the new site only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.core.config import CrawlConfig
from audit.core.errors import AuditError, TargetError
from audit.front.migrate import MigrateRun, load_plan
from audit.front.options import RunOptions
from tests.crawlkit import HTML, XML, Serve, Site, urlset


@pytest.mark.parametrize(
    ("new", "kwargs", "message"),
    [
        ("https://staging.example.com/path", {}, "NEW 'https://staging.example.com/path': an "
         "origin has no path"),
        ("ftp://staging.example.com", {}, "NEW 'ftp://staging.example.com': not an http(s)"),
        ("https://staging.example.com", {"map": "missing.csv"}, "missing.csv"),
        ("https://staging.example.com", {"options": RunOptions(fresh=True)},
         "--fresh needs --state PATH"),
    ],
)  # fmt: skip
def test_everything_is_checked_before_a_request(
    new: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(AuditError) as caught:
        MigrateRun("https://www.example.com/sitemap.xml", new, CrawlConfig(), **kwargs)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_credentials_go_to_the_new_site_only() -> None:
    run = MigrateRun(
        "https://www.example.com/sitemap.xml",
        "https://staging.example.com",
        CrawlConfig(auth=("u", "p")),
    )
    assert run.config.credential_origins == ("https://staging.example.com",)


def test_a_malformed_intent_file_is_one_line(tmp_path: Path) -> None:
    plan = tmp_path / "intent.csv"
    plan.write_text("url,action\n/a,explode\n", encoding="utf-8")
    with pytest.raises(TargetError, match=f"{plan}:2"):
        load_plan(CrawlConfig(intent=str(plan)))
    assert load_plan(CrawlConfig()) is None


@pytest.mark.slow
async def test_a_run_judges_every_old_url_and_a_state_resumes(serve: Serve, tmp_path: Path) -> None:
    old, new = Site(), Site()
    old_base, new_base = await serve(old), await serve(new)
    old.routes = {"/sitemap.xml": (200, XML, urlset(*(f"{old_base}/p{i}" for i in range(3))))}
    new.routes = {"/p0": (200, HTML, "<p>zero</p>"), "/p1": (301, {"Location": "/p0"}, "")}
    state = str(tmp_path / "s.sqlite")

    async def once() -> tuple[MigrateRun, list[dict[str, Any]], dict[str, Any]]:
        records: list[dict[str, Any]] = []
        run = MigrateRun(
            old_base + "/sitemap.xml",
            new_base,
            CrawlConfig(retries=0),
            RunOptions(state=state, ignore=("migrate-not-found",)),
        )
        run.start([records.append])
        await run.run()
        summary = run.finish()
        assert run.close_state(interrupted=False) is None
        return run, records, summary

    run, records, summary = await once()
    assert summary["urls"] == 3 and run.fatal is None and run.replayed == 0
    codes = {r["code"] for r in records if r["type"] == "finding"}
    assert "migrate-not-found" not in codes and summary["ignored"] == ["migrate-not-found"]
    hits = len(new.hits)
    run, records, summary = await once()  # a complete run is not replayed: checked again
    assert summary["urls"] == 3 and len(new.hits) > hits


async def test_an_old_sitemap_that_cannot_be_read_is_fatal(serve: Serve) -> None:
    old = Site()
    old_base = await serve(old)  # answers 404 to everything
    run = MigrateRun(old_base + "/sitemap.xml", "https://staging.example.com", CrawlConfig())
    run.start([])
    await run.run()
    run.finish()
    assert run.fatal is not None and old_base in run.fatal
    assert run.close_state(interrupted=False) is None  # no store: nothing to close
