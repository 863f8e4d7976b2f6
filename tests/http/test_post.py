"""Requests that leave the audit (audit/http/post.py), against a loopback stand-in endpoint:
one JSON POST retried on 429/5xx with Retry-After honoured or refused when too long, other
4xx final at once; a GET that follows no redirect. Nothing raises for a failed request."""

from __future__ import annotations

import json
import socket
from typing import Any

from aiohttp import web

from audit.http.post import get_text, post_json

FAST = {"timeout": 5.0, "retries": 3, "backoff_base": 0.01, "backoff_cap": 0.02}


class Endpoint:
    """Answers POSTs from a script of (status, headers) and records what it got."""

    def __init__(self, *answers: tuple[int, dict[str, str]]) -> None:
        self.answers = list(answers)
        self.got: list[tuple[dict[str, str], Any]] = []

    def app(self) -> web.Application:
        async def post(request: web.Request) -> web.Response:
            self.got.append((dict(request.headers), await request.json()))
            status, headers = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            return web.Response(status=status, headers=headers)

        async def key(request: web.Request) -> web.Response:
            return web.Response(text="k3y" * 100)

        async def moved(request: web.Request) -> web.Response:
            raise web.HTTPFound("/key.txt")

        app = web.Application()
        app.router.add_post("/indexnow", post)
        app.router.add_get("/key.txt", key)
        app.router.add_get("/moved.txt", moved)
        return app


async def _post(server: Any, **kw: Any) -> Any:
    body = json.dumps({"host": "e.example", "urlList": ["https://e.example/a"]}).encode()
    return await post_json(
        str(server.make_url("/indexnow")), body, user_agent="sitemap-audit/test",
        max_retry_after=kw.pop("max_retry_after", 30.0), **{**FAST, **kw},
    )  # fmt: skip


async def test_a_post_is_json_with_the_user_agent(aiohttp_server: Any) -> None:
    endpoint = Endpoint((200, {}))
    result = await _post(await aiohttp_server(endpoint.app()))
    assert (result.status, result.attempts, result.error, result.gave_up) == (200, 1, None, None)
    headers, body = endpoint.got[0]
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert headers["User-Agent"] == "sitemap-audit/test"
    assert body == {"host": "e.example", "urlList": ["https://e.example/a"]}


async def test_429_and_5xx_are_tried_again(aiohttp_server: Any) -> None:
    endpoint = Endpoint((429, {"Retry-After": "0"}), (503, {}), (200, {}))
    result = await _post(await aiohttp_server(endpoint.app()))
    assert (result.status, result.attempts) == (200, 3) and len(endpoint.got) == 3


async def test_retries_run_out_with_the_last_answer(aiohttp_server: Any) -> None:
    endpoint = Endpoint((500, {}))
    result = await _post(await aiohttp_server(endpoint.app()), retries=2)
    assert (result.status, result.attempts) == (500, 3) and len(endpoint.got) == 3


async def test_a_refusal_is_final_at_once(aiohttp_server: Any) -> None:
    for status in (400, 403, 408, 422):
        endpoint = Endpoint((status, {}))
        result = await _post(await aiohttp_server(endpoint.app()))
        assert (result.status, result.attempts) == (status, 1), status


async def test_a_retry_after_too_long_is_not_waited_for(aiohttp_server: Any) -> None:
    endpoint = Endpoint((429, {"Retry-After": "3600"}), (200, {}))
    result = await _post(await aiohttp_server(endpoint.app()), max_retry_after=60.0)
    assert (result.status, result.attempts) == (429, 1)
    assert result.gave_up == "Retry-After 3600 s is longer than --max-retry-after 60 s"


async def test_no_answer_is_an_error_value_not_an_exception() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = await post_json(
        f"http://127.0.0.1:{port}/indexnow", b"{}", user_agent="t", max_retry_after=1.0,
        **{**FAST, "retries": 1},
    )  # fmt: skip
    assert result.status is None and result.attempts == 2
    assert result.error is not None and "cannot connect" in result.error


async def test_get_text_reads_a_capped_body_and_follows_no_redirect(aiohttp_server: Any) -> None:
    server = await aiohttp_server(Endpoint((200, {})).app())
    status, text, error = await get_text(
        str(server.make_url("/key.txt")), user_agent="t", timeout=5.0, limit=9
    )
    assert (status, text, error) == (200, "k3yk3yk3y", None)
    moved = await get_text(str(server.make_url("/moved.txt")), user_agent="t", timeout=5, limit=9)
    assert moved[0] == 302
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = await get_text(f"http://127.0.0.1:{port}/k", user_agent="t", timeout=5, limit=9)
    assert down[:2] == (None, None) and down[2] is not None
