"""`crawl --render`: pages rendered per second and the peak memory of the process tree.

A loopback site of `--pages` listed pages (a small app shell whose script writes a heading,
a paragraph and 20 links, as a client-rendered page does) is crawled four ways through the
CLI: `--page-checks` alone (the same crawl without rendering), then `--render all` with
K = 1, 2 and 4 tabs. For each: wall time, pages rendered per second over the render phase
(`summary.render.seconds`), and the peak memory of the whole process tree (the crawl, the
browser's keeper and every browser process: the sum of their proportional set sizes,
sampled every 100 ms from /proc). Run under the benchmark lock:

    flock /tmp/bench.lock .venv/bin/python -m bench.suites.render [--pages 200] [--tabs 1,2,4]

Imports nothing of the product: it is measured from the outside, through its CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

CLI = str(Path(sys.executable).parent / "sitemap-audit")

SERVER = textwrap.dedent(
    """
    import sys
    from aiohttp import web

    N = int(sys.argv[2])
    SHELL = (
        "<!doctype html><html><head><title>Item {i}</title>"
        '<link rel="canonical" href="/item/{i}"></head><body><div id="app"></div><script>'
        "const app = document.getElementById('app');"
        "const h = document.createElement('h1'); h.textContent = 'Item {i}'; app.append(h);"
        "const p = document.createElement('p');"
        "p.textContent = 'A client-rendered description of item {i}. '.repeat(20); app.append(p);"
        "for (let k = 1; k <= 20; k++) {{ const a = document.createElement('a');"
        "a.href = '/item/' + (({i} + k) % {n}); a.textContent = 'item ' + k; app.append(a); }}"
        "</script></body></html>"
    )

    async def page(request):
        i = int(request.match_info["i"])
        return web.Response(text=SHELL.format(i=i, n=N), content_type="text/html")

    async def sitemap(request):
        base = f"http://{request.host}"
        locs = "".join(f"<url><loc>{base}/item/{i}</loc></url>" for i in range(N))
        body = ('<?xml version="1.0" encoding="UTF-8"?>'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + locs + "</urlset>")
        return web.Response(text=body, content_type="application/xml")

    app = web.Application()
    app.router.add_get("/sitemap.xml", sitemap)
    app.router.add_get("/item/{i}", page)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
    """
)


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_memory(root: int) -> int:
    """The sum of the proportional set sizes of `root` and all its descendants."""
    tree = _children()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _pss(pid)
        todo += tree.get(pid, [])
    return total


def measure(cmd: list[str]) -> dict[str, float | dict[str, object]]:
    began = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_memory(proc.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    wall = time.monotonic() - began
    done.set()
    sampler.join()
    summary = json.loads(out.strip().splitlines()[-1])
    return {"wall_s": wall, "peak_mb": peak / 1e6, "summary": summary}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--tabs", default="1,2,4")
    ap.add_argument("--port", type=int, default=8971)
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(SERVER)
    server = subprocess.Popen([sys.executable, f.name, str(args.port), str(args.pages)])
    try:
        time.sleep(1.5)
        target = f"http://127.0.0.1:{args.port}/sitemap.xml"
        base = [CLI, "crawl", target, "--format", "jsonl", "--no-progress", "--fail-on", "never"]
        base += ["--rate", "unlimited"]
        rows = []
        plain = measure([*base, "--page-checks"])
        rows.append(("--page-checks (no render)", plain, None))
        for k in [int(t) for t in args.tabs.split(",")]:
            run = measure([*base, "--render", "all", "--render-tabs", str(k)])
            rows.append((f"--render all --render-tabs {k}", run, k))
    finally:
        server.terminate()
        server.wait()
        os.unlink(f.name)
    print(f"{args.pages} pages, {os.cpu_count()} cores")
    print(f"{'run':<32} {'wall s':>7} {'render s':>9} {'pages/s':>8} {'failed':>6} {'peak MB':>8}")
    for name, run, _ in rows:
        summary = run["summary"]
        assert isinstance(summary, dict)
        render = summary.get("render") or {}
        secs = float(render.get("seconds") or 0.0)
        pages = int(render.get("pages") or 0)
        rate = f"{pages / secs:8.1f}" if secs else f"{'-':>8}"
        failed = render.get("failed", "-")
        print(
            f"{name:<32} {run['wall_s']:7.1f} {secs:9.1f} {rate} {failed!s:>6} "
            f"{run['peak_mb']:8.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
