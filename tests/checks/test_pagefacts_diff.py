"""The one-parse page reader (checks/pagefacts.py) against the streaming head reader it
replaced (kept as the oracle in tests/checks/headreader_oracle.py): the same facts on many
generated pages, broken markup, charsets, BOMs, late meta charsets, heads cut at the cap.

Deliberate differences, where the new reader follows what browsers (and lxml, an HTML5
tokenizer since libxml2 2.14) do and the standard library's html.parser did not:

- a `<title>`'s content is raw text (RCDATA): a tag inside it is part of the title, and a
  second `<title>` in the head is a title too, not the start of the body (the old reader
  took its text for body text, so every head element after it was ignored). Generated
  pages with two titles are left out here; tests/checks/test_htmlhead.py pins the new rule;
- an `<h1>` still open where reading stopped (end of the body, or the cut) ends there, as
  an open element ends at the end of input: the h1 is its text so far (the old reader had
  none);
- a tag left unfinished at the end of a whole body (`<meta name=robots content=`) is
  dropped, as the HTML tokenizer drops it at end of input (the old reader made it text).

Not a difference of rules: the visible text is kept up to about 8 KiB (TEXT_CHARS, counted
before whitespace is collapsed), and lxml drops some whitespace-only text the old reader
counted, so where the text reaches that size the two stop a few words apart. The text is
only judged when it is short (soft 404s, empty shells): long texts are compared as far as
both go.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from audit.checks.pagefacts import HEAD, FactsSink
from tests.checks.headreader_oracle import HeadReader
from tests.checks.pagegen import pages

TEXT_CHARS = 8192
FIELDS = (
    "bytes_read",
    "complete",
    "charset",
    "charset_source",
    "title",
    "metas",
    "canonicals",
    "alternates",
    "base_href",
    "head_ended",
    "body_started",
    "truncated",
    "h1",
    "text",
    "scripts",
    "body_canonicals",
)


def old_facts(body: bytes, cap: int, http: str | None) -> dict[str, Any]:
    reader = HeadReader(cap, http_charset=http)
    done = reader.feed(body)  # one chunk: the reader's 4 KiB pieces, as from a socket
    reader.close(at_eof=not done)
    out = {f: getattr(reader, f) for f in FIELDS}
    for name in ("metas", "canonicals", "alternates"):
        out[name] = tuple(out[name])
    return out


def new_facts(body: bytes, cap: int, http: str | None) -> dict[str, Any]:
    sink = FactsSink(HEAD, cap)
    ctype = "text/html" + (f"; charset={http}" if http else "")
    assert sink.start(200, [("content-type", ctype)])
    done = sink.feed(body)
    sink.end(at_eof=not done)
    assert sink.facts is not None
    return {f: getattr(sink.facts, f) for f in FIELDS}


def _h1_left_open(body: bytes, read: int) -> bool:
    seen = body[:read].lower()
    # the last "<h1" read: an earlier one may sit in a head script's string ('<h1>no</h1>')
    at = seen.rfind(b"<h1")
    return at >= 0 and seen.find(b"</h1", at) < 0


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages())
def test_same_facts_as_the_streaming_head_reader(page: tuple[bytes, int, str | None]) -> None:
    body, cap, http = page
    assume(body.count(b"<title") <= 1)
    old, new = old_facts(body, cap, http), new_facts(body, cap, http)
    if min(len(old["text"]), len(new["text"])) > TEXT_CHARS - 200:
        size = min(len(old["text"]), len(new["text"]))
        old["text"], new["text"] = old["text"][:size], new["text"][:size]
    if old["h1"] is None and new["h1"] is not None:
        assert _h1_left_open(body, new["bytes_read"])
        new["h1"] = None
    assert new == old
