"""The option table (audit/cli/options.py): every command's parser, a flag's own value checked
as a one-line usage error (through the front door's parse), --format from --output's
extension, and the parsed flags mapped to a CrawlConfig and RunOptions."""

from __future__ import annotations

import argparse

import pytest

from audit.api import RunOptions
from audit.cli.options import build_parser, config_from, resolve_format, run_options
from audit.core.errors import TargetError


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["crawl", "x.xml", "--agents", "bad token!"], "argument --agents: "),
        (["crawl", "x.xml", "--rewrite", "nope"], "argument --rewrite: "),
        (["crawl", "x.xml", "--cookie", "novalue"], "argument --cookie: --cookie: expected"),
        (["crawl", "x.xml", "--insecure-host", "a/b"], "argument --insecure-host: "),
        (["crawl", "x.xml", "--cluster", "nowhere"], "argument --cluster: "),
        (["crawl", "x.xml", "--ignore", "no-such-code"], "unknown finding code no-such-code"),
        (["crawl", "x.xml", "--budget", "0"], "argument --budget: must be at least 1: '0'"),
        (["crawl", "x.xml", "--rate", "fast"], "argument --rate: not a number: 'fast'"),
        (["crawl", "x.xml", "--timeout", "0"], "argument --timeout: must be greater than 0: '0'"),
        (["crawl", "x.xml", "--timeout", "-0.5"], "--timeout: must be greater than 0: '-0.5'"),
        (["crawl", "x.xml", "--retries", "-1"], "argument --retries: must be at least 0: '-1'"),
        (["crawl", "x.xml", "--render", "none"], "argument --render: not a positive integer"),
    ],
)
def test_a_flags_own_value_is_a_one_line_usage_error(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        _parse(*argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and needle in err, err


def test_the_flags_become_the_config_and_the_run_options() -> None:
    args = _parse(
        "crawl", "https://www.example.com/", "--rate", "unlimited", "--page-checks",
        "--agents", "search", "--state", "s.sqlite", "--budget", "9", "--content",
        "--notify", "https://h.example/x", "--notify-on", "warning", "--ignore",
        "url-slow,url-redirect", "--ignore", "url-slow", "--indexnow", "abcdefgh12",
        "--dry-run", "--render", "3", "--cluster", "local:2",
    )  # fmt: skip
    config = config_from(args)
    assert config.rate == float("inf") and config.page_checks and config.render == 3
    assert config.agents == ("Googlebot", "Bingbot") and config.cluster == "local:2"
    assert config.cluster_fence is None  # the front door fences a run with --state
    assert run_options(args) == RunOptions(
        state="s.sqlite",
        budget=9,
        content=True,
        notify=("https://h.example/x",),
        notify_on="warning",
        indexnow="abcdefgh12",
        dry_run=True,
        ignore=("url-redirect", "url-slow"),
    )
    plain = _parse("validate", "x.xml")
    assert run_options(plain) == RunOptions() and config_from(plain).intent is None


def test_format_from_the_output_extension() -> None:
    assert resolve_format(_parse("crawl", "x", "-o", "r.html")) == "html"
    assert resolve_format(_parse("crawl", "x", "-o", "r.jsonl", "--format", "csv")) == "csv"
    assert resolve_format(_parse("crawl", "x", "-o", "report")) == "text"
    assert resolve_format(_parse("crawl", "x")) == "text"
    with pytest.raises(TargetError, match=r"cannot tell the report format from extension '\.x'"):
        resolve_format(_parse("crawl", "x", "-o", "r.x"))
    with pytest.raises(TargetError, match="give --format \\(text, json\\)"):
        resolve_format(_parse("inspect", "x", "-o", "r.csv"), ("text", "json"))


def test_render_from_a_config_file_word() -> None:
    args = _parse("crawl", "x.xml")
    args.render = "all"  # `render = "all"` in --config
    assert config_from(args).render == 0 and config_from(args).page_checks
    args.render = "lots"
    with pytest.raises(TargetError, match="--render: not a positive integer nor all"):
        config_from(args)
