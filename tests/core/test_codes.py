"""The registry of finding codes (audit/core/codes.py): one entry per code with its
severity, meaning, fix and Search Console's name where it has one (`sitemap-audit codes`
lists it: tests/cli/test_codes.py)."""

from __future__ import annotations

import re

import pytest

from audit.core.codes import (
    CODES,
    DOCS_PATH,
    doc_anchor,
    fix_of,
    search_console_name,
    severity_of,
)
from audit.core.severity import Severity


def test_every_code_has_a_meaning_and_a_fix() -> None:
    missing = [c.code for c in CODES.values() if not c.summary or len(c.fix) < 20]
    assert not missing, f"codes without a fix text in audit/core/codes.py: {missing}"


def test_search_console_names_match_its_reports() -> None:
    expected = {
        "url-robots-blocked": "Blocked by robots.txt",
        "url-noindex": "Excluded by 'noindex' tag",
        "url-redirect": "Page with redirect",
        "url-soft-404": "Soft 404",
        "url-not-found": "Not found (404)",
        "url-canonical-mismatch": "Alternate page with proper canonical tag",
        "loc-cross-host": "URL not allowed",
        "lastmod-invalid": "Invalid date",
        "sitemap-leading-whitespace": "Leading whitespace",
        "url-server-error": "Server error (5xx)",
        "url-redirect-loop": "Redirect error",
    }
    assert {c: search_console_name(c) for c in expected} == expected
    client = search_console_name("url-client-error") or ""
    assert "(401)" in client and "(403)" in client and "other 4xx" in client
    # no counterpart in Search Console: no name at all, never a made-up one
    for code in ("url-slow", "lastmod-uniform", "robots-no-sitemap", "hreflang-not-reciprocal"):
        assert search_console_name(code) is None
    assert search_console_name("no-such-code") is None
    assert fix_of("url-not-found").startswith("Restore the page")
    assert doc_anchor("url-not-found") == "docs/codes.md#url-not-found"


def test_codes_are_kebab_case_and_keyed_by_themselves() -> None:
    for key, entry in CODES.items():
        assert key == entry.code
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", key), key
        assert isinstance(entry.severity, Severity)
        assert severity_of(key) is entry.severity


def test_an_unregistered_code_has_no_severity_and_no_fix() -> None:
    with pytest.raises(KeyError):
        severity_of("no-such-code")
    assert fix_of("no-such-code") == ""


def test_the_fix_and_search_console_tables_name_only_registered_codes() -> None:
    # fix_of and search_console_name read these tables directly: a key that is no
    # registered code would give an unregistered code a fix or a name
    from audit.core.codes import _FIX, _SEARCH_CONSOLE

    assert set(_FIX) <= set(CODES)
    assert set(_SEARCH_CONSOLE) <= set(CODES)
    assert all(fix_of(code) == entry.fix for code, entry in CODES.items())
    assert all(search_console_name(code) == entry.search_console for code, entry in CODES.items())


def test_each_code_s_doc_anchor_is_its_own_section() -> None:
    anchors = {doc_anchor(code) for code in CODES}
    assert len(anchors) == len(CODES)
    assert all(a.startswith(f"{DOCS_PATH}#") for a in anchors)
