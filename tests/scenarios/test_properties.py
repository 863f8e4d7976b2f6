"""Property-based tests (hypothesis) of the streaming parser and the validator.

- A generated valid sitemap (urlset with optional lastmod/changefreq/priority, a
  sitemap index, a text sitemap; plain or gzip) parses with no exception and no
  error-severity finding, and every generated URL comes out.
- Random byte mutations (flip, insert, delete, truncate) of such documents and random
  chunk splits: no exception escapes, and what comes out (entries and findings) is the
  same however the bytes were split into chunks.

Derandomized (CI reproducible) and bounded in examples so each stays within seconds.
"""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.core.records import Entry, Finding, Severity
from audit.rules.validator import SitemapValidator
from audit.sitemap.parser import StreamParser

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
SITEMAP_URL = "https://www.example.com/sitemap.xml"
NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)

FAST = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- generators --------------------------------------------------------------------

_SEGMENT = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~", min_size=1, max_size=12
).filter(lambda s: s not in (".", ".."))
_PCT = st.sampled_from(["%20", "%C3%A9", "%2F", "%E2%82%AC"])
_PATH = st.lists(st.one_of(_SEGMENT, _PCT), min_size=0, max_size=4).map("/".join)
_QUERY = st.one_of(
    st.just(""),
    st.tuples(_SEGMENT, _SEGMENT).map(lambda kv: f"?{kv[0]}={kv[1]}&x=1"),
)
LOC = st.tuples(_PATH, _QUERY).map(lambda pq: f"https://www.example.com/{pq[0]}{pq[1]}")


@st.composite
def lastmods(draw: Any) -> str:
    y = draw(st.integers(2005, 2024))
    m = draw(st.integers(1, 12))
    d = draw(st.integers(1, 28))
    form = draw(st.sampled_from(["date", "utc", "offset", "fraction"]))
    if form == "date":
        return f"{y:04d}-{m:02d}-{d:02d}"
    hh, mm, ss = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    base = f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}"
    if form == "utc":
        return base + "Z"
    if form == "fraction":
        return base + f".{draw(st.integers(0, 999)):03d}Z"
    sign = draw(st.sampled_from("+-"))
    return base + f"{sign}{draw(st.integers(0, 13)):02d}:{draw(st.sampled_from([0, 30, 45])):02d}"


CHANGEFREQ = st.sampled_from(["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"])
PRIORITY = st.one_of(
    st.integers(0, 10).map(lambda i: "1.0" if i == 10 else f"0.{i}"),
    st.sampled_from(["0", "1", "0.25", "1.00", "0.500"]),
)


@st.composite
def url_entries(draw: Any) -> list[dict[str, str]]:
    locs = draw(st.lists(LOC, min_size=1, max_size=25, unique=True))
    out = []
    for loc in locs:
        entry = {"loc": loc}
        if draw(st.booleans()):
            entry["lastmod"] = draw(lastmods())
        if draw(st.booleans()):
            entry["changefreq"] = draw(CHANGEFREQ)
        if draw(st.booleans()):
            entry["priority"] = draw(PRIORITY)
        out.append(entry)
    return out


@st.composite
def valid_documents(draw: Any) -> tuple[bytes, list[str], str]:
    """(bytes, the locs listed, kind)."""
    kind = draw(st.sampled_from(["urlset", "sitemapindex", "text"]))
    entries = draw(url_entries())
    locs = [e["loc"] for e in entries]
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["", "  ", "\t"]))
    if kind == "text":
        doc = nl.join(locs) + draw(st.sampled_from(["", nl]))
    else:
        tag = "url" if kind == "urlset" else "sitemap"
        order = (
            ("loc", "lastmod", "changefreq", "priority") if kind == "urlset" else ("loc", "lastmod")
        )
        parts = []
        for e in entries:
            children = "".join(
                f"{indent}{indent}<{k}>{escape(e[k])}</{k}>{nl}" for k in order if k in e
            )
            parts.append(f"{indent}<{tag}>{nl}{children}{indent}</{tag}>{nl}")
        decl = draw(st.sampled_from(['<?xml version="1.0" encoding="UTF-8"?>', ""]))
        doc = f'{decl}{nl}<{kind} xmlns="{SM}">{nl}{"".join(parts)}</{kind}>{nl}'.lstrip()
    data = doc.encode()
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.booleans()):
        data = gzip.compress(data, mtime=0)
    return data, locs, kind


@st.composite
def splits(draw: Any, data: bytes) -> list[bytes]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(data)), max_size=12))))
    out, prev = [], 0
    for cut in [*cuts, len(data)]:
        out.append(data[prev:cut])
        prev = cut
    return out


@st.composite
def mutated(draw: Any, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice"]))
        at = draw(st.integers(0, len(buf)))
        if op == "flip" and buf:
            i = min(at, len(buf) - 1)
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            buf[at:at] = draw(
                st.one_of(
                    st.binary(min_size=1, max_size=4),
                    st.sampled_from([b"<", b"&", b"]]>", b"\x00", b"\xff", b"<!DOCTYPE x>", b"\n"]),
                )
            )
        elif op == "delete":
            del buf[at : at + draw(st.integers(1, 16))]
        elif op == "truncate":
            del buf[at:]
        elif op == "splice" and buf:
            j = draw(st.integers(0, len(buf)))
            buf[at:at] = buf[min(at, j) : max(at, j)][:64]
    return bytes(buf)


# --- running ----------------------------------------------------------------------


def parse(chunks: list[bytes]) -> tuple[list[Entry | Finding], StreamParser]:
    p = StreamParser(SITEMAP_URL)
    items: list[Entry | Finding] = []
    for chunk in chunks:
        items.extend(p.feed(chunk))
    items.extend(p.close())
    return items, p


def validate(items: list[Entry | Finding], p: StreamParser) -> list[Finding]:
    v = SitemapValidator(SITEMAP_URL, sitemap_url=SITEMAP_URL, now=NOW, kind=p.kind)
    out = [x for x in items if isinstance(x, Finding)]
    for x in items:
        if isinstance(x, Entry):
            out.extend(v.check(x))
    out.extend(v.finish(p.kind, p.entries, p.uncompressed_bytes))
    return out


def comparable(items: list[Entry | Finding]) -> list[Any]:
    return [repr(x) for x in items]


# --- properties ----------------------------------------------------------------------


@pytest.mark.slow
@FAST
@given(valid_documents())
def test_valid_generated_sitemaps_give_no_error(doc: tuple[bytes, list[str], str]) -> None:
    data, locs, kind = doc
    items, p = parse([data])
    findings = validate(items, p)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert errors == [], errors
    assert p.kind == kind
    assert [x.loc for x in items if isinstance(x, Entry)] == locs
    assert p.entries == len(locs)


@pytest.mark.slow
@FAST
@given(st.data())
def test_valid_sitemaps_do_not_depend_on_chunking(data: st.DataObject) -> None:
    doc, _locs, _kind = data.draw(valid_documents())
    whole, pw = parse([doc])
    parts = data.draw(splits(doc))
    items, p = parse(parts)
    assert comparable(items) == comparable(whole)
    assert (p.kind, p.entries, p.gzip) == (pw.kind, pw.entries, pw.gzip)


@pytest.mark.slow
@settings(FAST, max_examples=200)
@given(st.data())
def test_mutated_bytes_never_raise_and_do_not_depend_on_chunking(data: st.DataObject) -> None:
    doc, _locs, _kind = data.draw(valid_documents())
    bad = data.draw(mutated(doc))
    whole, pw = parse([bad])
    validate(whole, pw)  # nor does the validator raise on whatever came out
    parts = data.draw(splits(bad))
    items, p = parse(parts)
    assert comparable(items) == comparable(whole), parts
    assert (p.kind, p.entries, p.gzip, p.is_html) == (pw.kind, pw.entries, pw.gzip, pw.is_html)
    if len(bad) < 3000:
        one_byte, _ = parse([bad[i : i + 1] for i in range(len(bad))])
        assert comparable(one_byte) == comparable(whole)


@FAST
@given(st.binary(max_size=600), st.data())
def test_arbitrary_bytes_never_raise(blob: bytes, data: st.DataObject) -> None:
    whole, pw = parse([blob])
    validate(whole, pw)
    items, _ = parse(data.draw(splits(blob)))
    assert comparable(items) == comparable(whole)


def test_junk_before_the_declaration_is_judged_the_same_in_any_chunks() -> None:
    """A PHP notice with markup in it before <?xml: whether the declaration follows
    must be seen the same way when the bytes trickle in one at a time."""
    doc = (
        b"Warning: <b>Undefined variable</b> in sitemap.php on line 3\n"
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        + f'<urlset xmlns="{SM}"><url><loc>https://www.example.com/a</loc></url></urlset>\n'.encode()
    )
    whole, _ = parse([doc])
    assert [x.code for x in whole if isinstance(x, Finding)] == ["sitemap-leading-whitespace"]
    for step in (1, 5, 64):
        items, _ = parse([doc[i : i + step] for i in range(0, len(doc), step)])
        assert comparable(items) == comparable(whole), step
