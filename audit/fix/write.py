"""Writes a `fix` plan into DIR: the index, the shards and the two fix reports.

Every file is written under a temporary name and renamed into place, and an earlier
`fix`'s files that this run does not write again are removed afterwards; other files in
DIR are left alone. Gzip output carries no timestamp, so an unchanged shard is the same
bytes from one night to the next.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
from collections import Counter
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from audit.fix.plan import NS, Plan

__all__ = ["INDEX", "REPORT_JSONL", "REPORT_MD", "summary_of", "write_plan"]

INDEX = "sitemap_index.xml"
REPORT_JSONL = "fix-report.jsonl"
REPORT_MD = "fix-report.md"
_OWN_PATTERNS = (INDEX, "sitemap-*.xml", "sitemap-*.xml.gz", "fix-report.*")
# a shard's bytes by the suffix of its file: plain, or gzip without a timestamp
_ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "": bytes,
    ".gz": functools.partial(gzip.compress, mtime=0),
}


def _index_xml(plan: Plan) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<sitemapindex xmlns="{NS}">\n']
    for shard in plan.shards:
        loc = escape(plan.base_url + shard.name + plan.suffix)
        lastmod = shard.lastmod()
        when = f"<lastmod>{escape(lastmod)}</lastmod>" if lastmod is not None else ""
        lines.append(f"<sitemap><loc>{loc}</loc>{when}</sitemap>\n")
    lines.append("</sitemapindex>\n")
    return "".join(lines)


def summary_of(plan: Plan, source: str) -> dict[str, Any]:
    actions = Counter(map(attrgetter("action"), plan.records))
    by_code = Counter(filter(None, map(attrgetter("code"), plan.records)))  # (kept: None)
    return {
        "type": "fix-summary",
        "source": source,
        "base_url": plan.base_url,
        "urls_in": len(plan.records),
        "written": plan.written,
        "kept": actions["kept"],
        "replaced": actions["replaced"],
        "dropped": actions["dropped"],
        "shards": len(plan.shards),
        "by_code": dict(sorted(by_code.items())),
    }


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _report_md(plan: Plan, summary: dict[str, Any]) -> str:
    out = [
        "# sitemap-audit fix\n\n",
        f"Source: `{summary['source']}`, base URL: {summary['base_url']}\n\n",
        f"- listed URLs: {summary['urls_in']}\n",
        f"- kept: {summary['kept']}\n",
        f"- replaced by their redirect target: {summary['replaced']}\n",
        f"- dropped: {summary['dropped']}\n",
        f"- written: {summary['written']} URLs in {summary['shards']} sitemap files\n",
    ]
    if summary["by_code"]:
        out.append("\n| code | URLs |\n| --- | ---: |\n")
        out.extend(f"| `{code}` | {n} |\n" for code, n in summary["by_code"].items())
    # a row for each URL not kept, in the records' order
    changed = [
        f"| {_md_cell(r.url)} | {r.action} | {f'`{r.code}`' if r.code else ''} | "
        f"{_md_cell(r.target) if r.target else ''} |\n"
        for r in plan.records
        if r.action != "kept"
    ]
    if changed:
        out.append("\n| URL as listed | action | code | written instead |\n")
        out.append("| --- | --- | --- | --- |\n")
        out.extend(changed)
    return "".join(out)


def _put(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_plan(plan: Plan, out_dir: Path, *, source: str) -> dict[str, Any]:
    """Write the set (gzipped when the plan's shards are) and its reports into `out_dir`;
    the fix-summary record."""
    out_dir.mkdir(parents=True, exist_ok=True)
    earlier = {p for pattern in _OWN_PATTERNS for p in out_dir.glob(pattern) if p.is_file()}
    written: set[Path] = set()
    for shard in plan.shards:
        data = shard.xml().encode("utf-8")
        path = out_dir / (shard.name + plan.suffix)
        _put(path, _ENCODERS[plan.suffix](data))
        written.add(path)
    _put(out_dir / INDEX, _index_xml(plan).encode("utf-8"))
    summary = summary_of(plan, source)
    report = out_dir / REPORT_JSONL
    tmp = report.with_name(f".{report.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:  # streamed: a line per URL
        for r in plan.records:
            fh.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
        fh.write(json.dumps(summary, ensure_ascii=False) + "\n")
    os.replace(tmp, report)
    _put(out_dir / REPORT_MD, _report_md(plan, summary).encode("utf-8"))
    written |= {out_dir / INDEX, out_dir / REPORT_JSONL, out_dir / REPORT_MD}
    for stale in earlier - written:
        stale.unlink(missing_ok=True)
    return summary
