"""A state refused for a different audit names the target or option that differs
(issue 28, point 7): `--max-urls is 5 in the state, 6 in this run`, not "targets or
options differ"."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from audit.cli.main import main
from audit.state.identity import identity, what_differs
from audit.state.store import StateStore, fingerprint
from tests.crawlkit import HTML, XML, Serve, Site, urlset

A, B = "https://a.example/", "https://b.example/"


def test_the_targets_and_the_command() -> None:
    old = identity("crawl", [A], {})
    assert what_differs(old, identity("crawl", [B], {})) == (
        f"the targets are {A} in the state, {B} in this run"
    )
    assert what_differs(old, identity("crawl", [A, B], {})) == (
        f"the targets are {A} in the state, {A} {B} in this run"
    )
    assert what_differs(old, identity("migrate", [A], {})) == (
        "the state is of `crawl`, this run is `migrate`"
    )


def test_each_option_by_its_flag() -> None:
    old = identity("crawl", [A], {"max_urls": 5, "include": ("/blog/",), "slow_ms": 3000.0})
    new = identity("crawl", [A], {"max_urls": 6, "include": ("/blog/",), "page_checks": True})
    assert what_differs(old, new) == (
        "--max-urls is 5 in the state, 6 in this run; "
        "--page-checks is not given in the state, true in this run; "
        "--slow is 3 in the state, not given in this run"
    )
    lists = identity("crawl", [A], {"exclude": ("/cart/", "/search")})
    assert what_differs(lists, identity("crawl", [A], {"exclude": ("/cart/",)})) == (
        '--exclude is ["/cart/", "/search"] in the state, ["/cart/"] in this run'
    )


def test_many_differences_are_counted_and_long_values_cut() -> None:
    old = identity("crawl", [A], {f"opt_{i}": i for i in range(5)})
    new = identity("crawl", [B], {f"opt_{i}": i + 1 for i in range(5)})
    text = what_differs(old, new)
    assert text.startswith(f"the targets are {A} in the state, {B} in this run; --opt-0 is 0")
    assert text.endswith("; and 3 more") and text.count(";") == 3
    long = identity("crawl", [A], {"user_agent": "x" * 200})
    text = what_differs(long, identity("crawl", [A], {}))
    assert text == f"--user-agent is {'x' * 57}... in the state, not given in this run"


def test_the_same_audit_by_another_version() -> None:
    same = identity("crawl", [A], {"max_urls": 5})
    assert what_differs(same, same) == "the same targets and options, recorded by another version"


@pytest.mark.skipif(
    "identity" not in inspect.signature(StateStore.open).parameters,
    reason="needs StateStore.open(identity=...) (audit/state/store.py, the lead's file)",
)
async def test_a_refused_state_names_what_differs(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real runs: the state of a --max-urls 5 crawl, refused for --max-urls 6, for
    --page-checks, and for another target, each time naming the difference (exit 2, one
    line, the state untouched)."""
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[f"{base}/p/{i}" for i in range(8)]))
    site.routes["/other.xml"] = (200, XML, urlset(f"{base}/p/0"))
    for i in range(8):
        site.routes[f"/p/{i}"] = (200, HTML, "ok")
    state = tmp_path / "s.sqlite"

    def argv(target: str, *extra: str) -> list[str]:
        out = tmp_path / "r.jsonl"
        return ["crawl", base + target, "--state", str(state), "--format", "jsonl", "-o", str(out),
                "--no-progress", "--rate", "1000", *extra]  # fmt: skip

    assert await asyncio.to_thread(main, argv("/sitemap.xml", "--max-urls", "5")) == 0
    written = state.read_bytes()
    capsys.readouterr()
    for extra, differs in (
        (("--max-urls", "6"), "--max-urls is 5 in the state, 6 in this run"),
        (
            ("--max-urls", "5", "--page-checks"),
            "--page-checks is not given in the state, true in this run",
        ),
        (
            ("--max-urls", "5", "--target-is-other"),
            f"the targets are {base}/sitemap.xml in the state, {base}/other.xml in this run",
        ),
    ):
        target = "/other.xml" if "--target-is-other" in extra else "/sitemap.xml"
        flags = [x for x in extra if x != "--target-is-other"]
        assert await asyncio.to_thread(main, argv(target, *flags)) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1, err
        assert f"the state of a different audit: {differs};" in err[0], err[0]
        assert "--fresh" in err[0]
        assert state.read_bytes() == written  # refused, never written to


def test_a_state_written_without_its_identity_is_refused_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A state of an earlier version keeps only the digest: the refusal says what it can."""
    state = tmp_path / "s.sqlite"
    StateStore.open(state, fingerprint=fingerprint("crawl", [A], {}), targets=[A]).close(
        complete=True
    )
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(urlset("https://www.example.com/a"))
    assert main(["crawl", str(sitemap), "--state", str(state)]) == 2
    err = capsys.readouterr().err
    assert f"the state of a different audit (targets {A} or options differ)" in err
