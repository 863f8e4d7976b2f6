"""The agents table of contracts/agents.md: presets by tier, exact User-Agent strings, and
the robots.txt token each string names (issue 30).

OpenAI's OAI-SearchBot and ChatGPT-User strings put `compatible; X/1.0` outside the
parentheses: the token is still the crawler named, not `Mozilla`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from audit.checks.agents import PRESETS, parse_agents
from audit.cli.main import main
from audit.core.agent import KNOWN_AGENTS, canonical_token, robots_token, user_agent_of
from audit.http.robots import parse_robots
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset

# the contract's strings, copied as written there
OAI_SEARCHBOT = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; "
    "+https://openai.com/searchbot"
)
CHATGPT_USER = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; "
    "+https://openai.com/bot"
)
CLAUDE_USER = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; "
    "+Claude-User@anthropic.com)"
)
TRAIN = ["GPTBot", "ClaudeBot", "Google-Extended", "CCBot", "Applebot-Extended"]
SEARCH_AI = ["OAI-SearchBot", "Claude-SearchBot", "PerplexityBot"]
USER_AI = ["ChatGPT-User", "Claude-User", "Perplexity-User"]


def test_presets_by_tier_in_the_contract_s_order() -> None:
    assert PRESETS["search"] == ("Googlebot", "Bingbot")
    assert list(PRESETS["ai-train"]) == TRAIN
    assert list(PRESETS["ai-search"]) == SEARCH_AI
    assert list(PRESETS["ai-user"]) == USER_AI
    assert list(PRESETS["ai"]) == TRAIN + SEARCH_AI + USER_AI
    assert list(PRESETS["all"]) == ["Googlebot", "Bingbot", *TRAIN, *SEARCH_AI, *USER_AI]
    assert parse_agents("AI-User,ai-search") == (*USER_AI, *SEARCH_AI)


def test_tokens_are_spelt_as_the_table_and_others_as_typed() -> None:
    assert parse_agents("gptbot, oai-searchbot, FooBot, foobot") == (
        "GPTBot",
        "OAI-SearchBot",
        "FooBot",
    )
    assert parse_agents("googlebot,search") == ("Googlebot", "Bingbot")
    assert canonical_token("claude-user") == "Claude-User" and canonical_token("x-y") == "x-y"


def test_exact_user_agent_strings_and_the_unfetched_tokens() -> None:
    assert user_agent_of("oai-searchbot") == OAI_SEARCHBOT
    assert user_agent_of("ChatGPT-User") == CHATGPT_USER
    assert user_agent_of("Claude-User") == CLAUDE_USER
    assert user_agent_of("CCBot") == "CCBot/2.0 (https://commoncrawl.org/faq/)"
    assert user_agent_of("Google-Extended") is None
    assert user_agent_of("Applebot-Extended") is None
    assert user_agent_of("FooBot") is None
    fetched = [a.token for a in KNOWN_AGENTS if a.user_agent is not None]
    assert len(fetched) == 11


@pytest.mark.parametrize("agent", [a for a in KNOWN_AGENTS if a.user_agent is not None])
def test_every_string_names_its_own_token(agent: Any) -> None:
    assert robots_token(agent.user_agent).lower() == agent.token.lower()


@pytest.mark.parametrize("ua", [OAI_SEARCHBOT, CHATGPT_USER])
def test_a_compatible_outside_parentheses_picks_the_crawler_s_group(ua: str) -> None:
    text = "User-agent: OAI-SearchBot\nUser-agent: ChatGPT-User\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n"
    p = parse_robots(text, ua, origin="http://e.test:80", url="http://e.test/robots.txt")
    assert p.agent in ("OAI-SearchBot", "ChatGPT-User")
    assert not p.allowed("http://e.test/page") and not p.allowed("http://e.test/")
    # a plain browser string still falls to `*`
    browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko); foo"
    assert robots_token(browser) == "Mozilla"


def _crawl(base: str, out: Path, *extra: str) -> list[dict[str, Any]]:
    argv = ["crawl", f"{base}/sitemap.xml", "--format", "jsonl", "--no-progress", *extra]
    rc = main([*argv, "--output", str(out), "--retries", "0", "--fail-on", "never"])
    assert rc == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


async def test_oai_searchbot_s_real_string_is_blocked_everywhere(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    pages = ["/a", "/star/b", "/c"]
    site.routes = {
        "/robots.txt": (
            200,
            TEXT,
            "User-agent: OAI-SearchBot\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n",
        ),
        "/sitemap.xml": (200, XML, urlset(*[base + p for p in pages])),
        **{p: (200, HTML, "<html><body>x</body></html>") for p in pages},
    }
    records = await asyncio.to_thread(
        _crawl, base, tmp_path / "o.jsonl", "--user-agent", OAI_SEARCHBOT
    )
    blocked = {r["url"] for r in records if r.get("code") == "url-robots-blocked"}
    assert blocked == {base + p for p in pages}
    assert {h.path for h in site.hits} == {"/robots.txt", "/sitemap.xml"}
    assert {h.headers["User-Agent"] for h in site.hits} == {OAI_SEARCHBOT}
