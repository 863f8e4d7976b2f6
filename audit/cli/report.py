"""`sitemap-audit report REPORT`: a saved jsonl report turned into another format; the exit
status is the verdict the report states at --fail-on."""

from __future__ import annotations

import argparse
from pathlib import Path

from audit.cli.options import Exit
from audit.cli.output import open_output
from audit.core.errors import TargetError

__all__ = ["cmd_report"]


def cmd_report(args: argparse.Namespace) -> int:
    from audit.report import convert, fails

    src = Path(args.report)
    if not src.is_file():
        raise TargetError(f"{args.report}: no such report file")
    with open_output(args.output) as out:
        try:
            summary = convert(str(src), args.format, out, fail_on=args.fail_on)
        except ValueError as exc:
            raise TargetError(str(exc)) from exc
    # the verdict every writer states (the summary's counts are ints: convert checked them)
    return Exit.FINDINGS if fails(summary, args.fail_on) else Exit.OK
