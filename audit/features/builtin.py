"""The run's own features: the built-in hooks an option (or a mode) adds to a run.

Which hooks a run gets is decided here; the order they are asked in is not (it is
audit.pipeline.hooks.HOOK_ORDER's, by each hook's `name`).

A feature's module is imported where its hook is built: a validate run without --agents
imports none of the URL and page checks (tests/cli/test_validate.py).
"""

from __future__ import annotations

from typing import Any

from audit.core.config import CrawlConfig
from audit.features.indexlastmod import IndexLastmodHook
from audit.pipeline.hooks import Hook

__all__ = ["builtin_hooks"]


def builtin_hooks(config: CrawlConfig, mode: str, render: Any = None) -> list[Hook]:
    """The run's own hooks for `mode` ("crawl", "validate", "inspect"): deploy stamps (a
    crawl), index <lastmod> truth (crawl and validate), indexability and --agents (every
    run), --render (a crawl given the run's RenderSession), --llms and the --links crawl
    (a crawl). Their order is HOOK_ORDER's. A validate run checks no listed URL: without
    --agents its agents hook would do nothing, so it has none."""
    crawl = mode == "crawl"
    own: list[Hook] = []
    if crawl:
        from audit.features.deploy import DeployStampHook

        own.append(DeployStampHook())
    if mode != "inspect":  # index <lastmod> against each child read (contracts/nights.md 4)
        own.append(IndexLastmodHook(config.lastmod_tolerance_s))
    if mode != "validate" or config.agents:
        from audit.features.agents import AgentsHook

        agents = AgentsHook(config)
        own.append(agents)
        if agents.pages is not None:  # --agents-fetch with --links: the pages' facts
            own.append(agents.pages)
    if not crawl:
        return own
    if render is not None:
        from audit.features.render import RenderHook

        own.append(RenderHook(config, render))
    if config.llms:
        from audit.features.llms import LlmsHook

        own.append(LlmsHook(config))
    if config.links:
        from audit.pipeline.links import LinkCrawl  # lxml.html: only for --links

        own.append(LinkCrawl(config))
    return own
