"""Page checks (`--page-checks`): judge what a page's `<head>` says about the listed URL.

From a `FetchResult` and the `PageFacts` of the page's one parse (audit.checks.pagefacts):

- `url-noindex`: a head `<meta name="robots">`, or a meta named after the configured
  agent's product token, says `noindex` or `none`. A meta for another agent
  (`googlebot` when auditing as `sitemap-audit`) does not apply. When `X-Robots-Tag`
  already said noindex (checks.py reported it), that one finding gets the meta as detail.
- `url-canonical-mismatch`: the head's `<link rel=canonical>` (resolved against `<base
  href>` and the final URL, compared after urls.normalize_url without the fragment) names
  another URL than the listed or final one; several head canonicals that disagree, or a
  head canonical that disagrees with the `Link` header, are the same code with the detail.
  One finding per URL: a Link-header mismatch checks.py reported is kept as it is when the
  head agrees with it, and replaced by the combined finding when they conflict.
- `url-soft-404`: the title or the first `<h1>` reads as "not found" in one of the common
  languages (`NOT_FOUND_PATTERNS`), or the page is tiny (the whole body was read and
  has at most `TINY_TEXT` characters of text) and its text is near-identical (difflib
  ratio >= `SOFT404_SIMILARITY`) to what the same host answers with 200 for a random path
  that cannot exist (the probe, fetched once per host by the pipeline). The page's own
  path and the probe's path are masked first: error pages often echo the requested URL.
  Pages with almost no text (`MIN_TEXT`, such as a JavaScript application's empty shell)
  are never compared: only rendering could tell them apart.
- `url-empty-shell`: a page read to its end with under 200 characters of visible body text
  that loads scripts (audit.checks.agents.empty_shell).
- `hreflang-invalid` / `hreflang-missing-self` for the head's `<link rel=alternate
  hreflang>`; the valid hrefs are returned for the run-wide reciprocity store.

When reading stopped at the byte cap before the head ended, findings are about what
was read and say so, and the url record's `page.truncated` is True.

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Final
from urllib.parse import urlsplit

from audit.checks.agents import empty_shell, robots_meta
from audit.checks.hrefs import base_of, joined_all, norm_url
from audit.checks.pagefacts import DEFAULT_CAP, HEAD, FactsSink, PageFacts, is_html
from audit.checks.response import Answered, canonical_links, noindex_directive
from audit.core.records import FetchResult, Finding, finding
from audit.rules.langtags import check_hreflang
from audit.rules.urls import is_absolute_http

__all__ = [
    "MIN_TEXT",
    "NOT_FOUND_PATTERNS",
    "SOFT404_SIMILARITY",
    "TINY_TEXT",
    "PageSink",
    "PageVerdict",
    "check_page",
    "is_html",
    "needs_probe",
    "not_found_phrase",
    "probe_text",
    "similarity",
    "soft404_text",
]

SOFT404_SIMILARITY: Final = 0.9  # difflib ratio of a tiny page's text to the probe's
TINY_TEXT: Final = 2048  # characters of text at most, whole body read, to compare with the probe
MIN_TEXT: Final = 20  # below this, a page has too little text to compare
# Meta names of common crawlers, shown in the url record (only robots and the configured
# agent's own name apply to the audit).
_CRAWLER_METAS: Final = frozenset(
    {"robots", "googlebot", "googlebot-news", "bingbot", "yandex", "baiduspider", "applebot"}
)

# "Not found" in the title or h1, in the languages most sites use. A bare "404" counts only
# at the start or end of the text or next to an error word, so "Peugeot 404 parts" does not.
NOT_FOUND_PATTERNS: Final = re.compile(
    r"""
    \bnot\s+found\b | \bpage\s+(?:does\s+not|doesn[’']t)\s+exist\b | \bno\s+longer\s+exists\b
    | ^\W*404\b | \b404\W*$
    | \b(?:error|fehler|erreur|errore|erro|fout|błąd|page|seite|página|pagina|strona)\W{0,3}404\b
    | \b404\W{0,3}(?:error|fehler|erreur|errore|erro|page|seite|página|pagina)\b
    | \bnicht\s+gefunden\b | \bexistiert\s+nicht\b
    | \bpage\s+introuvable\b | \bn[’']existe\s+pas\b | \bpage\s+non\s+trouvée\b
    | \bno\s+encontrad[ao]\b | \bno\s+se\s+(?:encontró|ha\s+encontrado)\b | \bno\s+existe\b
    | \bnon\s+trovat[ao]\b | \bnon\s+esiste\b
    | \bnão\s+encontrad[ao]\b | \bnão\s+existe\b
    | \bniet\s+gevonden\b | \bbestaat\s+niet\b
    | \bnie\s+znaleziono\b | \bnie\s+istnieje\b
    | \bне\s+найден[аоы]?\b | \bстраница\s+не\s+существует\b
    | \bbulunamadı | \bhittades\s+inte\b | \bnenalezen[ao]?\b | \bei\s+löytynyt\b
    | 見つかりません | 找不到 | 未找到 | 页面不存在 | 頁面不存在 | 찾을\s*수\s*없습니다
    """,
    re.IGNORECASE | re.VERBOSE,
)
# A word that every pattern above that can match ASCII text holds, lower-cased: an ASCII
# title without one cannot read as "not found" (`bulunamad`: the pattern's dotless ı
# matches an ASCII i under IGNORECASE). Most titles are ruled out by it in a microsecond
# (the full pattern costs ten times that); text with any other character gets the full test.
_ASCII_HINTS: Final = re.compile(
    "found|exist|esiste|404|gefunden|introuvable|encontr|trovat|gevonden|bestaat"
    "|znaleziono|istnieje|bulunamad|hittades|nenalezen"
)


class PageSink(FactsSink):
    """The body sink of the page checks (see HttpClient.fetch_page): reads the head of a
    200 HTML answer and a window of its body; other answers are not read for the checks.
    `facts` then holds what the page says (None: not read)."""

    def __init__(self, cap: int = DEFAULT_CAP) -> None:
        super().__init__(HEAD, cap)


@dataclass(frozen=True, slots=True)
class PageVerdict:
    """What the page checks made of one page."""

    findings: list[Finding]  # the URL's findings: judge_answer's, merged with the page's
    alternates: list[str]  # valid absolute hreflang hrefs of the head, for reciprocity
    record: dict[str, Any]  # the url record's `page` object
    noindex: bool = False  # the header or a head meta says noindex for the agent
    canonical: bool = False  # the Link header or the head names another URL as canonical
    shell: bool = False  # an empty JavaScript shell (url-empty-shell)


def not_found_phrase(text: str | None) -> str | None:
    """The "not found" wording in a title or heading, or None."""
    if not text or (text.isascii() and _ASCII_HINTS.search(text.lower()) is None):
        return None
    return _not_found_phrase(text)


@lru_cache(maxsize=256)  # a page's title and h1 are asked twice: for the probe, then judged
def _not_found_phrase(text: str) -> str | None:
    m = NOT_FOUND_PATTERNS.search(text)
    return m.group().strip() if m else None


def soft404_text(facts: PageFacts, url: str) -> str | None:
    """The text a soft-404 comparison uses (title and body, the URL masked), or None when
    the page is not tiny (not read to its end, or too much text) or has too little text."""
    if not facts.complete:
        return None
    # both parts have their whitespace collapsed already; lower-cased, the URL and its
    # path replaced by a placeholder
    text = (f"{facts.title} {facts.text}" if facts.title else facts.text).lower()
    parts = urlsplit(url)
    for value in (url, parts.path + ("?" + parts.query if parts.query else ""), parts.path):
        if value not in ("", "/"):
            text = text.replace(value.lower(), "{url}")
    if not MIN_TEXT <= len(text) <= TINY_TEXT:
        return None
    return text


def needs_probe(facts: PageFacts, url: str) -> bool:
    """Whether the soft-404 verdict depends on the host's probe: a tiny page whose title
    and h1 do not already say "not found" (most pages never cost a probe request)."""
    return (
        not_found_phrase(facts.title) is None
        and not_found_phrase(facts.h1) is None
        and soft404_text(facts, url) is not None
    )


def probe_text(result: FetchResult, facts: PageFacts | None) -> str | None:
    """The probe's comparable text: only a 200 HTML answer that is itself tiny counts
    (`facts`: its page sink's, None but for a 200 HTML answer)."""
    if facts is None or result.redirects:
        return None
    return soft404_text(facts, result.final_url)


def similarity(a: str, b: str) -> float:
    """difflib's ratio of two texts (1.0 = identical)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if (
        matcher.real_quick_ratio() < SOFT404_SIMILARITY
        or matcher.quick_ratio() < SOFT404_SIMILARITY
    ):
        return matcher.quick_ratio()
    return matcher.ratio()


def check_page(
    result: FetchResult,
    facts: PageFacts,
    answered: Answered,
    *,
    agent_token: str,
    sitemap: str | None,
    line: int | None,
    probe: str | None = None,
) -> PageVerdict:
    """The page's findings merged into those of `answered` (judge_answer's verdict on the
    same answer, whose header noindex and canonical findings are known as values)."""
    url = result.url
    stopped = (
        f" (read the first {facts.bytes_read} bytes only: the head is longer than the cap, "
        "so later tags were not seen)"
        if facts.truncated
        else ""
    )

    def make(code: str, message: str) -> Finding:
        return finding(code, message + stopped, sitemap=sitemap, line=line, url=url)

    final = result.final_url
    # the first head meta that applies to the agent (`robots` or its own token) and says
    # noindex
    hit = robots_meta(facts.metas, agent_token)
    out, noindex = _noindex(
        list(answered.findings), result, answered.noindex, hit, agent_token, make
    )
    # the head's rel=canonical targets, resolved against `<base href>` and the final URL
    head_targets = joined_all(base_of(final, facts.base_href), filter(None, facts.canonicals))
    out, canonical = _canonical(out, result, head_targets, final, make, answered.canonical)
    why = _soft404_reason(facts, final, probe)
    if why is not None:
        out.append(
            make(
                "url-soft-404",
                f"HTTP 200, but the page reads as not found: {why}; answer 404/410 for a "
                "missing page, or fix the page, or remove the URL from the sitemap",
            )
        )
    hrefs = _hreflang(out, facts, final, url, make)
    shell = empty_shell(facts)
    if shell is not None:
        out.append(make("url-empty-shell", shell))
    page = _page_record(facts, agent_token.strip().lower(), head_targets)
    return PageVerdict(out, hrefs, page, noindex, canonical, shell is not None)


_Make = Callable[[str, str], Finding]


# --- noindex ---------------------------------------------------------------------


def _noindex(
    out: list[Finding],
    result: FetchResult,
    said: Finding | None,
    hit: tuple[str, str] | None,
    agent_token: str,
    make: _Make,
) -> tuple[list[Finding], bool]:
    """A meta noindex (`hit`, the first meta that says it): its own finding, or the detail
    of the X-Robots-Tag one (`said`, the URL checks' finding); and whether the header or
    the head says noindex."""
    if hit is None:
        return out, said is not None
    meta = f'<meta name="{hit[0]}" content="{hit[1].strip()}">'
    if said is not None:
        # the X-Robots-Tag's url-noindex finding (`said`: the header says noindex for the
        # agent, as judged from the same headers), its message naming the meta too
        header = noindex_directive(result.header_all("x-robots-tag"), agent_token)
        both = (
            f"X-Robots-Tag {header!r} and the page's {meta} say noindex for "
            f"{agent_token}: a listed URL must be indexable; remove both or remove the "
            "URL from the sitemap"
        )
        out[out.index(said)] = replace(said, message=both)  # (out: check_page's own list)
        return out, True
    out.append(
        make(
            "url-noindex",
            f"the page's {meta} says noindex for {agent_token}: a listed URL must be "
            "indexable; remove the meta or remove the URL from the sitemap",
        )
    )
    return out, True


# --- canonical -------------------------------------------------------------------


def _canonical(
    out: list[Finding],
    result: FetchResult,
    head_targets: list[str],
    final: str,
    make: _Make,
    said: Finding | None,
) -> tuple[list[Finding], bool]:
    """One url-canonical-mismatch per URL: the head's replaces the Link header's (`said`,
    the URL checks' finding); and whether the header or the head names another URL."""
    if not head_targets:
        return out, said is not None
    header_targets = joined_all(final, canonical_links(result.header_all("link")))
    message = _canonical_message(head_targets, header_targets, final, result.url)
    if message is None:
        return out, said is not None
    if said is not None:
        out.remove(said)  # (out: check_page's own list)
    out.append(make("url-canonical-mismatch", message))
    return out, True


def _canonical_message(
    head_targets: list[str], header_targets: list[str], final: str, url: str
) -> str | None:
    head_norm = set(map(norm_url, head_targets))
    if len(head_norm) > 1:
        return (
            f"the page's head has {len(head_targets)} rel=canonical links naming different "
            f"URLs: {', '.join(head_targets)}; search engines may ignore them all: keep one, "
            "naming the listed URL"
        )
    target = head_targets[0]
    if header_targets:  # the head's one canonical against the Link header's
        if head_norm == set(map(norm_url, header_targets)):
            return None  # same as the Link header: checks.py judged it already
        return (
            f"the Link header names {', '.join(header_targets)} as canonical but the page's "
            f"head names {target}; conflicting canonicals may all be ignored: "
            "make them agree on the listed URL"
        )
    if not is_absolute_http(target):
        return f"the page's rel=canonical {target!r} is not an http(s) URL; name the listed URL"
    if head_norm.isdisjoint({norm_url(final), norm_url(url)}):
        return (
            f"the page's rel=canonical names {target}, not {final}; list the "
            "canonical URL in the sitemap instead, or fix the canonical"
        )
    return None  # it names this page


# --- soft 404 --------------------------------------------------------------------


def _soft404_reason(facts: PageFacts, final: str, probe: str | None) -> str | None:
    """Why the page reads as not found (its wording, or its likeness to the probe), or None."""
    for label, text in (("title", facts.title), ("main heading", facts.h1)):
        phrase = not_found_phrase(text)
        if phrase is not None:
            return f"its {label} {text!r} says {phrase!r}"
    if probe is None:
        return None
    # the page's likeness to the probe's answer, when it is tiny and near-identical
    own_text = soft404_text(facts, final)
    if own_text is None:
        return None
    ratio = similarity(own_text, probe)
    if ratio < SOFT404_SIMILARITY:
        return None
    return (
        f"its text is {ratio:.0%} identical to what the host answers for a path that does not exist"
    )


# --- hreflang --------------------------------------------------------------------


def _hreflang(out: list[Finding], facts: PageFacts, final: str, url: str, make: _Make) -> list[str]:
    """Append the head's hreflang findings to `out`; the valid hrefs, for reciprocity."""
    hrefs: list[str] = []
    for code, href in facts.alternates:
        reason = check_hreflang(code)
        if reason is not None:
            out.append(
                make(
                    "hreflang-invalid",
                    f"the page's <link rel=alternate> hreflang {code!r} {reason}: use an ISO "
                    "639-1 language with an optional ISO 3166-1 region (en, en-GB) or x-default",
                )
            )
        if is_absolute_http(href):
            hrefs.append(href)
        else:
            out.append(
                make(
                    "hreflang-invalid",
                    f"the page's <link rel=alternate hreflang={code!r}> href {href!r} is not an "
                    "absolute http(s) URL: give the full URL of the alternate page",
                )
            )
    if not facts.alternates or len(hrefs) < len(facts.alternates):
        return hrefs  # no alternates, or some invalid: nothing more to say
    own_urls = {norm_url(final), norm_url(url)}
    if own_urls.isdisjoint(map(norm_url, hrefs)):
        out.append(
            make(
                "hreflang-missing-self",
                f"the page's <link rel=alternate hreflang> links do not include {final} itself: "
                "add one with its own language (each version must list itself and all others)",
            )
        )
    return hrefs


# --- the url record's `page` object ----------------------------------------------


def _page_record(facts: PageFacts, agent: str, head_targets: list[str]) -> dict[str, Any]:
    # `robots` and the agent's own meta are shown, and the other crawlers' too (they do
    # not apply to this agent)
    shown = _CRAWLER_METAS | {agent}
    record: dict[str, Any] = {
        "title": facts.title,
        "canonical": head_targets[0] if len(head_targets) == 1 else None,
        "robots": ", ".join(f"{n}: {c}" for n, c in facts.metas if n in shown) or None,
        "bytes_read": facts.bytes_read,
        "truncated": facts.truncated,
    }
    optional = (  # (field, value, whether the record has it)
        ("canonicals", head_targets, len(head_targets) > 1),
        ("h1", facts.h1, facts.h1 is not None),
        ("charset", facts.charset, facts.charset_source != "default"),
        ("parse_error", facts.error, facts.error is not None),
    )
    record.update((name, value) for name, value, present in optional if present)
    return record
