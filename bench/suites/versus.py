"""Before/after speed check of a restructure: the package at a base commit against HEAD.

    .venv/bin/python -m bench.suites.versus [--base REF] [--head REF] [--repeats N]
                                            [--modes validate,crawl,...] [--record]

Makes a git worktree of REF (default c914850, the commit before issue 15's restructure)
under bench/out/base-REF (removed at the end) and measures, in one run and interleaved
(base, head, bare in every repeat), each tree's own `audit` package (cwd and PYTHONPATH
set to the tree, checked by importing it) through `python -m audit`. The head is the
working tree, or with --head a worktree of that REF (bench/out/head-REF, removed at the
end: edits made while the run waits for the bench lock do not leak into it):

- validate: a generated local set (bench/gen.py, 200,000 entries) against the bare lxml
  loop (bench/bare_iterparse.py), timed as bench/suites/run.py times its validate row;
- crawl: a generated site of --crawl-urls URLs (default 100,000) on nginx (bench/server.py), bench/common.py's
  crawl_cmd, against the bare aiohttp HEAD loop (bench/bare_head.py); every report must
  hold one url record per listed URL;
- page-checks, links (only with --modes): the same crawl with `--page-checks` or
  `--links`, against the bare loop with --get --parse (a GET of every URL, its body read
  and parsed by lxml's HTML parser).

--modes picks and orders the rows (default validate,crawl: the output of before). A mode
whose option a tree's `crawl --help` does not list stops the run before it starts.
Prints a markdown table (median and best of the repeats, x bare, head/base) and writes
bench/out/versus.md; --record also puts it into bench/results/VERSUS.md, newest first
(after the file's opening paragraph). Imports nothing of the product.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench import gen, server
from bench.common import (
    BENCH,
    OUT,
    PY,
    RESULTS,
    ROOT,
    Measured,
    crawl_cmd,
    machine_facts,
    run_measured,
    table,
)

VALIDATE_FILES, VALIDATE_PER_FILE = 4, 50_000  # 200,000 entries, one file gzipped
CRAWL_FILES = 2  # children of the site's index, one gzipped, as bench/suites/run.py's crawl
LIMIT_S = 600.0
BASE_URL = "https://bench.example/sitemap_index.xml"
# mode -> the options it adds to bench/common.py's crawl_cmd (validate is not a crawl)
CRAWL_MODES: dict[str, list[str]] = {
    "crawl": [],
    "page-checks": ["--page-checks"],
    "links": ["--links"],
}
MODES = ("validate", *CRAWL_MODES)
DEFAULT_MODES = "validate,crawl"


def log(msg: str) -> None:
    print(f"[versus {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def tree_env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def ensure_dependencies(tree: Path) -> None:
    """Install into this venv what `tree`'s pyproject requires and the venv lacks (an
    older tree may need a dependency this version dropped)."""
    import re
    import tomllib
    from importlib import metadata

    declared = tomllib.loads((tree / "pyproject.toml").read_text())["project"]["dependencies"]
    missing = []
    for requirement in declared:
        name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(requirement)
    if missing:
        log(f"{tree.name}: installing {', '.join(missing)}")
        subprocess.run([PY, "-m", "pip", "install", "--quiet", *missing], check=True)


def check_import(tree: Path) -> str:
    """The `audit` package a run in `tree` imports; it must be the tree's own."""
    out = subprocess.run(
        [PY, "-c", "import audit; print(audit.__file__)"],
        cwd=tree,
        env=tree_env(tree),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if Path(out).resolve() != (tree / "audit" / "__init__.py").resolve():
        raise SystemExit(f"{tree}: imports audit from {out}, not its own")
    return out


def measured(cmd: list[str], tag: str, tree: Path | None) -> Measured:
    """run_measured, with cwd and PYTHONPATH set to `tree` for a product run."""
    if tree is None:
        return run_measured(cmd, timeout_s=LIMIT_S, tag=tag)
    # run_measured starts its wrapper in ROOT; `cd` to the tree so `-m audit` sees only it.
    return run_measured(
        ["/bin/sh", "-c", 'cd "$0" && exec "$@"', str(tree), *cmd],
        timeout_s=LIMIT_S,
        tag=tag,
        env=tree_env(tree),
    )


def count_records(path: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    with path.open("rb") as f:
        for raw in f:
            rec = json.loads(raw)
            counts[rec.get("type", "?")] += 1
            if rec.get("type") == "url" and rec.get("source") != "links":
                counts["listed-url"] += 1  # --links adds records of pages found by links
            if rec.get("type") == "sitemap" and rec.get("kind") == "urlset":
                counts["urlset-entries"] += int(rec.get("entries") or 0)
    return counts


def fail(m: Measured, what: str) -> SystemExit:
    tail = (m.stderr.strip().splitlines() or ["no stderr"])[-1][:200]
    return SystemExit(f"{what} failed: exit {m.rc}: {tail}")


def validate_run(who: str, tree: Path | None, s: gen.SitemapSet, rep: int) -> float:
    tag = f"versus-validate-{who}-{rep}"
    if tree is None:
        m = measured([PY, str(BENCH / "bare_iterparse.py"), *map(str, s.children)], tag, None)
        if m.rc != 0 or m.json_out().get("entries") != s.entries:
            raise fail(m, "bare iterparse loop")
        return m.wall_s
    report = OUT / f"{tag}.jsonl"
    cmd = [PY, "-m", "audit", "validate", str(s.index), "--base-url", BASE_URL]
    cmd += ["--format", "jsonl", "--output", str(report), "--no-progress"]
    m = measured(cmd, tag, tree)
    got = count_records(report)["urlset-entries"] if report.is_file() else 0
    if m.rc not in (0, 1) or got != s.entries:
        raise fail(m, f"{who} validate ({got} of {s.entries} entries)")
    return m.wall_s


def parse_modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown or len(set(modes)) != len(modes):
        raise SystemExit(
            f"versus.py: error: --modes {text!r}: a comma list of distinct modes of {', '.join(MODES)}"
        )
    return modes


def check_modes(tree: Path, who: str, modes: list[str]) -> None:
    """Stop before measuring when `tree`'s crawl lacks a mode's option (c914850 has no --links)."""
    flags = [f for m in modes for f in CRAWL_MODES.get(m, [])]
    if not flags:
        return
    helptext = subprocess.run(
        [PY, "-m", "audit", "crawl", "--help"],
        cwd=tree,
        env=tree_env(tree),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    missing = [f for f in flags if f not in helptext]
    if missing:
        raise SystemExit(f"versus.py: error: {who} tree ({tree.name}) has no {', '.join(missing)}")


def crawl_run(who: str, tree: Path | None, site: gen.Site, rep: int, mode: str = "crawl") -> float:
    tag = f"versus-{mode}-{who}-{rep}"
    extra = CRAWL_MODES[mode]
    if tree is None:
        cmd = [PY, str(BENCH / "bare_head.py"), "--concurrency", "64", *map(str, site.children)]
        if extra:  # a run that reads pages against a loop that reads and parses them
            cmd[2:2] = ["--get", "--parse"]
        m = measured(cmd, tag, None)
        out = m.json_out()
        if m.rc != 0 or out.get("urls") != site.urls or out.get("errors"):
            raise fail(m, f"bare aiohttp loop ({out})")
        return float(out["loop_s"])  # as bench/suites/run.py: the loop, locs read before the clock
    report = OUT / f"{tag}.jsonl"
    m = measured(crawl_cmd(site.origin, report, *extra, exe=[PY, "-m", "audit"]), tag, tree)
    got = count_records(report)["listed-url"] if report.is_file() else 0
    if m.rc not in (0, 1) or got != site.urls:
        raise fail(m, f"{who} {mode} ({got} url records of listed URLs, of {site.urls})")
    report.unlink()
    return m.wall_s


def summary(times: dict[str, list[float]], count: int, unit: str) -> list[list[str]]:
    """Rows per tool: median and best time, rate, x bare (bare time / tool time, i.e. the
    tool's rate as a share of the bare loop's: median of the repeats' pairs, and best/best),
    head/base (time, median of pairs and best/best)."""
    bare = times["bare"]
    rows = []
    for who in ("base", "head", "bare"):
        t = times[who]
        med, best = statistics.median(t), min(t)
        if who == "bare":
            xb = "-"
        else:
            xb = f"{statistics.median(b / x for b, x in zip(bare, t, strict=True)):.2f} / "
            xb += f"{min(bare) / best:.2f}"
        if who == "head":
            hb = statistics.median(h / b for h, b in zip(t, times["base"], strict=True))
            hb_s = f"{hb:.3f} / {best / min(times['base']):.3f}"
        else:
            hb_s = "-"
        rows.append(
            [
                who,
                f"{med:.2f} / {best:.2f}",
                f"{count / med:,.0f} / {count / best:,.0f}",
                xb,
                hb_s,
                " ".join(f"{x:.2f}" for x in t),
            ]
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="c914850", help="git ref of the base tree")
    ap.add_argument("--head", default=None, help="git ref of the head tree (default: this tree)")
    ap.add_argument("--record", action="store_true", help="add the tables to results/VERSUS.md")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--crawl-urls", type=int, default=100_000, help="size of the crawl site (even)")
    ap.add_argument(
        "--modes",
        default=DEFAULT_MODES,
        help=f"comma list, in order, of {', '.join(MODES)} (default {DEFAULT_MODES})",
    )
    args = ap.parse_args()
    modes = parse_modes(args.modes)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `finally` cleans up on kill too
    OUT.mkdir(parents=True, exist_ok=True)
    base = OUT / f"base-{args.base}"
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.base],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    head_sha = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h", *([args.head] if args.head else [])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ok, note = server.ensure_tools()
    if not ok:
        raise SystemExit(f"nginx/wrk: {note}")
    head = OUT / f"head-{head_sha}" if args.head else ROOT
    made = [(base, sha), *([(head, head_sha)] if args.head else [])]
    for tree, ref in made:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True
        )
    t0 = time.perf_counter()
    try:
        trees = {"base": base, "head": head}
        for who, tree in trees.items():
            # bytecode as an installed copy has it (this sandbox sets PYTHONDONTWRITEBYTECODE)
            subprocess.run([PY, "-m", "compileall", "-q", str(tree / "audit")], check=True)
            ensure_dependencies(tree)
            log(f"{who}: imports {check_import(tree)}")
            check_modes(tree, who, modes)
        order = [("base", base), ("head", head), ("bare", None)]
        vset = gen.validate_set(
            OUT / "v200k", files=VALIDATE_FILES, per_file=VALIDATE_PER_FILE, gzipped={2}
        )
        times: dict[str, dict[str, list[float]]] = {m: {w: [] for w, _ in order} for m in modes}
        port = server.free_port()
        site = gen.crawl_site(
            OUT / f"site-{args.crawl_urls}",
            f"http://127.0.0.1:{port}",
            CRAWL_FILES,
            args.crawl_urls // CRAWL_FILES,
            {2},
        )
        with server.Nginx(site.root, port):
            for rep in range(1, args.repeats + 1):
                for mode in modes:
                    for who, tree in order:
                        if mode == "validate":
                            t = validate_run(who, tree, vset, rep)
                        else:
                            t = crawl_run(who, tree, site, rep, mode)
                        times[mode][who].append(t)
                        log(f"repeat {rep}: {mode} {who} {t:.2f} s")
    finally:
        for tree, _ in made:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )
        with contextlib.suppress(OSError):
            subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)
    headers = [
        "tree",
        "wall s (median / best)",
        "per s (median / best)",
        "x bare (median / best)",
        "head/base time (median / best)",
        "runs, s",
    ]
    facts = machine_facts()
    cmd = f".venv/bin/python -m bench.suites.versus --base {args.base} --repeats {args.repeats}"
    cmd += f" --crawl-urls {args.crawl_urls}"
    if args.head:
        cmd += f" --head {args.head}"
    if args.modes != DEFAULT_MODES:
        cmd += f" --modes {','.join(modes)}"
    if args.record:
        cmd += " --record"
    lines = [
        f"# Before/after the restructure: {sha} (base) against {head_sha} (head)",
        "",
        f"Command: `{cmd}` ({args.repeats} repeats, interleaved base, head, bare; "
        f"{time.perf_counter() - t0:.0f} s in all). Date: {facts['date']}.",
        "",
    ]
    for mode in modes:
        if mode == "validate":
            title = (
                f"validate, {vset.entries:,} local entries ({VALIDATE_FILES} files, one gzipped)"
            )
            rows = summary(times[mode], vset.entries, "entries")
        else:
            title = f"{' '.join(['crawl', *CRAWL_MODES[mode]])}, {site.urls:,} URLs on nginx"
            title += " (127.0.0.1, one worker)"
            if CRAWL_MODES[mode]:
                title += "; bare is the GET+lxml loop (bare_head.py --get --parse)"
            rows = summary(times[mode], site.urls, "URLs")
        lines += [f"## {title}", "", table(rows, headers), ""]
    text = "\n".join(lines)
    (OUT / "versus.md").write_text(text)
    if args.record:
        record(text)
    print(text)
    return 0


def record(text: str) -> None:
    """The run's tables into results/VERSUS.md, newest first: after the opening paragraph,
    each heading one level down (the file's title stays the only top-level one)."""
    path = RESULTS / "VERSUS.md"
    old = path.read_text()
    cut = old.find("\n## ")
    cut = len(old) if cut < 0 else cut + 1
    section = "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())
    path.write_text(old[:cut] + section + "\n\n" + old[cut:])


if __name__ == "__main__":
    sys.exit(main())
