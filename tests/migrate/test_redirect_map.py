"""The redirect map of `migrate --map` (audit/migrate/redirect_map.py): rows, regular
expressions with backreferences, and a malformed map named by file, line and problem."""

from __future__ import annotations

import pytest

from audit.migrate.redirect_map import MapError, parse_map


def test_map_parser_rules() -> None:
    m = parse_map(
        [
            "Old URL,New URL\n",
            "\n",
            "# a comment, with a comma\n",
            "https://old.example/a,https://new.example/b\n",
            "/p?x=1,https://new.example/q\n",
            "regex:^https://old\\.example/c/(\\d+)$,https://new.example/c-\\1\n",
            "~/d/(?P<n>\\w+),https://new.example/d/\\g<n>/\n",
            "https://old.example/a,https://new.example/b,,\n",  # the same row again, trailing cells
        ],
        "m.csv",
    )
    assert len(m) == 4
    assert m.expected("https://OLD.example:443/a") == ("https://new.example/b", 4)
    assert m.expected("http://any.example/p?x=1") == ("https://new.example/q", 5)
    assert m.expected("https://old.example/c/42") == ("https://new.example/c-42", 6)
    assert m.expected("https://old.example/d/zz") == ("https://new.example/d/zz/", 7)
    assert m.expected("https://old.example/zz") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("https://o.example/a\n", r"m\.csv:1: expected 2 columns \(old,new\), found 1"),
        ("old,new\n/a,https://n.example/b,extra\n", r"m\.csv:2: expected 2 columns"),
        ("/a,/b\n", r"m\.csv:1: the new URL '/b' is not an absolute http\(s\) URL"),
        ("a,https://n.example/b\n", r"m\.csv:1: the old URL 'a' is neither"),
        ("regex:^/(a,https://n.example/\n", r"m\.csv:1: broken regular expression '\^/\(a'"),
        ("regex:^/(a)$,https://n.example/\\2\n", r"m\.csv:1: backreference \\2 but the pattern"),
        ("~^/(a)$,https://n.example/\\g<x>\n", r"m\.csv:1: backreference \\g<x> names no group"),
        ("~^/(a)$,\\1\n", r"m\.csv:1: the new URL '\\\\1' is not an absolute"),
        ("/a,https://n.example/b\n/a,https://n.example/c\n", r"m\.csv:2: /a is already mapped"),
        ('/a,"https://n.example/b\n', r"m\.csv:\d+: not valid CSV"),
    ],
)
def test_malformed_map_names_file_line_and_problem(text: str, problem: str) -> None:
    with pytest.raises(MapError, match=problem):
        parse_map(text.splitlines(keepends=True), "m.csv")
