"""URL rules for sitemap `<loc>` values: syntax checks, normalisation, scope.

Pure functions over strings, standard library only (urllib.parse, ipaddress);
imports nothing of HTTP or asyncio. `check_loc` and `LocScope.classify` run
once per sitemap entry, so the common case (a well-formed, already normalised
ASCII URL) is decided by one compiled regex; everything else takes the slow,
thorough path.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from functools import partial
from urllib.parse import quote, urlsplit

from audit.rules.findings import show

__all__ = [
    "MAX_LOC_LENGTH",
    "MIN_LOC_LENGTH",
    "LocScope",
    "check_loc",
    "is_absolute_http",
    "is_plain_url",
    "normalize_url",
    "origin",
    "plain_loc_test",
    "plain_match",
    "plain_prefix",
    "plain_tail_match",
    "same_origin",
    "sitemap_directory",
    "under_path",
]

MAX_LOC_LENGTH = 2048  # sitemaps.org: "less than 2,048 characters"
MIN_LOC_LENGTH = 12  # shortest sensible absolute URL, "http://a.bc/" (RULES.md)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_DEFAULT_PORT_TEXT = {"http": "80", "https": "443"}
_XML_SPACE = " \t\r\n"

# A label written in punycode ("xn--") is left to the slow path, which decodes it.
_LABEL = r"(?!xn--)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
# A dotted lower-case DNS name whose last label starts with a letter (no IPv4 look-alike),
# or an IPv4 address as Python's ipaddress accepts it (no leading zeros, octets <= 255).
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_PLAIN_HOST = (
    rf"(?:(?:{_LABEL}\.)+(?!xn--)[a-z](?:[a-z0-9-]{{0,61}}[a-z0-9])?|{_OCTET}(?:\.{_OCTET}){{3}})"
)
# An explicit port as normalize_url writes it: 1-65535, no leading zero; never the scheme's
# default (normalisation drops that one), hence the look-aheads on the "/" that follows.
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
# The common case: lower-case http(s), a plain host, an optional non-default port (staging
# hosts, local mirrors), a path, only RFC 3986 characters, upper-case percent escapes, no
# fragment. Such a URL is valid and already normalised. Possessive quantifiers keep a
# failing match linear.
# A port as written: a number from 1 to 65535 in ASCII digits, leading zeros allowed.
_ANY_PORT = re.compile(f"0*{_PORT}")
_PLAIN_PATH = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]++|%[0-9A-F]{2})*+"
_PLAIN = re.compile(
    rf"(?:http://{_PLAIN_HOST}(?::(?!80/){_PORT})?|https://{_PLAIN_HOST}(?::(?!443/){_PORT})?)"
    rf"/{_PLAIN_PATH}",
    re.ASCII,
)
# The path part alone: after a prefix that is itself plain and ends with "/", the whole
# URL is plain exactly when the rest matches this (a "/" is always a token boundary).
_PLAIN_TAIL = re.compile(_PLAIN_PATH, re.ASCII)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:", re.ASCII)
# C0 and C1 control characters, space, DEL and the characters RFC 3986 never allows raw
_BAD_CHARS = re.compile(r"[\x00-\x20\x7f-\x9f<>\"{}|\\^`]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_BRACKETS = re.compile(r"[\[\]]")
_BAD_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_LOWER_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_HOST_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_\-]{0,61}[A-Za-z0-9_])?", re.ASCII)
# A host whose last label is a number (WHATWG URL "ends in a number"): an IPv4 address or
# nothing, never a name. Decimal, or 0x-hex, which WHATWG also reads as a number.
_ENDS_IN_NUMBER = re.compile(r"(?:.*\.)?(?:[0-9]+|0[xX][0-9A-Fa-f]*)\.?", re.ASCII | re.DOTALL)

Problem = tuple[str, str]  # (code, message)


_show = partial(show, limit=120)  # a value for a message: repr-quoted, truncated


plain_match = _PLAIN.fullmatch  # the fast-path regex alone (callers check length and host)
# plain_tail_match(url, len(prefix)): the rest of `url` after a plain prefix (see plain_prefix).
plain_tail_match = _PLAIN_TAIL.fullmatch


def plain_prefix(prefix: str | None) -> int:
    """len(prefix) when `prefix` is a plain URL ending in "/", else 0.

    For such a prefix, a URL of allowed length that starts with it is a plain URL
    (valid, normalised, in scope) exactly when plain_tail_match(url, len(prefix))
    matches: the prefix already vouches for scheme, host and host length.
    """
    if prefix is None or not prefix.endswith("/") or not is_plain_url(prefix):
        return 0
    return len(prefix)


def plain_loc_test(prefix: str) -> Callable[[str], object]:
    """The one-call fast test for a `<loc>` under `prefix` ("": anywhere).

    The test is True when the URL is plain (valid, already normalised) and starts with
    `prefix`; False means "take the full checks", not "invalid". Built once per sitemap:
    a plain prefix (see plain_prefix) vouches for scheme and host, so only the rest of
    the URL is matched: length, prefix and the rest in one regex, so the test of a
    <loc> is one C call (truthy: a match).
    """
    if not prefix:
        return is_plain_url
    if plain_prefix(prefix):
        length = rf"(?s:(?=.{{{MIN_LOC_LENGTH},{MAX_LOC_LENGTH}}}\Z))"
        return re.compile(length + re.escape(prefix) + _PLAIN_PATH, re.ASCII).fullmatch

    def plain_under_prefix(url: str) -> bool:
        return (
            MIN_LOC_LENGTH <= len(url) <= MAX_LOC_LENGTH
            and url.startswith(prefix)
            and plain_match(url) is not None
        )

    return plain_under_prefix


def is_plain_url(url: str) -> bool:
    """True for a valid, already normalised ASCII http(s) URL (the fast path)."""
    return (
        MIN_LOC_LENGTH <= len(url) <= MAX_LOC_LENGTH
        and _PLAIN.fullmatch(url) is not None
        and url.find("/", 8) <= 261  # host at most 253 characters (RFC 1035)
    )


def _host_problem(host: str) -> str | None:
    """Why `host` (already without userinfo and port) is not a usable host, or None."""
    if not host:
        return "has no host"
    if host.startswith("["):  # an IP-literal
        if not host.endswith("]"):
            return f"has a malformed IPv6 host {_show(host)}"
        inner = host[1:-1]
        if inner[:1] in ("v", "V"):
            return None  # IPvFuture: syntactically allowed, never seen in practice
        try:
            ipaddress.IPv6Address(inner.split("%25", 1)[0])
        except ValueError:
            return f"has an invalid IPv6 host {_show(host)}"
        return None
    if _ENDS_IN_NUMBER.fullmatch(host):
        try:
            ipaddress.IPv4Address(host.removesuffix("."))
        except ValueError:
            return (
                f"has the host {_show(host)}, which ends in a number but is not an IPv4 "
                "address (four decimal numbers 0-255)"
            )
        return None
    return _name_problem(host)


def _name_problem(host: str) -> str | None:
    """Why a host name (possibly internationalised) is not a DNS name, or None."""
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return f"has an invalid internationalised host {_show(host)}"
    name = host.removesuffix(".")
    if len(name) > 253:
        return "has a host longer than 253 characters"
    for label in name.split("."):
        if not _HOST_LABEL.fullmatch(label):
            return f"has an invalid host {_show(host)} (bad label {_show(label)})"
        if label[:4].lower() == "xn--" and not _punycode_ok(label[4:]):
            return (
                f"has an invalid host {_show(host)} (the label {_show(label)} is not valid "
                "punycode for an internationalised name)"
            )
    return None


_NOT_IN_NAMES = frozenset({"Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})


def _punycode_ok(encoded: str) -> bool:
    """Does an "xn--" label's rest decode to a label a browser accepts (WHATWG URL, UTS 46:
    not empty, not plain ASCII, already in its mapped form: NFKC and case-folded, and no
    control, surrogate, private-use, unassigned or space character)?"""
    try:
        decoded = encoded.lower().encode("ascii").decode("punycode")  # hosts ignore case
    except UnicodeError:
        return False
    return (
        not decoded.isascii()  # also: not empty
        and unicodedata.normalize("NFKC", decoded).casefold() == decoded
        and not any(unicodedata.category(ch) in _NOT_IN_NAMES for ch in decoded)
    )


def _split_authority(rest: str) -> tuple[str, str]:
    """Split what follows '//' into (authority, path-query-fragment)."""
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return authority, rest[len(authority) :]


def _host_port(authority: str) -> tuple[str, str]:
    """Split host[:port] after removing userinfo; port "" when absent or empty (RFC 3986
    treats both as the default)."""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):  # an unclosed '[' takes all; garbage after ']' is the port
        close = hostport.find("]") + 1 or len(hostport)
        return hostport[:close], hostport[close:].removeprefix(":")
    host, _colon, port = hostport.partition(":")
    return host, port


def check_loc(raw: str | None) -> list[Problem]:
    """Check one `<loc>` text as written; return (code, message) pairs, empty when fine.

    Codes: loc-missing, loc-whitespace, loc-too-long, loc-relative, loc-invalid,
    loc-not-encoded, loc-fragment. Each code appears at most once.
    """
    if raw is None:
        return [("loc-missing", "the entry has no <loc>: add <loc> with the page's absolute URL")]
    url = raw.strip(_XML_SPACE)
    if not url:
        return [("loc-missing", "<loc> is empty: put the page's absolute URL in it")]
    if url == raw and is_plain_url(url):
        return []
    out: list[Problem] = []
    if url != raw:
        out.append(
            (
                "loc-whitespace",
                f"<loc> {_show(raw)} has leading or trailing whitespace: remove it",
            )
        )
    if len(url) > MAX_LOC_LENGTH:
        out.append(
            (
                "loc-too-long",
                f"<loc> is {len(url)} characters long, over the {MAX_LOC_LENGTH} limit: "
                f"shorten the URL {show(url, 80)}",
            )
        )
    scheme = _scheme_problem(url)
    if isinstance(scheme, tuple):  # not an http(s) URL: the checks below would mislead
        out.append(scheme)
        return out
    invalid = _invalid_parts(url, scheme)
    if invalid:
        out.append(
            (
                "loc-invalid",
                f"<loc> {_show(url)} is not a valid URL: {'; '.join(invalid)}",
            )
        )
    first = _NON_ASCII.search(url)
    if first is not None:
        out.append(
            (
                "loc-not-encoded",
                f"<loc> {_show(url)} contains non-ASCII characters such as {first.group()!r}: "
                "percent-encode them as UTF-8 (and use the punycode form of the host)",
            )
        )
    if "#" in url:
        out.append(
            (
                "loc-fragment",
                f"<loc> {_show(url)} has a #fragment, which search engines ignore: "
                "list the URL without it",
            )
        )
    return out


def _scheme_problem(url: str) -> Problem | int:
    """loc-relative or loc-invalid for a URL that is not http(s)://...; else where its
    authority starts (just after the '//')."""
    m = _SCHEME.match(url)
    # "www.example.com:8080/x" and "localhost:8080/x" parse as schemes: they lack one.
    if m is None or "." in m.group() or url[m.end() : m.end() + 1].isdigit():
        return (
            "loc-relative",
            f"<loc> {_show(url)} is not an absolute URL: "
            "give the full URL starting with https:// and the host",
        )
    scheme = m.group()[:-1].lower()
    if scheme not in _DEFAULT_PORTS:
        return (
            "loc-invalid",
            f"<loc> {_show(url)} uses scheme {scheme!r}: "
            "only http and https URLs are allowed in sitemaps",
        )
    if url[m.end() : m.end() + 2] != "//":
        return (
            "loc-invalid",
            f"<loc> {_show(url)} lacks '//' after the scheme: write it as scheme://host/path",
        )
    return m.end() + 2


def _invalid_parts(url: str, authority_at: int) -> list[str]:
    """What makes an http(s) URL invalid: characters, escapes, brackets outside an
    IP-literal, host, port, length."""
    invalid: list[str] = []
    bad = _BAD_CHARS.search(url)
    if bad is not None:
        ch = bad.group()
        what = "a space" if ch == " " else f"the character {ch!r}"
        invalid.append(f"contains {what} (percent-encode it as {quote(ch, safe='')})")
    if _BAD_PCT.search(url):
        invalid.append("has a '%' not followed by two hex digits (encode a literal % as %25)")
    authority, tail = _split_authority(url[authority_at:])
    if _BRACKETS.search(authority.rpartition("@")[0] + tail):  # RFC 3986 §2.2, §3.2.1
        invalid.append(
            "contains '[' or ']' outside an IPv6 host (percent-encode them as %5B and %5D)"
        )
    host, port = _host_port(authority)
    problem = _host_problem(host)
    if problem is not None:
        invalid.append(problem)
    if port and not _ANY_PORT.fullmatch(port):
        invalid.append(f"has an invalid port {_show(port)}")
    if len(url) < MIN_LOC_LENGTH:
        invalid.append(f"is shorter than {MIN_LOC_LENGTH} characters")
    return invalid


def is_absolute_http(url: str) -> bool:
    """An absolute http(s) URL with a host (the test for hreflang hrefs and similar)."""
    authority_at = _scheme_problem(url)
    if isinstance(authority_at, tuple):
        return False
    host, _port = _host_port(_split_authority(url[authority_at:])[0])
    return bool(host) and _BAD_CHARS.search(url) is None


def normalize_url(url: str) -> str:
    """The URL in the form used to compare URLs (duplicates, canonicals, alternates).

    Lower-cases scheme and host, drops the default port, turns an empty path
    into "/", and upper-cases the hex digits of percent escapes. Leading and
    trailing XML whitespace is removed. Nothing else changes: the URL is still
    fetched as listed. Strings that are not absolute URLs come back stripped.
    """
    url = url.strip(_XML_SPACE)
    if _PLAIN.fullmatch(url):
        return url
    m = _SCHEME.match(url)
    if m is None or url[m.end() : m.end() + 2] != "//":
        return url
    scheme = m.group()[:-1].lower()
    authority, tail = _split_authority(url[m.end() + 2 :])
    userinfo, at, _hp = authority.rpartition("@")
    host, port = _host_port(authority)
    if port.isascii() and port.isdigit():
        port = str(int(port))
    # the scheme's default port is dropped, as is an empty one ("host:")
    netloc = host.lower() + ("" if port in ("", _DEFAULT_PORT_TEXT.get(scheme)) else ":" + port)
    tail = "/" + tail.removeprefix("/")  # a path (an empty one too) starts with "/"
    tail = _LOWER_PCT.sub(lambda m: m.group().upper(), tail)
    return f"{scheme}://{userinfo}{at}{netloc}{tail}"


# An http(s) URL whose authority is a plain host name and maybe a port, then its end or
# a "/", "?" or "#": what urlsplit would read as that host and port. Anything else
# (userinfo, brackets, underscores, controls, percent escapes) goes through urlsplit.
_PLAIN_ORIGIN = re.compile(
    r"(https?)://([a-z0-9.-]+)(?::([0-9]{0,5}))?(?=[/?#]|\Z)", re.I | re.A
).match


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an absolute http(s) URL, lower-cased, port explicit; else None."""
    url = url.strip(_XML_SPACE)
    plain = _PLAIN_ORIGIN(url)  # most URLs: one match instead of urlsplit (per entry)
    if plain is not None:
        scheme, host, port = plain.group(1, 2, 3)
        scheme = scheme.lower()
        number = int(port) if port else _DEFAULT_PORTS[scheme]
        if number <= 65535:
            return scheme, host.lower(), number
        return None  # urlsplit's port refuses it
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def same_origin(a: str, b: str) -> bool:
    """Same scheme, host and port (default ports made explicit); False if either is not a URL."""
    oa = origin(a)
    return oa is not None and oa == origin(b)


def sitemap_directory(sitemap_url: str) -> str:
    """The normalised URL prefix a sitemap may list: its origin and the directory of its path.

    https://ex.com/a/sitemap.xml -> https://ex.com/a/ (sitemaps.org "Sitemap file location").
    """
    norm = normalize_url(sitemap_url)
    parts = urlsplit(norm)
    path = parts.path or "/"
    return f"{parts.scheme}://{parts.netloc}{path[: path.rfind('/') + 1]}"


def under_path(url: str, sitemap_url: str) -> bool:
    """True when `url` is on the sitemap's origin and under the directory of the sitemap file.

    The path comparison is case-sensitive, as paths are.
    """
    return same_origin(url, sitemap_url) and normalize_url(url).startswith(
        sitemap_directory(sitemap_url)
    )


class LocScope:
    """Which URLs one sitemap may list (loc-cross-host, loc-outside-path), precomputed.

    `classify(url)` returns None when the URL is in scope, else the code. The
    common in-scope URL, normalised, costs one `str.startswith`.
    """

    __slots__ = ("_origin", "_prefix", "is_plain", "sitemap_url")

    def __init__(self, sitemap_url: str) -> None:
        self.sitemap_url = sitemap_url
        self._origin = origin(sitemap_url)
        # "" for an unusable sitemap URL (a local file): every URL starts with it, so every
        # URL is in scope
        self._prefix = sitemap_directory(sitemap_url) if self._origin is not None else ""
        # is_plain(url): True for a plain URL in scope, which classify() would pass and
        # check_loc() find valid (one call, the per-entry fast path; see plain_loc_test).
        self.is_plain: Callable[[str], object] = plain_loc_test(self._prefix)

    @property
    def prefix(self) -> str:
        """The normalised URL prefix every listed URL must start with ("" if unusable)."""
        return self._prefix

    def classify(self, url: str, normalized: str | None = None) -> str | None:
        """None if `url` is in scope; "loc-cross-host" or "loc-outside-path" otherwise.

        `normalized` is normalize_url(url) when the caller already has it.
        An unusable sitemap URL (a local file) puts everything in scope.
        """
        norm = normalize_url(url) if normalized is None else normalized
        # (a URL that starts with the prefix as written: normalised too)
        if norm.startswith(self._prefix):
            return None
        o = origin(norm)
        if o is None:
            return None  # not a URL at all: check_loc reports it
        if o != self._origin:
            return "loc-cross-host"
        return "loc-outside-path"
