"""The benchmark's other Python environments, kept apart from the project's .venv.

- bench/out/alt-venv: the alternatives people use today (advertools, ultimate-sitemap-parser)
  and matplotlib for the plots, installed from PyPI with pip. Never the project's venv,
  never a project dependency.
- bench/out/nofast-venv: the product's runtime dependencies at exactly the versions of the
  project's .venv, without the optional extra `fast` (orjson, uvloop), so one crawl row runs
  on asyncio's loop and the standard library's json. The product itself is not installed
  there: it runs as `python -m audit` from the work tree (run_measured's cwd).

Also the HTTP-served copy of the 1,000,000-entry set the parsers read. Imports nothing of
the product.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

from bench import gen
from bench.common import OUT, PY, ROOT

ALT_VENV = OUT / "alt-venv"
NOFAST_VENV = OUT / "nofast-venv"
ALT_PACKAGES = ("advertools", "ultimate-sitemap-parser", "matplotlib")
INSTALL_LIMIT_S = 900.0


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or ["no output"])[-1][:200]


def _venv(path: Path) -> tuple[Path | None, str]:
    py = path / "bin" / "python"
    if py.is_file():
        return py, ""
    base = os.path.realpath(PY)  # the interpreter behind the project's venv
    try:
        subprocess.run(
            [base, "-m", "venv", str(path)], check=True, capture_output=True, timeout=300
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"python -m venv {path.name} failed: {exc.__class__.__name__}"
    return py, ""


def _pip(py: Path, *args: str) -> tuple[bool, str]:
    try:
        res = subprocess.run(
            [str(py), "-m", "pip", "install", "--disable-pip-version-check", *args],
            capture_output=True,
            text=True,
            timeout=INSTALL_LIMIT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, exc.__class__.__name__
    return res.returncode == 0, _last_line(res.stderr + res.stdout)


def ensure_alt_venv() -> tuple[Path | None, dict[str, str]]:
    """The alternatives' venv, its python (None if it could not be made) and, per package,
    its version or the error line of its failed install."""
    py, err = _venv(ALT_VENV)
    if py is None:
        return None, {name: err for name in ALT_PACKAGES}
    status: dict[str, str] = {}
    for name in ALT_PACKAGES:  # one at a time: one failed install must not stop the others
        version = installed_version(py, name)
        if version:
            status[name] = version
            continue
        ok, line = _pip(py, name)
        status[name] = (installed_version(py, name) or "?") if ok else f"install failed: {line}"
    for extra in ("scrapy", "pandas"):
        status[extra] = installed_version(py, extra) or "not installed"
    return py, status


def ensure_nofast_venv() -> tuple[Path | None, str]:
    """The product's runtime dependencies pinned to the project venv's versions, without
    orjson and uvloop. Returns (python, note)."""
    py, err = _venv(NOFAST_VENV)
    if py is None:
        return None, err
    stamp = NOFAST_VENV / ".bench-installed"
    freeze = subprocess.run(
        [PY, "-m", "pip", "freeze", "--exclude-editable", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    pins = "\n".join(
        ln for ln in freeze.splitlines() if not ln.lower().startswith(("orjson", "uvloop"))
    )
    if stamp.is_file() and stamp.read_text() == pins:
        return py, "ready"
    constraints = NOFAST_VENV / "constraints.txt"
    constraints.write_text(pins + "\n")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    ok, line = _pip(py, "-c", str(constraints), *deps)
    if not ok:
        return None, f"pip install of the product's dependencies failed: {line}"
    stamp.write_text(pins)
    return py, "installed"


def installed_version(py: Path, name: str) -> str:
    code = (
        "import importlib.metadata as m, sys\n"
        "try: print(m.version(sys.argv[1]))\n"
        "except m.PackageNotFoundError: pass\n"
    )
    try:
        res = subprocess.run(
            [str(py), "-c", code, name], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return res.stdout.strip()


def runtime_of(py: Path) -> dict[str, str]:
    """The event loop, jsonl encoder and fetch worker count the product picks in the
    environment of `py` (audit.core.eventloop.new_event_loop / loop_name; audit/report/jsonl.py
    takes orjson when it can import it; audit.http.workers.auto_worker_count)."""
    code = (
        "import importlib.util, json\n"
        "from audit.core.eventloop import loop_name, new_event_loop\n"
        "loop = new_event_loop()\n"
        "name = loop_name(loop)\n"
        "loop.close()\n"
        "enc = 'orjson' if importlib.util.find_spec('orjson') else 'json (stdlib)'\n"
        "from audit.http.workers import auto_worker_count\n"
        "print(json.dumps({'loop': name, 'json': enc, 'workers': auto_worker_count()}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SITEMAP_AUDIT_NO_UVLOOP"}
    try:
        res = subprocess.run(
            [str(py), "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=ROOT,
            env=env,
        )
        value = json.loads(res.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return {"loop": "unknown", "json": "unknown", "workers": "unknown"}
    return {
        "loop": str(value["loop"]),
        "json": str(value["json"]),
        "workers": str(value["workers"]),
    }


def served_set(src: gen.SitemapSet, origin: str) -> Path:
    """A web root serving `src` over HTTP: its files linked (not copied), its own index as
    sitemap_index.xml (children named on https://bench.example/, which the product reaches
    with --rewrite), a copy naming the children on `origin` as sitemap_index_local.xml (for
    the tools that fetch what an index names) and a robots.txt pointing at that copy."""
    root = OUT / f"{src.directory.name}-http"
    root.mkdir(parents=True, exist_ok=True)
    for path in [src.index, *src.children]:
        link = root / path.name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(path)
    local = src.index.read_text().replace("https://bench.example/", origin + "/")
    (root / "sitemap_index_local.xml").write_text(local)
    (root / "robots.txt").write_text(
        f"User-agent: *\nAllow: /\n\nSitemap: {origin}/sitemap_index_local.xml\n"
    )
    return root


def alt_env() -> dict[str, str]:
    """advertools runs `scrapy` by name: the alt venv's bin first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{ALT_VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(ALT_VENV)
    return env
