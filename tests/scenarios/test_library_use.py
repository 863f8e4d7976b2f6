"""The README's "Library use" example runs as written and prints a real summary."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import audit
from audit.core.codes import CODES
from audit.core.severity import Severity

ROOT = Path(__file__).resolve().parents[2]


def _library_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Library use", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the Library use section has no python block"
    return match.group(1)


@pytest.mark.slow
def test_the_readme_library_example_runs_and_prints_a_real_summary() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _library_example()],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    first, second, *examples = out.stdout.splitlines()
    urls, _, findings = first.partition(" URLs checked; ")
    counts = ast.literal_eval(findings)
    assert int(urls) > 0 and set(counts) == {"error", "warning", "info"}
    assert second == f"fails --fail-on error: {counts['error'] > 0}"
    assert len(examples) == min(3, counts["error"])
    for line in examples:  # each one an error of the registry, on the demo server
        code, url = line.split()
        assert CODES[code].severity is Severity.ERROR and url.startswith("http://127.0.0.1:")


def test_the_front_door_is_sorted_and_every_name_resolves() -> None:
    assert audit.__all__ == sorted(audit.__all__)
    for name in audit.__all__:
        assert getattr(audit, name) is not None, name
    assert "aiohttp" not in audit.__all__


def test_a_target_that_cannot_be_audited_is_one_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.xml"
    try:
        audit.validate(str(missing))
    except audit.TargetError as exc:
        assert str(missing) in str(exc) and "\n" not in str(exc)
    else:  # pragma: no cover - the assertion below says what went wrong
        raise AssertionError("validate of a missing file did not raise TargetError")


def test_validate_streams_records_to_the_callback() -> None:
    records: list[dict[str, object]] = []
    sitemap = ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml"
    result = audit.validate(str(sitemap), on_record=records.append)
    assert records[-1] == result.summary and result.summary["type"] == "summary"
    assert [r["type"] for r in records].count("sitemap") == result.summary["sitemaps"] == 1
    assert not result.failed("error")
