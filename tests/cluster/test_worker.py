"""`sitemap-audit worker`: a Dask worker started by hand with local:N's settings, over a
real scheduler process, serving a real crawl of loopback hosts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from asyncio.subprocess import Process
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import pytest

from audit.cluster.driver import LOCAL_WORKER_CONFIG
from audit.cluster.task import SWITCH_INTERVAL, loop_kind
from audit.cluster.worker import worker_env
from tests.cluster.sites import ROOT, Host, run_cli
from tests.state.nightsite import NightSite
from tests.state.test_nights_equal_fresh import assert_same, truth

pytest.importorskip("distributed")

DASK: Final = str(Path(sys.executable).parent / "dask")


def test_the_environment_s_own_settings_win() -> None:
    env = worker_env({"DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "20ms", "HOME": "/x"})
    assert env["HOME"] == "/x"
    assert env["DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL"] == "20ms"  # the deployment's
    assert env["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] == "False"
    assert env["DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL"] == "2s"
    assert env["DASK_DISTRIBUTED__ADMIN__EVENT_LOOP"] == loop_kind()
    assert len(env) == 2 + len(LOCAL_WORKER_CONFIG)  # each of local:N's, and the loop


def _facts(dask_worker: Any) -> dict[str, Any]:
    """What the worker process runs with (run on the worker by Client.run)."""
    import gc

    import dask

    from audit.core.eventloop import loop_name

    return {
        "profile": dask.config.get("distributed.worker.profile.enabled"),
        "tick": dask.config.get("distributed.admin.tick.interval"),
        "switch": sys.getswitchinterval(),
        "gc": gc.get_threshold(),
        "loop": loop_name(dask_worker.loop.asyncio_loop),
        "periodic": sorted(dask_worker.periodic_callbacks),
    }


async def _until(check: Any, what: str) -> None:
    for _ in range(400):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


QUIET: Final = {"stdout": asyncio.subprocess.DEVNULL, "stderr": asyncio.subprocess.DEVNULL}


@contextlib.asynccontextmanager
async def _scheduler(tmp_path: Path) -> AsyncIterator[tuple[Path, str, list[Process]]]:
    """A `dask scheduler` process: its file, its address, and the processes to end at the
    end (the caller adds its workers; each is ended with SIGTERM, the last started first)."""
    info = tmp_path / "scheduler.json"
    procs = [
        await asyncio.create_subprocess_exec(
            DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--scheduler-file", str(info), **QUIET,
        )
    ]  # fmt: skip
    try:
        await _until(lambda: info.exists() and info.stat().st_size, "the scheduler file")
        yield info, json.loads(info.read_text())["address"], procs
    finally:
        for proc in reversed(procs):  # a worker may be `dask worker` itself (exec): SIGTERM
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _as_a_local_run(
    aiohttp_server: Any, tmp_path: Path, address: str, seed: int, what: str
) -> dict[str, Any]:
    """Crawl a site with findings without and with the cluster at `address` (--state: every
    check goes to the workers) and assert the same records; the cluster run's summary."""
    site = NightSite(seed, n=30, deploy=False)
    server = await aiohttp_server(site.app())
    site.base = str(server.make_url("")).rstrip("/")
    common = ["--rate", "unlimited", "--fail-on", "never", "--retries", "0",
              "--format", "jsonl", "--no-progress"]  # fmt: skip
    reports = {}
    for name, extra in (
        ("local", []),
        ("cluster", ["--cluster", address, "--state", str(tmp_path / f"{seed}.sqlite")]),
    ):
        run = await run_cli("crawl", site.base + "/sitemap.xml", *common, *extra)
        out, err = await run.communicate()
        assert run.returncode == 0, err.decode()
        reports[name] = tmp_path / f"{name}-{seed}.jsonl"
        reports[name].write_bytes(out)
    assert_same(truth(reports["cluster"]), truth(reports["local"]), what)
    summary: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return summary


@pytest.mark.slow
async def test_a_worker_started_by_sitemap_audit_is_tuned_and_serves_a_crawl_as_a_local_run_does(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    from distributed import Client

    async with _scheduler(tmp_path) as (info, address, procs):
        # the scheduler given as its file: the launcher passes --scheduler-file
        procs.append(await asyncio.create_subprocess_exec(
            sys.executable, "-m", "audit", "worker", str(info), "--nthreads", "2",
            "--no-dashboard", "--host", "127.0.0.1", cwd=ROOT, **QUIET,
        ))  # fmt: skip
        async with Client(address, asynchronous=True, timeout=60) as client:
            await client.wait_for_workers(1, timeout=60)
            facts = list((await client.run(_facts)).values())
        assert len(facts) == 1
        got = facts[0]
        assert got["profile"] is False and "profile" not in got["periodic"]
        assert got["tick"] == "500ms"
        assert got["switch"] == pytest.approx(SWITCH_INTERVAL)
        assert got["gc"][0] == 50_000  # the preload ran in the worker process
        assert got["loop"] == loop_kind()  # the batches run on the worker's own loop

        host = Host()
        server = await aiohttp_server(host.app(), host="127.0.0.1")
        base = str(server.make_url("")).rstrip("/")
        host.urls = [f"{base}/p{j}" for j in range(30)]
        state = tmp_path / "s.sqlite"  # with --state, every check goes to the workers
        crawl = await run_cli("crawl", base + "/sitemap.xml", "--cluster", address,
                              "--rate", "unlimited", "--state", str(state),
                              "--format", "jsonl", "--no-progress")  # fmt: skip
        out, err = await crawl.communicate()
        assert crawl.returncode == 0, err.decode()
        summary = json.loads(out.decode().strip().splitlines()[-1])
        assert summary["cluster"]["batches"] > 0 and summary["cluster"]["here"] == 0
        assert sorted(path for _, path in host.times) == sorted(f"/p{j}" for j in range(30))

        # and its records are a local run's (a site with findings: the worker's tuning
        # changes how fast, never what a page is judged to be)
        summary = await _as_a_local_run(
            aiohttp_server, tmp_path, address, 3, "sitemap-audit worker"
        )
        assert summary["cluster"]["batches"] > 0


@pytest.mark.slow
async def test_a_plain_dask_worker_gives_a_local_run_s_records(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    """A worker the deployment starts itself (`dask worker`, no preload, no settings of
    ours) judges every page as a local run does: the same records, findings included."""
    async with _scheduler(tmp_path) as (_info, address, procs):
        procs.append(await asyncio.create_subprocess_exec(
            DASK, "worker", address, "--nthreads", "2", "--no-dashboard",
            "--host", "127.0.0.1", cwd=ROOT, **QUIET,
        ))  # fmt: skip
        summary = await _as_a_local_run(aiohttp_server, tmp_path, address, 5, "plain dask worker")
        cluster = summary["cluster"]
        assert cluster["batches"] > 0 and cluster["here"] == 0  # the worker checked them all
