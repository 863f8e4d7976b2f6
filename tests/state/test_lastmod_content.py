"""The main-text fingerprint (audit.checks.content) and the lastmod comparisons of
audit.features.lastmod, on their own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from audit.checks.content import ContentSink, page_content
from audit.features.lastmod import lastmod_moved, page_date_gap

PAGE = """<html><head><meta name="csrf-token" content="{tok}"><script>var n="{tok}"</script>
<link href="/app.{asset}.css" rel="stylesheet"><style>p{{color:red}}</style></head>
<body class="page"><nav>Home</nav><div id="ad-top">{ad}</div>
<p>{text}</p><p>Request {req} served at {time}</p><input type="hidden" value="{tok}">
<aside>Related</aside><footer>Built {date}</footer></body></html>"""


def _fp(text: str, n: int) -> int | None:
    body = PAGE.format(
        tok=f"{n}f0e1d2c3b4a5968778695a4b3c2d1e0f",
        asset=f"{n}a9b8c7d6e5f4",
        ad=f"ad number {n}",
        text=text,
        req=f"{n}{n}{n}{n}{n}{n}{n}",
        time=f"1{n}:0{n}:33",
        date=f"2024-0{n}-0{n}T10:00:00Z",
    )
    return page_content(body.encode(), None).fingerprint


def test_noise_does_not_count_text_does() -> None:
    assert _fp("The text of the page.", 1) == _fp("The text of the page.", 2)
    assert _fp("The text of the page.", 1) != _fp("The text of the page, edited.", 1)
    assert _fp("The   text\nof the page.", 1) == _fp("The text of the page.", 3)


def test_main_element_only() -> None:
    a = b"<html><body><div>menu 1</div><main><p>Body</p></main></body></html>"
    b = b"<html><body><div>menu 2</div><main><p>Body</p></main></body></html>"
    c = b"<html><body><div>menu 2</div><main><p>Body!</p></main></body></html>"
    fps = [page_content(x, "utf-8").fingerprint for x in (a, b, c)]
    assert fps[0] == fps[1] != fps[2]


def test_page_dates() -> None:
    graph = (
        b'<html><head><script type="application/ld+json">{"@graph": [{"@type": "WebPage"}, '
        b'{"dateModified": "2024-03-01T10:00:00+01:00"}]}</script></head><body>x</body></html>'
    )
    got = page_content(graph, None)
    assert got.modified == datetime(2024, 3, 1, 9, tzinfo=UTC)
    assert got.modified_source == "JSON-LD dateModified"
    meta = b'<html><head><meta property="article:modified_time" content="2024-03-01"></head></html>'
    assert page_content(meta, None).modified == datetime(2024, 3, 1, tzinfo=UTC)
    broken = b'<html><head><script type="application/ld+json">{oops</script></head></html>'
    assert page_content(broken, None).modified is None


def test_head_only_sink_stops_at_the_body() -> None:
    sink = ContentSink(10_000, head_only=True)
    assert sink.start(200, [("content-type", "text/html")])
    assert not sink.feed(b"<html><head><title>t</title>")
    assert sink.feed(b"</head><body>")
    assert not ContentSink(100).start(404, [("content-type", "text/html")])
    assert not ContentSink(100).start(200, [("content-type", "application/pdf")])


def test_lastmod_moved_and_gap() -> None:
    assert not lastmod_moved("2024-05-01T10:00:00+00:00", "2024-05-01T12:00:00+02:00")
    assert lastmod_moved("2024-05-01", "2024-05-02")
    day = datetime(2024, 5, 1, 23, tzinfo=UTC)
    assert page_date_gap(day, "2024-05-01") == timedelta(0)  # inside the day
    assert page_date_gap(day + timedelta(days=2), "2024-05-01") == timedelta(days=1, hours=23)
    assert page_date_gap(day, "not a date") is None
