"""Raw HTML against the rendered page (`crawl --render`, contracts/render.md).

Both documents are read by the same rules: `page_facts(facts, final, ...)` takes the
`PageFacts` of one parse (checks/pagefacts.py; the raw page's are those the page checks
read, the rendered DOM is parsed the same way by `rendered_facts`) and gives what is
compared: the robots meta's noindex for the agent, the head's canonical targets (or the
page's own final URL when it names none), the first title (whitespace collapsed), the
head's hreflang pairs, the followable internal links (same origin, not the page itself,
none when the meta or `X-Robots-Tag` says nofollow) and the visible body text. Relative
URLs resolve against `<base href>` and the raw answer's final URL, for both documents;
URLs are compared after `loc-duplicate`'s normalisation, fragment dropped.

`compare(raw, rendered, ...)` gives the `render-*` findings of a rendered page;
`js_redirect()` and `render_failed()` the findings of a page that navigated away or did
not finish (each then alone). `render_record()` is the url record's `render` object.

Pure and synchronous: must not import aiohttp, asyncio or audit.http.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Final

from lxml import etree

from audit.checks.hrefs import base_of, joined, norm_url
from audit.checks.links import links_of
from audit.checks.pagefacts import HEAD, LINKS, PageFacts, facts_of
from audit.core.records import Finding, finding
from audit.rules.urls import origin

__all__ = [
    "CONTENT_CHARS",
    "RAW_WANTS",
    "RenderFacts",
    "compare",
    "js_links",
    "js_redirect",
    "page_facts",
    "render_failed",
    "render_record",
    "rendered_facts",
    "visible_chars",
]

RAW_WANTS: Final = HEAD | LINKS  # what the raw page's one parse must give
CONTENT_CHARS: Final = 200  # render-content-only: visible text of the rendered body
_SHOWN: Final = 3  # links or hreflang pairs named in a message
_HIDDEN: Final = frozenset({"script", "style", "template", "noscript", "title"})
_HTML: Final = etree.HTMLParser()


@dataclass(frozen=True, slots=True)
class RenderFacts:
    """What one document says, as compared (URLs normalised, fragment dropped)."""

    title: str | None
    noindex: bool
    canonical: tuple[str, ...]  # the head's targets, resolved (empty: none)
    canonical_set: frozenset[str]  # ... normalised, or the page's own final URL
    hreflang: frozenset[tuple[str, str]]
    links: dict[str, str]  # normalised followable internal target -> as found
    text: int  # characters of visible body text

    def shown(self, js_links: int) -> dict[str, Any]:
        """The url record's rendered facts."""
        return {
            "title": self.title,
            "noindex": self.noindex,
            "canonical": list(self.canonical),
            "hreflang": len(self.hreflang),
            "links": len(self.links),
            "js_links": js_links,
            "text": self.text,
        }


def page_facts(facts: PageFacts, final: str, *, agent: str, header_nofollow: bool) -> RenderFacts:
    """What a document (its facts) says, read at the raw answer's `final` URL."""
    page = links_of(facts, final, agent=agent)
    base = base_of(final, facts.base_href)
    # the head's canonical targets (the head scan keeps hrefs stripped), resolved (None:
    # urllib cannot parse it), each once
    targets = map(partial(joined, base), filter(None, facts.canonicals))
    canonical = tuple(dict.fromkeys(filter(None, targets)))
    # (a page whose robots meta says nofollow has no followable links: links_of)
    links = {} if header_nofollow else _internal(page.links, final)
    return RenderFacts(
        " ".join((facts.title or "").split()) or None,
        page.noindex,
        canonical,
        frozenset(map(norm_url, canonical)) or frozenset({norm_url(final)}),
        # the head's (language, target) pairs: language lower-cased and trimmed (a target
        # urllib cannot parse: none)
        frozenset(
            (lang.strip().lower(), norm_url(target))
            for lang, href in facts.alternates
            if (target := joined(base, href)) is not None
        ),
        links,
        len(facts.text),
    )


def _internal(links: tuple[str, ...], final: str) -> dict[str, str]:
    """The followable links on the page's own origin, the page itself left out:
    normalised target -> as found first."""
    out: dict[str, str] = {}
    own, itself = origin(final), norm_url(final)
    for link in links:
        norm = norm_url(link)
        if norm != itself and origin(link) == own:
            out.setdefault(norm, link)
    return out


def visible_chars(html: str) -> int:
    """Characters of the `<body>` text without script, style, template, noscript and
    title elements, whitespace runs collapsed to one space, trimmed (text content: no CSS)."""
    try:  # None: nothing to parse (blank, or only comments)
        root = etree.fromstring(html, _HTML)
    except (etree.ParserError, ValueError):
        return 0
    body: Any = root.find("body") if root is not None else None
    if body is None:
        return 0
    # the hidden elements go, their tails stay; itertext() skips comments' text, not tails
    etree.strip_elements(body, *_HIDDEN, with_tail=False)
    return len(" ".join("".join(body.itertext()).split()))


def rendered_facts(
    html: str, final: str, *, agent: str, header_nofollow: bool, cap: int
) -> RenderFacts:
    """The rendered DOM's facts (its outerHTML), parsed as the raw page is; its text is
    what the browser shows (`visible_chars`), not the parse's window of it."""
    body = html.encode("utf-8", "surrogatepass")
    facts = facts_of(
        body, wants=RAW_WANTS, cap=max(cap, len(body) + 1), content_type="text/html; charset=utf-8"
    )
    read = page_facts(facts, final, agent=agent, header_nofollow=header_nofollow)
    return replace(read, text=visible_chars(html))


def _first_few(items: list[str]) -> str:
    """The first _SHOWN items, comma-separated, and how many more there are."""
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def _hreflang(pairs: frozenset[tuple[str, str]]) -> str:
    if not pairs:
        return "none"
    return _first_few(list(map(" ".join, sorted(pairs))))  # "en https://..."


def compare(
    raw: RenderFacts,
    rendered: RenderFacts,
    *,
    shell: bool,
    agent: str,
    url: str,
    sitemap: str | None,
    line: int | None,
) -> list[Finding]:
    """The findings of a rendered page: each render code that applies, once."""
    found: list[_Judged] = []
    if raw.noindex != rendered.noindex:
        code, message = _NOINDEX_CHANGED[raw.noindex]
        found.append((code, message.format(agent=agent)))
    found += (
        _changed(raw, rendered, "render-canonical-changed"),
        _changed(raw, rendered, "render-title-changed"),
    )
    only = js_links(raw, rendered)
    if only:
        found.append(
            (
                "render-links-only",
                f"{len(only)} internal link(s) exist only after rendering ({_first_few(only)}): "
                "crawlers that do not run JavaScript never find them; write them as <a href> "
                "in the HTML",
            )
        )
    if shell and rendered.text >= CONTENT_CHARS:
        found.append(
            (
                "render-content-only",
                f"the raw HTML is an empty shell ({raw.text} characters of text), the rendered "
                f"<body> holds {rendered.text}: the content exists only for crawlers that run "
                "JavaScript; render it on the server",
            )
        )
    found.append(_changed(raw, rendered, "render-hreflang-changed"))
    return [
        finding(code, message, url=url, sitemap=sitemap, line=line)
        for code, message in filter(None, found)
    ]


_Judged = tuple[str, str] | None

# the raw HTML's noindex (when the rendered page says otherwise) -> the code and message
_NOINDEX_CHANGED: Final = {
    True: (
        "render-noindex-raw-only",
        "the raw HTML's robots meta says noindex for {agent}, the rendered page's does "
        "not: a script removes it, but Google does not render a page whose HTML says "
        "noindex, so the page stays out of the index; remove the noindex from the HTML",
    ),
    False: (
        "render-noindex-added",
        "the rendered page's robots meta says noindex for {agent}, the raw HTML's does "
        "not: Google renders the page and drops it, crawlers that do not render index it; "
        "decide which is meant and write it in the HTML",
    ),
}


# code -> (the field compared, the field shown, how it is shown, the message)
_CHANGED: Final[dict[str, tuple[str, str, Callable[[Any], str], str]]] = {
    "render-canonical-changed": (
        "canonical_set",
        "canonical",
        lambda value: ", ".join(value) or "none (the page itself)",
        "the raw HTML's canonical is {raw}, the rendered page's is {rendered}: put the "
        "canonical in the HTML and keep scripts from changing it",
    ),
    "render-title-changed": (
        "title",
        "title",
        lambda value: "no title" if value is None else repr(value),
        "the raw HTML's title is {raw}, the rendered page's is {rendered}: crawlers that do "
        "not render show the first",
    ),
    "render-hreflang-changed": (
        "hreflang",
        "hreflang",
        _hreflang,
        "the raw HTML's hreflang alternates are {raw}, the rendered page's are {rendered}: "
        "put them in the HTML",
    ),
}


def _changed(raw: RenderFacts, rendered: RenderFacts, code: str) -> _Judged:
    """A `render-*-changed` code when the raw and rendered values differ."""
    compared, shown, show, message = _CHANGED[code]
    if getattr(raw, compared) == getattr(rendered, compared):
        return None
    before, after = show(getattr(raw, shown)), show(getattr(rendered, shown))
    return code, message.format(raw=before, rendered=after)


def js_links(raw: RenderFacts, rendered: RenderFacts) -> list[str]:
    """The rendered page's followable internal links that the raw HTML lacks."""
    return [link for norm, link in rendered.links.items() if norm not in raw.links]


def js_redirect(target: str, *, url: str, sitemap: str | None, line: int | None) -> Finding:
    return finding(
        "render-js-redirect",
        f"the page loads {target} by itself (a script or a meta refresh) before it is read: "
        "list the final URL in the sitemap and redirect on the server (301)",
        url=url,
        sitemap=sitemap,
        line=line,
    )


def render_failed(why: str, *, url: str, sitemap: str | None, line: int | None) -> Finding:
    return finding(
        "render-failed",
        f"the page could not be rendered: {why}; nothing else was compared",
        url=url,
        sitemap=sitemap,
        line=line,
    )


def render_record(
    final_url: str, ms: float, rendered: RenderFacts | None, js: int = 0
) -> dict[str, Any]:
    """The url record's `render` object."""
    out: dict[str, Any] = {"final_url": final_url, "ms": round(ms)}
    if rendered is not None:
        out.update(rendered.shown(js))
    return out
