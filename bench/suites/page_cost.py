"""The cost of --page-checks: the same local site crawled with and without it.

    .venv/bin/python -m bench.suites.page_cost [--pages 2000] [--repeats 2]

nginx (its own config and logs under bench/out/page-cost/, loopback only) serves a
generated site (bench/gen.py crawl_site: ~85% 200 pages of 1.6 kB HTML with a head,
5% redirects, 5% 404, 5% disallowed by robots.txt). Runs alternate, plain then page
checks, each its own process (`python -m audit crawl --rate inf --format jsonl
--no-progress`); the best wall time of each kind is compared. Prints one line per run
and the ratio; writes nothing else. Imports nothing of the product.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench import gen, server
from bench.common import OUT

ROOT = Path(__file__).resolve().parents[2]


def crawl(origin: str, page_checks: bool, out: Path) -> tuple[float, int, int]:
    cmd = [sys.executable, "-m", "audit", "crawl", f"{origin}/sitemap_index.xml"]
    cmd += ["--rate", "inf", "--format", "jsonl", "--no-progress", "--output", str(out)]
    cmd += ["--fail-on", "never"]
    if page_checks:
        cmd.append("--page-checks")
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    urls = pages = 0
    with out.open() as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("type") == "url":
                urls += 1
                pages += "page" in rec
    return wall, urls, pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    work = OUT / "page-cost"
    work.mkdir(parents=True, exist_ok=True)
    port = server.free_port()
    origin = f"http://127.0.0.1:{port}"
    site = gen.crawl_site(work / f"site-{args.pages}", origin, 1, args.pages, set())
    ng = server.Nginx(site.root, port)
    ng.dir = work / "nginx"
    best: dict[bool, float] = {}
    with ng:
        crawl(origin, False, work / "warmup.jsonl")  # page cache, imports compiled
        for rep in range(args.repeats):
            for page_checks in (False, True):
                out = work / f"run-{int(page_checks)}-{rep}.jsonl"
                wall, urls, pages = crawl(origin, page_checks, out)
                best[page_checks] = min(best.get(page_checks, wall), wall)
                kind = "--page-checks" if page_checks else "plain        "
                print(f"{kind} run {rep}: {wall:.2f} s, {urls} url records, {pages} pages read")
    ratio = best[True] / best[False]
    print(
        f"best of {args.repeats}: plain {best[False]:.2f} s, --page-checks {best[True]:.2f} s: "
        f"{ratio:.2f}x the plain crawl's wall time ({site.urls} URLs, mix {site.mix})"
    )


if __name__ == "__main__":
    main()
