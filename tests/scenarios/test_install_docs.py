"""Install as documented (issue 33.1): sitemap-audit is not on PyPI, so the docs show only
ways that work (a clone, a git URL, the wheel, the Action), and every install line of the
README and of docs/ is one a test runs. The pipx line is run by test_wheel.py; the others
run here, as written, one after the other in one clean virtual environment (the git URL
pointed at a local repository of the sources: tests use no network but loopback)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = re.compile(r"(?:python -m )?\bpipx? (?:install|wheel)\b[^`\n#]*")
GITHUB = "git+https://github.com/OWNER/sitemap-audit"

# Every install line the docs may hold, exactly as written; each is run by a test.
EXERCISED = {
    "pip install .",
    "pip install '.[fast]'",
    "pip install '.[cluster]'",
    "pip install '.[render]'",
    "pipx install .",  # test_wheel.py: test_pipx_installs_the_project
    f"pip install 'sitemap-audit @ {GITHUB}'",
    f"pip install 'sitemap-audit[fast] @ {GITHUB}'",
    "pip wheel --no-deps -w dist .",
    "pip install dist/sitemap_audit-*.whl",
    'pip install "$(ls dist/sitemap_audit-*.whl)[cluster]"',
}


def doc_install_lines() -> list[tuple[str, str]]:
    """(file, command) of every pip/pipx install or wheel command in README.md and docs/,
    in document order."""
    files = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file())]
    out = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # an image
        rel = path.relative_to(ROOT).as_posix()
        out += [(rel, m.group(0).strip()) for m in INSTALL.finditer(text)]
    return out


def test_every_install_line_in_the_docs_is_one_the_tests_exercise() -> None:
    found = doc_install_lines()
    unknown = sorted({(rel, line) for rel, line in found if line not in EXERCISED})
    assert unknown == [], "install lines no test runs: add them to EXERCISED and run them"
    assert {line for _, line in found} == EXERCISED  # and none exercised for nothing
    for rel, line in found:  # never the bare name, which PyPI does not have from us
        assert not re.fullmatch(r"pipx? install '?sitemap-audit(\[\w+\])?(==\S+)?'?", line), rel


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=400
    )


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_documented_install_lines_work(tmp_path: Path) -> None:
    src = tmp_path / "sitemap-audit"  # a clone: the sources, in a git repository
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "*cache*", "build", "dist")
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "sources"]):
        subprocess.run([*git, *args], cwd=src, check=True, capture_output=True)
    venv = tmp_path / "clean"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = _env(venv)
    lines = list(dict.fromkeys(line for _, line in doc_install_lines()))
    for line in lines:
        if line.startswith("pipx "):
            continue  # test_wheel.py runs it, with pipx in an environment of its own
        installs = line.startswith("pip install")
        if installs:  # each line installs the package itself, not an earlier line
            _sh("pip uninstall -y -q sitemap-audit", src, env)
        # file://localhost/...: pip 23 takes no git+file URL without a host part
        done = _sh(line.replace(GITHUB, f"git+file://localhost{src}"), src, env)
        if done.returncode and "Could not find a version" in done.stderr + done.stdout:
            pytest.skip("no package index reachable: dependencies cannot be fetched")
        assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
        if installs:
            version = _sh("sitemap-audit --version", tmp_path, env)
            assert version.stdout.startswith("sitemap-audit "), (line, version.stderr)
    # the extras were installed by their lines, into the clean environment
    probe = "import orjson, uvloop, distributed, audit; print(audit.__file__)"
    where = _sh(f"python -c '{probe}'", tmp_path, env)
    assert where.returncode == 0 and str(venv) in where.stdout, where.stderr
