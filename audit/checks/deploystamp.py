"""Is a host's Last-Modified a deploy stamp rather than a content date?

RULES.md `last-modified-deploy`: a static site served from files sends the build
time as Last-Modified, so comparing it with <lastmod> only produces noise. A host
is judged on its first SAMPLE answers that carry Last-Modified for URLs listed
with a <lastmod> (all of them when fewer, but at least MINIMUM): when 90% or more
fall within one 10-minute window, the host's Last-Modified is a deploy stamp, unless
90% or more of them are the time of their own request (within AT_REQUEST of the
answer's Date): that is a dynamic Last-Modified (`last-modified-dynamic`), whose
values cluster only because the crawl was quick. Right after a deploy a few files'
times are as close to the request as that, but the build time stays put while the
requests go on.

`DeployStamp` keeps at most SAMPLE timestamps per undecided host. Pure: it is fed
datetimes and answers questions; the pipeline decides what to hold back.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, timedelta
from typing import Final

__all__ = ["AT_REQUEST", "MINIMUM", "SAMPLE", "SHARE", "WINDOW", "DeployStamp", "clustered"]

SAMPLE: Final = 50
AT_REQUEST: Final = timedelta(seconds=2)  # checks.response's last-modified-dynamic window
MINIMUM: Final = 20
SHARE: Final = 0.9
WINDOW: Final = timedelta(minutes=10)


def clustered(stamps: list[datetime]) -> bool:
    """Do SHARE or more of these times fall within one WINDOW? (at least MINIMUM)"""
    if len(stamps) < MINIMUM:
        return False
    ordered = sorted(stamps)
    # the most times within WINDOW after one of them (bisect: the first one past it)
    most = max(bisect_right(ordered, start + WINDOW) - i for i, start in enumerate(ordered))
    return most >= SHARE * len(ordered)


class DeployStamp:
    """One host's verdict: None while undecided, then True (a deploy stamp) or False."""

    __slots__ = ("at_request", "seen", "span", "stamps", "verdict")

    def __init__(self) -> None:
        self.stamps: list[datetime] = []
        self.at_request = 0  # of them, the time of their own request: a dynamic value
        self.verdict: bool | None = None
        self.seen = 0  # qualifying answers the verdict was made on
        self.span = ""  # their earliest and latest time, for the message

    def add(self, modified: datetime, served: datetime | None = None) -> bool:
        """One qualifying answer (`served`: its Date); True when this one decided the
        host."""
        if self.verdict is not None:
            return False
        self.stamps.append(modified)
        if served is not None and -AT_REQUEST <= modified - served <= AT_REQUEST:
            self.at_request += 1
        return len(self.stamps) >= SAMPLE and self.decide()

    def decide(self) -> bool:
        """Decide on what was seen (the end of the run for a host with few answers)."""
        stamps = self.stamps
        dynamic = self.at_request >= SHARE * len(stamps)  # (no stamps: never clustered)
        self.verdict = clustered(stamps) and not dynamic
        self.seen = len(stamps)
        if stamps:
            self.span = f"{min(stamps):%Y-%m-%d %H:%M} to {max(stamps):%Y-%m-%d %H:%M} UTC"
        self.stamps = []
        return True
