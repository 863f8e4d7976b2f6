"""Issue 22.1: the private-address rule judges what is connected to, not the spelling.

Normalised spellings (full-width digits, ideographic full stops, circled and full-width
letters) over real loopback redirects, listed URLs and index children on private addresses
from a public target, and DNS answers judged at connect time in a network namespace of its
own with a hosts file bind-mounted over /etc/hosts. A "public" host is a DNS name that is
not an IP literal or `localhost`: the machine's own name (resolving to 127.0.0.1) here, a
hosts-file name inside the namespace. Nothing is ever sent beyond loopback. (The rule on
its own, without a network: tests/http/test_addresses.py.)
"""

from __future__ import annotations

import json
import socket
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from audit.http.addresses import is_private_host
from tests.crawlkit import HTML, TEXT, XML, Site, audit, index, urlset
from tests.http.test_addresses import SPELLINGS
from tests.netns import run_in_namespace


def _public_looking_loopback_name() -> str | None:
    name = socket.gethostname()
    if not name or is_private_host(name):
        return None
    try:
        addrs = {info[4][0] for info in socket.getaddrinfo(name, None, socket.AF_INET)}
    except OSError:
        return None
    return name if addrs == {"127.0.0.1"} else None


async def _public_site(serve: Callable[[Site], Awaitable[str]]) -> tuple[Site, str, str]:
    name = _public_looking_loopback_name()
    if name is None:
        pytest.skip("the machine's name does not resolve to 127.0.0.1 only")
    site = Site()
    base = await serve(site)
    port = base.rsplit(":", 1)[1]
    return site, f"http://{name}:{port}", port


async def test_redirects_to_normalised_private_spellings_are_not_followed(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site, public, port = await _public_site(serve)
    pages = [f"{public}/p{i}" for i in range(len(SPELLINGS))]
    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, urlset(*pages))}
    for i, spelling in enumerate(SPELLINGS):
        site.routes[f"/p{i}"] = (301, {"Location": f"http://{spelling}:{port}/internal{i}"}, "")
    run = await audit(f"{public}/sitemap.xml")
    for page in pages:
        assert run.url(page)["error_kind"] == "redirect-private"
    assert [p for p in site.paths() if p.startswith("/internal")] == []


async def test_listed_urls_and_children_on_private_addresses_are_not_requested(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site, public, port = await _public_site(serve)
    listed = [f"http://127.0.0.1:{port}/internal", f"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:{port}/internal2"]
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/index.xml": (200, XML, index(f"{public}/a.xml", f"http://127.0.0.1:{port}/child.xml")),
        "/a.xml": (200, XML, urlset(f"{public}/ok", *listed)),
        "/child.xml": (200, XML, urlset(f"{public}/ok")),
        "/ok": (200, HTML, "ok"),
        "/internal": (200, HTML, "secret-internal-bytes"),
        "/internal2": (200, HTML, "secret-internal-bytes"),
    }
    run = await audit(f"{public}/index.xml", credential_origins=(public,))
    for url in listed:
        assert run.url(url)["status"] is None  # reported, not requested
    reasons = " ".join(f["message"] for f in run.of("finding")) + json.dumps(run.of("sitemap"))
    assert "private, loopback or link-local address and the target is public" in reasons
    assert "/child.xml" not in site.paths() and "/internal" not in site.paths()
    assert "/internal2" not in site.paths()
    assert "secret-internal-bytes" not in json.dumps(run.records)
    # --allow-private requests them
    site.hits.clear()
    await audit(f"{public}/index.xml", credential_origins=(public,), allow_private=True)
    assert {"/child.xml", "/internal", "/internal2"} <= set(site.paths())


# --- DNS answers, in a network namespace of its own --------------------------------------

_NAMESPACE_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from aiohttp import web
    from audit.api import crawl_async

    async def main() -> None:
        hits, private_conns = [], []

        async def handle(request):
            hits.append(request.path)
            return ROUTES.get(request.path, web.Response(status=404))

        async def private_listener(reader, writer):
            private_conns.append(1)
            writer.close()

        private = await asyncio.start_server(private_listener, "127.0.0.1", 0)
        q = private.sockets[0].getsockname()[1]
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        p = site._server.sockets[0].getsockname()[1]
        shop = f"http://shop.example.com:{p}"
        evil = [f"http://evil.example.net:{q}/listed", f"http://mixed.example.org:{q}/listed"]
        xml = {"Content-Type": "application/xml"}
        body = "".join(f"<url><loc>{u}</loc></url>" for u in [f"{shop}/go", f"{shop}/ok", *evil])
        doc = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + body + "</urlset>"
        global ROUTES
        ROUTES = {
            "/robots.txt": web.Response(
                text=f"Sitemap: http://evil.example.net:{q}/s.xml\\nSitemap: {shop}/sitemap.xml\\n"
            ),
            "/sitemap.xml": web.Response(text=doc, headers=xml),
            "/go": web.Response(status=302, headers={"Location": f"http://evil.example.net:{q}/r"}),
            "/ok": web.Response(text="ok", content_type="text/html"),
        }
        records = []
        await crawl_async(f"{shop}/", on_record=records.append, credential_origins=(shop,),
                          timeout=3.0, retries=0, rate=0.0, fetch_workers=0)
        print(json.dumps({"hits": hits, "private_conns": len(private_conns), "records": records}))

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_dns_answers_on_private_addresses_are_not_connected_to(tmp_path: Path) -> None:
    out = run_in_namespace(
        tmp_path,
        # 8.8.8.8 is never reached: the namespace has no interface but loopback
        "127.0.0.1 localhost\n127.0.0.1 shop.example.com\n127.0.0.1 evil.example.net\n"
        "8.8.8.8 mixed.example.org\n127.0.0.1 mixed.example.org\n",
        _NAMESPACE_SCRIPT,
        timeout=50,
    )
    assert out["private_conns"] == 0  # not one connection to the names on private answers
    assert "/ok" in out["hits"]  # the target, a name on 127.0.0.1, is trusted as given
    urls = {r["url"]: r for r in out["records"] if r["type"] == "url"}
    for name in ("evil.example.net", "mixed.example.org"):
        (rec,) = [r for u, r in urls.items() if name in u]
        assert rec["status"] is None, rec
    (go,) = [r for u, r in urls.items() if u.endswith("/go")]
    assert go["status"] is None and "private" in go["error"], go
    said = json.dumps(out["records"])
    assert "evil.example.net" in said and "resolves only to private" in said
