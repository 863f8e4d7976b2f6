"""The run's one sink (audit/pipeline/recorder.py): every record passes through to every
writer, counted for the summary; --ignore drops codes once, for writers and counts alike;
secrets are redacted on the way out; the roll-up and the hosts records close the stream."""

from __future__ import annotations

from typing import Any

from audit.core.records import SitemapRecord, UrlResult, finding
from audit.pipeline.recorder import Recorder

SM = "https://e.example/sitemap.xml"


def url(path: str, status: int = 200) -> UrlResult:
    return UrlResult(f"https://e.example{path}", SM, 3, status, f"https://e.example{path}",
                     (), None, None, "allowed", 5.0)  # fmt: skip


def test_records_reach_every_sink_and_the_summary_counts_them() -> None:
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    rec = Recorder([first.append])
    rec.add_sink(second.append)
    rec.sitemap(SitemapRecord(SM, None, "urlset", 200, 2, 100, False))
    rec.url(url("/a"))
    rec.url(url("/b", 404))
    rec.unlisted(url("/intent-only"))  # written, not counted among the listed URLs
    rec.findings([finding("url-not-found", "404", url="https://e.example/b", sitemap=SM),
                  finding("url-slow", "slow", url="https://e.example/a", sitemap=SM)])  # fmt: skip
    assert [r["type"] for r in first] == ["sitemap", "url", "url", "url", "finding", "finding"]
    assert second == first
    summary = rec.summary()
    assert (summary["sitemaps"], summary["urls"]) == (1, 2)
    assert summary["findings"] == {"error": 1, "warning": 1, "info": 0}
    assert summary["by_code"] == {"url-not-found": 1, "url-slow": 1}
    assert rec.worst_at_or_above("error") and not rec.worst_at_or_above("never")


def test_ignored_codes_are_neither_written_nor_counted_and_the_summary_says_so() -> None:
    out: list[dict[str, Any]] = []
    rec = Recorder([out.append])
    rec.ignore(["url-slow"])
    rec.finding(finding("url-slow", "slow", url="https://e.example/a"))
    rec.replay({"type": "finding", "code": "url-slow", "severity": "warning"})
    rec.replay({"type": "finding", "code": "url-not-found", "severity": "error"})
    rec.replay({"type": "url", "url": "https://e.example/a"})
    assert [r.get("code") for r in out] == ["url-not-found", None]
    summary = rec.summary()
    assert summary["by_code"] == {"url-not-found": 1} and summary["urls"] == 1
    assert summary["ignored"] == ["url-slow"]
    rec.ignore([])
    assert "ignored" not in rec.summary()


def test_secrets_never_reach_a_sink() -> None:
    out: list[dict[str, Any]] = []
    rec = Recorder([out.append])
    rec.redact(("s3cret-token",))
    late: list[dict[str, Any]] = []
    rec.add_sink(late.append)  # a sink added later is redacted too
    rec.finding(finding("url-redirect", "redirects to /login?token=s3cret-token",
                        url="https://e.example/a?t=s3cret-token"))  # fmt: skip
    for sink in (out, late):
        (record,) = sink
        assert "s3cret-token" not in repr(record)
        assert record["code"] == "url-redirect"


def test_the_roll_up_and_the_hosts_records_come_last() -> None:
    out: list[dict[str, Any]] = []
    rec = Recorder([out.append])
    rec.roll_up()
    rec.sitemap(SitemapRecord(SM, None, "urlset", 200, 1, 10, False))
    rec.emit({"type": "hosts", "hosts": []})  # held until the end
    rec.url(url("/a"))
    assert [r["type"] for r in out] == ["sitemap", "url"]
    rec.end_records()
    types = [r["type"] for r in out]
    assert types[-1] == "hosts" and "rollup" in types
    assert types.index("rollup") > types.index("url")
    rollup = next(r for r in out if r["type"] == "rollup")
    assert rollup["url"] == SM
