"""The json report (audit/report/json_.py): one document with every section."""

from __future__ import annotations

import json

from tests.report.reportkit import (
    ERRORS,
    INDEX,
    INFOS,
    OLD,
    PAGES,
    POSTS,
    WARNINGS,
    run,
    stream,
)


def test_json_is_one_document_with_every_section() -> None:
    recs = stream()
    doc = json.loads(run("json", recs))
    assert list(doc)[:5] == ["summary", "hosts", "sitemaps", "findings", "urls"]
    assert doc["summary"] == recs[-1]
    assert [u["url"] for u in doc["urls"]] == [r["url"] for r in recs if r["type"] == "url"]
    assert len(doc["findings"]) == ERRORS + WARNINGS + INFOS
    assert [s["url"] for s in doc["sitemaps"]] == [INDEX, OLD, PAGES, POSTS]
    assert doc["other"] == [{"type": "progress-note", "text": "an unknown record type"}]
    assert doc["hosts"][0]["host"] == "ex.com"


def test_spool_writes_one_element_a_line_at_its_separators_indent() -> None:
    """The json report's lists and the sarif report's results (a deeper separator) come
    out of the same spool: each element on its own line at the indent its separator
    gives, the closing bracket two spaces less; an empty one is []."""
    from io import StringIO

    from audit.report.json_ import Spool

    for separator, indent in ((",\n    ", "    "), (",\n        ", "        ")):
        spool, out = Spool(separator), StringIO()
        spool.add({"a": 1})
        spool.add({"b": "é"})
        spool.copy_to(out)
        spool.discard()
        assert out.getvalue() == (f'[\n{indent}{{"a": 1}},\n{indent}{{"b": "é"}}\n{indent[:-2]}]')
        empty, out = Spool(separator), StringIO()
        empty.copy_to(out)
        empty.discard()
        assert out.getvalue() == "[]"
