"""The intent file (contracts/nights.md section 3): reading, which row applies, judgement.

Pure: real files under tmp_path, no HTTP (the crawl and migrate runs are in
tests/features/test_intent.py and tests/migrate/test_migrate_intent.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.core.records import Hop, UrlResult
from audit.rules.intent import IntentError, IntentPlan, Served, judge, load_intent, parse_intent

SITE = "https://www.example.com"


def plan_of(text: str, origins: list[str] | None = None) -> IntentPlan:
    return parse_intent(text, "intent.csv").scoped(origins)


# --- reading -----------------------------------------------------------------------------


def test_bom_header_blank_and_comment_lines_quotes_and_cases(tmp_path: Path) -> None:
    path = tmp_path / "intent.csv"
    text = (
        "\ufeffURL , Action,target\n"
        "\n"
        "   # a comment, with commas\n"
        f'"{SITE}/a,b",KEEP\n'
        "  \t \n"
        f" {SITE}/old , Redirect , {SITE}/new \n"
        '"/multi\nline",gone,\n'
        "/shop/old/*,redirect,/shop/new/*\n"
    )
    path.write_bytes(text.encode("utf-8"))
    plan = load_intent(path)
    assert plan.file == str(path)
    rows = [(r.url, r.action, r.target, r.line, r.prefix, r.path) for r in plan.rows]
    assert rows == [
        (f"{SITE}/a,b", "keep", None, 4, False, False),
        (f"{SITE}/old", "redirect", f"{SITE}/new", 6, False, False),
        ("/multi\nline", "gone", None, 7, False, True),
        ("/shop/old/*", "redirect", "/shop/new/*", 9, True, True),
    ]


def test_a_first_row_that_is_not_a_header_is_a_row() -> None:
    plan = plan_of(f"{SITE}/a,gone\n{SITE}/b,keep\n")
    assert [r.line for r in plan.rows] == [1, 2]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("url,action\n/a\n", 2, "expected 2 or 3 cells"),
        ("/a,keep\n\n/b,redirect,/c,/d\n", 3, "found 4"),
        ("/a,keep\n/b,delete\n", 2, "unknown action 'delete'"),
        ("# c\nwww.example.com/a,keep\n", 2, "neither an absolute http(s) URL nor a path"),
        ("ftp://example.com/a,keep\n", 1, "neither an absolute http(s) URL nor a path"),
        ("/a,redirect,example.com/b\n", 1, "target 'example.com/b' is neither"),
        ("/a*b,keep\n", 1, "'*' may only be the last character"),
        ("/a/*,redirect,/b*/c\n", 1, "'*' may only be the last character"),
        ("/a,keep,/b\n", 1, "a target is allowed only on a redirect row"),
        ("/a,gone,/b\n", 1, "a target is allowed only on a redirect row"),
        ("/a,redirect,/b/*\n", 1, "ends with '*' but the url '/a' does not"),
        (
            f"{SITE}/a,keep\n# same URL, other spelling\nHTTPS://WWW.EXAMPLE.COM:443/a,gone\n",
            3,
            "is already on line 1",
        ),
        ("/a%2f,keep\n/a%2F,gone\n", 2, "is already on line 1"),
        ('/a,keep\n"/b"x,keep\n', 2, "not valid CSV"),
        ('/a,keep\n"/b,keep\n', 2, "not valid CSV"),
    ],
)
def test_each_malformed_row_names_file_and_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(IntentError) as caught:
        parse_intent(text, "plans/intent.csv")
    message = str(caught.value)
    assert message.startswith(f"plans/intent.csv:{line}: "), message
    assert problem in message
    assert "\n" not in message


def test_a_prefix_row_and_an_exact_row_on_the_same_url_are_two_rows() -> None:
    plan = plan_of("/a,keep\n/a*,gone\n")
    assert len(plan) == 2


def test_unreadable_and_not_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(IntentError, match=r"^.*missing\.csv:1: cannot be read: "):
        load_intent(tmp_path / "missing.csv")
    folder = tmp_path / "dir"
    folder.mkdir()
    with pytest.raises(IntentError, match=r"dir:1: cannot be read: is a directory"):
        load_intent(folder)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"/a,keep\n/caf\xe9,gone\n")
    with pytest.raises(IntentError, match=r"latin\.csv:2: not UTF-8"):
        load_intent(latin)


# --- which row applies ------------------------------------------------------------------


def test_exact_beats_prefix_and_the_longest_prefix_wins() -> None:
    plan = plan_of(
        f"{SITE}/blog/*,gone\n{SITE}/blog/2024/*,keep\n{SITE}/blog/2024/keep-me,redirect\n"
    )
    hit = plan.match(f"{SITE}/blog/2024/keep-me")
    assert hit is not None and hit.row.line == 3
    hit = plan.match(f"{SITE}/blog/2024/other")
    assert hit is not None and hit.row.line == 2
    hit = plan.match(f"{SITE}/blog/2019/x")
    assert hit is not None and hit.row.line == 1
    assert plan.match(f"{SITE}/shop/") is None
    assert plan.match("https://other.example.com/blog/2024/x") is None


def test_urls_compare_normalised_as_loc_duplicate_does() -> None:
    plan = plan_of(f"{SITE}/caf%c3%a9,keep\n")
    hit = plan.match("HTTPS://WWW.Example.COM:443/caf%C3%A9")
    assert hit is not None and hit.row.line == 1
    assert plan.match(f"{SITE}/CAF%C3%A9") is None  # the path's case is the path


def test_path_rows_apply_on_the_targets_origins_only_in_crawl() -> None:
    text = "/old,gone\n/shop/*,keep\n"
    crawl = plan_of(text, ["http://127.0.0.1:8080/sitemap.xml"])
    assert crawl.match("http://127.0.0.1:8080/old") is not None
    assert crawl.match("http://127.0.0.1:8080/shop/x?y=1") is not None
    assert crawl.match("http://127.0.0.1:9090/old") is None
    migrate = plan_of(text, None)
    hit = migrate.match("http://anywhere.example/old")
    assert hit is not None and hit.row.line == 1


def test_path_rows_match_on_path_and_query() -> None:
    plan = plan_of("/list?page=2,gone\n")
    assert plan.match(f"{SITE}/list?page=2") is not None
    assert plan.match(f"{SITE}/list?page=3") is None
    assert plan.match(f"{SITE}/list") is None


def test_a_longer_path_prefix_beats_a_shorter_absolute_one() -> None:
    plan = plan_of(f"{SITE}/shop/*,keep\n/shop/old/*,gone\n", [SITE])
    hit = plan.match(f"{SITE}/shop/old/lamp")
    assert hit is not None and hit.row.line == 2


def test_star_targets_are_filled_and_path_targets_resolved() -> None:
    plan = plan_of(
        "/shop/old/*,redirect,/shop/new/*\n"
        f"{SITE}/a/*,redirect,https://new.example.com/b/*\n"
        "/c,redirect,/d\n",
        [SITE],
    )
    hit = plan.match(f"{SITE}/shop/old/lamp?c=red")
    assert hit is not None and hit.expected == f"{SITE}/shop/new/lamp?c=red"
    hit = plan.match(f"{SITE}/a/x/y")
    assert hit is not None and hit.expected == "https://new.example.com/b/x/y"
    hit = plan.match(f"{SITE}/c")
    assert hit is not None and hit.expected == f"{SITE}/d"


# --- judgement ---------------------------------------------------------------------------


def served(status: int | None, *hops: tuple[str, int], final: str = "", **kw: object) -> Served:
    return Served(status, tuple(Hop(u, s) for u, s in hops), final or None, **kw)  # type: ignore[arg-type]


def verdict_of(row: str, url: str, answer: Served) -> tuple[bool, str]:
    plan = plan_of(row, [SITE])
    hit = plan.match(url)
    assert hit is not None
    v = judge(hit, answer, file="intent.csv")
    return v.ok, v.message


def test_keep_needs_an_indexable_200_of_its_own() -> None:
    url = f"{SITE}/a"
    assert verdict_of("/a,keep", url, served(200, final=url, indexable=True)) == (True, "")
    ok, message = verdict_of(
        "/a,keep", url, served(200, final=url, indexable=False, indexability="noindex")
    )
    assert not ok
    assert message == "intent keep (intent.csv:1), served 200, not indexable (noindex)"
    ok, message = verdict_of(
        "/a,keep", url, served(200, (url, 301), final=f"{SITE}/b", indexable=False)
    )
    assert message == f"intent keep (intent.csv:1), served 301 -> {SITE}/b (200)"


def test_gone_needs_404_or_410_of_its_own() -> None:
    url = f"{SITE}/a"
    assert verdict_of("/a,gone", url, served(410, final=url))[0]
    assert verdict_of("/a,gone", url, served(404, final=url))[0]
    ok, message = verdict_of("/a,gone", url, served(200, (url, 301), final=f"{SITE}/"))
    assert not ok
    assert message == f"intent gone (intent.csv:1), served 301 -> {SITE}/ (200)"
    ok, message = verdict_of("/a,gone", url, served(404, (url, 301), final=f"{SITE}/x"))
    assert not ok  # a redirect to a 404 is not gone
    ok, message = verdict_of("/a,gone", url, served(None, error="connection refused"))
    assert message == "intent gone (intent.csv:1), served no answer: connection refused"


def test_redirect_with_and_without_a_target() -> None:
    url = f"{SITE}/old"
    good = served(200, (url, 301), (f"{SITE}/mid", 308), final=f"{SITE}/new")
    assert verdict_of(f"/old,redirect,{SITE}/new", url, good)[0]
    assert verdict_of("/old,redirect,/new", url, good)[0]
    assert verdict_of("/old,redirect", url, good)[0]
    ok, message = verdict_of(
        "/old,redirect,/new", url, served(200, (url, 302), final=f"{SITE}/new")
    )
    assert not ok
    assert message == (
        f"intent redirect to {SITE}/new (intent.csv:1), served 302 -> {SITE}/new (200)"
    )
    ok, message = verdict_of("/old,redirect", url, served(200, (url, 301), final=f"{SITE}/?x=1"))
    assert (ok, message) == (
        False,
        f"intent redirect (intent.csv:1), served 301 -> {SITE}/?x=1 (200)",
    )
    assert not verdict_of("/old,redirect,/new", url, served(200, final=url))[0]
    chain = served(404, (url, 301), (f"{SITE}/mid", 301), final=f"{SITE}/new")
    ok, message = verdict_of("/old,redirect,/new", url, chain)
    assert message.endswith(f"served 301 -> {SITE}/mid (301) -> {SITE}/new (404)")


def test_a_url_record_and_its_json_give_the_same_answer() -> None:
    record = UrlResult(
        f"{SITE}/a",
        None,
        None,
        200,
        f"{SITE}/b",
        (Hop(f"{SITE}/a", 301),),
        None,
        None,
        "allowed",
        1.0,
        extra={"indexable": False, "indexability": "redirect"},
    )
    assert Served.of(record) == Served.of(record.to_json())
    assert Served.of(record).text() == f"301 -> {SITE}/b (200)"


def test_crlf_lines_count_as_the_file_shows_them() -> None:
    plan = parse_intent("url,action\r\n\r\n# c\r\n/a,keep\r\n/x*,redirect,/y*\r\n", "f.csv")
    assert [(r.url, r.target, r.line) for r in plan.rows] == [("/a", None, 4), ("/x*", "/y*", 5)]
    with pytest.raises(IntentError, match=r"^f\.csv:3: unknown action"):
        parse_intent("/a,keep\r\n\r\n/b,delete\r\n", "f.csv")
