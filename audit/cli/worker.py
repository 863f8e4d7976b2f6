"""`sitemap-audit worker SCHEDULER [DASK-OPTION ...]`: become a Dask worker for
`--cluster tcp://...` runs, with the settings `--cluster local:N` gives its own workers
(the front door's `worker`; audit.cluster.worker says which and why). SCHEDULER is the
scheduler's address, or the file `dask scheduler --scheduler-file` wrote."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["cmd_worker"]


def cmd_worker(args: argparse.Namespace) -> int:
    from audit.api import worker

    where = [args.scheduler]
    if "://" not in args.scheduler and Path(args.scheduler).is_file():
        where = ["--scheduler-file", args.scheduler]
    worker([*where, *args.dask_args])  # replaces this process: returns only by an error
