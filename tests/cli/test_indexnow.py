"""`crawl --indexnow` options on the command line (audit/cli/indexnow.py): each misuse is one
line and exit 2 before anything is opened (the submissions themselves:
tests/state/test_indexnow.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.cli.main import main
from tests.state.test_indexnow import KEY


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (["--indexnow", KEY], "--indexnow needs --state"),
        (["--indexnow", "short", "--state", "s.sqlite"], "8 to 128 characters"),
        (["--indexnow", "bad/key/chars", "--state", "s.sqlite"], "8 to 128 characters"),
        (["--dry-run"], "--dry-run needs --indexnow"),
        (["--indexnow-endpoint", "http://x/"], "--indexnow-endpoint needs --indexnow"),
    ],
)
def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], why: str
) -> None:
    extra = [str(tmp_path / e) if e == "s.sqlite" else e for e in extra]
    assert main(["crawl", "http://127.0.0.1:9/sitemap.xml", "--no-progress", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err
    assert not (tmp_path / "s.sqlite").exists()
