"""One parse per page: the body sinks of a page GET and the facts one lxml parse gives.

A `FactsSink` keeps the raw bytes of a 200 HTML answer with cheap stop rules, chosen by
what its readers want (flags, OR-ed):

- `HEAD` (the page checks): the head and `BODY_WINDOW` bytes past the start of the body
  (the first `<h1>`, the text of a tiny page), as the streaming head reader read it;
- `LINKS` (the link crawl) and `CONTENT` (the content fingerprint): the whole body;
- `DATE` (the page's own date, without a store): up to the end of the head;

always at most `cap` bytes (a UTF-16 page, known by its BOM, is read to the cap: the
stop rules look at the markup as ASCII bytes). When reading ended, the bytes are decoded and parsed once into
`PageFacts`, plain data (tuples, str, int, bool, None) that crosses a process boundary:

- the head, by a small tokenizer that follows the rules of HTML tree building that matter
  here (`scan.py`): title, metas, canonical/alternate links, base href, where the head ends
  and where the body starts, a late `<meta charset>`;
- the body, by one lxml HTML parse of the page: the first `<h1>`, the visible text (up to
  a few KiB), the scripts that run, canonical links in the body, the `<a href>` links a
  crawler follows, and (with `CONTENT`) the main-text fingerprint and the page's own date
  (checks/content.py, unchanged: the same page gives the same fingerprint as before).

A comment marker put in the text where the tokenizer saw the body begin tells the parsed
tree's head part from its body part: libxml2 moves stray head content into the body as
browsers do, and only what follows the marker is the body.

The charset: a BOM, else the HTTP header's, else a `<meta charset>` (or http-equiv) in the
first 1024 bytes, else one found later in the head (decoded again from the start, as
browsers do), else UTF-8; undecodable bytes become U+FFFD.

Remote sinks: a sink's `recipe()` names a factory and marshal-able arguments; in a fetch
worker process `factory(*args)` makes a sink fed there, whose `outcome()` is plain data;
`accept(outcome)` on the parent's sink leaves it as if it had read the body itself.
`join()` makes one sink of several on the same GET (one read, one parse).

Pure and synchronous: must not import aiohttp, asyncio or audit.http.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import dropwhile
from operator import attrgetter, or_
from typing import Any, Final

from lxml import etree

from audit.checks.charsets import PRESCAN, charset_of_content_type, decode, sniff
from audit.checks.hrefs import resolve
from audit.checks.maintext import content_charset, main_text, page_modified, text_fingerprint
from audit.checks.scan import HeadScan
from audit.core.records import header_value, header_values

__all__ = [
    "BODY_WINDOW",
    "CONTENT",
    "DATE",
    "DEFAULT_CAP",
    "HEAD",
    "LINKS",
    "FactsSink",
    "PageFacts",
    "SharedSink",
    "facts_of",
    "is_html",
    "join",
    "parse_facts",
    "remote_sink",
]

HEAD: Final = 1
LINKS: Final = 2
CONTENT: Final = 4
DATE: Final = 8
_WHOLE: Final = LINKS | CONTENT
DEFAULT_CAP: Final = 512 * 1024  # bytes of a page read at most
BODY_WINDOW: Final = 16 * 1024  # bytes read past the start of the body (HEAD)
_PIECE: Final = 4096  # the head reader's reading unit: the window starts at a piece's end
_H1_CHARS: Final = 512
_TEXT_CHARS: Final = 8192
# The marker comments' text: a token of this process, so that no page can write one (a
# page's own "<!--sitemap-audit:body:x-->" would otherwise be read as a marker).
_MARK: Final = f"sitemap-audit:{secrets.token_hex(8)}"
# the comments under an element whose text starts with $prefix, in document order
_MARKER_NODES: Final[Any] = etree.XPath(".//comment()[starts-with(., $prefix)]")
_HIDDEN: Final = frozenset({"script", "style", "template", "noscript", "title"})
_BREAKS: Final = frozenset({"br", "p", "div", "li"})
_JS_TYPES: Final = frozenset(
    {"", "module", "text/javascript", "application/javascript", "application/ecmascript"}
)
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
# lxml takes no encoding declaration in text (XHTML pages often start with one)
_XML_DECL: Final = re.compile(r"\A\s*<\?xml[^>]*>")
# the parser of lxml.html.document_fromstring without its Python element classes
_HTML: Final = etree.HTMLParser()
_REF_END: Final = re.compile(rb"[\s;<>]")
_LINK_CUT: Final = re.compile(r"</head\s*>|<body[\s>/]", re.IGNORECASE)
_FACTORY: Final = "audit.checks.pagefacts:remote_sink"
_BOM_STARTS: Final = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")
# HEAD's limit is at least this (the window past a body start at 0): a page that ends
# before it is read whole whatever the head says, so the head scan waits until then
_LEAST_WINDOW: Final = PRESCAN + BODY_WINDOW


def is_html(content_type: str | None) -> bool:
    """An HTML content type (text/html, application/xhtml+xml)."""
    if not content_type:
        return False
    return content_type.split(";", 1)[0].strip().lower() in _HTML_TYPES


def _clean(text: str) -> str:
    """Whitespace runs made one space, trimmed (str.split's whitespace is regex `\\s`'s,
    and it is several times faster than a `\\s+` substitution)."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class PageFacts:
    """What one read of a page says; plain data only (`plain()` / `PageFacts(*plain)`)."""

    bytes_read: int
    complete: bool  # the whole body was read
    charset: str
    charset_source: str  # bom | http | meta | default
    title: str | None
    metas: tuple[tuple[str, str], ...]  # head <meta name content>, names lower-cased
    canonicals: tuple[str, ...]  # head rel=canonical hrefs
    alternates: tuple[tuple[str, str], ...]  # head (hreflang, href)
    base_href: str | None
    head_ended: bool
    body_started: bool
    h1: str | None = None
    text: str = ""  # visible body text (a few KiB), whitespace collapsed
    scripts: int = 0  # <script> elements that run JavaScript, head and body
    body_canonicals: int = 0  # rel=canonical links in the body (ignored by search engines)
    hrefs: tuple[str, ...] = ()  # body <a href> without rel=nofollow, as written, each once
    fingerprint: int | None = None  # the main-text fingerprint (CONTENT)
    modified: tuple[str, str] | None = None  # (the page's own date as written, where)
    error: str | None = None  # the parser failed (what was seen is kept)
    # LINKS with the page's URL known where it was parsed (a fetch worker): the followable
    # hrefs resolved against <base href> and that URL, fragment-free, http(s) only
    links_at: str | None = None
    links: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        """The cap was reached before the head ended: the head was not read to its end."""
        return not self.head_ended and not self.complete

    def meta(self, name: str) -> list[str]:
        """The content of every head `<meta name=...>` with this name (case-insensitive): the
        metas are (lower-cased name, content) pairs, looked up as a repeated header is."""
        return header_values(self.metas, name)

    def plain(self) -> tuple[Any, ...]:
        """The facts as one marshal-able tuple (`PageFacts(*plain)` again)."""
        return _ALL_FIELDS(self)


_FIELDS: Final = PageFacts.__slots__
_ALL_FIELDS: Final = attrgetter(*_FIELDS)  # every field's value, as a tuple in field order


# --- the parse --------------------------------------------------------------------


def parse_facts(
    raw: bytes, http_charset: str | None, *, complete: bool, wants: int = HEAD
) -> PageFacts:
    """Decode and parse what was read of a page (once) into its facts."""
    charset, source = sniff(raw, http_charset) if raw else ("utf-8", "default")
    size = len(raw)
    if not complete and not charset.startswith("utf-16"):
        raw = _whole_tags(raw)
    text = decode(raw, charset)
    head = HeadScan(text, final=complete).run().close()
    late = head.late_charset  # never UTF-8, the default's charset
    if source == "default" and late is not None:
        charset, source = late, "meta"  # decoded again from the start, once
        text = decode(raw, charset)
        head = HeadScan(text, final=complete).run().close()
    base = PageFacts(
        size,
        complete,
        charset,
        source,
        head.title,
        tuple(head.metas),
        tuple(head.canonicals),
        tuple(head.alternates),
        head.base_href,
        head.head_ended or complete,
        head.body_at is not None,
        scripts=head.scripts,
    )
    # every reader (HEAD, LINKS, CONTENT, DATE) wants something of the lxml parse
    return _with_body(base, raw, text, head, http_charset, wants)


def _whole_tags(raw: bytes) -> bytes:
    """A body cut off by the reader without the half tag at the cut (it is no content), nor
    text that ends in a half character reference (`&am`: what it was is not known)."""
    lt = raw.rfind(b"<")
    if lt >= 0 and raw.find(b">", lt) < 0:
        return raw[:lt]
    amp = raw.rfind(b"&", max(0, len(raw) - 34))
    if amp >= 0 and _REF_END.search(raw, amp) is None:
        return raw[: raw.rfind(b">", 0, amp) + 1]
    return raw


def _with_body(
    facts: PageFacts, raw: bytes, text: str, head: HeadScan, http: str | None, wants: int
) -> PageFacts:
    """The facts the lxml parse of the page adds."""
    # markers go where the body starts (HEAD) and where the link crawl's body begins (LINKS)
    body = head.body_at if wants & HEAD else None
    cut = _link_cut(text, head) if wants & LINKS else None
    root, error = _parse(_marked(text, (body, cut)))
    if root is None:
        return _replace(facts, error=error)
    found: dict[str, Any] = {}
    nodes = _markers(root) if body or cut else {}
    if body is not None:
        walk = _walk_text(root, nodes.get(body))
        scripts, canonicals = _body_elements(root, nodes.get(body))
        found.update(
            h1=walk.h1,
            text=_clean("".join(walk.parts)),
            scripts=facts.scripts + scripts,
            body_canonicals=canonicals,
        )
    if cut is not None:
        found["hrefs"] = _hrefs(root, nodes.get(cut))
    if wants & (CONTENT | DATE):
        found.update(_content(root, raw, facts.charset, http, wants))
    return _replace(facts, **found)


def _replace(facts: PageFacts, **changes: Any) -> PageFacts:
    fields = dict(zip(_FIELDS, _ALL_FIELDS(facts), strict=True))
    fields.update(changes)
    return PageFacts(**fields)


def _link_cut(text: str, head: HeadScan) -> int:
    """Where the link crawl's body begins: the head's end tag or `<body>` (a link written
    in the head is no link), else the start of the body, else the start of the page."""
    if head.cut_at is not None:
        return head.cut_at
    if head.body_at is None:
        return 0
    m = _LINK_CUT.search(text, head.body_at)
    return m.start() if m is not None else head.body_at


def _marked(text: str, marks: tuple[int | None, ...]) -> str:
    """The text with a marker comment at each offset (none at 0: that is the start)."""
    at_all = sorted(set(filter(None, marks)))
    out: list[str] = []
    last = 0
    for at in at_all:
        out.append(text[last:at])
        out.append(f"<!--{_MARK}:{at}-->")
        last = at
    out.append(text[last:])
    return "".join(out)


def _parse(text: str) -> tuple[Any, str | None]:
    """The page's lxml tree (None: nothing to parse, a blank page say) and the parser's
    error, if any."""
    try:
        root = etree.fromstring(_XML_DECL.sub("", text, count=1), _HTML)
    except etree.ParserError:  # a document with no element at all
        return None, None
    except ValueError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return root, None


def _markers(root: Any) -> dict[int, Any]:
    """The markers in the tree by offset (a marker the parser dropped is missing)."""
    prefix = _MARK + ":"
    return {int(node.text[len(prefix) :]): node for node in _MARKER_NODES(root, prefix=prefix)}


# --- the body: page checks -------------------------------------------------------


class _Text:
    """The visible text and first h1 of the body, walking the tree after the marker."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.hidden = 0
        self.h1_el: Any = None  # the first h1 element (its start was met)
        self.in_h1 = False  # inside it: its text is collected
        self.h1_parts: list[str] = []  # the first h1's text, while in_h1
        self.h1: str | None = None
        self.h1_done = False  # the first h1 ended (empty or not: only the first counts)

    def add(self, data: str | None) -> None:
        if not data or self.hidden:
            return
        if self.in_h1:
            self.h1_parts.append(data)
        if self.size < _TEXT_CHARS:
            self.parts.append(data)
            self.size += len(data)

    def start(self, el: Any) -> None:
        tag = el.tag
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag == "h1" and self.h1_el is None:
            self.h1_el, self.in_h1 = el, True
        elif tag in _BREAKS:
            self.add(" ")
        self.add(el.text)

    def end(self, el: Any) -> None:
        if el.tag in _HIDDEN:
            self.hidden -= 1
        elif el is self.h1_el:  # (an h1 inside it is text of it, as any element)
            self.h1 = _clean("".join(self.h1_parts))[:_H1_CHARS] or None
            self.in_h1, self.h1_done = False, True
        self.add(el.tail)


def _walk_text(root: Any, marker: Any) -> _Text:
    """The text and first h1 after the marker (no marker: the whole tree), walked until
    the text is long enough and the first h1 has ended."""
    walk = _Text()
    events: Iterator[tuple[str, Any]] = etree.iterwalk(root, events=("start", "end", "comment"))
    if marker is not None:  # the walk begins at the marker's own comment event
        events = dropwhile(lambda pair: pair[1] is not marker, events)
    # (a start or end is an element's: the HTML parser's tree holds no processing
    # instruction, made a comment, nor entity reference, resolved)
    for event, el in events:
        if event == "comment":
            walk.add(el.tail)
        else:
            (walk.start if event == "start" else walk.end)(el)
            if walk.size >= _TEXT_CHARS and walk.h1_done:
                break
    return walk


def _after(root: Any, marker: Any, tag: str) -> Any:
    """The `tag` elements after the marker (no marker: in the whole tree)."""
    return root.iter(tag) if marker is None else marker.xpath("following::" + tag)


def _body_elements(root: Any, marker: Any) -> tuple[int, int]:
    """(scripts that run JavaScript, rel=canonical links) after the marker."""
    scripts, links = _after(root, marker, "script"), _after(root, marker, "link")
    runs = sum(1 for el in scripts if el.get("type", "").strip().lower() in _JS_TYPES)
    canonical = sum(1 for el in links if "canonical" in el.get("rel", "").lower().split())
    return runs, canonical


# --- the body: links -------------------------------------------------------------


def _hrefs(root: Any, marker: Any) -> tuple[str, ...]:
    """The followable hrefs after the marker, each once (the crawl counts a link to a
    page once per page), in document order."""
    hrefs: dict[str, None] = {}
    for el in _after(root, marker, "a"):
        href = el.get("href")
        if href and "nofollow" not in el.get("rel", "").lower().split():
            hrefs[href] = None
    return tuple(hrefs)


# --- the body: content -----------------------------------------------------------


def _content(root: Any, raw: bytes, charset: str, http: str | None, wants: int) -> dict[str, Any]:
    """The page's date and (CONTENT) fingerprint, from the tree content fingerprints always
    parsed: this one, unless their charset rules decode the page otherwise (then their own:
    a page keeps its fingerprint across versions)."""
    own = content_charset(raw, http)
    if own != charset or raw.startswith(_BOM_STARTS):
        try:
            text = raw.decode(own, "replace")
        except LookupError:
            text = raw.decode("utf-8", "replace")
        root, _ = _parse(text)
        if root is None:
            return {}
    found = page_modified(root)
    out: dict[str, Any] = {"modified": (found[2], found[1])} if found else {}
    if wants & CONTENT:
        out["fingerprint"] = text_fingerprint(main_text(root))
    return out


# --- the sinks ---------------------------------------------------------------------


class FactsSink:
    """A body sink (see HttpClient.fetch_page) that reads a 200 HTML answer as `wants`
    asks and parses it once reading ended; `facts` then holds what it found (None: not a
    page it reads). Remote-capable (`recipe`, `outcome`, `accept`)."""

    def __init__(self, wants: int, cap: int = DEFAULT_CAP, url: str | None = None) -> None:
        self.wants = wants
        self.cap = max(1, cap)
        # the URL asked for, given with LINKS only: links are resolved where the page is
        # parsed (the parent then only checks `links_at` against the final URL, as after a
        # redirect)
        self.url = url
        self.facts: PageFacts | None = None
        self.reading = False
        self._raw = bytearray()
        self._http: str | None = None
        self._stop: _StopRule | None = None

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        """A final answer's body begins (again, after a failed attempt): read it?"""
        self.facts, self._raw = None, bytearray()
        ctype = header_value(tuple(headers), "content-type")
        self.reading = status == 200 and is_html(ctype)
        self._http, self._stop = None, None
        if self.reading:
            self._http, self._stop = charset_of_content_type(ctype), _StopRule(self.wants, self.cap)
        return self.reading

    def feed(self, chunk: bytes) -> bool:
        """The next piece of the body; True when no more is wanted."""
        stop = self._stop
        if stop is None:  # not reading
            return True
        keep = stop.take(self._raw, chunk)  # once done, none (its limit is reached)
        self._raw += chunk[:keep]
        return stop.done

    def end(self, *, at_eof: bool) -> None:
        """Reading stopped: parse what was read (`at_eof`: the body ended there)."""
        if self._stop is None:  # not reading (a stop rule is made only to read)
            return
        complete = at_eof and not self._stop.done
        raw, self._raw, self._stop, http = bytes(self._raw), bytearray(), None, self._http
        self._http = None
        facts = parse_facts(raw, http, complete=complete, wants=self.wants)
        if self.url is not None:
            facts = _replace(facts, links_at=self.url, links=resolve_links(self.url, facts))
        self.facts = facts

    # --- remote -----------------------------------------------------------------

    def recipe(self) -> tuple[str, tuple[Any, ...]]:
        """How a fetch worker process makes this sink: (factory, marshal-able args)."""
        return _FACTORY, (self.wants, self.cap, self.url)

    def outcome(self) -> tuple[Any, ...] | None:
        """What this sink found, as plain data (for the parent's `accept`)."""
        return None if self.facts is None else (self.reading, self.facts.plain())

    def accept(self, outcome: tuple[Any, ...] | None) -> None:
        """Take a worker's outcome: as if this sink had read the body itself."""
        self._raw, self._stop, self._http = bytearray(), None, None
        if outcome is None:
            self.reading, self.facts = False, None
            return
        reading, plain = outcome
        self.reading, self.facts = reading, PageFacts(*plain)


def remote_sink(wants: int, cap: int, url: str | None = None) -> FactsSink:
    """The factory a fetch worker calls with a sink's `recipe()` arguments."""
    return FactsSink(wants, cap, url)


def resolve_links(url: str, facts: PageFacts) -> tuple[str, ...]:
    """The page's followable hrefs as absolute http(s) URLs without fragment, resolved
    against its `<base href>` and `url` (the final URL it was read at)."""
    return resolve(url, facts.base_href, facts.hrefs)


class SharedSink(FactsSink):
    """Several facts sinks on one GET: read once, as far as the most wanting one asks,
    parsed once; each member then holds the same facts (see `join`)."""

    def __init__(self, members: Sequence[FactsSink]) -> None:
        wants = reduce(or_, map(attrgetter("wants"), members))  # what any of them wants
        url = next(filter(None, map(attrgetter("url"), members)), None)  # (never '')
        super().__init__(wants, members[0].cap, url)  # join shares sinks of one cap only
        self.members = list(members)

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        for member in self.members:
            member.accept(None)  # nothing read yet (again, after a failed attempt)
        return super().start(status, headers)

    def end(self, *, at_eof: bool) -> None:
        super().end(at_eof=at_eof)
        self._share()

    def accept(self, outcome: tuple[Any, ...] | None) -> None:
        super().accept(outcome)
        self._share()

    def _share(self) -> None:
        for member in self.members:
            member.accept(None)
            member.reading, member.facts = self.reading, self.facts  # one object, no copies


def join(sinks: Sequence[Any]) -> list[Any]:
    """The sinks of one GET (each a hook's own: none is a SharedSink yet) with every facts
    sink of the same cap made one SharedSink (first in the list); the others are kept as
    they are."""
    facts = [s for s in sinks if isinstance(s, FactsSink)]
    if len(facts) < 2 or len(set(map(attrgetter("cap"), facts))) > 1:
        return list(sinks)
    return [SharedSink(facts), *(s for s in sinks if s not in facts)]


def facts_of(
    body: bytes,
    *,
    wants: int = HEAD,
    cap: int = DEFAULT_CAP,
    content_type: str = "text/html",
    at_eof: bool = True,
) -> PageFacts:
    """The facts of a body read at once (tests, a body already in memory)."""
    sink = FactsSink(wants, cap)
    sink.start(200, [("content-type", content_type)])
    sink.feed(body)
    sink.end(at_eof=at_eof)  # (cut at the cap: not complete, as end() knows by itself)
    assert sink.facts is not None
    return sink.facts


# --- where reading stops ----------------------------------------------------------


class _StopRule:
    """Byte-level: how much of the body a sink keeps (see the module)."""

    def __init__(self, wants: int, cap: int) -> None:
        self.cap = cap
        self.head_only = not (wants & (HEAD | _WHOLE))
        self.limit = cap  # bytes kept at most: the cap, or the window past the body
        self.done = False
        # the head is scanned until it says where reading stops (never: the whole body)
        self._scan: HeadScan | None = None if wants & _WHOLE else HeadScan("", final=False)
        self._scanned = 0  # bytes the scan has seen

    def take(self, raw: bytearray, chunk: bytes) -> int:
        """How many bytes of `chunk` to keep (after `raw`); sets `done`."""
        have = len(raw)
        if self._scan is not None:
            self._look(self._scan, have, raw, chunk)
        keep = max(0, min(len(chunk), self.limit - have))
        # (once reached, the limit stays reached: what is kept only grows, the limit
        # only shrinks)
        self.done = have + keep >= self.limit
        return keep

    def _look(self, scan: HeadScan, have: int, raw: bytearray, chunk: bytes) -> None:
        """Scan the head (bytes read as latin-1: the markup is ASCII) for the body, from
        where the scan stopped: `raw` holds the bytes not scanned yet (deferred, see
        `_LEAST_WINDOW`), then `chunk`."""
        if self._scanned == 0 and (raw[:2] or chunk[:2]) in _UTF16_BOMS:
            self._scan = None  # UTF-16: read to the cap
            return
        if not self.head_only and have + len(chunk) <= _LEAST_WINDOW:
            return  # read whole whatever the head says: scanned later, if at all
        scan.extend(self._unscanned(have, raw, chunk))
        scan.run()
        # where reading stops, once the scan knows
        if self.head_only:
            limit = scan.head_end
        elif scan.body_end is not None:
            # the head reader read 4 KiB pieces: its window began at the end of a piece
            limit = max(PRESCAN, -(-scan.body_end // _PIECE) * _PIECE) + BODY_WINDOW
        else:
            return
        if limit is not None:
            self.limit, self._scan = min(self.cap, limit), None

    def _unscanned(self, have: int, raw: bytearray, chunk: bytes) -> str:
        """The bytes the scan has not seen (after the first `_scanned` of `raw`, then
        `chunk`) as text; now seen."""
        start, self._scanned = self._scanned, have + len(chunk)
        text = (bytes(raw[start:]) + chunk if start < have else chunk).decode("latin-1")
        if start == 0 and text.startswith("\xef\xbb\xbf"):
            text = "   " + text[3:]  # the BOM is no text (and offsets stay byte offsets)
        return text
