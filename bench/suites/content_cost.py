"""The cost of content fingerprints (lastmod over time, issue 20): a `--state
--page-checks` crawl of a generated site run twice, the second against the first.

    .venv/bin/python -m bench.suites.content_cost [--pages 100000]

nginx (loopback only, its own config under bench/out/content-cost/) serves the
bench/gen.py crawl site. Run 1 starts from no state: every page is fetched, its
main text fingerprinted and stored. Run 2 is the next night on the unchanged site:
conditional requests, 304s keep the stored fingerprints. Prints the wall time of
each, the state file after each, and the rows and bytes of its `content` table;
writes bench/out/content-cost/result.json. Imports nothing of the product.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench import gen, server
from bench.common import OUT, remove_state

ROOT = Path(__file__).resolve().parents[2]


def crawl(origin: str, state: Path, out: Path) -> float:
    cmd = [sys.executable, "-m", "audit", "crawl", f"{origin}/sitemap_index.xml"]
    cmd += ["--rate", "inf", "--format", "jsonl", "--no-progress", "--output", str(out)]
    cmd += ["--fail-on", "never", "--state", str(state), "--page-checks"]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def state_figures(state: Path) -> dict[str, int]:
    with sqlite3.connect(state) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (rows,) = conn.execute("SELECT COUNT(*) FROM content").fetchone()
        try:
            (content_bytes,) = conn.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name = 'content'"
            ).fetchone()
        except sqlite3.OperationalError:  # SQLite built without dbstat
            content_bytes = None
    return {
        "file_bytes": state.stat().st_size,
        "content_rows": rows,
        "content_bytes": content_bytes or 0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=100_000)
    args = ap.parse_args()
    work = OUT / "content-cost"
    work.mkdir(parents=True, exist_ok=True)
    port = server.free_port()
    origin = f"http://127.0.0.1:{port}"
    files = max(1, -(-args.pages // 50_000))
    site = gen.crawl_site(work / f"site-{args.pages}", origin, files, args.pages // files, set())
    state, out = work / "state.sqlite", work / "report.jsonl"
    remove_state(state)
    result: dict[str, object] = {"pages": site.urls, "mix": site.mix}
    with server.Nginx(site.root, port):
        for run in ("first", "second"):
            wall = crawl(origin, state, out)
            figures = state_figures(state)
            result[run] = {"wall_s": round(wall, 2), **figures}
            print(run, f"{wall:.1f} s", figures, flush=True)
    first, second = result["first"], result["second"]
    assert isinstance(first, dict) and isinstance(second, dict)
    result["second_over_first"] = round(second["wall_s"] / first["wall_s"], 3)
    (work / "result.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
