"""`sitemap-audit worker`'s errors: one line on stderr and exit 2, never a traceback (its
work, a tuned Dask worker serving a crawl: tests/cluster/test_worker.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.cluster.sites import ROOT


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_without_a_scheduler_the_usage_error() -> None:
    done = _run("import sys; from audit.cli.main import main; sys.exit(main(['worker']))")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("sitemap-audit worker: error:") and "scheduler" in last


def test_without_dask_one_line_with_the_install_hint() -> None:
    done = _run(
        "import sys; sys.modules['distributed'] = None; from audit.cli.main import main; "
        "sys.exit(main(['worker', 'tcp://127.0.0.1:1']))"
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "sitemap-audit: error: worker needs Dask distributed: "
        "install sitemap-audit with its cluster extra (README.md, Install)"
    ]
