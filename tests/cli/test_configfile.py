"""`--config FILE` (TOML): every option by its flag name, targets, flags override it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.cli.configfile import ConfigFileError, _subparser, apply_config_file, load_config_file
from audit.cli.crawl import audit_targets
from audit.cli.main import build_parser, config_from, main
from tests.crawlkit import HTML, XML, Serve, Site, urlset

GOOD = urlset(
    "https://www.example.com/a",
    "https://www.example.com/b",
    extra="<lastmod>2024-05-01T10:00:00+00:00</lastmod>",
)
BAD = GOOD.replace("2024-05-01T10:00:00+00:00", "2024-02-30", 1)


def conf(tmp_path: Path, text: str, name: str = "audit.toml") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def parse(argv: list[str]) -> tuple[Any, list[str]]:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args, apply_config_file(parser, args, argv)


def test_every_kind_of_option_with_dash_or_underscore(tmp_path: Path) -> None:
    path = conf(
        tmp_path,
        """
targets = ["https://a.example/", "https://b.example/sitemap.xml"]
rate = 2.5
concurrency = 4
max_urls = 100
user-agent = "nightly/1.0"
page-checks = true
no_progress = true
format = "jsonl"
fail-on = "warning"
exclude = ["/private/"]
include-sitemap = "products"
header = ["X-Team: seo"]
slow = 2
lastmod-tolerance = 3600
""",
    )
    args, targets = parse(["crawl", "--config", path])
    assert targets == ["https://a.example/", "https://b.example/sitemap.xml"]
    cfg = config_from(args)
    assert (cfg.rate, cfg.concurrency, cfg.max_urls) == (2.5, 4, 100)
    assert cfg.user_agent == "nightly/1.0" and cfg.page_checks
    assert (cfg.slow_ms, cfg.lastmod_tolerance_s) == (2000.0, 3600.0)
    assert cfg.exclude == ("/private/",) and cfg.include_sitemap == ("products",)
    assert cfg.extra_headers == (("X-Team", "seo"),)
    assert (args.format, args.fail_on, args.no_progress) == ("jsonl", "warning", True)


def test_command_line_overrides_the_file(tmp_path: Path) -> None:
    path = conf(
        tmp_path,
        'target = "https://a.example/"\nrate = 2\nexclude = ["x"]\nformat = "jsonl"\n'
        'header = {"X-A" = "1"}\n',
    )
    argv = ["crawl", "https://cli.example/", "--config", path, "--rate", "7", "--exclude", "y"]
    argv.append("--no-progress")
    parser = build_parser()
    args = parser.parse_args(argv)
    targets = audit_targets(parser, args, argv)
    assert targets == ["https://cli.example/"]  # TARGET on the command line wins
    cfg = config_from(args)
    assert cfg.rate == 7.0
    assert cfg.exclude == ("y",)  # a list given on the command line replaces the file's
    assert cfg.extra_headers == (("X-A", "1"),)  # a table of headers
    assert args.format == "jsonl"  # not on the command line: the file's value


@pytest.mark.parametrize("given", [[], [""], ["", ""]])
def test_the_files_targets_when_the_command_line_names_none(
    tmp_path: Path, given: list[str]
) -> None:
    # an empty TARGET names nothing: crawl's, as validate's, falls back to the file's
    path = conf(tmp_path, 'targets = ["https://a.example/", "https://b.example/"]\n')
    for command in ("crawl", "validate"):
        argv = [command, *given[: 1 if command == "validate" else None], "--config", path]
        parser = build_parser()
        args = parser.parse_args(argv)
        assert audit_targets(parser, args, argv) == ["https://a.example/", "https://b.example/"]


@pytest.mark.parametrize("value", ['"unlimited"', "inf"])
def test_rate_unlimited_in_the_file(tmp_path: Path, value: str) -> None:
    path = conf(tmp_path, f'target = "https://a.example/"\nrate = {value}\n')
    args, _ = parse(["crawl", "--config", path, "--no-progress"])
    assert config_from(args).rate == float("inf")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("speed = 3\n", "unknown key 'speed'"),
        ('rate = "fast"\n', "key 'rate': expected a number, got a string"),
        ("concurrency = 0\n", "key 'concurrency': must be at least 1"),
        ("concurrency = 2.5\n", "key 'concurrency': not an integer"),
        ("concurrency = true\n", "key 'concurrency': expected a number, got a boolean"),
        ("timeout = [5]\n", "key 'timeout': expected a number, got a list"),
        ('fetch-workers = "many"\n', "key 'fetch-workers': expected a number, got a string"),
        ("fetch-workers = 9\n", "key 'fetch-workers': at most 8"),
        ('page-checks = "yes"\n', "key 'page-checks': expected true or false, got a string"),
        ('format = "pdf"\n', "key 'format': 'pdf' is not one of"),
        ("exclude = [1]\n", "key 'exclude': expected a string, got an integer"),
        ("targets = []\n", "key 'targets': expected a non-empty list of strings"),
        ("target = 3\n", "key 'target': expected a string"),
        ('header = ["nocolon"]\n', "key 'header': expected 'Name: value'"),
        ("rate = 1\nrate_ = 2\nrate =\n", "not valid TOML"),
        ("rate = 2\n", "no target"),
    ],
)
def test_bad_file_is_a_one_line_error_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str
) -> None:
    path = conf(tmp_path, text)
    code = main(["crawl", "--config", path])
    assert code == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert path in lines[0] and needle in lines[0], lines[0]


def test_key_given_twice_and_missing_file(tmp_path: Path) -> None:
    sub = _subparser(build_parser(), "crawl")
    with pytest.raises(ConfigFileError, match="given twice"):
        load_config_file(conf(tmp_path, "max-urls = 1\nmax_urls = 2\n"), sub)
    with pytest.raises(ConfigFileError, match="no such config file"):
        load_config_file(str(tmp_path / "nope.toml"), sub)


def test_validate_uses_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sm = tmp_path / "sitemap.xml"
    sm.write_text(BAD, encoding="utf-8")
    path = conf(
        tmp_path,
        f'target = "{sm}"\nbase-url = "https://www.example.com/sitemap.xml"\nformat = "jsonl"\n',
    )
    assert main(["validate", "--config", path]) == 1
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["code"] for r in records if r["type"] == "finding"] == ["lastmod-invalid"]
    assert main(["validate", "--config", path, "--fail-on", "never"]) == 0
    capsys.readouterr()


async def test_several_targets_one_combined_report(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bases = []
    for name in ("one", "two"):
        site = Site()
        base = await serve(site)
        site.routes = {
            "/sitemap.xml": (200, XML, urlset(f"{base}/{name}")),
            f"/{name}": (200, HTML, name),
        }
        bases.append(base)
    out = tmp_path / "report.jsonl"
    path = conf(
        tmp_path,
        f'targets = ["{bases[0]}/sitemap.xml", "{bases[1]}/sitemap.xml"]\n'
        f'format = "jsonl"\noutput = "{out}"\nrate = 1000\nno-progress = true\n',
    )
    import asyncio

    code = await asyncio.to_thread(main, ["crawl", "--config", path])
    assert code == 0, capsys.readouterr().err
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(r["url"] for r in records if r["type"] == "url") == sorted(
        [f"{bases[0]}/one", f"{bases[1]}/two"]
    )
    summaries = [r for r in records if r["type"] == "summary"]
    assert len(summaries) == 1 and summaries[0]["urls"] == 2 and summaries[0]["sitemaps"] == 2


@pytest.mark.parametrize(("value", "expected"), [('"auto"', None), ("0", 0), ("2", 2)])
def test_fetch_workers_in_the_file(tmp_path: Path, value: str, expected: int | None) -> None:
    path = conf(tmp_path, f'target = "https://a.example/"\nfetch-workers = {value}\n')
    args, _ = parse(["crawl", "--config", path, "--no-progress"])
    assert config_from(args).fetch_workers == expected


def test_fetch_workers_default_is_auto() -> None:
    args = build_parser().parse_args(["crawl", "https://a.example/", "--no-progress"])
    assert config_from(args).fetch_workers is None
    args = build_parser().parse_args(["crawl", "https://a.example/", "--fetch-workers", "3"])
    assert config_from(args).fetch_workers == 3


@pytest.mark.parametrize(("value", "needle"), [("9", "at most 8"), ("-1", "at least 0")])
def test_fetch_workers_out_of_range(
    capsys: pytest.CaptureFixture[str], value: str, needle: str
) -> None:
    code = main(["crawl", "https://a.example/", "--fetch-workers", value])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err
