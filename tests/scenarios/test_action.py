"""action.yml (the composite GitHub Action): its structure, and its steps' shell
commands run for real with bash against a local site, the way GitHub runs them
(`bash --noprofile --norc -eo pipefail`, inputs through `env:`, GITHUB_OUTPUT and
GITHUB_STEP_SUMMARY files). The installation step is checked, not run: the tests run
in the project's venv, where the package is installed already (tests/scenarios/
test_wheel.py installs a built wheel into a clean environment)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.crawlkit import HTML, XML, Serve, Site, urlset
from tests.scenarios.test_schedule import check_invocations

ROOT = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml", reason="PyYAML reads action.yml (not a dependency)")


def _action() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
    return doc


def test_action_structure() -> None:
    doc = _action()
    assert doc["runs"]["using"] == "composite"
    assert {"target", "fail-on", "formats"} <= set(doc["inputs"])
    assert doc["inputs"]["target"]["required"] is True
    steps = doc["runs"]["steps"]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses == ["actions/setup-python", "github/codeql-action/upload-sarif"]
    for step in steps:
        if "run" in step:
            assert step["shell"] == "bash"  # a composite step must name its shell
            assert "${{" not in step["run"]  # inputs reach the shell through env, never inline
    install = next(s for s in steps if s["name"].startswith("Install"))
    assert install["run"].startswith("python -m pip install")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    sample = {"TARGET": "https://example.com/", "FAIL_ON": "error", "EXTRA_ARGS": "--rate 5"}
    sample |= {"report": "r.jsonl", "OUT_DIR": "out", "format": "html"}

    def filled(line: str) -> str:
        return re.sub(r"\$(\w+)", lambda m: sample.get(m.group(1), m.group(0)), line)

    runs = [filled(line) for s in steps if "run" in s for line in s["run"].splitlines()]
    assert check_invocations(runs) >= 3  # crawl, report sarif, report markdown: all valid


def _bin(tmp: Path) -> Path:
    """`sitemap-audit` on PATH as the installed package's command: this interpreter's
    `python -m audit` (what `pip install` makes of the entry point)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "sitemap-audit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m audit "$@"\n')
    shim.chmod(0o755)
    return bin_dir


def _env(step: dict[str, Any], inputs: dict[str, str], tmp: Path) -> dict[str, str]:
    values = {f"inputs.{k}": v for k, v in inputs.items()}
    values["runner.temp"] = str(tmp)
    values["github.action_path"] = str(ROOT)
    outputs = tmp / "outputs.txt"
    for line in outputs.read_text().splitlines() if outputs.exists() else []:
        key, _, value = line.partition("=")
        values[f"steps.audit.outputs.{key}"] = value

    def expand(text: str) -> str:
        return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values.get(m.group(1), ""), text)

    env = {k: expand(str(v)) for k, v in (step.get("env") or {}).items()}
    return {
        **os.environ,
        "PATH": f"{_bin(tmp)}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        **env,
    }


async def _run_steps(inputs: dict[str, str], tmp: Path) -> list[int]:
    codes: list[int] = []
    for step in _action()["runs"]["steps"]:
        if "run" not in step or step["name"].startswith("Install"):
            continue
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            step["run"],
            env=_env(step, inputs, tmp),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await proc.communicate()
        codes.append(proc.returncode or 0)
        if step["name"] == "Audit" and proc.returncode:  # say why in the test output
            print(err.decode())
    return codes


@pytest.mark.slow
async def test_action_steps_run(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, {}, b""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/ok", f"{base}/gone")),
        "/ok": (200, HTML, b"<html><head><title>ok</title></head><body>ok</body></html>"),
    }
    inputs = {
        "target": f"{base}/sitemap.xml",
        "fail-on": "error",
        "formats": "html,junit",
        "args": "--rate 1000 --retries 0",
    }
    codes = await _run_steps(inputs, tmp_path)
    assert codes == [0, 1]  # the audit step records the status; the verdict step fails
    outputs = dict(
        line.split("=", 1) for line in (tmp_path / "outputs.txt").read_text().splitlines()
    )
    assert outputs["status"] == "1"
    out_dir = tmp_path / "sitemap-audit"
    sarif = json.loads((out_dir / "report.sarif").read_text())
    rules = {r["ruleId"] for run in sarif["runs"] for r in run["results"]}
    assert "url-not-found" in rules
    summary = (tmp_path / "summary.md").read_text()
    assert "url-not-found" in summary and summary.startswith("#")
    assert (out_dir / "report.html").stat().st_size > 0
    assert (out_dir / "report.junit").read_text().lstrip().startswith("<?xml")

    site.routes["/gone"] = site.routes["/ok"]  # fixed: the action passes
    (tmp_path / "outputs.txt").unlink()
    assert await _run_steps({**inputs, "fail-on": "error"}, tmp_path) == [0, 0]
