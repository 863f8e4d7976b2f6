"""The project builds into a wheel that installs into a clean environment and runs.

Two ways a user installs it: `pip wheel --no-deps .` (the project's own build backend)
then `pip install dist/*.whl` into a new venv, and `pipx install .` (pipx itself from the
package index; the README's line, checked by test_install_docs.py). Either way the installed `sitemap-audit` command then validates a local
sitemap. Without a package index the tests are skipped, saying so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd or Path("/"),
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_wheel_installs_into_a_clean_venv(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "*cache*", "build", "dist")
    )
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", tmp_path / "dist", src)
    if built.returncode and "Could not find a version" in built.stderr + built.stdout:
        pytest.skip("no package index reachable: setuptools for the build cannot be fetched")
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("sitemap_audit-*.whl")
    venv = tmp_path / "clean"
    assert _run(sys.executable, "-m", "venv", venv).returncode == 0
    installed = _run(venv / "bin" / "pip", "install", wheel)
    if installed.returncode and "Could not find a version" in installed.stderr + installed.stdout:
        pytest.skip("no package index reachable: the wheel's dependencies cannot be fetched")
    assert installed.returncode == 0, installed.stderr[-2000:]
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/</loc><lastmod>2024-05-01</lastmod></url></urlset>\n"
    )
    version = _run(venv / "bin" / "sitemap-audit", "--version")
    assert version.returncode == 0 and version.stdout.startswith("sitemap-audit ")
    checked = _run(venv / "bin" / "sitemap-audit", "validate", sitemap, "--format", "json")
    assert checked.returncode == 0, checked.stderr
    assert '"entries": 1' in checked.stdout or '"entries":1' in checked.stdout
    # installed, not run from the sources: the package lives in the clean venv
    where = _run(venv / "bin" / "python", "-c", "import audit; print(audit.__file__)")
    assert str(venv) in where.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_pipx_installs_the_project(tmp_path: Path) -> None:
    """`pipx install .` as a user would: pipx itself from the package index into a venv
    of its own, then the project from a copy of the sources into pipx's own venv."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "*cache*", "build", "dist")
    )
    tools = tmp_path / "tools"
    assert _run(sys.executable, "-m", "venv", tools).returncode == 0
    got = _run(tools / "bin" / "pip", "install", "pipx")
    if got.returncode and "Could not find a version" in got.stderr + got.stdout:
        pytest.skip("no package index reachable: pipx cannot be fetched")
    assert got.returncode == 0, got.stderr[-2000:]
    env_vars = {"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    os.environ.update(env_vars)  # _run passes the environment on
    try:
        installed = _run(tools / "bin" / "pipx", "install", ".", cwd=src)  # as the README says
    finally:
        for key in env_vars:
            os.environ.pop(key, None)
    assert installed.returncode == 0, installed.stderr[-2000:]
    command = tmp_path / "bin" / "sitemap-audit"
    version = _run(command, "--version")
    assert version.returncode == 0 and version.stdout.startswith("sitemap-audit ")
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/</loc></url></urlset>\n"
    )
    assert _run(command, "validate", sitemap, "--format", "jsonl").returncode == 0
