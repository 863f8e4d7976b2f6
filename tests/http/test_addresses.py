"""Which hosts are private and whether a redirect may go to one (audit/http/addresses.py):
every spelling a resolver accepts, judged after the client's own normalisation; a run's rule
trusting the targets as given. Pure: no request is made (end to end, over loopback:
tests/scenarios/test_private_addresses.py)."""

from __future__ import annotations

import ipaddress

import pytest

from audit.http.addresses import (
    PrivateGuard,
    ip_of,
    is_private_host,
    is_private_ip,
    normal_host,
    redirect_to_private,
)

SPELLINGS = [
    "１２７.０.０.１",  # full-width digits and dots
    "127。0。0。1",  # ideographic full stops
    "ⓛⓞⓒⓐⓛⓗⓞⓢⓣ",  # circled letters
    "ｌｏｃａｌｈｏｓｔ",  # full-width letters
    "１６９.２５４.１６９.２５４",  # cloud metadata in full-width digits
    "ＬＯＣＡＬＨＯＳＴ",
]
SPECIAL_V6 = ["::ffff:8.8.8.8", "64:ff9b::7f00:1", "64:ff9b:1::1", "2002:7f00:1::1", "fec0::1"]


def test_normalised_spellings_and_special_ipv6_are_private() -> None:
    assert [h for h in SPELLINGS + SPECIAL_V6 if not is_private_host(h)] == []
    assert not is_private_host("ｅｘａｍｐｌｅ.com")


def test_guard_trusts_the_target_as_given() -> None:
    guard = PrivateGuard.of(["https://www.example.com"], allow_private=False)
    assert guard.active
    assert guard.refuses("http://１２７.０.０.１:8080/x")
    assert not guard.refuses("https://www.example.com/x")
    assert not guard.keeps("cdn.example.net", "10.0.0.5")
    assert guard.keeps("www.example.com", "10.0.0.5")  # the target, as given
    assert guard.keeps("cdn.example.net", "93.184.216.34")
    assert not PrivateGuard.of(["https://www.example.com"], allow_private=True).active
    assert not PrivateGuard.of(["http://127.0.0.1:8080"], allow_private=False).active


@pytest.mark.parametrize(
    "host",
    ["127.1", "0x7f000001", "2130706433", "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]",
     "10.0.0.5", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
     "224.0.0.1", "localhost", "api.localhost", "LOCALHOST.", "fe80::1", "fc00::1"],
)  # fmt: skip
def test_every_form_of_a_private_address(host: str) -> None:
    assert is_private_host(host)


@pytest.mark.parametrize("host", ["8.8.8.8", "93.184.216.34", "2606:4700::1", "example.com"])
def test_public_addresses_and_names(host: str) -> None:
    assert not is_private_host(host)


def test_ip_literals_in_every_form_are_read() -> None:
    loopback = ipaddress.IPv4Address("127.0.0.1")
    assert ip_of("127.1") == ip_of("0x7f000001") == ip_of("2130706433") == loopback
    assert ip_of("[::1]") == ipaddress.IPv6Address("::1")
    assert ip_of("example.com") is None and ip_of("1.2.3.4.5") is None
    assert is_private_ip(ipaddress.IPv6Address("::ffff:8.8.8.8"))  # mapped: never public


def test_normal_host_is_what_the_client_connects_to() -> None:
    assert normal_host(" [::1] ") == "::1"
    assert normal_host("Example.COM.") == "example.com"
    assert normal_host("ｅｘａｍｐｌｅ。com") == "example.com"


def test_a_redirect_may_not_leave_a_public_host_for_a_private_one() -> None:
    assert redirect_to_private("https://www.example.com/a", "http://169.254.169.254/latest")
    assert redirect_to_private("https://www.example.com/a", "http://１２７.０.０.１:6379/")
    assert not redirect_to_private("https://www.example.com/a", "https://cdn.example.net/b")
    # a chain that starts on a private host is the user's own choice
    assert not redirect_to_private("http://127.0.0.1:8080/a", "http://10.0.0.5/b")
    assert not redirect_to_private("https://www.example.com/a", "not a url")


def test_a_guard_without_targets_or_over_private_targets_is_inactive() -> None:
    assert not PrivateGuard.of([], allow_private=False).active
    mixed = PrivateGuard.of(["https://www.example.com", "http://localhost:8000"], False)
    assert not mixed.active  # one target is private: an intranet audit
    assert not mixed.refuses("http://10.0.0.5/") and mixed.keeps("x.example", "10.0.0.5")
