"""One old URL's outcome on the new site (audit.migrate.outcomes): pure, answers in,
one outcome and its migrate-* findings out, the worst that applies."""

from __future__ import annotations

from audit.core.records import FetchResult, Hop
from audit.migrate.outcomes import (
    OUTCOMES,
    RANK,
    chain_text,
    judge,
    new_url_for,
    path_query,
    same_target,
)

NEW = "https://new.example"
OLD = "https://old.example/shop/lamp?c=1"


def answer(
    final: str, status: int | None = 200, hops: tuple[Hop, ...] = (), **more: object
) -> FetchResult:
    return FetchResult(new_url_for(OLD, NEW), final, status, redirects=hops, **more)  # type: ignore[arg-type]


def test_the_new_url_is_the_old_path_and_query_on_the_new_origin() -> None:
    assert new_url_for(OLD, NEW) == f"{NEW}/shop/lamp?c=1"
    assert path_query("https://x.example") == "/"
    assert RANK["intent-violated"] == 0 and RANK["ok"] == len(OUTCOMES) - 1


def test_one_permanent_redirect_to_the_expected_page_is_ok() -> None:
    hops = (Hop(f"{NEW}/shop/lamp?c=1", 301),)
    verdict = judge(OLD, answer(f"{NEW}/lamps/1", hops=hops), new_origin=NEW,
                    expected=f"{NEW}/lamps/1")  # fmt: skip
    assert (verdict.outcome, verdict.findings, verdict.landed) == ("ok", (), f"{NEW}/lamps/1")


def test_the_worst_finding_is_the_outcome() -> None:
    hops = (Hop(f"{NEW}/shop/lamp?c=1", 302), Hop(f"{NEW}/step", 301))
    verdict = judge(OLD, answer(f"{NEW}/other", hops=hops), new_origin=NEW,
                    expected=f"{NEW}/lamps/1")  # fmt: skip
    codes = [code for code, _ in verdict.findings]
    assert codes == ["migrate-wrong-target", "migrate-temporary-redirect", "migrate-chain"]
    assert verdict.outcome == "wrong-target"
    assert "not the expected https://new.example/lamps/1" in verdict.findings[0][1]


def test_home_page_not_found_lost_and_robots() -> None:
    home = judge(OLD, answer(f"{NEW}/", hops=(Hop(f"{NEW}/shop/lamp?c=1", 301),)), new_origin=NEW)
    assert home.outcome == "to-homepage"
    gone = judge(OLD, answer(f"{NEW}/shop/lamp?c=1", 410), new_origin=NEW)
    assert gone.outcome == "not-found" and "answers 410" in gone.findings[0][1]
    lost = judge(OLD, answer("https://elsewhere.example/x"), new_origin=NEW)
    assert lost.outcome == "lost" and "leaves the new origin" in lost.findings[0][1]
    silent = judge(OLD, answer(f"{NEW}/shop/lamp?c=1", None, error="timed out"), new_origin=NEW)
    assert silent.outcome == "lost" and "timed out" in silent.findings[0][1]
    blocked = judge(OLD, answer(f"{NEW}/p"), new_origin=NEW, landing_allowed=False)
    assert blocked.outcome == "robots-blocked"


def test_noindex_on_the_landing_page() -> None:
    result = answer(f"{NEW}/shop/lamp?c=1", headers=(("x-robots-tag", "noindex"),))
    verdict = judge(OLD, result, new_origin=NEW, agent_token="googlebot")
    assert verdict.outcome == "noindex"


def test_a_production_map_matches_the_same_path_on_staging() -> None:
    assert same_target(f"{NEW}/a", "https://www.example/a", NEW)
    assert not same_target(f"{NEW}/b", "https://www.example/a", NEW)
    assert same_target(f"{NEW}/a#top", f"{NEW}/a", NEW)


def test_chain_text_names_every_hop_and_the_end() -> None:
    result = answer(f"{NEW}/end", hops=(Hop(f"{NEW}/shop/lamp?c=1", 301),))
    assert chain_text(result) == f"{NEW}/shop/lamp?c=1 (301) -> {NEW}/end (200)"
    assert chain_text(answer(f"{NEW}/x", None)) == f"{NEW}/x (no answer)"
