"""A streaming reader of an HTML page's `<head>`, for the page checks.

`HeadReader.feed(chunk)` takes the (decompressed) body as it arrives and says when it has
seen enough: the head has ended and a small window of the body after it
(`BODY_WINDOW`, for the first `<h1>` and the text a soft-404 comparison needs) has been
read, or the byte cap is reached. Then `close()` and read the results off the reader.

What it collects, and how HTML semantics are followed (WHATWG tree building, reduced to
what matters here):

- the head ends at `</head>`; the body starts at `<body>`, at any start tag that cannot be
  in a head (`<div>`, `<img>`, `<h1>` ...) or at text that is not whitespace. Head elements
  that come after `</head>` but before the body still count (browsers move them into the
  head). Only elements of the head count for robots metas and canonicals: Google ignores a
  `<link rel=canonical>` in the body, and stops reading the head at the first element
  that does not belong there;
- `<noscript>` and `<template>` in the head are skipped (Google renders with scripts on, so
  a noscript's content is text); `<script>` and `<style>` content is never text;
- every `<meta name content>` of the head (name lower-cased), every `<link rel=canonical>`
  href, every `<link rel=alternate hreflang>` (hreflang, href) pair, `<base href>` and the
  `<title>`; in the body window the first `<h1>`'s text and the visible text; the
  `<script>` elements that run JavaScript, head and body (`scripts`, for empty shells);
- the charset: a BOM, else the HTTP header's charset (when the caller gives it), else a
  `<meta charset>` or `<meta http-equiv=content-type>` in the first 1024 bytes (the HTML
  prescan), else a meta found later in the head (the page is then decoded again from the
  start, once, as browsers do), else UTF-8. Undecodable bytes become U+FFFD.

It never raises on bad input: the tokenizer is the standard library's `html.parser`
(incremental, tolerant of unclosed tags and garbage; chosen over lxml's HTMLPullParser
because its behaviour does not change with the libxml2 version and it reports where the
head ends as the bytes arrive), and any error it might raise is caught and recorded in
`error`. `truncated` is True when the cap was reached before the head ended: what was
seen is reported, and the caller says that it stopped reading.

Pure and synchronous: standard library only; must not import aiohttp or asyncio.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Final

__all__ = ["BODY_WINDOW", "DEFAULT_CAP", "HeadReader", "normalize_charset"]

DEFAULT_CAP: Final = 512 * 1024  # bytes of a page read at most
BODY_WINDOW: Final = 16 * 1024  # bytes read past the end of the head (first h1, tiny pages)
PRESCAN: Final = 1024  # the HTML encoding prescan looks at this many bytes
_PIECE: Final = 4096  # bytes handed to the tokenizer at once: where reading can stop
_TITLE_CHARS: Final = 1024
_H1_CHARS: Final = 512
_TEXT_CHARS: Final = 8192
_MAX_TAGS: Final = 256  # metas, canonicals, alternates kept (a head with more is garbage)

# Elements that may stay in a head; any other start tag begins the body.
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
# Content that is never visible text.
_HIDDEN: Final = frozenset({"script", "style", "template", "noscript", "title"})
# The type of a <script> that runs (RFC 9239 and the legacy JavaScript MIME types).
_JS_TYPES: Final = frozenset(
    {"", "module", "text/javascript", "application/javascript", "application/ecmascript"}
)
_SPACES = re.compile(r"\s+")
_META_CHARSET = re.compile(
    rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE | re.DOTALL
)
_CHARSET_PARAM = re.compile(r"charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# WHATWG Encoding labels whose Python codec differs from what browsers use.
_ALIASES: Final = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "windows-1252": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949",
    "tis-620": "cp874",
    "iso-8859-9": "cp1254",
    "iso-8859-11": "cp874",
    "x-mac-roman": "mac-roman",
}


def normalize_charset(label: str | None) -> str | None:
    """The Python codec for an encoding label as a browser reads it, or None if unknown.

    A meta cannot switch a page to UTF-16 (it would not have been readable as ASCII to
    find the meta), so UTF-16 labels mean UTF-8 there, as in the HTML standard.
    """
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    if name.startswith("utf-16") or name == "x-user-defined":
        return "utf-8"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def charset_of_content_type(value: str | None) -> str | None:
    """The charset parameter of a Content-Type value, as a Python codec name, or None."""
    if not value:
        return None
    m = _CHARSET_PARAM.search(value)
    return normalize_charset(m.group(1)) if m else None


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


class _Tokens(HTMLParser):
    """The tokenizer's callbacks, forwarded to the reader's small tree-building state."""

    def __init__(self, owner: HeadReader) -> None:
        super().__init__(convert_charrefs=True)
        self.owner = owner

    # After a late meta charset the rest of this tokenizer's input is ignored: the reader
    # starts a new one on the same bytes decoded with the right charset.
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.owner._restart_to is None:
            self.owner._start(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.owner._restart_to is None:
            self.owner._start(tag, attrs)
            self.owner._end(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.owner._restart_to is None:
            self.owner._end(tag)

    def handle_data(self, data: str) -> None:
        if self.owner._restart_to is None:
            self.owner._text(data)


class HeadReader:
    """Feed a page body chunk by chunk; `feed()` returns True when it has seen enough."""

    def __init__(self, cap: int = DEFAULT_CAP, *, http_charset: str | None = None) -> None:
        self.cap = max(1, cap)
        self.http_charset = normalize_charset(http_charset)
        # What was read, kept only while a late meta charset could still make the page be
        # decoded again (in the head, no BOM, HTTP or earlier meta charset): memory stays small.
        self._raw = bytearray()
        self._keep_raw = True
        self._reset_results()
        self.bytes_read = 0
        self.done = False  # enough seen (or cap reached): feed() takes no more
        self.complete = False  # the whole body was read (close(at_eof=True) before done)
        self.error: str | None = None  # the tokenizer failed here (what was seen is kept)
        self.charset = "utf-8"
        self.charset_source = "default"  # bom | http | meta | default
        self._tokens: _Tokens | None = None
        self._decoder: codecs.IncrementalDecoder | None = None
        self._restarted = False
        self._restart_to: str | None = None

    def _reset_results(self) -> None:
        self.title: str | None = None
        self.h1: str | None = None
        self.metas: list[tuple[str, str]] = []
        self.canonicals: list[str] = []
        self.alternates: list[tuple[str, str]] = []
        self.base_href: str | None = None
        self.body_canonicals = 0  # rel=canonical links in the body: ignored by search engines
        self.head_ended = False  # </head> seen or the body began
        self.body_started = False
        self.scripts = 0  # <script> elements that run JavaScript (head and body)
        self._body_at: int | None = None  # bytes read when the body began
        self._skip: str | None = None  # inside noscript/template/script/style of the head
        self._skip_depth = 0
        self._in_title = False
        self._title_parts: list[str] = []
        self._in_h1 = 0  # nesting depth inside the first h1
        self._h1_parts: list[str] = []
        self._h1_done = False
        self._hidden = 0  # depth inside script/style/... of the body
        self._text_parts: list[str] = []
        self._text_len = 0
        self._text_cache: str | None = None  # `text`, computed once

    # --- results ---------------------------------------------------------------

    @property
    def truncated(self) -> bool:
        """The cap was reached before the head ended: the head was not read to its end."""
        return self.bytes_read >= self.cap and not self.head_ended and not self.complete

    @property
    def text(self) -> str:
        """Visible text of the body that was read (up to a few KiB), whitespace collapsed."""
        if self._text_cache is None:
            self._text_cache = _clean("".join(self._text_parts))
        return self._text_cache

    def meta(self, name: str) -> list[str]:
        """The content of every head `<meta name=...>` with this name (case-insensitive)."""
        name = name.lower()
        return [content for n, content in self.metas if n == name]

    # --- input -----------------------------------------------------------------

    def feed(self, chunk: bytes) -> bool:
        """Take the next bytes of the body; True when nothing more is needed."""
        if self.done:
            return True
        pos = 0
        while pos < len(chunk) and not self.done:
            piece = chunk[pos : pos + min(_PIECE, self.cap - self.bytes_read)]
            pos += len(piece)
            self.bytes_read += len(piece)
            if self._keep_raw:
                self._raw += piece
            self._consume(piece)
            if self.bytes_read >= self.cap or self._enough():
                self.done = True
        return self.done

    def close(self, *, at_eof: bool = True) -> None:
        """No more input. `at_eof`: the body ended there (not cut off by the reader)."""
        if at_eof and not self.done:
            self.complete = True
        self._flush_decoder()
        # A body cut off by the reader may end inside a tag: that half tag is not content,
        # so the tokenizer's held-back input is flushed only at the real end of the body.
        if at_eof:
            self._close_tokens()
        if self._in_title:
            self._end_title()
        if self.complete:
            self.head_ended = True  # the document ended: nothing more can be in its head
        self.done = True

    def _flush_decoder(self) -> None:
        """Decode what is left: all of it when fewer than PRESCAN bytes arrived."""
        if self._tokens is None and self.bytes_read:
            raw = bytes(self._raw)
            self._begin()  # fewer than PRESCAN bytes arrived: decide the charset now
            self._run(self._decode(raw, final=True))
        elif self._decoder is not None:
            self._run(self._decode(b"", final=True))

    def _close_tokens(self) -> None:
        if self._tokens is None:
            return
        try:
            self._tokens.close()
        except Exception as exc:  # the tokenizer must never take the audit down
            self.error = self.error or f"{type(exc).__name__}: {exc}"

    def _enough(self) -> bool:
        return self._body_at is not None and self.bytes_read - self._body_at >= BODY_WINDOW

    def _consume(self, piece: bytes) -> None:
        if self._tokens is None:
            if self.bytes_read < PRESCAN and not self._bom_known():
                return  # wait for the prescan window
            raw = bytes(self._raw)
            self._begin()
            self._run(self._decode(raw, final=False))
            return
        self._run(self._decode(piece, final=False))

    def _bom_known(self) -> bool:
        return any(self._raw.startswith(bom) for bom, _ in _BOMS)

    def _begin(self) -> None:
        """Pick the charset (BOM, HTTP header, prescan, default) and start the tokenizer."""
        raw = bytes(self._raw)
        for bom, name in _BOMS:
            if raw.startswith(bom):
                self.charset, self.charset_source = name, "bom"
                break
        else:
            if self.http_charset:
                self.charset, self.charset_source = self.http_charset, "http"
            else:
                m = _META_CHARSET.search(raw[:PRESCAN])
                found = normalize_charset(m.group(1).decode("ascii", "replace")) if m else None
                if found:
                    self.charset, self.charset_source = found, "meta"
        # utf-8-sig and the BOM-less utf-16 codecs drop a leading BOM themselves
        codec = {"utf-8": "utf-8-sig"}.get(self.charset, self.charset)
        self._decoder = codecs.getincrementaldecoder(codec)(errors="replace")
        self._tokens = _Tokens(self)
        if self.charset_source != "default":
            self._drop_raw()

    def _drop_raw(self) -> None:
        self._keep_raw = False
        self._raw = bytearray()

    def _decode(self, data: bytes, *, final: bool) -> str:
        assert self._decoder is not None
        text = self._decoder.decode(data, final)
        if self.charset == "utf-16-le" or self.charset == "utf-16-be":
            text = text.lstrip("\ufeff")
        return text

    def _run(self, text: str) -> None:
        tokens = self._tokens
        if tokens is None or not text or self.error is not None:
            return
        try:
            tokens.feed(text)
        except Exception as exc:  # html.parser is tolerant, but never let it raise out
            self.error = f"{type(exc).__name__}: {exc}"
        if self._restart_to is not None:
            self._restart()

    def _late_charset(self, label: str) -> None:
        """A meta charset found after the prescan window: decode again from the start, once
        (only when nothing stronger, a BOM, the HTTP header or an earlier meta, decided)."""
        found = normalize_charset(label)
        if found is None or found == self.charset or self._restarted:
            return
        if self.charset_source != "default":
            return
        self._restart_to = found

    def _restart(self) -> None:
        found, self._restart_to = self._restart_to, None
        assert found is not None
        self._restarted = True
        self._reset_results()
        self.charset, self.charset_source = found, "meta"
        self._decoder = codecs.getincrementaldecoder(found)(errors="replace")
        self._tokens = _Tokens(self)
        raw = bytes(self._raw)
        self._drop_raw()  # decided for good: no second restart
        self._run(self._decode(raw, final=False))

    # --- tree building (what the tokenizer reports) -------------------------------

    def _start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip is not None:
            if tag == self._skip:
                self._skip_depth += 1
            return
        if self._in_title:
            return  # title content is text only (RCDATA): tags in it are not elements
        if not self.body_started:
            if tag not in _HEAD_TAGS:
                self._start_body()
            else:
                self._head_tag(tag, attrs)
                return
        self._body_tag(tag, attrs)

    def _head_tag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        handler = _HEAD_HANDLERS.get(tag)
        if handler is not None:
            handler(self, tag, attrs)

    def _head_meta(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = _attrs(attrs)
        charset = _meta_charset(a)
        if charset:
            self._late_charset(charset)
            if self._restart_to is not None:
                return
        name = a.get("name")
        if name is not None and "content" in a and len(self.metas) < _MAX_TAGS:
            self.metas.append((name.strip().lower(), a["content"]))

    def _head_link(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = _attrs(attrs)
        rels = a.get("rel", "").lower().split()
        href = a.get("href")
        if href is None or len(self.canonicals) + len(self.alternates) >= _MAX_TAGS:
            return
        if "canonical" in rels:
            self.canonicals.append(href.strip())
        if "alternate" in rels and "hreflang" in a:
            self.alternates.append((a["hreflang"], href.strip()))

    def _head_base(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = _attrs(attrs).get("href")
        if href is not None and self.base_href is None:
            self.base_href = href.strip()  # the first base with an href wins

    def _head_title(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.title is None:
            self._in_title = True
            self._title_parts = []

    def _head_skip(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._count_script(attrs)
        self._skip = tag
        self._skip_depth = 1

    def _body_tag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "link" and "canonical" in _attrs(attrs).get("rel", "").lower().split():
            self.body_canonicals += 1
        if tag in _HIDDEN:
            self._hidden += 1
            if tag == "script":
                self._count_script(attrs)
        elif tag == "h1" and not self._h1_done:
            self._in_h1 += 1
        elif tag == "br" or tag == "p" or tag == "div" or tag == "li":
            self._add_text(" ")

    def _count_script(self, attrs: list[tuple[str, str | None]]) -> None:
        # JSON-LD and other data blocks are scripts that run nothing
        kind = _attrs(attrs).get("type", "").strip().lower()
        if kind in _JS_TYPES:
            self.scripts += 1

    def _start_body(self) -> None:
        self._drop_raw()  # a meta charset in the body changes nothing
        self.body_started = True
        self.head_ended = True
        if self._body_at is None:
            self._body_at = self.bytes_read

    def _end(self, tag: str) -> None:
        if self._skip is not None:
            self._end_skipped(tag)
        elif self._in_title:
            if tag == "title":
                self._end_title()
        elif not self.body_started:
            self._end_in_head(tag)
        elif tag in _HIDDEN and self._hidden:
            self._hidden -= 1
        elif tag == "h1" and self._in_h1:
            self._end_h1()

    def _end_skipped(self, tag: str) -> None:
        if tag == self._skip:
            self._skip_depth -= 1
            if self._skip_depth <= 0:
                self._skip = None

    def _end_in_head(self, tag: str) -> None:
        if tag == "head":
            self.head_ended = True
        elif tag in ("body", "html", "br", "p"):
            self._start_body()  # "</p>" and "</br>" create elements: the body has begun

    def _end_h1(self) -> None:
        self._in_h1 -= 1
        if not self._in_h1:
            self._h1_done = True
            self.h1 = _clean("".join(self._h1_parts))[:_H1_CHARS] or None

    def _end_title(self) -> None:
        self._in_title = False
        self.title = _clean("".join(self._title_parts))[:_TITLE_CHARS]

    def _text(self, data: str) -> None:
        if self._skip is not None:
            return
        if self._in_title:
            if sum(len(p) for p in self._title_parts) < _TITLE_CHARS:
                self._title_parts.append(data)
            return
        if not self.body_started:
            if not data.strip():
                return  # whitespace between head elements
            self._start_body()  # text cannot be in a head: the body has begun
        if not self._hidden:
            self._body_text(data)

    def _body_text(self, data: str) -> None:
        if self._in_h1 and not self._h1_done and sum(map(len, self._h1_parts)) < _H1_CHARS:
            self._h1_parts.append(data)
        self._add_text(data)

    def _add_text(self, data: str) -> None:
        if self._text_len < _TEXT_CHARS:
            self._text_cache = None
            self._text_parts.append(data)
            self._text_len += len(data)


_HeadHandler = Callable[[HeadReader, str, list[tuple[str, str | None]]], None]
# What a start tag in the head does (other head tags, such as <style>, do nothing).
_HEAD_HANDLERS: Final[dict[str, _HeadHandler]] = {
    "meta": HeadReader._head_meta,
    "link": HeadReader._head_link,
    "base": HeadReader._head_base,
    "title": HeadReader._head_title,
    **dict.fromkeys(("noscript", "template", "script", "style"), HeadReader._head_skip),
}


def _meta_charset(a: dict[str, str]) -> str | None:
    """The charset a head meta declares: `charset`, or `http-equiv=content-type`'s."""
    charset = a.get("charset")
    if charset is None and a.get("http-equiv", "").lower() == "content-type":
        m = _CHARSET_PARAM.search(a.get("content", ""))
        charset = m.group(1) if m else None
    return charset


def _attrs(attrs: list[tuple[str, str | None]]) -> dict[str, str]:
    """Attributes as a dict: the first of a repeated name wins, as in HTML; no value is ''."""
    out: dict[str, str] = {}
    for k, v in attrs:
        if k not in out:
            out[k] = v if v is not None else ""
    return out
