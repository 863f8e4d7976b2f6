"""Run one command and report its own peak RSS and CPU time: the per-measurement wrapper.

    python bench/measure.py RESULT.json CMD [ARG...]

Why a wrapper: on Linux a child's ru_maxrss starts at the RSS of the process that forked
it (the high-water mark survives exec), so a measured process spawned straight from the
benchmark would inherit the benchmark's own RSS. This wrapper is small, so the floor it
passes on is small, and getrusage(RUSAGE_CHILDREN) here covers the one command only.

A command that runs several processes at once (the crawl's fetch workers, Scrapy under
advertools) uses the sum of their memory, which ru_maxrss (the largest single process)
does not show: a thread samples the tree's summed RSS from /proc every 100 ms, and
`maxrss_kb` is the higher of the two.

Writes {"rc", "wall_s", "maxrss_kb", "single_maxrss_kb", "tree_maxrss_kb", "cpu_s"} to
RESULT.json; exits with the command's status. Imports nothing of the product.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time

SAMPLE_S = 0.1


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return found


def main() -> int:
    result, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    tree_peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal tree_peak
        while not done.wait(SAMPLE_S):
            tree_peak = max(tree_peak, sum(_rss_kb(p) for p in _tree(proc.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rc = proc.wait()
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    tmp = result + ".tmp"
    with open(tmp, "w") as f:
        json.dump(
            {
                "rc": rc,
                "wall_s": wall,
                "maxrss_kb": max(ru.ru_maxrss, tree_peak),
                "single_maxrss_kb": ru.ru_maxrss,
                "tree_maxrss_kb": tree_peak,
                "cpu_s": ru.ru_utime + ru.ru_stime,
            },
            f,
        )
    os.replace(tmp, result)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
