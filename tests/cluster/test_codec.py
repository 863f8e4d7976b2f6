"""What crosses between the cluster's driver and a Dask worker (audit/cluster/codec.py):
plain data that pickles and reads back into equal records (records and findings are JSON
too)."""

from __future__ import annotations

import json
import pickle

from audit.cluster.codec import (
    answer_from,
    answer_to,
    fetch_from,
    fetch_to,
    findings_from,
    findings_to,
    pack,
    record_from,
    record_to,
    unpack,
)
from audit.core.records import FetchResult, Hop, UrlResult, finding

RECORD = UrlResult(
    "https://e.example/a",
    "https://e.example/sitemap.xml",
    12,
    200,
    "https://e.example/c",
    (Hop("https://e.example/a", 301), Hop("https://e.example/b", 308)),
    "2024-05-01",
    "Wed, 01 May 2024 10:00:00 GMT",
    "allowed",
    41.5,
    None,
    {"x_robots_tag": "noarchive"},
)


def _through_the_wire(data: object) -> object:
    return pickle.loads(pickle.dumps(json.loads(json.dumps(data))))


def test_a_url_record_round_trips() -> None:
    plain = record_to(RECORD)
    assert plain["redirects"] == [["https://e.example/a", 301], ["https://e.example/b", 308]]
    back = record_from(_through_the_wire(plain))  # type: ignore[arg-type]
    assert back == RECORD and back.redirects[1] == Hop("https://e.example/b", 308)


def test_findings_round_trip_with_their_severity_and_own_fields() -> None:
    found = [
        finding("url-redirect", "moved", url="https://e.example/a", sitemap="s.xml", line=3),
        finding("agent-blocked", "blocked", fields={"agent": "GPTBot", "count": 4}),
    ]
    plain = findings_to(found)
    assert [d["severity"] for d in plain] == [f.severity.value for f in found]
    back = findings_from(_through_the_wire(plain))  # type: ignore[arg-type]
    assert back == found
    assert [f.severity for f in back] == [f.severity for f in found]
    assert back[1].fields == {"agent": "GPTBot", "count": 4}


def test_a_fetch_result_round_trips() -> None:
    answer = FetchResult(
        "https://e.example/a",
        "https://e.example/a",
        503,
        (("retry-after", "5"),),
        (),
        elapsed_ms=3.0,
        method="GET",
        error=None,
        body_head=b"\x1f\x8b busy",
        attempts=3,
    )
    plain = fetch_to(answer)
    assert plain["headers"] == [["retry-after", "5"]]
    assert fetch_from(pickle.loads(pickle.dumps(plain))) == answer  # bytes stay bytes


def test_an_answer_crosses_as_a_tuple_in_one_blob_and_reads_back_equal() -> None:
    """A batch's answers: FetchResult's fields in order plus the page's facts, packed."""
    redirected = FetchResult(
        "https://e.example/a",
        "https://e.example/c",
        200,
        (("content-type", "text/html"), ("link", "<a>"), ("link", "<b>")),
        (Hop("https://e.example/a", 301), Hop("https://e.example/b", 308)),
        elapsed_ms=7.5,
        method="GET",
        body_head=b"<html>",
        attempts=2,
    )
    failed = FetchResult("https://e.example/x", "https://e.example/x", None, error="reset",
                         error_kind="reset")  # fmt: skip
    facts = [["noindex", True], ["canonical", "https://e.example/c"]]
    blob = pack([answer_to(redirected, facts), answer_to(failed)])
    assert isinstance(blob, bytes)
    (one, one_facts), (two, two_facts) = [answer_from(a) for a in unpack(blob)]
    assert one == redirected and one.redirects[1] == Hop("https://e.example/b", 308)
    assert one.header_all("link") == ["<a>", "<b>"]
    assert one_facts == facts
    assert two == failed and two.status is None and two_facts is None
