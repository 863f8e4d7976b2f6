"""What only a command line has: the report file (checked writable before the first
request, cut to its last complete line when a write fails, or written whole or not at all)
and a run that Ctrl-C or SIGTERM interrupt cleanly (the report of what was done is still
written)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from audit.cli.options import PROG
from audit.core.errors import TargetError

__all__ = [
    "OutputError",
    "open_output",
    "run_interruptibly",
    "say_errors",
    "say_resumed_or_interrupted",
    "whole_or_nothing",
]


class OutputError(TargetError):
    """The report file could not be written (a full disk, a file size limit): the run
    stops with this one line and exit 2."""


_PROBE = 4096  # bytes written (then removed) before the first request: is there room?


def _output_error(path: str, exc: OSError) -> OutputError:
    return OutputError(
        f"{path}: cannot write the report: {exc.strerror or exc}; the run was stopped and "
        "the report keeps its complete lines only"
    )


def _open_report(path: str) -> TextIO:
    """The report file, checked writable with a probe block; every later write that
    fails raises OutputError (from a record sink, so the run stops at once)."""
    try:
        fh = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by caller
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # not /dev/null, a pipe, a tty
            fh.write(" " * _PROBE)
            fh.flush()
            fh.seek(0)
            fh.truncate()
    except OSError as exc:
        raise TargetError(f"{path}: cannot write the report: {exc.strerror}") from None
    write = fh.write

    def guarded(text: str) -> int:
        try:
            return write(text)
        except OSError as exc:
            raise _output_error(path, exc) from None

    fh.write = guarded  # type: ignore[method-assign]
    return fh


def _output_failure(exc: BaseException) -> OutputError | None:
    """The OutputError inside `exc` (raised in a sink, maybe grouped by a task group)."""
    found: BaseException | None = exc
    if isinstance(exc, BaseExceptionGroup):  # its first OutputError, however deep
        found = exc.subgroup(OutputError)  # (the groups that hold one, in order)
        while isinstance(found, BaseExceptionGroup):
            found = found.exceptions[0]
    return found if isinstance(found, OutputError) else None


@contextlib.contextmanager
def open_output(path: str | None) -> Iterator[TextIO]:
    if not path:
        yield sys.stdout
        return
    fh = _open_report(path)
    failure: OutputError | None = None
    try:
        yield fh
        fh.flush()
    except OSError as exc:  # the last flush
        failure = _output_failure(exc) or _output_error(path, exc)
    except BaseException as exc:
        failure = _output_failure(exc)
        if failure is None:
            raise
    finally:
        with contextlib.suppress(OSError):
            fh.close()
    if failure is not None:
        # drop a partial last line, so what was written stays valid
        with contextlib.suppress(OSError), open(path, "rb+") as cut:
            size = cut.seek(0, 2)
            cut.seek(max(0, size - 65536))
            tail = cut.read()
            cut.truncate(size - len(tail) + tail.rfind(b"\n") + 1)
        raise failure from None


@contextlib.contextmanager
def whole_or_nothing(path: str | None) -> Iterator[str | None]:
    """A regular output file is written beside `path` and moved over it only when the
    command succeeds: a refused diff leaves an earlier report at `path` as it was."""
    if not path or (os.path.exists(path) and not os.path.isfile(path)):
        yield path  # stdout, /dev/null, a pipe: written as they are
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(prefix=".sitemap-audit-", suffix=".part", dir=folder)
    except OSError as exc:
        raise TargetError(f"{path}: cannot write the report: {exc.strerror}") from None
    os.close(fd)
    try:
        os.chmod(temp, _new_file_mode(path))  # mkstemp's 0600 would outlive the move
        yield temp
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def _new_file_mode(path: str) -> int:
    """The mode `open(path, "w")` would leave: the existing file's, else 0666 less umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def run_interruptibly(coro: Any, notes: dict[str, Any] | None = None) -> bool:
    """Run a coroutine; Ctrl-C or SIGTERM cancel it cleanly. True when interrupted, and
    `notes["stopped_by"]` (the summary's) names the signal."""
    stopped = notes if notes is not None else {}

    async def guarded() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def terminate() -> None:
            stopped["stopped_by"] = "SIGTERM"
            task.cancel()

        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, terminate)
        await coro

    from audit.core.eventloop import new_event_loop  # uvloop when the 'fast' extra is installed

    try:
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(guarded())
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        if isinstance(exc, KeyboardInterrupt):
            stopped["stopped_by"] = "SIGINT"
        return True
    except BaseExceptionGroup as group:  # a pipeline task wrote into a closed pipe
        if group.subgroup(BrokenPipeError) is not None:
            raise BrokenPipeError("the reader of the output went away") from None
        raise
    return False


def say_resumed_or_interrupted(state: Any, replayed: int, what: str, interrupted: bool) -> None:
    """The first closing lines of a run (crawl, validate, migrate) on stderr: that it resumed
    from the --state file `state` (`replayed` `what` were not requested again), and that it
    was interrupted."""
    if replayed:
        print(
            f"{PROG}: resumed from {state}: {replayed} {what} were not requested again",
            file=sys.stderr,
        )
    if interrupted:
        print(f"{PROG}: interrupted; the report holds what was done", file=sys.stderr)


def say_errors(messages: Iterable[str]) -> None:
    """A line on stderr for each message: `sitemap-audit: error: MESSAGE`."""
    for message in messages:
        print(f"{PROG}: error: {message}", file=sys.stderr)
