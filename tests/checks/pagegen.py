"""Generated HTML pages for the differential tests (hypothesis strategies): heads and
bodies of the usual elements, broken markup, charsets, BOMs, late meta charsets and heads
longer than the cap."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = ["Hello", "world", "Café", "Страница", "не найдена", "404", "x", "&amp;", "&lt;b&gt;", "  "]

_text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
_name = st.sampled_from(["robots", "Robots", "googlebot", "description", "sitemap-audit", "x"])
_content = st.sampled_from(["noindex", "noindex, follow", "none", "nosnippet", "index", ""])
_href = st.sampled_from(["/a", "https://example.com/b", "c#frag", " /d ", "", "mailto:x@y"])
_lang = st.sampled_from(["en", "de-DE", "x-default", "en_UK"])

_head_part = st.one_of(
    st.builds("<title>{}</title>".format, _text),
    st.builds('<meta name="{}" content="{}">'.format, _name, _content),
    st.builds("<meta name={} content='{}'/>".format, _name, _content),
    st.builds('<link rel="canonical" href="{}">'.format, _href),
    st.builds('<link rel="alternate" hreflang="{}" href="{}">'.format, _lang, _href),
    st.builds('<base href="{}">'.format, _href),
    st.just("<script>var s = '<body><h1>no</h1>';</script>"),
    st.just('<script type="application/ld+json">{"dateModified": "2024-01-02"}</script>'),
    st.just('<script src="/app.js"></script>'),
    st.just("<style>p { color: red }</style>"),
    st.just("<noscript><meta name=robots content=noindex><img src=x></noscript>"),
    st.just("<template><link rel=canonical href=/t></template>"),
    st.just("<!-- a comment <meta name=robots content=noindex> -->"),
    st.just("\n  "),
    st.just('<meta charset="windows-1251">'),
    st.just('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'),
)
_body_part = st.one_of(
    _text,
    st.builds("<h1>{}</h1>".format, _text),
    st.builds("<h1>{} <em>{}</em></h1>".format, _text, _text),
    st.builds("<p>{}</p>".format, _text),
    st.builds("<div>{}<br>{}</div>".format, _text, _text),
    st.builds("<ul><li>{}</li><li>{}</li></ul>".format, _text, _text),
    st.builds('<a href="{}">{}</a>'.format, _href, _text),
    st.builds('<a rel="nofollow" href="{}">n</a>'.format, _href),
    st.just("<script>document.write('<p>js</p>')</script>"),
    st.just('<script type="module" src="/m.js"></script>'),
    st.just('<script type="application/ld+json">{}</script>'),
    st.just("<noscript>Enable JavaScript</noscript>"),
    st.just("<link rel=canonical href=/in-body>"),
    st.just("<title>body title</title>"),
    st.just("<!-- <a href=/comment>c</a> -->"),
    st.just("<img src=x alt=y>"),
    st.just("<b>unclosed <i>tags"),
    st.just("</div></span>"),
)


@st.composite
def pages(draw: st.DrawFn) -> tuple[bytes, int, str | None]:
    """(body, cap, HTTP charset) of a generated page."""
    head = "".join(draw(st.lists(_head_part, max_size=12)))
    body = "".join(draw(st.lists(_body_part, max_size=30)))
    pad = draw(st.sampled_from([0, 0, 0, 300, 1100, 5000]))
    head = f"<!--{'p' * pad}-->" + head if pad else head
    filler = draw(st.sampled_from([0, 0, 50, 2000]))
    body += "<p>more filler text here</p>" * filler
    html = draw(
        st.sampled_from(
            [
                "<!DOCTYPE html><html><head>{h}</head><body>{b}</body></html>",
                "<html><head>{h}</head>\n<body class=x>{b}",
                "<head>{h}{b}",
                "{h}{b}",
                "<html>{h}</head>{b}</html>",
            ]
        )
    ).format(h=head, b=body)
    charset = draw(st.sampled_from(["utf-8", "utf-8", "cp1251", "cp1252"]))
    raw = html.encode(charset, "replace")
    raw = draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf"])) + raw
    cap = draw(st.sampled_from([512 * 1024, 512 * 1024, 4096, 1500, 20000]))
    http = draw(st.sampled_from([None, None, None, "windows-1251", "utf-8"]))
    return raw, cap, http
