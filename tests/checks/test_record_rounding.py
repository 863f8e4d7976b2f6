"""url_record's elapsed_ms: the cached round(ms, 1) must give exactly what round() gives."""

from __future__ import annotations

import math

from audit.checks.response import url_record
from audit.core.records import FetchResult
from audit.report.jsonl import dumps_line


def _elapsed(ms: float) -> float | None:
    result = FetchResult("http://a.test/", "http://a.test/", 200, elapsed_ms=ms)
    return url_record(result, sitemap=None, line=None, lastmod=None).elapsed_ms


def test_repeated_times_round_like_round() -> None:
    for ms in (6.000000001222361, 0.05, 0.15, 12.25, 12.35, 6.000000001222361, 0.15):
        assert _elapsed(ms) == round(ms, 1)


def test_negative_zero_keeps_its_sign_after_zero_was_seen() -> None:
    _elapsed(0.0)
    got = _elapsed(-0.0)
    assert got == 0.0 and math.copysign(1.0, got) < 0


def test_an_int_stays_an_int_after_the_equal_float_was_seen() -> None:
    assert repr(_elapsed(7.0)) == "7.0"
    got = _elapsed(7)  # an int, as a hand-built result may hold
    assert type(got) is int
    assert '"elapsed_ms":7,' in dumps_line({"elapsed_ms": got, "x": 1})
