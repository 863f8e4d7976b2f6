"""audit.front.state: the --state store opened with its identity (only the options that
change what a run finds), its wiring around a run, and its closing."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.core.config import CrawlConfig
from audit.front.options import RunOptions
from audit.front.state import NOT_FINGERPRINTED, close_state, open_state, wire
from audit.state.store import StateError, StateStore, fingerprint


def test_options_at_their_defaults_are_not_fingerprinted(tmp_path: Path) -> None:
    """A later version's new option (at its default) must not orphan an existing state."""
    path = str(tmp_path / "s.sqlite")
    targets = ["https://www.example.com/"]
    open_state(path, "crawl", targets, CrawlConfig(rate=3.0, timeout=5.0)).close(complete=True)
    # the same audit as a store that only knows the targets: rate and timeout do not count
    st = StateStore.open(
        tmp_path / "s.sqlite", fingerprint=fingerprint("crawl", targets, {}), targets=targets
    )
    assert st.mode == "incremental"
    st.close(complete=True)
    with pytest.raises(StateError, match="different audit"):
        open_state(path, "crawl", targets, CrawlConfig(page_checks=True))


def test_ignored_codes_and_a_commands_own_options_make_another_audit(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite")
    targets = ["https://www.example.com/"]
    open_state(path, "crawl", targets, CrawlConfig(), ignore=["url-slow"]).close(complete=True)
    # the same codes in another order and repeated: the same audit
    again = open_state(path, "crawl", targets, CrawlConfig(), ignore=["url-slow", "url-slow"])
    assert again.mode == "incremental"
    again.close(complete=True)
    with pytest.raises(StateError, match="different audit"):
        open_state(path, "crawl", targets, CrawlConfig())
    with pytest.raises(StateError, match="different audit"):
        open_state(path, "crawl", targets, CrawlConfig(), ignore=["url-slow"], more={"map": "m"})
    fresh = open_state(path, "crawl", targets, CrawlConfig(), fresh=True)
    assert fresh.mode != "incremental"
    assert close_state(fresh, complete=True) is None


def test_politeness_credentials_and_the_plan_never_tie_a_state(tmp_path: Path) -> None:
    assert {"rate", "timeout", "auth", "cookies", "cluster", "intent"} <= NOT_FINGERPRINTED
    assert not {"page_checks", "links", "include", "max_urls"} & NOT_FINGERPRINTED
    path = str(tmp_path / "s.sqlite")
    targets = ["https://www.example.com/"]
    first = CrawlConfig(auth=("u", "one"), intent="a.csv", rate=1.0)
    open_state(path, "crawl", targets, first).close(complete=True)
    second = CrawlConfig(auth=("u", "two"), intent="b.csv", rate=50.0)
    st = open_state(path, "crawl", targets, second)
    assert st.mode == "incremental"
    st.close(complete=True)


def test_wiring_adds_the_state_the_ledger_budget_and_lastmod_where_asked(tmp_path: Path) -> None:
    targets = ["https://www.example.com/"]
    # nothing asked: nothing wired
    bare = wire(None, RunOptions(), CrawlConfig(), targets, "crawl")
    assert bare.sinks == [] and bare.hooks() == [] and bare.after is None
    # --content without --state: lastmod over time's hook alone (page dates)
    content = wire(None, RunOptions(content=True), CrawlConfig(), targets, "crawl")
    assert [type(h).__name__ for h in content.hooks()] == ["LastmodHook"]
    store = open_state(str(tmp_path / "s.sqlite"), "crawl", targets, CrawlConfig())
    try:
        crawl = wire(store, RunOptions(state="s", budget=5), CrawlConfig(), targets, "crawl")
        assert [type(s).__name__ for s in crawl.sinks] == ["StateSink", "Ledger"]
        assert crawl.after is not None
        names = [type(h).__name__ for h in crawl.hooks()]
        assert names == ["StateHook", "BudgetHook", "Ledger"]
        # --page-checks puts lastmod over time in front of the state's hook
        paged = wire(store, RunOptions(state="s"), CrawlConfig(page_checks=True), targets, "crawl")
        assert [type(h).__name__ for h in paged.hooks()] == ["LastmodHook", "StateHook", "Ledger"]
        # validate keeps no ledger and takes no budget
        plain = wire(store, RunOptions(state="s", budget=5), CrawlConfig(), targets, "validate")
        assert [type(s).__name__ for s in plain.sinks] == ["StateSink"] and plain.after is None
    finally:
        store.close(complete=False)
