"""Page checks as pure functions: FetchResult + PageFacts in, findings out (the run-wide
hreflang store is tested in tests/rules/test_hreflang.py)."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.checks.page import (
    NOT_FOUND_PATTERNS,
    SOFT404_SIMILARITY,
    PageSink,
    check_page,
    needs_probe,
    not_found_phrase,
    similarity,
    soft404_text,
)
from audit.checks.pagefacts import PageFacts, facts_of
from audit.checks.response import Answered, judge_answer
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, Hop

URL = "https://example.com/shop/item"
AGENT = "sitemap-audit"


def head(html: str | bytes, cap: int = 512 * 1024, at_eof: bool = True) -> PageFacts:
    data = html.encode() if isinstance(html, str) else html
    return facts_of(data, cap=cap, at_eof=at_eof)


def result(
    url: str = URL,
    headers: tuple[tuple[str, str], ...] = (),
    *,
    final_url: str | None = None,
    redirects: tuple[Hop, ...] = (),
) -> FetchResult:
    hdrs = (("content-type", "text/html"), *headers)
    return FetchResult(
        url=url,
        final_url=final_url or url,
        status=200,
        headers=hdrs,
        redirects=redirects,
        method="GET",
    )


def run(
    html: str | bytes,
    res: FetchResult | None = None,
    probe: str | None = None,
    cap: int = 512 * 1024,
) -> list[Finding]:
    res = res or result()
    answered = judge_answer(
        res, lastmod=None, sitemap="s.xml", line=3, config=CrawlConfig(), agent_token=AGENT
    )
    return check_page(
        res, head(html, cap), answered, agent_token=AGENT, sitemap="s.xml", line=3, probe=probe
    ).findings


def answered(res: FetchResult) -> Answered:
    """The URL checks' verdict on the same answer, as check_page's caller has it."""
    return judge_answer(
        res, lastmod=None, sitemap=None, line=None, config=CrawlConfig(), agent_token=AGENT
    )


def codes(fs: list[Finding]) -> list[str]:
    return [f.code for f in fs]


# --- noindex ----------------------------------------------------------------


def test_meta_robots_noindex_and_none() -> None:
    fs = run('<head><meta name="ROBOTS" content="NoIndex, follow"></head>')
    assert codes(fs) == ["url-noindex"]
    assert fs[0].line == 3 and fs[0].sitemap == "s.xml" and "meta" in fs[0].message
    assert codes(run("<meta name=robots content=none>")) == ["url-noindex"]
    assert codes(run(f"<meta name={AGENT} content=noindex>")) == ["url-noindex"]


def test_meta_for_another_agent_or_without_noindex_is_silent() -> None:
    assert run("<meta name=googlebot content=noindex><meta name=bingbot content=none>") == []
    assert run("<meta name=robots content='nofollow, noarchive'>") == []
    assert run("<body><meta name=robots content=noindex>") == []  # not in the head


def test_header_and_meta_noindex_make_one_finding() -> None:
    res = result(headers=(("x-robots-tag", "noindex"),))
    fs = run("<meta name=robots content=noindex>", res)
    assert codes(fs) == ["url-noindex"]
    assert "X-Robots-Tag" in fs[0].message and "<meta" in fs[0].message


# --- canonical --------------------------------------------------------------


def test_canonical_to_another_url_relative_resolved_against_the_final_url() -> None:
    fs = run("<link rel=canonical href='../other'>")
    assert codes(fs) == ["url-canonical-mismatch"]
    assert "https://example.com/other" in fs[0].message
    redirected = result(final_url="https://example.com/new/item", redirects=(Hop(URL, 301),))
    fs = run("<link rel=canonical href='item'>", redirected)
    assert "url-canonical-mismatch" not in codes(fs)  # names the final URL: the redirect says it


def test_canonical_equal_up_to_scheme_host_case_and_default_port_is_silent() -> None:
    assert run("<link rel=canonical href='HTTPS://EXAMPLE.COM:443/shop/item'>") == []
    assert run("<link rel=canonical href='https://example.com/shop/item#top'>") == []
    assert run("<link rel=canonical href='/shop/item'>") == []


def test_base_href_is_used_for_a_relative_canonical() -> None:
    assert run("<base href='https://example.com/shop/'><link rel=canonical href='item'>") == []


def test_several_conflicting_canonicals_are_one_finding_with_the_detail() -> None:
    fs = run("<link rel=canonical href=/a><link rel=canonical href=/b><link rel=canonical href=/a>")
    assert codes(fs) == ["url-canonical-mismatch"]
    assert "2 rel=canonical" in fs[0].message and "/a" in fs[0].message and "/b" in fs[0].message
    # the same URL twice is not a conflict
    assert run(f"<link rel=canonical href={URL}><link rel=canonical href=/shop/item>") == []


def test_link_header_canonical_is_not_reported_twice() -> None:
    header = (("link", '<https://example.com/other>; rel="canonical"'),)
    fs = run("<link rel=canonical href=/other>", result(headers=header))
    assert codes(fs) == ["url-canonical-mismatch"]
    assert "Link header" in fs[0].message  # checks.py's finding, kept as it was
    fs = run("<link rel=canonical href=/third>", result(headers=header))
    assert codes(fs) == ["url-canonical-mismatch"]
    assert "conflicting" in fs[0].message and "/third" in fs[0].message
    self_header = (("link", f'<{URL}>; rel="canonical"'),)
    fs = run("<link rel=canonical href=/x>", result(headers=self_header))
    assert codes(fs) == ["url-canonical-mismatch"] and "conflicting" in fs[0].message


def test_canonical_in_the_body_or_after_an_invalid_head_element_does_not_count() -> None:
    assert run("<head><title>t</title></head><body><link rel=canonical href=/x>") == []
    assert run("<head><img src=a><link rel=canonical href=/x>") == []


def test_truncated_head_reports_what_it_saw_and_says_it_stopped() -> None:
    html = "<head><link rel=canonical href=/other>" + "<meta name=x content=y>" * 500
    fs = run(html + "<meta name=robots content=noindex></head>", cap=2000)
    assert codes(fs) == ["url-canonical-mismatch"]  # the noindex after the cap was not seen
    assert "read the first 2000 bytes only" in fs[0].message
    res = result()
    verdict = check_page(
        res,
        head(html, 2000, at_eof=False),
        answered(res),
        agent_token=AGENT,
        sitemap=None,
        line=None,
    )
    assert verdict.record["truncated"] is True and verdict.record["bytes_read"] == 2000


# --- soft 404 ---------------------------------------------------------------


def test_not_found_wording_in_several_languages() -> None:
    for text in [
        "Page not found – Example",
        "404",
        "Error 404 | Shop",
        "404 - Example",
        "Seite nicht gefunden",
        "Page introuvable",
        "Cette page n'existe pas",
        "Página no encontrada",
        "No se encontró la página",
        "Pagina non trovata",
        "Página não encontrada",
        "Pagina niet gevonden",
        "Nie znaleziono strony",
        "ページが見つかりません",
        "页面找不到了",
        "未找到页面",
        "Страница не найдена",
    ]:
        assert not_found_phrase(text), text
    for other in ["Peugeot 404 parts", "Found: the best shoes", "Room 4040", "Welcome", None]:
        assert not_found_phrase(other) is None, other


# the phrases of NOT_FOUND_PATTERNS (ASCII look-alikes of the non-ASCII ones), and words
_PHRASES = [
    "not found",
    "page does not exist",
    "page doesn't exist",
    "no longer exists",
    "404",
    "error 404",
    "404 page",
    "fehler 404",
    "erreur 404",
    "errore 404",
    "erro 404",
    "fout 404",
    "pagina 404",
    "seite 404",
    "strona 404",
    "404 fehler",
    "404 erreur",
    "404 errore",
    "404 erro",
    "404 pagina",
    "404 seite",
    "nicht gefunden",
    "existiert nicht",
    "page introuvable",
    "n'existe pas",
    "page non trouvee",
    "no encontrada",
    "no encontrado",
    "no se encontro",
    "no se ha encontrado",
    "no existe",
    "non trovata",
    "non trovato",
    "non esiste",
    "nao encontrada",
    "nao existe",
    "niet gevonden",
    "bestaat niet",
    "nie znaleziono",
    "nie istnieje",
    "bulunamadi",
    "BULUNAMADI",
    "hittades inte",
    "nenalezena",
    "nenalezen",
    "ei loytynyt",
    "page",
    "error",
    "not",
    "found",
    "exist",
    "no",
    "non",
    "nie",
    "the",
    "shop",
]
_ASCII_TEXT = st.lists(
    st.one_of(
        st.sampled_from(_PHRASES).map(str.upper),
        st.sampled_from(_PHRASES),
        st.sampled_from(_PHRASES).map(str.title),
        st.text(string.printable, max_size=4),
    ),
    max_size=8,
).flatmap(lambda parts: st.sampled_from([" ", "", "-", "  "]).map(lambda sep: sep.join(parts)))


@settings(max_examples=3000, deadline=None)
@given(_ASCII_TEXT)
def test_the_ascii_shortcut_decides_as_the_full_pattern(text: str) -> None:
    # not_found_phrase rules out ASCII text without a hint word before the full pattern
    m = NOT_FOUND_PATTERNS.search(text)
    assert not_found_phrase(text) == (m.group().strip() if m and text else None)


def test_a_canonical_or_base_urllib_cannot_parse_is_a_finding_not_a_crash() -> None:
    fs = run('<head><link rel="canonical" href="http://[::1"></head><body>x')
    assert codes(fs) == ["url-canonical-mismatch"] and "http://[::1" in fs[0].message
    fs = run(f'<head><base href="//[bad"><link rel="canonical" href="{URL}"></head><body>x')
    assert codes(fs) == []


def test_soft_404_from_title_or_h1() -> None:
    fs = run("<title>Oops! Page not found</title>")
    assert codes(fs) == ["url-soft-404"] and "title" in fs[0].message
    fs = run("<title>Shop</title><body><h1>Страница не найдена</h1>")
    assert codes(fs) == ["url-soft-404"] and "main heading" in fs[0].message
    assert run("<title>Shop</title><h1>Best shoes</h1>") == []


def test_soft_404_tiny_page_near_identical_to_the_probe() -> None:
    probe_html = (
        "<title>Shop</title><p>Sorry, /sitemap-audit-probe-1a2b is gone away, try search.</p>"
    )
    probe_reader = head(probe_html)
    probe = soft404_text(probe_reader, "https://example.com/sitemap-audit-probe-1a2b")
    assert probe is not None and "{url}" in probe
    page = "<title>Shop</title><p>Sorry, /shop/item is gone away, try search.</p>"
    fs = run(page, probe=probe)
    assert codes(fs) == ["url-soft-404"] and "identical" in fs[0].message
    # a real page of the same template is not
    assert run("<title>Shop</title><p>Red shoes, size 42, in stock: 59 EUR.</p>", probe=probe) == []
    # an almost empty shell is never compared
    assert soft404_text(head("<div id=root></div>"), URL) is None
    # a page not read to its end is not tiny
    assert soft404_text(head(page, at_eof=False), URL) is None
    assert needs_probe(head(page), URL)
    assert not needs_probe(head("<title>404</title><p>Sorry, this is gone away.</p>"), URL)
    assert not needs_probe(head(page, at_eof=False), URL)


def test_similarity_threshold() -> None:
    a = "sorry, {url} is gone away, try search."
    assert similarity(a, a) == 1.0
    assert similarity(a, a.replace("search", "searching")) >= SOFT404_SIMILARITY  # one word
    assert (
        similarity(a, a.replace("gone away, try search", "in stock, 59 EUR")) < SOFT404_SIMILARITY
    )
    assert similarity(a, "completely different words here") < SOFT404_SIMILARITY


# --- hreflang in the head ---------------------------------------------------


def test_hreflang_invalid_missing_self_and_valid() -> None:
    ok = (
        f"<link rel=alternate hreflang=en href={URL}>"
        "<link rel=alternate hreflang=de-DE href=https://example.com/de/item>"
    )
    res = result()
    verdict = check_page(res, head(ok), answered(res), agent_token=AGENT, sitemap=None, line=None)
    assert verdict.findings == []
    assert verdict.alternates == [URL, "https://example.com/de/item"]

    fs = run("<link rel=alternate hreflang=en-UK href=https://example.com/en/item>")
    assert codes(fs) == ["hreflang-invalid", "hreflang-missing-self"]
    assert "GB" in fs[0].message
    fs = run(
        f"<link rel=alternate hreflang=en href=/relative><link rel=alternate hreflang=en href={URL}>"
    )
    assert codes(fs) == ["hreflang-invalid"]


# --- the sink the HTTP client feeds -----------------------------------------


def test_page_sink_reads_only_200_html_and_restarts_on_a_retry() -> None:
    sink = PageSink(cap=1000)
    assert sink.start(404, [("content-type", "text/html")]) is False
    assert sink.start(200, [("content-type", "application/pdf")]) is False
    assert sink.start(200, [("content-type", "text/html; charset=windows-1251")]) is True
    sink.feed(b"<title>\xcd\xe5")
    assert sink.start(200, [("content-type", "text/html")]) is True  # a retry: fresh reader
    sink.feed(b"<title>ok</title>")
    sink.end(at_eof=True)
    assert sink.facts is not None and sink.facts.title == "ok" and sink.facts.complete
