"""audit.front.options: the run options taken out of a caller's keywords and checked, one
option's value parsed, the credentials scoped, and the checks of options that go together
(each the one line the command line prints)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.core.config import CrawlConfig
from audit.core.errors import AuditError
from audit.front.options import (
    OptionError,
    RunOptions,
    check_codes,
    check_config_options,
    check_indexnow,
    check_notify,
    check_state,
    credentials,
    parse_value,
    scoped,
    split_options,
    with_cluster_fence,
)


def test_split_takes_the_run_options_and_leaves_the_config_options() -> None:
    options: dict[str, Any] = {"rate": 5, "state": Path("s.sqlite"), "notify": "https://h/x"}
    opts = split_options(options, "crawl")
    assert options == {"rate": 5}  # CrawlConfig's, for config_from_options
    assert opts.state == "s.sqlite" and opts.notify == ("https://h/x",)
    assert split_options({"ignore": ["url-slow"]}, "validate").ignore == ("url-slow",)
    with pytest.raises(TypeError, match="'budget' is an option of crawl, not of validate"):
        split_options({"budget": 3}, "validate")
    with pytest.raises(TypeError, match="'notify' is an option of crawl, not of migrate"):
        split_options({"notify": "https://h/x"}, "migrate")


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"fresh": "yes"}, TypeError, "fresh: expected True or False, got 'yes'"),
        ({"smtp": 25}, TypeError, "smtp: expected a string, got 25"),
        ({"budget": 2.5}, TypeError, "budget: expected an integer, got 2.5"),
        ({"budget": True}, TypeError, "budget: expected an integer, got True"),
        ({"notify": [1]}, TypeError, "notify: expected a list of strings"),
        ({"ignore": 3}, TypeError, "ignore: expected a list of strings, got 3"),
        ({"dropped_max": -1}, ValueError, "dropped_max: must be 0 or more, got -1"),
        ({"ignore": ["url-slow", "nope"]}, OptionError, "unknown finding code nope"),
    ],
)
def test_split_checks_each_value(
    options: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as caught:
        split_options(dict(options), "crawl")
    assert words in str(caught.value)


def test_an_option_error_is_a_value_error_and_an_audit_error() -> None:
    with pytest.raises(OptionError) as caught:
        check_codes(["no-such"])
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, AuditError)
    assert str(caught.value) == ("unknown finding code no-such (`sitemap-audit codes` lists them)")
    assert check_codes(["url-slow", "url-slow"]) == ["url-slow", "url-slow"]


def test_parse_value_gives_each_options_value_or_one_line() -> None:
    assert "GPTBot" in parse_value("agents", "ai")
    assert parse_value("rewrite", "https://a.example=https://b.example") == (
        "https://a.example",
        "https://b.example",
    )
    assert parse_value("cookie", "session=abc") == ("session", "abc")
    assert parse_value("insecure_host", "https://Self.Example:8443/") == "self.example"
    assert parse_value("cluster", " local:2 ") == "local:2"
    assert parse_value("ignore", "url-slow, url-redirect") == ["url-slow", "url-redirect"]
    for option, text in [("agents", "not a token!"), ("rewrite", "x"), ("cookie", "novalue"),
                         ("insecure_host", "a/b"), ("cluster", "nowhere"), ("ignore", "nope")]:  # fmt: skip
        with pytest.raises(ValueError) as caught:
            parse_value(option, text)
        assert "\n" not in str(caught.value), option


def test_credentials_come_from_the_options_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SITEMAP_AUDIT_AUTH", "env:secret")
    monkeypatch.setenv("SITEMAP_AUDIT_COOKIE", "b=2")
    got = credentials(None, [("a", "1")], [("X-A", "1")])
    assert got["auth"] == ("env", "secret") and got["cookies"] == (("a", "1"), ("b", "2"))
    assert got["extra_headers"] == (("X-A", "1"),)
    assert credentials("me:pw", (), ())["auth"] == ("me", "pw")
    monkeypatch.setenv("SITEMAP_AUDIT_AUTH", "no-colon")
    with pytest.raises(OptionError, match="environment variable SITEMAP_AUDIT_AUTH"):
        credentials(None, (), ())


def test_credentials_are_scoped_to_the_targets_origins() -> None:
    config = scoped(CrawlConfig(auth=("u", "p")), ["https://www.example.com/sitemap.xml"])
    assert config.credential_origins == ("https://www.example.com",)
    named = CrawlConfig(credential_origins=("https://other.example",))
    assert scoped(named, ["https://www.example.com/"]) is named  # the caller's, as given
    assert scoped(CrawlConfig(), ["local.xml"]).credential_origins == ()  # nothing to send
    with pytest.raises(OptionError, match="with a local file, give --base-url or --rewrite"):
        scoped(CrawlConfig(cookies=(("a", "1"),)), ["local.xml"])
    based = scoped(CrawlConfig(auth=("u", "p"), base_url="https://b.example/"), ["local.xml"])
    assert based.credential_origins == ("https://b.example",)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (CrawlConfig(agents_fetch=3), "--agents-fetch needs --agents LIST"),
        (CrawlConfig(render_tabs=17), "--render-tabs 17: at most 16"),
        (CrawlConfig(exclude=("[",)), "--exclude '[': not a valid regular expression"),
        (CrawlConfig(include_sitemap=("(",)), "--include-sitemap '(': not a valid"),
    ],
)
def test_config_options_that_do_not_go_together(config: CrawlConfig, message: str) -> None:
    with pytest.raises(OptionError) as caught:
        check_config_options(config)
    assert str(caught.value).startswith(message)
    check_config_options(CrawlConfig(agents=("GPTBot",), agents_fetch=3, render_tabs=16))


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        (RunOptions(dry_run=True), "--dry-run needs --indexnow KEY"),
        (RunOptions(indexnow_endpoint="https://x/"), "--indexnow-endpoint needs --indexnow KEY"),
        (RunOptions(indexnow="abc"), "--indexnow 'abc': a key is 8 to 128 characters"),
        (RunOptions(indexnow="abcdefgh12"), "--indexnow needs --state PATH"),
        (
            RunOptions(indexnow="abcdefgh12", state="s", indexnow_endpoint="ftp://x"),
            "--indexnow-endpoint 'ftp://x': not an absolute http(s) URL",
        ),
    ],
)
def test_indexnow_checks(opts: RunOptions, message: str) -> None:
    with pytest.raises(OptionError) as caught:
        check_indexnow(opts)
    assert str(caught.value).startswith(message)


def test_notify_and_state_checks() -> None:
    check_indexnow(RunOptions(indexnow="abcdefgh12", state="s"))  # fine
    check_notify(RunOptions(notify=("https://hook.example/x", "mailto:a@b.example"),
                            smtp="mail.example:587"))  # fmt: skip
    for opts, message in [
        (RunOptions(smtp="m:25"), "--smtp, --notify-always and --notify-on need --notify DEST"),
        (RunOptions(notify=("mailto:a@b.example",)), "a mailto: notification needs --smtp"),
        (RunOptions(notify=("https://h/",), smtp="nohost"), "--smtp 'nohost': give HOST:PORT"),
    ]:
        with pytest.raises(OptionError, match=message):
            check_notify(opts)
    for opts, config, message in [
        (RunOptions(changed_only=True), CrawlConfig(), "--changed-only needs --state PATH"),
        (RunOptions(state="s", budget=2), CrawlConfig(max_urls=5), "--budget cannot be used "
         "with --max-urls"),
        (RunOptions(state="s", changed_only=True), CrawlConfig(links=True), "--changed-only "
         "cannot be used with --links"),
    ]:  # fmt: skip
        with pytest.raises(OptionError, match=message):
            check_state(config, opts)
    check_state(CrawlConfig(links=True), RunOptions(state="s", budget=None))


def test_a_cluster_with_a_state_gets_its_fence(tmp_path: Path) -> None:
    state = tmp_path / "s.sqlite"
    config = CrawlConfig(cluster="local:2")
    fenced = with_cluster_fence(config, RunOptions(state=str(state)))
    assert fenced.cluster_fence == str(state.resolve())
    assert with_cluster_fence(config, RunOptions()) is config
    assert with_cluster_fence(CrawlConfig(), RunOptions(state="s")).cluster_fence is None
    assert RunOptions(indexnow="abcdefgh12").fingerprints and RunOptions(content=True).fingerprints
    assert not RunOptions().fingerprints
