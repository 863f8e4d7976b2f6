"""One host's trouble never stalls the others (issues 22.2 and 27): a host that answers 429
with Retry-After waits in its own queue of the frontier, and the workers keep serving the
healthy host; the frontier's queues, turns, caps and pacing."""

from __future__ import annotations

import asyncio
import itertools
import math
from typing import Any

import pytest
from aiohttp import web

from audit.http.pace import TURN_CREDIT
from audit.pipeline.frontier import GroupFrontier
from tests.crawlkit import HTML, TEXT, XML, Site, audit, index, urlset


@pytest.mark.slow
async def test_a_backed_off_host_never_holds_the_healthy_ones_back(serve: Any) -> None:
    slow, healthy = Site(), Site()
    slow_base, healthy_base = await serve(slow), await serve(healthy)
    b_pages = [f"{healthy_base}/b{i}" for i in range(1000)]

    def healthy_seen() -> int:
        return sum(1 for p in healthy.paths() if p.startswith("/b"))

    async def busy(request: web.Request) -> web.StreamResponse:
        # 429 for as long as the healthy host has not had all its pages: without lanes the
        # workers wait on this host's Retry-After and the run never gets there (the test's
        # deadline fails it); with lanes the healthy host is served meanwhile.
        if healthy_seen() < len(b_pages):
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(status=200, headers=HTML)

    slow.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(*[f"{slow_base}/a{i}" for i in range(40)])),
        **{f"/a{i}": busy for i in range(40)},
    }
    healthy.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(*b_pages)),
        **{f"/b{i}": (200, HTML, "") for i in range(1000)},
    }
    root = Site(
        routes={
            "/index.xml": (
                200,
                XML,
                index(f"{slow_base}/sitemap.xml", f"{healthy_base}/sitemap.xml"),
            )
        }
    )
    root_base = await serve(root)
    run = await audit(f"{root_base}/index.xml", retries=5, concurrency=16, deadline=45)
    assert all(run.url(p)["status"] == 200 for p in b_pages)
    assert healthy_seen() == len(b_pages)  # each healthy page asked once (HEAD answered 200)
    for i in range(40):  # every URL of the busy host still has exactly one record
        run.url(f"{slow_base}/a{i}")


class _Pace:
    def __init__(self, rate: float = math.inf, not_before: float = 0.0) -> None:
        self.rate = rate
        self.not_before = not_before


async def test_groups_take_turns_and_each_host_keeps_its_order() -> None:
    frontier: GroupFrontier[str] = GroupFrontier()
    a, b = frontier.lane("a", "a", _Pace()), frontier.lane("b", "b", _Pace())
    for n in range(3):
        assert frontier.try_put(a, f"a{n}")
    assert frontier.try_put(b, "b0")
    taken = [frontier.take() for _ in range(4)]
    assert taken == ["a0", "b0", "a1", "a2"] and frontier.take() is None


async def test_a_group_at_its_cap_waits_for_a_check_to_be_done() -> None:
    frontier: GroupFrontier[str] = GroupFrontier(cap=2)
    a, b = frontier.lane("a", "g", _Pace()), frontier.lane("b", "h", _Pace())
    for n in range(4):
        frontier.try_put(a, f"a{n}")
    assert [frontier.take(), frontier.take()] == ["a0", "a1"]
    assert frontier.take() is None  # two in flight: the group waits, holding no worker
    frontier.try_put(b, "b0")
    assert frontier.take() == "b0"  # another group goes meanwhile
    frontier.done(a)
    assert frontier.take() == "a2" and frontier.take() is None


async def test_two_hosts_of_one_group_share_its_cap_and_take_turns() -> None:
    frontier: GroupFrontier[str] = GroupFrontier(cap=2)
    pace = _Pace()
    a, b = frontier.lane("a", "g", pace), frontier.lane("b", "g", pace)
    for n in range(2):
        frontier.try_put(a, f"a{n}")
        frontier.try_put(b, f"b{n}")
    assert [frontier.take(), frontier.take(), frontier.take()] == ["a0", "b0", None]


async def test_a_group_is_paced_at_its_rate_and_a_deferred_one_sleeps() -> None:
    frontier: GroupFrontier[str] = GroupFrontier()
    loop = asyncio.get_running_loop()
    fast, deferred = _Pace(rate=50.0), _Pace(not_before=loop.time() + 0.3)
    a, b = frontier.lane("a", "a", fast), frontier.lane("b", "b", deferred)
    for n in range(6):
        frontier.try_put(a, f"a{n}")
    frontier.try_put(b, "b0")
    frontier.close()
    taken: list[tuple[str, float]] = []
    start = loop.time()
    while (job := await asyncio.wait_for(frontier.get(), 2)) is not None:
        taken.append((job, loop.time() - start))
    order = [job for job, _ in taken]
    assert order[:6] == [f"a{n}" for n in range(6)] and order[6] == "b0"
    gaps = [t2 - t1 for (_, t1), (_, t2) in itertools.pairwise(taken[:6])]
    # 1/50 s apart, never a burst: a turn taken a little late (at most TURN_CREDIT of an
    # interval) keeps the schedule, so the next may come that much sooner (pace.next_due),
    # and k turns after the first never come before k - TURN_CREDIT intervals
    least = (1 - TURN_CREDIT) / 50 - 0.001
    assert all(gap >= least for gap in gaps), gaps
    assert taken[5][1] - taken[0][1] >= (5 - TURN_CREDIT) / 50 - 0.001
    assert taken[6][1] >= 0.29  # not before its Retry-After


async def test_idle_waits_till_every_job_put_is_taken_and_done() -> None:
    frontier: GroupFrontier[str] = GroupFrontier()
    a = frontier.lane("a", "a", None)
    await asyncio.wait_for(frontier.idle(), 1)  # nothing put: idle at once
    frontier.try_put(a, "a0")
    frontier.try_put(a, "a1")
    idle = asyncio.create_task(frontier.idle())
    assert frontier.take() == "a0"
    frontier.done(a)
    await asyncio.sleep(0)
    assert not idle.done()  # a1 is still queued
    assert frontier.take() == "a1"
    await asyncio.sleep(0)
    assert not idle.done() and frontier.busy == 1  # a1 is being checked
    frontier.try_put(a, "a2")  # a job put meanwhile (a page the link crawl found) counts too
    frontier.done(a)
    await asyncio.sleep(0)
    assert not idle.done()
    assert frontier.take() == "a2"
    frontier.done(a)
    await asyncio.wait_for(idle, 1)
    assert frontier.busy == 0 and len(frontier) == 0


async def test_a_full_lane_holds_its_producer_till_the_low_water_mark() -> None:
    frontier: GroupFrontier[int] = GroupFrontier(per_lane=4, low=1, soft=0)
    a, b = frontier.lane("a", "a", None), frontier.lane("b", "b", None)
    produced: list[int] = []

    async def producer() -> None:
        for n in range(10):
            await frontier.put(a, n)
            produced.append(n)

    task = asyncio.create_task(producer())
    await asyncio.sleep(0)
    assert produced == [0, 1, 2, 3]  # full: the producer waits
    assert frontier.try_put(b, 100)  # another host's queue has room
    assert [frontier.take(), frontier.take()] == [0, 100]
    frontier.done(a)
    frontier.done(b)
    assert frontier.take() == 1
    await asyncio.sleep(0)
    assert len(produced) == 4  # above the low-water mark: still waiting
    assert frontier.take() == 2
    await asyncio.sleep(0)
    assert produced == list(range(7))  # refilled in one go
    frontier.close()
    rest = []
    while (job := await asyncio.wait_for(frontier.get(), 1)) is not None:
        rest.append(job)
        if not task.done():
            await asyncio.sleep(0)
    await task
    assert rest == list(range(3, 10))


async def test_below_the_soft_total_a_full_lane_takes_more_so_every_host_starts() -> None:
    # one sitemap listing host a's URLs, then host b's: b is queued before a is drained
    frontier: GroupFrontier[str] = GroupFrontier(per_lane=2, low=1, soft=5, total=8)
    a, b = frontier.lane("a", "a", None), frontier.lane("b", "b", None)
    assert [frontier.try_put(a, f"a{n}") for n in range(6)] == [True] * 5 + [False]
    assert frontier.try_put(b, "b0") and frontier.take() == "a0" and frontier.take() == "b0"
    assert [frontier.try_put(b, f"b{n}") for n in range(1, 4)] == [True, True, False]
    assert len(frontier) == 6  # at the soft total, a full lane waits for its own drain
    c = frontier.lane("c", "c", None)
    assert frontier.try_put(c, "c0") and frontier.try_put(c, "c1")  # not a full lane
    assert not frontier.try_put(c, "c2")  # full, past the soft total
    assert len(frontier) == 8 and not frontier.try_put(frontier.lane("d", "d", None), "d0")


async def test_idle_workers_all_end_once_closed_and_empty() -> None:
    frontier: GroupFrontier[str] = GroupFrontier()
    getters = [asyncio.create_task(frontier.get()) for _ in range(3)]
    await asyncio.sleep(0)
    frontier.try_put(frontier.lane("a", "a", None), "a0")
    frontier.close()
    results = await asyncio.wait_for(asyncio.gather(*getters), 1)
    assert results.count("a0") == 1 and results.count(None) == 2


async def test_starved_when_jobs_wait_and_no_worker_waits_for_one() -> None:
    frontier: GroupFrontier[str] = GroupFrontier()
    assert not frontier.starved()  # nothing queued
    frontier.try_put(frontier.lane("a", "a", None), "a0")
    assert frontier.starved()  # a job, and no worker waiting: one more would take it
    assert frontier.take() == "a0" and not frontier.starved()
    getter = asyncio.create_task(frontier.get())
    await asyncio.sleep(0)
    assert not frontier.starved()  # a worker waits, nothing queued
    frontier.try_put(frontier.lane("a", "a", None), "a1")
    assert await asyncio.wait_for(getter, 1) == "a1" and not frontier.starved()


@pytest.mark.slow
async def test_workers_grow_past_the_first_ones_while_jobs_wait(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --concurrency above WORKERS_FIRST (a cluster's driver window) starts that many
    workers and grows while jobs wait with every worker busy: 20 pages that answer after
    0.3 s are all in flight at once with 2 workers to start with, each requested once."""
    import audit.pipeline.auditor as auditor

    monkeypatch.setattr(auditor, "WORKERS_FIRST", 2)
    site = Site()
    base = await serve(site)
    in_flight, most = 0, 0

    async def page(request: web.Request) -> web.StreamResponse:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.3)
        in_flight -= 1
        return web.Response(text="ok", content_type="text/html")

    pages = [f"/p{i}" for i in range(20)]
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(*[base + p for p in pages])),
        **dict.fromkeys(pages, page),
    }
    run = await audit(base + "/sitemap.xml", concurrency=20, max_per_host=20, rate=0)
    assert sorted(r["url"] for r in run.of("url")) == sorted(base + p for p in pages)
    assert sorted(p for p in site.paths() if p.startswith("/p")) == sorted(pages)
    assert most > 2 * 2  # more than the first two workers (and their next round) at once
