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
