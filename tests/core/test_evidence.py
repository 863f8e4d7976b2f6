"""A URL's evidence (audit/core/evidence.py): stored as one line of JSON and read back
equal, a 304 applying its validators to the stored answer, and text that is not evidence
read as none (the URL is then asked in full)."""

from __future__ import annotations

import json

import pytest

from audit.core.evidence import (
    Evidence,
    decode_evidence,
    encode_evidence,
    fetch_from,
    fetch_to,
    revalidated,
)
from audit.core.records import FetchResult, Hop

ANSWER = FetchResult(
    "https://e.example/a",
    "https://e.example/b",
    200,
    (
        ("content-type", "text/html"),
        ("etag", '"v1"'),
        ("last-modified", "Mon, 01 Jan 2024 00:00:00 GMT"),
    ),
    (Hop("https://e.example/a", 301),),
    elapsed_ms=31.5,
    method="GET",
    body_head=b"<html>\xff\x00 bytes of any value",
    attempts=2,
)


def test_a_fetch_result_round_trips_through_plain_data() -> None:
    plain = fetch_to(ANSWER)
    assert plain["headers"][0] == ["content-type", "text/html"]
    assert plain["redirects"] == [["https://e.example/a", 301]]
    assert fetch_from(plain) == ANSWER


@pytest.mark.parametrize("seen", ["answer", "304", "carried"])
def test_evidence_round_trips_through_its_text(seen: str) -> None:
    facts = (("canonical", "https://e.example/b"), ("hreflang", (("en", "https://e/en"),)), 3)
    stored = Evidence(ANSWER, facts, seen)  # type: ignore[arg-type]  # a Seen literal
    text = encode_evidence(stored)
    assert "\n" not in text and json.loads(text)["seen"] == seen
    back = decode_evidence(text)
    assert back == stored
    assert back is not None and back.result.body_head == ANSWER.body_head
    assert hash(back.facts) == hash(facts)  # tuples again, not lists


def test_without_facts() -> None:
    assert decode_evidence(encode_evidence(Evidence(ANSWER))) == Evidence(ANSWER, None, "answer")


@pytest.mark.parametrize(
    "text", ["", "not json", "[]", '{"facts": null}', '{"result": {"url": 1}}']
)
def test_what_is_not_evidence_reads_as_none(text: str) -> None:
    assert decode_evidence(text) is None


def test_a_304_replaces_the_validators_it_carries_and_keeps_the_rest() -> None:
    plain = FetchResult("https://e.example/a", "https://e.example/a", 200,
                        (("content-type", "text/html"), ("etag", '"v1"'), ("x-robots-tag", "noarchive")),
                        elapsed_ms=40.0, attempts=3)  # fmt: skip
    stored = Evidence(plain, ("facts",))
    assert stored.revivable
    answer = FetchResult(
        plain.url, plain.url, 304, (("etag", '"v2"'), ("date", "now")), elapsed_ms=5.0
    )
    again = revalidated(stored, answer)
    assert again.seen == "304" and again.facts == ("facts",)
    assert again.result.status == 200  # the stored answer stands
    assert again.result.header("etag") == '"v2"' and again.result.header("date") is None
    assert again.result.header("x-robots-tag") == "noarchive"
    assert (again.result.elapsed_ms, again.result.attempts) == (5.0, 1)
    bare = revalidated(stored, FetchResult(plain.url, plain.url, 304))
    assert bare.result.headers == plain.headers


def test_only_a_plain_2xx_can_be_revived_by_a_304() -> None:
    assert not Evidence(ANSWER).revivable  # redirected
    gone = FetchResult("https://e/x", "https://e/x", 404)
    assert not Evidence(gone).revivable
    assert not Evidence(FetchResult("https://e/x", "https://e/x", None)).revivable
