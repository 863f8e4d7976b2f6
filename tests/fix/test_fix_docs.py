"""docs/fix.md: every `sitemap-audit` command in its code blocks is a valid invocation of
this version, and the README names `fix` and the --indexnow options."""

from __future__ import annotations

import re
from pathlib import Path

from tests.scenarios.test_schedule import check_invocations

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "fix.md"


def code_lines(text: str) -> list[str]:
    blocks = re.findall(r"^ *```\n(.*?)^ *```", text, flags=re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_every_command_of_the_page_parses() -> None:
    lines = [line for line in code_lines(PAGE.read_text()) if "sitemap-audit " in line]
    assert check_invocations(lines) >= 6


def test_the_readme_points_at_the_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docs/fix.md" in readme
    assert "sitemap-audit fix SOURCE" in readme
