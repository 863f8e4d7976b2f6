"""Many sites at once (issues 21, 27): K loopback hosts x N pages at --rate R, three ways.

    python -m bench.suites.cluster [--shapes 8x2500,100x500] [--rate 50] [--ways one,local,tcp]
                                   [--base REF] [--layout one|sites]
                                   [--output bench/results/CLUSTER.md]

1. `one`: no --cluster (one process);
2. `local`: --cluster local:4 (a LocalCluster of four worker processes started by the run);
3. `tcp`: --cluster tcp://... against a `dask scheduler` and two `dask worker` processes
   (`--nthreads 4`, as a small deployment would start them) started here beforehand: their
   start-up is not in the wall time; their memory and CPU are in the figures;
4. `local2`: --cluster local:2 (on 2 cores, four workers, the scheduler and the driver
   may cost more than they give);
5. `tcpuv`: as `tcp`, the workers started with DASK_DISTRIBUTED__ADMIN__EVENT_LOOP=uvloop
   (then the batches run on each worker's own Dask loop, as on local:N's);
6. `tcptuned`: as `tcp`, the workers started with the monitors local:N's workers run with
   (TUNED: no statistical profiler, Dask's ticks every 0.5 s, the system and memory
   monitors every 2 s and 1 s);
7. `tcpaudit`: as `tcp`, the two workers started by the tree's own launcher
   (`sitemap-audit worker`, docs/cluster.md: uvloop, the tuned monitors and its preload;
   run as `python -m audit.cluster.worker`, the same launcher without the CLI's parsing).
   A --base tree without the launcher cannot run this way.

Each run's CPU seconds of the scheduler and of each worker are printed on stderr.

With --base REF, each way is run by REF's sources (git archive into a temporary folder,
cwd and PYTHONPATH set to it, its scheduler and workers too) and then by this tree, so
the two runs of a way are next to each other in time on a shared machine; the rows say
which tree ran them.

Each host listens on an address of its own (127.0.0.1, 127.0.0.2, ...) and stamps when
each page request arrived (server-side, in this process's thread of servers). --layout
`one` (the default, as in earlier sessions): the first host's sitemap lists the N pages
of every host, so every other host's URL is also a loc-cross-host error (K x N findings
to make before the last host's first URL is admitted). --layout `sites`: each host serves
a sitemap of its own N pages and the crawl is given the K sitemaps as targets, as an
agency's nightly `crawl T1 ... TK` is. Figures per way:

- wall s: the crawl process's wall time (start-up, discovery and report included), and its
  ratio to the ideal N/R (every host at its --rate at once); the goal is <= 1.25;
- span s: the servers' first page request to their last, over all hosts;
- max/host/s: the most requests any host saw in any one-second window (--rate is the
  limit; the goal is <= 1.1 x R);
- requests: the page requests the hosts saw (each page once: K x N);
- peak MB: the peak of the summed PSS (proportional set size: shared pages counted once)
  of every process involved, sampled together every 0.2 s: the crawl with its children
  (local:N's workers) and, for `tcp`, the scheduler and the workers with their nannies;
- CPU s: user + system CPU seconds of all of them during the run (the machine is shared:
  CPU seconds say what a way costs when the wall time is noisy);
- where the wall time goes (`phases`, from nginx's stamps): the launch to the first page
  request, the spread of the hosts' first requests, the span, the last request to the
  process's exit, and the median over hosts of a host's own rate.

The tables go to --output (markdown) and to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aiohttp import web

from bench.common import BENCH, CLK_TCK, RESULTS, ROOT, machine_facts, table
from bench.measure import _tree

WAYS = {
    "one": "one process",
    "local": "--cluster local:4",
    "local2": "--cluster local:2",
    "tcp": "scheduler + 2 workers",
    "tcpuv": "scheduler + 2 workers on uvloop",
    "tcptuned": "scheduler + 2 tuned workers",
    "tcpaudit": "scheduler + 2 `sitemap-audit worker`s",
}
# the `tcptuned` workers' environment: audit/cluster/driver.py LOCAL_WORKER_CONFIG's values
TUNED = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "500ms",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
}
SAMPLE_S = 0.2
# --layout -> what a section's title adds
LAYOUTS = {
    "one": "",
    "sites": " (each host its own sitemap: `crawl T1 ... TK`)",
}


class Hosts:
    """K loopback hosts in a thread of their own; the first one's sitemap lists all."""

    def __init__(self, pages: int, count: int, layout: str = "one") -> None:
        self.pages = pages
        self.count = count
        self.layout = layout
        self.times: dict[str, list[float]] = {}
        self.bases: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runners: list[web.AppRunner] = []
        threading.Thread(target=self._serve, daemon=True).start()
        self._ready.wait()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        for i in range(self.count):
            ip = f"127.0.{i // 250}.{i % 250 + 1}"
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handler(ip))
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, ip, 0)
            await site.start()
            self._runners.append(runner)
            port = runner.addresses[0][1]
            self.bases.append(f"http://{ip}:{port}")
            self.times[ip] = []

    def ip_index(self, ip: str) -> int:
        return next(i for i, base in enumerate(self.bases) if base.startswith(f"http://{ip}:"))

    def _handler(self, ip: str) -> Any:
        async def handle(request: web.Request) -> web.StreamResponse:
            if request.path == "/sitemap.xml":
                listed = self.bases if self.layout == "one" else [self.bases[self.ip_index(ip)]]
                locs = "".join(
                    f"<url><loc>{b}/p{j}</loc></url>" for b in listed for j in range(self.pages)
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

    def close(self) -> None:
        async def stop() -> None:
            for runner in self._runners:
                await runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)

    def reset(self) -> None:
        for times in self.times.values():
            times.clear()

    def collect(self) -> None:
        """The stamps are taken as requests come (nothing to read)."""

    def max_per_second(self) -> int:
        return max((max_in_window(t) for t in self.times.values()), default=0)

    def span(self) -> float:
        stamps = [t for times in self.times.values() for t in times]
        return max(stamps) - min(stamps) if stamps else 0.0


NGINX_CONF = """\
# Generated by bench/suites/cluster.py: K loopback hosts on one port, each on an address of its
# own; every page request logged with its time ($msec) and address.
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 8192; }}
http {{
    log_format stamps '$msec $server_addr $uri';
    access_log off;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    client_body_temp_path {dir}/tmp;
    proxy_temp_path {dir}/tmp;
    fastcgi_temp_path {dir}/tmp;
    uwsgi_temp_path {dir}/tmp;
    scgi_temp_path {dir}/tmp;
    default_type text/html;
    server {{
{listen}
        location = /sitemap.xml {{ root {sitemaps}; default_type application/xml; }}
        location = /robots.txt {{ return 404; }}
        location / {{ access_log {dir}/pages.log stamps; return 200 "ok"; }}
    }}
}}
"""


def write_sitemap(path: Path, bases: list[str], pages: int) -> None:
    """A urlset of pages p0..p{pages-1} of every base."""
    locs = "".join(f"<url><loc>{b}/p{j}</loc></url>" for b in bases for j in range(pages))
    path.write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + locs + "</urlset>"
    )  # fmt: skip


class NginxHosts:
    """The same K hosts served by one nginx (C: a Python server at 5,000 requests a second
    takes most of a core on the machine it measures, and stamps late when starved); the
    arrival times are nginx's, from its access log."""

    def __init__(self, pages: int, count: int, tmp: Path, layout: str = "one") -> None:
        from bench.server import free_port

        self.pages = pages
        self.count = count
        self.dir = tmp / "nginx"
        (self.dir / "tmp").mkdir(parents=True, exist_ok=True)
        for path in (tmp, self.dir):  # nginx's worker (nobody, when run as root) reads here
            path.chmod(0o755)
        port = free_port()
        ips = [f"127.0.{i // 250}.{i % 250 + 1}" for i in range(count)]
        self.bases = [f"http://{ip}:{port}" for ip in ips]
        self.layout = layout
        if layout == "one":
            write_sitemap(self.dir / "sitemap.xml", self.bases, pages)
            sitemaps = str(self.dir)
        else:  # each host's own sitemap, served from a folder named by its address
            for ip, base in zip(ips, self.bases, strict=True):
                (self.dir / "sites" / ip).mkdir(parents=True)
                write_sitemap(self.dir / "sites" / ip / "sitemap.xml", [base], pages)
            sitemaps = f"{self.dir}/sites/$server_addr"
        listen = "\n".join(f"        listen {ip}:{port};" for ip in ips)
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(dir=self.dir, listen=listen, sitemaps=sitemaps))
        self.log = self.dir / "pages.log"
        self.proc = subprocess.Popen(["nginx", "-p", str(self.dir), "-c", str(conf), "-e",
                                      str(self.dir / "error.log")], start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 10
        while not self._listening(port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nginx did not start: " + (self.dir / "error.log").read_text())
            time.sleep(0.05)
        self._offset = 0
        self.times: dict[str, list[float]] = {}

    @staticmethod
    def _listening(port: int) -> bool:
        import socket

        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False

    def reset(self) -> None:
        self._offset = self.log.stat().st_size if self.log.exists() else 0
        self.times = {}

    def collect(self) -> None:
        """The page requests logged since reset(), by address."""
        times: dict[str, list[float]] = {}
        if self.log.exists():
            with self.log.open() as f:
                f.seek(self._offset)
                for line in f:
                    stamp, ip, _ = line.split(" ", 2)
                    times.setdefault(ip, []).append(float(stamp))
        self.times = times

    def max_per_second(self) -> int:
        return max((max_in_window(t) for t in self.times.values()), default=0)

    def span(self) -> float:
        stamps = [t for times in self.times.values() for t in times]
        return max(stamps) - min(stamps) if stamps else 0.0

    def close(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)


def phases(times: dict[str, list[float]], launched: float, ended: float) -> dict[str, float]:
    """Where the wall time goes, from the servers' arrival stamps (epoch seconds, as nginx
    writes them; the aiohttp hosts stamp monotonic time, so only `spread`, `span` and the
    rates apply there): `start` the launch to the run's first page request; `spread` the
    first page request of the first host to that of the last one; `span` first to last
    page request; `tail` the last page request to the process's exit; `rate` the median
    over hosts of a host's requests per second between its own first and last request."""
    firsts = [min(t) for t in times.values() if t]
    lasts = [max(t) for t in times.values() if t]
    if not firsts:
        return {}
    rates = sorted(
        (len(t) - 1) / (max(t) - min(t)) for t in times.values() if len(t) > 1 and max(t) > min(t)
    )
    return {
        "start": min(firsts) - launched,
        "spread": max(firsts) - min(firsts),
        "span": max(lasts) - min(firsts),
        "tail": ended - max(lasts),
        "rate": rates[len(rates) // 2] if rates else 0.0,
    }


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """The most stamps within any `window` seconds (half-open)."""
    ts = sorted(times)
    best = start = 0
    for end, t in enumerate(ts):
        while t - ts[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def pss_kb(pid: int) -> int:
    """The process's proportional set size (its RSS when smaps_rollup cannot be read)."""
    for name, key in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
        try:
            with open(f"/proc/{pid}/{name}") as f:
                for line in f:
                    if line.startswith(key):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return 0


def cpu_s(pid: int) -> tuple[float, float]:
    """(own, waited children's) user + system CPU seconds of a live process; zeros if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0, 0.0
    # after the ")" closing comm: utime, stime, cutime, cstime are fields 14 to 17
    own = (int(fields[11]) + int(fields[12])) / CLK_TCK
    return own, (int(fields[13]) + int(fields[14])) / CLK_TCK


class Sampler:
    """The process trees rooted at `roots`, sampled together every SAMPLE_S: their summed
    PSS (peak) and each process's CPU seconds (the last value seen)."""

    def __init__(self, roots: Iterable[int]) -> None:
        self.roots = list(roots)
        self.peak_kb = 0
        self.cpu: dict[int, tuple[float, float]] = {}
        self.first: dict[int, float] = {}  # CPU already spent when first seen
        self.main = 0  # the first root's child (the crawl under bench/measure.py)
        self.trees: dict[int, set[int]] = {}  # root -> every pid seen in its tree
        self._done = threading.Event()
        self._sample()
        self.first = {pid: own for pid, (own, _) in self.cpu.items()}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for root in self.roots:
            self.trees.setdefault(root, set()).update(_tree(root))
        pids = [p for root in self.roots for p in self.trees[root]]
        if not self.main and len(tree := _tree(self.roots[0])) > 1:
            self.main = tree[1]
        self.peak_kb = max(self.peak_kb, sum(pss_kb(p) for p in pids))
        for pid in pids:
            seen = cpu_s(pid)
            if seen[0] or seen[1]:
                self.cpu[pid] = seen

    def _run(self) -> None:
        while not self._done.wait(SAMPLE_S):
            self._sample()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def cpu_of(self, root: int) -> float:
        """CPU seconds of the process tree at `root` since the start (live processes)."""
        return sum(
            own - self.first.get(pid, 0.0)
            for pid, (own, _) in self.cpu.items()
            if pid in self.trees.get(root, ())
        )

    def cpu_total(self, main: int, main_total: float) -> float:
        """CPU seconds of every process seen since the start; `main`, whose own and waited
        children's total is `main_total` (its parent's rusage), to its end."""
        total = main_total - self.cpu.get(main, (0.0, 0.0))[1]  # its own, to the end
        for pid, (own, _) in self.cpu.items():
            if pid != main:
                total += own - self.first.get(pid, 0.0)
        return total


def dask(
    *args: str,
    tree: Path = ROOT,
    loop: str | None = None,
    tuned: bool = False,
    audit: bool = False,
) -> subprocess.Popen[bytes]:
    exe = str(Path(sys.executable).parent / "dask")
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the workers import the tree's batch code
    if audit:  # the tree's own launcher (audit.cluster.worker: `sitemap-audit worker`)
        exe, args = sys.executable, ("-m", "audit.cluster.worker", *args[1:])
    if tuned:
        env.update(TUNED)
    if loop:  # the event loop Dask runs on (its default: tornado's asyncio loop)
        env["DASK_DISTRIBUTED__ADMIN__EVENT_LOOP"] = loop
    return subprocess.Popen(
        [exe, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tree, env=env
    )


def start_scheduler(
    tmp: Path,
    tree: Path = ROOT,
    loop: str | None = None,
    tuned: bool = False,
    audit: bool = False,
) -> tuple[str, list[subprocess.Popen[bytes]]]:
    info = tmp / "scheduler.json"
    info.unlink(missing_ok=True)
    procs = [dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(info), tree=tree)]  # fmt: skip
    while not (info.exists() and info.stat().st_size):
        time.sleep(0.05)
    for _ in range(2):
        procs.append(dask("worker", "--scheduler-file", str(info), "--nthreads", "4",
                          "--no-dashboard", "--host", "127.0.0.1", tree=tree, loop=loop,
                          tuned=tuned, audit=audit))  # fmt: skip
    address = json.loads(info.read_text())["address"]
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(2, timeout=60)
    return address, procs


def crawl_args(hosts: Hosts | NginxHosts, rate: float, report: Path) -> list[str]:
    """The crawl of layout `one` (the first host's sitemap) or `sites` (every host's own
    sitemap, one target each: `crawl T1 T2 ... TK`)."""
    listed = hosts.bases if hosts.layout == "sites" else hosts.bases[:1]
    targets = [base + "/sitemap.xml" for base in listed]
    return ["crawl", *targets, "--rate", f"{rate:g}", "--format",
            "jsonl", "--no-progress", "-o", str(report)]  # fmt: skip


def run(
    hosts: Hosts | NginxHosts,
    rate: float,
    extra: list[str],
    others: list[int],
    tmp: Path,
    tree: Path = ROOT,
) -> dict[str, Any]:
    """One crawl, measured: its tree and `others` (a scheduler and workers) sampled."""
    hosts.reset()
    result = tmp / "measure.json"
    cmd = [sys.executable, str(BENCH / "measure.py"), str(result), sys.executable, "-m", "audit",
           *crawl_args(hosts, rate, tmp / "report.jsonl"), *extra]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}
    launched = time.time()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stderr=subprocess.PIPE, text=True)
    sampler = Sampler([proc.pid, *others])
    _, err = proc.communicate()
    ended = time.time()
    sampler.stop()
    hosts.collect()
    measured = json.loads(result.read_text())
    return {
        "phases": phases(hosts.times, launched, ended),
        "wall_s": measured["wall_s"],
        "span_s": hosts.span(),
        "max_per_host_per_s": hosts.max_per_second(),
        "requests": sum(len(t) for t in hosts.times.values()),
        "peak_mb": sampler.peak_kb / 1024,
        "cpu_s": sampler.cpu_total(sampler.main, measured["cpu_s"]),
        "cpu_others_s": [round(sampler.cpu_of(pid), 2) for pid in others],
        "rc": measured["rc"],
        "stderr": err.strip().splitlines()[-1:] if err.strip() else [],
    }


def shape_rows(
    count: int,
    pages: int,
    rate: float,
    ways: list[str],
    server: str,
    trees: list[tuple[str, Path]],
    layout: str = "one",
) -> dict[str, Any]:
    """Every way of one shape, each way run by every tree in turn (before/after side by
    side: `way@label`, or `way` for this tree alone)."""
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        hosts = (
            NginxHosts(pages, count, tmp, layout)
            if server == "nginx"
            else Hosts(pages, count, layout)
        )
        try:
            for way in (w for w in WAYS if w in ways):
                for label, tree in trees:
                    key = f"{way}@{label}" if label else way
                    rows[key] = run_way(hosts, rate, way, tmp, tree)
                    print(f"{key}: wall {rows[key]['wall_s']:.2f} s, CPU {rows[key]['cpu_s']:.1f} s, "
                          f"scheduler and workers {rows[key]['cpu_others_s']}", file=sys.stderr)  # fmt: skip
        finally:
            hosts.close()
    return rows


def run_way(
    hosts: Hosts | NginxHosts, rate: float, way: str, tmp: Path, tree: Path
) -> dict[str, Any]:
    if not way.startswith("tcp"):
        extra = ["--cluster", WAYS[way].split()[-1]] if way != "one" else []
        return run(hosts, rate, extra, [], tmp, tree)
    loop = "uvloop" if way == "tcpuv" else None
    address, procs = start_scheduler(
        tmp, tree, loop=loop, tuned=way == "tcptuned", audit=way == "tcpaudit"
    )
    try:
        return run(hosts, rate, ["--cluster", address], [p.pid for p in procs], tmp, tree)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def source_tree(ref: str, tmp: Path) -> Path:
    """The sources of `ref` (git archive: no worktree of this repository), for --base."""
    tree = tmp / f"base-{ref}"
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


HEADERS = ["way", "wall s", "x N/R", "span s", "max/host/s", "requests", "peak MB (PSS)",
           "CPU s", "goal met"]  # fmt: skip


def way_name(key: str) -> str:
    """A row's name: the way, and the tree that ran it (`way@label`, with --base)."""
    way, _, label = key.partition("@")
    return f"{WAYS[way]} ({label})" if label else WAYS[way]


PHASES = ("start", "spread", "span", "tail", "rate")
PHASE_HEADERS = ["way", "start s", "first-request spread s", "span s", "tail s",
                 "median host req/s", "wall s"]  # fmt: skip


def render(count: int, pages: int, rate: float, rows: dict[str, Any], layout: str = "one") -> str:
    ideal = pages / rate
    limit = int(rate * 1.1)
    lines = []
    for way, row in rows.items():
        ratio = row["wall_s"] / ideal
        ok = ratio <= 1.25 and row["max_per_host_per_s"] <= limit
        ok = ok and row["requests"] == count * pages and row["rc"] in (0, 1)
        lines.append([way_name(way), f"{row['wall_s']:.2f}", f"{ratio:.2f}", f"{row['span_s']:.2f}",
                      str(row["max_per_host_per_s"]), f"{row['requests']:,}",
                      f"{row['peak_mb']:.0f}", f"{row['cpu_s']:.1f}",
                      "yes" if ok else "NO"])  # fmt: skip
    head = (
        f"### {count} hosts x {pages:,} pages at --rate {rate:g}: ideal N/R = {ideal:g} s"
        f"{LAYOUTS[layout]}\n\n"
        f"Goal: wall <= 1.25 x N/R = {ideal * 1.25:g} s; at most {limit} requests to a host "
        "in any one-second window; every page requested once.\n\n"
    )
    notes = [
        f"- {way_name(w)}: stderr ended with {r['stderr'][0]!r}"
        for w, r in rows.items()
        if r["stderr"]
    ]
    steps = [
        [way_name(way)]
        + [f"{row['phases'].get(k, 0.0):.2f}" for k in PHASES]
        + [f"{row['wall_s']:.2f}"]
        for way, row in rows.items()
        if row.get("phases")
    ]
    body = table(lines, HEADERS)
    if steps:
        body += (
            "\n\nWhere the wall time goes (server stamps; bench/suites/cluster.py `phases`):\n\n"
        )
        body += table(steps, PHASE_HEADERS)
    return head + body + ("\n\n" + "\n".join(notes) if notes else "") + "\n"


def parse_shapes(text: str) -> list[tuple[int, int]]:
    shapes = []
    for part in text.split(","):
        count, _, pages = part.strip().partition("x")
        shapes.append((min(1000, max(1, int(count))), max(1, int(pages))))
    return shapes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shapes", default="8x2500,100x500", help="KxN[,KxN...]: K hosts of N pages"
    )
    parser.add_argument("--hosts", type=int, help="one shape: K hosts (with --pages)")
    parser.add_argument("--pages", type=int, default=500, help="with --hosts: N pages per host")
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument(
        "--ways",
        default="one,local,tcp,tcpaudit",
        help="of one, local, local2, tcp, tcpuv, tcptuned, tcpaudit",
    )
    parser.add_argument(
        "--server",
        choices=("nginx", "aiohttp"),
        default="nginx" if shutil.which("nginx") else "aiohttp",
        help="what serves the K hosts (default: nginx when installed)",
    )
    parser.add_argument(
        "--layout",
        choices=tuple(LAYOUTS),
        default="one",
        help="one: the first host's sitemap lists every page (every other host's URL is a "
        "loc-cross-host error); sites: each host its own sitemap, one crawl target each",
    )
    parser.add_argument("--output", default=str(RESULTS / "CLUSTER.md"), help="markdown file")
    parser.add_argument(
        "--base",
        help="git ref: each way is run by that commit's sources too, just before this tree's",
    )
    args = parser.parse_args()
    shapes = [(args.hosts, args.pages)] if args.hosts else parse_shapes(args.shapes)
    ways = [w for w in args.ways.split(",") if w in WAYS]
    started = time.time()
    facts = machine_facts()
    sections = []
    with tempfile.TemporaryDirectory() as name:
        trees = [("", ROOT)]
        if args.base:
            trees = [(f"base {args.base}", source_tree(args.base, Path(name))), ("head", ROOT)]
        for count, pages in shapes:
            rows = shape_rows(count, pages, args.rate, ways, args.server, trees, args.layout)
            text = render(count, pages, args.rate, rows, args.layout)
            print(text, flush=True)
            sections.append(text)
    command = " ".join(["python -m bench.suites.cluster", *sys.argv[1:]])
    out = (
        "# Many sites at once: one process, --cluster local:4, a scheduler with two workers\n\n"
        f"Written by `{command}` in {time.time() - started:.0f} s on {facts['date']}, git "
        f"`{facts['git']}`. Machine: {facts['cpu']}, {facts['cores']} cores, shared with "
        f"other work (wall times are noisy; CPU s less so); Python {facts['python']}, aiohttp "
        f"{facts['aiohttp']}. The method is in bench/suites/cluster.py's docstring.\n\n"
        + "\n".join(sections)
    )
    Path(args.output).write_text(out, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
