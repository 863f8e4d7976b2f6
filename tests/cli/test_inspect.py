"""`sitemap-audit inspect` (audit/cli/inspect.py): counts, sizes, lastmod months and the URLs
of a sitemap; 17.5: it lists an index's children that answer 404 or fail, with their status,
and exits 1; every command piped into a closed reader exits quietly (a real pipe)."""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from audit.cli.main import main
from tests.cli.clikit import run_cli, write
from tests.crawlkit import XML, Serve, Site, index, urlset


async def test_inspect_lists_failed_children(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/index.xml": (200, XML, index(f"{base}/ok.xml", f"{base}/gone.xml", f"{base}/boom.xml")),
        "/ok.xml": (200, XML, urlset(f"{base}/a")),
        "/boom.xml": (500, XML, "oops"),
    }
    text_out, json_out = tmp_path / "i.txt", tmp_path / "i.json"
    common = ["inspect", f"{base}/index.xml", "--retries", "0"]
    rc = await asyncio.to_thread(main, [*common, "--output", str(text_out)])
    assert rc == 1
    text = text_out.read_text()
    assert f"{base}/gone.xml  (HTTP 404)" in text and f"{base}/boom.xml  (HTTP 500)" in text
    assert "failed: HTTP 404" in text
    rc = await asyncio.to_thread(main, [*common, "--format", "json", "--output", str(json_out)])
    assert rc == 1
    stats = {s["url"]: s for s in json.loads(json_out.read_text())}
    assert stats[f"{base}/gone.xml"]["status"] == 404 and stats[f"{base}/gone.xml"]["error"]
    assert stats[f"{base}/ok.xml"]["error"] is None and stats[f"{base}/ok.xml"]["entries"] == 1
    site.routes.pop("/boom.xml")
    site.routes.pop("/gone.xml", None)
    site.routes["/index.xml"] = (200, XML, index(f"{base}/ok.xml"))
    assert await asyncio.to_thread(main, [*common, "--output", str(text_out)]) == 0


def _big_sitemap(tmp_path: Path) -> Path:
    locs = "".join(f"<url><loc>https://www.example.com/p{i}</loc></url>\n" for i in range(40000))
    path = tmp_path / "big.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + locs
        + "</urlset>\n"
    )
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "{path}", "--urls"],
        ["validate", "{path}", "--format", "jsonl"],
        ["validate", "{path}", "--format", "csv"],
    ],
)
def test_a_closed_reader_ends_quietly(tmp_path: Path, argv: list[str]) -> None:
    path = _big_sitemap(tmp_path)
    args = [a.replace("{path}", str(path)) for a in argv]
    with subprocess.Popen(
        [sys.executable, "-m", "audit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as writer:
        assert writer.stdout is not None and writer.stderr is not None
        first = writer.stdout.readline()  # `| head -1`: one line, then the reader goes away
        writer.stdout.close()
        err = writer.stderr.read().decode()
        rc = writer.wait(timeout=50)
    assert first.strip()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert rc == 0


def test_inspect_counts_and_urls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = urlset(
        "https://www.example.com/a",
        "https://www.example.com/b",
        extra="<lastmod>2024-05-01</lastmod>",
    ).replace(
        "</urlset>",
        "<url><loc>https://www.example.com/c</loc><lastmod>2024-07-09</lastmod></url></urlset>",
    )
    path = write(tmp_path, "s.xml.gz", gzip.compress(body.encode()))
    rc, out, _ = run_cli(capsys, "inspect", path, "--format", "json")
    assert rc == 0
    (stats,) = json.loads(out)
    assert stats["entries"] == 3 and stats["gzip"] is True and stats["kind"] == "urlset"
    assert stats["lastmod_by_month"] == {"2024-05": 2, "2024-07": 1}
    assert stats["bytes"] == len(body.encode())
    rc, out, _ = run_cli(capsys, "inspect", path, "--urls")
    assert out.split() == [
        "https://www.example.com/a",
        "https://www.example.com/b",
        "https://www.example.com/c",
    ]
    rc, out, _ = run_cli(capsys, "inspect", path)
    assert "3 entries" in out and "2024-07" in out
