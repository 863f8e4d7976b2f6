"""A small tokenizer of an HTML page's head: what the head says, and where the body begins.

`HeadScan(text, final=...).run()` reads `text` from the start until the body begins and
keeps what the page checks need from the head. HTML tree building, reduced to what
matters here (the rules the streaming head reader followed, WHATWG-like):

- the head ends at `</head>`; the body starts at `<body>`, at any start tag that cannot be
  in a head (`<div>`, `<img>`, `<h1>` ...), at `</body>`, `</html>`, `</p>`, `</br>` or at
  text that is not whitespace. Head elements after `</head>` but before the body still
  count (browsers move them into the head); Google stops reading the head at the first
  element that does not belong there;
- `<noscript>` and `<template>` in the head are skipped (Google renders with scripts on);
  `<script>`, `<style>` and `<title>` content is raw text (a title's: with character
  references), so a tag inside a title is part of its text, as in browsers;
- every `<meta name content>` (name lower-cased), `<link rel=canonical>` href,
  `<link rel=alternate hreflang>` pair, the first `<base href>`, the first `<title>`, the
  `<script>` elements that run JavaScript, and a `<meta charset>` (or http-equiv) that
  asks for another charset than UTF-8 (`late_charset`: the caller decodes again).

`final`: the text is the whole body (a construct left open at the end is text); else the
text was cut off and an unfinished tag at its end is not content. `extend()` and `run()`
again continue an unfinished scan (the sinks' stop rule, on bytes read as latin-1).

Pure and synchronous: standard library only; must not import aiohttp or asyncio.
"""

from __future__ import annotations

import html
import re
import string
from typing import Final

from audit.checks.charsets import charset_param, normalize_charset

__all__ = ["HeadScan"]

_TITLE_CHARS: Final = 1024
_MAX_TAGS: Final = 256  # metas, canonicals, alternates kept (a head with more is garbage)
_HEAD_TAGS: Final = frozenset(
    {
        "html",
        "head",
        "meta",
        "link",
        "title",
        "base",
        "style",
        "script",
        "noscript",
        "template",
        "basefont",
        "bgsound",
    }
)
_JS_TYPES: Final = frozenset(
    {"", "module", "text/javascript", "application/javascript", "application/ecmascript"}
)
# possessive: no backtracking over a long or unfinished tag
_START: Final = re.compile(
    r"""<([a-zA-Z][^\t\n\r\f />\x00]*+)((?:[^"'>]++|"[^"]*+"|'[^']*+')*+)>"""
)
_START_LOOSE: Final = re.compile(r"<([a-zA-Z][^\t\n\r\f />\x00]*)([^>]*)>")
_END: Final = re.compile(r"</([a-zA-Z][^\t\n\r\f />\x00]*)[^>]*>")
_ATTR: Final = re.compile(r"""([^\s/>=][^\s/>=]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?""")
_RAW_END: Final = {
    tag: re.compile(rf"</{tag}(?=[\s/>])", re.IGNORECASE) for tag in ("script", "style", "title")
}
_BODY_END_TAGS: Final = frozenset({"body", "html", "br", "p"})
_ASCII_LETTERS: Final = frozenset(string.ascii_letters)  # what may follow "<" in a start tag
_LINK_RELS: Final = re.compile(r"canonical|alternate", re.IGNORECASE)

Attrs = dict[str, str]


def _attrs(raw: str) -> Attrs:
    """Attributes as a dict: names lower-cased, the first of a repeated name wins, no
    value is '', character references resolved."""
    out: Attrs = {}
    for m in _ATTR.finditer(raw):
        value = m.group(2) or ""
        if value[:1] in ("'", '"'):
            value = value[1:-1]
        out.setdefault(m.group(1).lower(), html.unescape(value))
    return out


class HeadScan:
    """The head of one page; see the module."""

    def __init__(self, text: str, *, final: bool) -> None:
        self.text = text
        self.final = final
        self.pos = 0
        self.title: str | None = None
        self.metas: list[tuple[str, str]] = []
        self.canonicals: list[str] = []
        self.alternates: list[tuple[str, str]] = []
        self.base_href: str | None = None
        self.scripts = 0
        self.late_charset: str | None = None
        self.head_ended = False
        self.body_at: int | None = None  # where the body begins (offset in text)
        self.body_end: int | None = None  # where the token that began it ends
        self.cut_at: int | None = None  # the first `</head>` or `<body>`
        self.head_end: int | None = None  # where the head ended (after `</head>`)
        self._title: list[str] | None = None  # inside the first <title>
        self._skip: str | None = None  # inside noscript/template of the head
        self._depth = 0
        self._raw: str | None = None  # inside script/style content

    def extend(self, more: str) -> None:
        """More text arrived (an unfinished scan continues with `run()`)."""
        self.text += more

    def run(self) -> HeadScan:
        """Scan on until the body begins or the text (as far as it is complete) ends."""
        while self.body_at is None and self.pos < len(self.text) and self._step():
            pass
        return self

    def close(self) -> HeadScan:
        """No more text: a title still open ends here (with what was read of it)."""
        title = self._title
        if title is not None:
            if self._raw == "title":
                self._title_text(self.text[self.pos :])  # (into `title`: the same list)
            self._end_title(title)
        return self

    def _step(self) -> bool:
        """One token; False when the rest is an unfinished construct (wait for more)."""
        if self._raw is not None:
            return self._raw_text(self._raw)
        text, pos = self.text, self.pos
        lt = text.find("<", pos)
        if lt != pos:
            end = len(text) if lt < 0 else lt
            self._data(pos, text[pos:end])
            self.pos = end
            return True
        return self._markup(lt)

    def _markup(self, lt: int) -> bool:
        text = self.text
        nxt = text[lt + 1 : lt + 2]
        if nxt in _ASCII_LETTERS:
            return self._start_tag(lt)
        if nxt == "/":
            return self._end_tag(lt)
        if nxt in ("!", "?"):
            return self._skip_to(lt, "-->" if text.startswith("<!--", lt) else ">")
        if not nxt:  # a "<" at the end
            return self._unfinished(lt)
        self._data(lt, "<")
        self.pos = lt + 1
        return True

    def _skip_to(self, lt: int, closer: str) -> bool:
        """Skip a comment, a declaration or a broken end tag, up to `closer` and with it."""
        end = self.text.find(closer, lt + 2)
        if end < 0:
            return self._unfinished(lt)
        self.pos = end + len(closer)
        return True

    def _unfinished(self, lt: int) -> bool:
        """A construct open at the end: text in a whole body, else wait."""
        if not self.final:
            return False
        self._data(lt, self.text[lt:])
        self.pos = len(self.text)
        return True

    def _start_tag(self, lt: int) -> bool:
        m = _START.match(self.text, lt) or _START_LOOSE.match(self.text, lt)
        if m is None:
            return self._unfinished(lt)
        self.pos = m.end()
        tag, raw = m.group(1).lower(), m.group(2)
        closed = raw.endswith("/")
        if tag in _RAW_END and not closed:
            self._raw = tag
        self._start(tag, raw, lt, closed)
        return True

    def _end_tag(self, lt: int) -> bool:
        m = _END.match(self.text, lt)
        if m is None:
            return self._skip_to(lt, ">")
        self.pos = m.end()
        self._end(m.group(1).lower(), lt)
        return True

    def _raw_text(self, raw: str) -> bool:
        """Script, style or title content: raw text up to its end tag (a title's is text
        with character references, the first title's kept). Without its end tag, the rest
        is raw text up to the end: wait for more, or `close()` takes a title's."""
        m = _RAW_END[raw].search(self.text, self.pos)
        if m is None:
            return False
        self._title_text(self.text[self.pos : m.start()])
        self._raw = None
        self.pos = m.start()
        return True

    def _title_text(self, data: str) -> None:
        if self._title is not None and sum(map(len, self._title)) < _TITLE_CHARS:
            self._title.append(html.unescape(data))

    # --- tree building ---------------------------------------------------------

    def _start(self, tag: str, raw: str, lt: int, closed: bool) -> None:
        if self._skip is not None:
            if tag == self._skip and not closed:
                self._depth += 1
            return
        if tag not in _HEAD_TAGS:
            if tag == "body" and self.cut_at is None:
                self.cut_at = lt
            self._begin_body(lt, self.pos)
            return
        self._head_tag(tag, raw, closed)

    def _head_tag(self, tag: str, raw: str, closed: bool) -> None:
        if tag == "meta":
            self._meta(_attrs(raw))
        elif tag == "link":
            if _LINK_RELS.search(raw):  # stylesheets, icons ...: nothing to keep
                self._link(_attrs(raw))
        elif tag == "base":
            self._base(_attrs(raw))
        elif tag == "title":
            # (never inside a title: its content is raw text up to its end tag)
            if self.title is None and not closed:
                self._title = []  # a later title's text is no text either (RCDATA)
        elif tag == "script":
            # no type, or one that runs JavaScript
            if (
                "type" not in raw.lower()
                or _attrs(raw).get("type", "").strip().lower() in _JS_TYPES
            ):
                self.scripts += 1
        elif tag in ("noscript", "template") and not closed:
            self._skip, self._depth = tag, 1

    def _base(self, a: Attrs) -> None:
        href = a.get("href")
        if href is not None and self.base_href is None:
            self.base_href = href.strip()  # the first base with an href wins

    def _meta(self, a: Attrs) -> None:
        if self.late_charset is None:
            # the charset a meta declares: `charset`, or `http-equiv=content-type`'s
            charset = a.get("charset")
            if charset is None and a.get("http-equiv", "").lower() == "content-type":
                charset = charset_param(a.get("content", ""))
            found = normalize_charset(charset)
            if found not in (None, "utf-8"):
                self.late_charset = found
        name = a.get("name")
        if name is not None and "content" in a and len(self.metas) < _MAX_TAGS:
            self.metas.append((name.strip().lower(), a["content"]))

    def _link(self, a: Attrs) -> None:
        href = a.get("href")
        if href is None or len(self.canonicals) + len(self.alternates) >= _MAX_TAGS:
            return
        rels = a.get("rel", "").lower().split()
        if "canonical" in rels:
            self.canonicals.append(href.strip())
        if "alternate" in rels and "hreflang" in a:
            self.alternates.append((a["hreflang"], href.strip()))

    def _end(self, tag: str, lt: int) -> None:
        if self._skip is not None:
            if tag == self._skip:
                self._depth -= 1
                if self._depth <= 0:
                    self._skip = None
        elif tag == "title":
            if self._title is not None:
                self._end_title(self._title)
        elif tag == "head":
            self.head_ended = True
            if self.cut_at is None:
                self.cut_at, self.head_end = lt, self.pos
        elif tag in _BODY_END_TAGS:
            self._begin_body(lt, self.pos)

    def _data(self, at: int, data: str) -> None:
        # text cannot be in a head: the body begins at its first letter
        if self._skip is None and html.unescape(data).strip():
            first = at + len(data) - len(data.lstrip())
            self._begin_body(first, first + 1)

    def _begin_body(self, at: int, end: int) -> None:
        self.body_at, self.body_end = at, end
        self.head_ended = True
        if self.head_end is None:
            self.head_end = at

    def _end_title(self, parts: list[str]) -> None:
        """The first title's text is done (`parts`: what was read of it, `_title`)."""
        self._title = None
        self.title = " ".join("".join(parts).split())[:_TITLE_CHARS]
