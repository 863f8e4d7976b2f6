"""audit.sitemap.entries: one entry read with care, child by child, and its extensions."""

from __future__ import annotations

from typing import Any

from lxml import etree

from audit.core.records import Finding
from audit.sitemap.doc import Doc
from audit.sitemap.entries import EntryReader, read_image

H = "https://www.example.com"
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMG = "http://www.google.com/schemas/sitemap-image/1.1"
VID = "http://www.google.com/schemas/sitemap-video/1.1"
XH = "http://www.w3.org/1999/xhtml"


def found(doc: Doc) -> list[Finding]:
    """The findings handed out so far (a reader that only reports gives no entries)."""
    return [x for x in doc.flush() if isinstance(x, Finding)]


def urls(body: str) -> list[Any]:
    root = etree.fromstring(
        f'<urlset xmlns="{SM}" xmlns:image="{IMG}" xmlns:video="{VID}" xmlns:xhtml="{XH}">{body}</urlset>'
    )
    return list(root)


def careful(line_offset: int = 0) -> tuple[EntryReader, Doc]:
    doc = Doc(f"{H}/sitemap.xml", lambda: None)
    doc.line_offset = line_offset
    return EntryReader(doc, f"{{{SM}}}url", "url", SM), doc


def test_children_out_of_order_are_counted_and_said_once() -> None:
    reader, doc = careful(line_offset=1)  # a blank line before the document
    entries = [
        reader.read(el)
        for el in urls(
            f"\n<url><priority>0.5</priority><loc>{H}/a</loc></url>"
            f"\n<url><priority>0.4</priority><loc>{H}/b</loc><loc>{H}/c</loc></url>"
        )
    ]
    assert [(e.loc, e.priority, e.line) for e in entries] == [
        (f"{H}/a", "0.5", 3),
        (f"{H}/b", "0.4", 4),
    ]
    [repeated] = found(doc)  # at once; the disorder waits for the end of the document
    assert repeated.message == "<loc> appears more than once in one <url> (the first is used)"
    reader.report()
    [disorder] = found(doc)
    assert (disorder.code, disorder.line) == ("element-unknown", 3)
    assert disorder.message.startswith(
        "2 children out of order, the first at line 3: <loc> inside <url>"
    )


def test_undefined_and_no_namespace_children_are_named() -> None:
    reader, doc = careful()
    [el] = urls(f'<url><loc>{H}/a</loc><title>x</title><lastmod xmlns="">2024</lastmod></url>')
    assert reader.read(el).lastmod is None
    assert [f.message for f in found(doc)] == [
        "<title> is not defined inside <url>",
        "<lastmod> inside <url> has no namespace",
    ]


def test_extensions_are_read_and_hreflang_needs_rel_alternate() -> None:
    reader, doc = careful()
    [el] = urls(
        f"<url><loc>{H}/a</loc>"
        f"<video:video><video:title>T</video:title>"
        f'<video:restriction relationship="allow">FR</video:restriction></video:video>'
        f'<xhtml:link rel="alternate" hreflang="de" href="{H}/de/a"/>'
        f'<xhtml:link rel="canonical" href="{H}/b"/></url>'
    )
    entry = reader.read(el)
    assert found(doc) == []
    assert entry.videos is not None and entry.videos[0].fields == {
        "title": "T",
        "restriction": "FR",
        "restriction@relationship": "allow",
    }
    assert [(a.hreflang, a.href) for a in entry.alternates or []] == [("de", f"{H}/de/a")]


def test_an_image_keeps_its_first_loc_and_names_deprecated_children_once() -> None:
    [el] = urls(
        f"<image:image><image:caption>c</image:caption><image:loc>{H}/1.jpg</image:loc>"
        f"<image:loc>{H}/2.jpg</image:loc><image:caption>d</image:caption>"
        "<image:title>t</image:title></image:image>"
    )
    image = read_image(el, 7)
    assert (image.loc, image.line, image.deprecated) == (f"{H}/1.jpg", 7, ["caption", "title"])
