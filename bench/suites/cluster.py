"""--cluster against one process (issues 21, 27): K loopback hosts, the same crawl three ways.

    python -m bench.suites.cluster [--hosts 8] [--pages 100] [--rate 20]

1. no --cluster (one process tree);
2. --cluster local:4 (a LocalCluster of four worker processes started by the run);
3. --cluster tcp://... against a `dask scheduler` and two `dask worker` processes started
   here beforehand (their startup is not in the wall time; their memory is in the peak).

Each host (127.0.0.1 to 127.0.0.K) logs when each page request arrived; the figures are
the wall time, the most requests any host saw in one second (server-side; --rate is the
limit), and the peak summed RSS of every process involved (bench/measure.py for the run's
own tree, sampled here for the separate scheduler and workers), and the wall time against
the ideal N/R (every host at its --rate at once: the pages of one host at --rate).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from bench.common import BENCH, ROOT
from bench.measure import _rss_kb, _tree

HOSTS = 8


class Hosts:
    """K loopback hosts in a thread of their own; the first one's sitemap lists all."""

    def __init__(self, pages: int, count: int = HOSTS) -> None:
        self.pages = pages
        self.count = count
        self.times: dict[str, list[float]] = {}
        self.bases: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()
        self._ready.wait()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        for i in range(self.count):
            ip = f"127.0.0.{i + 1}"
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handler(ip))
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, ip, 0)
            await site.start()
            port = runner.addresses[0][1]
            self.bases.append(f"http://{ip}:{port}")
            self.times[ip] = []

    def _handler(self, ip: str) -> Any:
        async def handle(request: web.Request) -> web.StreamResponse:
            if request.path == "/sitemap.xml":
                locs = "".join(
                    f"<url><loc>{b}/p{j}</loc></url>" for b in self.bases for j in range(self.pages)
                )
                xml = (
                    '<?xml version="1.0"?><urlset '
                    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + locs + "</urlset>"
                )
                return web.Response(text=xml, content_type="application/xml")
            if request.path == "/robots.txt":
                return web.Response(status=404)
            self.times[ip].append(time.monotonic())
            return web.Response(text="ok", content_type="text/html")

        return handle

    def reset(self) -> None:
        for times in self.times.values():
            times.clear()

    def max_per_second(self) -> int:
        best = 0
        for times in self.times.values():
            ts, start = sorted(times), 0
            for end, t in enumerate(ts):
                while t - ts[start] >= 1.0:
                    start += 1
                best = max(best, end - start + 1)
        return best


def dask(*args: str) -> subprocess.Popen[bytes]:
    exe = str(Path(sys.executable).parent / "dask")
    return subprocess.Popen([exe, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_scheduler(tmp: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    info = tmp / "scheduler.json"
    procs = [dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(info))]  # fmt: skip
    while not (info.exists() and info.stat().st_size):
        time.sleep(0.05)
    for _ in range(2):
        procs.append(dask("worker", "--scheduler-file", str(info), "--nthreads", "4",
                          "--no-dashboard", "--host", "127.0.0.1"))  # fmt: skip
    address = json.loads(info.read_text())["address"]
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(2, timeout=60)
    return address, procs


def run(
    hosts: Hosts, rate: float, extra: list[str], others: list[int], tmp: Path
) -> dict[str, Any]:
    hosts.reset()
    result = tmp / "measure.json"
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.1):
            peak = max(peak, sum(_rss_kb(p) for pid in others for p in _tree(pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cmd = [sys.executable, str(BENCH / "measure.py"), str(result), sys.executable, "-m", "audit",
           "crawl", hosts.bases[0] + "/sitemap.xml", "--rate", str(rate), "--format", "jsonl",
           "--no-progress", "-o", str(tmp / "report.jsonl"), *extra]  # fmt: skip
    subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    done.set()
    sampler.join()
    measured = json.loads(result.read_text())
    return {
        "wall_s": round(measured["wall_s"], 2),
        "max_per_host_per_s": hosts.max_per_second(),
        "requests": sum(len(t) for t in hosts.times.values()),
        "peak_rss_mb": round((measured["maxrss_kb"] + peak) / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=HOSTS, help="loopback hosts (<= 254)")
    parser.add_argument("--pages", type=int, default=100, help="pages per host")
    parser.add_argument("--rate", type=float, default=20.0)
    args = parser.parse_args()
    hosts = Hosts(args.pages, min(254, max(1, args.hosts)))
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        rows["one process"] = run(hosts, args.rate, [], [], tmp)
        rows["--cluster local:4"] = run(hosts, args.rate, ["--cluster", "local:4"], [], tmp)
        address, procs = start_scheduler(tmp)
        try:
            pids = [p.pid for p in procs]
            rows["scheduler + 2 workers"] = run(hosts, args.rate, ["--cluster", address], pids, tmp)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
    ideal = args.pages / args.rate
    print(f"{hosts.count} hosts x {args.pages} pages, --rate {args.rate:g} (ideal {ideal:g} s)")
    print(f"{'':24} {'wall s':>7} {'x ideal':>8} {'max/host/s':>11} {'requests':>9} "
          f"{'peak MB':>8}")  # fmt: skip
    for name, row in rows.items():
        print(f"{name:24} {row['wall_s']:>7} {row['wall_s'] / ideal:>8.2f} "
              f"{row['max_per_host_per_s']:>11} {row['requests']:>9} "
              f"{row['peak_rss_mb']:>8}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
