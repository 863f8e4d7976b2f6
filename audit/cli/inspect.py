"""`sitemap-audit inspect TARGET`: counts, sizes, lastmod distribution, extensions and
children of a sitemap (text or json), or with --urls only the URLs, one a line, for piping.

Exit 1 when a sitemap (an index's child) could not be read, or a local index's children were
not read; with --urls each such failure is a line on stderr (stdout holds only URLs).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from audit.cli.options import PROG, Exit, config_from
from audit.cli.output import open_output, run_interruptibly, say_errors
from audit.core.printable import printable, url_printable

__all__ = ["cmd_inspect"]


def cmd_inspect(args: argparse.Namespace) -> int:
    from audit.api import Audit, Inspector, check_targets, checked_config

    config = checked_config(config_from(args), [args.target])
    check_targets(args.target, "inspect")  # before the output is opened
    inspector = Inspector()
    with open_output(args.output) as out:
        on_entry = inspector.on_entry
        if args.urls:

            def urls_only(source: str, entry: Any) -> None:
                if entry.kind == "url" and entry.loc and entry.loc.strip():
                    # one usable URL a line: controls percent-encoded, never raw
                    out.write(url_printable(entry.loc.strip()) + "\n")

            on_entry = urls_only
        run = Audit(
            args.target,
            config,
            mode="inspect",
            sinks=[inspector.on_record],
            on_entry=on_entry,
            on_sitemap=inspector.on_sitemap,
        )
        interrupted = run_interruptibly(run.run())
        if not args.urls:
            if args.format == "json":
                json.dump([inspector.stats[u].to_json() for u in inspector.order], out, indent=2)
                out.write("\n")
            else:
                inspector.write_text(out)
    if interrupted:
        return Exit.INTERRUPTED
    say_errors(run.fatal)
    if run.fatal:
        return Exit.USAGE
    # 1 when a sitemap (an index's child) could not be read; with --urls, stdout holds
    # only URLs, so each failure is a line on stderr
    failed = inspector.failed
    if args.urls:
        for st in failed:
            print(f"{PROG}: {st.url}: {st.failure}", file=sys.stderr)
    return max(Exit.FINDINGS if failed else Exit.OK, _unread(run.recorder.notes))


def _unread(notes: dict[str, Any]) -> int:
    """A local index whose children were not read (no --base-url, no --online): one line on
    stderr says which and why, and the exit status is 1, as for a child that failed (with
    --urls, stdout would otherwise hold none of the index's URLs and look complete)."""
    from audit.report.aggregate import unread_children_note

    note = unread_children_note(notes)
    if note is None:
        return Exit.OK
    print(f"{PROG}: {printable(note)}", file=sys.stderr)
    return Exit.FINDINGS
