"""sitemap-audit: an asynchronous deep-crawl auditor for XML sitemaps.

The front door for library use (see audit.api and the README's "Library use"):

    import audit

    result = audit.crawl("https://www.example.com/", rate=5, on_record=print)
    result.summary["findings"]      # {"error": 2, "warning": 5, "info": 1}

`crawl`, `validate`, `inspect`, `discover` (and their `_async` forms), `Audit`
(the routine under them), `Result`, `Discovery`, `CrawlConfig` (every option),
and `TargetError` (a target that cannot be audited at all). The names are loaded
on first use, so `import audit.sitemap.parser` never loads the HTTP stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from audit.core.version import __version__

if TYPE_CHECKING:
    from audit.api import (
        Audit,
        Discovery,
        Result,
        crawl,
        crawl_async,
        discover,
        discover_async,
        inspect,
        inspect_async,
        validate,
        validate_async,
    )
    from audit.core.config import CrawlConfig
    from audit.core.errors import TargetError

__all__ = [
    "Audit",
    "CrawlConfig",
    "Discovery",
    "Result",
    "TargetError",
    "__version__",
    "crawl",
    "crawl_async",
    "discover",
    "discover_async",
    "inspect",
    "inspect_async",
    "validate",
    "validate_async",
]

_HOME = {"CrawlConfig": "audit.core.config", "TargetError": "audit.core.errors"}


def __dir__() -> list[str]:
    """The front door (`dir(audit)`), not the helpers this module imports."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    # (never asked for __version__: it is bound above, and a module's __getattr__ is called
    # only for a name its globals lack, PEP 562)
    if name in __all__:
        value = getattr(importlib.import_module(_HOME.get(name, "audit.api")), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'audit' has no attribute {name!r}")
