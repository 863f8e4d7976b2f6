"""17.6: validating a local file or index sends no request (a loopback server that must
see none); with --base-url the siblings are read from disk and a missing one is a finding;
--online lets a local index fetch what is not on disk."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from audit.cli.main import main
from tests.crawlkit import TEXT, XML, Serve, Site, index, urlset


async def _validate(*argv: str) -> tuple[int, list[dict[str, object]]]:
    out = Path(argv[0]).parent / "report.jsonl"
    args = ["validate", *argv, "--format", "jsonl", "--output", str(out), "--no-progress"]
    rc = await asyncio.to_thread(main, args)
    return rc, [json.loads(line) for line in out.read_text().splitlines()]


async def _site(serve: Serve) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, f"Sitemap: {base}/sitemap_index.xml\n"),
        "/present.xml": (200, XML, urlset(f"{base}/a")),
        "/missing.xml": (200, XML, urlset(f"{base}/b")),
    }
    return site, base


def _write_index(tmp_path: Path, base: str) -> Path:
    (tmp_path / "present.xml").write_text(urlset(f"{base}/a", f"{base}/c"))
    path = tmp_path / "sitemap_index.xml"
    path.write_text(index(f"{base}/present.xml", f"{base}/missing.xml"))
    return path


async def test_local_index_with_base_url_reads_siblings_from_disk(
    serve: Serve, tmp_path: Path
) -> None:
    site, base = await _site(serve)
    path = _write_index(tmp_path, base)
    rc, records = await _validate(str(path), "--base-url", f"{base}/sitemap_index.xml")
    assert site.hits == []  # not robots.txt, not a child, nothing
    sitemaps = {r["url"]: r for r in records if r["type"] == "sitemap"}
    assert sitemaps[f"{base}/present.xml"]["entries"] == 2  # the file on disk, not the server's
    (missing,) = [r for r in records if r["type"] == "finding" and r["code"] == "sitemap-not-found"]
    assert missing["url"] == f"{base}/missing.xml"
    assert str(tmp_path / "missing.xml") in str(missing["message"])
    assert rc == 1


async def test_local_index_without_base_url_fetches_nothing(serve: Serve, tmp_path: Path) -> None:
    site, base = await _site(serve)
    path = _write_index(tmp_path, base)
    rc, records = await _validate(str(path))
    assert site.hits == []
    assert [r["url"] for r in records if r["type"] == "sitemap"] == [str(path)]
    summary = records[-1]
    assert summary["type"] == "summary" and summary["children_not_fetched"] == 2
    assert rc == 0


async def test_online_fetches_what_is_not_on_disk(serve: Serve, tmp_path: Path) -> None:
    site, base = await _site(serve)
    path = _write_index(tmp_path, base)
    rc, records = await _validate(str(path), "--base-url", f"{base}/sitemap_index.xml", "--online")
    assert "/missing.xml" in site.paths() and "/present.xml" not in site.paths()
    assert not [r for r in records if r.get("code") == "sitemap-not-found"]
    assert rc == 0
