"""Progress on stderr: a tqdm bar whose total grows as sitemaps expand.

Hidden (a no-op object) with --no-progress or when stderr is not a terminal,
so stdout and logs stay clean.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol


class Progress(Protocol):
    def add_total(self, n: int) -> None: ...
    def advance(self, n: int = 1) -> None: ...
    def sitemap_done(self) -> None: ...
    def close(self) -> None: ...


class NoProgress:
    def add_total(self, n: int) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def sitemap_done(self) -> None:
        pass

    def close(self) -> None:
        pass


class BarProgress:
    def __init__(self, label: str) -> None:
        from tqdm import tqdm

        self._sitemaps = 0
        self._bar: Any = tqdm(
            total=0, desc=label, unit="url", file=sys.stderr, dynamic_ncols=True, smoothing=0.1
        )
        self._bar.set_postfix_str("sitemaps 0", refresh=False)

    def add_total(self, n: int) -> None:
        self._bar.total = (self._bar.total or 0) + n
        self._bar.refresh()

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def sitemap_done(self) -> None:
        self._sitemaps += 1
        self._bar.set_postfix_str(f"sitemaps {self._sitemaps}")

    def close(self) -> None:
        self._bar.close()


def make_progress(enabled: bool, label: str) -> Progress:
    if enabled and sys.stderr.isatty():
        return BarProgress(label)
    return NoProgress()
