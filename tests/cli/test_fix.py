"""`sitemap-audit fix` on the command line (audit/cli/fix.py): a usage error is one line on
stderr and exit 2 (the command run end to end: tests/fix/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fix.test_plan import (
    B,
    fix,
    fixes,
    report,
    summary,
    url,
)


@pytest.mark.parametrize("n", ["0", "50001", "x"])
def test_shard_size_outside_its_range_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n: str
) -> None:
    src = report(tmp_path, url("/a"), summary())
    assert fix(src, tmp_path / "o", "--shard-size", n) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_several_origins_need_base_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = report(tmp_path, url("/a"), url("https://shop.example.com/b"), summary())
    assert fix(src, tmp_path / "o") == 2
    assert "--base-url" in capsys.readouterr().err
    assert fix(src, tmp_path / "o", "--base-url", f"{B}/") == 0
    got = fixes(tmp_path / "o")
    assert got["https://shop.example.com/b"]["code"] == "loc-cross-host"


@pytest.mark.parametrize("base", ["http://h:99999/", "http://h:abc/", "ftp://h/", "/site/"])
def test_a_base_url_without_an_origin_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: str
) -> None:
    """A --base-url whose port is no number 1-65535 has no origin to judge the listed URLs
    by (before: accepted, and with no origin every URL was judged in scope)."""
    src = report(tmp_path, url("/a"), summary())
    assert fix(src, tmp_path / "o", "--base-url", base) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--base-url {base!r}: not an absolute http(s) URL" in err
    assert not (tmp_path / "o").exists()
