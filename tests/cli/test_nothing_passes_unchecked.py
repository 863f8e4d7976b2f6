"""Nothing passes without being checked (issue 33.4), as real processes: a zero-byte sitemap
is an error (a generator that crashed fails a pre-deploy check), on disk and over loopback
HTTP; a local index without --base-url says which children were not read and why, and
`inspect --urls` on it is not a silent, empty exit 0."""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
from pathlib import Path

from tests.crawlkit import XML, Serve, Site, index, urlset


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "audit", *argv],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_zero_byte_sitemap_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml").write_bytes(b"")
    (tmp_path / "blank.xml").write_bytes(b"\n  \n")
    (tmp_path / "empty.xml.gz").write_bytes(gzip.compress(b""))
    for name in ("sitemap.xml", "blank.xml", "empty.xml.gz"):
        out = _cli("validate", name, "--format", "jsonl", cwd=tmp_path)
        assert out.returncode == 1, (name, out.stdout, out.stderr)
        records = [json.loads(line) for line in out.stdout.splitlines()]
        found = [r for r in records if r["type"] == "finding"]
        assert [f["code"] for f in found] == ["sitemap-xml-malformed"], name
        assert found[0]["severity"] == "error" and "empty" in found[0]["message"]
    text = _cli("validate", "sitemap.xml", cwd=tmp_path)
    assert text.returncode == 1 and "FAIL" in text.stdout
    assert "the document is empty (0 bytes)" in text.stdout


async def test_a_zero_byte_sitemap_over_http_is_an_error(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {"/robots.txt": (404, {}, ""), "/sitemap.xml": (200, XML, b"")}
    out = await asyncio.to_thread(
        _cli, "validate", f"{base}/sitemap.xml", "--format", "jsonl", cwd=tmp_path
    )
    assert out.returncode == 1, out.stderr
    codes = [json.loads(line).get("code") for line in out.stdout.splitlines()]
    assert "sitemap-xml-malformed" in codes and "sitemap-empty" not in codes


def _local_index(tmp_path: Path) -> Path:
    (tmp_path / "a.xml").write_text(urlset("https://www.example.com/x"))
    path = tmp_path / "index.xml"
    path.write_text(index("https://www.example.com/a.xml", "https://www.example.com/b.xml"))
    return path


def test_a_local_index_without_base_url_says_which_children_were_not_read(
    tmp_path: Path,
) -> None:
    _local_index(tmp_path)
    out = _cli("validate", "index.xml", cwd=tmp_path)
    assert "not read: 2 sitemaps the index on disk lists" in out.stdout
    assert "https://www.example.com/a.xml, https://www.example.com/b.xml" in out.stdout
    assert "--base-url" in out.stdout and "--online" in out.stdout
    jsonl = _cli("validate", "index.xml", "--format", "jsonl", cwd=tmp_path)
    summary = json.loads(jsonl.stdout.splitlines()[-1])
    assert summary["children_not_fetched"] == 2
    assert summary["children_not_read"] == [
        "https://www.example.com/a.xml",
        "https://www.example.com/b.xml",
    ]


def test_inspect_urls_of_a_local_index_is_not_a_silent_exit_0(tmp_path: Path) -> None:
    _local_index(tmp_path)
    out = _cli("inspect", "index.xml", "--urls", cwd=tmp_path)
    assert out.stdout == ""  # stdout stays URLs only
    assert out.returncode == 1
    (line,) = out.stderr.splitlines()
    assert "not read: 2 sitemaps" in line and "--base-url" in line
    # with --base-url the sibling on disk is read and its URLs printed; the missing one
    # is the failure
    given = _cli(
        "inspect", "index.xml", "--urls", "--base-url", "https://www.example.com/index.xml",
        cwd=tmp_path,
    )  # fmt: skip
    assert given.stdout.splitlines() == ["https://www.example.com/x"]
    assert given.returncode == 1 and "b.xml" in given.stderr
