"""llms.txt audited like a sitemap (contracts/agents.md, "llms.txt"): pure reading and verdicts.

- `is_html_shell()`: an llms file answered with HTML (an HTML Content-Type, or a body that
  starts with `<!doctype html` or `<html` after leading whitespace): `llms-html-shell`.
- `read_llms()`: an llms.txt read as text: its links (inline `[text](url)` and autolinks
  `<http(s)://...>` outside fenced code blocks and code spans, each with its line) and the
  first line that breaks the llmstxt.org shape (None: valid).
- `resolve_links()`: the links resolved against the file's URL, http(s) only, without
  their fragment, one per normalised URL at its first line.
- `link_code()`: which of `llms-link-broken`, `llms-link-redirect`, `llms-link-noindex`,
  `llms-md-html`, `llms-link-not-in-sitemap` a checked link gets (the first that applies).
- `file_findings()`, `link_finding()`, `blocked_finding()`: the findings with the
  contract's fields.

Pure and synchronous: must not import aiohttp, asyncio or the HTTP layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Final
from urllib.parse import urljoin, urlsplit

from audit.checks.pagefacts import is_html as is_html_type
from audit.core.records import Finding, finding
from audit.rules.urls import normalize_url

__all__ = [
    "MAX_CHARS",
    "READ_CHARS",
    "LinkAnswer",
    "LlmsText",
    "blocked_finding",
    "decode_llms",
    "file_findings",
    "is_html_shell",
    "is_html_type",
    "link_code",
    "link_finding",
    "read_llms",
    "resolve_links",
    "shell_finding",
    "starts_like_html",
]

MAX_CHARS: Final = 50_000  # llms-too-large above this (Mintlify's limit)
READ_CHARS: Final = 5_000_000  # an llms.txt is read up to this many characters
_HTML_START = re.compile(r"\s*<(?:!doctype\s+html|html)[\s>]", re.IGNORECASE)
_LINES = re.compile(r"\r\n|\r|\n")
# a fenced block: a line opening it (a run of three or more backticks or tildes after at
# most three spaces) up to the line that closes it (the same run, at least as long, after at
# most three spaces) or the end of the text
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*(?:\n(?! {0,3}\1)[^\n]*)*(?:\n[^\n]*)?", re.M)
_H1 = re.compile(r" {0,3}#(?:[ \t]|$)")
_H2 = re.compile(r" {0,3}##(?:[ \t]|$)")
# a link destination: no spaces, parentheses balanced one level deep, or <...>
_DEST = r"(?:<[^<>\n]*>|(?:[^\s()]|\((?:[^\s()])*\))+)"
_TITLE = r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?"
_OPEN = r"\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]\(\s*"  # `[text](`, up to the destination
_INLINE = re.compile(
    _OPEN + "((?:" + _DEST + ")?)" + _TITLE + r"\s*\)"
)  # (an empty destination: "")
# a list item that does not start with a link that has a destination, [name](url) (the
# whitespace runs possessive: the link is looked for after all of it)
_UNLINKED_ITEM = re.compile(r"\s*+[-*+]\s++(?!" + _OPEN + "(?:" + _DEST + ")" + _TITLE + r"\s*\))")
_AUTOLINK = re.compile(r"<(https?://[^\s<>]*)>", re.IGNORECASE)
_MAY_LINK = re.compile(r"[(<]")  # a line without "(" or "<" holds no link
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")


def starts_like_html(body: bytes) -> bool:
    """Does the body, after leading whitespace, start with `<!doctype html` or `<html`?"""
    text = body[:1024].decode("utf-8", "replace")
    return _HTML_START.match(text.lstrip("\ufeff") + " ") is not None


def is_html_shell(content_type: str | None, body: bytes) -> bool:
    """An llms file answered with HTML: an HTML type, or a body that starts like HTML."""
    return is_html_type(content_type) or starts_like_html(body)


def decode_llms(body: bytes) -> str:
    """An llms.txt body as text: UTF-8 (bad bytes replaced), a BOM dropped, at most
    READ_CHARS characters."""
    return body.decode("utf-8", "replace").removeprefix("\ufeff")[:READ_CHARS]


@dataclass(frozen=True, slots=True)
class LlmsText:
    """An llms.txt read as text: its links (target as written, line) in file order, each
    occurrence, and the first line that breaks the shape (None: valid)."""

    links: tuple[tuple[str, int], ...]
    invalid_line: int | None


def _links_of(line: str) -> list[str]:
    """The link targets of one line outside fences, in order of appearance."""
    # code spans blanked out: a link inside one is no link
    text = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    found: list[tuple[int, str]] = []
    for m in _INLINE.finditer(text):
        if text[m.start() - 1 : m.start()] == "!":  # (empty at the start of the line)
            continue  # an image, not a link
        dest = m.group(2)
        if dest.startswith("<") and dest.endswith(">"):
            dest = dest[1:-1]
        found.append((m.start(), dest))
        # a link in the link text ([![img](a)](b)) is the image's: only b counts
    for m in _AUTOLINK.finditer(text):
        found.append((m.start(), m.group(1)))
    return list(map(itemgetter(1), sorted(found)))  # the targets in order


def read_llms(text: str) -> LlmsText:
    """The links and shape of an llms.txt read as text (see the module). The llmstxt.org
    shape, outside fences: one `# Title` before any other line that is not blank, no
    second title, and after the first `## Section` every list item starting with a link."""
    links: list[tuple[str, int]] = []
    titled = in_sections = False
    broken: int | None = None
    # fenced blocks, fences included, are read as blank lines (each line kept: the numbers
    # stay the file's)
    text = _FENCED.sub(lambda m: "\n" * m.group().count("\n"), _LINES.sub("\n", text))
    for number, line in enumerate(text.split("\n"), start=1):
        if _MAY_LINK.search(line):
            links += zip(_links_of(line), repeat(number))
        if broken is not None or not line.strip():
            continue  # the first line that breaks the shape is known, or a blank one
        if (_H1.match(line) is not None) == titled:  # no title first, or a second title
            broken = number
        elif not titled:
            titled = True
        elif _H2.match(line):
            in_sections = True
        elif in_sections and _UNLINKED_ITEM.match(line):
            broken = number  # a section's item must start with [name](url)
    return LlmsText(tuple(links), broken)


def resolve_links(base: str, links: tuple[tuple[str, int], ...]) -> dict[str, tuple[str, int]]:
    """normalised URL -> (the URL resolved, without fragment; its first line), for the
    http(s) links of a file, in file order."""
    out: dict[str, tuple[str, int]] = {}
    for target, line in links:
        try:
            url = urljoin(base, target.strip())
            scheme = urlsplit(url).scheme.lower()
        except ValueError:
            continue
        if scheme not in ("http", "https"):
            continue
        url = url.split("#", 1)[0]
        out.setdefault(normalize_url(url), (url, line))
    return out


@dataclass(frozen=True, slots=True)
class LinkAnswer:
    """What a checked llms.txt link answered (its listed check's, or its own)."""

    status: int | None  # the final answer's; None: no answer
    redirected: bool  # at least one redirect was followed
    failed: bool  # an error after retries, a redirect loop or more than 10 hops
    html: bool  # an HTML Content-Type, or a body that starts like HTML
    noindex: bool  # noindex for the main agent (as url-noindex judges it)
    canonical_elsewhere: bool  # a canonical to another URL
    listed: bool  # an audited sitemap lists it


def link_code(url: str, answer: LinkAnswer) -> str | None:
    """The first of the five link codes that applies to a checked link, or None."""
    status = answer.status
    if answer.failed or status is None or status >= 400:
        return "llms-link-broken"
    rows = (  # (whether it applies, its code; None: no code), the first that applies
        (answer.redirected, "llms-link-redirect" if 200 <= status < 300 else None),
        (status != 200, None),
        (answer.noindex, "llms-link-noindex"),
        (not answer.html, None),  # the two codes left are about an HTML answer
        (urlsplit(url).path.lower().endswith(".md"), "llms-md-html"),
        (answer.listed or answer.canonical_elsewhere, None),
    )
    return next((code for applies, code in rows if applies), "llms-link-not-in-sitemap")


_MESSAGES: Final = {
    "llms-link-broken": "{llms} links {url} (line {line}), which {what}: agents that follow "
    "llms.txt get an error",
    "llms-link-redirect": "{llms} links {url} (line {line}), which redirects: link the final URL",
    "llms-link-noindex": "{llms} links {url} (line {line}), which says noindex for the main agent",
    "llms-md-html": "{llms} links the markdown twin {url} (line {line}), which answers HTML: "
    "agents that ask for markdown get a page or an app shell",
    "llms-link-not-in-sitemap": "{llms} links {url} (line {line}), an indexable page that no "
    "audited sitemap lists",
}


def link_finding(code: str, url: str, llms: str, line: int, answer: LinkAnswer) -> Finding:
    """A link code's finding, with `llms` (the file) and `line` (its first link there)."""
    # what the link does (only llms-link-broken's message says it)
    what = f"answers HTTP {answer.status}" if answer.status is not None else "fails"
    if answer.redirected:
        what = (
            "redirects to an error"
            if answer.status is not None and not answer.failed
            else "redirects without end"
        )
    message = _MESSAGES[code].format(llms=llms, url=url, line=line, what=what)
    return finding(code, message, url=url, line=line, fields={"llms": llms})


def blocked_finding(url: str, llms: str, line: int, agents: list[str]) -> Finding:
    """`llms-link-blocked`: robots.txt keeps these agents (main agent first) from a link."""
    names = ", ".join(agents)
    return finding(
        "llms-link-blocked",
        f"{llms} links {url} (line {line}), which robots.txt disallows for {names}: allow it "
        "for the agents llms.txt is written for, or drop the link",
        url=url,
        line=line,
        fields={"llms": llms, "agents": agents},
    )


def file_findings(url: str, chars: int, invalid_line: int | None) -> list[Finding]:
    """`llms-invalid` and `llms-too-large` of an llms.txt read as text."""
    out: list[Finding] = []
    if invalid_line is not None:
        out.append(
            finding(
                "llms-invalid",
                f"{url} breaks the llmstxt.org shape at line {invalid_line}: it must open "
                "with one '# Title', and every list item under an '## Section' must start "
                "with a markdown link",
                url=url,
                line=invalid_line,
            )
        )
    if chars > MAX_CHARS:
        out.append(
            finding(
                "llms-too-large",
                f"{url} holds {chars:,} characters (over {MAX_CHARS:,}): agents truncate it; "
                "link sections out or move prose to llms-full.txt",
                url=url,
                fields={"chars": chars},
            )
        )
    return out


def shell_finding(url: str) -> Finding:
    """`llms-html-shell`: the file answered 200 with HTML."""
    return finding(
        "llms-html-shell",
        f"{url} answers 200 with HTML: the site's app routes it to its shell, and agents get "
        "no llms file; serve it as a text file",
        url=url,
    )
