"""Issue 18's benchmarks: `crawl --links` and `--page-checks` on a linked site, side by side.

    .venv/bin/python -m bench.suites.links                  100,000 pages, 3 repeats, the 1M run
    .venv/bin/python -m bench.suites.links --digits 4 --repeats 1 --million-digits 0 --profile-pages 0 \\
        --output bench/out/links-quick.md            a smoke run on 10,000 pages

nginx on 127.0.0.1 makes a linked site of 10**digits pages (bench/links_site.py: a decimal
tree, ~14 KB pages with ~45 links, a sitemap index listing every tenth page, robots.txt
allowing all). In each repeat, in rotating order, each of these runs as its own process:

- bare: this file's `bare` command, a single-process aiohttp loop (asyncio's own event loop)
  that GETs the root, reads each body, extracts `<a href>` with lxml and follows the
  internal links breadth-first, 32 requests in flight (the product's default concurrency);
- links: `python -m audit crawl SITEMAP --links --rate unlimited --output /dev/null`
  (every other setting its default: 32 in flight, fetch workers auto);
- advertools: advertools' `crawl` (Scrapy) following the same links from the root
  (bench/links_adv.py in bench/out/adv-venv, installed with pip when missing), 32 in flight,
  stopped after --adv-pages pages;
- page-checks: `python -m audit crawl SITEMAP-ALL --page-checks --rate unlimited --output
  /dev/null` on the same site with a sitemap listing every page (the "plain site").

A tool's pages are the 200 GETs of pages that nginx logged during its run; pages/s is that
over the process's wall time (start to exit, interpreter start included). Peak memory is the
summed RSS of the process tree sampled every 0.1 s from /proc. Then one `crawl --links
--max-pages 1000000` on a 10**--million-digits page site (peak memory at scale), and a
cProfile of a --profile-pages `crawl --links --fetch-workers 0` (where the time goes).

Writes the tables to --output (default bench/results/LINKS.md). On a shared machine, run it (or
`make bench`) under `flock /tmp/bench.lock`, never two benchmarks at once. Imports nothing of
the product.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

from bench.common import BENCH, OUT, PY, RESULTS, ROOT, fmt_int, machine_facts, table, yes_no
from bench.links_site import Site
from bench.measure import _rss_kb, _tree

CONCURRENCY = 32  # the product's default --concurrency
ADV_VENV = OUT / "adv-venv"
ADV_PY = ADV_VENV / "bin" / "python"
SAMPLE_S = 0.1
TOOLS = ("bare", "links", "advertools", "page-checks")


# -- the bare loop (its own process: `links.py bare URL`) ------------------------------------


async def bare_crawl(start: str, concurrency: int) -> Counter[str]:
    """Breadth-first GET of every internal page from `start`, links extracted with lxml."""
    import aiohttp
    from lxml import etree

    prefix = start.split("/", 3)
    inside = "/".join(prefix[:3]) + "/"
    seen = {start}
    queue: asyncio.Queue[str] = asyncio.Queue()
    queue.put_nowait(start)
    counts: Counter[str] = Counter()
    parser = etree.HTMLParser()
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=30)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def fetch(url: str) -> None:
            async with session.get(url) as resp:
                body = await resp.read()
                counts[str(resp.status)] += 1
                if resp.status != 200 or not body:
                    return
            root = etree.fromstring(body, parser)
            for a in root.iter("a"):
                href = a.get("href")
                if not href:
                    continue
                link = urldefrag(urljoin(url, href))[0]
                if link.startswith(inside) and link not in seen:
                    seen.add(link)
                    queue.put_nowait(link)

        async def worker() -> None:
            while True:
                url = await queue.get()
                try:
                    await fetch(url)
                except (aiohttp.ClientError, TimeoutError):
                    counts["errors"] += 1
                finally:
                    queue.task_done()

        workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
        await queue.join()
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return counts


def bare_main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.suites.links bare")
    ap.add_argument("start")
    ap.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    counts = asyncio.run(bare_crawl(args.start, args.concurrency))
    print(json.dumps({"statuses": dict(counts), "loop_s": time.perf_counter() - t0}))


# -- measured runs --------------------------------------------------------------------------


@dataclass
class Run:
    tool: str
    cmd: list[str]
    rc: int
    wall_s: float
    peak_mb: float
    cpu_s: float
    timed_out: bool
    served: dict[str, int] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""

    @property
    def pages(self) -> int:
        return self.served.get("pages", 0)

    @property
    def rate(self) -> float:
        return self.pages / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.rc in (0, 1) and self.pages > 0


def _sample_tree(pid: int, done: threading.Event, peak: list[int]) -> None:
    while not done.wait(SAMPLE_S):
        peak[0] = max(peak[0], sum(_rss_kb(p) for p in _tree(pid)))


def run_tree(
    tool: str, cmd: list[str], site: Site, *, timeout_s: float, env: dict[str, str] | None = None
) -> Run:
    """Run `cmd` in its own session; wall time, the tree's peak RSS, CPU (wait4), and what
    nginx served meanwhile. Past `timeout_s` the whole session is killed (the figures stay)."""
    logs = OUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    out_path, err_path = logs / f"links-{tool}.out", logs / f"links-{tool}.err"
    site.mark()
    peak = [0]
    done = threading.Event()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT, env=env,
            start_new_session=True,
        )  # fmt: skip
        sampler = threading.Thread(target=_sample_tree, args=(proc.pid, done, peak), daemon=True)
        sampler.start()
        timer = threading.Timer(timeout_s, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            done.set()
        wall = time.perf_counter() - t0
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    with_kill = proc.returncode == -signal.SIGKILL and wall >= timeout_s
    return Run(
        tool=tool,
        cmd=cmd,
        rc=proc.returncode,
        wall_s=wall,
        peak_mb=peak[0] / 1024.0,
        cpu_s=usage.ru_utime + usage.ru_stime,
        timed_out=with_kill,
        served=site.served(),
        stdout=out_path.read_text(errors="replace")[-2000:],
        stderr=err_path.read_text(errors="replace")[-2000:],
    )


def ours(*args: str) -> list[str]:
    return [PY, "-m", "audit", "crawl", *args, "--rate", "unlimited", "--no-progress"]


def commands(site: Site, adv_pages: int, adv_limit: int) -> dict[str, list[str]]:
    start = site.origin + "/"
    adv_out = str(OUT / "links-adv.jl")
    adv = [str(ADV_PY), str(BENCH / "links_adv.py"), start, adv_out]
    return {
        "bare": [PY, "-m", "bench.suites.links", "bare", start, "--concurrency", str(CONCURRENCY)],
        "links": ours(site.links_sitemap, "--links", "--output", "/dev/null"),
        "advertools": [*adv, "--pages", str(adv_pages), "--limit", str(adv_limit)],
        "page-checks": ours(site.all_sitemap, "--page-checks", "--output", "/dev/null"),
    }


def ensure_adv() -> str:
    """bench/out/adv-venv with advertools; '' when ready, else why not."""
    if not ADV_PY.is_file():
        made = subprocess.run([sys.executable, "-m", "venv", str(ADV_VENV)], check=False)
        if made.returncode != 0:
            return "python -m venv bench/out/adv-venv failed"
    has = subprocess.run([str(ADV_PY), "-c", "import advertools"], capture_output=True, check=False)
    if has.returncode == 0:
        return ""
    pip = [str(ADV_PY), "-m", "pip", "install", "-q", "advertools"]
    res = subprocess.run(pip, capture_output=True, text=True, timeout=1200, check=False)
    return "" if res.returncode == 0 else f"pip install advertools failed: {res.stderr[-200:]}"


def adv_env() -> dict[str, str]:
    # advertools runs `scrapy` from PATH: the venv's own
    return {**os.environ, "PATH": f"{ADV_VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}


def side_by_side(args: argparse.Namespace, site: Site, tools: list[str]) -> dict[str, list[Run]]:
    cmds = commands(site, args.adv_pages, args.adv_limit)
    runs: dict[str, list[Run]] = {t: [] for t in tools}
    for r in range(args.repeats):
        order = tools[r % len(tools) :] + tools[: r % len(tools)]
        for tool in order:
            env = adv_env() if tool == "advertools" else None
            run = run_tree(tool, cmds[tool], site, timeout_s=args.limit, env=env)
            runs[tool].append(run)
            print(
                f"[{r + 1}/{args.repeats}] {tool}: {run.pages} pages in {run.wall_s:.1f} s = "
                f"{run.rate:,.0f}/s, peak {run.peak_mb:.0f} MB, rc {run.rc}"
                + (" TIMED OUT" if run.timed_out else ""),
                flush=True,
            )
    return runs


def million(args: argparse.Namespace) -> Run | None:
    if not args.million_digits:
        return None
    with Site(args.million_digits) as site:
        cap = str(site.pages)
        cmd = ours(site.links_sitemap, "--links", "--max-pages", cap, "--output", "/dev/null")
        run = run_tree("million", cmd, site, timeout_s=args.million_limit)
    print(
        f"million: {run.pages} pages in {run.wall_s:.1f} s = {run.rate:,.0f}/s, "
        f"peak {run.peak_mb:.0f} MB, rc {run.rc}" + (" TIMED OUT" if run.timed_out else ""),
        flush=True,
    )
    return run


Prof = tuple[Run, list[list[str]], list[list[str]], float]


def profile(args: argparse.Namespace, site: Site) -> Prof | None:
    """cProfile of a one-process `crawl --links` of about --profile-pages pages."""
    if not args.profile_pages:
        return None
    listed = site.pages // 10
    beyond = max(1, args.profile_pages - listed)
    prof = OUT / "links-profile.prof"
    crawl = ours(site.links_sitemap, "--links", "--fetch-workers", "0", "--max-pages", str(beyond))
    cmd = [PY, "-m", "cProfile", "-o", str(prof), *crawl[1:], "--output", "/dev/null"]
    run = run_tree("profile", cmd, site, timeout_s=args.limit)
    print(f"profile: {run.pages} pages in {run.wall_s:.1f} s under cProfile", flush=True)
    return run, *profile_tables(prof, args.profile_top)


def profile_tables(prof: Path, top: int) -> tuple[list[list[str]], list[list[str]], float]:
    """The top functions by own time (all code), and the product's by cumulative time
    (without the entry points that hold the whole run)."""
    stats = pstats.Stats(str(prof))
    total: float = stats.total_tt  # type: ignore[attr-defined]
    entries = list(stats.stats.items())  # type: ignore[attr-defined]
    by_own = sorted(entries, key=lambda kv: kv[1][2], reverse=True)[:top]
    product = str(ROOT / "audit") + "/"
    steps = [kv for kv in entries if kv[0][0].startswith(product) and kv[1][3] < 0.95 * total]
    by_cum = sorted(steps, key=lambda kv: kv[1][3], reverse=True)[:top]
    return _prof_rows(by_own, total), _prof_rows(by_cum, total), total


def _prof_rows(entries: list[tuple[Any, Any]], total: float) -> list[list[str]]:
    rows = []
    for (path, line, name), (_cc, ncalls, tottime, cumtime, _callers) in entries:
        where = f"{_short(path)}:{line}" if line else path
        rows.append(
            [f"`{name}`", where, fmt_int(ncalls), f"{tottime:.2f}", f"{100 * tottime / total:.1f}%",
             f"{cumtime:.2f}", f"{100 * cumtime / total:.1f}%"]
        )  # fmt: skip
    return rows


def _short(path: str) -> str:
    for marker in ("/site-packages/", "/lib/python3.11/", str(ROOT) + "/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


# -- the report -------------------------------------------------------------------------------


def median_rate(runs: list[Run]) -> float:
    good = [r.rate for r in runs if r.ok]
    return statistics.median(good) if good else 0.0


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


GOALS = {  # tool: (what it is compared with, goal, wording)
    "links": ("bare", 0.7, ">= 0.7x bare"),
    "page-checks": ("bare", 0.7, ">= 0.7x bare"),
}


def figure_rows(runs: dict[str, list[Run]]) -> list[list[str]]:
    rates = {t: median_rate(rs) for t, rs in runs.items()}
    rows = []
    for tool, rs in runs.items():
        each = ", ".join(f"{r.rate:,.0f}" + ("" if r.ok else "!") for r in rs)
        ratio, goal, met = "", "", ""
        if tool in GOALS:
            base, want, goal = GOALS[tool]
            x = _ratio(rates[tool], rates.get(base, 0.0))
            ratio, met = f"{x:.2f}x bare", yes_no(x >= want if rates.get(base) else None)
        if tool == "links" and "advertools" in rates:
            x = _ratio(rates["links"], rates["advertools"])
            ratio += f"; {x:.1f}x advertools"
            goal += "; >= 5x advertools"
            met += "; " + yes_no(x >= 5 if rates["advertools"] else None)
        pages = statistics.median([r.pages for r in rs]) if rs else 0
        wall = statistics.median([r.wall_s for r in rs]) if rs else 0.0
        peak = max((r.peak_mb for r in rs), default=0.0)
        rows.append(
            [tool, fmt_int(pages), f"{wall:.1f}", fmt_int(rates[tool]), each, f"{peak:.0f}",
             ratio, goal, met]
        )  # fmt: skip
    return rows


FIG_HEADERS = [
    "tool", "pages (median)", "wall s (median)", "pages/s (median)", "pages/s each run",
    "peak RSS MB (tree, max)", "ratio", "goal", "met",
]  # fmt: skip
PROF_HEADERS = ["function", "where", "calls", "tottime s", "own share", "cumtime s", "cum share"]


def command_lines(runs: dict[str, list[Run]], extra: list[Run]) -> list[str]:
    lines = []
    for tool, rs in runs.items():
        if rs:
            lines.append(f"- {tool}: `{_shown(rs[0].cmd)}`")
    lines += [f"- {r.tool}: `{_shown(r.cmd)}`" for r in extra]
    return lines


def _shown(cmd: list[str]) -> str:
    text = shlex.join(cmd)
    for long, short in ((str(ROOT) + "/", ""), (PY, ".venv/bin/python")):
        text = text.replace(long, short)
    return text


def report(
    args: argparse.Namespace,
    runs: dict[str, list[Run]],
    big: Run | None,
    prof: Prof | None,
    notes: list[str],
    facts: dict[str, str],
) -> str:
    out = [
        "# crawl --links and --page-checks on a linked site (issue 18)",
        "",
        f"`{_shown([PY, 'bench/suites/links.py', *sys.argv[1:]])}` (run under `flock /tmp/bench.lock`), "
        f"started {facts['date']}, git `{facts['git']}`.",
        f"{facts['cpu']}, {facts['cores']} cores, {facts['memory']}; Python {facts['python']}, "
        f"aiohttp {facts['aiohttp']}, lxml {facts['lxml']}, nginx {facts['nginx']}.",
        "",
        f"Site: nginx on 127.0.0.1 makes {10**args.digits:,} pages (bench/links_site.py: a decimal "
        "tree, the root and /p/1 .. /p/"
        f"{10**args.digits - 1}, each inner page linking to its ten children; ~14 KB pages with "
        "a head of title, description, canonical and JSON-LD, and ~45 links: 11 navigation "
        "and parent links, up to 10 children, 20 external, a fragment and a mailto link; SSI "
        "templates, no page file). `crawl --links` starts from a sitemap index listing every "
        "tenth page; `--page-checks` from one listing every page. Pages are the 200 GETs of "
        "pages nginx logged during the run; pages/s is pages over the process's wall time. "
        f"{args.repeats} repeats in rotating order; the figure is the median ('!' marks a "
        "failed or timed-out run, left out of the median). Peak RSS: the summed RSS of the "
        "process tree (advertools: with its Scrapy child; the crawl: with its fetch workers), "
        "sampled every 0.1 s.",
        "",
        table(figure_rows(runs), FIG_HEADERS),
        "",
    ]
    if big is not None:
        out += [
            f"Memory at scale: `crawl --links --max-pages {10**args.million_digits}` "
            f"on a {10**args.million_digits:,}-page site: {fmt_int(big.pages)} pages in "
            f"{big.wall_s:,.0f} s ({big.rate:,.0f}/s), peak RSS of the process tree "
            f"**{big.peak_mb:,.0f} MB** (goal < 500 MB: {yes_no(big.peak_mb < 500 and big.ok)})"
            + (", stopped by the time limit" if big.timed_out else "")
            + f", exit status {big.rc}.",
            "",
        ]
    out += [
        "Commands (the site's port varies per run):",
        "",
        *command_lines(runs, [big] if big else []),
    ]
    if prof is not None:
        out += profile_section(*prof)
    if notes:
        out += ["", "Notes:", "", *(f"- {n}" for n in notes)]
    return "\n".join(out) + "\n"


def profile_section(
    run: Run, own: list[list[str]], cum: list[list[str]], total: float
) -> list[str]:
    return [
        "",
        f"## Where the time of `crawl --links` goes ({fmt_int(run.pages)} pages, one process)",
        "",
        f"`{_shown(run.cmd)}`: {run.wall_s:.0f} s wall under cProfile, {total:.1f} s profiled "
        "(the main process; cProfile counts each resumption of a coroutine as a call). Top "
        "functions by own time (tottime):",
        "",
        table(own, PROF_HEADERS),
        "",
        "The product's functions by cumulative time (the steps that hold the time):",
        "",
        table(cum, PROF_HEADERS),
    ]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "bare":
        bare_main(sys.argv[2:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--digits", type=int, default=5, help="site of 10**D pages (default 5)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset")
    ap.add_argument("--adv-pages", type=int, default=10_000, help="advertools' page cap")
    ap.add_argument("--adv-limit", type=int, default=600, help="advertools' time cap, s")
    ap.add_argument("--limit", type=float, default=1800.0, help="seconds per run at most")
    ap.add_argument("--million-digits", type=int, default=6, help="0: no memory-at-scale run")
    ap.add_argument("--million-limit", type=float, default=3600.0)
    ap.add_argument("--profile-pages", type=int, default=20_000, help="0: no profile")
    ap.add_argument("--profile-top", type=int, default=25)
    ap.add_argument("--output", default=str(RESULTS / "LINKS.md"))
    args = ap.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    facts = machine_facts()  # at the start: the commit measured
    notes: list[str] = []
    if "advertools" in tools and (why := ensure_adv()):
        notes.append(f"advertools not measured: {why}")
        tools.remove("advertools")
    with Site(args.digits, plain="page-checks" in tools) as site:
        runs = side_by_side(args, site, tools)
        prof = profile(args, site)
    big = million(args)
    text = report(args, runs, big, prof, notes, facts)
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
