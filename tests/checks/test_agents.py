"""checks/agents.py: presets, per-agent verdicts, indexability reasons, empty shells."""

from __future__ import annotations

import pytest

from audit.checks.agents import (
    PRESETS,
    agent_verdict,
    empty_shell,
    index_reason,
    meta_noindex,
    parse_agents,
)
from audit.checks.pagefacts import PageFacts, facts_of
from audit.core.records import FetchResult, Hop, UrlResult

HTML = (("content-type", "text/html; charset=utf-8"),)


def test_presets_expand_in_order_each_agent_once() -> None:
    assert parse_agents("search") == ("Googlebot", "Bingbot")
    # a token of the agents table is spelt as the table does (contracts/agents.md)
    assert parse_agents("ai, googlebot,search") == (*PRESETS["ai"], "Googlebot", "Bingbot")
    assert parse_agents("ALL") == PRESETS["all"] == (*PRESETS["search"], *PRESETS["ai"])
    assert parse_agents("GPTBot,gptbot,,") == ("GPTBot",)


@pytest.mark.parametrize("bad", ["Foo Bar", "bot/1.0", "", " , "])
def test_a_bad_list_says_what(bad: str) -> None:
    with pytest.raises(ValueError, match=r"product token|no agent"):
        parse_agents(bad)


def test_verdict_blocked_before_noindex_scoped_or_not() -> None:
    assert agent_verdict(False, ["noindex"], [], "GPTBot") == "blocked"
    assert agent_verdict(True, ["gptbot: noindex"], [], "GPTBot") == "noindex"
    assert agent_verdict(True, ["gptbot: noindex"], [], "ClaudeBot") == "allowed"
    assert agent_verdict(True, ["noindex"], [], "ClaudeBot") == "noindex"
    assert agent_verdict(True, ["googlebot: nofollow", "unavailable_after: 1 Jan 2030 00:00:00 GMT"], [], "Googlebot") == "allowed"  # fmt: skip
    assert agent_verdict(True, [], [("ccbot", "noindex")], "CCBot") == "noindex"
    assert agent_verdict(True, [], [("ccbot", "noindex")], "GPTBot") == "allowed"
    assert agent_verdict(True, [], [("robots", "None")], "GPTBot") == "noindex"


def test_meta_noindex_from_a_page_s_head_metas() -> None:
    body = b'<html><head><META NAME="GPTBot" content="noindex, nofollow"></head><body>x</body>'
    metas = facts_of(body).metas
    assert metas == (("gptbot", "noindex, nofollow"),)
    assert meta_noindex(metas, "GPTBot") == "gptbot: noindex, nofollow"
    assert meta_noindex(metas, "Googlebot") is None
    assert (
        meta_noindex(facts_of(b'<meta name="gptbot" content="nosnippet">').metas, "GPTBot") is None
    )


def _record(result: FetchResult | None, robots: str = "allowed") -> UrlResult:
    if result is None:
        return UrlResult.unrequested("https://ex.com/a", None, None, None, robots)  # type: ignore[arg-type]
    return UrlResult(
        result.url, None, None, result.status, result.final_url, result.redirects,
        None, None, "allowed", 1.0, result.error,
    )  # fmt: skip


def _fetch(
    status: int | None = 200, headers: tuple[tuple[str, str], ...] = HTML, **kw: object
) -> FetchResult:
    return FetchResult("https://ex.com/a", "https://ex.com/a", status, headers, **kw)  # type: ignore[arg-type]


def test_indexability_reasons_in_order() -> None:
    def reason(record: UrlResult, result: FetchResult | None, **said: bool) -> str | None:
        flags = {"noindex": False, "canonical": False, **said}
        why = index_reason(record, result, **flags)
        return None if why is None else why.value

    ok = _fetch()
    assert reason(_record(ok), ok) is None
    assert reason(_record(None, "blocked"), None) == "robots"
    assert reason(_record(None, "unreachable"), None) == "robots"
    down = _fetch(None, (), error="timeout", error_kind="timeout")
    assert reason(_record(down), down) == "unreachable"
    moved = _fetch(redirects=(Hop("https://ex.com/a", 301),))
    assert reason(_record(moved), moved) == "redirect"
    gone = _fetch(404)
    assert reason(_record(gone), gone) == "status"
    assert reason(_record(ok), ok, canonical=True, noindex=True) == "noindex"
    assert reason(_record(ok), ok, canonical=True) == "canonical"
    pdf = _fetch(headers=(("content-type", "application/pdf"),))
    assert reason(_record(pdf), pdf) == "not-html"
    assert reason(_record(pdf), pdf, noindex=True) == "noindex"


def _read(html: str, cap: int = 512 * 1024) -> PageFacts:
    return facts_of(html.encode(), cap=cap)


def test_empty_shell() -> None:
    shell = _read(
        '<html><head><script src="/app.js"></script></head><body><div id="root"></div></body></html>'
    )
    assert shell.scripts == 1
    assert empty_shell(shell) is not None
    words = "Plenty of words rendered on the server. " * 10
    assert empty_shell(_read(f'<body><p>{words}</p><script src="/a.js"></script></body>')) is None
    # no script: a short page, not a shell; JSON-LD runs nothing
    assert empty_shell(_read("<body><p>Short.</p></body>")) is None
    ld = '<head><script type="application/ld+json">{"@type": "Thing"}</script></head><body></body>'
    assert _read(ld).scripts == 0 and empty_shell(_read(ld)) is None
    # a body cut off by the reader may have its text later: no verdict
    long_script = "<body><script>" + "x" * 40000 + "</script><p>" + words + "</p></body>"
    assert empty_shell(_read(long_script, cap=20000)) is None
