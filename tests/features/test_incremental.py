"""`--changed-only` checks again what was wrong last time (DESIGN.md, second round): a URL
whose previous verdict carried an error or warning is requested whatever its <lastmod>;
only clean results are carried forward, and only for one night after a request verified
them (issue 28: a carried guess cannot vouch for the next night)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.crawlkit import Serve
from tests.state.test_store import Pages, crawl_argv, report, run_main, serve_pages


def _wrong(record: dict[str, Any]) -> bool:
    """An error or warning finding (robots-missing, info, comes with every run of Pages)."""
    return record["type"] == "finding" and record["severity"] in ("error", "warning")


async def test_changed_only_rechecks_a_restored_page(serve: Serve, tmp_path: Path) -> None:
    pages = Pages(6, lastmod="2024-05-01")
    pages.status["/p/1"] = 404
    pages.status["/p/2"] = 503
    target = await serve_pages(serve, pages)
    state = tmp_path / "s.sqlite"
    first = tmp_path / "1.jsonl"
    assert await run_main(crawl_argv(target, state, first)) == 1
    codes = {r["url"]: r["code"] for r in report(first) if _wrong(r)}
    assert codes == {pages.base + "/p/1": "url-not-found", pages.base + "/p/2": "url-server-error"}

    pages.status.clear()  # both pages restored; no <lastmod> moved
    pages.hits.clear()
    out = tmp_path / "2.jsonl"
    assert await run_main(crawl_argv(target, state, out, "--changed-only")) == 0
    assert sorted(pages.hits) == ["/p/1", "/p/2"]  # the clean ones were not requested
    assert not pages.conditional  # a wrong verdict is not asked about conditionally either
    records = report(out)
    urls = {r["url"]: r for r in records if r["type"] == "url"}
    for path in ("/p/1", "/p/2"):
        assert urls[pages.base + path]["status"] == 200
        assert not urls[pages.base + path].get("carried")
    assert sum(1 for r in urls.values() if r.get("carried")) == 4
    assert not [r for r in records if _wrong(r)]
    assert records[-1]["skipped_unchanged"] == 4


async def test_changed_only_keeps_checking_a_page_still_broken(
    serve: Serve, tmp_path: Path
) -> None:
    pages = Pages(3, lastmod="2024-05-01")
    pages.status["/p/0"] = 404
    target = await serve_pages(serve, pages)
    state = tmp_path / "s.sqlite"
    assert await run_main(crawl_argv(target, state, tmp_path / "1.jsonl")) == 1
    # night 3 asks again what night 2 carried without a request (a guess vouches for no
    # other night: nights.md, issue 28), and night 4 may carry what night 3 confirmed
    asked = {2: ["/p/0"], 3: ["/p/0", "/p/1", "/p/2"], 4: ["/p/0"]}
    for night in (2, 3, 4):
        pages.hits.clear()
        out = tmp_path / f"{night}.jsonl"
        assert await run_main(crawl_argv(target, state, out, "--changed-only")) == 1
        assert sorted(pages.hits) == asked[night]
        found = [r for r in report(out) if _wrong(r)]
        assert [(r["code"], r.get("carried")) for r in found] == [("url-not-found", None)]
