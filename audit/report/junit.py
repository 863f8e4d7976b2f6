"""junit writer: JUnit XML for CI systems.

`<testsuites>` > one `<testsuite>` per sitemap > one `<testcase>` per URL
(name = the URL, classname = the sitemap). A URL with a finding at or above
`fail_on` gets one `<failure message type>`: type is the worst finding's code,
the message its message, the body lists every finding of that URL; findings
below the threshold go to the testcase's `<system-out>`. Findings about a
sitemap itself (no URL, or the sitemap's own URL) form a testcase named after
the sitemap inside its suite; findings with no sitemap (discovery, robots.txt)
form a suite named "discovery". Every problem the audit finds is a failure of
the site, not of the tool, so `skipped` is always 0 and `errors` is 0 unless the
run itself did not finish or audited nothing: then a suite "sitemap-audit run"
holds one errored testcase saying so and how far the run got (sitemaps, URLs,
what stopped it), so CI never shows a partial report as a clean pass.

Memory: url testcases are rendered as they complete (see `UrlJoiner`) and
spooled to one temporary file per suite (a few kept open at once); the
document is assembled at close, when the per-suite counts are known.
Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import IO, Any, TextIO

from audit.report import closes_once
from audit.report._xml import xml_attr, xml_text
from audit.report.aggregate import (
    Aggregate,
    SitemapStat,
    UrlJoiner,
    at_or_above,
    float_or_none,
    int_or_none,
    rank,
    severity_of,
    str_or_none,
    where,
)
from audit.report.verdict import (
    verdict,
)

DISCOVERY = "discovery"
RUN_SUITE = "sitemap-audit run"
_OPEN_FILES = 32
# Findings kept for one sitemap's own testcase; the rest are counted.
_MAX_SITEMAP_FINDINGS = 1000
# what the Aggregate knows of a suite no record names as a sitemap (discovery's): no record
_NO_SITEMAP = SitemapStat("", -1)


@dataclass(slots=True)
class _Suite:
    name: str
    path: str
    tests: int = 0
    failures: int = 0
    time: float = 0.0
    own: list[dict[str, Any]] = field(default_factory=list)  # sitemap-level findings
    own_more: int = 0


def _describe_all(found: list[dict[str, Any]], more: int) -> str:
    """`[severity] code: message (sitemap:line)`, a line a finding, and how many more."""
    lines = []
    for f in found:
        place = where(str_or_none(f.get("sitemap")), int_or_none(f.get("line")))
        line = f"[{severity_of(f)}] {f.get('code')}: {f.get('message') or ''}"
        lines.append(f"{line} ({place})" if place else line)
    body = "\n".join(lines)
    if more:
        body += f"\n… and {more:,} more findings"
    return body


class JunitWriter:
    def __init__(self, stream: TextIO, *, fail_on: str = "error") -> None:
        self._stream = stream
        self._fail_on = fail_on
        self._agg = Aggregate(examples=0)
        self._dir = tempfile.TemporaryDirectory(prefix="sitemap-audit-junit-")
        self._suites: dict[str, _Suite] = {}
        self._open: OrderedDict[str, IO[str]] = OrderedDict()
        self._joiner = UrlJoiner(self._url_case)

    # --- feeding --------------------------------------------------------

    def write(self, record: dict[str, Any]) -> None:
        self._agg.add(record)
        kind = record.get("type")
        if kind == "url":
            self._suite(str_or_none(record.get("sitemap")))
            self._joiner.url(record)
        elif kind == "finding":
            url = str_or_none(record.get("url"))
            sitemap = str_or_none(record.get("sitemap"))
            suite = self._suite(sitemap)  # suites appear in the order they are first named
            if url in (None, sitemap):  # the sitemap's own: kept in its suite
                if len(suite.own) < _MAX_SITEMAP_FINDINGS:
                    suite.own.append(record)
                else:
                    suite.own_more += 1
            else:
                self._joiner.finding(url, record)
        elif kind == "sitemap":
            self._suite(str_or_none(record.get("url")))

    def _suite(self, sitemap: str | None) -> _Suite:
        name = sitemap or DISCOVERY
        suite = self._suites.get(name)
        if suite is None:
            path = os.path.join(self._dir.name, f"{len(self._suites)}.xml")
            suite = self._suites[name] = _Suite(name, path)
        return suite

    def _file(self, suite: _Suite) -> IO[str]:
        handle = self._open.get(suite.name)
        if handle is not None:
            self._open.move_to_end(suite.name)
            return handle
        if len(self._open) >= _OPEN_FILES:
            _, oldest = self._open.popitem(last=False)
            oldest.close()
        handle = self._open[suite.name] = open(suite.path, "a", encoding="utf-8")  # noqa: SIM115
        return handle

    def _url_case(self, rec: dict[str, Any] | None, url: str, found: list[dict[str, Any]]) -> None:
        if rec is not None:
            sitemap = str_or_none(rec.get("sitemap"))
            seconds = (float_or_none(rec.get("elapsed_ms")) or 0.0) / 1000
        else:  # findings with no url record: the joiner gives at least one
            sitemap = str_or_none(found[0].get("sitemap"))
            seconds = 0.0
        suite = self._suite(sitemap)
        text, failed = self._case(url, suite.name, seconds, found, 0)
        suite.tests += 1
        suite.time += seconds
        suite.failures += failed
        self._file(suite).write(text)

    def _case(
        self, name: str, classname: str, seconds: float, found: list[dict[str, Any]], more: int
    ) -> tuple[str, bool]:
        """One testcase element, and whether it failed."""
        head = (
            f'    <testcase name="{xml_attr(name)}" classname="{xml_attr(classname)}"'
            f' time="{seconds:.3f}"'
        )
        if not found:
            return head + "/>\n", False
        failing = [f for f in found if at_or_above(severity_of(f), self._fail_on)]
        if failing:
            worst = max(failing, key=lambda f: rank(severity_of(f)))
            inner = (
                f'      <failure message="{xml_attr(worst.get("message") or "")}"'
                f' type="{xml_attr(worst.get("code") or "")}">'
                f"{xml_text(_describe_all(found, more))}</failure>\n"
            )
        else:
            inner = f"      <system-out>{xml_text(_describe_all(found, more))}</system-out>\n"
        return f"{head}>\n{inner}    </testcase>\n", bool(failing)

    # --- closing --------------------------------------------------------

    @closes_once
    def close(self) -> None:
        try:
            try:  # the last testcases, then every spool closed (whatever happened)
                self._joiner.close()
            finally:
                for handle in self._open.values():
                    handle.close()
            self._assemble()
        finally:
            self._dir.cleanup()

    def _assemble(self) -> None:
        out = self._stream
        own_cases = self._own_cases()
        suites = self._suites.values()
        run_case = self._run_case()
        errors = int(bool(run_case))  # 1 with the run's own errored testcase
        tests = sum(s.tests for s in suites) + errors
        failures = sum(s.failures for s in suites)
        duration = float_or_none(self._agg.summary_dict().get("duration_s"))
        total_time = duration if duration is not None else sum(s.time for s in suites)
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.write(
            f'<testsuites name="sitemap-audit" tests="{tests}" failures="{failures}"'
            f' errors="{errors}" skipped="0" time="{total_time:.3f}">\n'
        )
        out.write(run_case)
        for suite in suites:
            if suite.tests:  # else named by a record but never fetched, with nothing listed
                self._write_suite(suite, own_cases.get(suite.name, ""))
        out.write("</testsuites>\n")
        out.flush()

    def _run_case(self) -> str:
        """A run that did not finish, or audited nothing, is an error of the run (not a
        failure of the site): one suite with one errored testcase that says how far it got
        ('' for a run that ended and audited something)."""
        v = verdict(self._agg.summary_dict(), self._fail_on)
        if not v.run_error:
            return ""
        kind = v.word.lower().replace(" ", "-")  # interrupted, partial, nothing-audited, ...
        return (
            f'  <testsuite name="{RUN_SUITE}" tests="1" failures="0" errors="1" skipped="0"'
            ' time="0.000">\n'
            f'    <testcase name="the audit ran to its end" classname="{RUN_SUITE}" time="0.000">\n'
            f'      <error message="{xml_attr(v.line)}" type="{xml_attr(kind)}">'
            f"{xml_text(v.line)}</error>\n"
            "    </testcase>\n  </testsuite>\n"
        )

    def _own_cases(self) -> dict[str, str]:
        """Each sitemap's own testcase, counted into its suite."""
        own_cases: dict[str, str] = {}
        for suite in self._suites.values():
            stat = self._agg.sitemaps.get(suite.name, _NO_SITEMAP)
            # Every fetched sitemap is a test of its own (so a clean sitemap in a
            # validate run still shows as passed); it carries the sitemap-level findings.
            if suite.own or stat.has_record:
                text, failed = self._case(suite.name, suite.name, 0.0, suite.own, suite.own_more)
                own_cases[suite.name] = text
                suite.tests += 1
                suite.failures += failed
        return own_cases

    def _write_suite(self, suite: _Suite, own_case: str) -> None:
        out = self._stream
        out.write(
            f'  <testsuite name="{xml_attr(suite.name)}" tests="{suite.tests}"'
            f' failures="{suite.failures}" errors="0" skipped="0" time="{suite.time:.3f}">\n'
        )
        out.write(own_case)  # ("" for a suite without its own testcase)
        if os.path.exists(suite.path):
            with open(suite.path, encoding="utf-8") as spool:
                shutil.copyfileobj(spool, out, 1 << 16)
        out.write("  </testsuite>\n")
