"""diff --alert-drop PCT and --alert-new-errors N: one plain alert line each, exit 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from audit.cli.main import main


def _report(path: Path, urls: dict[str, list[str]], errors: int = 0) -> Path:
    lines: list[dict[str, Any]] = []
    for sitemap, locs in urls.items():
        lines.append({"type": "sitemap", "url": sitemap})
        lines += [{"type": "url", "url": u, "sitemap": sitemap, "status": 200} for u in locs]
    lines += [
        {"type": "finding", "code": "url-not-found", "severity": "error", "url": f"https://e/x{i}"}
        for i in range(errors)
    ]
    lines.append({"type": "summary"})
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def _urls(prefix: str, n: int) -> list[str]:
    return [f"https://e/{prefix}{i}" for i in range(n)]


def _diff(old: Path, new: Path, out: Path, *flags: str) -> tuple[int, list[str]]:
    code = main(["diff", str(old), str(new), "-o", str(out), *flags])
    return code, [x for x in out.read_text().splitlines() if x.startswith("ALERT")]


def test_drop_vanished_and_new_errors(tmp_path: Path) -> None:
    old = _report(
        tmp_path / "old.jsonl",
        {
            "https://e/a.xml": _urls("a", 10),
            "https://e/b.xml": _urls("b", 10),
            "https://e/c.xml": _urls("c", 2),
        },
    )
    new = _report(
        tmp_path / "new.jsonl",
        {"https://e/a.xml": _urls("a", 6), "https://e/b.xml": _urls("b", 10)},
        errors=3,
    )
    out = tmp_path / "d.txt"
    code, alerts = _diff(old, new, out, "--alert-drop", "30", "--alert-new-errors", "2")
    assert code == 1
    assert alerts == [
        "ALERT: sitemap vanished: https://e/c.xml",
        "ALERT: sitemap https://e/a.xml lost 40% of its URLs (4 of 10 no longer listed; --alert-drop 30)",
        "ALERT: 3 new error(s), more than --alert-new-errors 2",
    ]  # the audit lost 27% (6 of 22): under 30
    code, alerts = _diff(old, new, out, "--alert-drop", "25")
    assert (
        "ALERT: the audit lost 27% of its URLs (6 of 22 no longer listed; --alert-drop 25)"
        in alerts
    )


def test_no_alert_under_the_thresholds(tmp_path: Path) -> None:
    old = _report(tmp_path / "old.jsonl", {"https://e/a.xml": _urls("a", 10)}, errors=1)
    new = _report(tmp_path / "new.jsonl", {"https://e/a.xml": _urls("a", 9)}, errors=1)
    out = tmp_path / "d.txt"
    code, alerts = _diff(old, new, out, "--alert-drop", "20", "--alert-new-errors", "0")
    assert (code, alerts) == (0, [])
    code = main(
        ["diff", str(old), str(new), "-o", str(out), "--format", "jsonl", "--alert-drop", "5"]
    )
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 1
    assert [r["alert"] for r in records if r["type"] == "diff-alert"] == [
        "ALERT: sitemap https://e/a.xml lost 10% of its URLs (1 of 10 no longer listed; --alert-drop 5)",
        "ALERT: the audit lost 10% of its URLs (1 of 10 no longer listed; --alert-drop 5)",
    ]
