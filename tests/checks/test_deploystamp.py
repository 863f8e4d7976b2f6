"""Is a host's Last-Modified a deploy stamp (audit/checks/deploystamp.py)? 90% of its first
answers within one 10-minute window, at least 20 of them, unless they are the time of
their own request (a dynamic Last-Modified)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from audit.checks.deploystamp import (
    AT_REQUEST,
    MINIMUM,
    SAMPLE,
    SHARE,
    WINDOW,
    DeployStamp,
    clustered,
)

BUILD = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def _spread(n: int) -> list[datetime]:
    return [BUILD - i * DAY for i in range(n)]  # a day apart: content dates


def test_clustered_needs_the_minimum_and_the_share() -> None:
    assert not clustered([BUILD] * (MINIMUM - 1))
    assert clustered([BUILD] * MINIMUM)
    inside = int(SHARE * 40)  # 36 of 40 within the window
    near = [BUILD + WINDOW * (i / inside) for i in range(inside)]  # the window's ends included
    assert clustered(near + _spread(41)[-(40 - inside) :])
    assert not clustered(near[:-1] + _spread(42)[-(40 - inside + 1) :])  # 35 of 40
    assert not clustered(_spread(40))


def test_a_window_a_moment_too_wide_splits_the_cluster() -> None:
    half = [BUILD] * 10 + [BUILD + WINDOW + timedelta(seconds=1)] * 10
    assert not clustered(half)  # two groups of 50%, neither 90%


def test_the_host_is_decided_on_its_first_sample() -> None:
    host = DeployStamp()
    served = BUILD + DAY  # requested a day after the build
    decided = [host.add(BUILD + timedelta(seconds=i), served) for i in range(SAMPLE)]
    assert decided == [False] * (SAMPLE - 1) + [True]
    assert host.verdict is True and host.seen == SAMPLE
    assert host.span == "2024-05-01 10:00 to 2024-05-01 10:00 UTC"
    assert host.stamps == []  # nothing held once decided
    assert host.add(BUILD, served) is False and host.seen == SAMPLE


def test_times_of_their_own_request_are_dynamic_not_a_deploy() -> None:
    host = DeployStamp()
    for i in range(SAMPLE):
        now = BUILD + timedelta(seconds=i)
        host.add(now - AT_REQUEST / 2, now)
    assert host.verdict is False


def test_a_host_with_few_answers_is_decided_at_the_end() -> None:
    host = DeployStamp()
    for stamp in _spread(MINIMUM + 1):
        assert host.add(stamp) is False
    assert host.verdict is None
    assert host.decide() and host.verdict is False and host.seen == MINIMUM + 1
    empty = DeployStamp()
    assert empty.decide() and empty.verdict is False and empty.span == ""
