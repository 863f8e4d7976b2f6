"""Help, docs and reports a user can read (issue 33.6): discover and inspect list only the
options that do something there, every option has help, --changed-only's help is the
README's, docs/ holds user documentation only, the url-empty-shell message reads right,
the HTML report hides its filter radios, says its run notes in words and does not colour
old pages as errors, and the fixture server starts without a RuntimeWarning."""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from pathlib import Path

from audit.cli.main import build_parser
from tests.crawlkit import HTML, XML, Serve, Site, audit, urlset

ROOT = Path(__file__).resolve().parents[2]


def _help(*argv: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "audit", *argv, "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return out.stdout


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_discover_and_inspect_list_only_options_that_do_something_there() -> None:
    discover, inspect = _help("discover"), _help("inspect")
    # discover reads robots.txt, the common paths and the home page: no URL is checked,
    # no sitemap read, no local file, no rewriting
    for flag in ("--fetch-workers", "--agents", "--robots-agent", "--rewrite",
                 "--include-sitemap", "--exclude-sitemap", "--base-url", "--online"):  # fmt: skip
        assert flag not in discover, flag
    for flag in ("--rate", "--timeout", "--retries", "--user-agent", "--header", "--auth"):
        assert flag in discover, flag
    # inspect reads sitemaps (an index's children, local files) but checks no listed URL
    for flag in ("--fetch-workers", "--agents"):
        assert flag not in inspect, flag
    for flag in ("--base-url", "--online", "--include-sitemap", "--rewrite", "--robots-agent"):
        assert flag in inspect, flag
    # what is not listed is refused, not silently ignored
    refused = subprocess.run(
        [sys.executable, "-m", "audit", "discover", "http://127.0.0.1:9/", "--agents", "ai"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "unrecognized arguments: --agents" in refused.stderr


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{name} {action.option_strings[0]}"
        for name, sub in _subparsers().items()
        for action in sub._actions
        if action.option_strings and not (action.help or "").strip()
    ]
    assert missing == []


def test_changed_only_help_is_the_readmes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| `--changed-only` |")]
    cell = row.split(" | ")[1].replace("`", "")
    crawl = _subparsers()["crawl"]
    (action,) = [a for a in crawl._actions if "--changed-only" in a.option_strings]
    assert action.help == cell
    assert "error or warning" in cell  # what it does (tests/features/test_incremental.py)


def test_docs_holds_user_documentation_only() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "docs").rglob("*")):
        if path.is_dir():
            continue
        rel = path.relative_to(ROOT).as_posix()
        # every document there is one the README sends users to
        assert rel in readme or path.parent.relative_to(ROOT).as_posix() in readme, rel
        if path.suffix in (".md", ".toml", ".yml", ".service", ".timer", ""):
            text = path.read_text(encoding="utf-8")
            assert "/work/" not in text and "contributor" not in text.lower(), rel
    assert (ROOT / "dev" / "HELPERS.md").is_file() and "dev/HELPERS.md" in readme


async def test_url_empty_shell_message_reads_right(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    empty = '<html><head><script src="/app.js"></script></head><body><div id="root"></div></body></html>'
    short = (
        "<html><head><script src='/a.js'></script><script src='/b.js'></script></head>"
        "<body><p>Loading</p></body></html>"
    )
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, urlset(base + "/empty", base + "/short")),
        "/empty": (200, HTML, empty),
        "/short": (200, HTML, short),
    }
    run = await audit(f"{base}/sitemap.xml", page_checks=True)
    messages = {f["url"][len(base) :]: f["message"] for f in run.findings("url-empty-shell")}
    assert messages["/empty"].startswith(
        "the page's <body> holds no visible text while it loads 1 script: crawlers"
    )
    assert messages["/short"].startswith(
        "the page's <body> holds only 7 characters of visible text (under 200) while it "
        "loads 2 scripts: crawlers"
    )
    assert not any("script(s)" in m or "no text of" in m for m in messages.values())


def _report(tmp_path: Path, summary_extra: dict[str, object]) -> str:
    records = [
        {"type": "sitemap", "url": "https://e.test/sitemap.xml", "parent": None,
         "kind": "urlset", "status": 200, "entries": 2, "bytes": 300, "gzip": False},
        {"type": "url", "url": "https://e.test/old", "sitemap": "https://e.test/sitemap.xml",
         "status": 200, "final_url": "https://e.test/old", "redirects": [],
         "lastmod": "2015-01-01", "robots": "allowed", "indexable": True,
         "indexability": None},
        {"type": "url", "url": "https://e.test/gone", "sitemap": "https://e.test/sitemap.xml",
         "status": 404, "final_url": "https://e.test/gone", "redirects": [],
         "lastmod": "2015-01-01", "robots": "allowed", "indexable": False,
         "indexability": "status"},
        {"type": "summary", "sitemaps": 1, "urls": 2, "entries": 2,
         "findings": {"error": 0, "warning": 0, "info": 0}, "by_code": {}, "duration_s": 1.0,
         **summary_extra},
    ]  # fmt: skip
    src = tmp_path / "r.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "r.html"
    subprocess.run(
        [sys.executable, "-m", "audit", "report", str(src), "--output", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return out.read_text(encoding="utf-8")


def test_html_report_reads_as_words_and_colours(tmp_path: Path) -> None:
    page = _report(
        tmp_path, {"carried": 12, "skipped_unchanged": 3, "ignored": ["url-slow", "url-redirect"]}
    )
    # the indexability filter's radios are hidden (its labels are the buttons)
    section = re.search(r'<section class="panel" id="indexability">(.*?)</section>', page, re.S)
    assert section is not None
    radios = re.findall(r"<input[^>]*>", section.group(1))
    assert radios and all('name="ix"' in r for r in radios)
    assert section.group(1).startswith("<h2>Indexability</h2><input")  # children of it
    css = " ".join(re.findall(r"<style[^>]*>(.*?)</style>", page, re.S))
    rule = re.search(r"#indexability>input\[name=ix\]\{([^}]*)\}", css)
    assert rule is not None and "opacity:0" in rule.group(1)
    # run notes in words: what "carried" means, and no raw JSON
    notes = re.search(r'<section class="panel" id="notes">(.*?)</section>', page, re.S)
    assert notes is not None
    text = html.unescape(re.sub(r"<[^>]+>", " | ", notes.group(1)))
    assert "URLs carried forward (--state): they answered 304 Not Modified" in text
    assert "| 12 |" in text and "url-slow, url-redirect" in text
    assert not re.search(r"[{}\[\]\"]", text), text
    # old pages are not coloured as errors or warnings
    chart = re.search(r'id="chart-lastmod">(.*?)</section>', page, re.S)
    assert chart is not None
    fills = dict(
        re.findall(r"<title>([^<:]+):[^<]*</title><rect[^>]*fill=\"(#\w+)\"", chart.group(1))
    )
    assert fills["older"] not in ("#cf222e", "#bf8700", "#e16f24")
    assert {fills[k] for k in ("&lt; 1 year", "&lt; 2 years", "older")}.isdisjoint(
        {"#cf222e", "#bf8700", "#e16f24"}
    )


def test_the_fixture_server_starts_without_a_runtime_warning() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-W", "default", "-m", "audit.fixtures.server", "fixtures/demo"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("http://127.0.0.1:")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "RuntimeWarning" not in err, err
