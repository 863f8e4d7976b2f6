"""Politeness groups (issue 27, contracts/manysites.md): `--politeness-key host|ip|domain`.

The group ids of the contract; hosts of one group sharing one rate, as the servers see
it: two ports of one address (`ip`: ports do not matter), and in a network namespace of
its own with a hosts file bind-mounted over /etc/hosts (as the DNS test of
tests/scenarios/test_private_addresses.py does), two host names on one address (`ip`)
and two names of one registrable domain on two addresses (`domain`).
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.http.hosts import HostPool, registrable_domain
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset
from tests.netns import run_in_namespace
from tests.pipeline.test_runner import _busiest_second


@pytest.mark.parametrize(
    ("name", "domain"),
    [
        ("www.shop.co.uk", "shop.co.uk"),
        ("img.shop.co.uk", "shop.co.uk"),
        ("shop.co.uk", "shop.co.uk"),
        ("news.other.co.uk", "other.co.uk"),
        ("alice.github.io", "alice.github.io"),  # github.io: the list's PRIVATE section
        ("bob.github.io", "bob.github.io"),
        ("a.b.example", "b.example"),  # no rule matches: the default rule `*`
        ("WWW.Shop.CO.UK", "shop.co.uk"),
        ("co.uk", "co.uk"),  # itself a public suffix
        ("localhost", "localhost"),  # one label
        ("www.bücher.de", "xn--bcher-kva.de"),  # IDNA A-labels
    ],
)
def test_registrable_domain(name: str, domain: str) -> None:
    assert registrable_domain(name) == domain


def test_group_ids_of_each_key() -> None:
    def group(key: str, url: str) -> str:
        return HostPool(rate=10, max_in_flight=4, retry_after_cap=1, key=key).get(url).group.key

    assert group("host", "HTTP://A.test/x") == "http://a.test:80"
    assert group("domain", "https://img.shop.co.uk/") == "shop.co.uk"
    assert group("domain", "http://127.0.0.21:8080/") == "127.0.0.21"  # an IP literal
    assert group("ip", "http://[::1]:8080/") == "::1"
    pool = HostPool(rate=10, max_in_flight=4, retry_after_cap=1, key="domain")
    a, b = pool.get("http://www.shop.co.uk/"), pool.get("https://img.shop.co.uk:8443/")
    assert a is not b and a.group is b.group  # ports and schemes do not matter
    assert pool.get("http://alice.github.io/").group is not pool.get("http://bob.github.io/").group
    with pytest.raises(ValueError):
        HostPool(rate=10, max_in_flight=4, retry_after_cap=1, key="port")


async def test_ip_names_join_the_group_of_their_address() -> None:
    answers = {"a.test": "127.0.0.21", "b.test": "127.0.0.21", "c.test": None}

    async def address_of(name: str) -> str | None:
        return answers[name]

    pool = HostPool(rate=10, max_in_flight=4, retry_after_cap=1, key="ip", address_of=address_of)
    a, b, c = (pool.get(f"http://{n}:8080/") for n in ("a.test", "b.test", "c.test"))
    assert a.pending
    for host in (a, b, c):
        await host.settle()
    assert not a.pending and a.group is b.group and a.group.key == "127.0.0.21"
    assert c.group.key == "c.test"  # a name that does not resolve: a group of its own
    assert {g["group"]: sorted(g["hosts"]) for g in pool.groups()} == {
        "127.0.0.21": ["http://a.test:8080", "http://b.test:8080"],
        "c.test": ["http://c.test:8080"],
    }


def test_an_unknown_politeness_key_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["crawl", "http://127.0.0.1:1/", "--politeness-key", "port"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--politeness-key" in err[0] and "error:" in err[0]
    config = tmp_path / "audit.toml"
    config.write_text('politeness-key = "ports"\n')
    assert main(["crawl", "http://127.0.0.1:1/", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "politeness-key" in err[0] and "error:" in err[0]


async def _ports_site(serve: Serve, n: int) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    pages = [f"{base}/p{i}" for i in range(n)]
    site.routes = {
        "/robots.txt": (200, TEXT, f"Sitemap: {base}/sitemap.xml\n"),
        "/sitemap.xml": (200, XML, urlset(*pages)),
        **{f"/p{i}": (200, HTML, "ok") for i in range(n)},
    }
    return site, base


@pytest.mark.slow
async def test_two_ports_of_one_address_share_the_rate_with_key_ip(
    serve: Serve, tmp_path: Path
) -> None:
    rate, n = 10, 20  # 40 URLs in one group: 4 s at 10/s
    (one, a), (two, b) = await _ports_site(serve, n), await _ports_site(serve, n)
    out = tmp_path / "r.jsonl"
    argv = [a + "/", b + "/", "--politeness-key", "ip", "--rate", str(rate)]
    argv += ["--format", "jsonl", "--output", str(out), "--no-progress"]
    assert await asyncio.to_thread(main, ["crawl", *argv]) == 0
    times = [h.t for h in one.hits + two.hits]
    assert _busiest_second(times) <= int(rate * 1.1)  # one budget for both hosts
    assert max(times) - min(times) >= (2 * n + 4) / rate - 1.5  # not two budgets
    records = [json.loads(line) for line in out.read_text().splitlines()]
    (hosts,) = [r for r in records if r["type"] == "hosts"]
    assert hosts["politeness_key"] == "ip"
    assert {h["host"]: h["group"] for h in hosts["hosts"]} == {a: "127.0.0.1", b: "127.0.0.1"}
    (group,) = hosts["groups"]
    assert group["group"] == "127.0.0.1" and sorted(group["hosts"]) == sorted([a, b])
    assert group["requests"] == sum(h["requests"] for h in hosts["hosts"])
    for fmt, marker in (
        ("text", "group"),
        ("markdown", "Group"),
        ("html", '<th class="num">Group'),
    ):
        shown = tmp_path / f"r.{fmt}"
        main(["report", str(out), "--format", fmt, "--output", str(shown)])
        text = shown.read_text()
        assert marker in text and "127.0.0.1" in text.replace(a, "").replace(b, ""), fmt


_NAMESPACE_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, time
    from aiohttp import web
    from audit.api import Audit
    from audit.core.config import CrawlConfig

    N, RATE = 20, 10.0
    hits = []

    async def handler(request):
        name = request.host.split(":")[0]
        hits.append([name, request.path, time.monotonic()])
        base = f"http://{request.host}"
        if request.path == "/robots.txt":
            return web.Response(text=f"Sitemap: {base}/sitemap.xml\\n")
        if request.path == "/sitemap.xml":
            body = "".join(f"<url><loc>{base}/p{i}</loc></url>" for i in range(N))
            return web.Response(
                text='<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                + body + "</urlset>", content_type="application/xml")
        return web.Response(text="ok", content_type="text/html")

    async def crawl(key, names):
        targets = [f"http://{n}:8080/" for n in names]
        records = []
        config = CrawlConfig(rate=RATE, timeout=3.0, retries=0, politeness_key=key,
                             credential_origins=tuple(t.rstrip("/") for t in targets),
                             fetch_workers=0)
        run = Audit(targets, config, sinks=[records.append])
        await run.run()
        run.finish()
        return records

    async def main():
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        for address in ("127.0.0.21", "127.0.0.22", "127.0.0.23"):
            await web.TCPSite(runner, address, 8080).start()
        out = {}
        for key, names in (("ip", ["a.test", "b.test"]),
                           ("domain", ["www.shop.co.uk", "img.shop.co.uk"]),
                           ("host", ["a.test", "b.test"])):
            hits.clear()
            records = await crawl(key, names)
            out[key] = {"hits": list(hits), "records": records}
        print(json.dumps(out))

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_host_names_share_the_rate_of_their_address_or_domain(tmp_path: Path) -> None:
    out: dict[str, Any] = run_in_namespace(
        tmp_path,
        "127.0.0.1 localhost\n127.0.0.21 a.test\n127.0.0.21 b.test\n"
        "127.0.0.22 www.shop.co.uk\n127.0.0.23 img.shop.co.uk\n",
        _NAMESPACE_SCRIPT,
        timeout=55,
    )
    expected = {
        "ip": ("127.0.0.21", ["http://a.test:8080", "http://b.test:8080"]),
        "domain": ("shop.co.uk", ["http://img.shop.co.uk:8080", "http://www.shop.co.uk:8080"]),
    }
    for key, (gid, members) in expected.items():
        run = out[key]
        times = [t for _, _, t in run["hits"]]
        assert _busiest_second(times) <= 11, key  # one budget of --rate 10 for both names
        urls = [r for r in run["records"] if r["type"] == "url"]
        assert len(urls) == 40 and all(r["status"] == 200 for r in urls), key
        (record,) = [r for r in run["records"] if r["type"] == "hosts"]
        assert record["politeness_key"] == key
        assert record["groups"] == [
            {
                "group": gid,
                "requests": sum(h["requests"] for h in record["hosts"]),
                "hosts": members,
            }
        ]
        assert {h["group"] for h in record["hosts"]} == {gid}
    # the same names as two hosts: two budgets, so more than one budget's worth a second
    assert _busiest_second([t for _, _, t in out["host"]["hits"]]) > 11
