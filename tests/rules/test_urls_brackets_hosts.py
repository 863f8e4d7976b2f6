"""URL edge cases of issue 16.4, over a sitemap served on loopback and in check_loc.

`[` and `]` are gen-delims (RFC 3986 §2.2) allowed raw only around an IP-literal host
(§3.2.2): in the path, query, fragment or userinfo they make a `<loc>` invalid.

Hosts: a host whose last label is a number is an IPv4 address or invalid, whether all
of it is numeric or only its last label (the WHATWG URL Standard's "ends in a number"
rule; RFC 3986's reg-name would take both, but no DNS name has a numeric top-level label
and browsers read such a host as IPv4). The IPv4 address must then be RFC 3986's
dotted-decimal form: WHATWG's shorthands (0x7f.1, 127.1, a single number) are refused.
"""

from __future__ import annotations

import pytest

from audit.rules.urls import check_loc
from tests.crawlkit import XML, Serve, Site, audit, urlset


def codes(loc: str) -> list[str]:
    return [code for code, _ in check_loc(loc)]


async def test_brackets_outside_an_ip_literal_make_a_loc_invalid(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    hostport = base.split("//", 1)[1]
    bad = [
        f"{base}/list[1]",
        f"{base}/search?q[]=a",
        f"http://us[e]r@{hostport}/x",
        f"{base}/page#sec]",
    ]
    good = [f"{base}/list%5B1%5D", f"{base}/search?q%5B%5D=a"]
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, urlset(*bad, *good)),
    }
    run = await audit(f"{base}/sitemap.xml", mode="validate")
    invalid = run.findings("loc-invalid")
    assert sorted(f["url"] for f in invalid) == sorted(bad)
    assert all("'[' or ']'" in f["message"] for f in invalid)


@pytest.mark.parametrize(
    "host",
    ["1.2.3.256", "example.123", "a.b.0x1f", "127.1", "0x7f.0.0.1", "123", "example.123."],
)
def test_a_host_ending_in_a_number_must_be_ipv4(host: str) -> None:
    assert codes(f"https://{host}/page") == ["loc-invalid"]


@pytest.mark.parametrize(
    "host", ["192.0.2.1", "192.0.2.1.", "www.example.com", "example.a1", "a.1a", "123abc.example"]
)
def test_ipv4_and_names_not_ending_in_a_number_are_valid(host: str) -> None:
    assert codes(f"https://{host}/page") == []


def test_an_ipv6_literal_keeps_its_brackets() -> None:
    assert codes("https://[2001:db8::1]:8443/x?y=1") == []
