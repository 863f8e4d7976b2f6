"""The evidence `fix` works from (audit/fix/evidence.py): a jsonl report or a --state file
read, and a run that did not check every listed URL refused before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from tests.fix.test_plan import (
    SM,
    fix,
    report,
    summary,
    url,
)


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        ([], "no summary record"),
        ([summary(interrupted=True)], '"interrupted": true'),
        ([summary(partial=True, stopped_by="deadline")], '"partial": true'),
        ([summary(max_urls_reached=True)], '"max_urls_reached": true'),
        ([summary(excluded_urls=3)], '"excluded_urls": 3'),
        ([summary(excluded_sitemaps=1)], '"excluded_sitemaps": 1'),
    ],
)
def test_a_cut_run_is_refused_and_nothing_is_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tail: list[dict[str, Any]], why: str
) -> None:
    src = report(tmp_path, url("/a"), *tail)
    out = tmp_path / "public"
    out.mkdir()
    (out / "sitemap_index.xml").write_text("earlier", encoding="utf-8")
    (out / "sitemap-root.xml").write_text("earlier", encoding="utf-8")
    assert fix(src, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err and str(src) in err
    assert sorted(p.name for p in out.iterdir()) == ["sitemap-root.xml", "sitemap_index.xml"]
    assert (out / "sitemap_index.xml").read_text(encoding="utf-8") == "earlier"


def test_what_is_not_a_report_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    for body in ("<urlset/>\n", "", '{"no": "type"}\n'):
        src = tmp_path / "x.jsonl"
        src.write_text(body, encoding="utf-8")
        assert fix(src, out) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert fix(tmp_path / "missing.jsonl", out) == 2
    assert "no such report" in capsys.readouterr().err
    assert not out.exists()


def test_a_state_whose_last_run_did_not_complete_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from audit.state.store import StateStore

    path = tmp_path / "s.sqlite"
    store = StateStore.open(path, fingerprint="f", targets=[SM])
    store.close(complete=False)  # a run that died: its status stays "running"
    out = tmp_path / "o"
    assert fix(path, out) == 2
    assert "did not complete" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "why"),
    [(["--max-urls", "2"], '"max_urls_reached": true'), (["--exclude", "/b/"], '"excluded_urls"')],
)
async def test_a_state_of_a_cut_run_is_refused(
    serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], why: str
) -> None:
    """A state keeps what its last run left out (a state has no summary of its own):
    `fix` refuses it as it refuses the report of such a run."""
    from tests.features.test_ledger import LedgerSite, _night

    site = LedgerSite()
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    await _night(site, state, tmp_path / "r.jsonl", *extra)
    capsys.readouterr()
    out = tmp_path / "o"
    assert fix(state, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err
    assert not out.exists()


def test_a_validate_report_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "v.jsonl"
    argv = ["validate", str(Path(__file__).parents[2] / "fixtures/demo/sitemap-pages.xml")]
    assert main([*argv, "--format", "jsonl", "--output", str(src), "--fail-on", "never"]) == 0
    assert fix(src, tmp_path / "o") == 2
    assert "no URL was checked" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
