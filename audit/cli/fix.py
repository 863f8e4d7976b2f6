"""`sitemap-audit fix SOURCE --output DIR`: the parser and the command (contracts/fix.md).

Reads a complete jsonl report or state file and writes the repaired sitemap set (the front
door's `fix`); sends no request. A refusal (a cut run, an unreadable SOURCE, several origins without --base-url)
is one line on stderr and exit 2, with nothing written or removed in DIR.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_fix_options", "cmd_fix"]


def _shard_size(text: str) -> int:
    from audit.core.config import MAX_SHARD_SIZE

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= n <= MAX_SHARD_SIZE:
        raise argparse.ArgumentTypeError(f"{n} is outside 1..{MAX_SHARD_SIZE:,}")
    return n


def add_fix_options(fix: argparse.ArgumentParser) -> None:
    """`fix`'s arguments, on its parser (audit.cli.options.build_parser makes it)."""
    from audit.core.config import DEFAULT_SHARD_SIZE

    fix.add_argument("source", help="a `crawl --format jsonl` report or a --state file")
    fix.add_argument(
        "--output", "-o", required=True, metavar="DIR", help="where the set is written"
    )
    fix.add_argument(
        "--base-url",
        metavar="URL",
        help="the public URL of DIR (default: the root of the listed URLs' origin)",
    )
    fix.add_argument(
        "--shard-size",
        type=_shard_size,
        default=DEFAULT_SHARD_SIZE,
        metavar="N",
        help=f"URLs per sitemap file at most, 1 to 50,000 (default {DEFAULT_SHARD_SIZE:,})",
    )
    fix.add_argument(
        "--gzip", action="store_true", help="write the shards gzip-compressed as .xml.gz"
    )


def cmd_fix(args: argparse.Namespace) -> int:
    """Raises FixRefused (an AuditError: main prints one line, exit 2)."""
    from audit.api import fix

    summary = fix(
        args.source,
        args.output,
        base_url=args.base_url,
        shard_size=args.shard_size,
        gzip=args.gzip,
    )
    print(
        f"{summary['written']:,} URLs written in {summary['shards']} sitemap files to "
        f"{args.output} ({summary['kept']:,} kept, {summary['replaced']:,} replaced, "
        f"{summary['dropped']:,} dropped; see fix-report.md)",
        file=sys.stderr,
    )
    return 0
