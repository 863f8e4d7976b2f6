"""What the entry checks of the validator share: the shared empty result, how a value
is quoted in a message, and the XML whitespace and decimal forms they strip and match.

The concerns (`locs`, `urlkeys`, `lastmods`, `crawlhints`, `extensions`, `limits`)
append findings to a list handed down by `validator.SitemapValidator.check`; a clean
entry gets NO_FINDINGS, which nobody fills (a step that reports calls `writable` first).
"""

from __future__ import annotations

import re
from decimal import Decimal

from audit.core.records import Finding, finding

__all__ = ["DECIMAL", "NO_FINDINGS", "XML_SPACE", "ZERO", "add", "show", "writable"]

XML_SPACE = " \t\r\n"
DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)", re.ASCII)  # xsd:decimal lexical form
ZERO = Decimal(0)
# What check() returns for a clean entry: shared, so never mutated (tests guard it).
NO_FINDINGS: list[Finding] = []


def writable(out: list[Finding]) -> list[Finding]:
    """`out`, or a new list instead of the shared empty one, before a finding is added."""
    return [] if out is NO_FINDINGS else out


def add(
    out: list[Finding], source: str, code: str, message: str, line: int | None, url: str | None
) -> None:
    """Append finding `code` of sitemap `source` to `out`."""
    out.append(finding(code, message, sitemap=source, line=line, url=url))


def show(value: str, limit: int = 100) -> str:
    """A value for a message: repr-quoted so whitespace shows, truncated."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return repr(value)
