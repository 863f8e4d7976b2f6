"""A run's options (audit/core/config.py): the defaults, the secrets kept out of reports,
and a library caller's keywords checked as the command line checks its flags (each error
one line naming the option)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from audit.core.config import (
    SECRET_MIN_CHARS,
    CrawlConfig,
    check_config,
    config_from_options,
)


def test_config_defaults_are_sane() -> None:
    config = CrawlConfig()
    assert config.per_host_cap == config.concurrency  # one host may use every worker unless capped
    assert config.stream_timeout is None
    assert CrawlConfig(max_per_host=4, concurrency=32).per_host_cap == 4
    assert CrawlConfig(max_per_host=0).per_host_cap == 1


def test_secrets_longest_first_and_never_echoed() -> None:
    config = CrawlConfig(
        auth=("stage", "pa55word"),
        cookies=(("sid", "cookie-value"), ("x", "1")),
        extra_headers=(("X-Key", "header-secret"), ("User-Agent", "not a secret at all")),
    )
    secrets = config.secrets()
    assert "pa55word" in secrets and "c3RhZ2U6cGE1NXdvcmQ=" in secrets  # the basic token
    assert "cookie-value" in secrets and "header-secret" in secrets
    assert "1" not in secrets and all(len(s) >= SECRET_MIN_CHARS for s in secrets)
    assert "not a secret at all" not in secrets
    assert list(secrets) == sorted(secrets, key=len, reverse=True)
    assert "pa55word" not in repr(config) and "cookie-value" not in repr(config)


def test_keywords_become_a_config() -> None:
    config = config_from_options({"rate": "unlimited", "agents": "ai", "include": ["/a", "/b"]})
    assert math.isinf(config.rate)
    assert config.agents == ("ai",) and config.include == ("/a", "/b")
    assert config_from_options({"rate": " INF "}).rate == math.inf
    assert config_from_options({}) == CrawlConfig()


def test_an_unknown_keyword_names_the_nearest_option() -> None:
    with pytest.raises(
        TypeError, match=r"'concurency' is not an audit option \(did you mean 'concurrency'\?\)"
    ):
        config_from_options({"concurency": 4})
    with pytest.raises(TypeError, match="'zzz' is not an audit option; "):
        config_from_options({"zzz": 1})


@pytest.mark.parametrize(
    ("options", "error", "needle"),
    [
        ({"rate": "fast"}, ValueError, "rate: 'fast' is neither"),
        ({"concurrency": 0}, ValueError, "concurrency: must be at least 1"),
        ({"concurrency": 2.5}, TypeError, "concurrency: expected an integer"),
        ({"concurrency": True}, TypeError, "concurrency: expected an integer"),
        ({"timeout": 0.0}, ValueError, "timeout: must be greater than 0"),
        ({"timeout": float("nan")}, ValueError, "timeout: not a number"),
        ({"retry_after_cap": -1.0}, ValueError, "retry_after_cap: must be 0 or more"),
        ({"links": "yes"}, TypeError, "links: expected True or False"),
        ({"user_agent": 5}, TypeError, "user_agent: expected a string"),
        ({"agents": ("ai", 3)}, TypeError, "agents: expected a tuple of strings"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_option(
    options: dict[str, object], error: type[Exception], needle: str
) -> None:
    with pytest.raises(error) as caught:
        config_from_options(options)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_check_config_returns_a_good_config_and_checks_every_field() -> None:
    config = CrawlConfig(rate=5.0, max_depth=None, cluster=None)
    assert check_config(config) is config
    bad = dataclasses.replace(config, max_pages=0)
    with pytest.raises(ValueError, match="max_pages: must be at least 1"):
        check_config(bad)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"timeout": 0}, ValueError, "timeout: must be greater than 0, got 0"),
        ({"slow_ms": -5.0}, ValueError, "slow_ms: must be greater than 0, got -5.0"),
        ({"lastmod_tolerance_s": -1}, ValueError, "lastmod_tolerance_s: must be 0 or more"),
        ({"retries": -1}, ValueError, "retries: must be at least 0, got -1"),
        ({"max_urls": 0}, ValueError, "max_urls: must be at least 1, got 0"),
        ({"timeout": math.nan}, ValueError, "timeout: not a number"),
        ({"retries": True}, TypeError, "retries: expected an integer, got True"),
        ({"timeout": None}, TypeError, "timeout: expected a number, got None"),
        ({"user_agent": 5}, TypeError, "user_agent: expected a string, got 5"),
        ({"include": ("a", 1)}, TypeError, "include: expected a tuple of strings"),
    ],
)
def test_a_value_of_the_wrong_type_or_range_is_named_at_its_start(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        config_from_options(options)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_the_edges_of_each_range_and_the_words_of_the_command_line() -> None:
    config = config_from_options(
        {"rate": "unlimited", "retries": 0, "lastmod_tolerance_s": 0, "max_urls": 1}
    )
    assert config.rate == math.inf and config.retries == 0 and config.max_urls == 1
    assert config_from_options({"agents": "ai"}).agents == ("ai",)
    assert config_from_options({"include": ["/a", "/b"]}).include == ("/a", "/b")
    assert config_from_options({"max_urls": None}).max_urls is None  # optional: no limit
    assert check_config(CrawlConfig()) == CrawlConfig()
