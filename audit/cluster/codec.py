"""Plain dicts for what crosses between the driver and a Dask worker: a FetchResult, a
UrlResult, findings. Plain data pickles the same under any version of the classes."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from audit.core.evidence import fetch_from, fetch_to
from audit.core.records import Finding, Hop, Severity, UrlResult

__all__ = [
    "fetch_from",
    "fetch_to",
    "findings_from",
    "findings_to",
    "record_from",
    "record_to",
]


def _plain(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def record_to(record: UrlResult) -> dict[str, Any]:
    out = _plain(record)
    out["redirects"] = [[h.url, h.status] for h in record.redirects]
    return out


def record_from(data: dict[str, Any]) -> UrlResult:
    return UrlResult(**{**data, "redirects": tuple(Hop(u, s) for u, s in data["redirects"])})


def findings_to(found: list[Finding]) -> list[dict[str, Any]]:
    return [{**_plain(f), "severity": f.severity.value} for f in found]


def findings_from(data: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(**{**d, "severity": Severity(d["severity"])}) for d in data]
