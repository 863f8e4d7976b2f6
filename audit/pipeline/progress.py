"""Progress on stderr: a tqdm bar whose total grows as sitemaps expand.

While sitemaps are still being read the total is not known: the bar shows the
URLs checked and those listed so far ("of 20,692+ listed so far"), with no
percentage and no ETA (either would be computed against a total that is still
growing). Once every sitemap is read (`listing_done`) the bar gets its total,
percentage and ETA; a later `add_total` (the next target of a multi-target run)
makes the total unknown again.

Hidden (a no-op object) with --no-progress or when stderr is not a terminal,
so stdout and logs stay clean. Imports nothing from the rest of the pipeline.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    """The run's progress, hidden: every step does nothing (BarProgress draws them)."""

    def add_total(self, n: int) -> None:
        """`n` more URLs listed."""

    def advance(self, n: int = 1) -> None:
        """`n` more checked (the per-URL path)."""

    def sitemap_done(self) -> None:
        """One more sitemap read."""

    def listing_done(self) -> None:
        """Every sitemap is read: the total is known from now on."""

    def close(self) -> None:
        """The run is over."""


NO_PROGRESS = Progress()  # stateless: one for every run without a bar


class BarProgress(Progress):
    def __init__(self, label: str, file: TextIO | None = None) -> None:
        from tqdm import tqdm

        self._sitemaps = 0
        self._listed = 0
        self._growing = True  # sitemaps still streaming: the total is not known yet
        self._bar: Any = tqdm(
            total=None,
            desc=label,
            unit="url",
            file=file or sys.stderr,
            dynamic_ncols=True,
            smoothing=0.1,
        )
        self._postfix(refresh=False)

    def _postfix(self, *, refresh: bool = True) -> None:
        text = f"sitemaps {self._sitemaps}"
        if self._growing:
            text = f"of {self._listed:,}+ listed so far, {text}"
        self._bar.set_postfix_str(text, refresh=refresh)

    def add_total(self, n: int) -> None:
        self._listed += n
        # growing again after listing_done (the next target's listing), as before it
        self._growing = True
        self._bar.total = None
        self._postfix()

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def sitemap_done(self) -> None:
        self._sitemaps += 1
        self._postfix()

    def listing_done(self) -> None:
        """Every sitemap is read: the total is known from now on."""
        self._growing = False
        if self._listed:  # else nothing is checked against a total (validate counts entries)
            self._bar.total = self._listed
        self._postfix()

    def close(self) -> None:
        self._bar.close()


def make_progress(enabled: bool, label: str) -> Progress:
    if enabled and sys.stderr.isatty():
        return BarProgress(label)
    return NO_PROGRESS
