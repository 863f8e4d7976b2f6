"""The command line's entry point: `main(argv) -> int`.

It parses (the option table is audit.cli.options), hands the parsed flags to the command's
own module (one thin module per command: parse, call the front door `audit.api`, map the
outcome to an exit code of DESIGN.md) and turns an AuditError into one line on stderr and
exit 2. Errors the user can fix are one line on stderr; stdout carries only the report.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Sequence

from audit.cli.options import (
    FORMAT_CHOICES,
    FORMATS,
    PROG,
    Exit,
    build_parser,
    config_from,
    resolve_format,
)
from audit.core.errors import AuditError

__all__ = ["Exit", "build_parser", "command_named", "config_from", "main"]

# each command's module and whether its function takes (parser, args, argv): crawl and validate
# read their targets and --config, migrate its --config, and resolve --format after them
_COMMANDS = {
    "crawl": ("audit.cli.crawl", True),
    "validate": ("audit.cli.validate", True),
    "migrate": ("audit.cli.migrate", True),
    "inspect": ("audit.cli.inspect", False),
    "discover": ("audit.cli.discover", False),
    "report": ("audit.cli.report", False),
    "diff": ("audit.cli.diff", False),
    "codes": ("audit.cli.codes", False),
    "fix": ("audit.cli.fix", False),
    "worker": ("audit.cli.worker", False),
}


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    """Run `cmd_<command>` of the command's module (loaded only when that command runs)."""
    import importlib

    name, whole = _COMMANDS[args.command]
    command = getattr(importlib.import_module(name), f"cmd_{args.command}")
    if whole:
        return int(command(parser, args, argv))
    if hasattr(args, "format"):
        args.format = resolve_format(args, FORMAT_CHOICES.get(args.command, FORMATS))
    return int(command(args))


def command_named(argv: Sequence[str]) -> str | None:
    """The command `argv` runs: its first argument that is no option (the main parser's own
    options, --help and --version, take no value), when that is a command; else None (no
    command, or an unknown one: argparse then needs every command's parser for its answer)."""
    for arg in argv:
        if arg == "-" or not arg.startswith("-"):
            return arg if arg in _COMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    given = argv
    if given is None:  # the console script or `python -m audit`: this process is ours
        # so is its collector (never tuned inside a caller's process): an audit allocates
        # and frees millions of short-lived records and almost no reference cycles, so the
        # cyclic collector's default of a pass every 700 net allocations costs 2-4% of a
        # run for nothing. Start-up objects are frozen out of its scans; passes are rarer.
        gc.freeze()
        gc.set_threshold(50_000, 20, 100)
        given = sys.argv[1:]
    parser = build_parser(command_named(given))  # the options of the command run, alone
    try:
        args = parser.parse_args(given)
    except SystemExit as exc:  # --help, --version, usage errors: already printed
        return int(exc.code) if isinstance(exc.code, int) else Exit.USAGE
    try:
        return _dispatch(parser, args, given)
    except AuditError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return Exit.USAGE
    except BrokenPipeError:  # `| head`: the reader went away, nothing to report
        if argv is None:  # our own process: its stdout is ours to silence
            # stdout to /dev/null: the interpreter's last flush of a closed pipe would
            # otherwise print an "Exception ignored ... BrokenPipeError" on the way out
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return Exit.OK
