"""Where a link crawl's CPU goes: CPU seconds per page of the crawl, its fetch workers and nginx.

    .venv/bin/python -m bench.suites.links_cpu links 5          crawl --links on 100,000 pages
    .venv/bin/python -m bench.suites.links_cpu page-checks 4    crawl --page-checks on 10,000 pages
    .venv/bin/python -m bench.suites.links_cpu bare 5           the bare loop of bench/suites/links.py

Runs one tool once on bench/links_site.py's site of 10**DIGITS pages (the commands of
bench/suites/links.py) and samples `utime + stime` from /proc every 0.1 s: of the tool's process, of
each child (a fetch worker) before it exits, and of nginx's processes. On two cores the
parent, the workers and nginx share the machine, so their sum per page is what bounds the
crawl's pages/s. One run, one tool: read the split, and take rates from bench/suites/links.py (it
interleaves the tools). Prints one line. Run it under `flock /tmp/bench.lock`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time

from bench.common import PY, ROOT
from bench.links_site import Site

HZ = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / HZ


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                out.append(int(entry))
    return out


def nginx_pids() -> list[int]:
    found = subprocess.run(["pgrep", "nginx"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def command(tool: str, site: Site) -> list[str]:
    if tool == "bare":
        return [PY, "-m", "bench.suites.links", "bare", site.origin + "/"]
    target, flag = (site.links_sitemap, "--links") if tool == "links" else (
        site.all_sitemap, "--page-checks")  # fmt: skip
    return [PY, "-m", "audit", "crawl", target, flag, "--output", "/dev/null",
            "--rate", "unlimited", "--no-progress"]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tool", choices=("bare", "links", "page-checks"))
    ap.add_argument("digits", type=int, help="the site has 10**DIGITS pages")
    args = ap.parse_args()
    tool, digits = args.tool, args.digits
    with Site(digits, plain=tool == "page-checks") as site:
        ngx = {p: cpu_s(p) or 0.0 for p in nginx_pids()}
        site.mark()
        started = time.perf_counter()
        proc = subprocess.Popen(command(tool, site), cwd=ROOT, stdout=subprocess.DEVNULL)
        last: dict[int, float] = {}
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                for pid in (proc.pid, *children(proc.pid)):
                    value = cpu_s(pid)
                    if value is not None:
                        last[pid] = value

        sampler = threading.Thread(target=sample)
        sampler.start()
        proc.wait()
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        pages = site.served().get("pages", 0) or 1
        nginx = sum((cpu_s(p) or 0.0) - before for p, before in ngx.items())
        parent = last.get(proc.pid, 0.0)
        workers = sum(v for pid, v in last.items() if pid != proc.pid)
    print(
        f"{tool}: {pages} pages in {wall:.1f} s = {pages / wall:,.0f}/s | CPU ms/page: "
        f"parent {parent / pages * 1e3:.2f}, workers {workers / pages * 1e3:.2f}, "
        f"nginx {nginx / pages * 1e3:.2f}"
    )


if __name__ == "__main__":
    main()
