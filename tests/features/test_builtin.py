"""Which built-in features a run gets (audit.features.builtin), per mode and option, and
that every one of them has its place in the hook table."""

from __future__ import annotations

from audit.core.config import CrawlConfig
from audit.features.agentfetch import AgentPages
from audit.features.agents import AgentsHook
from audit.features.builtin import builtin_hooks
from audit.features.deploy import DeployStampHook
from audit.features.indexlastmod import IndexLastmodHook
from audit.features.llms import LlmsHook
from audit.pipeline.hooks import HOOK_ORDER, ordered
from audit.pipeline.links import LinkCrawl


def kinds(config: CrawlConfig, mode: str) -> list[type]:
    return [type(h) for h in builtin_hooks(config, mode)]


def test_each_mode_gets_its_own() -> None:
    plain = CrawlConfig()
    assert kinds(plain, "crawl") == [DeployStampHook, IndexLastmodHook, AgentsHook]
    # a validate run checks no listed URL: without --agents its agents hook would do nothing
    assert kinds(plain, "validate") == [IndexLastmodHook]
    assert kinds(CrawlConfig(agents=("ai",)), "validate") == [IndexLastmodHook, AgentsHook]
    assert kinds(plain, "inspect") == [AgentsHook]


def test_options_add_theirs_to_a_crawl_only() -> None:
    config = CrawlConfig(llms=True, links=True, agents=("ai",), agents_fetch=3)
    assert kinds(config, "crawl") == [
        DeployStampHook, IndexLastmodHook, AgentsHook, AgentPages, LlmsHook, LinkCrawl,
    ]  # fmt: skip
    assert kinds(config, "validate") == [IndexLastmodHook, AgentsHook, AgentPages]
    # with --page-checks the agents read the pages the checks read: no hook of their own
    both = CrawlConfig(links=True, page_checks=True, agents=("ai",), agents_fetch=3)
    assert AgentPages not in kinds(both, "crawl")


def test_every_built_in_hook_is_in_the_table_and_already_in_its_order() -> None:
    config = CrawlConfig(llms=True, links=True, agents=("ai",), agents_fetch=3)
    hooks = builtin_hooks(config, "crawl")
    assert all(h.name in HOOK_ORDER for h in hooks), [type(h).__name__ for h in hooks]
    assert list(ordered(reversed(hooks))) == hooks
