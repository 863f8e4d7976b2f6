"""`sitemap-audit migrate OLD NEW`: the pre-launch migration check through the front door's
`MigrateRun` (which checks NEW, the targets, the map, --intent and --state before the first
request); this module adds --config (options only: OLD and NEW stay on the command line),
the report file, the progress bar, signals, the closing lines and the exit status.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from audit.cli.options import PROG, Exit, config_from, resolve_format, run_options
from audit.cli.output import open_output, run_interruptibly, say_resumed_or_interrupted
from audit.core.errors import TargetError

__all__ = ["cmd_migrate", "migrate_config"]


def cmd_migrate(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    """migrate: judge every old URL on the new site; everything is checked (NEW, the
    targets, the map, the state) before the first request."""
    from audit.api import MigrateRun, make_progress
    from audit.report import make_writer

    if args.config:  # before --format is resolved
        migrate_config(parser, args, argv)
    args.format = resolve_format(args)
    run = MigrateRun(
        args.old,
        args.new,
        config_from(args),
        run_options(args),
        map=args.map,
        new_sitemap=args.new_sitemap,
    )
    interrupted = True
    try:
        with open_output(args.output) as out:
            writer = make_writer(args.format, out, fail_on=args.fail_on)
            run.progress = progress = make_progress(not args.no_progress, "checked")
            run.start([writer.write])
            try:
                interrupted = run_interruptibly(run.run())
            finally:
                progress.close()
            run.finish(interrupted=interrupted)
            writer.close()
    finally:
        state_error = run.close_state(interrupted=interrupted)
    return _exit(args, run, interrupted, state_error)


def _exit(args: argparse.Namespace, run: Any, interrupted: bool, state_error: str | None) -> int:
    """migrate's closing lines and exit status."""
    say_resumed_or_interrupted(
        getattr(run.store, "path", None), run.replayed, "old URLs already judged", interrupted
    )  # (no store without --state: nothing replayed)
    if state_error is not None:
        print(f"{PROG}: error: {state_error}", file=sys.stderr)
        return Exit.USAGE
    if interrupted:
        return Exit.INTERRUPTED
    if run.fatal:
        print(f"{PROG}: error: {run.fatal}", file=sys.stderr)
        return Exit.USAGE
    return Exit.FINDINGS if run.failed(args.fail_on) else Exit.OK


def migrate_config(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]
) -> None:
    """migrate --config: the file's options where the command line gave none; OLD and
    NEW are the command line's (a file naming targets is refused, not ignored)."""
    from audit.cli.configfile import ConfigFileError, apply_config_file

    try:
        targets = apply_config_file(parser, args, argv)
    except ConfigFileError as exc:
        raise TargetError(str(exc)) from exc
    if targets:
        raise TargetError(
            f"{args.config}: target/targets are for crawl and validate; "
            "migrate takes OLD and NEW on the command line"
        )
