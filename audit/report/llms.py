"""The "llms.txt" section (crawl --llms) and the "Agents served" table (--agents-fetch) of the
text, markdown and HTML reports (contracts/agents.md).

From the summary's `llms`: each llms file requested (status, characters, links, shape), the
links on the audited origins and elsewhere, the coverage of indexable listed URLs and the
llms codes counted (`by_code`). From `agents.<Agent>.hosts.<origin>.fetched`: one row per
agent and host, with the URLs sampled and what they were served. `coverage_line()` is the
one-line llms.txt coverage the "What each bot sees" section shows too. Nothing without the
options.

Each writer shows each section when `llms_of` or `served_rows` gives something (its tables
of sections), through the function here for its format, which takes it. Values are escaped
by the writer's own escaper. Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from audit.report.aggregate import Examples, as_dict, as_list, count_of

__all__ = [
    "SERVED",
    "coverage_line",
    "html_section",
    "llms_of",
    "markdown_lines",
    "served_html_section",
    "served_markdown_lines",
    "served_rows",
    "served_text_lines",
    "text_lines",
]

Escape = Callable[[str], str]
TITLE = "llms.txt"
SERVED_TITLE = "Agents served"
LLMS_CODES: Final = (
    "llms-html-shell",
    "llms-invalid",
    "llms-too-large",
    "llms-link-broken",
    "llms-link-redirect",
    "llms-link-noindex",
    "llms-md-html",
    "llms-link-blocked",
    "llms-link-not-in-sitemap",
)
SERVED: Final = (
    ("sampled", "sampled"),
    ("served_differently", "served differently"),
    ("challenged", "challenged"),
    ("payment_required", "payment required"),
    ("shell_only", "shell only"),
)

# the served table's column heads: the text report's right-aligned to at least 7 characters
_TEXT_WIDTHS: Final = [max(7, len(label)) for _, label in SERVED]
_TEXT_HEADS: Final = "  ".join(
    f"{label:>{w}}" for (_, label), w in zip(SERVED, _TEXT_WIDTHS, strict=True)
)
_MARKDOWN_HEADS: Final = " | ".join(label.capitalize() for _, label in SERVED)
_HTML_HEADS: Final = "".join(f'<th class="num">{label}</th>' for _, label in SERVED)


def llms_of(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The summary's `llms` block; None without --llms."""
    llms = summary.get("llms")
    return llms if isinstance(llms, dict) else None


def coverage_line(summary: dict[str, Any]) -> str | None:
    """`llms.txt links 8 of 24 indexable listed URLs (33.3%); 25 links, 1 elsewhere`; None
    without --llms."""
    llms = llms_of(summary)
    return None if llms is None else _coverage(llms)


def _coverage(llms: dict[str, Any]) -> str:
    """coverage_line of the summary's `llms`."""
    covered, indexable = count_of(llms.get("covered")), count_of(llms.get("indexable"))
    ratio = llms.get("coverage")
    share = f"{100 * ratio:.1f}%" if isinstance(ratio, (int, float)) and indexable else "—"
    return (
        f"llms.txt links {covered:,} of {indexable:,} indexable listed URLs ({share}); "
        f"{count_of(llms.get('links')):,} links on the site, "
        f"{count_of(llms.get('external')):,} elsewhere"
    )


def _files(llms: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(url, status, chars, links, shape) of each file requested."""
    out = []
    for f in as_list(llms.get("files")):
        if isinstance(f, dict):
            status = f.get("status")
            read = ("", "", "")  # not read: no characters, links or shape
            if "chars" in f:
                shape = "valid" if f.get("valid") else "invalid"
                read = (f"{count_of(f.get('chars')):,}", f"{count_of(f.get('links')):,}", shape)
            out.append((str(f.get("url") or ""), "—" if status is None else str(status), *read))
    return out


def _codes(summary: dict[str, Any]) -> list[tuple[str, int]]:
    by_code = as_dict(summary.get("by_code"))
    return [(c, n) for c in LLMS_CODES if (n := count_of(by_code.get(c)))]


Served = tuple[str, str, list[int]]


def served_rows(summary: dict[str, Any]) -> list[Served]:
    """(agent, origin, [sampled and the four counts]) of each agent fetched on a host."""
    rows = []
    for agent, entry in as_dict(summary.get("agents")).items():
        for origin, host in as_dict(as_dict(entry).get("hosts")).items():
            fetched = as_dict(host).get("fetched")
            if isinstance(fetched, dict):
                rows.append(
                    (str(agent), str(origin), [count_of(fetched.get(k)) for k, _ in SERVED])
                )
    return rows


def text_lines(
    summary: dict[str, Any], llms: dict[str, Any], examples: Examples, clean: Escape, bold: Escape
) -> list[str]:
    """The llms.txt section: each file requested, the coverage line and the codes counted."""
    out = ["", bold(TITLE)]
    for url, status, chars, links, shape in _files(llms):
        read = f"  {chars} characters, {links} links, {shape}" if chars else ""
        out.append(f"  {clean(url)}  HTTP {status}{read}")
    out.append(f"  {_coverage(llms)}")
    return out + [f"  {code}: {n:,}" for code, n in _codes(summary)]


def served_text_lines(
    summary: dict[str, Any], rows: list[Served], examples: Examples, clean: Escape, bold: Escape
) -> list[str]:
    """The Agents served table, its agent @ host column as wide as its widest."""
    names = [clean(f"{agent} @ {origin}") for agent, origin, _ in rows]
    width = max(map(len, ["agent @ host", *names]))
    out = ["", bold(SERVED_TITLE), f"  {'agent @ host':<{width}}  {_TEXT_HEADS}"]
    for name, (_, _, counts) in zip(names, rows, strict=True):
        cells = "  ".join(f"{n:>{w},}" for n, w in zip(counts, _TEXT_WIDTHS, strict=True))
        out.append(f"  {name:<{width}}  {cells}")
    return out


def markdown_lines(
    summary: dict[str, Any], llms: dict[str, Any], examples: Examples, code: Escape, text: Escape
) -> list[str]:
    out = [f"## {TITLE}", "", "| File | Status | Characters | Links | Shape |"]
    out.append("| --- | ---: | ---: | ---: | --- |")
    for url, status, chars, links, shape in _files(llms):
        out.append(f"| {code(url)} | {status} | {chars} | {links} | {shape} |")
    out += ["", text(_coverage(llms)), ""]
    codes = _codes(summary)
    if codes:
        out += [", ".join(f"{code(c)}: {n:,}" for c, n in codes), ""]
    return out


def served_markdown_lines(
    summary: dict[str, Any], rows: list[Served], examples: Examples, code: Escape, text: Escape
) -> list[str]:
    out = [f"## {SERVED_TITLE}", "", f"| Agent | Host | {_MARKDOWN_HEADS} |"]
    out.append("| --- | --- |" + " ---: |" * len(SERVED))
    for agent, origin, counts in rows:
        cells = " | ".join(f"{n:,}" for n in counts)
        out.append(f"| {code(agent)} | {code(origin)} | {cells} |")
    return [*out, ""]


def html_section(
    summary: dict[str, Any], llms: dict[str, Any], examples: Examples, esc: Escape
) -> str:
    """The llms.txt panel: each file requested, the coverage line and the codes counted."""
    rows = "".join(
        f'<tr><td class="url">{esc(url)}</td><td class="num">{esc(status)}</td>'
        f'<td class="num">{esc(chars)}</td><td class="num">{esc(links)}</td>'
        f"<td>{esc(shape)}</td></tr>"
        for url, status, chars, links, shape in _files(llms)
    )
    codes = "".join(
        f'<li><span class="mono">{esc(c)}</span>: {n:,}</li>' for c, n in _codes(summary)
    )
    return (
        f'<section class="panel" id="llms"><h2>{TITLE}</h2><table><thead><tr>'
        '<th>File</th><th class="num">Status</th><th class="num">Characters</th>'
        f'<th class="num">Links</th><th>Shape</th></tr></thead><tbody>{rows}</tbody>'
        f"</table><p>{esc(_coverage(llms))}</p>"
        + (f"<ul>{codes}</ul>" if codes else "")
        + "</section>"
    )


def served_html_section(
    summary: dict[str, Any], rows: list[Served], examples: Examples, esc: Escape
) -> str:
    """The Agents served panel: one row per agent and host."""
    body = "".join(
        f'<tr><td class="mono">{esc(agent)}</td><td class="url">{esc(origin)}</td>'
        + "".join(f'<td class="num">{n:,}</td>' for n in counts)
        + "</tr>"
        for agent, origin, counts in rows
    )
    return (
        f'<section class="panel" id="agents-served"><h2>{SERVED_TITLE}</h2><table><thead>'
        f"<tr><th>Agent</th><th>Host</th>{_HTML_HEADS}</tr></thead><tbody>{body}</tbody></table>"
        '<p class="more">Sampled listed URLs fetched again with each agent\'s own '
        "User-Agent, compared with the main agent's 200.</p></section>"
    )
