"""A library caller's options checked as the command line checks its flags
(audit.core.config): each type and each range named in one line."""

from __future__ import annotations

import math
from typing import Any

import pytest

from audit.core.config import CrawlConfig, check_config, config_from_options


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
def test_a_value_of_the_wrong_type_or_range_is_named(
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
