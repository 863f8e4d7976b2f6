"""The state file's schema (audit.state.schema): a state of another schema version
refused by its version, a half-created file made again, a state made before a table or a
column was added migrated when it is opened, and the values' keys and text."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from audit.state.schema import (
    SCHEMA_VERSION,
    STATEMENTS,
    StateError,
    decode,
    encode,
    fingerprint,
    half_created,
    remove_database,
    url_key,
)
from audit.state.store import StateStore, read_records, read_status

FP = fingerprint("crawl", ["https://www.example.com/"], {})


def open_store(path: Path, **kw: Any) -> StateStore:
    return StateStore.open(path, fingerprint=FP, targets=["t"], **kw)


def test_a_state_of_the_previous_schema_is_refused_by_its_version(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    open_store(path).close(complete=True)
    con = sqlite3.connect(path)
    con.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION - 1),)
    )
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StateError, match=f"schema version '{SCHEMA_VERSION - 1}'") as info:
        open_store(path)
    assert "--fresh" in str(info.value) and "\n" not in str(info.value)
    assert path.read_bytes() == before
    with pytest.raises(StateError, match="schema version"):
        list(read_records(path))  # diff refuses it too


@pytest.mark.parametrize("statements", [0, 1, 2, 5, 8])
def test_a_half_created_state_is_made_again(tmp_path: Path, statements: int) -> None:
    """What an older version left when the disk filled (or it was killed) while it
    created the state: some of the schema, no meta row."""
    path = tmp_path / "s.sqlite"
    if statements:
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("PRAGMA page_size = 65536")
        con.execute("PRAGMA journal_mode = WAL")
        for sql in STATEMENTS[:statements]:
            con.execute(sql)
        con.close()
    else:
        path.write_bytes(b"")  # cut off before the first byte
    st = StateStore.open(path, fingerprint=FP, targets=["t"])
    assert (st.mode, st.run) == ("new", 1)
    st.close(complete=True)
    assert read_status(path) == "complete"


def test_a_state_made_before_a_table_and_a_column_were_added_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_url("a", "s", None, None, None, {"type": "url", "url": "a"}, [])
    st.close(complete=True)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE budget")
    con.execute("ALTER TABLE urls DROP COLUMN evidence")
    con.execute("ALTER TABLE results DROP COLUMN evidence")
    con.commit()
    con.close()
    st = open_store(path)
    assert st.mode == "incremental"
    prior = st.prior("a")
    assert prior is not None and prior.evidence is None  # a row made before: no evidence
    st.put_budget("a", "2024-01-01T00:00:00Z", None)
    st.close(complete=True)
    con = sqlite3.connect(path)
    assert con.execute("SELECT url FROM budget").fetchall() == [("a",)]
    columns = {row[1] for row in con.execute("PRAGMA table_info(urls)")}
    con.close()
    assert "evidence" in columns


def test_a_database_of_another_program_is_not_half_created(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "other.sqlite")
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    assert half_created(con)  # exactly ours and empty: made again
    con.execute("INSERT INTO meta VALUES ('app', 'x')")
    assert not half_created(con)  # a meta row: someone wrote to it
    con.execute("DELETE FROM meta")
    con.execute("CREATE TABLE notes (x)")
    assert not half_created(con)  # a table this schema does not make
    con.close()


def test_fingerprints_and_url_keys_are_stable() -> None:
    a = fingerprint("crawl", ["https://x/"], {"b": 1, "a": [1, 2]})
    assert a == fingerprint("crawl", ["https://x/"], {"a": [1, 2], "b": 1})  # key order
    assert a != fingerprint("validate", ["https://x/"], {"a": [1, 2], "b": 1})
    assert a != fingerprint("crawl", ["https://y/"], {"a": [1, 2], "b": 1})
    assert len(a) == 32
    key = url_key("https://x/a")
    assert key == url_key("https://x/a") and key != url_key("https://x/b")
    assert -(2**63) <= key < 2**63
    assert isinstance(url_key("https://x/\ud800"), int)  # a lone surrogate is hashed too


def test_values_are_json_text_read_back_as_they_were() -> None:
    value = {"url": "https://x/é", "n": 1, "list": [None, True, 1.5]}
    text = encode(value)
    assert isinstance(text, str) and "é" in text and " " not in text
    assert decode(text) == value


def test_remove_database_takes_its_side_files_and_tolerates_what_is_gone(tmp_path: Path) -> None:
    base = tmp_path / "s.sqlite"
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{base}{suffix}").write_bytes(b"x")
    remove_database(base)
    assert list(tmp_path.iterdir()) == []
    remove_database(base)  # nothing there: nothing to do
    blocked = tmp_path / "d"
    (tmp_path / "d-wal").mkdir()  # a directory cannot be unlinked
    with pytest.raises(StateError, match="cannot remove the old state"):
        remove_database(blocked)
    remove_database(blocked, quiet=True)
