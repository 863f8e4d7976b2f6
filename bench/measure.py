"""Run one command and report its own peak RSS and CPU time: the per-measurement wrapper.

    python bench/measure.py RESULT.json CMD [ARG...]

Why a wrapper: on Linux a child's ru_maxrss starts at the RSS of the process that forked
it (the high-water mark survives exec), so a measured process spawned straight from the
benchmark would inherit the benchmark's own RSS. This wrapper is small, so the floor it
passes on is small, and getrusage(RUSAGE_CHILDREN) here covers the one command only.
Writes {"rc", "wall_s", "maxrss_kb", "cpu_s"} to RESULT.json; exits with the command's status.
Imports nothing of the product.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time


def main() -> int:
    result, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    rc = subprocess.call(cmd)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    tmp = result + ".tmp"
    with open(tmp, "w") as f:
        json.dump(
            {
                "rc": rc,
                "wall_s": wall,
                "maxrss_kb": ru.ru_maxrss,
                "cpu_s": ru.ru_utime + ru.ru_stime,
            },
            f,
        )
    os.replace(tmp, result)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
