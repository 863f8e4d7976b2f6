"""The nightly audit of a static site served by nginx (issue 28's first report): files with
real modification times, nothing changed between nights. Every night with `--state`
reports what a run without state reports, though nginx answers the later nights 304; on
a site built in one go (every mtime within a minute: a deploy stamp) as on one whose
files keep their own dates."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.nginx import Nginx, serving
from tests.state.test_nights_equal_fresh import _argv, assert_diff_quiet, assert_same, truth
from tests.state.test_store import run_main


def build_site(root: Path, seed: int, *, deploy: bool, base: str) -> None:
    """Pages /p/N.html with mtimes (a deploy: all within a minute), a sitemap listing them
    (and a few that do not exist) with <lastmod> behind, at or ahead of the file's date."""
    rnd = random.Random(seed)
    (root / "p").mkdir(parents=True)
    build = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
    rows = []
    for i in range(rnd.randint(40, 70)):
        path = root / "p" / f"{i}.html"
        missing = rnd.random() < 0.08
        if deploy:
            when = build + timedelta(seconds=rnd.randint(0, 50))
        else:
            when = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(seconds=rnd.randint(0, 40_000_000))
        if not missing:
            noindex = '<meta name="robots" content="noindex">' if rnd.random() < 0.1 else ""
            path.write_text(
                f"<!doctype html><html><head><title>Page {i}</title>{noindex}</head>"
                f"<body><h1>Page {i}</h1><p>{'text ' * (20 + i)}</p></body></html>",
                encoding="utf-8",
            )
            os.utime(path, (when.timestamp(), when.timestamp()))
        where = rnd.random()
        if where < 0.2:
            lastmod = ""
        elif where < 0.45:
            lastmod = (when - timedelta(days=rnd.randint(2, 90))).strftime("%Y-%m-%d")
        elif where < 0.8:
            lastmod = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        else:
            lastmod = (when + timedelta(days=rnd.randint(2, 30))).strftime("%Y-%m-%d")
        tag = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
        rows.append(f"<url><loc>{base}/p/{i}.html</loc>{tag}</url>")
    rows.append(f"<url><loc>{base}/old.html</loc></url>")  # a permanent redirect
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + "\n".join(rows)
        + "\n</urlset>\n",
        encoding="utf-8",
    )
    (root / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml\n")


@pytest.fixture
def nginx_site(tmp_path: Path) -> Iterator[Nginx]:
    root, work = tmp_path / "www", tmp_path / "nginx"
    root.mkdir()
    work.mkdir()
    yield from serving(root, work, extra="location = /old.html { return 301 /p/1.html; }")


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "deploy"), [(1, True), (2, False), (3, True)])
@pytest.mark.parametrize("variant", [[], ["--page-checks"]])
async def test_four_nights_on_nginx_tell_the_same_truth(
    nginx_site: Nginx, tmp_path: Path, seed: int, deploy: bool, variant: list[str]
) -> None:
    build_site(nginx_site.root, seed, deploy=deploy, base=nginx_site.base)
    target = nginx_site.base + "/sitemap.xml"
    fresh_out = tmp_path / "fresh.jsonl"
    await run_main(_argv(target, fresh_out, *variant))
    fresh = truth(fresh_out)
    if deploy:
        assert ("last-modified-deploy", "info", nginx_site.base + "/", None, None) in fresh[
            "findings"
        ]
    else:
        assert any(code == "lastmod-stale" for code, *_ in fresh["findings"])
    state = tmp_path / "s.sqlite"
    outs = []
    for night in range(1, 5):
        out = tmp_path / f"n{night}.jsonl"
        outs.append(out)
        await run_main(_argv(target, out, "--state", str(state), *variant))
        assert_same(truth(out), fresh, f"nginx seed {seed} night {night}")
    assert any(status == 304 for _, _, status in nginx_site.requests())
    assert_diff_quiet(outs[0], outs[-1])
