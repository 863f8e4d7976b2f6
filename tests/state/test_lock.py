"""The lock a run holds on its state (audit.state.lock): one run per state file, in one
process too; the lock file names its holder; released, it can be taken again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from audit.state.lock import StateLock
from audit.state.store import StateError, StateStore, fingerprint, read_status

FP = fingerprint("crawl", ["https://www.example.com/"], {})


def test_one_store_per_state_file_in_one_process_too(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    first = StateStore.open(path, fingerprint=FP, targets=["t"])
    try:
        with pytest.raises(StateError) as info:
            StateStore.open(path, fingerprint=FP, targets=["t"], fresh=True)
        assert "in use by another run" in str(info.value) and "\n" not in str(info.value)
    finally:
        first.close(complete=True)
    assert read_status(path) == "complete"  # --fresh did not remove the live state
    StateStore.open(path, fingerprint=FP, targets=["t"]).close(complete=True)  # released


def test_the_lock_file_names_its_holder_and_is_free_once_released(tmp_path: Path) -> None:
    state = tmp_path / "s.sqlite"
    lock = StateLock.take(state)
    holder = Path(f"{state}.lock").read_text()
    assert holder.startswith(f"pid {os.getpid()} on ") and "started 20" in holder
    with pytest.raises(StateError, match=f"in use by another run \\(pid {os.getpid()} on ") as info:
        StateLock.take(state)
    assert "\n" not in str(info.value)
    lock.release()
    lock.release()  # again: nothing
    again = StateLock.take(state)
    assert again.fd is not None
    again.release()
    assert Path(f"{state}.lock").exists()  # rewritten, never removed


def test_a_lock_file_that_cannot_be_made_is_a_one_line_error(tmp_path: Path) -> None:
    state = tmp_path / "missing-dir" / "s.sqlite"
    with pytest.raises(StateError, match="cannot create the state's lock file") as info:
        StateLock.take(state)
    assert "\n" not in str(info.value)
