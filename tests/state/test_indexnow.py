"""`crawl --indexnow KEY` against a loopback stand-in endpoint that records every POST
(contracts/fix.md): only new, content-changed and newly gone URLs are sent, the key
file is checked first, 429 waits for Retry-After, refusals are resent next night, and
--dry-run sends nothing and leaves the ledger alone."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import Serve

KEY = "a1b2c3d4e5f6-key"


@dataclass
class Pages:
    """A site whose pages change between nights: main text, or only the footer."""

    texts: dict[str, str]
    key_body: str = KEY + "\n"
    key_moved: bool = False  # the key file answers 302 to a URL that serves the key
    footer: str = "night 1"
    status: dict[str, int] = field(default_factory=dict)
    base: str = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/robots.txt", self.no_robots)
        app.router.add_get("/sitemap.xml", self.sitemap)
        app.router.add_get(f"/{KEY}.txt", self.key_file)
        app.router.add_get(f"/real/{KEY}.txt", self.key_file)
        app.router.add_route("*", "/p/{name}", self.page)
        return app

    async def no_robots(self, request: web.Request) -> web.Response:
        return web.Response(status=404)

    async def key_file(self, request: web.Request) -> web.Response:
        if self.key_moved and not request.path.startswith("/real/"):
            raise web.HTTPFound(f"/real/{KEY}.txt")
        return web.Response(text=self.key_body, content_type="text/plain")

    async def sitemap(self, request: web.Request) -> web.Response:
        locs = "".join(f"<url><loc>{self.base}/p/{n}</loc></url>" for n in self.texts)
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
        return web.Response(body=body, content_type="application/xml")

    async def page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        status = self.status.get(name, 200)
        if status != 200 or name not in self.texts:
            return web.Response(status=404 if status == 200 else status)
        text = self.texts[name]
        html = (
            f"<!doctype html><html><head><title>{name}</title></head><body>"
            f"<main><h1>{name}</h1><p>{text}</p></main><footer>{self.footer}</footer>"
            "</body></html>"
        )
        return web.Response(text=html, content_type="text/html")


@dataclass
class Endpoint:
    """The stand-in IndexNow endpoint: answers from `script` (then 200), records POSTs."""

    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    posts: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    url: str = ""

    def app(self) -> web.Application:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/indexnow", self.post)
        return app

    async def post(self, request: web.Request) -> web.Response:
        self.times.append(time.monotonic())
        self.content_types.append(request.headers.get("Content-Type", ""))
        self.posts.append(json.loads(await request.read()))
        status, headers = self.script.pop(0) if self.script else (200, {})
        return web.Response(status=status, headers=headers)

    def urls(self) -> list[str]:
        return [u for p in self.posts for u in p["urlList"]]


async def start(serve: Serve, n: int = 6) -> tuple[Pages, Endpoint]:
    pages = Pages({f"page-{i}": f"The text of page {i}, about oak and pine." for i in range(n)})
    pages.base = await serve(pages)
    endpoint = Endpoint()
    endpoint.url = await serve(endpoint) + "/indexnow"
    return pages, endpoint


async def night(
    pages: Pages, endpoint: Endpoint, state: Path, out: Path, *extra: str
) -> tuple[int, list[dict[str, Any]]]:
    argv = [
        "crawl",
        f"{pages.base}/sitemap.xml",
        "--state",
        str(state),
        "--format",
        "jsonl",
        "--output",
        str(out),
        "--no-progress",
        "--rate",
        "1000",
        "--retries",
        "2",
        "--indexnow",
        KEY,
        "--indexnow-endpoint",
        endpoint.url,
        *extra,
    ]
    code = await asyncio.to_thread(main, argv)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return code, records


def of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == kind]


def ledger(state: Path) -> dict[str, tuple[str, int | None]]:
    conn = sqlite3.connect(state)
    try:
        rows = conn.execute("SELECT url, state, fp FROM indexnow_ledger").fetchall()
    except sqlite3.OperationalError:  # no table: nothing was ever accepted
        rows = []
    finally:
        conn.close()
    return {url: (s, fp) for url, s, fp in rows}


async def test_first_night_all_then_only_main_text_changes(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve)
    state = tmp_path / "s.sqlite"
    code, recs = await night(pages, endpoint, state, tmp_path / "1.jsonl")
    assert code == 0
    listed = [f"{pages.base}/p/page-{i}" for i in range(6)]
    assert len(endpoint.posts) == 1
    post = endpoint.posts[0]
    host = pages.base.split("//")[1].split(":")[0]
    assert post == {
        "host": host,
        "key": KEY,
        "keyLocation": f"{pages.base}/{KEY}.txt",
        "urlList": post["urlList"],
    }
    assert sorted(post["urlList"]) == sorted(listed)
    assert endpoint.content_types == ["application/json; charset=utf-8"]
    sent = of(recs, "indexnow")
    assert {(r["reason"], r["outcome"], r["status"]) for r in sent} == {("new", "submitted", 200)}
    # the indexnow records come after every url and finding record, before the summary
    kinds = [r["type"] for r in recs]
    first = kinds.index("indexnow")
    assert "url" not in kinds[first:] and "finding" not in kinds[first:]
    assert kinds[-1] == "summary"
    assert recs[-1]["indexnow"] == {
        "endpoint": endpoint.url,
        "dry_run": False,
        "submitted": 6,
        "skipped": 0,
        "rejected": 0,
        "posts": 1,
    }
    assert set(ledger(state)) == set(listed)

    # night 2: the main text of 3 pages changes; the footer of every page changes
    for i in (0, 1, 2):
        pages.texts[f"page-{i}"] += " Now with walnut."
    pages.footer = "night 2: new footer, new scripts"
    code, recs = await night(pages, endpoint, state, tmp_path / "2.jsonl")
    assert len(endpoint.posts) == 2
    got = {r["url"]: r["reason"] for r in of(recs, "indexnow")}
    assert got == dict.fromkeys(listed[:3], "changed")
    assert sorted(endpoint.posts[1]["urlList"]) == sorted(listed[:3])
    assert recs[-1]["indexnow"]["skipped"] == 3  # footer only: the same main text

    # night 3: one page is gone
    pages.status["page-5"] = 404
    code, recs = await night(pages, endpoint, state, tmp_path / "3.jsonl")
    assert endpoint.posts[2]["urlList"] == [listed[5]]
    assert [(r["url"], r["reason"]) for r in of(recs, "indexnow")] == [(listed[5], "gone")]
    assert ledger(state)[listed[5]] == ("gone", None)

    # night 4: nothing changed; the gone page stays gone: nothing is sent
    code, recs = await night(pages, endpoint, state, tmp_path / "4.jsonl")
    assert len(endpoint.posts) == 3
    assert of(recs, "indexnow") == []
    assert recs[-1]["indexnow"]["skipped"] == 5
    assert recs[-1]["indexnow"]["posts"] == 0

    # night 5: the gone page is back with its old text: it is sent as changed
    del pages.status["page-5"]
    code, recs = await night(pages, endpoint, state, tmp_path / "5.jsonl")
    assert [(r["url"], r["reason"]) for r in of(recs, "indexnow")] == [(listed[5], "changed")]


async def test_a_404_never_submitted_is_not_sent(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=3)
    pages.status["page-2"] = 410
    await night(pages, endpoint, tmp_path / "s.sqlite", tmp_path / "1.jsonl")
    assert sorted(endpoint.urls()) == [f"{pages.base}/p/page-{i}" for i in (0, 1)]


async def test_429_waits_for_retry_after(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=2)
    endpoint.script = [(429, {"Retry-After": "1"})]
    code, recs = await night(pages, endpoint, tmp_path / "s.sqlite", tmp_path / "1.jsonl")
    assert code == 0
    assert len(endpoint.posts) == 2
    assert endpoint.times[1] - endpoint.times[0] >= 0.95  # one wall-clock test, with tolerance
    assert {(r["outcome"], r["status"]) for r in of(recs, "indexnow")} == {("submitted", 200)}
    assert recs[-1]["indexnow"]["posts"] == 2
    assert recs[-1]["indexnow"]["submitted"] == 2


async def test_a_refusal_is_reported_and_resent_next_night(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=3)
    state = tmp_path / "s.sqlite"
    endpoint.script = [(422, {})]
    code, recs = await night(pages, endpoint, state, tmp_path / "1.jsonl")
    assert code == 1  # indexnow-rejected is an error
    assert len(endpoint.posts) == 1  # a 4xx is not retried
    [rejected] = [r for r in of(recs, "finding") if r["code"] == "indexnow-rejected"]
    assert rejected["url"] == endpoint.url
    assert "422" in rejected["message"] and "3 URLs" in rejected["message"]
    assert pages.base in rejected["message"]
    assert {(r["outcome"], r["status"]) for r in of(recs, "indexnow")} == {("rejected", 422)}
    assert recs[-1]["indexnow"]["rejected"] == 3
    assert ledger(state) == {}
    # nothing changed on the site; the refused URLs are sent again
    code, recs = await night(pages, endpoint, state, tmp_path / "2.jsonl")
    assert code == 0
    assert len(endpoint.posts) == 2
    assert sorted(endpoint.posts[1]["urlList"]) == sorted(endpoint.posts[0]["urlList"])
    assert {r["reason"] for r in of(recs, "indexnow")} == {"new"}
    assert len(ledger(state)) == 3


async def test_5xx_after_the_retries_is_rejected(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=1)
    endpoint.script = [(503, {})] * 3
    _, recs = await night(pages, endpoint, tmp_path / "s.sqlite", tmp_path / "1.jsonl")
    assert len(endpoint.posts) == 3  # --retries 2
    assert recs[-1]["indexnow"]["posts"] == 3
    assert {(r["outcome"], r["status"]) for r in of(recs, "indexnow")} == {("rejected", 503)}


@pytest.mark.parametrize("body", ["wrong-key-here\n", ""])
async def test_a_wrong_key_file_sends_nothing(serve: Serve, tmp_path: Path, body: str) -> None:
    pages, endpoint = await start(serve, n=2)
    pages.key_body = body
    state = tmp_path / "s.sqlite"
    code, recs = await night(pages, endpoint, state, tmp_path / "1.jsonl")
    assert code == 1
    assert endpoint.posts == []
    [bad] = [r for r in of(recs, "finding") if r["code"] == "indexnow-key-invalid"]
    assert bad["url"] == f"{pages.base}/{KEY}.txt"
    assert "HTTP 200" in bad["message"]
    assert of(recs, "indexnow") == []
    assert ledger(state) == {}


async def test_a_redirected_key_file_is_not_followed(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=1)
    pages.key_moved = True
    _, recs = await night(pages, endpoint, tmp_path / "s.sqlite", tmp_path / "1.jsonl")
    assert endpoint.posts == []
    [bad] = [r for r in of(recs, "finding") if r["code"] == "indexnow-key-invalid"]
    assert "HTTP 302" in bad["message"]


async def test_dry_run_sends_nothing_and_leaves_the_ledger(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=3)
    state = tmp_path / "s.sqlite"
    code, recs = await night(pages, endpoint, state, tmp_path / "1.jsonl", "--dry-run")
    assert code == 0
    assert endpoint.posts == []
    assert {(r["reason"], r["outcome"], r["status"]) for r in of(recs, "indexnow")} == {
        ("new", "dry-run", None)
    }
    assert recs[-1]["indexnow"] == {
        "endpoint": endpoint.url,
        "dry_run": True,
        "submitted": 0,
        "skipped": 0,
        "rejected": 0,
        "posts": 0,
    }
    assert ledger(state) == {}
    # the same state without --dry-run: everything is still new
    code, recs = await night(pages, endpoint, state, tmp_path / "2.jsonl")
    assert len(endpoint.urls()) == 3
    assert {r["reason"] for r in of(recs, "indexnow")} == {"new"}


@pytest.mark.slow
async def test_12000_urls_go_in_two_posts(serve: Serve, tmp_path: Path) -> None:
    pages, endpoint = await start(serve, n=12_000)
    _, recs = await night(
        pages, endpoint, tmp_path / "s.sqlite", tmp_path / "1.jsonl", "--concurrency", "64"
    )
    assert [len(p["urlList"]) for p in endpoint.posts] == [10_000, 2_000]
    # in the order of the url records
    order = [r["url"] for r in of(recs, "url")]
    assert endpoint.urls() == order
    assert recs[-1]["indexnow"]["submitted"] == 12_000


async def test_credentials_never_reach_the_endpoint(serve: Serve, tmp_path: Path) -> None:
    """Even an endpoint on the audited origin itself gets no --header or --auth."""
    pages, endpoint = await start(serve, n=1)
    seen: list[dict[str, str]] = []
    app = pages.app

    def with_endpoint() -> web.Application:
        a = app()

        async def post(request: web.Request) -> web.Response:
            seen.append(dict(request.headers))
            return await endpoint.post(request)

        a.router.add_post("/indexnow", post)
        return a

    pages.app = with_endpoint  # type: ignore[method-assign]
    pages.base = await serve(pages)
    endpoint.url = f"{pages.base}/indexnow"
    extra = ("--header", "X-Secret: s3cret", "--auth", "user:pa55word")
    code, recs = await night(pages, endpoint, tmp_path / "s.sqlite", tmp_path / "1.jsonl", *extra)
    assert code == 0
    assert len(seen) == 1
    names = {k.lower() for k in seen[0]}
    assert "x-secret" not in names and "authorization" not in names and "cookie" not in names
    assert recs[-1]["indexnow"]["submitted"] == 1
