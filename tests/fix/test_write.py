"""Writing a `fix` plan (audit/fix/write.py): the same bytes for an unchanged night, gzip
shards beside a plain index, and an earlier run's own files replaced while others stay."""

from __future__ import annotations

import gzip
from pathlib import Path

from tests.fix.test_plan import (
    B,
    fix,
    fixes,
    report,
    summary,
    url,
)


def test_an_unchanged_night_writes_the_same_bytes(tmp_path: Path) -> None:
    paths = [f"/shop/item-{i}" for i in range(25)] + ["/", "/about"]
    src = report(tmp_path, *(url(p, lastmod="2024-01-01") for p in paths), summary())
    a, b = tmp_path / "a", tmp_path / "b"
    assert fix(src, a, "--gzip", "--shard-size", "10") == 0
    assert fix(src, b, "--gzip", "--shard-size", "10") == 0
    names = sorted(p.name for p in a.iterdir() if p.name.startswith("sitemap"))
    assert names == sorted(p.name for p in b.iterdir() if p.name.startswith("sitemap"))
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_gzip_shards_and_a_plain_index(tmp_path: Path) -> None:
    src = report(tmp_path, url("/a", lastmod="2024-01-01"), url("/en/b"), summary())
    plain, gz = tmp_path / "plain", tmp_path / "gz"
    assert fix(src, plain) == 0
    assert fix(src, gz, "--gzip") == 0
    assert sorted(p.name for p in gz.glob("sitemap*")) == [
        "sitemap-en.xml.gz",
        "sitemap-root.xml.gz",
        "sitemap_index.xml",
    ]
    for name in ("sitemap-en.xml", "sitemap-root.xml"):
        assert gzip.decompress((gz / f"{name}.gz").read_bytes()) == (plain / name).read_bytes()
    index = (gz / "sitemap_index.xml").read_text(encoding="utf-8")
    assert f"<loc>{B}/sitemap-root.xml.gz</loc>" in index
    assert fixes(gz)[f"{B}/a"]["shard"] == "sitemap-root.xml.gz"
    # a plain run after a gzip one removes the earlier .gz shards, leaves other files
    (gz / "robots.txt").write_text("keep me", encoding="utf-8")
    assert fix(src, gz) == 0
    assert sorted(p.name for p in gz.iterdir()) == [
        "fix-report.jsonl",
        "fix-report.md",
        "robots.txt",
        "sitemap-en.xml",
        "sitemap-root.xml",
        "sitemap_index.xml",
    ]
