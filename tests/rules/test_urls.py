"""<loc> syntax checks, URL normalisation and sitemap scope."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.rules import urls
from audit.rules.urls import (
    LocScope,
    check_loc,
    is_absolute_http,
    is_plain_url,
    normalize_url,
    origin,
    plain_prefix,
    plain_tail_match,
    same_origin,
    sitemap_directory,
    under_path,
)


def codes(raw: str | None) -> list[str]:
    return [c for c, _ in check_loc(raw)]


@pytest.mark.parametrize(
    "url",
    [
        "https://www.example.com/",
        "http://example.com/a/b?c=d&e=f",
        "https://www.example.com/caf%C3%A9",
        "https://www.example.com/caf%c3%a9",  # lower-case escapes are valid, only normalised
        "HTTPS://WWW.Example.COM/Page",
        "https://www.example.com:8443/x",
        "https://www.example.com:443/x",
        "https://www.example.com",
        "https://user:pw@www.example.com/x",
        "http://192.168.10.1/x",
        "http://[2001:db8::1]/x",
        "http://[2001:db8::1]:8080/x",
        "https://my_host.example.com/x",
        "https://www.example.com./x",
        "https://www.example.com/a(b)*,;=:@!$'~",
        "https://xn--bcher-kva.example/x",
        "https://XN--Bcher-KVA.example/x",  # hosts ignore case, punycode too
        "https://xn--ls8h.la/",  # an emoji name: valid for browsers (UTS 46)
    ],
)
def test_valid_locs(url: str) -> None:
    assert check_loc(url) == []


@pytest.mark.parametrize(
    "url",
    [
        # a circled digit: UTS 46 maps it, so no browser would ever write this label
        "http://a.b.c.xn--pokxncvks/",
        "http://10.0.0.XN--pokxncvks/",
        "https://www.xn--abc-.com/",  # decodes to plain ASCII "abc"
        "https://xn--a.example/",  # decodes to a control character
        "https://xn--/",  # nothing to decode
        "https://xn--bcher-kva.xn--99999999999.example/",  # overflows the decoder
    ],
)
def test_punycode_labels_that_decode_to_no_valid_name_are_invalid(url: str) -> None:
    """WHATWG URL (UTS 46 ToASCII): an "xn--" label must decode to a mapped, non-ASCII name."""
    assert [code for code, _ in check_loc(url)] == ["loc-invalid"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, ["loc-missing"]),
        ("", ["loc-missing"]),
        ("  \n ", ["loc-missing"]),
        (" https://www.example.com/a", ["loc-whitespace"]),
        ("https://www.example.com/a\n", ["loc-whitespace"]),
        ("https://www.example.com/" + "a" * 2030, ["loc-too-long"]),
        ("/page.html", ["loc-relative"]),
        ("page.html", ["loc-relative"]),
        ("//www.example.com/a", ["loc-relative"]),
        ("www.example.com/page", ["loc-relative"]),
        ("www.example.com:8080/page", ["loc-relative"]),
        ("http:/www.example.com/a", ["loc-invalid"]),
        ("ftp://www.example.com/file", ["loc-invalid"]),
        ("mailto:someone@example.com", ["loc-invalid"]),
        ("javascript:void(0)", ["loc-invalid"]),
        ("localhost:8080/page", ["loc-relative"]),
        ("https://www.example.com/a b", ["loc-invalid"]),
        ("https://www.example.com/a\tb", ["loc-invalid"]),
        ("https://www.example.com/a<b>", ["loc-invalid"]),
        ('https://www.example.com/a"b', ["loc-invalid"]),
        ("https://www.example.com/a|b", ["loc-invalid"]),
        ("https://www.example.com/100%", ["loc-invalid"]),
        ("https://www.example.com/%zz", ["loc-invalid"]),
        ("https:///path/only", ["loc-invalid"]),
        ("https://exa mple.com/", ["loc-invalid"]),
        ("https://-bad-.example.com/", ["loc-invalid"]),
        ("https://a..example.com/", ["loc-invalid"]),
        ("https://999.1.1.1/", ["loc-invalid"]),
        ("https://[::zz]/", ["loc-invalid"]),
        ("https://www.example.com:99999/", ["loc-invalid"]),
        ("https://www.example.com:0/", ["loc-invalid"]),
        ("https://www.example.com:8o/", ["loc-invalid"]),
        ("http://a.b/", ["loc-invalid"]),
        ("https://www.example.com/café", ["loc-not-encoded"]),
        ("https://bücher.example/x", ["loc-not-encoded"]),
        ("https://www.example.com/a#top", ["loc-fragment"]),
        (" https://www.example.com/a b#x ", ["loc-whitespace", "loc-invalid", "loc-fragment"]),
    ],
)
def test_loc_problems(raw: str | None, expected: list[str]) -> None:
    assert codes(raw) == expected


def test_messages_name_value_and_fix() -> None:
    ((code, msg),) = check_loc("https://www.example.com/a b")
    assert code == "loc-invalid"
    assert "'https://www.example.com/a b'" in msg and "%20" in msg
    ((code, msg),) = check_loc("https://www.example.com/" + "x" * 3000)
    assert code == "loc-too-long" and "3024 characters" in msg and len(msg) < 300


def test_is_plain_url() -> None:
    assert is_plain_url("https://www.example.com/a/b?c=%C3%A9")
    assert not is_plain_url("https://www.example.com/a/b?c=%c3%a9")
    assert not is_plain_url("https://WWW.example.com/")
    assert not is_plain_url("https://www.example.com")
    assert not is_plain_url("https://www.example.com:443/")
    assert not is_plain_url("https://www.example.com/#x")
    assert not is_plain_url("https://www.example.com/" + "a" * 2048)
    assert not is_plain_url("https://" + "a" * 60 + (".b" * 100) + ".com/")
    # Staging hosts: an IPv4 address and a non-default port are plain; a default port, a
    # leading zero, a port or octet out of range are left to the full checks.
    assert is_plain_url("http://127.0.0.1:8080/a")
    assert is_plain_url("https://staging.example.com:8443/a")
    assert is_plain_url("https://www.example.com:80/a")
    assert not is_plain_url("http://www.example.com:80/a")
    assert not is_plain_url("http://www.example.com:08080/a")
    assert not is_plain_url("http://www.example.com:65536/a")
    assert not is_plain_url("http://www.example.com:0/a")
    assert not is_plain_url("http://10.0.0.256/a")
    assert not is_plain_url("http://10.0.0.01/a")


_HOSTS = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,8}(\.[a-z0-9-]{1,8}){1,3}", fullmatch=True),
    st.lists(st.integers(0, 300).map(str) | st.sampled_from(["00", "01", "099"]), min_size=4,
             max_size=4).map(".".join),
)  # fmt: skip
_PORTS = st.none() | st.integers(0, 70000).map(str) | st.sampled_from(["", "080", "0443", "80"])


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    scheme=st.sampled_from(["http", "https"]),
    host=_HOSTS,
    port=_PORTS,
    path=st.from_regex(r"/[a-z0-9/._~%A-F-]{0,20}", fullmatch=True),
)
def test_plain_urls_pass_the_full_checks(
    scheme: str, host: str, port: str | None, path: str
) -> None:
    """The fast path never vouches for a URL the full checks would fault or rewrite."""
    url = f"{scheme}://{host}{'' if port is None else ':' + port}{path}"
    if not is_plain_url(url):
        return
    with pytest.MonkeyPatch.context() as m:  # the full checks alone
        m.setattr(urls, "is_plain_url", lambda _u: False)
        m.setattr(urls, "_PLAIN", re.compile(r"(?!)"))
        assert urls.check_loc(url) == [], url
        assert urls.normalize_url(url) == url, url


def test_plain_tail_after_plain_prefix() -> None:
    prefix = "https://www.example.com/shop/"
    at = plain_prefix(prefix)
    assert at == len(prefix)
    # Not usable as a vouching prefix: not plain, or not a directory.
    assert plain_prefix(None) == 0
    assert plain_prefix("http://127.0.0.1:8080/") == len("http://127.0.0.1:8080/")
    assert plain_prefix("http://127.0.0.1:80/") == 0  # the default port: not normalised
    assert plain_prefix("https://WWW.example.com/") == 0
    assert plain_prefix("https://www.example.com/shop") == 0
    tails = [
        "",
        "a/b.html",
        "a/b?c=%C3%A9&d=1",
        "a/b?c=%c3%a9",
        "a b",
        "a#frag",
        "%",
        "%2",
        "%2F",
        "é",
        "a<b",
        "x" * 2100,
        "~!$&'()*+,;=:@/?",
    ]
    for tail in tails:
        url = prefix + tail
        assert (plain_tail_match(url, at) is not None) == is_plain_url(url) or len(url) > 2048, tail


@pytest.mark.parametrize(
    ("url", "norm"),
    [
        ("https://www.example.com/a", "https://www.example.com/a"),
        ("HTTPS://WWW.EXAMPLE.COM/A", "https://www.example.com/A"),
        ("https://www.example.com", "https://www.example.com/"),
        ("https://www.example.com?q=1", "https://www.example.com/?q=1"),
        ("https://www.example.com:443/a", "https://www.example.com/a"),
        ("http://www.example.com:80/a", "http://www.example.com/a"),
        ("https://www.example.com:80/a", "https://www.example.com:80/a"),
        ("https://www.example.com:/a", "https://www.example.com/a"),
        ("http://www.example.com:0080/a", "http://www.example.com/a"),
        ("https://www.example.com/caf%c3%a9?x=%2f", "https://www.example.com/caf%C3%A9?x=%2F"),
        ("https://User@WWW.example.com/", "https://User@www.example.com/"),
        ("http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"),
        ("  https://www.example.com/a \n", "https://www.example.com/a"),
        ("/relative", "/relative"),
    ],
)
def test_normalize_url(url: str, norm: str) -> None:
    assert normalize_url(url) == norm
    assert normalize_url(norm) == norm


def test_origin_and_same_origin() -> None:
    assert origin("https://WWW.example.com/x") == ("https", "www.example.com", 443)
    assert origin("http://example.com:8080") == ("http", "example.com", 8080)
    assert origin("ftp://example.com/") is None
    assert origin("/x") is None
    assert origin("http://example.com:99999/") is None
    assert same_origin("https://example.com/a", "https://EXAMPLE.com:443/b")
    assert not same_origin("https://example.com/a", "http://example.com/a")
    assert not same_origin("https://example.com/a", "https://www.example.com/a")
    assert not same_origin("https://example.com/a", "https://example.com:8443/a")
    assert not same_origin("/a", "/a")


def test_is_absolute_http() -> None:
    assert is_absolute_http("https://www.example.com/de/")
    assert is_absolute_http("HTTP://www.example.com")
    assert not is_absolute_http("/de/")
    assert not is_absolute_http("de/page")
    assert not is_absolute_http("ftp://www.example.com/")
    assert not is_absolute_http("https:///x")
    assert not is_absolute_http("https://www.example.com/a b")


def test_sitemap_directory_and_under_path() -> None:
    assert sitemap_directory("https://ex.com/a/sitemap.xml") == "https://ex.com/a/"
    assert sitemap_directory("https://EX.com:443/sitemap.xml?x=/b/c") == "https://ex.com/"
    assert sitemap_directory("https://ex.com") == "https://ex.com/"
    sm = "https://ex.com/a/sitemap.xml"
    assert under_path("https://ex.com/a/page", sm)
    assert under_path("https://EX.COM/a/b/c", sm)
    assert not under_path("https://ex.com/a", sm)
    assert not under_path("https://ex.com/b/page", sm)
    assert not under_path("https://ex.com/A/page", sm)  # paths are case-sensitive
    assert not under_path("http://ex.com/a/page", sm)


def test_loc_scope() -> None:
    scope = LocScope("https://www.example.com/blog/sitemap.xml")
    assert scope.prefix == "https://www.example.com/blog/"
    assert scope.classify("https://www.example.com/blog/post") is None
    assert scope.classify("HTTPS://www.EXAMPLE.com:443/blog/post") is None
    assert scope.classify("https://www.example.com/shop/") == "loc-outside-path"
    assert scope.classify("https://example.com/blog/post") == "loc-cross-host"
    assert scope.classify("http://www.example.com/blog/post") == "loc-cross-host"
    assert scope.classify("https://www.example.com:8443/blog/post") == "loc-cross-host"
    assert scope.classify("not a url") is None
    assert LocScope("/tmp/sitemap.xml").classify("https://anything.example/") is None


def _origin_by_urlsplit(url: str) -> tuple[str, str, int] | None:
    """What `origin` means, read the long way: urlsplit's scheme, hostname and port."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip(" \t\r\n"))
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return (
        scheme,
        parts.hostname.lower(),
        port if port is not None else {"http": 80, "https": 443}[scheme],
    )


_HOST_PIECES = [
    "ex",
    ".",
    "-",
    "com",
    "EX",
    "0",
    "1",
    "_",
    "%41",
    "K",
    "\u212a",
    "\u017f",
    "ü",
    "\uff11",
    "[::1]",
    "user@",
    "user:pw@",
    " ",
    "\t",
    "\n",
    "\\",
    ":",
]
_URLS = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["", " ", "\x01", "http", "https", "HTTP", "Https", "ftp"]),
        st.sampled_from(["://", ":/", "//", ":///", ""]),
        st.lists(st.sampled_from(_HOST_PIECES), max_size=5).map("".join),
        st.sampled_from(["", ":"]),
        st.sampled_from(["", "0", "80", "443", "00080", "8080", "65535", "65536", "99999",
                         "123456", "-1", "8a", "\uff18"]),
        st.sampled_from(["", "/", "/p", "?q", "#f", "\\x", " ", "\n/", "\t", "/a b", "@h/"]),
    ),
)  # fmt: skip


@given(_URLS | st.text(max_size=30))
@settings(max_examples=3000)
def test_origin_reads_what_urlsplit_reads(url: str) -> None:
    """The plain-host shortcut of `origin` answers as urlsplit does, for every string."""
    assert origin(url) == _origin_by_urlsplit(url)
