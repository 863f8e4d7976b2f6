"""Report writers on a 1,000,000-URL jsonl: time and peak memory per format.

    .venv/bin/python -m bench.suites.report_memory [--urls N]

Generates a deterministic jsonl report (url records, a finding for one URL in
ten, sitemap records, a summary) into bench/out/, then runs
`sitemap-audit report FILE --format F --output bench/out/report.F` once per
format, each in its own process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out"
CLI = ROOT / ".venv" / "bin" / "sitemap-audit"
FORMATS = ("text", "json", "csv", "junit", "sarif", "markdown", "html")
CODES = (("url-not-found", "error"), ("url-redirect", "warning"), ("lastmod-stale", "warning"))


def generate(path: Path, urls: int) -> None:
    rng = random.Random(7)
    per_sitemap = 50_000
    counts = {"error": 0, "warning": 0, "info": 0}
    by_code: dict[str, int] = {}
    with path.open("w", encoding="utf-8") as fh:
        for i in range(urls):
            sm = f"https://bench.example/sitemap-{i // per_sitemap + 1}.xml"
            url = f"https://bench.example/p/{i}"
            status = 404 if i % 10 == 3 else 301 if i % 10 == 5 else 200
            rec = {
                "type": "url",
                "url": url,
                "sitemap": sm,
                "line": 3 + 4 * (i % per_sitemap),
                "status": status,
                "final_url": url,
                "redirects": [{"url": url, "status": 301}] if status == 301 else [],
                "lastmod": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
                "last_modified": None,
                "robots": "allowed",
                "elapsed_ms": round(rng.uniform(2, 80), 1),
                "error": None,
            }
            fh.write(json.dumps(rec) + "\n")
            if status != 200:
                code, sev = CODES[0] if status == 404 else CODES[1]
                counts[sev] += 1
                by_code[code] = by_code.get(code, 0) + 1
                fh.write(
                    json.dumps(
                        {
                            "type": "finding",
                            "code": code,
                            "severity": sev,
                            "url": url,
                            "sitemap": sm,
                            "line": rec["line"],
                            "message": f"HTTP {status}",
                        }
                    )
                    + "\n"
                )
            if (i + 1) % per_sitemap == 0 or i + 1 == urls:
                fh.write(
                    json.dumps(
                        {
                            "type": "sitemap",
                            "url": sm,
                            "parent": "https://bench.example/sitemap_index.xml",
                            "kind": "urlset",
                            "status": 200,
                            "entries": per_sitemap,
                            "bytes": 5_000_000,
                            "gzip": False,
                        }
                    )
                    + "\n"
                )
        fh.write(
            json.dumps(
                {
                    "type": "summary",
                    "sitemaps": urls // per_sitemap,
                    "urls": urls,
                    "findings": counts,
                    "by_code": by_code,
                    "duration_s": 0,
                }
            )
            + "\n"
        )


def measure(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    child = [
        sys.executable,
        "-c",
        "import resource,subprocess,sys;"
        "subprocess.run(sys.argv[1:]);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
        *argv,
    ]
    start = time.perf_counter()
    done = subprocess.run(child, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    return wall, int(done.stdout.strip().splitlines()[-1]) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--urls", type=int, default=1_000_000)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    src = OUT / f"report-{args.urls}.jsonl"
    if not src.exists():
        generate(src, args.urls)
    size = src.stat().st_size / 1e6
    print(f"input: {src} ({args.urls:,} URLs, {size:.0f} MB)")
    print(f"{'format':<10} {'wall s':>8} {'peak RSS MB':>12} {'output MB':>10}")
    for fmt in FORMATS:
        dest = OUT / f"report.{fmt}"
        wall, rss = measure(
            [
                str(CLI),
                "report",
                str(src),
                "--format",
                fmt,
                "--output",
                str(dest),
                "--fail-on",
                "never",
            ]
        )
        print(f"{fmt:<10} {wall:>8.1f} {rss:>12.1f} {dest.stat().st_size / 1e6:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
