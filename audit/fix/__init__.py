"""`sitemap-audit fix SOURCE --output DIR`: the sitemap set a complete audit says the
site should have (contracts/fix.md).

`evidence` (read a jsonl report or a state file, refuse a cut run), `plan` (pure: each
listed URL kept, replaced or dropped with the finding behind it, `<lastmod>` from the
strongest evidence, alternates among kept URLs, stable shards), `write` (the files).
Never sends a request; imports the state and report readers, never the pipeline's
engine or aiohttp.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from audit.fix.evidence import Evidence, FixRefused, read_evidence
from audit.fix.plan import DEFAULT_SHARD_SIZE, MAX_SHARD_SIZE, Plan, plan
from audit.fix.write import write_plan
from audit.rules.urls import origin

__all__ = [
    "DEFAULT_SHARD_SIZE",
    "MAX_SHARD_SIZE",
    "Evidence",
    "FixRefused",
    "Plan",
    "default_base_url",
    "fix_sitemaps",
    "plan",
    "read_evidence",
]


def default_base_url(ev: Evidence) -> str:
    """The root of the listed URLs' one origin; FixRefused when they span several."""
    roots: dict[tuple[str, str, int], str] = {}
    seen: set[str] = set()  # scheme://netloc of the normalised URLs already looked at
    for item in ev.listed:
        prefix = "/".join(item.key.split("/", 3)[:3])  # `scheme://netloc` of an http(s) URL
        if prefix in seen:
            continue
        seen.add(prefix)
        o = origin(item.url)
        if o is not None:  # an origin's root as its first URL spells it
            parts = urlsplit(item.key)  # the key is normalize_url(item.url)
            roots.setdefault(o, f"{parts.scheme}://{parts.netloc}/")
    if len(roots) > 1:
        shown = ", ".join(sorted(roots.values())[:3])
        raise FixRefused(
            f"{ev.source}: the listed URLs span {len(roots)} origins ({shown}...): "
            "give --base-url, the public URL the fixed set will be served from"
        )
    if not roots:
        raise FixRefused(f"{ev.source}: no listed URL to fix: give --base-url")
    return next(iter(roots.values()))


def fix_sitemaps(
    source: str,
    output: str | Path,
    *,
    base_url: str | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    gzip: bool = False,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Read SOURCE, decide, write DIR; the fix-summary record. Raises FixRefused (and
    writes nothing) when SOURCE cannot be fixed from."""
    out = Path(output)
    refused = (  # (whether an option is refused, why), in the options' order
        (
            not 1 <= shard_size <= MAX_SHARD_SIZE,
            f"--shard-size {shard_size}: must be 1 to {MAX_SHARD_SIZE:,}",
        ),
        (
            # (an origin: a port that is no number 1-65535 leaves every URL out of scope)
            base_url is not None and origin(base_url) is None,
            f"--base-url {base_url!r}: not an absolute http(s) URL",
        ),
        (out.exists() and not out.is_dir(), f"--output {output}: exists and is not a directory"),
    )
    for wrong, why in refused:
        if wrong:
            raise FixRefused(why)
    ev = read_evidence(source)
    base = base_url if base_url is not None else default_base_url(ev)
    decided = plan(ev, base, shard_size=shard_size, gzip=gzip, now=now)
    return write_plan(decided, out, source=source)
