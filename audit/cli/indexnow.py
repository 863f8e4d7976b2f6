"""`crawl --indexnow KEY [--indexnow-endpoint URL] [--dry-run]`: the options
(contracts/fix.md). The front door checks them (audit.front.options.check_indexnow), turns on
content fingerprints and submits after a complete run (audit.front.after.IndexNow; the work
is audit.state.indexnow).
"""

from __future__ import annotations

import argparse

__all__ = ["add_indexnow_options"]


def add_indexnow_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--indexnow",
        metavar="KEY",
        help="after a complete run, submit verified changes to IndexNow with this key "
        "(needs --state; implies --content)",
    )
    p.add_argument(
        "--indexnow-endpoint",
        metavar="URL",
        help="with --indexnow: where the POSTs go (default https://api.indexnow.org/indexnow)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="with --indexnow: list what would be submitted, send nothing",
    )
