"""Instructions per URL under callgrind: a measure of the crawl's work that the machine's
speed swings do not move.

    .venv/bin/python -m bench.suites.instructions      (about 5 minutes; needs valgrind)

Wall time on this shared machine swings 15-25% between two runs of the same command, so a
change of a few percent cannot be seen in bench/suites/run.py's tables. Counting the instructions
a run executes (valgrind's callgrind, user space only, every thread) can: the same command
gives the same count within about 1%, with PYTHONHASHSEED fixed.

Each tool runs on two generated sites of the same mix (2,000 and 10,000 URLs, served by
nginx on 127.0.0.1), so that the fixed cost (interpreter, imports, discovery) cancels out:
per URL = (count at 10,000 - count at 2,000) / 8,000. Tools: the bare aiohttp HEAD loop
(bench/bare_head.py, the same process as in the crawl table, URL list read before its
loop), `sitemap-audit crawl --fetch-workers 0` (all the crawl's work in the one process
callgrind watches), and the same crawl with `--state` on a new file.

What this leaves out, so read the ratios as the share of CPU work, not of time: kernel
work (system calls, loopback TCP: the bare loop runs on asyncio's selector loop, the
crawl on uvloop, which makes fewer system calls), and waits (the state's writer thread
runs on the other core). Writes bench/results/INSTRUCTIONS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

from bench import gen, server
from bench.common import (
    BENCH,
    OUT,
    PY,
    RESULTS,
    crawl_cmd,
    fmt_int,
    machine_facts,
    remove_state,
    table,
)

SIZES = (2_000, 10_000)  # URLs per site: two files of half each, the second gzipped
RUN_LIMIT_S = 900.0
_COLLECTED = re.compile(r"Collected : (\d+)")


def counted(cmd: list[str], tag: str) -> int:
    """Instructions executed by `cmd` (every thread), from callgrind's summary line."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # str hashes, set orders: one count per command
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--cache-sim=no",
            "--branch-sim=no",
            *cmd,
        ],
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        env=env,
    )
    found = _COLLECTED.findall(proc.stderr)
    if not found:
        tail = proc.stderr.strip().splitlines()[-3:]
        raise RuntimeError(f"{tag}: no instruction count (exit {proc.returncode}): {tail}")
    return int(found[-1])


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    if shutil.which("valgrind") is None:
        print(
            "bench/suites/instructions.py needs valgrind (apt-get install valgrind)",
            file=sys.stderr,
        )
        return 2
    t0 = time.perf_counter()
    counts: dict[str, dict[int, int]] = {"bare": {}, "crawl": {}, "state": {}}
    for size in SIZES:
        port = server.free_port()
        origin = f"http://127.0.0.1:{port}"
        site = gen.crawl_site(OUT / f"cg-site-{size}", origin, 2, size // 2, {2})
        with server.Nginx(site.root, port):
            # one process: callgrind follows no child, so a fetch worker's instructions
            # would go uncounted
            crawl = crawl_cmd(origin, OUT / f"cg-crawl-{size}.jsonl", "--fetch-workers", "0")
            db = OUT / f"cg-state-{size}.sqlite"
            remove_state(db)
            runs = {
                "bare": [PY, str(BENCH / "bare_head.py"), *map(str, site.children)],
                "crawl": crawl,
                "state": [*crawl, "--state", str(db)],
            }
            for key, cmd in runs.items():
                print(f"[instructions] {key}, {fmt_int(size)} URLs", file=sys.stderr, flush=True)
                counts[key][size] = counted(cmd, f"{key} at {size}")
    small, big = SIZES
    per_url = {k: (v[big] - v[small]) / (big - small) for k, v in counts.items()}
    labels = {
        "bare": "bare aiohttp HEAD loop (c=64, asyncio)",
        "crawl": "sitemap-audit crawl (c=64)",
        "state": "sitemap-audit crawl --state (new file)",
    }
    rows = [
        [
            labels[k],
            fmt_int(counts[k][small]),
            fmt_int(counts[k][big]),
            fmt_int(per_url[k]),
            f"{per_url['bare'] / per_url[k]:.2f}",
            f"{per_url[k] / per_url['crawl']:.2f}",
        ]
        for k in counts
    ]
    headers = [
        "tool",
        f"instructions, {fmt_int(small)} URLs",
        f"instructions, {fmt_int(big)} URLs",
        "per URL",
        "bare / tool (per URL)",
        "tool / crawl (per URL)",
    ]
    facts = machine_facts()
    text = "\n".join(
        [
            "# Instructions per URL (callgrind)",
            "",
            f"Written by `.venv/bin/python -m bench.suites.instructions` in "
            f"{time.perf_counter() - t0:.0f} s on {facts['date']}; see its docstring for "
            f"the method. Machine: {facts['cpu']}, {facts['cores']} cores; Python "
            f"{facts['python']}, aiohttp {facts['aiohttp']}; nginx {facts['nginx']}; "
            f"commit {facts['git']}.",
            "",
            table(rows, headers),
            "",
            "Per URL: (count at the larger site - count at the smaller) / the difference in "
            "URLs, so start-up and discovery cancel out. `bare / tool`: the crawl's rate if "
            "time followed user-space instructions (the crawl table's `x bare` column "
            "measures the same ratio in wall time). `tool / crawl`: the --state run's cost "
            "over the plain crawl, both threads counted (its writer thread runs on the other "
            "core).",
            "",
        ]
    )
    (RESULTS / "INSTRUCTIONS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
