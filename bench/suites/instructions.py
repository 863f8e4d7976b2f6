"""Instructions per URL under callgrind: a measure of the crawl's work that the machine's
speed swings do not move.

    .venv/bin/python -m bench.suites.instructions      (about 5 minutes; needs valgrind)
    .venv/bin/python -m bench.suites.instructions --base c914850,main --tools crawl

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

`--base REF[,REF...]` counts the same crawl of other commits too (a git worktree of each
under bench/out, run with its own `audit` package, as bench/suites/versus.py does), so
trees are compared by one command on the same sites; `--tools` picks the rows to count
(bare, crawl, state; default all three).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench import gen, server
from bench.common import (
    BENCH,
    OUT,
    PY,
    RESULTS,
    ROOT,
    crawl_cmd,
    fmt_int,
    machine_facts,
    remove_state,
    table,
)

SIZES = (2_000, 10_000)  # URLs per site: two files of half each, the second gzipped
RUN_LIMIT_S = 900.0
_COLLECTED = re.compile(r"Collected : (\d+)")


def counted(cmd: list[str], tag: str, tree: Path | None = None) -> int:
    """Instructions executed by `cmd` (every thread), from callgrind's summary line; with
    `tree`, run in that tree with its own `audit` package."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # str hashes, set orders: one count per command
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
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
        cwd=tree,
    )
    found = _COLLECTED.findall(proc.stderr)
    if not found:
        tail = proc.stderr.strip().splitlines()[-3:]
        raise RuntimeError(f"{tag}: no instruction count (exit {proc.returncode}): {tail}")
    return int(found[-1])


def base_tree(ref: str) -> tuple[Path, str]:
    """A worktree of `ref` under bench/out, ready to run (bytecode, dependencies), and the
    short commit it is at."""
    from bench.suites.versus import check_import, ensure_dependencies

    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ref],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = OUT / f"cg-base-{sha}"
    if not tree.is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), sha], check=True
        )
    subprocess.run([PY, "-m", "compileall", "-q", str(tree / "audit")], check=True)
    ensure_dependencies(tree)
    check_import(tree)
    return tree, sha


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="", help="comma list of git refs whose crawl is counted too")
    ap.add_argument(
        "--tools", default="bare,crawl,state", help="comma list of bare,crawl,state (or none)"
    )
    args = ap.parse_args()
    tools = [t for t in args.tools.split(",") if t]  # none: the --base trees alone
    if not (tools or args.base) or not set(tools) <= {"bare", "crawl", "state"}:
        print(f"--tools: bare, crawl or state, not {args.tools!r}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print(
            "bench/suites/instructions.py needs valgrind (apt-get install valgrind)",
            file=sys.stderr,
        )
        return 2
    t0 = time.perf_counter()
    bases = [base_tree(ref) for ref in args.base.split(",") if ref]
    counts: dict[str, dict[int, int]] = {k: {} for k in tools}
    for _, sha in bases:
        counts[f"at {sha}"] = {}
    try:
        count_all(counts, {f"at {sha}": tree for tree, sha in bases})
    finally:
        for tree, _ in bases:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )
    write(counts, args, time.perf_counter() - t0)
    return 0


def count_all(counts: dict[str, dict[int, int]], bases: dict[str, Path]) -> None:
    """Fill `counts` (tool -> size -> instructions) for its tools, each size's site served
    by one nginx; "at SHA" is the crawl of that commit's tree (`bases`)."""
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
            for key in bases:
                runs[key] = crawl_cmd(
                    origin, OUT / f"cg-base-{size}.jsonl", "--fetch-workers", "0",
                    exe=[PY, "-m", "audit"],
                )  # fmt: skip
            for key in counts:
                print(f"[instructions] {key}, {fmt_int(size)} URLs", file=sys.stderr, flush=True)
                counts[key][size] = counted(runs[key], f"{key} at {size}", bases.get(key))


def write(counts: dict[str, dict[int, int]], args: argparse.Namespace, took: float) -> None:
    """The table, into bench/results/INSTRUCTIONS.md and on stdout."""
    small, big = SIZES
    per_url = {k: (v[big] - v[small]) / (big - small) for k, v in counts.items()}
    labels = {
        "bare": "bare aiohttp HEAD loop (c=64, asyncio)",
        "crawl": "sitemap-audit crawl (c=64)",
        "state": "sitemap-audit crawl --state (new file)",
    }
    rows = [
        [
            labels.get(k, f"sitemap-audit crawl (c=64) {k}"),
            fmt_int(counts[k][small]),
            fmt_int(counts[k][big]),
            fmt_int(per_url[k]),
            f"{per_url['bare'] / per_url[k]:.2f}" if "bare" in per_url else "-",
            f"{per_url[k] / per_url['crawl']:.2f}" if "crawl" in per_url else "-",
        ]
        for k in counts
    ]
    command = ".venv/bin/python -m bench.suites.instructions"
    if args.base:
        command += f" --base {args.base}"
    if args.tools != "bare,crawl,state":
        command += f" --tools {args.tools or repr('')}"
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
            f"Written by `{command}` in "
            f"{took:.0f} s on {facts['date']}; see its docstring for "
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
            "core); a row `at REF`: the same crawl of that commit's tree (`--base`), whose "
            "`tool / crawl` is its cost over this tree's.",
            "",
        ]
    )
    (RESULTS / "INSTRUCTIONS.md").write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
