"""audit.sitemap.text: the lines of a text sitemap, whatever pieces they come in."""

from __future__ import annotations

from audit.core.records import Entry, Finding
from audit.sitemap.doc import Doc
from audit.sitemap.text import TextReader

H = "https://www.example.com"


def reader(line_offset: int = 0) -> tuple[TextReader, Doc]:
    doc = Doc(f"{H}/sitemap.txt", lambda: setattr(doc, "stopped", True))
    doc.line_offset = line_offset  # blank lines the sniffer skipped
    return TextReader(doc), doc


def test_a_line_in_many_pieces_is_one_entry_with_its_real_line() -> None:
    tr, doc = reader(line_offset=2)
    for piece in (b"https://www.ex", b"ample.com/a", b"\r\n\nnot a url\nhttps://www.example.com/b"):
        tr.feed(piece)
    assert [x.loc for x in doc.items if isinstance(x, Entry)] == [f"{H}/a"]
    tr.close()
    entries = [(x.loc, x.line) for x in doc.items if isinstance(x, Entry)]
    assert entries == [(f"{H}/a", 3), (f"{H}/b", 6)] and doc.entries == 2
    [bad] = [x for x in doc.items if isinstance(x, Finding)]
    assert (bad.code, bad.line) == ("text-sitemap-invalid-line", 5)
    assert doc.stopped


def test_a_line_cut_off_by_the_network_is_not_a_url() -> None:
    tr, doc = reader()
    tr.feed(b"https://www.example.com/a\nhttps://www.exa")
    doc.cut = True
    tr.close()
    assert [x.loc for x in doc.items if isinstance(x, Entry)] == [f"{H}/a"]


def test_bytes_that_are_not_utf8_stop_the_reading() -> None:
    tr, doc = reader()
    tr.feed(
        b"https://www.example.com/a\nhttps://www.example.com/\xe9t\xe9\nhttps://www.example.com/c\n"
    )
    assert doc.stopped and doc.entries == 1
    [enc] = [x for x in doc.items if isinstance(x, Finding)]
    assert (enc.code, enc.line, enc.column) == ("sitemap-encoding", 2, 25)
