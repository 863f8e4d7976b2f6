"""--output may be a device or a pipe, not only a file: /dev/null (benchmarks, cron jobs
that want only the exit status) and a named pipe read by another process are written
to as they are; the writability probe is for regular files only."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITEMAP = ROOT / "fixtures" / "sitemaps" / "valid" / "urlset.xml"


def _validate(output: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "audit", "validate", str(SITEMAP), "--format", "jsonl",
         "--output", output],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_output_to_dev_null() -> None:
    done = _validate(os.devnull)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_output_to_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    done = _validate(str(fifo))
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert got, "the pipe's reader got nothing"
    last = got[0].splitlines()[-1].replace(" ", "")
    assert last.startswith('{"type":"summary"'), last


def test_a_report_file_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    import pytest

    from audit.cli.output import open_output
    from audit.core.errors import TargetError

    with pytest.raises(TargetError) as caught, open_output(str(tmp_path / "no" / "r.txt")):
        pass  # pragma: no cover - never entered
    assert "cannot write the report" in str(caught.value) and "\n" not in str(caught.value)


def test_whole_or_nothing_keeps_an_earlier_report_when_the_command_fails(tmp_path: Path) -> None:
    import pytest

    from audit.cli.output import open_output, whole_or_nothing
    from audit.core.errors import TargetError

    report = tmp_path / "diff.txt"
    report.write_text("last night's\n", encoding="utf-8")
    report.chmod(0o640)
    with (
        pytest.raises(TargetError),
        whole_or_nothing(str(report)) as target,
        open_output(target) as out,
    ):
        out.write("half a comparison")
        raise TargetError("refused")
    assert report.read_text(encoding="utf-8") == "last night's\n"
    assert [p.name for p in tmp_path.iterdir()] == ["diff.txt"]  # no part file left behind
    with whole_or_nothing(str(report)) as target, open_output(target) as out:
        out.write("tonight's\n")
    assert report.read_text(encoding="utf-8") == "tonight's\n"
    assert report.stat().st_mode & 0o777 == 0o640  # the file's mode, not mkstemp's 0600


def test_run_interruptibly_says_whether_the_run_was_cancelled() -> None:
    import asyncio

    from audit.cli.output import run_interruptibly

    async def done() -> None:
        await asyncio.sleep(0)

    async def cancelled() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(1)

    notes: dict[str, object] = {}
    assert run_interruptibly(done(), notes) is False and notes == {}
    assert run_interruptibly(cancelled(), notes) is True


def test_the_first_closing_lines_say_a_resumed_and_an_interrupted_run() -> None:
    import contextlib
    import io

    from audit.cli.output import say_resumed_or_interrupted

    def said(state: str | None, replayed: int, what: str, interrupted: bool) -> str:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            say_resumed_or_interrupted(state, replayed, what, interrupted)
        return err.getvalue()

    assert said(None, 0, "URLs already checked", False) == ""  # no --state, ran to its end
    assert said("s.sqlite", 3, "old URLs already judged", False) == (
        "sitemap-audit: resumed from s.sqlite: 3 old URLs already judged were not requested again\n"
    )
    assert said("s.sqlite", 0, "URLs already checked", True) == (
        "sitemap-audit: interrupted; the report holds what was done\n"
    )
    assert said("s.sqlite", 2, "URLs already checked", True).splitlines() == [
        "sitemap-audit: resumed from s.sqlite: 2 URLs already checked were not requested again",
        "sitemap-audit: interrupted; the report holds what was done",
    ]


def test_each_error_is_one_line_on_stderr() -> None:
    import contextlib
    import io

    from audit.cli.output import say_errors

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        say_errors([])
        say_errors(["https://a.example/: no sitemap found", "b.xml: not XML"])
    assert err.getvalue().splitlines() == [
        "sitemap-audit: error: https://a.example/: no sitemap found",
        "sitemap-audit: error: b.xml: not XML",
    ]
