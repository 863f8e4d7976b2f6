"""What a URL's verdict is derived from, as a value that can be stored and read back.

A verdict is computed once from evidence (STYLE.md lesson 21): the final answer (a
`FetchResult`) and, when a body was read, the page's facts (a facts sink's `outcome()`,
plain data). The state keeps the evidence beside the verdict, so a later night that gets
`304 Not Modified`, a resumed run, or `--changed-only` derives the same verdict again by
the same checks, instead of replaying a verdict that hooks changed after it was stored.

`seen` says how the evidence stands for its run: `answer` (a full answer of that run),
`304` (the server confirmed an earlier answer; its validators applied), or `carried`
(no request at all: `--changed-only`; a guess that cannot vouch for a later night).

Plain data only: nothing here does I/O or knows HTTP.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from audit.core.records import STATUS_2XX, FetchResult, Hop

__all__ = [
    "Evidence",
    "Seen",
    "decode_evidence",
    "encode_evidence",
    "fetch_from",
    "fetch_to",
    "revalidated",
]

Seen = Literal["answer", "304", "carried"]

# Headers a 304 may carry that replace the stored ones (RFC 9110 15.4.5; nights.md:
# "the Last-Modified and ETag of a 304 replace the stored ones when present").
_VALIDATORS = ("last-modified", "etag")


@dataclass(frozen=True, slots=True)
class Evidence:
    """The final answer of a URL and what its body said (a facts sink's outcome)."""

    result: FetchResult
    facts: tuple[Any, ...] | None = None
    seen: Seen = "answer"

    @property
    def revivable(self) -> bool:
        """Can a later 304 stand for it? A plain 2xx without redirects: a conditional
        request to the listed URL is then answered for this very resource."""
        return self.result.status in STATUS_2XX and not self.result.redirects


def revalidated(stored: Evidence, answer: FetchResult) -> Evidence:
    """The stored evidence as a 304 confirms it: its validators replaced by the 304's
    where the 304 has them, every other header and the page facts kept; the 304's own
    timing (a field that describes the run, not the site)."""
    fresh = {name: value for name, value in answer.headers if name in _VALIDATORS}
    kept = tuple((k, v) for k, v in stored.result.headers if k not in fresh)
    headers = kept + tuple(fresh.items())
    result = replace(stored.result, headers=headers, elapsed_ms=answer.elapsed_ms, attempts=1)
    return Evidence(result, stored.facts, "304")


def fetch_to(result: FetchResult) -> dict[str, Any]:
    """A FetchResult as plain JSON-able data (bytes as latin-1 text)."""
    out = {f.name: getattr(result, f.name) for f in fields(result)}
    out["headers"] = list(map(list, result.headers))
    out["redirects"] = [[h.url, h.status] for h in result.redirects]
    return out


def fetch_from(data: dict[str, Any]) -> FetchResult:
    """The FetchResult of `fetch_to`'s data."""
    headers = tuple((k, v) for k, v in data["headers"])  # a pair each, or not evidence
    redirects = tuple(itertools.starmap(Hop, data["redirects"]))  # a Hop of each [url, status]
    return FetchResult(**{**data, "headers": headers, "redirects": redirects})


def encode_evidence(evidence: Evidence) -> str:
    """Evidence as one line of JSON text (the state's `evidence` column)."""
    result = fetch_to(evidence.result)
    result["body_head"] = evidence.result.body_head.decode("latin-1")
    return json.dumps(
        {"result": result, "facts": evidence.facts, "seen": evidence.seen},
        separators=(",", ":"),
        default=str,
    )


def decode_evidence(text: str | None) -> Evidence | None:
    """The evidence of `encode_evidence`'s text; None for '' or None (none stored) or text that is
    not evidence (a state written by another version: the URL is then asked in full)."""
    if not text:
        return None
    try:
        data = json.loads(text)
        plain = data["result"]
        plain["body_head"] = plain.get("body_head", "").encode("latin-1")
        return Evidence(fetch_from(plain), _tuples(data.get("facts")), data.get("seen", "answer"))
    except (ValueError, KeyError, TypeError):
        return None


def _tuples(value: Any) -> Any:
    """JSON arrays back to the tuples a facts outcome is made of (PageFacts holds tuples
    of tuples; a list where a tuple was would compare unequal and be unhashable); None
    (no facts) stays None."""
    if isinstance(value, list):
        return tuple(map(_tuples, value))
    return value
