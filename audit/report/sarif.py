"""sarif writer: SARIF 2.1.0 for code-scanning UIs.

One run; `tool.driver` is sitemap-audit with one rule per code seen (id,
short and full description and help from codes.CODES, default level, and
Search Console's name for the code in properties.searchConsole, '' for none). Each
finding is a result with its ruleId/ruleIndex, level (error, warning, note),
message, and a location pointing at the sitemap that lists the URL (the URL
itself when there is no sitemap) with `region.startLine` when the line is
known, so the finding shows at the line of the sitemap. Results are spooled to
a temporary file and the rules, known only at the end, are written first at
close. Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, TextIO

from audit.core.codes import doc_anchor, fix_of
from audit.core.version import __version__
from audit.report import closes_once
from audit.report.aggregate import (
    Aggregate,
    code_summary,
    fails,
    int_or_none,
    search_console,
    search_console_label,
    severity_of,
    str_or_none,
)
from audit.report.json_ import Spool
from audit.report.verdict import (
    verdict,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _message(record: dict[str, Any], code: str, url: str | None, sitemap: str | None) -> str:
    """The finding's message, naming its URL when the location (the sitemap) does not."""
    message = str(record.get("message") or code)
    if url not in (None, sitemap) and url not in message:  # ("" is in every message)
        message = f"{message} ({url})"
    return message


class SarifWriter:
    def __init__(self, stream: TextIO, *, fail_on: str = "error") -> None:
        self._stream = stream
        self._fail_on = fail_on
        self._agg = Aggregate(examples=0)
        self._rules: dict[str, tuple[int, str]] = {}  # code -> (index, severity)
        self._results = Spool(",\n        ")  # one result a line, in "results"

    def write(self, record: dict[str, Any]) -> None:
        """Count every record; a finding becomes a result, spooled to a file."""
        self._agg.add(record)
        if record.get("type") != "finding":
            return
        code = str(record.get("code") or "unknown")
        sev = severity_of(record)
        index, _ = self._rules.setdefault(code, (len(self._rules), sev))
        url = str_or_none(record.get("url"))
        sitemap = str_or_none(record.get("sitemap"))
        # where: the sitemap that lists the URL (else the URL), at its line when known
        physical: dict[str, Any] = {"artifactLocation": {"uri": sitemap or url or ""}}
        line = int_or_none(record.get("line"))
        if line is not None and line >= 1:
            physical["region"] = {"startLine": line}
        result: dict[str, Any] = {
            "ruleId": code,
            "ruleIndex": index,
            "level": _LEVEL[sev],
            "message": {"text": _message(record, code, url, sitemap)},
            "locations": [{"physicalLocation": physical}],
            # Stable across runs, so code-scanning UIs match a finding with last night's.
            "partialFingerprints": {
                "sitemapAudit/v1": hashlib.sha256(
                    f"{code}\0{url}\0{sitemap}".encode("utf-8", "surrogatepass")
                ).hexdigest()
            },
        }
        if url:
            result["properties"] = {"url": url}
        self._results.add(result)

    def _rule(self, code: str, severity: str) -> dict[str, Any]:
        text = code_summary(code) or code
        about = "; ".join(filter(None, (f"severity: {severity}", search_console_label(code))))
        return {
            "id": code,
            "name": "".join(map(str.capitalize, code.split("-"))),
            "shortDescription": {"text": text},
            "fullDescription": {"text": f"{text} ({about})"},
            "help": {"text": f"{code}: {text}. How to fix: {fix_of(code)} See {doc_anchor(code)}."},
            "defaultConfiguration": {"level": _LEVEL.get(severity, "warning")},
            "properties": {"searchConsole": search_console(code)},
        }

    @closes_once
    def close(self) -> None:
        try:
            self._assemble()
        finally:
            self._results.discard()

    def _assemble(self) -> None:
        out = self._stream
        summary = self._agg.summary_dict()
        rules = [self._rule(code, sev) for code, (_, sev) in self._rules.items()]
        driver = {"name": "sitemap-audit", "version": __version__, "rules": rules}
        # the run's invocation: not successful, with a notification saying how far it got,
        # when the run did not finish or audited nothing
        v = verdict(summary, self._fail_on)
        invocation: dict[str, Any] = {
            "executionSuccessful": True,
            "properties": {
                "failOn": self._fail_on,
                "failed": fails(summary, self._fail_on),
                "verdict": v.word,
            },
        }
        if v.run_error:
            invocation["executionSuccessful"] = False
            invocation["toolExecutionNotifications"] = [
                {"level": "error", "message": {"text": v.line}}
            ]
        out.write("{\n")
        out.write(f'  "$schema": {_dumps(SARIF_SCHEMA)},\n  "version": "2.1.0",\n')
        out.write('  "runs": [\n    {\n')
        out.write(f'      "tool": {{"driver": {_dumps(driver)}}},\n')
        out.write(f'      "invocations": [{_dumps(invocation)}],\n')
        out.write(f'      "properties": {{"summary": {_dumps(summary)}}},\n')
        out.write('      "results": ')
        self._results.copy_to(out)
        out.write("\n    }\n  ]\n}\n")
        out.flush()
