"""Per-host politeness held by the cluster's driver (audit/cluster/politeness.py): lanes and
batch sizes, and HostLanes sending one host's checks as batches with at most `lanes` in
flight, answering each check with its own answer, and failing a batch's checks together."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from audit.cluster.politeness import (
    BATCH_MAX,
    LANE_RATE,
    ClusterStopped,
    HostLanes,
    batch_size,
    lanes_for,
)


def test_lanes_and_batches() -> None:
    assert lanes_for(10.0, workers=4) == 1  # one batch per host in flight
    assert lanes_for(1200.0, workers=4) == 3  # above one lane's rate: more lanes
    assert lanes_for(float("inf"), workers=4) == 4
    assert batch_size(10.0) == 20 and batch_size(10.0, 7) == 7


def test_batches_follow_the_lane_s_rate_within_their_bounds() -> None:
    assert lanes_for(LANE_RATE, workers=8) == 1 and lanes_for(LANE_RATE + 1, workers=8) == 2
    assert lanes_for(10 * LANE_RATE, workers=3) == 3  # never more lanes than workers
    assert batch_size(float("inf")) == BATCH_MAX
    assert batch_size(10 * LANE_RATE) == BATCH_MAX
    assert batch_size(0.1) == 1


class Cluster:
    """A stand-in for the Dask side: records each batch and how many of a host's were out."""

    def __init__(self, fail_host: str | None = None, takes: float = 0.01) -> None:
        self.batches: list[tuple[str, list[int], float]] = []
        self.out: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self.fail_host = fail_host
        self.started = asyncio.Event()
        self.afters: list[float] = []
        self.takes = takes  # seconds a batch runs
        self.sent_while: list[int] = []  # batches of the host out when each one went

    async def send(
        self, host: str, items: list[dict[str, Any]], rate: float, lane: int = 0, after: float = 0
    ) -> list[Any]:
        self.batches.append((host, [i["n"] for i in items], rate))
        self.afters.append(after)
        self.sent_while.append(self.out.get(host, 0))
        self.out[host] = self.out.get(host, 0) + 1
        self.most[host] = max(self.most.get(host, 0), self.out[host])
        self.started.set()
        await asyncio.sleep(self.takes)
        self.out[host] -= 1
        if host == self.fail_host:
            raise OSError(f"{host}: the worker died")
        return [{"n": i["n"], "checked": True} for i in items]


async def test_one_host_at_a_slow_rate_is_one_lane_of_batches() -> None:
    cluster = Cluster()
    lanes = HostLanes(cluster.send, workers=4, batch=3)
    answers = await asyncio.gather(*(lanes.check("a", 10.0, {"n": n}) for n in range(7)))
    assert [a["n"] for a in answers] == list(range(7))  # each check gets its own answer
    sent = [b[1] for b in cluster.batches]
    assert [n for batch in sent for n in batch] == list(range(7))  # each once, in order
    # the first check goes out alone; the rest wait for it and leave as batches of 3
    assert sent == [[0], [1, 2, 3], [4, 5, 6]]
    assert cluster.most == {"a": 1}  # one batch of the host in flight at a time
    assert {b[2] for b in cluster.batches} == {10.0}
    await lanes.aclose()


async def test_a_fast_host_gets_more_lanes_and_hosts_do_not_wait_for_each_other() -> None:
    cluster = Cluster()
    lanes = HostLanes(cluster.send, workers=4, batch=2)
    fast = [lanes.check("fast", 3 * LANE_RATE, {"n": n}) for n in range(12)]
    slow = [lanes.check("slow", 1.0, {"n": n}) for n in range(4)]
    await asyncio.gather(*fast, *slow)
    assert cluster.most["fast"] == 3 and cluster.most["slow"] == 1
    assert {rate for host, _, rate in cluster.batches if host == "fast"} == {LANE_RATE}
    await lanes.aclose()


async def test_a_failed_batch_fails_its_checks_and_the_host_goes_on() -> None:
    cluster = Cluster(fail_host="bad")
    lanes = HostLanes(cluster.send, workers=2, batch=2)
    results = await asyncio.gather(
        *(lanes.check("bad", 1.0, {"n": n}) for n in range(3)),
        lanes.check("good", 1.0, {"n": 9}),
        return_exceptions=True,
    )
    assert all(isinstance(r, OSError) for r in results[:3])
    assert results[3] == {"n": 9, "checked": True}
    assert [b[1] for b in cluster.batches if b[0] == "bad"] == [[0], [1, 2]]
    await lanes.aclose()


async def test_closed_lanes_send_nothing_more() -> None:
    cluster = Cluster()
    lanes = HostLanes(cluster.send, workers=1, batch=1)
    first = asyncio.ensure_future(lanes.check("a", 1.0, {"n": 0}))
    second = asyncio.ensure_future(lanes.check("a", 1.0, {"n": 1}))
    await cluster.started.wait()
    await lanes.aclose()
    await asyncio.sleep(0.05)
    assert [b[1] for b in cluster.batches] == [[0]]  # the one in flight, no other
    assert not second.done()
    with pytest.raises(ClusterStopped):  # its batch was cut off: the check says so
        await first
    second.cancel()


async def test_a_lane_sends_its_next_full_batch_while_the_previous_one_runs() -> None:
    """ahead=2: a lane's next batch goes out while the previous one runs, once a full
    batch is waiting (a short one waits for the lane to be idle); never more than two of
    a lane out; every check answered once, in order."""
    cluster = Cluster()
    lanes = HostLanes(cluster.send, workers=4, batch=3, ahead=2)
    answers = await asyncio.gather(*(lanes.check("a", 10.0, {"n": n}) for n in range(8)))
    assert [a["n"] for a in answers] == list(range(8))
    sent = [b[1] for b in cluster.batches]
    # [0] alone (the lane idle), [1, 2, 3] ahead of it; [4, 5, 6] ahead of that when
    # [0] answers; [7], a short batch, only once the lane is idle again
    assert sent == [[0], [1, 2, 3], [4, 5, 6], [7]]
    assert cluster.most == {"a": 2}
    await lanes.aclose()


async def test_a_short_batch_never_goes_out_ahead() -> None:
    cluster = Cluster()
    lanes = HostLanes(cluster.send, workers=4, batch=3, ahead=2)
    answers = await asyncio.gather(*(lanes.check("a", 10.0, {"n": n}) for n in range(3)))
    assert [a["n"] for a in answers] == [0, 1, 2]
    assert [b[1] for b in cluster.batches] == [[0], [1, 2]]  # two waiting: not a full batch
    assert cluster.most == {"a": 1}
    await lanes.aclose()


async def test_checks_are_made_here_until_the_cluster_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """serve_here: a group's checks are made by the driver one by one, in order, at most
    `cap` at once, and no batch goes out; after go_remote (and SHORT_AHEAD, the group
    having no full batch waiting), the group's first batch waits for its last check made
    here to answer, and tells its worker to wait one interval (1/rate) after that answer
    before its first request; a group that comes later goes out in batches at once."""
    import audit.cluster.politeness as politeness

    monkeypatch.setattr(politeness, "SHORT_AHEAD", 0.05)
    cluster = Cluster()
    lanes = HostLanes(cluster.send, workers=2, batch=3)
    made: list[int] = []
    out, most = 0, 0
    release = asyncio.Event()
    starts: list[float] = []

    async def here(item: dict[str, Any]) -> dict[str, Any]:
        nonlocal out, most
        made.append(item["n"])
        starts.append(asyncio.get_running_loop().time())
        out += 1
        most = max(most, out)
        if item["n"] >= 4:
            await release.wait()
        await asyncio.sleep(0.05)
        out -= 1
        return {"n": item["n"], "here": True}

    lanes.serve_here(here, cap=10)
    first = await asyncio.gather(*(lanes.check("a", 50.0, {"n": n}) for n in range(4)))
    # started about one per interval (0.02 s at 50/s), not all four at once
    assert starts[3] - starts[0] >= 0.035
    assert first == [{"n": n, "here": True} for n in range(4)]
    assert made == [0, 1, 2, 3] and cluster.batches == []
    lanes.serve_here(here, cap=2)
    most = 0
    later = [asyncio.ensure_future(lanes.check("a", 50.0, {"n": n})) for n in range(4, 8)]
    await asyncio.sleep(0.1)
    assert made == [0, 1, 2, 3, 4, 5]  # two made here at once, two waiting
    assert most == 2  # at most `cap` at once
    lanes.go_remote()
    await asyncio.sleep(0.06)  # SHORT_AHEAD since the cluster is up
    b = await asyncio.gather(*(lanes.check("b", 50.0, {"n": n}) for n in range(3)))
    assert [a.get("here", False) for a in b] == [False] * 3  # "b": batches at once
    assert {b[0] for b in cluster.batches} == {"b"}  # "a": never a batch beside its checks
    release.set()
    answers = await asyncio.gather(*later)
    assert [a["n"] for a in answers] == [4, 5, 6, 7]
    assert [a.get("here", False) for a in answers] == [True, True, False, False]
    assert [b[1] for b in cluster.batches if b[0] == "a"] == [[6, 7]]
    assert 0.01 < cluster.afters[-1] <= 0.02  # one interval at 50/s, less the time since
    await lanes.aclose()


async def test_a_short_batch_goes_out_ahead_once_the_lane_s_last_batch_is_out_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A group's last URLs (fewer than a batch) go out ahead SHORT_AHEAD after the lane's
    last batch, rather than once the lane is idle: no round trip without a request at
    the end of a group; still never more than `ahead` out."""
    import audit.cluster.politeness as politeness

    monkeypatch.setattr(politeness, "SHORT_AHEAD", 0.05)
    cluster = Cluster(takes=0.3)
    lanes = HostLanes(cluster.send, workers=4, batch=3, ahead=2)
    answers = await asyncio.gather(*(lanes.check("a", 10.0, {"n": n}) for n in range(8)))
    assert [a["n"] for a in answers] == list(range(8))
    # [0] alone and [1, 2, 3] ahead (full); both answered, [4, 5, 6] on the idle lane;
    # then [7], short, goes ahead of it 0.05 s later, not once it has answered
    assert [b[1] for b in cluster.batches] == [[0], [1, 2, 3], [4, 5, 6], [7]]
    assert cluster.sent_while == [0, 1, 0, 1] and cluster.most == {"a": 2}
    await lanes.aclose()
