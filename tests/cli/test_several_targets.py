"""17.7 (CLI) and 17.12: exit 2 when no sitemap is found, the report format from --output's
extension, several targets (arguments, --targets-file, config `targets`) into one report
with --max-urls counted over the whole run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset


async def _two_sites(serve: Serve) -> tuple[list[Site], list[str]]:
    sites, bases = [], []
    for _ in range(2):
        site = Site()
        base = await serve(site)
        site.routes = {
            "/robots.txt": (200, TEXT, f"Sitemap: {base}/sitemap.xml\n"),
            "/sitemap.xml": (200, XML, urlset(f"{base}/one", f"{base}/two")),
            "/one": (200, HTML, "ok"),
            "/two": (200, HTML, "ok"),
        }
        sites.append(site)
        bases.append(base)
    return sites, bases


async def _crawl(tmp_path: Path, *argv: str) -> tuple[int, list[dict[str, object]]]:
    out = tmp_path / "r.jsonl"
    args = ["crawl", *argv, "--format", "jsonl", "--output", str(out), "--no-progress"]
    rc = await asyncio.to_thread(main, args)
    return rc, [json.loads(line) for line in out.read_text().splitlines()]


def _urls(records: list[dict[str, object]]) -> set[object]:
    return {r["url"] for r in records if r["type"] == "url"}


@pytest.mark.slow
async def test_several_targets_one_report(serve: Serve, tmp_path: Path) -> None:
    sites, bases = await _two_sites(serve)
    every = {f"{b}/{p}" for b in bases for p in ("one", "two")}
    rc, records = await _crawl(tmp_path, f"{bases[0]}/", f"{bases[1]}/")
    assert rc == 0 and _urls(records) == every
    assert [r["type"] for r in records].count("summary") == 1
    # --targets-file: one a line, # comments
    listing = tmp_path / "targets.txt"
    listing.write_text(f"# nightly\n{bases[0]}/sitemap.xml  # shop\n\n{bases[1]}/\n")
    rc, records = await _crawl(tmp_path, "--targets-file", str(listing))
    assert rc == 0 and _urls(records) == every
    # --max-urls counts over the run, not per target
    rc, records = await _crawl(tmp_path, f"{bases[0]}/", f"{bases[1]}/", "--max-urls", "3")
    assert len(_urls(records)) == 3
    summary = records[-1]
    assert summary["type"] == "summary" and summary["max_urls_reached"]
    # config targets behave the same
    config = tmp_path / "audit.toml"
    config.write_text(f'targets = ["{bases[0]}/", "{bases[1]}/"]\nmax-urls = 3\n')
    rc, records = await _crawl(tmp_path, "--config", str(config))
    assert len(_urls(records)) == 3 and records[-1]["max_urls_reached"]
    # what the servers saw: 3 URLs requested in all, each at most once per method
    pages = [h.path for s in sites for h in s.hits if h.path in ("/one", "/two")]
    assert len(pages) == 4 + 4 + 3 + 3  # HEADs of the two full runs, then of the capped ones


async def test_no_sitemap_found_exits_2(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {"/robots.txt": (200, TEXT, "User-agent: *\nDisallow:\n"), "/": (200, HTML, "")}
    out = tmp_path / "r.txt"
    rc = await asyncio.to_thread(main, ["crawl", f"{base}/", "--output", str(out)])
    assert rc == 2  # nothing was audited
    err = capsys.readouterr().err
    assert f"{base}/: no sitemap found: nothing was audited" in err
    assert "PASS" not in out.read_text()
    assert "/robots.txt" in site.paths()  # it did look


def test_empty_targets_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from audit.cli.crawl import read_targets_file

    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    assert main(["crawl", "--targets-file", str(empty)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no target in it" in err
    with pytest.raises(Exception, match="cannot read"):
        read_targets_file(str(tmp_path / "absent.txt"))


@pytest.mark.parametrize(
    ("name", "marker"),
    [
        ("report.html", "<html"),
        ("report.md", "# "),
        ("report.json", '"summary"'),
        ("report.jsonl", '"type": "summary"'),
        ("report.csv", ","),
        ("report.xml", "<testsuite"),
        ("report.sarif", '"$schema"'),
    ],
)
def test_output_extension_names_the_format(tmp_path: Path, name: str, marker: str) -> None:
    sitemap = tmp_path / "s.xml"
    sitemap.write_text(urlset("https://www.example.com/a"))
    out = tmp_path / name
    assert main(["validate", str(sitemap), "--output", str(out), "--no-progress"]) in (0, 1)
    text = out.read_text()
    assert marker in text.replace('":"', '": "')
    assert not text.startswith("sitemap-audit report")  # never text silently


def test_unknown_output_extension_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sitemap = tmp_path / "s.xml"
    sitemap.write_text(urlset("https://www.example.com/a"))
    out = tmp_path / "report.pdf"
    assert main(["validate", str(sitemap), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--format" in err and ".pdf" in err
    assert not out.exists()
    # --format given: the extension does not matter
    assert main(["validate", str(sitemap), "--output", str(out), "--format", "text"]) == 0
