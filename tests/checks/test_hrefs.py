"""checks/hrefs.py: the shortcut answers exactly as urllib's urldefrag(urljoin()) does."""

from __future__ import annotations

from urllib.parse import urldefrag, urljoin

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.checks.hrefs import absolute, joined, joined_all, resolve

# the pieces URLs are made of, the characters urllib treats specially among them
_PIECES = st.sampled_from(
    ["/", "//", ".", "..", "./", "../", "?", "#", ";", ":", "@", "[", "]", "[::1]", "%2F",
     "\\", " ", "\t", "\n", "a", "B", "p", "x=1", "&", "é", "\x00", "http:", "https:",
     "HTTP:", "mailto:", "javascript:", "host", "h:80", "u:pw@h", "", "~", "'"]
)  # fmt: skip
_HREF = st.lists(_PIECES, max_size=8).map("".join)
_BASE = st.sampled_from(
    ["http://ex.com/", "https://ex.com/a/b", "http://ex.com:8080/a/b/?q#f", "https://u@ex.com",
     "HTTPS://Ex.COM/x/", "http://[::1]:8000/p", "http://ex.com/a;p/b", "ftp://ex.com/",
     "http://bücher.example/a", "http:///nohost", "https://ex.com/a/../b/./c"]
)  # fmt: skip


def _urllib(url: str, base_href: str | None, hrefs: list[str]) -> tuple[str, ...]:
    try:
        base = urljoin(url, base_href) if base_href else url
    except ValueError:  # an invalid base URL is ignored
        base = url
    out = []
    for href in hrefs:
        try:
            link = urldefrag(urljoin(base, href.strip()))[0]
        except ValueError:
            continue
        if link.split(":", 1)[0].lower() in ("http", "https"):
            out.append(link)
    return tuple(out)


@settings(max_examples=1500, deadline=None)
@given(_BASE, st.one_of(st.none(), _HREF), st.lists(_HREF, max_size=6))
def test_resolve_answers_as_urllib(url: str, base_href: str | None, hrefs: list[str]) -> None:
    assert resolve(url, base_href, hrefs) == _urllib(url, base_href, hrefs)


@settings(max_examples=500, deadline=None)
@given(_BASE, st.text(max_size=12))
def test_resolve_answers_as_urllib_for_any_text(url: str, href: str) -> None:
    assert resolve(url, None, [href, "/" + href, "http://ex.com/" + href]) == _urllib(
        url, None, [href, "/" + href, "http://ex.com/" + href]
    )


def test_the_common_shapes_and_what_is_left_out() -> None:
    base = "https://Ex.com:8443/dir/page?x#top"
    assert resolve(base, None, ["/a?b=1#c", "https://other.org/x#y", "rel", "../up", "#only"]) == (
        "https://Ex.com:8443/a?b=1",
        "https://other.org/x",
        "https://Ex.com:8443/dir/rel",
        "https://Ex.com:8443/up",
        "https://Ex.com:8443/dir/page?x",
    )
    assert resolve(base, "http://cdn.example/base/", ["/a", "b"]) == (
        "http://cdn.example/a",
        "http://cdn.example/base/b",
    )
    assert (
        resolve(base, None, ["mailto:a@b.c", "javascript:void(0)", "ftp://x/", "http://[::1"]) == ()
    )
    assert absolute(base, " /x ") == "https://Ex.com:8443/x"


@settings(max_examples=1000, deadline=None)
@given(_BASE, _HREF)
def test_joined_answers_as_urllib(base: str, href: str) -> None:
    try:
        expected: str | None = urldefrag(urljoin(base, href))[0]
    except ValueError:
        expected = None
    assert joined(base, href) == expected


def test_joined_all_resolves_each_once_in_order_keeping_fragments() -> None:
    base = "https://example.com/a/b"
    hrefs = ["c#top", "/d", "https://example.com/a/c#top", "http://[::1", "/d"]
    assert joined_all(base, hrefs) == [
        "https://example.com/a/c#top",
        "https://example.com/d",
        "http://[::1",  # urllib cannot parse it: as written
    ]
