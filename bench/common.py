"""Shared helpers of the benchmark: paths, measured subprocesses, machine facts, tables.

Imports nothing of the product (`audit`): the benchmark measures the product from the
outside, through its CLI, so that a broken product shows as a failed row, not a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
RESULTS = BENCH / "results"
PY = sys.executable
CLI = str(Path(PY).parent / "sitemap-audit")
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    """One subprocess run: wall time from spawn to exit, its own peak RSS and CPU time."""

    cmd: list[str]
    rc: int
    wall_s: float
    maxrss_mb: float
    cpu_s: float
    stdout: str
    stderr: str
    timed_out: bool = False
    machine_busy: float = 0.0  # cores busy on the whole machine during the run (all processes)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_share(self) -> float:
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    def json_out(self) -> dict[str, Any]:
        """The last line of stdout parsed as JSON (what the bench helper scripts print)."""
        lines = [ln for ln in self.stdout.splitlines() if ln.strip()]
        if not lines:
            return {}
        try:
            value = json.loads(lines[-1])
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


def crawl_cmd(origin: str, report: Path, *extra: str, exe: list[str] | None = None) -> list[str]:
    """The benchmark's crawl: every URL of the site at an unlimited rate, 64 workers, a
    jsonl report to a file (so a run can be checked), no progress bar."""
    return [
        *(exe or [CLI]),
        "crawl",
        origin + "/",
        "--rate",
        "unlimited",
        "--concurrency",
        "64",
        "--format",
        "jsonl",
        "--output",
        str(report),
        "--no-progress",
        *extra,
    ]


def remove_state(db: Path) -> None:
    """Delete a state file and SQLite's companions, for a run on a new file."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def run_measured(
    cmd: list[str], *, timeout_s: float, tag: str, env: dict[str, str] | None = None
) -> Measured:
    """Run `cmd` under bench/measure.py (see there why) and return its wall time, peak RSS
    and CPU time; kill its whole process group past `timeout_s`. Output goes to files under
    OUT/logs so a chatty child can never block on a full pipe. Peak RSS of a command that
    starts processes of its own is the higher of its largest single process (ru_maxrss of
    RUSAGE_CHILDREN) and the tree's summed RSS sampled every 100 ms; CPU time is the sum
    over the tree."""
    logs = OUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    out_path, err_path = logs / f"{tag}.out", logs / f"{tag}.err"
    res_path = logs / f"{tag}.rusage.json"
    res_path.unlink(missing_ok=True)
    wrapped = [PY, "-S", str(BENCH / "measure.py"), str(res_path), *cmd]
    busy0 = machine_busy_s()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            wrapped,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=ROOT,
            env=env,
        )
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # Past the limit, or Ctrl-C / an error in the bench itself: never leave it running.
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        wall = time.perf_counter() - t0
    busy = (machine_busy_s() - busy0) / wall
    try:
        usage = json.loads(res_path.read_text())
    except (OSError, ValueError):
        usage = {"rc": proc.returncode, "wall_s": wall, "maxrss_kb": 0, "cpu_s": 0.0}
    return Measured(
        cmd=cmd,
        rc=int(usage["rc"]),
        wall_s=float(usage["wall_s"]),
        maxrss_mb=usage["maxrss_kb"] / 1024.0,  # Linux reports KiB
        cpu_s=float(usage["cpu_s"]),
        stdout=out_path.read_text(errors="replace"),
        stderr=err_path.read_text(errors="replace"),
        timed_out=timed_out,
        machine_busy=busy,
    )


def machine_busy_s() -> float:
    """CPU seconds spent so far by the whole machine (all cores, all processes), not idle."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def proc_cpu_s(pid: int) -> float:
    """User+system CPU seconds used so far by a live process (0.0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # After the ")" closing comm: state is field 3, utime field 14, stime field 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def children_of(pid: int) -> list[int]:
    """Direct children of `pid`, found by scanning /proc (no psutil needed)."""
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            kids.append(int(entry.name))
    return kids


def cmd_version(cmd: list[str], pattern: str) -> str:
    if shutil.which(cmd[0]) is None:
        return "not installed"
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(pattern, res.stdout + res.stderr)
    return m.group(1) if m else "unknown"


def machine_facts() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import aiohttp
    import lxml.etree

    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": f"{mem_gib:.1f} GiB",
        "os": platform.platform(),
        "python": platform.python_version(),
        "lxml": ".".join(str(x) for x in lxml.etree.LXML_VERSION),
        "libxml2": ".".join(str(x) for x in lxml.etree.LIBXML_VERSION),
        "aiohttp": aiohttp.__version__,
        "nginx": cmd_version(["nginx", "-v"], r"nginx/(\S+)"),
        "wrk": cmd_version(["wrk", "-v"], r"wrk (\S+)"),
        "sitemap-audit": cmd_version([CLI, "--version"], r"(\d+\.\d+\S*)"),
        "git": _git_head(),
    }


def _git_head() -> str:
    try:
        res = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return res.stdout.strip()[:90] or "unknown"


HEADERS = ["tool", "URLs/entries", "wall s", "per s", "peak RSS MB", "ratio", "goal met"]


def table(rows: list[list[str]], headers: list[str] = HEADERS) -> str:
    """A GitHub-flavoured markdown table, which also reads fine on a terminal."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "| " + " | ".join("-" * w for w in widths) + " |"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def fmt_int(n: float) -> str:
    return f"{n:,.0f}"


def yes_no(ok: bool | None) -> str:
    return "n/a" if ok is None else ("yes" if ok else "NO")
