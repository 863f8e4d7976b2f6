"""The "Intent" section (audit/report/intent.py) of the text, markdown and HTML reports,
written by the real writers from a `crawl --intent` summary: one row per action with the
URLs judged, broken and the pass rate; values escaped; nothing without --intent."""

from __future__ import annotations

import io
from typing import Any

import pytest

from audit.report import make_writer
from audit.report.intent import ACTIONS, intent_rows

INTENT = {
    "file": "intent <b>.csv",
    "rows": 12,
    "keep": {"judged": 8, "violated": 1},
    "redirect": {"judged": 3, "violated": 0},
    "gone": {"judged": 0, "violated": 0},
}


def summary(**extra: Any) -> dict[str, Any]:
    return {
        "type": "summary",
        "sitemaps": 1,
        "urls": 11,
        "findings": {"error": 1, "warning": 0, "info": 0},
        "by_code": {"intent-violated": 1},
        "duration_s": 1.0,
        **extra,
    }


def written(fmt: str, record: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out, fail_on="never")
    writer.write(record)
    writer.close()
    return out.getvalue()


def test_rows_one_per_action_with_the_pass_rate() -> None:
    assert intent_rows(summary()) == []
    rows = intent_rows(summary(intent=INTENT))
    assert [r[0] for r in rows] == list(ACTIONS)
    keep, redirect, gone = rows
    assert keep[1:3] == (8, 1) and keep[3] == pytest.approx(87.5)
    assert redirect[3] == pytest.approx(100.0)
    assert gone[3] is None  # nothing judged: no rate
    odd = intent_rows(summary(intent={"keep": {"judged": "8", "violated": True}, "gone": 3}))
    assert odd[0][1:] == (0, 0, None) and odd[2][1:] == (0, 0, None)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_the_section_in_each_human_format(fmt: str) -> None:
    report = written(fmt, summary(intent=INTENT))
    section = report[report.index("Intent") :]
    assert "12 rows" in section and "87.5%" in section and "100.0%" in section
    for action in ACTIONS:
        assert action in section


def test_the_file_name_is_escaped_in_html() -> None:
    report = written("html", summary(intent=INTENT))
    assert "intent &lt;b&gt;.csv" in report and "intent <b>.csv" not in report


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_nothing_without_intent(fmt: str) -> None:
    report = written(fmt, summary())
    assert "Intent" not in report and "judged" not in report.lower()
