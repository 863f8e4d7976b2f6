"""Per-host lanes: a slow or backed-off host parks its own work, not the workers.

The frontier is one first-in-first-out queue for every host. Without lanes, a host
that answers 429 (and defers itself), or whose rate fell, ties up every worker on its
limiter while other hosts' URLs wait behind them. A worker that takes a URL of a host
already holding as many workers as that host can use now (`Host.lane()`) parks the URL
in the host's own queue and takes the next one instead. A worker leaving a host with
parked URLs marks the host ready; every worker takes ready URLs before the frontier's.
So a parked host always has a worker inside it, which takes its parked URLs in turn
(no URL is left behind when the frontier closes). At most PARK_MAX URLs are parked in
all: past that a worker waits on the host as before, and memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from typing import Final, Generic, TypeVar

__all__ = ["PARK_MAX", "Lanes"]

T = TypeVar("T")

PARK_MAX: Final = 10_000


class Lanes(Generic[T]):
    """Workers inside each host, and each host's parked jobs."""

    __slots__ = ("_inside", "_parked", "_ready", "parked")

    def __init__(self) -> None:
        self._inside: dict[str, int] = {}
        self._parked: dict[str, deque[T]] = {}
        self._ready: deque[str] = deque()  # hosts with parked jobs and a free place
        self.parked = 0  # jobs parked now, all hosts

    def ready_job(self) -> T | None:
        """A parked job whose host has a free place, or None."""
        while self._ready:
            key = self._ready.popleft()
            queue = self._parked.get(key)
            if queue:
                self.parked -= 1
                job = queue.popleft()
                if not queue:
                    del self._parked[key]
                return job
        return None

    def park(self, key: str, job: T, lane: int | None) -> bool:
        """Park `job` when its host already holds `lane` workers; False: run it now."""
        if lane is None or self._inside.get(key, 0) < lane or self.parked >= PARK_MAX:
            return False
        self._parked.setdefault(key, deque()).append(job)
        self.parked += 1
        return True

    def enter(self, key: str) -> None:
        self._inside[key] = self._inside.get(key, 0) + 1

    def leave(self, key: str) -> None:
        """A worker is done with the host: its next parked job may go."""
        left = self._inside[key] - 1
        if left:
            self._inside[key] = left
        else:
            del self._inside[key]
        if key in self._parked:
            self._ready.append(key)
