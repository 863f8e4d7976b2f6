"""`content_changed` in url records over nights (contracts/fix.md), and `fix` taking it as
the strongest evidence for `<lastmod>`: crawls with --state and --content over loopback."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.crawlkit import Serve
from tests.state.test_lastmod_runs import MutatingSite, Page
from tests.state.test_store import crawl_argv, run_main

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


async def night(site: MutatingSite, state: Path, out: Path) -> dict[str, dict[str, Any]]:
    await run_main(crawl_argv(f"{site.base}/sitemap.xml", state, out, "--content"))
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {r["url"].rsplit("/", 1)[1]: r for r in records if r["type"] == "url"}


async def test_content_changed_over_nights_and_fix_uses_it(serve: Serve, tmp_path: Path) -> None:
    site = MutatingSite(
        {
            "edited": Page("The first text of the edited page.", "2024-01-01"),
            "steady": Page("A page whose text never changes.", "2024-01-02"),
            "cached": Page("A page served with an ETag.", "2024-01-03", etag='"v1"'),
            "missing": Page("", "2024-01-04", status=404),
        }
    )
    site.base = await serve(site)
    state = tmp_path / "s.sqlite"

    first = await night(site, state, tmp_path / "1.jsonl")
    assert {name: r["content_changed"] for name, r in first.items()} == dict.fromkeys(
        ("edited", "steady", "cached", "missing"), None
    )

    # night 2: the main text of one page changes; markup, tokens and footer of all change
    site.night = 2
    site.pages["edited"].text = "The second text of the edited page, quite different."
    second = await night(site, state, tmp_path / "2.jsonl")
    changed = second["edited"]["content_changed"]
    assert isinstance(changed, str) and STAMP.fullmatch(changed)
    assert second["steady"]["content_changed"] is None
    assert second["cached"]["content_changed"] is None  # a 304: the stored value
    assert second["missing"]["content_changed"] is None

    # night 3: nothing changes; the edited page keeps the time of its change
    site.night = 3
    third = await night(site, state, tmp_path / "3.jsonl")
    assert third["edited"]["content_changed"] == changed
    assert third["steady"]["content_changed"] is None

    out = tmp_path / "public"
    assert await run_main(["fix", str(tmp_path / "3.jsonl"), "--output", str(out)]) == 0
    fixes = {
        r["url"].rsplit("/", 1)[1]: r
        for r in map(json.loads, (out / "fix-report.jsonl").read_text().splitlines())
        if r["type"] == "fix"
    }
    assert (fixes["edited"]["lastmod"], fixes["edited"]["lastmod_source"]) == (changed, "content")
    assert fixes["steady"]["lastmod_source"] == "sitemap"
    assert fixes["missing"]["action"] == "dropped"
    # fixing from the state gives the same set as fixing from the report
    from_state = tmp_path / "from-state"
    assert await run_main(["fix", str(state), "--output", str(from_state)]) == 0
    for path in out.glob("sitemap*"):
        assert (from_state / path.name).read_bytes() == path.read_bytes(), path.name
