"""The cost of `--state` (issue 6): crawl time of the same local site without and with
a state file, and the time of an incremental re-run of the unchanged site.

    .venv/bin/python -m bench.suites.state_cost [--urls 100000] [--repeats 2]

Site: bench/gen.py's crawl site (sitemap index + children, 85% 200 pages served by one
static file with ETag and Last-Modified, 5% 301, 5% 404, 5% robots-blocked) on nginx
(bench/server.py). Runs, each its own `sitemap-audit crawl` process, interleaved:

- plain: no --state
- first: --state on a fresh file (every URL requested, every result written)
- again: the same command and state after the first completed (conditional requests:
  nginx answers 304 to If-None-Match / If-Modified-Since, results carried forward)
- changed-only: the same plus --changed-only (nothing moved: no page is requested)

Plain and first run as a pair, in alternating order; on a shared machine a single run
may be 20% off, so besides the best of each row the script prints the ratio of each
pair (first / plain, wall and CPU) and their median, which is what to judge.

Prints a small markdown table; imports nothing of the product.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import gen, server
from bench.common import OUT, crawl_cmd, remove_state


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def crawl(origin: str, report: Path, *extra: str) -> tuple[float, float, dict[str, object]]:
    cmd = crawl_cmd(origin, report, *extra)
    started, cpu0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - started, _children_cpu() - cpu0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr[-500:]}")
    summary: dict[str, object] = {}
    with report.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith('{"type":"summary"') or '"type": "summary"' in line:
                summary = json.loads(line)
    return wall, cpu, summary


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=2)
    opts = ap.parse_args()
    per_file = 50_000 if opts.urls >= 50_000 else opts.urls
    files = max(1, opts.urls // per_file)
    port = server.free_port()
    origin = f"http://127.0.0.1:{port}"
    site = gen.crawl_site(OUT / f"site-{files * per_file}", origin, files, per_file, {2})
    work = OUT / "state-cost"
    work.mkdir(parents=True, exist_ok=True)
    times: dict[str, list[float]] = {"plain": [], "first": [], "again": [], "changed-only": []}
    cpus: dict[str, list[float]] = {k: [] for k in times}
    notes: dict[str, dict[str, object]] = {}
    ng = server.Nginx(site.root, port)
    ng.dir = work / "nginx"  # not bench/out/nginx: another benchmark may be using that one
    with ng:
        for rep in range(opts.repeats):
            state = work / f"state-{rep}.sqlite"
            remove_state(state)
            order = ["plain", "first"] if rep % 2 == 0 else ["first", "plain"]
            for name in order:
                extra = () if name == "plain" else ("--state", str(state))
                wall, cpu, summary = crawl(origin, work / f"{name}.jsonl", *extra)
                times[name].append(wall)
                cpus[name].append(cpu)
                print(f"{name}: {wall:.2f} s, cpu {cpu:.2f} s", file=sys.stderr)
            for name, extra2 in (("again", ()), ("changed-only", ("--changed-only",))):
                wall, cpu, summary = crawl(
                    origin, work / f"{name}.jsonl", "--state", str(state), *extra2
                )
                times[name].append(wall)
                cpus[name].append(cpu)
                notes[name] = {
                    k: summary.get(k)
                    for k in ("urls", "carried", "skipped_unchanged", "sitemaps_carried")
                }
                print(f"{name}: {wall:.2f} s, cpu {cpu:.2f} s {notes[name]}", file=sys.stderr)
    best = {k: min(v) for k, v in times.items()}
    cpu_best = {k: min(v) for k, v in cpus.items()}
    print(f"\n{site.urls:,} URLs, best of {opts.repeats} (wall and client CPU seconds)\n")
    print(
        "| run | wall s | wall ratio | CPU s | CPU ratio | notes |\n"
        "| --- | ---: | ---: | ---: | ---: | --- |"
    )
    for name in times:
        note = ", ".join(f"{k} {v}" for k, v in notes.get(name, {}).items() if v is not None)
        print(
            f"| {name} | {best[name]:.2f} | {best[name] / best['plain']:.2f} | "
            f"{cpu_best[name]:.2f} | {cpu_best[name] / cpu_best['plain']:.2f} | {note} |"
        )
    pairs_wall = [f / p for f, p in zip(times["first"], times["plain"], strict=True)]
    pairs_cpu = [f / p for f, p in zip(cpus["first"], cpus["plain"], strict=True)]
    print(
        "\nfirst / plain by pair (wall; CPU): "
        + ", ".join(f"{w:.3f}; {c:.3f}" for w, c in zip(pairs_wall, pairs_cpu, strict=True))
    )
    print(
        f"state cost, median of the pairs: wall {statistics.median(pairs_wall) - 1:+.1%}, CPU "
        f"{statistics.median(pairs_cpu) - 1:+.1%}; best of each: wall "
        f"{best['first'] / best['plain'] - 1:+.1%}, CPU "
        f"{cpu_best['first'] / cpu_best['plain'] - 1:+.1%} (goal under +15%)"
    )
    print(
        f"incremental re-run: {best['again'] / best['first']:.2f}x the first run's wall time "
        f"({cpu_best['again'] / cpu_best['first']:.2f}x CPU), --changed-only: "
        f"{best['changed-only'] / best['first']:.2f}x ({cpu_best['changed-only'] / cpu_best['first']:.2f}x CPU)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
