"""What a target on the command line (or given to the library) is: a local sitemap file,
a site, a robots.txt or a sitemap URL. Judged before anything is opened, so the front
door may check every target first (exit 2 on one that is neither); no HTTP here.
"""

from __future__ import annotations

import errno
from pathlib import Path
from urllib.parse import urlsplit

from audit.core.errors import TargetError

__all__ = ["classify_target"]

# a local target that does not open, by errno: what is wrong with it (any other errno:
# 'cannot be read' with its text); ENOTDIR and ELOOP are a path that leads nowhere
_NO_FILE = "no such file (and not an http(s) URL)"
_UNOPENED: dict[int | None, str] = {
    errno.EISDIR: "is a directory, not a sitemap file",
    errno.ENOENT: _NO_FILE,
    errno.ENOTDIR: _NO_FILE,
    errno.ELOOP: _NO_FILE,
}


def classify_target(target: str) -> tuple[str, str]:
    """('file', path) | ('site', url) | ('robots', url) | ('sitemap', url); TargetError otherwise."""
    if "://" in target:
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TargetError(f"{target}: not an http(s) URL or a local file")
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError as exc:
            raise TargetError(f"{target}: bad port in URL") from exc
        path = parts.path
        if path in ("", "/") and not parts.query:
            return "site", target if path else target + "/"
        if path.lower().endswith("/robots.txt"):
            return "robots", target
        return "sitemap", target
    try:  # a directory or a missing file fails to open as well, each with its errno
        with Path(target).open("rb"):
            pass
    except OSError as exc:
        why = _UNOPENED.get(exc.errno, f"cannot be read: {exc.strerror}")
        raise TargetError(f"{target}: {why}") from exc
    return "file", target
