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
import socket
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
        # the report helper's "$@" and the split args stand for options that are given
        line = line.replace('"$@"', "--format sarif").replace('"${extra[@]}"', "--rate 5")
        return re.sub(r"\$(\w+)", lambda m: sample.get(m.group(1), m.group(0)), line)

    lines = [line for s in steps if "run" in s for line in s["run"].splitlines()]
    runs = [filled(line) for line in lines if re.search(r"\bsitemap-audit (crawl|report)\b", line)]
    assert check_invocations(runs) == 2  # the crawl, and the one report helper: both valid
    # every report is written with the crawl's own --fail-on: it states the step's verdict
    assert not any("--fail-on never" in line for line in lines)


def _bin(tmp: Path) -> Path:
    """`sitemap-audit` on PATH as the installed package's command: this interpreter's
    `python -m audit` (what `pip install` makes of the entry point)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "sitemap-audit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m audit "$@"\n')
    shim.chmod(0o755)
    python = bin_dir / "python"  # what actions/setup-python puts on PATH
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
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


def _outputs(tmp: Path) -> dict[str, str]:
    lines = (tmp / "outputs.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def _verdicts(tmp: Path) -> tuple[str, str, str]:
    """What the job summary, the JUnit file and the HTML report each say the verdict is."""
    out_dir = tmp / "sitemap-audit"
    summary = (tmp / "summary.md").read_text()
    md = re.search(r"\| Verdict \(fail on (\w+)\) \| \*\*([A-Z ]+)\*\*", summary)
    assert md, summary[:500]
    junit = (out_dir / "report.junit").read_text()
    failures = re.search(r'<testsuites[^>]*failures="(\d+)"', junit)
    assert failures, junit[:300]
    html = (out_dir / "report.html").read_text()
    box = re.search(r'<div class="verdict (\w+)" id="verdict">([A-Z ]+)', html)
    assert box, "no verdict box in the HTML report"
    return f"{md.group(2)} (fail on {md.group(1)})", failures.group(1), box.group(2)


def _shop(site: Site, base: str, *, broken: bool) -> None:
    ok = (200, HTML, b"<html><head><title>ok</title></head><body>ok</body></html>")
    site.routes = {
        "/robots.txt": (404, {}, b""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/ok", f"{base}/gone")),
        "/ok": ok,
    }
    if not broken:
        site.routes["/gone"] = ok


@pytest.mark.slow
async def test_action_steps_on_a_failing_and_a_passing_site(serve: Serve, tmp_path: Path) -> None:
    """Every report the Action writes states the verdict the step returns (issue 33.2)."""
    site = Site()
    base = await serve(site)
    _shop(site, base, broken=True)
    inputs = {
        "target": f"{base}/sitemap.xml",
        "fail-on": "error",
        "formats": "html,junit",
        "args": "--rate 1000 --retries 0",
    }
    codes = await _run_steps(inputs, tmp_path)
    assert codes == [0, 1]  # the audit step records the status; the verdict step fails
    assert _outputs(tmp_path)["status"] == "1"
    assert _verdicts(tmp_path) == ("FAIL (fail on error)", "1", "FAIL")
    out_dir = tmp_path / "sitemap-audit"
    sarif = json.loads((out_dir / "report.sarif").read_text())
    rules = {r["ruleId"] for run in sarif["runs"] for r in run["results"]}
    assert "url-not-found" in rules
    assert "url-not-found" in (tmp_path / "summary.md").read_text()

    _shop(site, base, broken=False)  # fixed: the action passes, and every report says so
    for name in ("outputs.txt", "summary.md"):
        (tmp_path / name).unlink()
    assert await _run_steps(inputs, tmp_path) == [0, 0]
    assert _outputs(tmp_path)["status"] == "0"
    assert _verdicts(tmp_path) == ("PASS (fail on error)", "0", "PASS")


@pytest.mark.slow
async def test_action_args_keep_quoted_values(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    _shop(site, base, broken=False)
    inputs = {
        "target": f"{base}/sitemap.xml",
        "fail-on": "error",
        "formats": "",
        "args": '--header "X-Env: staging" --user-agent "Acme Audit/2.0 (ops team)" --rate 1000',
    }
    assert await _run_steps(inputs, tmp_path) == [0, 0]
    hits = [h for h in site.hits if h.path == "/ok"]
    assert hits and all(h.headers.get("X-Env") == "staging" for h in hits)
    assert {h.headers.get("User-Agent") for h in hits} == {"Acme Audit/2.0 (ops team)"}


@pytest.mark.slow
async def test_action_names_no_sarif_file_when_the_crawl_exits_2(tmp_path: Path) -> None:
    inputs = {"target": "http://127.0.0.1:9/", "fail-on": "error", "formats": "html"}
    codes = await _run_steps({**inputs, "args": "--rate fast"}, tmp_path)
    assert codes[0] == 2  # a usage error: no report, the audit step fails as the crawl did
    outputs = _outputs(tmp_path)
    assert outputs["status"] == "2"
    assert "sarif" not in outputs  # the upload step is skipped, not fed a missing file
    assert not (tmp_path / "sitemap-audit" / "report.sarif").exists()

    (tmp_path / "outputs.txt").unlink()
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    unreachable = {**inputs, "target": f"http://127.0.0.1:{port}/", "args": "--retries 0"}
    assert await _run_steps(unreachable, tmp_path) == [0, 2]  # a report, and the verdict 2
    outputs = _outputs(tmp_path)
    assert Path(outputs["sarif"]).is_file()  # named because it was written
    summary = (tmp_path / "summary.md").read_text()
    assert "**NOTHING AUDITED**" in summary and "cannot be reached" in summary
