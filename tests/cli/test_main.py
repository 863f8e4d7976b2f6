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
    assert out.stdout.split() == ["0", "False"], out.stderr
    out = subprocess.run(  # a URL nobody answers: the client is opened and fails cleanly
        [sys.executable, "-c", code, "http://127.0.0.1:9/sitemap.xml", str(tmp_path / "r")],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["2", "True"], out.stderr


# Argument lists whose answer (help, version, usage error) main must give byte for byte as a
# parser with every command's options would: main builds only the named command's options.
_ANSWERED = [
    [],
    ["--help"],
    ["-h"],
    ["--version"],
    ["nope"],
    ["--bogus"],
    ["-"],
    ["--"],
    [""],
    ["--", "validate", "--help"],
    ["-x", "validate", "f.xml"],
    ["validat", "f.xml"],
    ["inspect"],
    ["discover"],
    ["report"],
    ["diff", "a"],
    ["migrate"],
    ["fix", "r.jsonl"],
    ["validate", "a", "b"],
    ["codes", "x"],
    ["crawl", "--render", "zero"],
]
for _command in ("crawl", "validate", "inspect", "discover", "report", "diff", "migrate",
                 "codes", "fix"):  # fmt: skip
    _ANSWERED += [
        [_command, "--help"],
        [_command, "--bogus"],
        [_command, "--rate", "fast"],
        [_command, "x", "--format", "pdf"],
        ["--help", _command],
        [_command, "x", "--version"],
    ]
# Argument lists that parse: the same namespace either way.
_PARSED = [
    ["validate", "f.xml", "--rate", "5", "--ignore", "loc-missing", "--format", "jsonl"],
    ["crawl", "https://a.example/", "--page-checks", "--agents", "ai", "--render", "3"],
    ["crawl", "--targets-file", "t.txt", "--indexnow", "k" * 8, "--dry-run", "--", "x.xml"],
    ["inspect", "f.xml", "--urls"], ["discover", "https://a.example/", "--format", "jsonl"],
    ["report", "r.jsonl", "-o", "r.html"], ["diff", "a", "b", "--limit", "0"],
    ["migrate", "a.xml", "https://b.example", "--map", "m.csv"], ["codes", "--format", "json"],
    ["fix", "r.jsonl", "-o", "out", "--shard-size", "10", "--gzip"],
]  # fmt: skip


def _answer(argv: list[str], command: str | None) -> tuple[object, str, str, object]:
    """Exit code (None: parsed), stdout, stderr and namespace of a parse of `argv` by
    build_parser(command)."""
    import argparse
    import contextlib
    import io

    from audit.cli.options import build_parser

    out, err = io.StringIO(), io.StringIO()
    parsed: argparse.Namespace | None = None
    code: object = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            parsed = build_parser(command).parse_args(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue(), None if parsed is None else vars(parsed)


@pytest.mark.parametrize("argv", _ANSWERED, ids=" ".join)
def test_main_answers_help_and_errors_as_the_whole_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """main builds only the options of the command it runs; --help of the program and of
    every command, --version and every usage error stay byte for byte what a parser of
    every command's options gives."""
    code, out, err, _ = _answer(argv, None)
    assert code is not None and (out or err)  # each of these is answered, not run
    assert main(argv) == code
    got = capsys.readouterr()
    assert (got.out, got.err) == (out, err)


@pytest.mark.parametrize("argv", _PARSED, ids=" ".join)
def test_one_commands_parser_parses_as_the_whole_parser(argv: list[str]) -> None:
    from audit.cli.main import command_named

    assert command_named(argv) == argv[0]
    whole = _answer(argv, None)
    assert whole[0] is None and whole[3]  # parsed
    assert _answer(argv, argv[0]) == whole
    # and a parser of another command's options alone cannot parse it
    other = "codes" if argv[0] != "codes" else "fix"
    assert _answer(argv, other)[0] == 2


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
