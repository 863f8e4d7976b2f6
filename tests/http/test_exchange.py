"""Remote body sinks (audit/http/exchange.py RemoteSink, workers.py): a page read into a
sink in a fetch worker process leaves the same FetchResult and the same sink state as the
page read in this process, whatever the answer (redirects, over the cap, 404, not HTML, a
reset mid-body, a retry) and when the worker dies; a recipe outside the allowlist is
refused.

`DigestSink` is the remote sink under test: it counts and hashes the bytes it is fed. It is
defined here, at module level, because a fetch worker imports it by name
(tests.http.test_exchange): the worker runs in the parent's working directory, the
project root, so `tests` is importable there.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from audit.core.config import CrawlConfig
from audit.core.records import FetchResult
from audit.http import HttpClient, exchange
from audit.http.exchange import (
    SINK_MODULES,
    Recipe,
    TeeSink,
    build_sink,
    recipe_of,
    response_headers,
)
from audit.http.workers import frame, split_frames
from audit.pipeline import hooks
from tests.crawlkit import HTML, Serve

HERE = "tests.http.test_exchange"
ALLOWED = (*SINK_MODULES, HERE)
WORKER = {"fetch_workers": 1, "fetch_workers_after": 0}
IN_PROCESS = {"fetch_workers": 0}
CAP = 100_000


class DigestSink:
    """Counts and hashes the first `keep` bytes it is fed; wants no more after `keep`
    bytes; with `html_only`, wants only an HTML answer. `fed_in`: the process that read
    the body (not part of its state)."""

    def __init__(self, keep: int = 10**9, html_only: bool = False) -> None:
        self.keep, self.html_only = keep, html_only
        self.starts = 0
        self.status: int | None = None
        self.wanted = False
        self.fed = 0
        self.digest: Any = hashlib.sha256()  # or a _Digest, as accepted
        self.stopped = False
        self.at_eof: bool | None = None  # None: not ended
        self.fed_in: int | None = None

    # BodySink
    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        content_type = next((v for k, v in headers if k == "content-type"), "")
        self.starts += 1
        self.status, self.fed, self.digest = status, 0, hashlib.sha256()
        self.stopped, self.at_eof, self.fed_in = False, None, os.getpid()
        self.wanted = not self.html_only or content_type.startswith("text/html")
        return self.wanted

    def feed(self, chunk: bytes) -> bool:
        kept = chunk[: max(0, self.keep - self.fed)]
        self.fed += len(kept)
        self.digest.update(kept)
        self.stopped = self.fed >= self.keep
        return self.stopped

    def end(self, *, at_eof: bool) -> None:
        self.at_eof = at_eof

    # RemoteSink
    def recipe(self) -> Recipe | None:
        return f"{HERE}:DigestSink", (self.keep, self.html_only)

    def outcome(self) -> tuple[Any, ...]:
        return (self.status, self.wanted, self.fed, self.digest.digest(), self.stopped,
                self.at_eof, self.fed_in)  # fmt: skip

    def accept(self, outcome: Any) -> None:
        status, self.wanted, self.fed, digest, self.stopped, self.at_eof, self.fed_in = outcome
        self.starts += 1  # the worker's sink was started once: this one is as if it were
        self.status, self.digest = status, _Digest(digest)

    def state(self) -> dict[str, Any]:
        return {"starts": self.starts, "status": self.status, "wanted": self.wanted,
                "fed": self.fed, "sha": self.digest.digest().hex(), "stopped": self.stopped,
                "at_eof": self.at_eof}  # fmt: skip


class _Digest:
    """A finished digest, as accepted from a worker."""

    def __init__(self, value: bytes) -> None:
        self.value = value

    def digest(self) -> bytes:
        return self.value


class LocalOnly:
    """A body sink with no recipe: it is always read in this process."""

    def __init__(self) -> None:
        self.fed = 0

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        self.fed = 0
        return True

    def feed(self, chunk: bytes) -> bool:
        self.fed += len(chunk)
        return False

    def end(self, *, at_eof: bool) -> None:
        pass


# --- the site ----------------------------------------------------------------------------

PAGE = ("<html><head><title>t</title></head><body>"
        + "".join(f'<p><a href="/p/{i}">link {i}</a> text text text</p>' for i in range(400))
        + "</body></html>").encode()  # fmt: skip
BIG = b"<html><body>" + b"<p>filler</p>" * 25_000 + b"</body></html>"  # over CAP
DATA = json.dumps({"items": list(range(3000))}).encode()
BROKEN_PART = b"<html><body>" + b"x" * 5000


class Site:
    """Answers that depend only on the request and a per-run counter (the `run` query)."""

    def __init__(self) -> None:
        self.tries: dict[str, int] = {}
        self.seen: list[str] = []
        self.release = asyncio.Event()
        self.release.set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(request.path_qs)
        run = request.query.get("run", "")
        key = f"{run}:{request.path}"
        self.tries[key] = self.tries.get(key, 0) + 1
        if request.path.startswith("/held/"):
            await self.release.wait()
        return await self.answer(request, request.path, run, self.tries[key])

    async def answer(
        self, request: web.Request, path: str, run: str, tries: int
    ) -> web.StreamResponse:
        if path == "/r1":
            raise web.HTTPMovedPermanently(f"/r2?run={run}")
        if path == "/r2":
            raise web.HTTPFound(f"/page?run={run}")
        if path == "/flaky" and tries == 1:
            return web.Response(status=503, text="busy", headers=HTML)
        if path == "/throttled":  # a Retry-After over the cap: final at once, body read
            return web.Response(
                status=429, text="slow down", headers={**HTML, "Retry-After": "600"}
            )
        if path == "/gone":
            return web.Response(status=404, text="<html>gone</html>" * 50, headers=HTML)
        if path == "/data.json":
            return web.Response(body=DATA, content_type="application/json")
        if path == "/big":
            return web.Response(body=BIG, headers=HTML)
        if path == "/zipped":
            return web.Response(
                body=gzip.compress(PAGE), headers={**HTML, "Content-Encoding": "gzip"}
            )
        if path == "/broken":
            return await self.broken(request)
        return web.Response(body=PAGE, headers=HTML)  # /page, /flaky, /held/N

    @staticmethod
    async def broken(request: web.Request) -> web.StreamResponse:
        """Headers promise more body than comes: a reset mid-body."""
        resp = web.StreamResponse(headers={**HTML, "Content-Length": "100000"})
        await resp.prepare(request)
        await resp.write(BROKEN_PART)
        assert request.transport is not None
        request.transport.close()
        return resp


def both() -> TeeSink:
    return TeeSink([DigestSink(), DigestSink(html_only=True)])


# path -> the sink it is fetched with
SINKS: dict[str, Callable[[], Any]] = {
    "/page": both,
    "/r1": both,  # 301 -> 302 -> /page
    "/big": lambda: TeeSink([DigestSink(), DigestSink(keep=1000, html_only=True)]),
    "/gone": both,
    "/data.json": lambda: DigestSink(html_only=True),  # not HTML: an excerpt is read
    "/broken": both,
    "/flaky": both,
    "/throttled": both,
    "/zipped": DigestSink,
}


def states(sink: Any) -> Any:
    if isinstance(sink, TeeSink):
        return [states(part) for part in sink.sinks]
    return sink.state()


def comparable(result: FetchResult, run: str) -> dict[str, Any]:
    out = asdict(result)
    out.pop("elapsed_ms")
    out["headers"] = sorted((k, v) for k, v in result.headers if k not in ("date", "server"))
    text = json.dumps(out, default=repr, sort_keys=True)
    return dict(json.loads(text.replace(f"run={run}", "run=*")))


async def fetch_all(client: HttpClient, base: str, run: str) -> dict[str, Any]:
    sinks = {path: make() for path, make in SINKS.items()}
    results = await asyncio.gather(
        *(
            client.fetch_page(f"{base}{path}?run={run}", sink, cap=CAP)
            for path, sink in sinks.items()
        )
    )
    return {
        path: (comparable(result, run), states(sinks[path]), sinks[path])
        for path, result in zip(sinks, results, strict=True)
    }


def fed_in(sink: Any) -> set[int | None]:
    if isinstance(sink, TeeSink):
        return set().union(*(fed_in(part) for part in sink.sinks))
    return {sink.fed_in}


async def started_client(config: CrawlConfig, base: str, **kwargs: Any) -> HttpClient:
    """A client whose fetch worker runs (started by a first page)."""
    client = HttpClient(config, **kwargs)
    await client.__aenter__()
    await client.fetch_page(f"{base}/page?run=warmup", DigestSink(), cap=CAP)
    assert await client.wait_fetch_workers()
    return client


# --- the tests ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_page_read_in_a_worker_leaves_what_reading_it_here_does(
    serve: Serve, fast_config: Callable[..., CrawlConfig]
) -> None:
    site = Site()
    base = await serve(site)
    async with HttpClient(fast_config(**IN_PROCESS), sink_modules=ALLOWED) as client:
        here = await fetch_all(client, base, "here")
    client = await started_client(fast_config(**WORKER), base, sink_modules=ALLOWED)
    try:
        before = client.worker_exchanges
        remote = await fetch_all(client, base, "remote")
        served = client.worker_exchanges - before
    finally:
        await client.aclose()
    for path in SINKS:
        result, state, _ = remote[path]
        want_result, want_state, _ = here[path]
        if path == "/broken":  # how much arrives before the reset is the socket's choice
            state, want_state = _prefix_view(state), _prefix_view(want_state)
        assert result == want_result, path
        assert state == want_state, path
    # every request of the remote run was a worker's, and every body was read there
    assert served == sum(1 for seen in site.seen if "run=remote" in seen)
    pids = set().union(*(fed_in(sink) for _, _, sink in remote.values())) - {None}
    assert pids and os.getpid() not in pids
    assert fed_in(here["/page"][2]) == {os.getpid()}
    # what the cases are about, as seen by the sinks
    page, big, data = remote["/page"][1], remote["/big"][1], remote["/data.json"][1]
    assert page[0]["fed"] == len(PAGE) and page[0]["at_eof"] is True
    assert big[0]["fed"] == CAP and big[0]["at_eof"] is False and big[1]["stopped"] is True
    assert big[1]["at_eof"] is False
    assert data["wanted"] is False and data["fed"] == 0
    assert remote["/r1"][0]["redirects"] and remote["/r1"][1] == page
    assert remote["/broken"][1][0]["starts"] == 3 and remote["/broken"][0]["error_kind"] == "reset"
    assert remote["/flaky"][1][0]["starts"] == 1 and remote["/flaky"][0]["attempts"] == 2
    assert remote["/throttled"][1][0]["status"] == 429 and remote["/throttled"][1][0]["fed"] > 0
    assert remote["/gone"][1][1]["status"] == 404 and remote["/zipped"][1]["fed"] == len(PAGE)


def _prefix_view(state: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A sink state of the reset page, with what it was fed checked to be a prefix of what
    was sent, and its length left out."""
    out = []
    for part in state:
        fed = part["fed"]
        assert hashlib.sha256(BROKEN_PART[:fed]).hexdigest() == part["sha"]
        out.append({k: v for k, v in part.items() if k not in ("fed", "sha")})
    return out


@pytest.mark.slow
async def test_pages_of_a_killed_worker_are_read_here(
    serve: Serve, fast_config: Callable[..., CrawlConfig], caplog: Any
) -> None:
    site = Site()
    base = await serve(site)
    caplog.set_level(logging.WARNING, logger="audit.http")
    client = await started_client(fast_config(timeout=10.0, **WORKER), base, sink_modules=ALLOWED)
    try:
        (pid,) = client.worker_pids
        site.release.clear()
        sinks = [both() for _ in range(5)]
        pending = [
            asyncio.ensure_future(client.fetch_page(f"{base}/held/{n}", sink, cap=CAP))
            for n, sink in enumerate(sinks)
        ]
        await _until(lambda: _held(site) >= 5)  # all five sent by the worker
        os.kill(pid, signal.SIGKILL)
        await _until(lambda: _held(site) >= 10)  # and sent again from here
        site.release.set()
        results = await asyncio.gather(*pending)
        later_sink = both()
        later = await client.fetch_page(f"{base}/page?run=later", later_sink, cap=CAP)
    finally:
        await client.aclose()
    assert [r.status for r in results] == [200] * 5 and later.status == 200
    want = [DigestSink().state() | _whole(PAGE)] * 2
    assert [states(sink) for sink in sinks] == [want] * 5
    assert states(later_sink) == want
    assert all(fed_in(sink) == {os.getpid()} for sink in [*sinks, later_sink])
    assert _held(site) == 10
    warnings = [r.getMessage() for r in caplog.records if r.name == "audit.http"]
    assert len(warnings) == 1 and "fetch worker stopped" in warnings[0], warnings


def _held(site: Site) -> int:
    return sum(1 for seen in site.seen if seen.startswith("/held/"))


def _whole(body: bytes) -> dict[str, Any]:
    """The state of a DigestSink that read all of `body` of a 200 HTML answer, once."""
    return {"starts": 1, "status": 200, "wanted": True, "fed": len(body),
            "sha": hashlib.sha256(body).hexdigest(), "stopped": False, "at_eof": True}  # fmt: skip


async def _until(done: Callable[[], bool]) -> None:
    for _ in range(500):  # bounded: 10 s
        if done():
            return
        await asyncio.sleep(0.02)
    pytest.fail("the server never saw the requests")


@pytest.mark.slow
async def test_a_sink_outside_the_allowlist_is_read_here(
    serve: Serve, fast_config: Callable[..., CrawlConfig], caplog: Any
) -> None:
    """The client's default allowlist is this package's modules: a test module's sink is
    refused (one warning) and its pages are read in this process, once each."""
    site = Site()
    base = await serve(site)
    caplog.set_level(logging.WARNING, logger="audit.http")
    async with HttpClient(fast_config(**WORKER)) as client:
        assert (await client.fetch(f"{base}/page?run=warmup")).status == 200
        assert await client.wait_fetch_workers()
        before = client.worker_exchanges
        sinks = [both() for _ in range(3)]
        results = [
            await client.fetch_page(f"{base}/page?run={n}", sink, cap=CAP)
            for n, sink in enumerate(sinks)
        ]
        assert client.worker_exchanges == before
    assert [r.status for r in results] == [200] * 3
    assert [states(s) for s in sinks] == [[DigestSink().state() | _whole(PAGE)] * 2] * 3
    assert sum(1 for seen in site.seen if "/page" in seen) == 4
    warnings = [r.getMessage() for r in caplog.records if r.name == "audit.http"]
    assert len(warnings) == 1, warnings
    assert (
        "refused" in warnings[0] and HERE in warnings[0] and "allowed sink modules" in warnings[0]
    )


@pytest.mark.slow
async def test_a_worker_refuses_a_factory_outside_its_allowlist(serve: Serve) -> None:
    """Spoken to directly: a worker never imports a module its settings do not allow, and
    sends no request for it."""
    site = Site()
    base = await serve(site)
    settings = {"user_agent": "t", "timeout": 2.0, "concurrency": 2, "per_host": 2,
                "sink_modules": list(SINK_MODULES), "retry_after_cap": 1.0}  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "audit.http.fetchworker", json.dumps(settings),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    recipes: list[Recipe] = [
        (f"{HERE}:DigestSink", (10, False)),
        ("os:system", ("echo no",)),
        ("audit.http.exchange:TeeSink", ((f"{HERE}:DigestSink", (10, False)),)),
        ("audit.http.exchange", ()),  # not module:callable
    ]
    url = f"{base}/page"
    proc.stdin.write(
        frame([(n, "GET", url, None, True, CAP, False, r) for n, r in enumerate(recipes)])
    )
    await proc.stdin.drain()
    replies: dict[int, Any] = {}
    buf = bytearray()
    try:
        while len(replies) < len(recipes):  # the ready frame is empty: no reply in it
            chunk = await asyncio.wait_for(proc.stdout.read(65536), 30)
            assert chunk, "the worker ended"
            buf += chunk
            replies.update((m[0], m) for m in split_frames(buf))
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 30)
    reasons = [replies[n][-1] for n in range(len(recipes))]
    assert all(isinstance(r, str) for r in reasons), reasons
    assert all("not among the allowed sink modules" in r for r in reasons[:3]), reasons
    assert "'tests.http.test_exchange'" in reasons[0] and "'os'" in reasons[1]
    assert "package.module:callable" in reasons[3]
    assert all(replies[n][1] is None for n in range(len(recipes)))
    assert site.seen == []


def test_a_tee_is_remote_only_when_all_its_parts_are() -> None:
    assert recipe_of(LocalOnly()) is None
    assert recipe_of(TeeSink([DigestSink(), LocalOnly()])) is None
    tee = TeeSink([DigestSink(7), DigestSink(html_only=True)])
    assert tee.recipe() == (
        "audit.http.exchange:TeeSink",
        ((f"{HERE}:DigestSink", (7, False)), (f"{HERE}:DigestSink", (10**9, True))),
    )
    assert hooks.TeeSink is TeeSink  # still importable where it was


@pytest.mark.parametrize(
    ("chunks", "at_eof", "early_at_eof"),
    [
        ([b"abc", b"defg", b"hi"], True, False),  # the early part stops before the end
        ([b"abcdefg"], True, True),  # it stops in the last chunk: told at_eof
        ([b"abc", b"defgh"], False, False),  # cut before the end (a cap)
    ],
)
def test_a_tee_built_elsewhere_leaves_its_parts_as_a_tee_here_does(
    chunks: list[bytes], at_eof: bool, early_at_eof: bool
) -> None:
    """The tee's at_eof rule, through recipe -> build -> outcome -> accept, with chunks
    chosen here (no socket): the parts end exactly as a tee fed here leaves them."""
    headers = [("content-type", "text/html")]
    here = TeeSink([DigestSink(keep=5), DigestSink(), DigestSink(html_only=True)])
    recipe = here.recipe()
    assert recipe is not None
    there = build_sink(recipe, ALLOWED)
    for tee in (here, there):
        assert tee.start(200, headers)
        for chunk in chunks:
            if tee.feed(chunk):
                break
        tee.end(at_eof=at_eof)
    parent = TeeSink([DigestSink(keep=5), DigestSink(), DigestSink(html_only=True)])
    parent.accept(there.outcome())
    assert states(parent) == states(here)
    assert [part["at_eof"] for part in states(parent)] == [early_at_eof, at_eof, at_eof]
    assert states(parent)[0]["stopped"] is True and states(parent)[0]["fed"] == 5


# --- an answer's headers -----------------------------------------------------------------


async def test_an_answers_headers_are_lower_cased_pairs_with_repeats_in_order(
    serve: Serve,
) -> None:
    """response_headers over a real answer: every name lower-cased (a known header and
    one aiohttp does not know, in any letter case), a repeated header kept as often as
    sent, in the order sent, the values as sent; a second answer reads the same."""

    async def page(request: web.Request) -> web.StreamResponse:
        resp = web.Response(text="ok")
        resp.headers.add("X-Robots-Tag", "noarchive")
        resp.headers.add("link", '</a>; rel="canonical"')
        resp.headers.add("X-ROBOTS-TAG", "googlebot: noindex")
        resp.headers.add("X-Odd-Name", "One, Two")
        return resp

    app = web.Application()
    app.router.add_get("/", page)
    base = await serve(app)
    async with aiohttp.ClientSession() as session:
        answers = []
        for _ in range(2):
            async with session.get(base + "/") as resp:
                answers.append(response_headers(resp))
    first, second = answers
    assert first == second
    names = [name for name, _ in first]
    assert names == [name.lower() for name in names]
    assert [v for k, v in first if k == "x-robots-tag"] == ["noarchive", "googlebot: noindex"]
    assert [v for k, v in first if k == "link"] == ['</a>; rel="canonical"']
    assert [v for k, v in first if k == "x-odd-name"] == ["One, Two"]
    assert ("content-type", "text/plain; charset=utf-8") in first


async def test_a_server_inventing_header_names_leaves_the_name_table_bounded(
    serve: Serve,
) -> None:
    """Names are lower-cased once per run and remembered; a server that sends new names
    on every answer never grows that table past its bound, and each answer still reads
    right."""
    bound = exchange._LOWER_NAMES_MAX
    per_answer = 100

    async def page(request: web.Request) -> web.StreamResponse:
        n = int(request.query["n"])
        return web.Response(
            text="ok", headers={f"X-Made-Up-{n}-{i}": str(i) for i in range(per_answer)}
        )

    app = web.Application()
    app.router.add_get("/", page)
    base = await serve(app)
    table = exchange._lower_name.__self__
    async with aiohttp.ClientSession() as session:
        for n in range(bound // per_answer + 2):
            async with session.get(f"{base}/?n={n}") as resp:
                got = dict(response_headers(resp))
            assert len(table) <= bound
            assert [got[f"x-made-up-{n}-{i}"] for i in range(per_answer)] == [
                str(i) for i in range(per_answer)
            ]
