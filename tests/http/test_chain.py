"""audit.http.chain: the redirect rules and the values a checked URL's chain makes."""

from __future__ import annotations

import pytest

from audit.core.errors import FetchError
from audit.core.records import Hop
from audit.http.chain import (
    Answer,
    Chain,
    answer_result,
    fetch_result,
    loop_key,
    next_hop,
    next_location,
    private_error,
    take_exchange,
)
from audit.http.hosts import HostPool
from audit.http.retry import DONE, after_error


def test_next_location_resolves_against_the_current_url() -> None:
    assert next_location("http://a.test/x/y", " ../z?q=1 ") == "http://a.test/z?q=1"
    assert next_location("http://a.test/x", "//b.test/p") == "http://b.test/p"


@pytest.mark.parametrize(
    ("location", "kind"),
    [
        (None, "redirect-invalid"),
        ("   ", "redirect-invalid"),
        ("ftp://a.test/file", "redirect-scheme"),
        ("http://a.test:99999/", "redirect-invalid"),
        ("https:///no-host", "redirect-invalid"),
    ],
)
def test_next_location_says_why_it_cannot_follow(location: str | None, kind: str) -> None:
    got = next_location("http://a.test/x", location)
    assert isinstance(got, FetchError)
    assert got.kind == kind
    assert got.url == "http://a.test/x"


def test_loop_key_ignores_case_of_scheme_and_host_and_an_empty_path() -> None:
    assert loop_key("HTTP://A.Test") == loop_key("http://a.test/")
    assert loop_key("http://a.test/P") != loop_key("http://a.test/p")  # paths are case-sensitive
    assert loop_key("http://a.test/p?x=1") != loop_key("http://a.test/p")


def _chain(hops: int) -> Chain:
    chain = Chain(Answer("http://a.test/0"))
    chain.redirects = [Hop(f"http://a.test/{i}", 301) for i in range(hops)]
    return chain


def test_next_hop_follows_a_plain_redirect() -> None:
    headers = (("location", "/next"),)
    got = next_hop(
        "http://a.test/0", "http://a.test/0", headers, _chain(1), 10, allow_private=False
    )
    assert got == "http://a.test/next"


def test_next_hop_refuses_a_loop_and_too_many_hops() -> None:
    back = (("location", "/0"),)
    loop = next_hop(  # back to the chain's first hop
        "http://a.test/0", "http://a.test/1", back, _chain(2), 10, allow_private=False
    )
    assert isinstance(loop, FetchError) and loop.kind == "redirect-loop"
    ahead = (("location", "/far"),)
    limit = next_hop("http://a.test/0", "http://a.test/3", ahead, _chain(3), 2, allow_private=False)
    assert isinstance(limit, FetchError) and limit.kind == "redirect-limit"
    assert "more than 2 redirects" in str(limit)


def test_next_hop_keeps_a_public_host_out_of_the_private_network() -> None:
    inward = (("location", "http://127.0.0.1/admin"),)
    refused = next_hop(
        "http://a.test/0", "http://a.test/0", inward, _chain(1), 10, allow_private=False
    )
    assert isinstance(refused, FetchError) and refused.kind == "redirect-private"
    allowed = next_hop(
        "http://a.test/0", "http://a.test/0", inward, _chain(1), 10, allow_private=True
    )
    assert allowed == "http://127.0.0.1/admin"


def test_private_error_names_the_url_and_the_option() -> None:
    err = private_error("http://10.0.0.1/x")
    assert err.kind == "redirect-private"
    assert "http://10.0.0.1/x" in str(err) and "--allow-private" in str(err)


def test_fetch_result_of_a_chain_with_hops_and_an_error() -> None:
    chain = _chain(2)
    chain.final = Answer("http://a.test/2", status=404, headers=(("x", "1"),), body=b"gone")
    chain.final.elapsed_ms = 12.5
    chain.attempts = 3
    result = fetch_result("http://a.test/0", "GET", chain)
    assert (result.url, result.final_url, result.status) == (
        "http://a.test/0",
        "http://a.test/2",
        404,
    )
    assert result.redirects == (Hop("http://a.test/0", 301), Hop("http://a.test/1", 301))
    assert (result.method, result.attempts, result.elapsed_ms) == ("GET", 3, 12.5)
    assert result.error is None and result.body_head == b"gone"
    chain.error = FetchError("loop", kind="redirect-loop", url="http://a.test/0")
    failed = fetch_result("http://a.test/0", "GET", chain)
    assert (failed.error, failed.error_kind) == ("loop", "redirect-loop")


@pytest.mark.parametrize(
    "error", [None, FetchError("timed out", kind="timeout", url="http://a.test/0")]
)
def test_a_first_answer_makes_the_result_its_one_hop_chain_makes(error: FetchError | None) -> None:
    answer = Answer("http://a.test/0", status=None if error else 200, headers=(("x", "1"),))
    answer.body, answer.error, answer.attempts, answer.elapsed_ms = b"ok", error, 2, 7.5
    chain = Chain(answer, attempts=2, error=error)
    for method in ("HEAD", "GET"):
        result = answer_result("http://a.test/0", method, answer, (), error, answer.attempts)
        assert result == fetch_result("http://a.test/0", method, chain)
        assert result.redirects == () and result.attempts == 2 and result.method == method
    first = answer_result("http://a.test/0", "GET", answer, (), answer.error, answer.attempts)
    assert first.error == (str(error) if error else None)


def test_take_exchange_keeps_a_final_answer_and_an_error() -> None:
    host = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0).get("http://a.test/")
    answer = Answer("http://a.test/x")
    step = take_exchange(answer, host, (200, (("a", "b"),), b"body", "", None, 7.0), False)
    assert step == DONE
    assert (answer.status, answer.headers, answer.body, answer.elapsed_ms) == (
        200,
        (("a", "b"),),
        b"body",
        7.0,
    )
    failed = Answer("http://a.test/y")
    step = take_exchange(failed, host, (None, (), b"", "refused", "connect", 1.0), True)
    assert step == after_error("connect")
    assert failed.error is not None and failed.error.kind == "connect"
    assert failed.status is None
