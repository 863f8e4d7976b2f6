"""The entry point (audit/cli/main.py): the collector tuned only for a process of its own, the
HTTP stack never loaded by a local validate."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from audit.cli.main import main
from tests.cli.clikit import FIXTURES


def test_gc_tuning_only_for_a_process_run(tmp_path: Path) -> None:
    """The command line tunes the cyclic collector of its own process; a caller's
    process (main(argv)) keeps its settings."""
    before = gc.get_threshold()
    assert main(["validate", str(FIXTURES / "valid" / "urlset.xml"), "--no-progress"]) == 0
    assert gc.get_threshold() == before
    code = (
        "import gc, sys; from audit.cli.main import main; before = gc.get_threshold(); "
        "sys.argv = ['sitemap-audit', 'validate', sys.argv[1], '--no-progress', '--output', "
        "sys.argv[2]]; rc = main(); "
        "print(rc, before != gc.get_threshold())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURES / "valid" / "urlset.xml"), str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["0", "True"]


@pytest.mark.slow
def test_local_validate_never_loads_the_http_stack(tmp_path: Path) -> None:
    """Validating local files requests nothing, so aiohttp (and its TLS context, a tenth
    of a second of start-up) is never imported; a URL target loads it."""
    code = (
        "import sys; from audit.cli.main import main; "
        "rc = main(['validate', sys.argv[1], '--no-progress', '--output', sys.argv[2]]); "
        "print(rc, 'aiohttp' in sys.modules)"
    )
    sitemap = str(FIXTURES / "valid" / "urlset.xml")
    out = subprocess.run(
        [sys.executable, "-c", code, sitemap, str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["0", "False"]
    out = subprocess.run(  # a URL nobody answers: the client is opened and fails cleanly
        [sys.executable, "-c", code, "http://127.0.0.1:9/sitemap.xml", str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["2", "True"]


def test_every_command_of_the_parser_has_its_module_and_function() -> None:
    """One thin module per command: `audit/cli/<command>.py` with `cmd_<command>`."""
    import argparse
    import importlib

    from audit.cli.main import _COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(_COMMANDS)
    for command, (module, _) in _COMMANDS.items():
        assert module == f"audit.cli.{command}"
        assert callable(getattr(importlib.import_module(module), f"cmd_{command}"))


def test_the_command_line_imports_only_the_front_door_core_and_report() -> None:
    """pyproject's contract forbids every subpackage of audit/ but api, core and report (and
    the command line itself): a new subpackage must join the list, and the contract holds."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (cli,) = [c for c in contracts if c.get("source_modules") == ["audit.cli"]]
    package = root / "audit"
    subpackages = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    allowed = {"cli", "core", "report"}
    assert set(cli["forbidden_modules"]) == {f"audit.{n}" for n in subpackages - allowed}
    assert cli["type"] == "forbidden" and cli["allow_indirect_imports"] is True
    out = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports")],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert f"{cli['name']} KEPT" in out.stdout, out.stdout[-2000:]


def test_a_usage_error_below_the_parser_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An AuditError from a command's module or the front door: one line, exit 2."""
    sitemap = str(FIXTURES / "valid" / "urlset.xml")
    assert main(["validate", sitemap, "--include-sitemap", "(", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sitemap-audit: error: --include-sitemap '('")
    assert "not a valid regular expression" in err and "\n" not in err
