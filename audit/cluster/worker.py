"""A Dask worker for audits, started by hand: `sitemap-audit worker SCHEDULER [dask worker
options]` runs `dask worker` with the settings `--cluster local:N` gives its own workers.

A worker started with Dask's defaults runs its loop on asyncio with a statistical
profiler sampling every thread every 10 ms and an event-loop tick every 20 ms; the run's
batches then need a uvloop of their own in a thread (audit.cluster.task), and every turn
of a group that the GIL hands over late is a request lost (audit.http.pace keeps a turn's
schedule only up to a quarter of an interval late). Measured on the 100-host bench
(bench/suites/cluster.py, `tcp` against `tcpaudit`): see docs/cluster.md.

What the launcher sets, each only where the environment does not set it already (a
deployment's own Dask settings win):
- Dask's config (DASK_* variables, which the worker's nanny hands to its worker process):
  the event loop (`uvloop` when installed, the batches then run on the worker's own loop)
  and driver.LOCAL_WORKER_CONFIG's monitors;
- this module as a `--preload`: `dask_setup` tunes the worker process's collector and GIL
  switch interval as the CLI tunes its own (task.tune_process).

Everything else (`--nworkers`, `--nthreads`, TLS, resources) is `dask worker`'s own option,
passed through unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, NoReturn

from audit.cluster.driver import LOCAL_WORKER_CONFIG
from audit.cluster.task import loop_kind, tune_process

__all__ = ["PRELOAD", "dask_setup", "exec_worker", "worker_command", "worker_env"]

PRELOAD = "audit.cluster.worker"


def _env_name(key: str) -> str:
    """Dask's environment variable for a config key (`a.b-c` -> DASK_A__B_C)."""
    return "DASK_" + key.replace(".", "__").replace("-", "_").upper()


def worker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with the audit worker's Dask settings added where it has none of its own."""
    settings: dict[str, Any] = {**LOCAL_WORKER_CONFIG, "distributed.admin.event-loop": loop_kind()}
    env = dict(environ)
    for key, value in settings.items():
        env.setdefault(_env_name(key), str(value))
    return env


def worker_command(args: list[str]) -> list[str]:
    """The `dask worker` command line: the caller's arguments and this module preloaded."""
    return [sys.executable, "-m", "distributed.cli.dask_worker", *args, "--preload", PRELOAD]


def exec_worker(args: list[str]) -> NoReturn:
    """Replace this process by `dask worker` (signals then reach Dask directly)."""
    command = worker_command(args)
    os.execve(command[0], command, worker_env(os.environ))


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each worker process as it starts."""
    tune_process()


if __name__ == "__main__":  # pragma: no cover - the benchmark starts workers this way too
    exec_worker(sys.argv[1:])
