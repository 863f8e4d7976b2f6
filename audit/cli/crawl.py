"""`sitemap-audit crawl TARGET...`: parse, run through the front door, map to an exit code.

The targets are the TARGETs given and --targets-file's, else --config's; several are audited
into ONE report with one summary (a scheduled job gets one file, one exit status and one
diff). The run is the front door's `CrawlRun` (audit.api): it checks every option and opens
the --state store before the report is opened; this module adds what only a command line
has: the report file, the progress bar, signals, and the lines on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from audit.cli.options import Exit, config_from, resolve_format, run_options
from audit.cli.output import (
    open_output,
    run_interruptibly,
    say_errors,
    say_resumed_or_interrupted,
)
from audit.core.errors import TargetError

__all__ = ["audit_targets", "cmd_crawl", "read_targets_file", "run_audit"]


def cmd_crawl(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    targets = audit_targets(parser, args, argv)
    args.format = resolve_format(args)
    return run_audit(args, "crawl", targets)


def run_audit(args: argparse.Namespace, mode: str, targets: list[str]) -> int:
    """crawl and validate: the front door's run, its records streamed to the report."""
    from audit.api import CrawlRun, make_progress
    from audit.report import make_writer

    run = CrawlRun(targets, config_from(args), run_options(args), mode=mode)
    interrupted = True
    try:
        with open_output(args.output) as out:
            writer = make_writer(args.format, out, fail_on=args.fail_on)
            progress = make_progress(
                not args.no_progress, "checked" if mode == "crawl" else "entries"
            )
            audit = run.start([writer.write], progress)
            try:
                interrupted = run_interruptibly(run.run(), audit.recorder.notes)
            finally:
                progress.close()
            result = run.finish(interrupted=interrupted)
            writer.close()
    finally:
        run.close_state(interrupted=interrupted)
    return _exit(args, run, result, interrupted)


def _exit(args: argparse.Namespace, run: Any, result: Any, interrupted: bool) -> int:
    """The closing lines on stderr, the notifications, and the exit status."""
    say_resumed_or_interrupted(run.state_path, run.replayed, "URLs already checked", interrupted)
    say_errors(run.notify())
    if interrupted:
        return Exit.INTERRUPTED
    say_errors(result.fatal)  # any target that could not be audited at all: exit 2
    if result.fatal:
        return Exit.USAGE
    return Exit.FINDINGS if result.failed(args.fail_on) else Exit.OK


def audit_targets(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]
) -> list[str]:
    """crawl and validate: the TARGETs given and --targets-file's, else --config's."""
    from_config: list[str] = []
    if args.config:  # first: the file may name a targets-file too
        from audit.cli.configfile import ConfigFileError, apply_config_file

        try:
            from_config = apply_config_file(parser, args, argv)
        except ConfigFileError as exc:
            raise TargetError(str(exc)) from exc
    given = args.target if isinstance(args.target, list) else [args.target]
    given = [*getattr(args, "render_targets", []), *given]  # `--render TARGET`
    targets = list(filter(None, given))  # an empty TARGET names nothing
    if getattr(args, "targets_file", None):
        targets += read_targets_file(args.targets_file)
    targets = targets or from_config
    if not targets:
        where = f"{args.config}: " if args.config else f"{args.command}: "
        raise TargetError(
            f"{where}no target: give TARGET, --targets-file FILE or target/targets in --config"
        )
    return targets


def read_targets_file(path: str) -> list[str]:
    """--targets-file: one target a line; blank lines and `#` comments are skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TargetError(f"--targets-file {path}: cannot read it: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise TargetError(f"--targets-file {path}: not UTF-8 text") from None
    # each line without its comment; the blank ones left out
    targets = list(filter(None, (line.split("#", 1)[0].strip() for line in text.splitlines())))
    if not targets:
        raise TargetError(f"--targets-file {path}: no target in it (one a line, # comments)")
    return targets
