"""What a run takes beyond its CrawlConfig, and every check of a run's options.

`RunOptions` holds the options that wire something around the pipeline rather than
configure it: the --state store and what reads it (--fresh, --changed-only, --budget,
--dropped-max), content fingerprints (--content), notifications (--notify and friends),
IndexNow (--indexnow and friends) and --ignore. `split_options` takes them out of a library
caller's keywords (the rest are CrawlConfig's); the `check_*` functions check a run before
anything is opened or requested (the front door calls them in the command line's order), with the one-line messages the command line prints: the
command line and a library caller meet the same checks, here and only here.

A problem with one option, or with options that do not go together, is an `OptionError`:
a ValueError for a library caller, an AuditError (exit 2) for the command line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

from audit.core.codes import CODES
from audit.core.config import (
    DEFAULT_DROPPED_MAX,
    MAX_RENDER_TABS,
    NOTIFY_LEVELS,
    CrawlConfig,
    as_tuples,
    check_fields,
)
from audit.core.errors import AuditError

__all__ = [
    "NOTIFY_LEVELS",
    "NO_RUN_OPTIONS",
    "OptionError",
    "RunOptions",
    "check_codes",
    "check_config_options",
    "check_indexnow",
    "check_notify",
    "check_state",
    "credentials",
    "parse_value",
    "scoped",
    "split_options",
    "with_cluster_fence",
]


class OptionError(AuditError, ValueError):
    """An option's value, or options that do not go together: one line naming the flag
    (the command line prints it and exits 2; a library caller gets a ValueError)."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The options of a run that are not CrawlConfig's: what they wire is the front door's."""

    state: str | None = None  # --state PATH: the SQLite state file
    fresh: bool = False  # --fresh: the state discarded first
    changed_only: bool = False  # --changed-only
    budget: int | None = None  # --budget N: a rolling audit
    dropped_max: int = DEFAULT_DROPPED_MAX  # --dropped-max N: url-dropped-* asked per run
    content: bool = False  # --content: fingerprints without the other page checks
    notify: tuple[str, ...] = ()  # --notify DEST (repeatable)
    notify_always: bool = False
    notify_on: str | None = None  # error, warning or info
    smtp: str | None = None  # HOST:PORT for mailto: notifications
    indexnow: str | None = None  # --indexnow KEY
    indexnow_endpoint: str | None = None
    dry_run: bool = False  # with --indexnow: list, send nothing
    ignore: tuple[str, ...] = ()  # --ignore CODES: neither reported nor counted

    @property
    def fingerprints(self) -> bool:
        """Content fingerprints are taken: --content, or --indexnow (what "changed" means)."""
        return self.content or self.indexnow is not None


NO_RUN_OPTIONS: Final = RunOptions()  # a run given none (frozen: one will do for every run)


RUN_OPTIONS = frozenset(f.name for f in fields(RunOptions))
# the run options each mode takes (validate and inspect read no state, send nothing)
MODE_OPTIONS = {
    "crawl": RUN_OPTIONS,
    "validate": frozenset({"ignore"}),
    "migrate": frozenset({"state", "fresh", "ignore"}),
}


def split_options(options: dict[str, Any], mode: str) -> RunOptions:
    """Take the run options out of a caller's keywords (what is left is CrawlConfig's);
    TypeError for a wrong type or an option of another command, ValueError out of range."""
    allowed = MODE_OPTIONS.get(mode, frozenset())
    given: dict[str, Any] = {}
    for key in list(options):  # (the rest are CrawlConfig's)
        if key not in RUN_OPTIONS:
            continue
        if key not in allowed:
            raise TypeError(f"{key!r} is an option of crawl, not of {mode}")
        given[key] = options.pop(key)
    as_tuples(given, ("notify", "ignore"))
    if isinstance(given.get("state"), Path):
        given["state"] = str(given["state"])
    opts = RunOptions(**given)
    check_fields(opts, "a list of strings")  # (notify_on: one of NOTIFY_LEVELS, or None)
    check_codes(opts.ignore)  # (none: nothing unknown)
    return opts


def check_codes(codes: Iterable[str]) -> list[str]:
    """--ignore's codes as given; OptionError names every code the registry does not know."""
    codes = list(codes)
    unknown = [c for c in codes if c not in CODES]
    if unknown:
        raise OptionError(
            f"unknown finding code {', '.join(unknown)} (`sitemap-audit codes` lists them)"
        )
    return codes


# --- one option's value, as the command line's flags and a library caller give it ---------


def _agents(text: str) -> Any:
    from audit.checks.agents import parse_agents

    return parse_agents(text)


def _rewrite(text: str) -> Any:
    from audit.http.rewrite import parse_rewrite

    return parse_rewrite(text)


def _cookie(text: str) -> Any:
    from audit.http.access import parse_cookie

    return parse_cookie(text)


def _host(text: str) -> Any:
    from audit.http.access import parse_host

    return parse_host(text)


def _cluster(text: str) -> Any:
    from audit.cluster.spec import parse_spec  # imports no Dask

    parse_spec(text)
    return text.strip()


_PARSERS: dict[str, Callable[[str], Any]] = {
    "agents": _agents,
    "rewrite": _rewrite,
    "cookie": _cookie,
    "insecure_host": _host,
    "cluster": _cluster,
    "ignore": lambda text: check_codes(c.strip() for c in text.split(",") if c.strip()),
}


def parse_value(option: str, text: str) -> Any:
    """The value of one option given as text (`agents`, `rewrite`, `cookie`, `insecure_host`,
    `cluster`, `ignore`); ValueError with a one-line reason that never repeats a secret."""
    return _PARSERS[option](text)


def credentials(
    auth: str | None, cookies: Sequence[tuple[str, str]], headers: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """The credential options of the command line with those of the environment
    (SITEMAP_AUDIT_AUTH, SITEMAP_AUDIT_COOKIE, SITEMAP_AUDIT_HEADER): CrawlConfig keywords."""
    from audit.http.access import auth_from, cookies_from, headers_from

    try:
        return {
            "auth": auth_from(auth),
            "cookies": cookies_from(cookies),
            "extra_headers": headers_from(headers),
        }
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def scoped(config: CrawlConfig, targets: Sequence[str | None]) -> CrawlConfig:
    """`config` with its credentials scoped to the origins of `targets` (and --base-url's,
    and the --rewrite targets') unless the caller named them; OptionError when credentials
    are given and no origin can be named (a local file without --base-url)."""
    if config.credential_origins:
        return config
    from audit.http.access import credential_scope
    from audit.http.credentials import credential_headers

    scope = credential_scope([*targets, config.base_url], config.rewrites)
    if credential_headers(config) and not scope:  # credentials given, no origin to send them
        # a local file lists URLs of any host: say which origin the credentials are for
        raise OptionError(
            "--auth, --cookie and --header are sent only to the target's origin: with a local "
            "file, give --base-url or --rewrite to name it"
        )
    return replace(config, credential_origins=scope)


def with_cluster_fence(config: CrawlConfig, opts: RunOptions) -> CrawlConfig:
    """--cluster with --state: the fence a resumed run takes over (its tasks stop)."""
    if not config.cluster or config.cluster_fence or not opts.state:
        return config
    return replace(config, cluster_fence=str(Path(opts.state).resolve()))


# --- the checks of a run: each before anything is opened -------------------------------


def check_config_options(config: CrawlConfig) -> None:
    """The checks of CrawlConfig's options that go together, and of the regexes."""
    if config.agents_fetch is not None and not config.agents:
        raise OptionError("--agents-fetch needs --agents LIST: it fetches as the named agents")
    if config.render_tabs > MAX_RENDER_TABS:
        raise OptionError(f"--render-tabs {config.render_tabs}: at most {MAX_RENDER_TABS}")
    for opt, patterns in (
        ("--include", config.include),
        ("--exclude", config.exclude),
        ("--include-sitemap", config.include_sitemap),
        ("--exclude-sitemap", config.exclude_sitemap),
    ):
        for pat in patterns:
            try:
                re.compile(pat)
            except re.error as exc:
                raise OptionError(f"{opt} {pat!r}: not a valid regular expression: {exc}") from exc


def _refuse_given(given: Iterable[tuple[str, object]], message: str) -> None:
    """OptionError `message` (a format of one field, or none: the same line whichever flag)
    for the first flag given, in order."""
    for flag, value in given:
        if value:
            raise OptionError(message.format(flag))


def check_indexnow(opts: RunOptions) -> None:
    if opts.indexnow is None:
        _refuse_given(
            (
                ("--indexnow-endpoint", opts.indexnow_endpoint is not None),
                ("--dry-run", opts.dry_run),
            ),
            "{} needs --indexnow KEY",
        )
        return
    from audit.rules.urls import is_absolute_http
    from audit.state.indexnow import check_key

    problem = check_key(opts.indexnow)
    if problem is not None:
        raise OptionError(problem)
    if not opts.state:
        raise OptionError("--indexnow needs --state PATH (the ledger of what was submitted)")
    endpoint = opts.indexnow_endpoint
    if endpoint is not None and not is_absolute_http(endpoint):
        raise OptionError(f"--indexnow-endpoint {endpoint!r}: not an absolute http(s) URL")


def check_notify(opts: RunOptions) -> None:
    if not opts.notify:
        _refuse_given(
            (
                ("--smtp", opts.smtp),
                ("--notify-always", opts.notify_always),
                ("--notify-on", opts.notify_on),
            ),
            "--smtp, --notify-always and --notify-on need --notify DEST",
        )
        return
    from audit.report.notify import NotifyError, parse_smtp, validate_dest

    try:
        for dest in opts.notify:
            validate_dest(dest, opts.smtp)
        if opts.smtp:
            parse_smtp(opts.smtp)
    except (NotifyError, ValueError) as exc:
        raise OptionError(str(exc)) from None


def check_state(config: CrawlConfig, opts: RunOptions) -> None:
    if not opts.state:
        _refuse_given(
            (
                ("--fresh", opts.fresh),
                ("--changed-only", opts.changed_only),
                ("--budget", opts.budget),
            ),
            "{} needs --state PATH",
        )
        return
    if opts.budget:
        _refuse_given(
            (
                ("--changed-only", opts.changed_only),
                ("--links", config.links),
                ("--max-urls", config.max_urls),
            ),
            "--budget cannot be used with {}",
        )
    if opts.changed_only and config.links:
        # the link crawl needs every page's links: nothing may be carried unread
        raise OptionError(
            "--changed-only cannot be used with --links: the link crawl reads every page"
        )
