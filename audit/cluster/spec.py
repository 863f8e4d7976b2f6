"""`--cluster SPEC`: `local:N` (N worker processes here) or `tcp://HOST:PORT` (a running
Dask scheduler); the options a cluster run cannot take. Imports no Dask."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from audit.core.config import CrawlConfig
from audit.core.errors import TargetError

__all__ = ["INSTALL_HINT", "ClusterSpec", "check_config", "parse_spec"]

# sitemap-audit is not on PyPI: the extra is installed from the sources (README, Install)
INSTALL_HINT = "install sitemap-audit with its cluster extra (README.md, Install)"
MAX_LOCAL_WORKERS = 256


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    workers: int | None  # local:N
    address: str | None  # tcp://HOST:PORT


def parse_spec(text: str) -> ClusterSpec:
    """The parsed spec; ValueError with a one-line reason otherwise."""
    text = text.strip()
    if text.startswith("local:"):
        count = text[len("local:") :]
        if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
            raise ValueError(
                f"{text!r}: local:N takes N worker processes, 1 to {MAX_LOCAL_WORKERS}"
            )
        return ClusterSpec(int(count), None)
    if text.startswith("tcp://"):
        parts = urlsplit(text)
        port = None  # (a port out of range: ValueError)
        with contextlib.suppress(ValueError):
            port = parts.port
        if not parts.hostname or port is None or parts.path not in ("", "/"):
            raise ValueError(f"{text!r}: a scheduler address is tcp://HOST:PORT")
        return ClusterSpec(None, f"tcp://{parts.netloc}")
    raise ValueError(f"{text!r}: give local:N or tcp://HOST:PORT")


def check_config(config: CrawlConfig, mode: str) -> None:
    """TargetError (one line) for a cluster run the cluster cannot do as asked."""
    if not config.cluster:
        return
    try:
        parse_spec(config.cluster)
    except ValueError as exc:
        raise TargetError(f"--cluster {exc}") from None
    if mode != "crawl":
        raise TargetError(f"--cluster runs the URL checks of crawl; {mode} checks no URL")
