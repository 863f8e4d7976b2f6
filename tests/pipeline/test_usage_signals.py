"""Usage signals (contracts/agents.md): robots.txt `Content-Signal` and `Content-Usage` lines
and the `Content-Usage` header, with `--agents` (issue 30).

The lines end and start no group (every group's verdicts are those of the same file without
them); values are layered site-wide, `*`, own groups; `usage-contradiction` where a named
agent's signals say yes to a use while its group disallows `/`.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from audit.checks.agents import PRESETS, says_yes
from audit.core.agent import usage_pairs
from audit.http.robotstxt import parse_robots_txt
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset

# rules of several groups, usage lines between them (between user-agent lines too)
WITH_SIGNALS = """\
Content-Signal: search=yes, ai-input=yes
Content-Usage: train-ai=y
User-agent: GPTBot
Content-Signal: ai-train=yes
User-agent: ClaudeBot
Disallow: /
Content-Usage: train-ai=y, use=reference
User-agent: OAI-SearchBot
Content-Signal: ai-input=yes
Disallow: /private
Content-Usage: /docs/ train-ai=n

User-agent: Googlebot
Disallow: /g
Content-signal: Search = YES , broken, =x, y=
User-agent: Bingbot
Disallow: /b

User-agent: *
Content-Signal: ai-train=no
Disallow: /star
"""
PLAIN = "\n".join(
    line for line in WITH_SIGNALS.splitlines() if not re.match(r"content-", line, re.I)
)
PATHS = ["/", "/private/x", "/g/1", "/b/2", "/star/3", "/other", "/docs/a"]
TOKENS = [*PRESETS["all"], "FooBot", "sitemap-audit"]


def test_usage_lines_change_no_group_s_verdicts() -> None:
    with_signals, plain = parse_robots_txt(WITH_SIGNALS), parse_robots_txt(PLAIN)
    assert PLAIN.count("Content") == 0 and WITH_SIGNALS.count("Content") == 8
    for token in TOKENS:
        for path in PATHS:
            assert with_signals.allowed(path, token) == plain.allowed(path, token), (token, path)
    # the file has groups that both allow and disallow (the comparison is not vacuous)
    assert not plain.allowed("/", "GPTBot") and plain.allowed("/", "FooBot")
    assert not plain.allowed("/private/x", "OAI-SearchBot") and plain.allowed("/b/2", "googlebot")


def test_effective_values_site_wide_then_star_then_own_groups() -> None:
    robots = parse_robots_txt(WITH_SIGNALS)
    # GPTBot's group (shared with ClaudeBot and OAI-SearchBot) says ai-train=yes over `*`'s no
    assert robots.usage("gptbot") == (
        {"search": "yes", "ai-input": "yes", "ai-train": "yes"},
        {"train-ai": "y", "use": "reference"},
    )
    assert robots.usage("FooBot") == ({"search": "yes", "ai-input": "yes", "ai-train": "no"}, {"train-ai": "y"})  # fmt: skip
    # Googlebot's group: `Search = YES` trimmed and lower-cased; broken pairs dropped
    assert robots.usage("Googlebot")[0] == {"search": "yes", "ai-input": "yes", "ai-train": "no"}
    assert parse_robots_txt("User-agent: *\nDisallow: /\n").usage("x") == ({}, {})


def test_pairs_and_uses() -> None:
    assert usage_pairs(" Train-AI = N , search=y,,x, =1, a=") == {"train-ai": "n", "search": "y"}
    assert says_yes("GPTBot", {"ai-train": "yes"}, {}) == ["ai-train"]
    assert says_yes("GPTBot", {"ai-train": "no"}, {"train-ai": "y"}) == ["ai-train"]
    assert says_yes("GPTBot", {"search": "yes", "ai-input": "yes"}, {}) == []
    assert says_yes("Claude-User", {"ai-input": "yes"}, {"train-ai": "y"}) == ["ai-input"]
    assert says_yes("FooBot", {"search": "yes"}, {"search": "y"}) == []


ROBOTS = """\
Content-Signal: search=yes, ai-input=yes, ai-train=no
User-agent: GPTBot
User-agent: CCBot
Content-Usage: train-ai=y
Disallow: /

User-agent: OAI-SearchBot
Disallow: /

User-agent: Claude-SearchBot
Disallow: /

User-agent: PerplexityBot
Disallow: /docs/

User-agent: ClaudeBot
Content-Signal: ai-train=yes
Disallow: /docs/

User-agent: *
Allow: /
"""
PAGE = "<html><body><p>text</p></body></html>"


async def _run(serve: Any, robots: str, **cfg: Any) -> tuple[str, Any]:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, robots),
        "/a": (200, {**HTML, "Content-Usage": "train-ai=n"}, PAGE),
        "/docs/b": (
            200,
            [
                ("Content-Type", "text/html"),
                ("Content-Usage", "train-ai=y, search=y"),
                ("Content-Usage", "train-ai=n"),
            ],
            PAGE,
        ),
        "/c": (200, HTML, PAGE),
    }
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/a", base + "/docs/b", base + "/c"))
    return base, await audit(f"{base}/sitemap.xml", **cfg)


AGENTS = ("GPTBot", "CCBot", "ClaudeBot", "Claude-SearchBot", "PerplexityBot", "OAI-SearchBot", "Googlebot")  # fmt: skip


async def test_contradictions_one_per_host_and_use(serve: Any) -> None:
    base, run = await _run(serve, ROBOTS, agents=AGENTS)
    found = run.findings("usage-contradiction")
    assert [(f["category"], f["agents"]) for f in found] == [
        ("ai-input", ["Claude-SearchBot", "OAI-SearchBot"]),  # --agents order
        ("ai-train", ["GPTBot", "CCBot"]),  # Content-Usage train-ai=y; ClaudeBot: partial
    ]
    assert all(f["url"] == base + "/robots.txt" and f["severity"] == "warning" for f in found)
    hosts = run.summary["agents"]["GPTBot"]["hosts"]
    origin = base.lower()
    assert hosts == {
        origin: {
            "blocked": 3,
            "noindex": 0,
            "signals": {"search": "yes", "ai-input": "yes", "ai-train": "no"},
            "usage": {"train-ai": "y"},
        }
    }
    assert run.summary["agents"]["ClaudeBot"]["hosts"][origin]["signals"]["ai-train"] == "yes"
    assert run.summary["agents"]["ClaudeBot"]["hosts"][origin]["blocked"] == 1
    # the header: reported on the record, later pairs winning
    assert run.url(base + "/a")["usage"] == {"train-ai": "n"}
    assert run.url(base + "/docs/b")["usage"] == {"train-ai": "n", "search": "y"}
    assert "usage" not in run.url(base + "/c")


async def test_clean_controls_no_contradiction(serve: Any) -> None:
    # `no` with an allowed crawler, a yes with a partial disallow: nothing
    robots = "Content-Signal: ai-train=no, search=yes\nUser-agent: GPTBot\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /docs/\n"  # fmt: skip
    _, run = await _run(serve, robots, agents=("GPTBot", "Googlebot"))
    assert run.findings("usage-contradiction") == []
    # the same yes for agents not named: not judged
    _, run = await _run(serve, ROBOTS, agents=("Googlebot", "ClaudeBot"))
    assert run.findings("usage-contradiction") == []


@pytest.mark.parametrize("cfg", [{}, {"agents": ()}])
async def test_no_usage_without_agents(serve: Any, cfg: dict[str, Any]) -> None:
    base, run = await _run(serve, ROBOTS, **cfg)
    assert "usage" not in run.url(base + "/a") and "agents" not in run.summary
    assert run.findings("usage-contradiction") == []
