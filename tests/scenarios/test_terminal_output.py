"""Issue 22.4: nothing raw on a terminal. `diff` (text, markdown), `discover` and
`inspect --urls` print values that came from servers: ESC, BEL, NUL, C1 controls and
bidi overrides (RLO) in them must never reach the terminal raw."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from tests.crawlkit import TEXT, XML, Site, urlset

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202etxt.exe\x00\x85"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
B = "https://www.example.com"


def _url(path: str, status: int = 200) -> dict[str, Any]:
    return {"type": "url", "url": B + path, "sitemap": B + "/sitemap.xml", "line": 3,
            "status": status, "final_url": B + path, "redirects": [], "lastmod": None,
            "last_modified": None, "robots": "allowed", "elapsed_ms": 1.0, "error": None}  # fmt: skip


def _report(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> str:
    summary = {"type": "summary", "sitemaps": 1, "urls": len(records), "findings": {}}
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records, summary]), "utf-8")
    return str(path)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_diff_escapes_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    old = _report(tmp_path, "old.jsonl", [_url("/a"), _url(f"/gone{HOSTILE}")])
    finding = {"type": "finding", "code": "url-not-found", "severity": "error",
               "url": B + f"/b{HOSTILE}", "sitemap": B + "/sitemap.xml", "line": 4,
               "message": f"answers 404 {HOSTILE}"}  # fmt: skip
    new = _report(tmp_path, "new.jsonl", [_url("/a", 500), _url(f"/b{HOSTILE}", 404), finding])
    main(["diff", old, new, "--format", fmt])
    out = capsys.readouterr().out
    assert "/b" in out and "/gone" in out and "answers 404" in out
    assert RAW.findall(out) == []


async def test_discover_escapes_sitemap_lines(
    serve: Callable[[Site], Awaitable[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    site = Site()
    base = await serve(site)
    line = f"{base}/map{HOSTILE.replace(chr(0), '')}.xml"
    site.routes = {
        "/robots.txt": (200, TEXT, f"User-agent: *\nAllow: /\nSitemap: {line}\n"),
        "/sitemap.xml": (200, XML, urlset(f"{base}/a")),
    }
    capsys.readouterr()
    # main() runs its own event loop: run it in a thread of its own
    import asyncio

    await asyncio.to_thread(main, ["discover", base + "/"])
    out, err = capsys.readouterr()
    assert "/map" in out + err
    assert RAW.findall(out) == [] and RAW.findall(err) == []


def test_inspect_urls_percent_encodes_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = urlset(f"{B}/a\u202etxt.exe", f"{B}/b&#x9b;31m&#x85;x", f"{B}/c")
    path = tmp_path / "sitemap.xml"
    path.write_text(doc, "utf-8")
    main(["inspect", "--urls", str(path)])
    out = capsys.readouterr().out
    assert RAW.findall(out) == []
    assert out.splitlines() == [f"{B}/a%E2%80%AEtxt.exe", f"{B}/b%C2%9B31m%C2%85x", f"{B}/c"]
