"""`diff` never lies about a partial side: a report whose run did not finish (a summary
with "interrupted" or "partial", no summary at all, a state whose run is not complete)
is not compared: one line names it and the exit status is 2, whichever side it is."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.state.diff import DiffPartial, diff_reports
from audit.state.store import StateStore, fingerprint
from tests.crawlkit import HeldSite, Serve

B = "https://www.example.com"
N = 40


def url(i: int) -> dict[str, Any]:
    return {"type": "url", "url": f"{B}/p/{i}", "sitemap": f"{B}/sitemap.xml", "status": 404}


def nf(i: int) -> dict[str, Any]:
    return {
        "type": "finding",
        "code": "url-not-found",
        "severity": "error",
        "url": f"{B}/p/{i}",
        "sitemap": f"{B}/sitemap.xml",
        "message": "404",
    }


def summary(urls: int, **extra: Any) -> dict[str, Any]:
    return {
        "type": "summary",
        "sitemaps": 1,
        "urls": urls,
        "findings": {"error": urls},
        "by_code": {"url-not-found": urls},
        **extra,
    }


def report(path: Path, urls: int, last: dict[str, Any] | None) -> Path:
    """A report of `urls` URLs (each a 404 finding) and the given summary (None: none)."""
    records: list[dict[str, Any]] = [{"type": "sitemap", "url": f"{B}/sitemap.xml"}]
    for i in range(urls):
        records += [url(i), nf(i)]
    if last is not None:
        records.append(last)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


PARTIAL_SUMMARIES = {
    "interrupted": summary(5, interrupted=True, stopped_by="SIGINT"),
    "partial": summary(5, partial=True, stopped_by="max-duration"),
    "no-summary": None,  # the process was killed
}


def assert_refused(capsys: pytest.CaptureFixture[str], partial: Path, other: Path) -> None:
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1, captured.err
    assert str(partial) in lines[0] and "partial" in lines[0], lines[0]
    assert str(other) not in lines[0]
    assert "url-not-found" not in captured.out and "fixed" not in captured.out
    assert "new finding" not in captured.out


@pytest.mark.parametrize("kind", sorted(PARTIAL_SUMMARIES))
def test_a_partial_side_is_refused_both_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    full = report(tmp_path / "full.jsonl", N, summary(N))
    partial = report(tmp_path / "partial.jsonl", 5, PARTIAL_SUMMARIES[kind])
    # as new: the URLs it never reached would be "fixed" (exit 0)
    assert main(["diff", str(full), str(partial)]) == 2
    assert_refused(capsys, partial, full)
    # as old: every finding after them would be "new" (exit 1)
    out = tmp_path / "diff.txt"
    assert main(["diff", str(partial), str(full), "--output", str(out)]) == 2
    assert_refused(capsys, partial, full)
    assert not out.exists()  # nothing is written, not even an empty file


def test_both_sides_partial_are_named_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = report(tmp_path / "a.jsonl", 5, None)
    b = report(tmp_path / "b.jsonl", 7, summary(7, interrupted=True))
    assert main(["diff", str(a), str(b), "--format", "jsonl"]) == 2
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(a) in lines[0] and str(b) in lines[0], captured.err
    assert captured.out == ""


def test_the_library_refuses_too_and_writes_nothing(tmp_path: Path) -> None:
    full = report(tmp_path / "full.jsonl", N, summary(N))
    partial = report(tmp_path / "partial.jsonl", 5, None)
    out = io.StringIO()
    with pytest.raises(DiffPartial, match=r"partial\.jsonl: no summary record"):
        diff_reports(partial, full, out, fmt="jsonl")
    assert out.getvalue() == ""


def state(path: Path, urls: int, *, complete: bool) -> Path:
    st = StateStore.open(path, fingerprint=fingerprint("crawl", [B], {}), targets=[B])
    for i in range(urls):
        st.put_url(url(i)["url"], f"{B}/sitemap.xml", None, None, None, url(i), [nf(i)])
    st.close(complete=complete)
    return path


def test_a_state_whose_run_did_not_complete_is_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = report(tmp_path / "full.jsonl", N, summary(N))
    running = state(tmp_path / "running.sqlite", 5, complete=False)
    assert main(["diff", str(running), str(full)]) == 2
    assert_refused(capsys, running, full)
    assert main(["diff", str(full), str(running)]) == 2
    assert_refused(capsys, running, full)
    # a complete state compares as before
    done = state(tmp_path / "done.sqlite", N, complete=True)
    assert main(["diff", str(done), str(full)]) == 0
    assert "OK: no new finding" in capsys.readouterr().out


async def test_the_report_of_a_killed_crawl_is_partial(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real runs: a complete crawl, and one SIGKILLed half-way (its report has what it
    checked, and no summary)."""
    site = await HeldSite(N).serve(serve)
    base, gate, held = site.base, site.gate, site.held
    argv = ["crawl", base + "/sitemap.xml", "--format", "jsonl", "--no-progress"]
    argv += ["--rate", "1000", "--concurrency", "1"]
    full, killed = tmp_path / "full.jsonl", tmp_path / "killed.jsonl"
    gate.set()
    assert await asyncio.to_thread(main, [*argv, "--output", str(full)]) == 1
    gate.clear()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "audit", *argv, "--output", str(killed)
    )
    try:
        await held.wait()
        proc.send_signal(signal.SIGKILL)
        assert await proc.wait() == -signal.SIGKILL
    finally:
        gate.set()
    capsys.readouterr()
    assert main(["diff", str(killed), str(full)]) == 2
    assert_refused(capsys, killed, full)
    assert main(["diff", str(full), str(killed)]) == 2
    assert_refused(capsys, killed, full)


def test_a_refused_diff_leaves_the_output_file_as_it_was(tmp_path: Path) -> None:
    """--output names where the last good diff is: a refused one must not empty it, and
    must not create a file that was not there."""
    full = report(tmp_path / "full.jsonl", N, summary(N))
    partial = report(tmp_path / "partial.jsonl", 5, None)
    kept = tmp_path / "kept.txt"
    assert main(["diff", str(full), str(full), "--output", str(kept)]) == 0
    earlier = kept.read_text()
    assert "OK: no new finding" in earlier
    assert main(["diff", str(full), str(partial), "--output", str(kept)]) == 2
    assert kept.read_text() == earlier
    absent = tmp_path / "absent.txt"
    assert main(["diff", str(partial), str(full), "--output", str(absent)]) == 2
    assert not absent.exists()
    # and no temporary file is left beside them
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full.jsonl", "kept.txt", "partial.jsonl"]
