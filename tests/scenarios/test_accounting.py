"""The accounting invariant under random faults: every URL listed in the sitemaps
appears in the jsonl report exactly once as a `url` record, whatever failed.

A raw loopback server answers each request to a page with a seeded random fault:
a reset, a hang past the timeout, a 5xx, a 429 (with a Retry-After), a redirect
(to another listed page, an unlisted one, itself, or a scheme that is not
followed), a broken body, or a plain 200. The sitemap set has an index, a gzip
child, URLs listed twice (in one sitemap and across two) and a child whose body is
cut off mid-document (the URLs before the cut are listed, the rest never arrived).
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import random
from collections import Counter
from typing import Any

import pytest

from audit.report import make_writer
from tests.crawlkit import audit, index, urlset
from tests.scenarios.test_hostile_servers import Behaviour, answer, raw_site, reset

HTML = {"Content-Type": "text/html"}
XML = {"Content-Type": "application/xml"}


def fault_server(
    rng: random.Random, base: list[str], pages: list[str], budget_429: list[int]
) -> Behaviour:
    async def behave(r: asyncio.StreamReader, w: asyncio.StreamWriter, method: bytes) -> None:
        roll = rng.random()
        if 0.32 <= roll < 0.42 and budget_429[0] <= 0:
            roll = 0.9
        close = {"Connection": "close"}
        if roll < 0.12:
            reset(w)
            return
        if roll < 0.20:
            await asyncio.sleep(5)  # past the 0.3 s timeout
            return
        if roll < 0.32:
            # not 503: three 429/503 in a row mark a host slow (see the 429 budget)
            w.write(answer(rng.choice([500, 502, 504]), b"", close))
        elif roll < 0.42:
            budget_429[0] -= 1
            w.write(answer(429, b"", {"Retry-After": str(rng.choice([0, 1, 999999])), **close}))
        elif roll < 0.58:
            target = rng.choice(
                [base[0] + rng.choice(pages), "/unlisted", "javascript:alert(1)", "/self-loop"]
            )
            w.write(answer(rng.choice([301, 302, 307, 308]), b"", {"Location": target, **close}))
        elif roll < 0.64:
            # headers promise more body than comes
            head = answer(200, b"x" * 100, {**HTML, **close}).split(b"\r\n\r\n")[0]
            w.write(head + b"\r\n\r\n" + (b"" if method == b"HEAD" else b"x" * 10))
        else:
            w.write(
                answer(200, b"" if method == b"HEAD" else b"<html>ok</html>", {**HTML, **close})
            )
        await w.drain()

    return behave


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 22, 33])
async def test_every_listed_url_is_reported_exactly_once_under_random_faults(
    raw_server: Any, seed: int
) -> None:
    # Each path draws from its own seeded sequence, so the order in which concurrent
    # requests arrive matters only where a redirect lands on another listed page.
    def rng(path: str) -> random.Random:
        return random.Random(f"{seed}:{path}")

    routes: dict[str, Behaviour | bytes] = {"/robots.txt": answer(404)}
    base_box: list[str] = []
    base = await raw_site(raw_server, routes)
    base_box.append(base)
    pages = [f"/p/{i}" for i in range(120)]
    # A 429 halves its host's rate for the rest of the run (politeness), so the main host
    # never sends one; a second host with a few pages sends at most one.
    routes.update(
        {p: fault_server(rng(p), base_box, pages, [0]) for p in [*pages, "/unlisted", "/self-loop"]}
    )

    async def dead(_r: asyncio.StreamReader, w: asyncio.StreamWriter, _m: bytes) -> None:
        reset(w)

    # one page that always resets, so an unreachable URL is certain whatever the rolls
    routes["/dead"] = dead
    other_routes: dict[str, Behaviour | bytes] = {"/robots.txt": answer(404)}
    other = await raw_site(raw_server, other_routes)
    others = [f"/q/{i}" for i in range(4)]
    budget = [1]  # shared by the second host's pages: at most one 429 in all
    other_routes.update({p: fault_server(rng(p), base_box, pages, budget) for p in others})

    a, b, c, cut = pages[:50], pages[40:90], pages[90:110], pages[110:]
    routes["/a.xml"] = answer(200, urlset(*(base + p for p in a + a[:5])).encode(), XML)
    routes["/b.xml.gz"] = answer(
        200,
        gzip.compress(urlset(*(base + p for p in b)).encode()),
        {"Content-Type": "application/gzip"},
    )
    c_urls = [base + p for p in [*c, "/dead"]] + [other + p for p in others]
    routes["/c.txt"] = answer(200, "\n".join(c_urls).encode(), {"Content-Type": "text/plain"})
    # the last child breaks off after half its entries: only those were ever listed
    cut_doc = urlset(*(base + p for p in cut)).encode()
    half = cut_doc.index(f"<url><loc>{base}{cut[5]}</loc>".encode())

    async def cut_off(_r: asyncio.StreamReader, w: asyncio.StreamWriter, _m: bytes) -> None:
        head = answer(200, cut_doc, XML).split(b"\r\n\r\n")[0]
        w.write(head + b"\r\n\r\n" + cut_doc[: half + 10])
        await w.drain()

    routes["/cut.xml"] = cut_off
    routes["/index.xml"] = answer(
        200,
        index(*(f"{base}/{n}" for n in ("a.xml", "b.xml.gz", "c.txt", "cut.xml"))).encode(),
        XML,
    )
    listed = {base + p for p in a + b + cut[:5]} | set(c_urls)

    run = await audit(
        f"{base}/index.xml",
        timeout=0.3,
        retries=1,
        rate=float("inf"),
        concurrency=8,
        retry_after_cap=0.05,
        backoff_base=0.01,
        backoff_cap=0.02,
    )
    out = io.StringIO()
    writer = make_writer("jsonl", out)
    for rec in run.records:
        writer.write(rec)
    writer.close()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    counts = Counter(r["url"] for r in lines if r["type"] == "url")
    assert set(counts) == listed, set(counts) ^ listed
    assert max(counts.values()) == 1
    summary = lines[-1]
    assert summary["type"] == "summary" and summary["urls"] == len(listed)
    # the faults really happened, and each failure is a record with its reason
    failed = [r for r in lines if r["type"] == "url" and (r["error"] or (r["status"] or 0) >= 400)]
    assert failed, "no fault was injected"
    by_code = summary["by_code"]
    assert by_code.get("url-unreachable") and by_code.get("loc-duplicate") == 15
    assert by_code.get("sitemap-http-error") == 1  # the cut child, reported once
