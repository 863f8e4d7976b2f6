"""`sitemap-audit diff OLD NEW`: two jsonl reports or state files compared (the front door's
`diff`): new, fixed, still failing, and the alerts of --alert-drop and --alert-new-errors.
A regular output file is written whole or not at all: a refused diff leaves an earlier
report as it was."""

from __future__ import annotations

import argparse

from audit.cli.options import Exit
from audit.cli.output import open_output, whole_or_nothing

__all__ = ["cmd_diff"]


def cmd_diff(args: argparse.Namespace) -> int:
    from audit.api import diff

    with whole_or_nothing(args.output) as target, open_output(target) as out:
        summary = diff(
            args.old,
            args.new,
            out,
            fmt=args.format,
            fail_on=args.fail_on,
            limit=args.limit,
            alert_drop=args.alert_drop,
            alert_new_errors=args.alert_new_errors,
        )
    return Exit.FINDINGS if summary.failed else Exit.OK
