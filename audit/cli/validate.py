"""`sitemap-audit validate TARGET`: protocol validation only, no page URL requested.

The same run as crawl's (audit.cli.crawl.run_audit: the front door's `CrawlRun` in
validate mode); the target is the one given, else --config's.
"""

from __future__ import annotations

import argparse

from audit.cli.crawl import audit_targets, run_audit
from audit.cli.options import resolve_format

__all__ = ["cmd_validate"]


def cmd_validate(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    targets = audit_targets(parser, args, argv)
    args.format = resolve_format(args)
    return run_audit(args, "validate", targets)
