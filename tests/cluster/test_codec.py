"""What crosses between the cluster's driver and a Dask worker (audit/cluster/codec.py):
a batch's answers, packed in one blob, read back equal."""

from __future__ import annotations

from audit.cluster.codec import answer_from, answer_to, pack, unpack
from audit.core.records import FetchResult, Hop


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
