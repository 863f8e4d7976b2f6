"""html writer: one self-contained page for people fixing a site.

Summary cards, SVG charts (status classes, findings by code, lastmod ages), a
table of the codes found (with Search Console's name for each, where it has one),
the sitemap tree with entries and findings per sitemap, and a searchable,
sortable findings table holding the first `max_rows_per_code` findings of each
code with "N more" counts. Everything is inline: CSS, SVG and a small script;
no script, style, font, image or link is fetched from anywhere, and a
Content-Security-Policy with a per-report nonce makes sure nothing else runs.

Safety: every value taken from records goes through `html.escape(quote=True)`,
its control, bidi and other non-printable characters made spaces (percent-encoded
in URLs) so none reaches the page raw; links are made only for http(s) URLs; the
JSON data block escapes `<`, `>`, `&` and every non-printable character (U+2028/2029
among them) so it cannot close its `<script>` element.

Memory and size: rendered at close from an `Aggregate` (counters plus the
kept rows), so neither depends on the number of URLs. Imports nothing from the
crawl, HTTP or parser layers.
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC
from html import escape
from typing import Any, TextIO

from audit.core.printable import printable, url_printable
from audit.core.version import __version__
from audit.report import coverage, intent, rendering
from audit.report import llms as llms_report
from audit.report.agents import IndexTally, html_section
from audit.report.aggregate import (
    ROLLUP_TITLES,
    SEVERITIES,
    STATUS_CLASSES,
    Aggregate,
    Example,
    SitemapStat,
    code_summary,
    credentials_note,
    cut_notes,
    host_columns,
    host_value,
    migration_rows,
    progress_line,
    rank,
    search_console,
    search_console_label,
    verdict,
    where,
)
from audit.report.text import format_duration

# Sitemap tree rows and chart bars shown at most; the rest are counted.
MAX_TREE_ROWS = 2000
MAX_CODE_BARS = 25
# Findings table rows in all: when many codes have findings, each gets a
# smaller share (never under MIN_ROWS_PER_CODE) so the page stays a few MB.
MAX_TABLE_ROWS = 4000
MIN_ROWS_PER_CODE = 20

SEV_COLOUR = {"error": "#cf222e", "warning": "#bf8700", "info": "#0969da"}
STATUS_COLOUR = {
    "2xx": "#2da44e",
    "3xx": "#0969da",
    "4xx": "#e16f24",
    "5xx": "#cf222e",
    "none": "#8c959f",
}
AGE_COLOUR = {
    "future": "#8250df",
    "< 1 week": "#1a7f37",
    "< 1 month": "#2da44e",
    "< 6 months": "#4ac26b",
    # an old page is not an error: greys, never the error and warning colours
    "< 1 year": "#8c959f",
    "< 2 years": "#6e7781",
    "older": "#57606a",
    "none": "#d0d7de",
}
AGE_SHORT = {
    "< 1 week": "< 1 wk",
    "< 1 month": "< 1 mo",
    "< 6 months": "< 6 mo",
    "< 1 year": "< 1 yr",
    "< 2 years": "< 2 yr",
}
_STANDARD_SUMMARY = {
    "type",
    "sitemaps",
    "urls",
    "entries",
    "findings",
    "by_code",
    "duration_s",
    "partial",
    "interrupted",
    "stopped_by",
    "max_urls_reached",
    "excluded_urls",
    "excluded_sitemaps",
    "migration",
}
# summary keys shown in a panel of their own, not again under "Run notes"
_OWN_PANEL = frozenset({"agents", "coverage", "hosts"})
# what a run note means, said once beside its value
_NOTE_WORDS = {
    "carried": "URLs carried forward (--state): they answered 304 Not Modified, so their "
    "result, records and findings are the previous run's",
    "skipped_unchanged": "URLs not requested (--changed-only): unchanged and clean last "
    "time, their result carried forward from the previous run",
    "sitemaps_carried": "sitemaps carried forward (--state): they answered 304 Not "
    "Modified and were not read again; their entries and findings are the previous run's",
    "ignored": "finding codes ignored (--ignore): neither reported nor counted",
    "fatal": "targets not audited",
    "targets": "targets in the run",
    "children_not_fetched": "sitemaps a local index lists that were not read (give "
    "--base-url or --online)",
    "children_not_read": "of which",
}


def _note_value(value: Any) -> str:
    """A run note's value in words: numbers grouped, lists joined, mappings as `key: value`."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list | tuple):
        return ", ".join(_note_value(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_note_value(v)}" for k, v in value.items())
    return "" if value is None else str(value)


_SAFE_URL = re.compile(r"https?://[^\x00-\x20\x7f]+\Z", re.IGNORECASE)


def h(value: object) -> str:
    """Escape any record value for HTML text and attribute values: control, bidi and
    other non-printable characters become spaces first (core/printable.py)."""
    return escape(printable(str(value)), quote=True)


def link(url: str | None) -> str:
    """An escaped URL, as a link only when it is plain http(s); its non-printable
    characters percent-encoded, so an RLO or a C1 control shows instead of acting."""
    if not url:
        return ""
    shown = h(url_printable(url))
    if _SAFE_URL.match(url):
        return f'<a href="{shown}" rel="noopener noreferrer nofollow">{shown}</a>'
    return shown


def json_for_script(value: Any) -> str:
    """JSON that cannot end its <script> element or break JavaScript parsing."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    for raw, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(raw, esc)
    if text.isprintable():
        return text
    # Outside strings JSON holds only printable ASCII: each of these is in a string,
    # where \uXXXX means the same character (U+2028/2029, C1 controls, bidi overrides).
    return "".join(ch if ch.isprintable() else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    """A character as JSON \\uXXXX escapes (a surrogate pair beyond the BMP)."""
    raw = ch.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{raw[i]:02x}{raw[i + 1]:02x}" for i in range(0, len(raw), 2))


def _basename(url: str | None) -> str | None:
    """The file name of a sitemap URL, for narrow table cells (the full URL is the title)."""
    if url is None:
        return None
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return tail or url


def _n(value: int) -> str:
    return f"{value:,}"


def _size(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return ""


def _peak(items: list[tuple[str, int, str]]) -> int:
    """The largest count of a chart's bars (1 when none is above 0), its full scale."""
    return max((n for _, n, _ in items), default=0) or 1


def vbars(
    items: list[tuple[str, int, str]],
    label: str,
    width: int = 420,
    short: dict[str, str] | None = None,
) -> str:
    """A vertical bar chart: (label, count, colour) per bar; `short` labels the axis."""
    short = short or {}
    height, top, bottom, left = 210, 24, 34, 8
    plot_h = height - top - bottom
    count = max(1, len(items))
    slot = (width - 2 * left) / count
    bar_w = min(64.0, slot * 0.7)
    peak = _peak(items)
    total = sum(n for _, n, _ in items) or 1
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img"'
        f' aria-label="{h(label)}">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - left}" y2="{top + plot_h}"'
        ' stroke="#d0d7de"/>',
    ]
    for i, (name, n, colour) in enumerate(items):
        bh = round(plot_h * n / peak, 1) if n else 0
        x = round(left + slot * i + (slot - bar_w) / 2, 1)
        y = round(top + plot_h - bh, 1)
        cx = round(left + slot * i + slot / 2, 1)
        pct = f"{100 * n / total:.1f}%"
        parts.append(
            f"<g><title>{h(name)}: {_n(n)} ({pct})</title>"
            f'<rect x="{x}" y="{y}" width="{round(bar_w, 1)}" height="{bh}" rx="3"'
            f' fill="{colour}"/>'
            f'<text x="{cx}" y="{round(y - 6, 1)}" text-anchor="middle" class="val">{_n(n)}</text>'
            f'<text x="{cx}" y="{height - 12}" text-anchor="middle" class="lab">'
            f"{h(short.get(name, name))}</text>"
            "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def hbars(items: list[tuple[str, int, str]], label: str, width: int = 860) -> str:
    """A horizontal bar chart: (label, count, colour) per row."""
    row, label_w, value_w, pad = 24, 230, 70, 6
    height = max(1, len(items)) * row + 2 * pad
    plot_w = width - label_w - value_w
    peak = _peak(items)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img"'
        f' aria-label="{h(label)}">'
    ]
    for i, (name, n, colour) in enumerate(items):
        y = pad + i * row
        bw = max(2.0, round(plot_w * n / peak, 1))
        parts.append(
            f"<g><title>{h(name)}: {_n(n)}</title>"
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end" class="lab mono">'
            f"{h(name)}</text>"
            f'<rect x="{label_w}" y="{y + 4}" width="{bw}" height="{row - 8}" rx="3"'
            f' fill="{colour}"/>'
            f'<text x="{round(label_w + bw + 6, 1)}" y="{y + 16}" class="val">{_n(n)}</text>'
            "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d0d7de;--bg:#f6f8fa;--card:#fff;
--err:#cf222e;--warn:#9a6700;--info:#0969da;--ok:#1a7f37}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:28px 24px 48px}
header{display:flex;align-items:center;justify-content:space-between;gap:16px;
margin-bottom:20px}
h1{font-size:24px;margin:0 0 2px;font-weight:600}
h2{font-size:16px;margin:0 0 12px;font-weight:600}
.sub{color:var(--muted);margin:0}
.verdict{font-weight:700;padding:8px 16px;border-radius:6px;color:#fff;white-space:nowrap}
.verdict.fail{background:var(--err)}.verdict.pass{background:var(--ok)}
.verdict.warn,.verdict.partial{background:#9a6700}
.verdict small{display:block;font-weight:400;font-size:12px;max-width:340px;white-space:normal}
.notice{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:10px 14px;
margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(6,1fr);gap:12px;margin-bottom:16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px}
.card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:26px;font-weight:600;margin-top:2px;font-variant-numeric:tabular-nums}
.card .d{color:var(--muted);font-size:12px}
.card.error .v{color:var(--err)}.card.warning .v{color:var(--warn)}.card.info .v{color:var(--info)}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;
margin-bottom:16px}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.grid2 .panel{margin-bottom:0}.grid2{margin-bottom:16px}
.chart{display:block;max-width:100%;height:auto}
.chart text{font-size:12px;fill:#1f2328}.chart .lab{fill:#59636e}
.mono,code,.url{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.more{color:var(--muted);font-size:12px;margin:8px 0 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#f6f8fa;position:sticky;top:0}
th.sort{cursor:pointer;user-select:none}th.sort:hover{color:var(--fg)}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.url{word-break:break-all;min-width:260px}td.where{white-space:nowrap}
td.code{white-space:nowrap}
#notes th{width:220px;background:none;position:static}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
.sev{display:inline-block;font-size:11px;font-weight:600;padding:1px 7px;border-radius:10px;
color:#fff}
.sev.error{background:var(--err)}.sev.warning{background:#bf8700}.sev.info{background:var(--info)}
.zero{color:#afb8c1}
.tree td:first-child{word-break:break-all}
.d1{padding-left:28px}.d2{padding-left:48px}.d3{padding-left:68px}.d4{padding-left:88px}
.d5{padding-left:108px}
.tree .d1::before,.tree .d2::before,.tree .d3::before,.tree .d4::before,.tree .d5::before{
content:"\\2514\\2500 ";color:#afb8c1}
.tools{display:flex;gap:14px;align-items:center;flex-wrap:wrap;margin-bottom:10px}
.tools input[type=search]{flex:1;min-width:240px;padding:7px 10px;border:1px solid var(--line);
border-radius:6px;font:inherit}
.tools label{color:var(--muted);white-space:nowrap}
.scroll{max-height:640px;overflow:auto;border:1px solid #eaeef2;border-radius:6px}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
@media (max-width:900px){.cards{grid-template-columns:repeat(3,1fr)}
.grid2{grid-template-columns:1fr}}
"""

_JS = """
(function(){
  var table=document.getElementById('findings');
  if(!table){return;}
  var body=table.tBodies[0], rows=Array.prototype.slice.call(body.rows);
  var texts=rows.map(function(r){return r.textContent.toLowerCase();});
  var q=document.getElementById('q'), shown=document.getElementById('shown');
  var boxes=Array.prototype.slice.call(document.querySelectorAll('input[data-sev]'));
  function apply(){
    var s=q.value.trim().toLowerCase(), on={}, n=0;
    boxes.forEach(function(b){on[b.getAttribute('data-sev')]=b.checked;});
    rows.forEach(function(r,i){
      var ok=on[r.getAttribute('data-sev')]&&(!s||texts[i].indexOf(s)>=0);
      r.hidden=!ok; if(ok){n++;}
    });
    shown.textContent=n.toLocaleString()+' of '+rows.length.toLocaleString()+' rows shown';
  }
  q.addEventListener('input',apply);
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,col){
    if(!th.classList.contains('sort')){return;}
    th.addEventListener('click',function(){
      var asc=th.getAttribute('aria-sort')!=='ascending';
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var keyed=rows.map(function(r,i){
        var c=r.cells[col], k=c.getAttribute('data-k');
        return {r:r,t:texts[i],k:k!==null?parseFloat(k):c.textContent.toLowerCase(),i:i};
      });
      keyed.sort(function(a,b){
        var x=a.k<b.k?-1:a.k>b.k?1:a.i-b.i; return asc?x:-x;
      });
      rows=keyed.map(function(o){return o.r;}); texts=keyed.map(function(o){return o.t;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  apply();
})();
"""


def _notices(summary: dict[str, Any]) -> str:
    """The banner of a run that did not finish, and what the run left out on purpose."""
    parts = []
    progress = progress_line(summary)
    if progress is not None:
        parts.append(
            f'<p class="notice" id="partial"><strong>Incomplete.</strong> {h(progress)}.</p>'
        )
    parts += [f'<p class="notice cut">{h(note)}</p>' for note in cut_notes(summary)]
    return "".join(parts)


def _migration(migration: Any) -> str:
    """The outcome table of `migrate` (summary["migration"]), if any."""
    rows = migration_rows(migration)
    if not rows or not isinstance(migration, dict):
        return ""
    total, new = migration.get("old_urls"), migration.get("new_origin")
    head = f"{_n(total)} old URLs checked on " if isinstance(total, int) else "Checked on "
    body = "".join(
        f'<tr><td class="mono">{h(name)}</td><td class="num">{_n(count)}</td>'
        f'<td class="num">{share:.1f}%</td></tr>'
        for name, count, share in rows
    )
    credentials = credentials_note(migration)
    note = f'<p class="notice">{h(credentials)}</p>' if credentials is not None else ""
    return (
        f'<section class="panel" id="migration"><h2>Migration</h2><p>{h(head)}{link(new if isinstance(new, str) else None)}</p>'
        f"{note}"
        '<table><thead><tr><th>Outcome</th><th class="num">Old URLs</th>'
        f'<th class="num">Share</th></tr></thead><tbody>{body}</tbody></table></section>'
    )


def _roots_and_children(
    stats: dict[str, SitemapStat],
) -> tuple[list[SitemapStat], dict[str, list[SitemapStat]]]:
    """The sitemaps without a known parent, and each parent's children, in record order."""
    children: dict[str, list[SitemapStat]] = {}
    roots: list[SitemapStat] = []
    for stat in sorted(stats.values(), key=lambda s: s.order):
        if stat.parent and stat.parent in stats and stat.parent != stat.url:
            children.setdefault(stat.parent, []).append(stat)
        else:
            roots.append(stat)
    return roots, children


def _tree_row(stat: SitemapStat, depth: int) -> str:
    return (
        f'<tr><td class="url d{min(depth, 5)}">{link(stat.url)}</td><td>{h(_tree_kind(stat))}</td>'
        f'<td class="num">{h(_tree_status(stat))}</td>'
        f'<td class="num">{"" if stat.entries is None else _n(stat.entries)}</td>'
        f'<td class="num">{_n(stat.urls)}</td>'
        f"{_count_cell(stat.findings['error'])}"
        f"{_count_cell(stat.findings['warning'])}"
        f'<td class="num">{_size(stat.bytes)}</td></tr>'
    )


def _tree_kind(stat: SitemapStat) -> str:
    """A sitemap's kind as the tree shows it (gzip noted, unfinished when unknown)."""
    kind = stat.kind or ("" if stat.has_record else "not finished")
    if stat.gzip:
        kind += " (gzip)"
    return kind


def _tree_status(stat: SitemapStat) -> str:
    """A sitemap's HTTP status and its error, if any."""
    status = "" if stat.status is None else str(stat.status)
    if stat.error:
        status = f"{status} {stat.error}".strip()
    return status


def _count_cell(n: int) -> str:
    """A table cell of a finding count, greyed out when zero."""
    return f'<td class="num{"" if n else " zero"}">{_n(n)}</td>'


def _codes_chart(bars: list[tuple[str, int, str]], codes: int) -> str:
    """The findings-by-code chart (its first bars, and how many codes it leaves out)."""
    if not bars:
        return '<p class="more">No findings.</p>'
    chart = hbars(bars, "Findings by code")
    if codes > len(bars):
        chart += f'<p class="more">and {codes - len(bars)} more codes</p>'
    return chart


def _code_title(code: str) -> str:
    """What a code means and, where it has one, Search Console's name for it."""
    label = search_console_label(code)
    return f"{code_summary(code)} ({label})" if label else code_summary(code)


def _codes_table(codes: list[tuple[str, str, int]]) -> str:
    """Every code found: severity, count, Search Console's name ('' for none), meaning."""
    if not codes:
        return ""
    rows = "".join(
        f'<tr><td class="mono code">{h(code)}</td><td><span class="sev {h(sev)}">{h(sev)}</span>'
        f'</td><td class="num">{_n(n)}</td><td>{h(search_console(code))}</td>'
        f"<td>{h(code_summary(code))}</td></tr>"
        for code, sev, n in codes
    )
    return (
        '<table id="codes"><thead><tr><th>Code</th><th>Severity</th><th class="num">Count</th>'
        f"<th>Search Console</th><th>What it means</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _finding_row(ex: Example) -> str:
    return (
        f'<tr data-sev="{h(ex.severity)}"><td data-k="{-rank(ex.severity)}">'
        f'<span class="sev {h(ex.severity)}">{h(ex.severity)}</span></td>'
        f'<td class="mono code" title="{h(_code_title(ex.code))}">{h(ex.code)}</td>'
        f'<td class="url">{link(ex.url)}</td>'
        f'<td class="where mono" title="{h(where(ex.sitemap, ex.line))}">'
        f"{h(where(_basename(ex.sitemap), ex.line))}</td>"
        f"<td>{h(ex.message)}</td></tr>"
    )


class HtmlWriter:
    def __init__(
        self, stream: TextIO, *, fail_on: str = "error", max_rows_per_code: int = 200
    ) -> None:
        self._stream = stream
        self._fail_on = fail_on
        self._agg = Aggregate(examples=max_rows_per_code)
        self._index = IndexTally()  # indexability of the url records (report/agents.py)
        self._closed = False

    def write(self, record: dict[str, Any]) -> None:
        self._agg.add(record)
        self._index.add(record)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stream.write(self.render())
        self._stream.flush()

    # --- rendering ------------------------------------------------------

    def render(self) -> str:
        agg = self._agg
        summary = agg.summary_dict()
        nonce = secrets.token_urlsafe(18)
        v = verdict(summary, self._fail_on)
        stamp = agg.reference_time().astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        csp = (
            f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}';"
            " img-src data:; base-uri 'none'; form-action 'none'"
        )
        badge = (
            h(v.word) if v.word in ("PASS", "FAIL") else f"{h(v.word)}<small>{h(v.detail)}</small>"
        )
        out = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
            '<meta name="referrer" content="no-referrer">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Sitemap audit: {h(v.word)}</title>",
            f'<style nonce="{nonce}">{_CSS}</style>',
            "</head><body><main>",
            "<header><div><h1>Sitemap audit report</h1>",
            f'<p class="sub">{h(stamp)} · fail on {h(self._fail_on)} ·'
            f" sitemap-audit {h(__version__)}</p></div>",
            f'<div class="verdict {h(v.style)}" id="verdict">{badge}</div></header>',
            _notices(summary),
        ]
        out.append(self._cards(summary))
        out.append(self._charts())
        out.append(html_section(summary, self._index, h, nonce))
        out.append(llms_report.html_section(summary, h))
        out.append(coverage.html_section(summary, h))
        out.append(intent.html_section(summary, h))
        out.append(rendering.html_section(summary, agg.examples, h))
        out.append(self._notes(summary))
        out.append(_migration(summary.get("migration")))
        out.append(self._tree())
        out.append(self._findings())
        out.append(self._sitemaps())
        out.append(self._hosts())
        data = {
            "summary": summary,
            "status_classes": {c: agg.status_classes[c] for c in STATUS_CLASSES},
            "lastmod_ages": dict(agg.lastmod_histogram()),
            "fail_on": self._fail_on,
            "verdict": v.word,
        }
        out.append(
            f"<footer>Generated by sitemap-audit {h(__version__)}. Self-contained:"
            " works offline.</footer></main>"
            f'<script type="application/json" id="report-data">{json_for_script(data)}</script>'
            f'<script nonce="{nonce}">{_JS}</script></body></html>\n'
        )
        return "\n".join(part for part in out if part)

    def _cards(self, summary: dict[str, Any]) -> str:
        agg = self._agg
        found = summary["findings"]
        cards = [
            ("sitemaps", "Sitemaps", _n(summary["sitemaps"]), self._sitemaps_detail(summary)),
            (
                "urls",
                "URLs checked",
                _n(summary["urls"]),
                f"{_n(agg.redirected)} redirected · {_n(agg.robots_blocked)} blocked",
            ),
            ("error", "Errors", _n(found["error"]), "search engines reject"),
            ("warning", "Warnings", _n(found["warning"]), "wasted crawl budget"),
            ("info", "Info", _n(found["info"]), "worth knowing"),
            ("duration", "Duration", format_duration(summary.get("duration_s")), ""),
        ]
        parts = ['<section class="cards">']
        for key, title, value, detail in cards:
            parts.append(
                f'<div class="card {key}" id="card-{key}"><div class="k">{title}</div>'
                f'<div class="v">{h(value)}</div><div class="d">{h(detail)}</div></div>'
            )
        parts.append("</section>")
        return "".join(parts)

    def _sitemaps_detail(self, summary: dict[str, Any]) -> str:
        """The sitemaps card's detail: how many indexes, how many entries."""
        indexes = sum(1 for s in self._agg.sitemaps.values() if s.kind == "sitemapindex")
        detail = f"{indexes} index" + ("" if indexes == 1 else "es")
        if isinstance(summary.get("entries"), int):
            detail += f" · {_n(summary['entries'])} entries"
        return detail

    def _charts(self) -> str:
        agg = self._agg
        status = [(c, agg.status_classes[c], STATUS_COLOUR[c]) for c in STATUS_CLASSES]
        ages = [(b, n, AGE_COLOUR[b]) for b, n in agg.lastmod_histogram()]
        codes = agg.codes_sorted()
        bars = [(c, n, SEV_COLOUR.get(sev, "#8c959f")) for c, sev, n in codes[:MAX_CODE_BARS]]
        parts = [
            '<div class="grid2">',
            '<section class="panel" id="chart-status"><h2>What the listed URLs answered</h2>',
            vbars(status, "URLs by status class"),
            '<p class="more">3xx: the listed URL redirects (whatever the final answer);'
            " none: no answer (network error, robots-blocked, not checked).</p></section>",
            '<section class="panel" id="chart-lastmod"><h2>Age of &lt;lastmod&gt;</h2>',
            vbars(ages, "URLs by lastmod age", short=AGE_SHORT),
            f'<p class="more">Relative to {h(agg.reference_time().date().isoformat())};'
            " none: no or unreadable lastmod.</p></section>",
            "</div>",
            '<section class="panel" id="chart-codes"><h2>Findings by code</h2>',
            _codes_chart(bars, len(codes)),
            _codes_table(codes),
            "</section>",
        ]
        return "".join(parts)

    def _notes(self, summary: dict[str, Any]) -> str:
        """What else the summary says, in words: what a note means, then its value (never
        raw JSON); notes with a panel of their own (agents, coverage) are not repeated."""
        extra = {
            k: v for k, v in summary.items() if k not in _STANDARD_SUMMARY and k not in _OWN_PANEL
        }
        if not extra:
            return ""
        items = "".join(
            f"<tr><th>{h(_NOTE_WORDS.get(k, k.replace('_', ' ')))}</th>"
            f"<td>{h(_note_value(v))}</td></tr>"
            for k, v in extra.items()
        )
        return (
            f'<section class="panel" id="notes"><h2>Run notes</h2><table>{items}</table></section>'
        )

    def _tree_order(self) -> list[tuple[SitemapStat, int]]:
        """The sitemaps depth first from the roots, each once, with their depth."""
        stats = self._agg.sitemaps
        roots, children = _roots_and_children(stats)
        ordered: list[tuple[SitemapStat, int]] = []
        seen: set[str] = set()
        stack = [(r, 0) for r in reversed(roots)]
        while stack:
            stat, depth = stack.pop()
            if stat.url in seen:
                continue
            seen.add(stat.url)
            ordered.append((stat, depth))
            stack += [(child, depth + 1) for child in reversed(children.get(stat.url, []))]
        # Members of a parent loop are reachable from no root: list them flat.
        ordered += [(s, 0) for s in stats.values() if s.url not in seen]
        return ordered

    def _tree(self) -> str:
        ordered = self._tree_order()
        parts = [
            '<section class="panel" id="sitemap-tree"><h2>Sitemap tree</h2>',
            '<div class="scroll"><table class="tree"><thead><tr><th>Sitemap</th><th>Kind</th>'
            '<th class="num">Status</th><th class="num">Entries</th>'
            '<th class="num">URLs checked</th><th class="num">Errors</th>'
            '<th class="num">Warnings</th><th class="num">Size</th></tr></thead><tbody>',
        ]
        parts += [_tree_row(stat, depth) for stat, depth in ordered[:MAX_TREE_ROWS]]
        if not ordered:
            parts.append('<tr><td colspan="8" class="zero">No sitemap was recorded.</td></tr>')
        parts.append("</tbody></table></div>")
        if len(ordered) > MAX_TREE_ROWS:
            parts.append(
                f'<p class="more">and {_n(len(ordered) - MAX_TREE_ROWS)} more sitemaps</p>'
            )
        parts.append("</section>")
        return "".join(parts)

    def _finding_rows(self) -> tuple[list[str], list[tuple[str, int, int]]]:
        """The findings table's rows, a fair share per code, and (code, shown, total) of
        each code with rows left out."""
        agg = self._agg
        codes = agg.codes_sorted()
        rows: list[str] = []
        truncated: list[tuple[str, int, int]] = []
        with_rows = sum(1 for code, _, _ in codes if agg.examples.get(code))
        share = max(MIN_ROWS_PER_CODE, MAX_TABLE_ROWS // max(1, with_rows))
        for code, _sev, count in codes:
            kept = agg.examples.get(code, [])[:share]
            if count > len(kept):
                truncated.append((code, len(kept), count))
            rows += [_finding_row(ex) for ex in kept]
        return rows, truncated

    def _findings(self) -> str:
        rows, truncated = self._finding_rows()
        boxes = "".join(
            f'<label><input type="checkbox" data-sev="{s}" checked> {s}</label>' for s in SEVERITIES
        )
        parts = [
            '<section class="panel" id="findings-panel"><h2>Findings</h2>',
            '<div class="tools"><input type="search" id="q" placeholder="Filter by URL, code,'
            f' sitemap or message" aria-label="Filter findings">{boxes}'
            '<span class="more" id="shown"></span></div>',
            '<div class="scroll"><table id="findings"><thead><tr>'
            '<th class="sort">Severity</th><th class="sort">Code</th><th class="sort">URL</th>'
            '<th class="sort">Sitemap</th><th class="sort">Message</th></tr></thead><tbody>',
            *rows,
            "</tbody></table></div>",
        ]
        if not rows:
            parts.append('<p class="more">No findings.</p>')
        if truncated:
            items = "; ".join(
                f"<code>{h(code)}</code>: first {_n(shown)}, and {_n(total - shown)} more"
                for code, shown, total in truncated
            )
            parts.append(
                f'<p class="more" id="truncated">Rows per code are limited: {items}.'
                " The jsonl or csv report has every one.</p>"
            )
        parts.append("</section>")
        return "".join(parts)

    def _sitemaps(self) -> str:
        """The per-sitemap roll-up (the `rollup` records): every sitemap, in plain HTML."""
        rollups = self._agg.rollups
        if not rollups:
            return ""
        head = "".join(f'<th class="num">{h(title)}</th>' for title in ROLLUP_TITLES)
        rows = "".join(
            f'<tr><td class="mono">{link(r.url)}</td>'
            + "".join(f'<td class="num">{n:,}</td>' for n in r.counts)
            + "</tr>"
            for r in rollups
        )
        return (
            '<section class="panel" id="sitemap-rollup"><h2>Sitemaps</h2><div class="scroll">'
            f'<table id="sitemaps"><thead><tr><th>Sitemap</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div></section>"
        )

    def _hosts(self) -> str:
        hosts = self._agg.hosts
        if not hosts:
            return ""
        columns = host_columns(hosts)
        head = "".join(f'<th class="num">{h(title)}</th>' for _, title in columns)
        rows = "".join(
            f'<tr><td class="mono">{h(x.get("host", ""))}</td>'
            + "".join(f'<td class="num">{h(host_value(x.get(k)))}</td>' for k, _ in columns)
            + "</tr>"
            for x in hosts
        )
        return (
            '<section class="panel" id="hosts"><h2>Hosts</h2><table><thead><tr><th>Host</th>'
            f"{head}</tr></thead><tbody>{rows}</tbody></table></section>"
        )
