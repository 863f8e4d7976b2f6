"""Finding severities (audit/core/severity.py): the three of RULES.md, their values as the
reports spell them, and the ranking --fail-on compares."""

from __future__ import annotations

import json

import pytest

from audit.core.severity import Severity


def test_values_are_the_words_of_the_reports() -> None:
    assert [s.value for s in Severity] == ["error", "warning", "info"]
    assert json.dumps({"severity": Severity.WARNING}) == '{"severity": "warning"}'
    assert Severity("info") is Severity.INFO


def test_rank_orders_error_above_warning_above_info() -> None:
    assert Severity.ERROR.rank > Severity.WARNING.rank > Severity.INFO.rank
    worst = max([Severity.INFO, Severity.ERROR, Severity.WARNING], key=lambda s: s.rank)
    assert worst is Severity.ERROR
    # --fail-on warning: a finding at or above warning's rank fails the run
    failing = [s for s in Severity if s.rank >= Severity.WARNING.rank]
    assert failing == [Severity.ERROR, Severity.WARNING]


def test_an_unknown_word_is_no_severity() -> None:
    with pytest.raises(ValueError):
        Severity("fatal")
