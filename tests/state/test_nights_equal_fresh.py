"""Night N on an unchanged site reports what a fresh run reports (nights.md section 1).

Over generated sites (tests/state/nightsite.py, drawn from a seed: deploy stamps or
content dates, <lastmod> behind, equal or ahead, 404s, redirects, noindex, canonicals),
nights 1, 2 and 5 of `crawl --state` give, record by record, the findings and url
records of a run without state, whether the server answered 200 or 304; so does a run
killed with SIGKILL at a random point and resumed, and `--changed-only`. `diff` of any
two shows nothing new and nothing fixed. Only the over-time codes and the fields that
describe the run (`elapsed_ms`, `carried`, counters of the summary) may differ.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from audit.state.diff import diff_reports
from tests.crawlkit import Serve
from tests.state.nightsite import NightSite
from tests.state.test_store import run_main

OVER_TIME = frozenset(
    {"lastmod-frozen", "lastmod-churn", "index-lastmod-frozen", "index-lastmod-churn"}
)
# Fields of how this run asked, not of the site: timing, the carried marker, and the
# requests one answer took (--content without a state confirms a 404 HEAD with a GET; with
# a state it reads every page with one GET: 2 attempts or 1 for the same 404)
# `content_changed` (--state with page bodies: the main text changed since the last run)
# is an over-time field, as the over-time codes are: a run without state has none.
RUN_FIELDS = frozenset({"elapsed_ms", "carried", "attempts", "content_changed"})
SUMMARY_FIELDS = ("sitemaps", "urls", "entries")
VARIANTS = {
    "head": [],
    "page-checks": ["--page-checks"],
    "content": ["--content"],
    "links": ["--links"],
    "agents": ["--agents", "all", "--page-checks"],
}


def _argv(target: str, out: Path, *extra: str) -> list[str]:
    return [
        "crawl",
        target,
        "--format",
        "jsonl",
        "--output",
        str(out),
        "--no-progress",
        "--rate",
        "unlimited",
        "--fail-on",
        "never",
        "--retries",
        "0",
        *extra,
    ]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def truth(path: Path) -> dict[str, Any]:
    """What a report says about the site: findings as (code, severity, url, sitemap,
    line) with their counts, url records without the run's own fields, the summary's
    counts; the over-time codes left out."""
    findings: dict[tuple[Any, ...], int] = {}
    urls: dict[str, dict[str, Any]] = {}
    summary: dict[str, Any] = {}
    for r in _records(path):
        kind = r["type"]
        if kind == "finding" and r["code"] not in OVER_TIME:
            key = (r["code"], r["severity"], r["url"], r["sitemap"], r["line"])
            findings[key] = findings.get(key, 0) + 1
        elif kind == "url":
            assert r["url"] not in urls, f"two records for {r['url']}"
            urls[r["url"]] = {k: v for k, v in r.items() if k not in RUN_FIELDS}
        elif kind == "summary":
            summary = {k: r.get(k) for k in SUMMARY_FIELDS}
            by_code = {k: v for k, v in r["by_code"].items() if k not in OVER_TIME}
            summary["by_code"] = by_code
            summary["partial"] = bool(r.get("partial") or r.get("interrupted"))
    return {"findings": findings, "urls": urls, "summary": summary}


def assert_same(night: dict[str, Any], fresh: dict[str, Any], what: str) -> None:
    lost = set(fresh["findings"]) - set(night["findings"])
    added = set(night["findings"]) - set(fresh["findings"])
    assert not lost and not added, f"{what}: lost {sorted(lost)[:5]}, added {sorted(added)[:5]}"
    assert night["findings"] == fresh["findings"], what
    for url, record in fresh["urls"].items():
        assert night["urls"].get(url) == record, f"{what}: {url}"
    assert night["urls"].keys() == fresh["urls"].keys(), what
    assert night["summary"] == fresh["summary"], what


def assert_diff_quiet(old: Path, new: Path) -> None:
    """`diff OLD NEW`: no finding new or fixed (over-time codes aside), no URL added or
    removed, no status changed."""
    buf = io.StringIO()
    diff_reports(old, new, buf, fmt="jsonl")
    rows = [json.loads(line) for line in buf.getvalue().splitlines()]
    moved = [
        r
        for r in rows
        if (
            r["type"] == "diff-finding"
            and r["change"] in ("new", "fixed")
            and r["code"] not in OVER_TIME
        )
        or r["type"] in ("diff-url", "diff-status")
    ]
    assert not moved, moved[:3]


async def _site(serve: Serve, seed: int, **kw: Any) -> tuple[NightSite, str]:
    site = NightSite(seed, **kw)
    site.base = await serve(site.app())
    return site, site.base + "/sitemap.xml"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
async def test_night_n_equals_a_fresh_run(
    serve: Serve, tmp_path: Path, seed: int, variant: str
) -> None:
    extra = VARIANTS[variant]
    site, target = await _site(serve, seed, deploy=seed % 2 == 0)
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out, *extra))
    fresh = truth(fresh_out)
    assert fresh["findings"], "a generated site always has something to report"
    state = tmp_path / "s.sqlite"
    outs = {}
    for night in range(1, 6):
        out = outs[night] = tmp_path / f"n{night}.jsonl"
        site.not_modified.clear()
        await run_main(_argv(target, out, "--state", str(state), *extra))
        if night in (1, 2, 5):
            assert_same(truth(out), fresh, f"seed {seed} {variant} night {night}")
    # (the link crawl reads every page: a --links night asks nothing conditionally)
    assert bool(site.not_modified) is (variant != "links"), "304s: the case under test"
    for a, b in ((1, 2), (1, 5), (2, 5)):
        assert_diff_quiet(outs[a], outs[b])
    assert_diff_quiet(fresh_out, outs[5])


@pytest.mark.parametrize("variant", ["head", "content", "page-checks"])
@pytest.mark.parametrize("seed", [1, 2])
async def test_a_night_with_carried_child_sitemaps_equals_a_fresh_run(
    serve: Serve, tmp_path: Path, seed: int, variant: str
) -> None:
    """An index whose children answer 304 on later nights: the children are carried (not
    read again), their URLs checked as listed, and the report is the fresh run's."""
    extra = VARIANTS[variant]
    site, target = await _site(serve, seed, deploy=seed % 2 == 0, index=True)
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out, *extra))
    fresh = truth(fresh_out)
    state = tmp_path / "s.sqlite"
    for night in range(1, 4):
        out = tmp_path / f"n{night}.jsonl"
        site.not_modified.clear()
        await run_main(_argv(target, out, "--state", str(state), *extra))
        assert_same(truth(out), fresh, f"seed {seed} {variant} index night {night}")
        if night > 1:
            assert _records(out)[-1].get("sitemaps_carried") == 2
    assert site.not_modified["/child-0.xml"] == 1  # the last night's children: 304


@pytest.mark.parametrize("seed", [5, 6])
async def test_changed_only_on_an_unchanged_site_equals_a_fresh_run(
    serve: Serve, tmp_path: Path, seed: int
) -> None:
    _, target = await _site(serve, seed, deploy=seed % 2 == 0)
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out, "--page-checks"))
    fresh = truth(fresh_out)
    state = tmp_path / "s.sqlite"
    for night in range(1, 5):
        out = tmp_path / f"n{night}.jsonl"
        await run_main(_argv(target, out, "--state", str(state), "--page-checks", "--changed-only"))
        assert_same(truth(out), fresh, f"seed {seed} --changed-only night {night}")


async def test_changed_only_requests_a_page_deleted_since(serve: Serve, tmp_path: Path) -> None:
    """Pages deleted after a night are seen by the next night that cannot vouch for them:
    a carried guess never stands for a second night."""
    site, target = await _site(serve, 7, n=30, deploy=False)
    state = tmp_path / "s.sqlite"
    for night in (1, 2):
        await run_main(
            _argv(target, tmp_path / f"n{night}.jsonl", "--state", str(state), "--changed-only")
        )
    gone = [p for p, page in site.pages.items() if page.status == 200][:5]
    for path in gone:
        site.pages[path].status = 404
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out))
    nights = [tmp_path / "n3.jsonl", tmp_path / "n4.jsonl"]
    for out in nights:
        await run_main(_argv(target, out, "--state", str(state), "--changed-only"))
    # by the second night after the deletion at the latest, every deleted page is a 404
    for path in gone:
        record = truth(nights[-1])["urls"][site.base + path]
        assert record["status"] == 404, path
    assert_same(truth(nights[-1]), truth(fresh_out), "--changed-only two nights on")


# --- a run killed and resumed reports what an uninterrupted run reports ---------------


async def _killed_run(
    target: str, state: Path, out: Path, site: NightSite, at: int, how: int, *extra: str
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        *_argv(target, out, "--state", str(state), "--rate", "200", "--concurrency", "4", *extra),
        stderr=asyncio.subprocess.PIPE,
    )
    for _ in range(2000):  # bounded: 20 s at most
        if sum(site.hits.values()) >= at or proc.returncode is not None:
            break
        await asyncio.sleep(0.01)
    if proc.returncode is None:
        proc.send_signal(how)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert b"Traceback" not in err, err.decode()


@pytest.mark.parametrize("variant", [["--page-checks"], ["--links"], ["--content"]])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
@pytest.mark.parametrize("seed", [11, 12, 13])
async def test_a_resumed_run_equals_an_uninterrupted_one(
    serve: Serve, tmp_path: Path, seed: int, how: int, variant: list[str]
) -> None:
    site, target = await _site(serve, seed, n=70, deploy=seed % 2 == 1)
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out, *variant))
    fresh = truth(fresh_out)
    rnd = random.Random(seed)
    state = tmp_path / "s.sqlite"
    # a first complete night, then a night killed at a random point (inside the host's
    # first 50 answers or after them), then the resumed run
    await run_main(_argv(target, tmp_path / "n1.jsonl", "--state", str(state), *variant))
    site.hits.clear()
    out = tmp_path / "n2.jsonl"
    await _killed_run(target, state, out, site, rnd.randint(3, 60), how, *variant)
    await run_main(_argv(target, out, "--state", str(state), *variant))
    assert_same(truth(out), fresh, f"seed {seed} {variant} resumed after signal {how}")
    assert_diff_quiet(tmp_path / "n1.jsonl", out)


@pytest.mark.parametrize("seed", [21, 22])
async def test_a_first_run_resumed_equals_an_uninterrupted_one(
    serve: Serve, tmp_path: Path, seed: int
) -> None:
    site, target = await _site(serve, seed, n=70, deploy=True)
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out))
    state, out = tmp_path / "s.sqlite", tmp_path / "n1.jsonl"
    site.hits.clear()
    await _killed_run(target, state, out, site, random.Random(seed).randint(3, 45), signal.SIGKILL)
    await run_main(_argv(target, out, "--state", str(state)))
    assert_same(truth(out), truth(fresh_out), f"seed {seed} first night resumed")
