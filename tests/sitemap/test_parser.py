"""audit.sitemap.parser: every fixture under fixtures/sitemaps through the streaming parser."""

from __future__ import annotations

import gzip
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.core.records import Entry, Finding
from audit.sitemap.parser import MAX_UNCOMPRESSED_BYTES, StreamParser, parse_file

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sitemaps"
VALID, BROKEN = FIX / "valid", FIX / "broken"
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
H = "https://www.example.com"

Item = Entry | Finding


def parse_bytes(
    data: bytes, chunk: int | None = None, **kw: int
) -> tuple[list[Item], StreamParser]:
    p = StreamParser("https://www.example.com/sitemap.xml", **kw)
    items: list[Item] = []
    step = chunk or max(len(data), 1)
    for i in range(0, len(data), step):
        items.extend(p.feed(data[i : i + step]))
    items.extend(p.close())
    return items, p


def run(path: Path) -> tuple[list[Entry], list[Finding], StreamParser]:
    pf = parse_file(path, source="https://www.example.com/sitemap.xml")
    items = list(pf)
    entries = [x for x in items if isinstance(x, Entry)]
    findings = [x for x in items if isinstance(x, Finding)]
    assert pf.parser.entries == len(entries)
    return entries, findings, pf.parser


def codes(findings: list[Finding]) -> list[tuple[str, int | None]]:
    return [(f.code, f.line) for f in findings]


# --- valid fixtures: entries, no findings ------------------------------------------

URLSET_LOCS = [f"{H}/", f"{H}/about", f"{H}/blog/first-post", f"{H}/contact"]


@pytest.mark.parametrize("name", ["urlset.xml", "urlset.xml.gz", "urlset-double.xml.gz"])
def test_urlset_plain_gzip_and_double_gzip(name: str) -> None:
    entries, findings, p = run(VALID / name)
    assert findings == []
    assert p.kind == "urlset"
    assert p.gzip is name.endswith(".gz")
    assert p.uncompressed_bytes == (VALID / "urlset.xml").stat().st_size
    assert p.compressed_bytes == (VALID / name).stat().st_size
    assert [e.loc for e in entries] == URLSET_LOCS
    assert [e.line for e in entries] == [4, 10, 16, 20]
    first = entries[0]
    assert (first.kind, first.lastmod, first.changefreq, first.priority) == (
        "url",
        "2024-05-01T10:00:00+00:00",
        "daily",
        "1.0",
    )
    assert entries[2].lastmod == "2024-03-03" and entries[2].changefreq is None
    assert entries[3].lastmod is None and entries[3].images is None


def test_sitemap_index() -> None:
    entries, findings, p = run(VALID / "index.xml")
    assert findings == []
    assert p.kind == "sitemapindex"
    assert [(e.kind, e.loc, e.line) for e in entries] == [
        ("sitemap", f"{H}/sitemap-pages.xml", 4),
        ("sitemap", f"{H}/sitemap-posts.xml.gz", 8),
        ("sitemap", f"{H}/sitemap-news.xml", 12),
    ]
    assert entries[1].lastmod == "2024-04-20T12:15:00+00:00"


def test_text_sitemap_crlf_and_blank_lines() -> None:
    entries, findings, p = run(VALID / "text.txt")
    assert findings == []
    assert p.kind == "text"
    assert [(e.loc, e.line) for e in entries] == list(zip(URLSET_LOCS, [1, 2, 4, 5], strict=True))


def test_rss_and_atom_feeds() -> None:
    entries, findings, p = run(VALID / "rss.xml")
    assert findings == [] and p.kind == "rss"
    assert [(e.loc, e.line, e.lastmod) for e in entries] == [
        (f"{H}/blog/first-post", 9, "Wed, 01 May 2024 10:00:00 +0000"),
        (f"{H}/blog/second-post", 14, "Fri, 03 May 2024 11:00:00 +0000"),
    ]
    entries, findings, p = run(VALID / "atom.xml")
    assert findings == [] and p.kind == "atom"
    assert [(e.loc, e.line, e.lastmod) for e in entries] == [
        (f"{H}/blog/first-post", 10, "2024-05-01T10:00:00+00:00"),
        (f"{H}/blog/second-post", 16, "2024-05-03T11:00:00+00:00"),
    ]


def test_image_extension() -> None:
    entries, findings, _ = run(VALID / "image.xml")
    assert findings == []
    assert entries[0].images is not None and entries[1].images is not None
    assert [(i.loc, i.line, i.deprecated) for i in entries[0].images] == [
        (f"{H}/img/one.jpg", 7, []),
        (f"{H}/img/two.jpg", 10, []),
    ]
    assert [i.loc for i in entries[1].images] == [f"{H}/img/shop.png"]


def test_video_extension_keeps_every_field_and_useful_attributes() -> None:
    entries, findings, _ = run(VALID / "video.xml")
    assert findings == []
    assert entries[0].videos is not None and entries[1].videos is not None
    (video,) = entries[0].videos
    assert video.line == 7
    f = video.fields
    assert f["title"] == "Grilling steaks for summer"
    assert f["duration"] == "600"
    assert f["rating"] == "4.2"
    assert f["restriction"] == "IE GB US CA"
    assert f["restriction@relationship"] == "allow"
    assert f["price"] == "1.99" and f["price@currency"] == "EUR"
    assert f["uploader@info"] == f"{H}/users/grillymcgrillerson"
    assert f["content_loc"] == f"{H}/video/grilling.mp4"
    assert "content_loc" not in entries[1].videos[0].fields
    assert entries[1].videos[0].fields["player_loc"] == f"{H}/videoplayer?video=124"


def test_news_extension() -> None:
    entries, findings, _ = run(VALID / "news.xml")
    assert findings == []
    assert entries[0].news is not None
    (news,) = entries[0].news
    assert news.line == 6
    assert news.fields["name"] == "The Example Times"
    assert news.fields["language"] == "en"
    assert news.fields["publication_date"] == "2024-05-01T10:00:00+00:00"
    assert news.fields["title"] == "Companies A, B in Merger Talks"


def test_hreflang_alternates() -> None:
    entries, findings, _ = run(VALID / "hreflang.xml")
    assert findings == []
    assert entries[0].alternates is not None
    assert [(a.hreflang, a.href, a.line) for a in entries[0].alternates] == [
        ("en", f"{H}/en/", 7),
        ("de-DE", f"{H}/de/", 8),
        ("x-default", f"{H}/en/", 9),
    ]


# --- broken fixtures: exact codes and lines ------------------------------------

BROKEN_CASES: dict[str, tuple[list[tuple[str, int | None]], int, str | None]] = {
    # name: ([(code, line)], number of entries, kind)
    "leading-whitespace.xml": ([("sitemap-leading-whitespace", 1)], 1, "urlset"),
    "xxe.xml": ([("sitemap-doctype", 1)], 1, "urlset"),
    "billion-laughs.xml": ([("sitemap-doctype", 1), ("sitemap-xml-malformed", 1)], 0, "urlset"),
    "html.xml": ([("sitemap-is-html", 1)], 0, None),
    "raw-ampersand.xml": ([("sitemap-xml-malformed", 7)], 1, "urlset"),
    "nbsp.xml": ([("sitemap-xml-malformed", 7)], 1, "urlset"),
    "mismatched.xml": ([("sitemap-xml-malformed", 7)], 1, "urlset"),
    "truncated.xml": ([("sitemap-xml-malformed", 10)], 2, "urlset"),
    "latin1-declared.xml": ([("sitemap-encoding", 1)], 1, "urlset"),
    "invalid-utf8.xml": ([("sitemap-encoding", 7)], 1, "urlset"),
    "utf16-bom.xml": ([("sitemap-encoding", 1)], 0, None),
    "wrong-root.xml": ([("sitemap-root-invalid", 2)], 0, None),
    "no-namespace.xml": ([("sitemap-namespace", 2)], 1, "urlset"),
    "old-namespace.xml": ([("sitemap-namespace", 2)], 1, "urlset"),
    "element-unknown.xml": (
        # out of order (lines 10 and 27): one finding per sitemap, given at its end
        [("element-unknown", n) for n in (6, 14, 18, 29, 10)],
        6,
        "urlset",
    ),
    "text-bad-lines.txt": ([("text-sitemap-invalid-line", n) for n in (2, 3, 5, 6)], 2, "text"),
    "truncated.xml.gz": ([("sitemap-gzip-invalid", None)], 1, "urlset"),
    "corrupt.xml.gz": ([("sitemap-gzip-invalid", None)], 0, None),
    "binary.bin": ([("sitemap-root-invalid", 1)], 0, None),
    "empty.xml": ([("sitemap-xml-malformed", 1)], 0, None),  # 0 bytes: no document (33.4)
    "sitemap.json": ([("sitemap-root-invalid", 1)], 0, None),
}


def test_every_broken_fixture_is_covered() -> None:
    on_disk = {p.name for p in BROKEN.iterdir()} - {"xxe-secret.txt"}
    assert on_disk == set(BROKEN_CASES)


@pytest.mark.parametrize("name", sorted(BROKEN_CASES))
def test_broken_fixture(name: str) -> None:
    want, n_entries, kind = BROKEN_CASES[name]
    entries, findings, p = run(BROKEN / name)
    assert codes(findings) == want
    assert len(entries) == n_entries
    assert p.kind == kind
    for f in findings:
        assert f.sitemap == "https://www.example.com/sitemap.xml"
        assert f.message and "\n" not in f.message


def test_malformed_messages_give_line_column_and_plain_words() -> None:
    _, findings, _ = run(BROKEN / "raw-ampersand.xml")
    (f,) = findings
    assert f.column is not None and f.column > 1
    assert f"line 7, column {f.column}" in f.message and "&amp;" in f.message
    _, (f,), _ = run(BROKEN / "nbsp.xml")
    assert "nbsp" in f.message and "&#160;" in f.message
    _, (f,), _ = run(BROKEN / "mismatched.xml")
    assert "mismatched tags" in f.message
    _, (f,), _ = run(BROKEN / "truncated.xml")
    assert "truncated" in f.message


def test_entries_before_an_error_are_kept() -> None:
    entries, _, p = run(BROKEN / "truncated.xml")
    assert [e.loc for e in entries] == [f"{H}/a", f"{H}/b"]
    assert p.stopped
    entries, _, _ = run(BROKEN / "invalid-utf8.xml")
    assert [e.loc for e in entries] == [f"{H}/a"]


def test_external_entity_is_never_read() -> None:
    secret = (BROKEN / "xxe-secret.txt").read_text().strip()
    entries, findings, _ = run(BROKEN / "xxe.xml")
    assert "xxe-secret.txt" in findings[0].message  # named, not fetched
    for item in [*entries, *findings]:
        assert secret not in repr(item)
    assert entries[0].loc == f"{H}/&xxe;"


def test_billion_laughs_text_only_is_refused() -> None:
    # Entities used only in text, never in an attribute.
    lol = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol;" if i == 1 else f"&lol{i - 1};") * 10}">' for i in range(1, 10)
    )
    doc = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [{lol}]>\n'
        f'<urlset xmlns="{SM}"><url><loc>{H}/&lol9;</loc></url></urlset>\n'
    ).encode()
    items, p = parse_bytes(doc)
    # libxml2 refuses the nested declarations themselves (amplification guard);
    # nothing is expanded and nothing grows.
    assert [x.code for x in items if isinstance(x, Finding)] == [
        "sitemap-doctype",
        "sitemap-xml-malformed",
    ]
    last = items[-1]
    assert isinstance(last, Finding) and "billion laughs" in last.message
    assert p.entries == 0


def test_entity_declarations_without_nesting_are_reported_not_expanded() -> None:
    doc = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY big "{"x" * 1000}">]>\n'
        f'<urlset xmlns="{SM}"><url><loc>{H}/&big;</loc></url></urlset>\n'
    ).encode()
    items, _ = parse_bytes(doc)
    assert [(x.code, x.line) for x in items if isinstance(x, Finding)] == [("sitemap-doctype", 1)]
    assert [x.loc for x in items if isinstance(x, Entry)] == [f"{H}/&big;"]


def test_element_unknown_details() -> None:
    entries, findings, _ = run(BROKEN / "element-unknown.xml")
    by_loc = {e.loc: e for e in entries}
    assert by_loc[f"{H}/repeated"].lastmod == "2024-05-01T10:00:00+00:00"  # first wins
    assert by_loc[f"{H}/out-of-order"].lastmod == "2024-05-03T10:00:00+00:00"
    messages = [f.message for f in findings]
    assert "more than once" in messages[0]
    assert "<title> is not defined" in messages[1]
    assert "no namespace" in messages[2]
    assert "<sitemap> is not defined inside <urlset>" in messages[3]
    assert messages[4].startswith("2 children out of order, the first at line 10: <loc>")


def test_namespace_findings_still_parse_entries() -> None:
    entries, findings, _ = run(BROKEN / "no-namespace.xml")
    assert entries[0].lastmod == "2024-05-01T10:00:00+00:00"
    assert "no namespace" in findings[0].message
    _, findings, _ = run(BROKEN / "old-namespace.xml")
    assert "sitemap/0.84" in findings[0].message


def test_leading_whitespace_keeps_real_line_numbers() -> None:
    entries, _, _ = run(BROKEN / "leading-whitespace.xml")
    assert entries[0].line == 5


# --- streaming behaviour -------------------------------------------------------------


def _all_fixtures() -> list[Path]:
    return sorted(p for p in [*VALID.iterdir(), *BROKEN.iterdir()])


@pytest.mark.parametrize("path", _all_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_chunk_split_independence(path: Path) -> None:
    data = path.read_bytes()
    whole, pw = parse_bytes(data)
    for chunk in (1, 7):
        items, p = parse_bytes(data, chunk)
        assert items == whole, f"chunk={chunk}"
        # (uncompressed_bytes may differ: after a stop the rest of a chunk is not read)
        assert (p.kind, p.gzip, p.entries, p.stopped) == (pw.kind, pw.gzip, pw.entries, True)


def _generated(n: int, extra: str = "") -> Iterator[bytes]:
    yield f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SM}">\n'.encode()
    batch = []
    for i in range(n):
        batch.append(
            f"<url><loc>{H}/p/{i}</loc><lastmod>2024-05-{i % 28 + 1:02d}</lastmod>"
            f"<priority>0.{i % 10}</priority>{extra}</url>\n"
        )
        if len(batch) == 500:
            yield "".join(batch).encode()
            batch = []
    yield ("".join(batch) + "</urlset>\n").encode()


def test_entries_come_out_before_close() -> None:
    p = StreamParser("s")
    first = []
    for chunk in _generated(1000):
        first.extend(x for x in p.feed(chunk) if isinstance(x, Entry))
    assert len(first) >= 999  # all but possibly the last before close()
    rest = p.close()
    assert len(first) + len(rest) == 1000
    assert p.entries == 1000


def test_text_entries_come_out_before_close() -> None:
    p = StreamParser("s")
    lines = [f"{H}/p/{i}" for i in range(40)]  # more than the 512-byte sniff window
    out = p.feed("\n".join(lines).encode())
    assert [e.loc for e in out if isinstance(e, Entry)] == lines[:-1]
    assert [e.loc for e in p.close() if isinstance(e, Entry)] == lines[-1:]


def test_gzip_bomb_stops_at_the_limit() -> None:
    head = f'<?xml version="1.0"?>\n<urlset xmlns="{SM}"><url><loc>{H}/</loc></url>'.encode()
    # Whitespace broken by an empty comment: libxml2 refuses text nodes over 10 MB,
    # and this test is about the size limit, not that.
    member = gzip.compress(b" " * ((1 << 20) - 7) + b"<!---->", mtime=0)
    bomb = gzip.compress(head, mtime=0) + member * 1024  # 1 GiB inflated, ~1 MiB on disk
    p = StreamParser("bomb")
    items: list[Item] = []
    fed = 0
    for i in range(0, len(bomb), 65536):
        items.extend(p.feed(bomb[i : i + 65536]))
        fed += 1
        if p.stopped:
            break
    items.extend(p.close())
    assert [x.code for x in items if isinstance(x, Finding)] == ["sitemap-too-large"]
    assert [x.loc for x in items if isinstance(x, Entry)] == [f"{H}/"]
    assert fed < len(bomb) // 65536  # stopped long before the end of the input
    assert MAX_UNCOMPRESSED_BYTES < p.uncompressed_bytes <= MAX_UNCOMPRESSED_BYTES + 2048
    assert p.gzip


def test_too_large_plain_document_keeps_entries_before_the_limit() -> None:
    data = b"".join(_generated(2000))
    items, p = parse_bytes(data, 4096, max_bytes=50_000)
    found = [x.code for x in items if isinstance(x, Finding)]
    assert found == ["sitemap-too-large"]
    n = sum(isinstance(x, Entry) for x in items)
    assert 0 < n < 2000
    assert p.stopped


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_memory_stays_flat_for_a_large_document() -> None:
    # 200,000 entries (~25 MB of XML), entries consumed as they come. Without
    # freeing each element the lxml tree alone would take well over 100 MiB of C
    # memory, which tracemalloc cannot see: current RSS can.
    p = StreamParser("big")
    before = _rss_mib()
    n = 0
    for chunk in _generated(200_000, "<changefreq>weekly</changefreq>"):
        n += sum(1 for x in p.feed(chunk) if isinstance(x, Entry))
    grown = _rss_mib() - before
    n += sum(1 for x in p.close() if isinstance(x, Entry))
    assert n == 200_000
    assert grown < 30, f"RSS grew {grown:.0f} MiB"


@pytest.mark.slow
def test_python_memory_stays_flat() -> None:
    tracemalloc.start()
    p = StreamParser("big")
    for chunk in _generated(20_000):
        p.feed(chunk)
    p.close()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert p.entries == 20_000
    assert peak < 2 * 2**20, f"Python peak {peak / 2**20:.1f} MiB"


def test_unknown_top_level_elements_between_entries_are_reported() -> None:
    doc = (
        f'<urlset xmlns="{SM}" xmlns:x="urn:x">\n<url><loc>{H}/a</loc></url>\n'
        f"<!-- comment -->\n<x:meta/>\n<foo/>\n<url><loc>{H}/b</loc></url>\n</urlset>"
    ).encode()
    for chunk in (1, None):
        items, _ = parse_bytes(doc, chunk)
        assert [(x.code, x.line) for x in items if isinstance(x, Finding)] == [
            ("element-unknown", 5)
        ]


def test_utf8_bom_is_fine_and_html_without_declaration_detected() -> None:
    bom = b"\xef\xbb\xbf" + (VALID / "urlset.xml").read_bytes()
    items, p = parse_bytes(bom)
    assert not [x for x in items if isinstance(x, Finding)]
    assert p.entries == 4
    items, p = parse_bytes(b"\n\n<HTML><body>hi</body></HTML>")
    assert [x.code for x in items if isinstance(x, Finding)] == ["sitemap-is-html"]
    assert p.is_html and p.stopped


def test_declared_utf16_on_ascii_bytes_stops() -> None:
    items, p = parse_bytes(b'<?xml version="1.0" encoding="UTF-16"?><urlset/>')
    assert [x.code for x in items if isinstance(x, Finding)] == ["sitemap-encoding"]
    assert p.stopped and p.entries == 0


def test_empty_and_blank_documents_are_no_document() -> None:
    for data in (b"", b"   \n\r\n\t"):
        items, p = parse_bytes(data)
        assert [(f.code, f.severity.value) for f in items if isinstance(f, Finding)] == [
            ("sitemap-xml-malformed", "error")
        ]
        assert p.kind is None and p.entries == 0


def test_feed_after_stop_is_ignored() -> None:
    p = StreamParser("s")
    assert [f.code for f in p.feed(b"<ht") if isinstance(f, Finding)] == []  # undecided yet
    out = p.feed(b"ml><body>")  # a first tag is enough to decide
    assert [f.code for f in out if isinstance(f, Finding)] == ["sitemap-is-html"]
    assert p.feed(b"<urlset/>") == []
    assert p.close() == []


def test_parse_file_exposes_the_parser() -> None:
    pf = parse_file(VALID / "urlset-double.xml.gz", chunk_size=16)
    assert pf.parser.kind is None  # nothing read yet
    assert sum(isinstance(x, Entry) for x in pf) == 4
    assert (pf.parser.kind, pf.parser.gzip, pf.parser.stopped) == ("urlset", True, True)
    assert pf.parser.source == str(VALID / "urlset-double.xml.gz")


def test_nested_entry_at_a_chunk_end_is_reported_not_a_crash() -> None:
    # An own-namespace <url> inside a <url>, the input cut right after the inner one:
    # the outer <url> is still open, so the newest handled entry is the first one.
    head = (
        f'<?xml version="1.0"?>\n<urlset xmlns="{SM}">\n<url><loc>{H}/1</loc></url>\n'
        f"<url><loc>{H}/2</loc><url><loc>{H}/n</loc></url>\n"
    ).encode()
    tail = f"</url>\n<url><loc>{H}/3</loc></url>\n</urlset>\n".encode()
    p = StreamParser(f"{H}/sitemap.xml")
    items = p.feed(head) + p.feed(tail) + p.close()
    whole, _ = parse_bytes(head + tail)
    assert items == whole
    assert [x.loc for x in items if isinstance(x, Entry)] == [f"{H}/1", f"{H}/2", f"{H}/3"]
    assert codes([x for x in items if isinstance(x, Finding)]) == [("element-unknown", 4)]
