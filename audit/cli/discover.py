"""`sitemap-audit discover SITE`: the sitemaps a site declares or exposes, one a line
(text: with where each was found) or as jsonl records; findings go to stderr in text."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from audit.cli.options import Exit, config_from
from audit.core.printable import printable

__all__ = ["cmd_discover"]


def cmd_discover(args: argparse.Namespace) -> int:
    from audit.api import discover_async

    found = asyncio.run(discover_async(args.site, config=config_from(args)))
    for d in found.sitemaps:
        if args.format == "jsonl":
            print(json.dumps(d))
        else:
            relative = ", relative" if d.get("relative") else ""
            print(f"{printable(d['url'])}\t(from {d['source']}{relative})")
    for f in found.findings:
        if args.format == "jsonl":
            print(json.dumps(f))
        else:
            print(f"{f['severity']}: {f['code']}: {printable(f['message'])}", file=sys.stderr)
    return Exit.OK if found.sitemaps else Exit.FINDINGS
