"""Did tonight's run get worse (audit/state/worse.py)? Judged against the previous complete
run of a real --state file written by two crawls of a loopback site, and without one."""

from __future__ import annotations

import json
from pathlib import Path

from audit.state.worse import NOTIFY_ON_DEFAULT, Snapshot, judge_night
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset
from tests.state.test_store import crawl_argv, run_main


def summary(**counts: int) -> dict[str, object]:
    return {"type": "summary", "findings": {"error": 0, "warning": 0, "info": 0, **counts}}


def test_without_a_previous_run_findings_at_the_level_make_it_worse(tmp_path: Path) -> None:
    for state in (None, str(tmp_path / "never-written.sqlite")):
        snapshot = Snapshot.take(state)
        assert snapshot.path is None
        assert judge_night(snapshot, state, summary(warning=3)) == judge_night(
            snapshot, state, summary()
        )  # below the default level: not worse
        night = judge_night(snapshot, state, summary(error=2))
        assert night.worse and night.baseline
        assert night.alerts == [
            f"ALERT: 2 finding(s) at or above --notify-on {NOTIFY_ON_DEFAULT}; "
            "no previous complete run to compare with"
        ]
        assert judge_night(snapshot, state, summary(warning=1), notify_on="warning").worse


def test_an_unfinished_or_empty_run_is_always_worse() -> None:
    none = Snapshot.take(None)
    cut = judge_night(none, None, {**summary(), "interrupted": True})
    assert cut.worse and "did not finish" in cut.alerts[0]
    fatal = judge_night(none, None, summary(), fatal=["no sitemap found"])
    assert fatal.worse and fatal.alerts == ["ALERT: nothing could be audited: no sitemap found"]


async def test_a_new_error_since_last_night(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    pages = [f"{base}/p{i}" for i in range(4)]
    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, urlset(*pages))}
    site.routes.update({f"/p{i}": (200, HTML, f"page {i}") for i in range(4)})
    state = tmp_path / "state.sqlite"
    target = base + "/sitemap.xml"

    async def night(n: int) -> dict[str, object]:
        out = tmp_path / f"{n}.jsonl"
        assert await run_main(crawl_argv(target, state, out, "--fail-on", "never")) == 0
        last: dict[str, object] = json.loads(out.read_text().splitlines()[-1])
        assert last["type"] == "summary"
        return last

    await night(1)
    snapshot = Snapshot.take(str(state))
    try:
        assert snapshot.path is not None and snapshot.path.is_file()
        same = judge_night(snapshot, str(state), await night(2))
        assert (same.worse, same.alerts, same.baseline) == (False, [], False)
    finally:
        snapshot.close()
    assert snapshot.path is None

    site.routes["/p2"] = (404, HTML, "gone")
    snapshot = Snapshot.take(str(state))
    try:
        worse = judge_night(snapshot, str(state), await night(3))
    finally:
        snapshot.close()
    assert worse.worse and not worse.baseline
    assert worse.alerts[0] == f"ALERT: 1 new finding(s) at or above --notify-on {NOTIFY_ON_DEFAULT}"
