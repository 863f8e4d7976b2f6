"""The HTML report's building blocks (audit.report.html): escaping every record value
(`h`, `link`, `json_for_script`), SVG bar charts, and the page's stylesheet and script.

Safety: `h` runs every value through `html.escape(quote=True)` after its control, bidi
and other non-printable characters are made spaces (percent-encoded in URLs, `link`) so
none reaches the page raw; links are made only for http(s) URLs; `json_for_script`
escapes `<`, `>`, `&` and every non-printable character (U+2028/2029 among them) so the
JSON cannot close its `<script>` element.

Imports only the standard library and audit.core.printable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html import escape
from types import MappingProxyType
from typing import Any

from audit.core.printable import printable, url_printable

__all__ = [
    "AGE_COLOUR",
    "AGE_SHORT",
    "CSS",
    "JS",
    "SEV_COLOUR",
    "STATUS_COLOUR",
    "grouped",
    "h",
    "hbars",
    "json_for_script",
    "link",
    "vbars",
]

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


# what could end a <script> element or open a comment, written as JSON escapes
_SCRIPT_SAFE = str.maketrans({"&": "\\u0026", "<": "\\u003c", ">": "\\u003e"})


def json_for_script(value: Any) -> str:
    """JSON that cannot end its <script> element or break JavaScript parsing."""
    text = json.dumps(value, ensure_ascii=False, default=str).translate(_SCRIPT_SAFE)
    if text.isprintable():
        return text
    # Outside strings JSON holds only printable ASCII: each of these is in a string,
    # where \uXXXX means the same character (U+2028/2029, C1 controls, bidi overrides);
    # beyond the BMP, a surrogate pair: json's own ASCII escape of the one character
    # (no C0 control is left to take a short form such as \n: json.dumps escaped those).
    return "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in text)


def grouped(value: int) -> str:
    """A count with its thousands grouped."""
    return f"{value:,}"


def _peak(items: list[tuple[str, int, str]]) -> int:
    """The largest count of a chart's bars (1 when none is above 0), its full scale."""
    return max((n for _, n, _ in items), default=0) or 1


_NO_SHORT: Mapping[str, str] = MappingProxyType({})  # vbars' labels as given


def vbars(
    items: list[tuple[str, int, str]],
    label: str,
    width: int = 420,
    short: Mapping[str, str] = _NO_SHORT,
) -> str:
    """A vertical bar chart: (label, count, colour) per bar; `short` labels the axis."""
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
            f"<g><title>{h(name)}: {grouped(n)} ({pct})</title>"
            f'<rect x="{x}" y="{y}" width="{round(bar_w, 1)}" height="{bh}" rx="3"'
            f' fill="{colour}"/>'
            f'<text x="{cx}" y="{round(y - 6, 1)}" text-anchor="middle" class="val">{grouped(n)}</text>'
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
            f"<g><title>{h(name)}: {grouped(n)}</title>"
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end" class="lab mono">'
            f"{h(name)}</text>"
            f'<rect x="{label_w}" y="{y + 4}" width="{bw}" height="{row - 8}" rx="3"'
            f' fill="{colour}"/>'
            f'<text x="{round(label_w + bw + 6, 1)}" y="{y + 16}" class="val">{grouped(n)}</text>'
            "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


CSS = """
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

JS = """
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
