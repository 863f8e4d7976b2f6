"""The command line: exit codes, one-line errors, validate / inspect / discover / report."""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, index, urlset

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sitemaps"

GOOD = urlset(
    "https://www.example.com/a",
    "https://www.example.com/b",
    extra="<lastmod>2024-05-01T10:00:00+00:00</lastmod>",
)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, data: bytes | str) -> str:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(p)


def assert_one_line_error(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_validate_clean_file_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ok.xml", GOOD)
    code, out, err = run_cli(
        capsys, "validate", path, "--base-url", "https://www.example.com/sitemap.xml"
    )
    assert code == 0, out + err
    assert "Traceback" not in err


def test_validate_jsonl_records_and_fail_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = GOOD.replace(
        "<lastmod>2024-05-01T10:00:00+00:00</lastmod>", "<lastmod>2024-02-30</lastmod>", 1
    )
    path = write(tmp_path, "bad.xml", bad)
    code, out, _ = run_cli(capsys, "validate", path, "--format", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    findings = [r for r in records if r["type"] == "finding"]
    assert code == 1
    assert [(f["code"], f["line"]) for f in findings if f["code"] == "lastmod-invalid"] == [
        ("lastmod-invalid", 3)
    ]
    assert records[-1]["type"] == "summary" and records[-1]["findings"]["error"] >= 1
    sm = next(r for r in records if r["type"] == "sitemap")
    assert sm["kind"] == "urlset" and sm["entries"] == 2
    code_never, _, _ = run_cli(capsys, "validate", path, "--fail-on", "never")
    assert code_never == 0


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("garbage.bin", bytes(range(256)) * 4, None),
        ("empty.xml", b"", "sitemap-xml-malformed"),
        ("trunc.xml.gz", gzip.compress(GOOD.encode())[:40], "sitemap-gzip-invalid"),
        ("page.xml", b"<!DOCTYPE html>\n<html><body>hello</body></html>", "sitemap-is-html"),
        ("xxe.xml", None, "sitemap-doctype"),
        ("laughs.xml", None, "sitemap-doctype"),
    ],
)
def test_bad_input_is_a_finding_not_a_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    data: bytes | None,
    code: str | None,
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    if name == "xxe.xml":
        data = (
            f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file://{secret}">]>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>https://www.example.com/&x;</loc></url></urlset>"
        ).encode()
    if name == "laughs.xml":
        ents = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
        data = (
            f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY l0 "lol">{ents}]>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>https://www.example.com/&l9;</loc></url></urlset>"
        ).encode()
    assert data is not None
    path = write(tmp_path, name, data)
    rc, out, err = run_cli(capsys, "validate", path, "--format", "jsonl", "--fail-on", "warning")
    assert "Traceback" not in err
    assert rc == 1
    codes = [json.loads(line)["code"] for line in out.splitlines() if '"finding"' in line]
    assert codes, out
    if code:
        assert code in codes
    assert "TOP-SECRET-CONTENT" not in out


def test_missing_file_directory_and_non_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run_cli(capsys, "validate", str(tmp_path / "nope.xml"))
    assert rc == 2 and out == ""
    assert_one_line_error(err, "nope.xml", "no such file")
    rc, _, err = run_cli(capsys, "validate", str(tmp_path))
    assert rc == 2
    assert_one_line_error(err, "directory")
    rc, _, err = run_cli(capsys, "crawl", "ftp://example.com/sitemap.xml")
    assert rc == 2
    assert_one_line_error(err, "ftp://example.com/sitemap.xml")
    rc, _, err = run_cli(capsys, "crawl", "https://example.com/", "--rate", "-1")
    assert rc == 2
    assert_one_line_error(err, "--rate")
    rc, _, err = run_cli(capsys, "crawl", "https://example.com/", "--include", "([")
    assert rc == 2
    assert_one_line_error(err, "--include")


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


@pytest.mark.slow
async def test_crawl_cli_exit_codes_over_http(
    serve: Serve, unused_tcp_port: int, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, f"Sitemap: {base}/sitemap.xml\n"),
        "/sitemap.xml": (200, XML, urlset(f"{base}/ok", f"{base}/missing")),
        "/ok": (200, HTML, "ok"),
    }
    out = tmp_path / "r.jsonl"

    def cli(*argv: str) -> int:
        return main(list(argv))

    rc = await asyncio.to_thread(
        cli, "crawl", base + "/", "--format", "jsonl", "--output", str(out), "--no-progress"
    )
    assert rc == 1
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["url"] for r in records if r["type"] == "url"} == {f"{base}/ok", f"{base}/missing"}
    assert records[-1]["type"] == "summary"
    rc = await asyncio.to_thread(
        cli, "crawl", base + "/", "--fail-on", "never", "--output", str(tmp_path / "t.txt")
    )
    assert rc == 0
    # nothing listens on this port: one clear line, exit 2
    rc = await asyncio.to_thread(
        cli,
        "crawl",
        f"http://127.0.0.1:{unused_tcp_port}/",
        "--retries",
        "0",
        "--output",
        str(tmp_path / "u.txt"),
    )
    assert rc == 2
    # validate over HTTP fetches an index's children
    site.routes["/idx.xml"] = (200, XML, index(f"{base}/sitemap.xml"))
    rc = await asyncio.to_thread(
        cli, "validate", f"{base}/idx.xml", "--format", "jsonl", "--output", str(out)
    )
    sitemaps = [json.loads(x) for x in out.read_text().splitlines() if '"sitemap"' in x]
    assert {s["url"] for s in sitemaps if s["type"] == "sitemap"} == {
        f"{base}/idx.xml",
        f"{base}/sitemap.xml",
    }


@pytest.mark.slow
async def test_sigint_writes_the_report_and_exits_130(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)

    async def slow(request: Any) -> Any:
        from aiohttp import web

        await asyncio.sleep(0.2)
        return web.Response(text="x")

    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*[f"{base}/p{i}" for i in range(200)])),
        **{f"/p{i}": slow for i in range(200)},
    }
    out = tmp_path / "r.jsonl"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        "crawl",
        f"{base}/sitemap.xml",
        "--format",
        "jsonl",
        "--output",
        str(out),
        "--concurrency",
        "2",
        "--rate",
        "100",
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    for _ in range(200):
        await asyncio.sleep(0.05)
        if len([h for h in site.hits if h.path.startswith("/p")]) >= 6:
            break
    proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert records[-1]["type"] == "summary" and records[-1]["interrupted"] is True
    assert 0 < len([r for r in records if r["type"] == "url"]) < 200


@pytest.mark.slow
async def test_state_page_checks_and_rewrite_compose(serve: Serve, tmp_path: Path) -> None:
    """--state goes through the same URL check as a plain run: page checks and a rewrite
    apply, and a second run answers from the state without a request."""
    live, staging = Site(), Site()
    live_base = await serve(live)
    staging_base = await serve(staging)
    page = '<html><head><meta name="robots" content="noindex"><title>x</title></head></html>'
    staging.routes = {  # staging serves the new sitemap, written with the live site's URLs
        "/sitemap.xml": (200, XML, urlset(f"{live_base}/hidden", f"{live_base}/ok")),
        "/hidden": (200, HTML, page),
        "/ok": (200, HTML, "<html><head></head></html>"),
    }
    state, out = tmp_path / "s.db", tmp_path / "r.jsonl"
    argv = [
        "crawl", f"{live_base}/sitemap.xml", "--state", str(state), "--page-checks",
        "--rewrite", f"{live_base}={staging_base}", "--format", "jsonl", "--output", str(out),
        "--allow-private",
    ]  # fmt: skip
    rc = await asyncio.to_thread(main, argv)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    noindex = [r for r in records if r["type"] == "finding" and r["code"] == "url-noindex"]
    assert rc == 1 and [r["url"] for r in noindex] == [f"{live_base}/hidden"]
    assert "checked at" in noindex[0]["message"]
    assert sorted(staging.paths()) == ["/hidden", "/ok", "/robots.txt", "/sitemap.xml"]
    assert live.hits == []  # everything was read and checked on staging
    assert all(h.method == "GET" for h in staging.hits)  # page checks: one GET per URL
    # a second run after a completed one re-checks (these pages send no validators for a
    # conditional request) and reports the same URLs, page checks included
    rc2 = await asyncio.to_thread(main, argv)
    again = [json.loads(x) for x in out.read_text().splitlines()]
    assert (
        rc2 == 1 and [r["code"] for r in again if r["type"] == "finding"].count("url-noindex") == 1
    )
    assert [r["url"] for r in again if r["type"] == "url"] == [
        r["url"] for r in records if r["type"] == "url"
    ]


async def test_rate_unlimited(serve: Serve, tmp_path: Path) -> None:
    """`--rate unlimited` (the spelling of the issue; `inf` too) runs without a limiter:
    the hosts record shows no rate, where a number shows that number."""
    site = Site()
    base = await serve(site)
    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*[f"{base}/p{i}" for i in range(5)])),
        **{f"/p{i}": (200, HTML, "<html></html>") for i in range(5)},
    }
    rates = {}
    for given in ("unlimited", "inf", "50"):
        out = tmp_path / f"{given}.jsonl"
        argv = ["crawl", f"{base}/sitemap.xml", "--rate", given, "--format", "jsonl"]
        rc = await asyncio.to_thread(main, [*argv, "--output", str(out), "--no-progress"])
        records = [json.loads(x) for x in out.read_text().splitlines()]
        assert rc == 0 and len([r for r in records if r["type"] == "url"]) == 5
        (hosts,) = [r for r in records if r["type"] == "hosts"]
        rates[given] = {h["rate"] for h in hosts["hosts"]}
    assert rates == {"unlimited": {None}, "inf": {None}, "50": {50.0}}


def test_gc_tuning_only_for_a_process_run(tmp_path: Path) -> None:
    """The command line tunes the cyclic collector of its own process; a caller's
    process (main(argv)) keeps its settings."""
    before = gc.get_threshold()
    assert main(["validate", str(FIXTURES / "valid" / "urlset.xml"), "--no-progress"]) == 0
    assert gc.get_threshold() == before
    code = (
        "import gc, sys; from audit.cli.main import main; before = gc.get_threshold(); "
        "sys.argv = ['sitemap-audit', 'validate', sys.argv[1], '--no-progress', '--output', "
        "sys.argv[2]]; rc = main(); "
        "print(rc, before != gc.get_threshold())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURES / "valid" / "urlset.xml"), str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["0", "True"]


@pytest.mark.slow
def test_local_validate_never_loads_the_http_stack(tmp_path: Path) -> None:
    """Validating local files requests nothing, so aiohttp (and its TLS context, a tenth
    of a second of start-up) is never imported; a URL target loads it."""
    code = (
        "import sys; from audit.cli.main import main; "
        "rc = main(['validate', sys.argv[1], '--no-progress', '--output', sys.argv[2]]); "
        "print(rc, 'aiohttp' in sys.modules)"
    )
    sitemap = str(FIXTURES / "valid" / "urlset.xml")
    out = subprocess.run(
        [sys.executable, "-c", code, sitemap, str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["0", "False"]
    out = subprocess.run(  # a URL nobody answers: the client is opened and fails cleanly
        [sys.executable, "-c", code, "http://127.0.0.1:9/sitemap.xml", str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["2", "True"]
