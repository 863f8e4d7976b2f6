"""A page's main text and own modification date (audit/checks/maintext.py), from a real
lxml tree: noise elements and per-request values left out of the text, the main element
preferred, dates from JSON-LD and meta tags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from lxml import etree

from audit.checks.maintext import (
    content_charset,
    main_text,
    page_modified,
    parse_page_date,
    text_fingerprint,
)


def tree(html: str) -> Any:
    return etree.fromstring(html.encode(), etree.HTMLParser())


def test_noise_elements_are_not_main_text() -> None:
    page = tree(
        "<html><head><title>T</title><script>var x=1</script></head><body>"
        "<header>Site</header><nav>Menu</nav><div class='ad-slot'>Buy</div>"
        "<div id='cookie-banner'>Cookies?</div><p>The   story\n goes on.</p>"
        "<form><button>Go</button></form><aside>Related</aside><footer>(c)</footer>"
        "</body></html>"
    )
    assert main_text(page) == "The story goes on."


@pytest.mark.parametrize(
    "main",
    ["<main>{}</main>", "<div role='main'>{}</div>", "<article>{}</article>"],
)
def test_the_main_element_wins_over_the_rest_of_the_body(main: str) -> None:
    inner = "<h1>Title</h1> <p>Body</p>"
    page = tree(f"<html><body><div>Teaser</div> {main.format(inner)} <div>More</div></body></html>")
    assert main_text(page) == "Title Body"


def test_two_articles_fall_back_to_the_body() -> None:
    page = tree("<html><body><p>Intro</p> <article>A</article> <article>B</article></body></html>")
    assert main_text(page) == "Intro A B"


def test_per_request_values_do_not_change_the_fingerprint() -> None:
    def fp(stamp: str, token: str) -> int:
        html = f"<html><body><p>Price list. Updated {stamp}. Request {token}.</p></body></html>"
        return text_fingerprint(main_text(tree(html)))

    assert fp("2024-05-01T10:00:00Z", "9f8e7d6c5b4a39281706") == fp(
        "2024-06-02 11:30", "1a2b3c4d5e6f7a8b9c0d"
    )
    changed = text_fingerprint(main_text(tree("<html><body><p>Price list, new.</p></body></html>")))
    assert changed != fp("2024-05-01", "9f8e7d6c5b4a39281706")


def test_the_fingerprint_is_a_signed_64_bit_integer() -> None:
    values = {text_fingerprint(t) for t in ("", "a", "b", "é" * 1000)}
    assert len(values) == 4
    assert all(-(2**63) <= v < 2**63 for v in values)
    assert text_fingerprint("a") == text_fingerprint("a")


def test_the_charset_a_fingerprint_decodes_with() -> None:
    assert content_charset(b"<meta charset=koi8-r>", "cp1252") == "cp1252"
    assert content_charset(b"\xef\xbb\xbf<meta charset=koi8-r>", None) == "utf-8"
    assert content_charset(b"<meta charset=koi8-r>", None) == "koi8-r"
    assert content_charset(b"<p>x</p>", None) == "utf-8"


def test_the_page_s_own_date_from_json_ld_first_then_meta() -> None:
    both = tree(
        '<html><head><meta property="article:modified_time" content="2023-01-01">'
        '<script type="application/ld+json">[{"@type": "Thing"}, {"@graph": '
        '[{"dateModified": "2024-03-01T10:00:00+01:00"}]}]</script></head></html>'
    )
    when, source, text = page_modified(both)  # type: ignore[misc]
    assert when == datetime(2024, 3, 1, 9, tzinfo=UTC)
    assert (source, text) == ("JSON-LD dateModified", "2024-03-01T10:00:00+01:00")
    meta = tree('<html><head><meta name="og:updated_time" content="2023-01-01"></head></html>')
    assert page_modified(meta) == (
        datetime(2023, 1, 1, tzinfo=UTC),
        '<meta property="og:updated_time">',
        "2023-01-01",
    )
    broken = tree('<html><head><script type="application/ld+json">{no</script></head></html>')
    assert page_modified(broken) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T10:00:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),  # ISO, no zone: UTC
        ("2024-05-01T10:00:00.5+02:00",
         datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=timezone(timedelta(hours=2)))),
        ("yesterday", None),
        ("", None),
    ],
)  # fmt: skip
def test_page_dates(text: str, expected: datetime | None) -> None:
    assert parse_page_date(text) == expected
