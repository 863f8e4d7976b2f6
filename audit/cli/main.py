"""The command line: argparse, --config, the report writers and exit codes.

`main(argv) -> int` parses, builds one frozen CrawlConfig, runs each audit
through the front door (`audit.api.Audit`, as a library user would), writes
the report and maps the outcome to the exit codes of DESIGN.md. It also owns
what only a command line has: signals (Ctrl-C, SIGTERM), the output file, the
--state file's opening. Errors the user can fix are one line
on stderr; stdout carries only the report.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import os
import signal
import stat
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from enum import IntEnum
from pathlib import Path
from typing import Any, TextIO

from audit.core.config import (
    AUTH_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_DROPPED_MAX,
    DEFAULT_MAX_PAGES,
    DEFAULT_PAGE_CAP,
    DEFAULT_RATE,
    DEFAULT_RETRIES,
    DEFAULT_SLOW_MS,
    DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT,
    FETCH_WORKERS_MAX,
    RETRY_AFTER_CAP,
    CrawlConfig,
)
from audit.core.errors import AuditError, TargetError
from audit.core.printable import printable, url_printable
from audit.core.version import __version__

PROG = "sitemap-audit"


class Exit(IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    INTERRUPTED = 130


FORMATS = ("text", "json", "jsonl", "csv", "junit", "sarif", "markdown", "html")
LEVELS = ("error", "warning", "info", "never")


class _HelpFormatter(argparse.HelpFormatter):
    """--help shows every option's default, unless its help already says it or there is
    none to show (off, unset, empty)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "default" in text
            or default in (None, False, [], ())
            or default is argparse.SUPPRESS
        ):
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # one line, exit 2 (argparse's own convention)
        self.exit(Exit.USAGE, f"{self.prog}: error: {message}\n")


# --output's extension names the format when --format is not given
_EXTENSIONS = {
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".json": "json",
    ".jsonl": "jsonl",
    ".csv": "csv",
    ".xml": "junit",
    ".sarif": "sarif",
}


def resolve_format(args: argparse.Namespace, choices: tuple[str, ...] = FORMATS) -> str:
    """--format, else the one --output's extension names, else text (no extension); an
    extension that names no format of this command is a one-line error, never text silently."""
    if getattr(args, "format", None):
        return str(args.format)
    output = getattr(args, "output", None)
    if not output:
        return "text"
    suffix = Path(output).suffix.lower()
    if not suffix:  # `--output report`: no extension claims another format
        return "text"
    fmt = _EXTENSIONS.get(suffix)
    if fmt is None or fmt not in choices:
        what = f"extension {suffix!r}"
        raise TargetError(
            f"--output {output}: cannot tell the report format from {what}; "
            f"give --format ({', '.join(choices)})"
        )
    return fmt


def _number(kind: type[float] | type[int], minimum: float, what: str) -> Any:
    """An argparse type: a number of `kind` at least `minimum`, with a one-line error."""

    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if value < minimum or (kind is float and minimum == 0 and value == 0):
            bound = "greater than 0" if kind is float else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"must be {bound}: {text!r}")
        return value

    return parse


_positive_float = _number(float, 0, "a number")


def _rate(text: str) -> float:
    """--rate: requests per second, or `unlimited` (also `inf`): no limiter at all."""
    if text.strip().lower() == "unlimited":
        return math.inf
    return float(_positive_float(text))


_positive_int = _number(int, 1, "an integer")
_nonneg_int = _number(int, 0, "an integer")


def _add_links(crawl: argparse.ArgumentParser) -> None:
    """--links and its bounds (RULES.md, Site coverage)."""
    crawl.add_argument(
        "--links",
        action="store_true",
        help="also follow internal links from the site root and every listed page: "
        "orphans, unlisted pages, broken links",
    )
    crawl.add_argument(
        "--max-pages",
        type=_positive_int,
        default=DEFAULT_MAX_PAGES,
        metavar="N",
        help="with --links, pages fetched at most beyond the listed ones",
    )
    crawl.add_argument(
        "--max-depth",
        type=_nonneg_int,
        metavar="D",
        help="with --links, link hops followed from the root or a listed page",
    )


AGENTS_FETCH_DEFAULT = 20  # `--agents-fetch` alone (contracts/agents.md)


def _add_agents_v2(crawl: argparse.ArgumentParser) -> None:
    """--llms and --agents-fetch (contracts/agents.md): what each AI agent is served."""
    crawl.add_argument(
        "--llms",
        action="store_true",
        help="also audit /llms.txt and /llms-full.txt of each audited origin and check "
        "every link of llms.txt like a listed URL",
    )
    crawl.add_argument(
        "--agents-fetch",
        type=_positive_int,
        nargs="?",
        const=AGENTS_FETCH_DEFAULT,
        default=None,
        metavar="N",
        help="with --agents, GET N sampled listed URLs per host again as each named agent "
        f"with its real User-Agent and compare the answers (default N: {AGENTS_FETCH_DEFAULT})",
    )


# --- --render (contracts/render.md): the rendered page against the raw HTML ---------


def _render_count(text: str) -> int:
    """--render N: a positive integer, or `all` (RENDER_ALL)."""
    from audit.core.config import RENDER_ALL

    if text.strip().lower() == "all":
        return RENDER_ALL
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a positive integer nor all: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer nor all: {text!r}")
    return value


class _RenderAction(argparse.Action):
    """`--render [N|all]`; a value that is a target (`--render https://site/`) is
    `--render` alone followed by that target."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        from audit.core.config import DEFAULT_RENDER

        if values is None:
            setattr(namespace, self.dest, DEFAULT_RENDER)
            return
        text = str(values)
        if "://" in text or (not text.strip().isdigit() and Path(text).exists()):
            setattr(namespace, self.dest, DEFAULT_RENDER)
            namespace.render_targets = [*getattr(namespace, "render_targets", []), text]
            return
        try:
            setattr(namespace, self.dest, _render_count(text))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --render: {exc}")


def _add_render(crawl: argparse.ArgumentParser) -> None:
    from audit.core.config import DEFAULT_RENDER_TABS, DEFAULT_RENDER_TIMEOUT, MAX_RENDER_TABS

    crawl.add_argument(
        "--render",
        nargs="?",
        action=_RenderAction,
        metavar="N|all",
        help="also render at most N listed HTML pages per host (default 50; all: every one) "
        "in headless Chromium and compare them with their raw HTML (turns on --page-checks)",
    )
    crawl.add_argument(
        "--render-tabs",
        type=_number(int, 1, "an integer"),
        default=DEFAULT_RENDER_TABS,
        metavar="K",
        help=f"with --render, pages rendered at once, 1 to {MAX_RENDER_TABS} "
        f"(default {DEFAULT_RENDER_TABS})",
    )
    crawl.add_argument(
        "--render-timeout",
        type=_positive_float,
        default=DEFAULT_RENDER_TIMEOUT,
        metavar="S",
        help="with --render, seconds from a page's navigation until its load event "
        f"(default {DEFAULT_RENDER_TIMEOUT:g}); later: render-failed",
    )
    crawl.add_argument(
        "--browser",
        metavar="PATH",
        help="with --render, the Chromium or Chrome executable (default: $SITEMAP_AUDIT_BROWSER, "
        "else chromium, chromium-browser, google-chrome or google-chrome-stable on PATH)",
    )


def _render_options(args: argparse.Namespace) -> dict[str, Any]:
    """--render's config (--render turns on --page-checks)."""
    from audit.core.config import DEFAULT_RENDER_TABS, DEFAULT_RENDER_TIMEOUT, MAX_RENDER_TABS

    render = getattr(args, "render", None)
    if isinstance(render, str):  # `render = "all"` (or "20") in --config
        try:
            render = _render_count(render)
        except argparse.ArgumentTypeError as exc:
            raise TargetError(f"--render: {exc}") from None
    tabs = getattr(args, "render_tabs", DEFAULT_RENDER_TABS)
    if tabs > MAX_RENDER_TABS:
        raise TargetError(f"--render-tabs {tabs}: at most {MAX_RENDER_TABS}")
    out: dict[str, Any] = {
        "render": render,
        "render_tabs": tabs,
        "render_timeout": getattr(args, "render_timeout", DEFAULT_RENDER_TIMEOUT),
        "browser": getattr(args, "browser", None),
    }
    if render is not None:
        out["page_checks"] = True
    return out


def _fetch_workers(text: str) -> int | None:
    """--fetch-workers: `auto` (None), or 0 to FETCH_WORKERS_MAX processes."""
    if text.strip().lower() == "auto":
        return None
    count = _nonneg_int(text)
    if count > FETCH_WORKERS_MAX:
        raise argparse.ArgumentTypeError(f"at most {FETCH_WORKERS_MAX}, got {count}")
    return int(count)


def _robots_agent(text: str) -> str:
    from audit.core.agent import is_product_token

    if not is_product_token(text.strip()):
        raise argparse.ArgumentTypeError(f"not a product token (letters, '_', '-'): {text!r}")
    return text.strip()


def _agents(text: str) -> tuple[str, ...]:
    from audit.checks.agents import parse_agents

    try:
        return parse_agents(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {text!r}")
    return name.strip(), value.strip()


def _rewrite(text: str) -> tuple[str, str]:
    from audit.http.rewrite import parse_rewrite

    try:
        return parse_rewrite(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _cookie(text: str) -> tuple[str, str]:
    from audit.http.access import parse_cookie

    try:
        return parse_cookie(text)
    except ValueError as exc:  # the message never repeats the value
        raise argparse.ArgumentTypeError(str(exc)) from None


def _insecure_host(text: str) -> str:
    from audit.http.access import parse_host

    try:
        return parse_host(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_FORMAT_HELP = "report format (default: from --output's extension, else text)"
_INSPECT_FORMATS = ("text", "json")
_DIFF_FORMATS = ("text", "markdown", "jsonl")
_FORMAT_CHOICES = {"inspect": _INSPECT_FORMATS, "diff": _DIFF_FORMATS}


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default=None, help=_FORMAT_HELP)
    p.add_argument("--output", "-o", metavar="PATH", help="write the report here (default stdout)")
    p.add_argument(
        "--fail-on", choices=LEVELS, default="error", help="exit 1 at or above this severity"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


# options of _add_http that do nothing for a command, so its --help does not list them:
# discover reads robots.txt, the common paths and the home page (no URL checks, no sitemap
# read, no local file, no rewriting); inspect reads sitemaps but checks no listed URL
_NOT_FOR_DISCOVER = frozenset(
    {
        "--fetch-workers",
        "--robots-agent",
        "--agents",
        "--rewrite",
        "--include-sitemap",
        "--exclude-sitemap",
        "--base-url",
        "--online",
    }
)
_NOT_FOR_INSPECT = frozenset({"--fetch-workers", "--agents"})


def _add_http(p: argparse.ArgumentParser, skip: frozenset[str] = frozenset()) -> None:
    """The options of every command that sends requests, but those in `skip`: what does
    nothing for that command is not listed in its --help (config_from reads every one with
    a default)."""
    add = _adder(p, skip)
    add(
        "--rate",
        type=_rate,
        default=DEFAULT_RATE,
        help="requests per second per host (`unlimited`: no limit)",
    )
    add("--concurrency", type=_positive_int, default=DEFAULT_CONCURRENCY, help="requests in flight")
    add(
        "--max-per-host",
        type=_positive_int,
        metavar="N",
        help="requests in flight to one host (default: --concurrency)",
    )
    add(
        "--politeness-key",
        choices=("host", "ip", "domain"),
        default="host",
        help="what shares one --rate and --max-per-host: each host, every host on one "
        "address (ip), or every host of one registrable domain (domain)",
    )
    add("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT, help="seconds per request")
    add(
        "--fetch-workers",
        type=_fetch_workers,
        default=None,
        metavar="N",
        help="processes that send the plain HEAD/GET checks of a large crawl, so it uses "
        "more than one core (`auto`: one per core, up to 4, none on one core, once it runs "
        "1,000 checks a second; 0: none)",
    )
    add("--retries", type=_nonneg_int, default=DEFAULT_RETRIES, help="retries with backoff")
    add(
        "--max-retry-after",
        type=_positive_float,
        default=RETRY_AFTER_CAP,
        metavar="S",
        help="the longest Retry-After honoured; a longer one reports url-rate-limited at once",
    )
    add(
        "--user-agent",
        default=DEFAULT_USER_AGENT,
        help="User-Agent; its product token picks the robots.txt group",
    )
    add(
        "--robots-agent",
        type=_robots_agent,
        default=None,
        metavar="TOKEN",
        help="the product token robots.txt groups and scoped noindex are matched with "
        "(default: the crawler named in --user-agent)",
    )
    add(
        "--agents",
        type=_agents,
        default=(),
        metavar="LIST",
        help="also judge robots.txt, scoped noindex and robots.txt's usage lines for these "
        "agents: product tokens, or the presets search (Googlebot, Bingbot), ai-train "
        "(GPTBot, ClaudeBot, Google-Extended, CCBot, Applebot-Extended), ai-search "
        "(OAI-SearchBot, Claude-SearchBot, PerplexityBot), ai-user (ChatGPT-User, "
        "Claude-User, Perplexity-User), ai (the three AI tiers), all",
    )
    add(
        "--header",
        type=_header,
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra request header (repeatable; sent only to the target's origin, like --auth; "
        "or set SITEMAP_AUDIT_HEADER, one 'Name: value' a line, out of the process list)",
    )
    add(
        "--rewrite",
        type=_rewrite,
        action="append",
        default=[],
        metavar="FROM=TO",
        help="request URLs of origin FROM at origin TO, e.g. "
        "https://www.example.com=https://staging.example.com (repeatable)",
    )
    add(
        "--auth",
        metavar="USER:PASSWORD",
        help=f"HTTP basic auth for the target's origin (or set {AUTH_ENV}, "
        "which keeps it out of shell history)",
    )
    add(
        "--cookie",
        type=_cookie,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="cookie sent to the target's origin (repeatable; or set SITEMAP_AUDIT_COOKIE "
        "to 'a=1; b=2', out of the process list)",
    )
    add(
        "--allow-private",
        action="store_true",
        help="follow redirects from a public host to private, loopback and link-local "
        "addresses (by default reported and not followed)",
    )
    add(
        "--insecure-host",
        type=_insecure_host,
        action="append",
        default=[],
        metavar="HOST",
        help="accept a self-signed TLS certificate from this host only (repeatable)",
    )
    add(
        "--include-sitemap",
        action="append",
        default=[],
        metavar="REGEX",
        help="only sitemaps matching",
    )
    add(
        "--exclude-sitemap",
        action="append",
        default=[],
        metavar="REGEX",
        help="skip sitemaps matching (never fetched)",
    )
    add(
        "--base-url",
        metavar="URL",
        help="the public URL of a local sitemap file (for host and path rules; an index's "
        "children are read from beside it on disk)",
    )
    add(
        "--online",
        action="store_true",
        help="a local sitemap file may use the network: fetch index children that are not "
        "on disk (off: validating a local file sends no request at all)",
    )


def _adder(p: argparse.ArgumentParser, skip: frozenset[str]) -> Callable[..., None]:
    """`p.add_argument`, except for the options named in `skip` (by their first flag)."""

    def add(*flags: str, **kwargs: Any) -> None:
        if flags[0] not in skip:
            p.add_argument(*flags, **kwargs)

    return add


def _add_targets_file(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--targets-file",
        metavar="FILE",
        help="more targets, one a line (# comments), audited into the same report",
    )


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file of options (flag names) and target/targets; flags override it",
    )


def _add_state(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--state",
        metavar="PATH",
        help="SQLite state file: resume after a crash; after a completed run, check incrementally",
    )
    p.add_argument(
        "--fresh", action="store_true", help="with --state: discard the state and start over"
    )
    p.add_argument(
        "--changed-only",
        action="store_true",
        help=CHANGED_ONLY_HELP,
    )
    p.add_argument(
        "--dropped-max",
        type=_nonneg_int,
        default=DEFAULT_DROPPED_MAX,
        metavar="N",
        help="with --state: URLs that left the sitemaps since an earlier run asked again per "
        f"run at most (url-dropped-*; the latest dropped first; 0: none) (default {DEFAULT_DROPPED_MAX:,})",
    )
    p.add_argument(
        "--budget",
        type=_positive_int,
        metavar="N",
        help="with --state: a rolling audit: check at most N listed URLs this run (due, "
        "never checked, moved, failing first) and carry the others from the state",
    )


# README's options table says the same, word for word (tests/cli/test_help_and_docs.py)
CHANGED_ONLY_HELP = (
    "with --state: request only URLs that are new, whose <lastmod> moved, whose last "
    "answer was not a plain 2xx or carried an error or warning, or whose last answer was "
    "itself carried without a request; the rest are carried forward"
)


def _add_migrate_config_state(p: argparse.ArgumentParser) -> None:
    """migrate's --config (options only: OLD and NEW stay on the command line) and
    --state (resume a killed run; no --changed-only: the old sitemap's <lastmod> says
    nothing of the new site)."""
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file of options (flag names, no OLD/NEW); flags override it",
    )
    p.add_argument(
        "--state",
        metavar="PATH",
        help="SQLite state file: a killed run resumes; old URLs already judged are not "
        "requested again",
    )
    p.add_argument(
        "--fresh", action="store_true", help="with --state: discard the state and start over"
    )


def _add_intent(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--intent",
        metavar="FILE",
        help="CSV of url,action[,target] rows: what URLs must do (keep, redirect, gone); a URL "
        'that does otherwise is intent-violated (also intent = "FILE" in --config)',
    )


def _check_intent(config: CrawlConfig) -> Any:
    """--intent: the file read and checked before the state, the output or a request;
    its plan, or None without --intent. A malformed file: one line FILE:LINE, exit 2."""
    if not config.intent:
        return None
    from audit.rules.intent import IntentError, load_intent

    try:
        return load_intent(config.intent)
    except IntentError as exc:
        raise TargetError(str(exc)) from None


def _add_content_notify(p: argparse.ArgumentParser) -> None:
    """lastmod over time and notifications (audit.features.lastmod, audit.report.notify)."""
    p.add_argument(
        "--content",
        action="store_true",
        help="GET pages for content fingerprints (lastmod-frozen, lastmod-churn with --state; "
        "lastmod-page-date) without the other page checks",
    )
    p.add_argument(
        "--notify",
        action="append",
        default=[],
        metavar="DEST",
        help="after the run, send the summary and alerts to a webhook URL or mailto:ADDRESS "
        "(repeatable); only when the run got worse unless --notify-always",
    )
    p.add_argument(
        "--notify-always", action="store_true", help="with --notify: send after every run"
    )
    p.add_argument(
        "--notify-on",
        choices=("error", "warning", "info"),
        metavar="LEVEL",
        help="with --notify: new findings at or above LEVEL (error, warning, info) make a "
        "night worse, whatever --fail-on says (default: error)",
    )
    p.add_argument(
        "--smtp",
        metavar="HOST:PORT",
        help="mail server for mailto: notifications (login from SITEMAP_AUDIT_SMTP_USER and "
        "SITEMAP_AUDIT_SMTP_PASSWORD)",
    )


def _cluster_spec(text: str) -> str:
    from audit.cluster.spec import parse_spec  # imports no Dask

    try:
        parse_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


def _add_cluster(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cluster",
        type=_cluster_spec,
        metavar="SPEC",
        help="run the URL checks on a Dask cluster: local:N (N worker processes here) or "
        "tcp://HOST:PORT (a running scheduler); politeness stays per host across all "
        "workers (needs the cluster extra)",
    )
    p.add_argument(
        "--cluster-batch",
        type=_positive_int,
        metavar="N",
        help="with --cluster: URLs of one host per batch (default: 2 s of --rate, at most 500)",
    )


def _cluster_options(args: argparse.Namespace) -> dict[str, Any]:
    """--cluster's config; with --state, the fence a resumed run takes over."""
    spec = getattr(args, "cluster", None)
    if not spec:
        return {}
    state = getattr(args, "state", None)
    fence = str(Path(state).resolve()) if state else None
    batch = getattr(args, "cluster_batch", None)
    return {"cluster": spec, "cluster_batch": batch, "cluster_fence": fence}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Asynchronous deep-crawl auditor for XML sitemaps.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    crawl = sub.add_parser("crawl", help="full audit: discover, expand, validate, check every URL")
    crawl.add_argument(
        "target",
        nargs="*",
        metavar="TARGET",
        help="site roots, sitemap URLs, robots.txt URLs or local sitemap files, audited "
        "into one report (or --targets-file, or in --config)",
    )
    _add_targets_file(crawl)
    _add_config(crawl)
    _add_state(crawl)
    _add_output(crawl)
    _add_http(crawl)
    crawl.add_argument(
        "--page-checks",
        action="store_true",
        help="GET pages and check meta robots, canonical, soft 404",
    )
    crawl.add_argument(
        "--page-cap",
        type=_positive_int,
        default=DEFAULT_PAGE_CAP,
        metavar="BYTES",
        help=f"with --page-checks, bytes of a page read at most (default {DEFAULT_PAGE_CAP})",
    )
    _add_content_notify(crawl)
    _add_links(crawl)
    _add_agents_v2(crawl)
    _add_render(crawl)
    crawl.add_argument("--max-urls", type=_positive_int, metavar="N", help="stop after N URLs")
    crawl.add_argument(
        "--include", action="append", default=[], metavar="REGEX", help="only page URLs matching"
    )
    crawl.add_argument(
        "--exclude", action="append", default=[], metavar="REGEX", help="skip page URLs matching"
    )
    crawl.add_argument(
        "--slow",
        type=_positive_float,
        default=DEFAULT_SLOW_MS / 1000,
        metavar="S",
        help="url-slow threshold in seconds (default 5)",
    )
    crawl.add_argument(
        "--lastmod-tolerance",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds of slack when comparing lastmod and Last-Modified",
    )
    _add_cluster(crawl)
    _add_intent(crawl)
    from audit.cli.indexnow import add_indexnow_options  # --indexnow (contracts/fix.md)

    add_indexnow_options(crawl)

    validate = sub.add_parser("validate", help="protocol validation only; no page URL is requested")
    validate.add_argument(
        "target", nargs="?", help="sitemap URL or local sitemap file (plain or .gz; or in --config)"
    )
    _add_config(validate)
    _add_output(validate)
    _add_http(validate)

    inspect = sub.add_parser(
        "inspect", help="counts, sizes, lastmod distribution, extensions, children"
    )
    inspect.add_argument("target", help="sitemap URL or local sitemap file (plain or .gz)")
    inspect.add_argument("--urls", action="store_true", help="print only the URLs, one a line")
    inspect.add_argument("--format", choices=_INSPECT_FORMATS, default=None, help=_FORMAT_HELP)
    inspect.add_argument(
        "--output", "-o", metavar="PATH", help="write the statistics here (default stdout)"
    )
    _add_http(inspect, skip=_NOT_FOR_INSPECT)

    disc = sub.add_parser("discover", help="list the sitemaps a site declares or exposes")
    disc.add_argument("site", help="site root URL, e.g. https://www.example.com/")
    disc.add_argument(
        "--format",
        choices=("text", "jsonl"),
        default="text",
        help="text: one sitemap a line with where it was found; jsonl: one record a line",
    )
    _add_http(disc, skip=_NOT_FOR_DISCOVER)

    report = sub.add_parser("report", help="turn a saved jsonl report into another format")
    report.add_argument("report", help="a jsonl report written by --format jsonl")
    report.add_argument("--format", choices=FORMATS, default=None, help=_FORMAT_HELP)
    report.add_argument(
        "--output", "-o", metavar="PATH", help="write the report here (default stdout)"
    )
    report.add_argument(
        "--fail-on",
        choices=LEVELS,
        default="error",
        help="exit 1 at or above this severity; the verdict the report states",
    )

    diff = sub.add_parser(
        "diff", help="compare two jsonl reports (or state files): new, fixed, still failing"
    )
    diff.add_argument("old", help="the earlier report (jsonl) or state file")
    diff.add_argument("new", help="the later report (jsonl) or state file")
    diff.add_argument("--format", choices=_DIFF_FORMATS, default=None, help=_FORMAT_HELP)
    diff.add_argument(
        "--output", "-o", metavar="PATH", help="write the comparison here (default stdout)"
    )
    diff.add_argument(
        "--fail-on",
        choices=LEVELS,
        default="error",
        help="exit 1 when a NEW finding is at or above this severity",
    )
    diff.add_argument(
        "--limit",
        type=_nonneg_int,
        default=100,
        metavar="N",
        help="rows per section in text and markdown (0: all; jsonl lists all)",
    )
    diff.add_argument(
        "--alert-drop",
        type=_positive_float,
        metavar="PCT",
        help="alert (exit 1) when a sitemap vanished, or a sitemap or the whole audit lost at "
        "least PCT%% of its URLs",
    )
    diff.add_argument(
        "--alert-new-errors",
        type=_nonneg_int,
        metavar="N",
        help="alert (exit 1) when there are more than N new errors",
    )

    migrate = sub.add_parser(
        "migrate", help="pre-launch migration check: every old URL on the new site"
    )
    migrate.add_argument(
        "old", help="the site as it is: sitemap URL, site root, local sitemap or file of URLs"
    )
    migrate.add_argument("new", help="the origin of the new site, e.g. https://staging.example.com")
    migrate.add_argument(
        "--map",
        metavar="FILE.csv",
        help="old,new rows (exact URLs or paths; regex:/~ rules with \\1 backreferences)",
    )
    migrate.add_argument(
        "--new-sitemap",
        metavar="URL",
        help="the new site's sitemap (or site root): old URLs whose new page it does not "
        "list, and listed URLs that redirect",
    )
    migrate.add_argument("--max-urls", type=_positive_int, metavar="N", help="stop after N URLs")
    migrate.add_argument(
        "--include", action="append", default=[], metavar="REGEX", help="only old URLs matching"
    )
    migrate.add_argument(
        "--exclude", action="append", default=[], metavar="REGEX", help="skip old URLs matching"
    )
    _add_output(migrate)
    _add_http(migrate)
    _add_migrate_config_state(migrate)
    _add_intent(migrate)
    _add_codes(sub, (crawl, validate, migrate))
    from audit.cli.fix import add_fix_parser  # `fix` (contracts/fix.md)

    add_fix_parser(sub)
    return parser


# --- `codes` and --ignore (issue 17.8) ---------------------------------------------------


def _ignore_codes(text: str) -> list[str]:
    from audit.cli.codes import parse_codes

    try:
        return parse_codes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_codes(sub: Any, reporting: tuple[argparse.ArgumentParser, ...]) -> None:
    """The `codes` subcommand, and --ignore on the commands that report findings."""
    from audit.cli.codes import FORMATS as CODE_FORMATS

    codes = sub.add_parser(
        "codes", help="every finding code: severity, meaning, how to fix, Search Console's name"
    )
    codes.add_argument(
        "--format",
        choices=CODE_FORMATS,
        default="text",
        help="text: a table; json: one object per code; markdown: docs/codes.md",
    )
    for p in reporting:
        p.add_argument(
            "--ignore",
            action="append",
            type=_ignore_codes,
            default=[],
            metavar="CODES",
            help="comma-separated finding codes neither reported nor counted (default none)",
        )


def ignored_codes(args: argparse.Namespace) -> list[str]:
    """The --ignore codes of a command (repeatable, comma-separated; also from --config)."""
    return sorted({code for group in getattr(args, "ignore", ()) for code in group})


def cmd_codes(args: argparse.Namespace) -> int:
    from audit.cli.codes import render

    sys.stdout.write(render(args.format))
    return Exit.OK


def config_from(args: argparse.Namespace, targets: list[str | None] | None = None) -> CrawlConfig:
    """The run's config. Credentials (--auth, --cookie, --header) are scoped to the origins
    of `targets` (default: the command's TARGET or SITE) and of the --rewrite targets."""
    from audit.http.access import auth_from, cookies_from, credential_scope, headers_from

    if targets is None:
        given = getattr(args, "target", None) or getattr(args, "site", None)
        targets = list(given) if isinstance(given, list) else [given]
    rewrites = tuple(getattr(args, "rewrite", ()))
    try:
        auth = auth_from(getattr(args, "auth", None))
        cookies = cookies_from(getattr(args, "cookie", ()))  # and SITEMAP_AUDIT_COOKIE
        headers = headers_from(args.header)  # and SITEMAP_AUDIT_HEADER
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    scope = credential_scope([*targets, getattr(args, "base_url", None)], rewrites)
    secret_headers = [k for k, _ in headers if k.lower() != "user-agent"]
    if (auth or cookies or secret_headers) and not scope:
        # a local file lists URLs of any host: say which origin the credentials are for
        raise TargetError(
            "--auth, --cookie and --header are sent only to the target's origin: with a local "
            "file, give --base-url or --rewrite to name it"
        )
    if getattr(args, "agents_fetch", None) is not None and not getattr(args, "agents", ()):
        raise TargetError("--agents-fetch needs --agents LIST: it fetches as the named agents")
    return CrawlConfig(
        rewrites=rewrites,
        auth=auth,
        cookies=cookies,
        insecure_hosts=tuple(getattr(args, "insecure_host", ())),
        allow_private=getattr(args, "allow_private", False),
        credential_origins=scope,
        rate=args.rate,
        concurrency=getattr(args, "concurrency", DEFAULT_CONCURRENCY),
        fetch_workers=getattr(args, "fetch_workers", None),
        max_per_host=getattr(args, "max_per_host", None),
        politeness_key=getattr(args, "politeness_key", "host"),
        timeout=args.timeout,
        retries=args.retries,
        retry_after_cap=getattr(args, "max_retry_after", RETRY_AFTER_CAP),
        user_agent=args.user_agent,
        robots_agent=getattr(args, "robots_agent", None),
        agents=getattr(args, "agents", ()),
        page_cap=getattr(args, "page_cap", DEFAULT_PAGE_CAP),
        max_urls=getattr(args, "max_urls", None),
        links=getattr(args, "links", False),
        max_pages=getattr(args, "max_pages", DEFAULT_MAX_PAGES),
        max_depth=getattr(args, "max_depth", None),
        intent=getattr(args, "intent", None),
        llms=getattr(args, "llms", False),
        agents_fetch=getattr(args, "agents_fetch", None),
        slow_ms=getattr(args, "slow", DEFAULT_SLOW_MS / 1000) * 1000,
        lastmod_tolerance_s=getattr(args, "lastmod_tolerance", 0.0),
        include=tuple(getattr(args, "include", ())),
        exclude=tuple(getattr(args, "exclude", ())),
        include_sitemap=tuple(getattr(args, "include_sitemap", ())),
        exclude_sitemap=tuple(getattr(args, "exclude_sitemap", ())),
        base_url=getattr(args, "base_url", None),
        **_cluster_options(args),
        **{"page_checks": getattr(args, "page_checks", False), **_render_options(args)},
        online=getattr(args, "online", False),
        extra_headers=headers,
    )


class OutputError(TargetError):
    """The report file could not be written (a full disk, a file size limit): the run
    stops with this one line and exit 2."""


_PROBE = 4096  # bytes written (then removed) before the first request: is there room?


def _output_error(path: str, exc: OSError) -> OutputError:
    return OutputError(
        f"{path}: cannot write the report: {exc.strerror or exc}; the run was stopped and "
        "the report keeps its complete lines only"
    )


def _open_report(path: str) -> TextIO:
    """The report file, checked writable with a probe block; every later write that
    fails raises OutputError (from a record sink, so the run stops at once)."""
    try:
        fh = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by caller
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # not /dev/null, a pipe, a tty
            fh.write(" " * _PROBE)
            fh.flush()
            fh.seek(0)
            fh.truncate()
    except OSError as exc:
        raise TargetError(f"{path}: cannot write the report: {exc.strerror}") from None
    write = fh.write

    def guarded(text: str) -> int:
        try:
            return write(text)
        except OSError as exc:
            raise _output_error(path, exc) from None

    fh.write = guarded  # type: ignore[method-assign]
    return fh


def _cut_to_last_line(path: str) -> None:
    """After a failed write: drop a partial last line, so what was written stays valid."""
    with contextlib.suppress(OSError), open(path, "rb+") as fh:
        size = fh.seek(0, 2)
        fh.seek(max(0, size - 65536))
        tail = fh.read()
        fh.truncate(size - len(tail) + tail.rfind(b"\n") + 1)


def _output_failure(exc: BaseException) -> OutputError | None:
    """The OutputError inside `exc` (raised in a sink, maybe grouped by a task group)."""
    if isinstance(exc, OutputError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _output_failure(inner)
            if found is not None:
                return found
    return None


@contextlib.contextmanager
def open_output(path: str | None) -> Iterator[TextIO]:
    if not path:
        yield sys.stdout
        return
    fh = _open_report(path)
    failure: OutputError | None = None
    try:
        yield fh
        fh.flush()
    except OSError as exc:  # the last flush
        failure = _output_failure(exc) or _output_error(path, exc)
    except BaseException as exc:
        failure = _output_failure(exc)
        if failure is None:
            raise
    finally:
        with contextlib.suppress(OSError):
            fh.close()
    if failure is not None:
        _cut_to_last_line(path)
        raise failure from None


@contextlib.contextmanager
def _whole_or_nothing(path: str | None) -> Iterator[str | None]:
    """A regular output file is written beside `path` and moved over it only when the
    command succeeds: a refused diff leaves an earlier report at `path` as it was."""
    if not path or (os.path.exists(path) and not os.path.isfile(path)):
        yield path  # stdout, /dev/null, a pipe: written as they are
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(prefix=".sitemap-audit-", suffix=".part", dir=folder)
    except OSError as exc:
        raise TargetError(f"{path}: cannot write the report: {exc.strerror}") from None
    os.close(fd)
    try:
        os.chmod(temp, _new_file_mode(path))  # mkstemp's 0600 would outlive the move
        yield temp
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def _new_file_mode(path: str) -> int:
    """The mode `open(path, "w")` would leave: the existing file's, else 0666 less umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _run_interruptibly(coro: Any, notes: dict[str, Any] | None = None) -> bool:
    """Run a coroutine; Ctrl-C or SIGTERM cancel it cleanly. True when interrupted, and
    `notes["stopped_by"]` (the summary's) names the signal."""
    stopped = notes if notes is not None else {}

    async def guarded() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def terminate() -> None:
            stopped["stopped_by"] = "SIGTERM"
            task.cancel()

        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, terminate)
        await coro

    from audit.core.eventloop import new_event_loop  # uvloop when the 'fast' extra is installed

    try:
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(guarded())
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        if isinstance(exc, KeyboardInterrupt):
            stopped["stopped_by"] = "SIGINT"
        return True
    except BaseExceptionGroup as group:  # a pipeline task wrote into a closed pipe
        if group.subgroup(BrokenPipeError) is not None:
            raise BrokenPipeError("the reader of the output went away") from None
        raise
    return False


def _validate_regexes(config: CrawlConfig) -> None:
    import re

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
                raise TargetError(f"{opt} {pat!r}: not a valid regular expression: {exc}") from exc


def cmd_audit(args: argparse.Namespace, mode: str, targets: list[str] | None = None) -> int:
    """crawl and validate: run the pipeline, stream records to the writer.

    Several targets (from --config) are audited one after the other into ONE report
    with one summary: a scheduled job gets one file, one exit status and one diff."""
    from audit.api import Audit, check_targets
    from audit.cli.indexnow import prepare as prepare_indexnow
    from audit.pipeline.progress import make_progress
    from audit.report import make_writer

    targets = targets or [args.target]
    indexnow = prepare_indexnow(args)  # before anything is opened; turns on --content
    config = config_from(args, list(targets))
    _validate_regexes(config)
    check_targets(targets, mode)  # every target before anything is opened
    _check_intent(config)
    snapshot = _notify_snapshot(args)  # before the run replaces the previous one
    store = _open_state(args, mode, targets, config)  # before the output is truncated
    interrupted = True
    run: Audit | None = None
    try:
        with open_output(args.output) as out:
            writer = make_writer(args.format, out, fail_on=args.fail_on)
            sinks: list[Any] = [writer.write]
            if indexnow is not None:
                sinks.append(indexnow.collector)
            hooks = None
            after = None
            if store is not None:
                from audit.features.incremental import StateHook, StateSink

                sink = StateSink(store)
                sinks.append(sink)
                changed_only = args.changed_only
                ledger = _ledger(args, store, config, list(targets), mode)
                shared: list[Any] = [] if ledger is None else [ledger]
                if getattr(args, "budget", None) and mode == "crawl":
                    from audit.features.budget import BudgetHook

                    shared.insert(0, BudgetHook(store, args.budget))
                if ledger is not None:
                    sinks.append(ledger)
                    after = _ledger_stage(ledger, store)

                def hooks() -> list[Any]:  # one per target: each run's sitemaps and notes
                    return [StateHook(sink, changed_only=changed_only), *shared]

            with_lastmod = _with_lastmod(hooks, args, store, config)
            progress = make_progress(
                not args.no_progress, "checked" if mode == "crawl" else "entries"
            )
            run = Audit(
                targets,
                config,
                mode=mode,
                sinks=sinks,
                hooks=with_lastmod,
                progress=progress,
                after=after,
            )
            run.recorder.ignore(ignored_codes(args))
            try:
                interrupted = _run_interruptibly(run.run(), run.recorder.notes)
            finally:
                progress.close()
            if indexnow is not None:  # after every URL was judged, before the summary
                indexnow.after(run, store, config, interrupted)
            result = run.finish(interrupted=interrupted)
            writer.close()
    finally:
        if store is not None:
            # only a run that went through to the end is the base of an incremental one
            store.close(complete=not interrupted and run is not None and not run.fatal)
    if store is not None and store.replayed:
        print(
            f"{PROG}: resumed from {store.path}: {store.replayed} URLs already checked were "
            "not requested again",
            file=sys.stderr,
        )
    if interrupted:
        print(f"{PROG}: interrupted; the report holds what was done", file=sys.stderr)
    _notify(args, snapshot, list(targets), run)
    if interrupted:
        return Exit.INTERRUPTED
    for message in result.fatal:  # any target that could not be audited at all: exit 2
        print(f"{PROG}: error: {message}", file=sys.stderr)
    if result.fatal:
        return Exit.USAGE
    return Exit.FINDINGS if result.failed(args.fail_on) else Exit.OK


def _ledger(
    args: argparse.Namespace, store: Any, config: CrawlConfig, targets: list[str], mode: str
) -> Any:
    """crawl --state: the published-URL ledger of the run (audit.features.ledger)."""
    if mode != "crawl":
        return None
    from audit.features.ledger import Ledger

    return Ledger(
        store, config, targets, dropped_max=getattr(args, "dropped_max", DEFAULT_DROPPED_MAX)
    )


_CUT_NOTES = ("max_urls_reached", "excluded_urls", "excluded_sitemaps")


def _ledger_stage(ledger: Any, store: Any) -> Callable[[Any], Awaitable[None]]:
    """After every target: the dropped URLs judged, unless the run was cut (--max-urls)
    or a target could not be audited; such a run neither judges nor updates the ledger."""

    async def after(run: Any) -> None:
        notes = run.recorder.notes
        store.cut = {key: notes[key] for key in _CUT_NOTES if notes.get(key)}
        if notes.get("max_urls_reached") or run.fatal:
            store.ledger_update = False
            return
        await ledger.judge_dropped(run.recorder)

    return after


def _with_lastmod(
    factory: Callable[[], list[Any]] | None,
    args: argparse.Namespace,
    store: Any,
    config: CrawlConfig,
) -> Callable[[], list[Any]] | None:
    """The run's hooks with lastmod over time (--content, or --page-checks) in front:
    its after_answer must see a 304 before the StateHook carries it."""
    if not (getattr(args, "content", False) or config.page_checks):
        return factory
    from audit.features.lastmod import LastmodHook

    cap = config.page_cap

    def hooks() -> list[Any]:
        return [LastmodHook(store, cap), *(factory() if factory is not None else ())]

    return hooks


def _notify_snapshot(args: argparse.Namespace) -> Any:
    """--notify: check the destinations; with --state, copy the previous run out."""
    dests = getattr(args, "notify", None)
    if not dests:
        if (
            getattr(args, "smtp", None)
            or getattr(args, "notify_always", False)
            or getattr(args, "notify_on", None)
        ):
            raise TargetError("--smtp, --notify-always and --notify-on need --notify DEST")
        return None
    from audit.report.notify import NotifyError, parse_smtp, validate_dest
    from audit.state.worse import Snapshot

    try:
        for dest in dests:
            validate_dest(dest, args.smtp)
        if args.smtp:
            parse_smtp(args.smtp)
    except (NotifyError, ValueError) as exc:
        raise TargetError(str(exc)) from None
    return Snapshot.take(getattr(args, "state", None))


def _notify(args: argparse.Namespace, snapshot: Any, targets: list[str], run: Any) -> None:
    """--notify after the run: by default only when it got worse."""
    if snapshot is None or run is None:
        return
    from audit.report.notify import Notice, NotifyError, send
    from audit.state.worse import NOTIFY_ON_DEFAULT, judge_night

    try:
        summary = run.recorder.summary()  # after finish(): marked interrupted when it was
        night = judge_night(
            snapshot,
            args.state,
            summary,
            notify_on=args.notify_on or NOTIFY_ON_DEFAULT,
            fatal=list(run.fatal),
        )
        if night.worse or args.notify_always:
            notice = Notice(targets, summary, night.alerts, night.worse, night.baseline)
            for dest in args.notify:
                send(dest, notice, smtp=args.smtp)
    except NotifyError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
    finally:
        snapshot.close()


# Options that change how politely or where a run goes, not what it finds: a state may be
# resumed or continued with other values of these.
_NOT_FINGERPRINTED = frozenset(
    {
        "rate",
        "concurrency",
        "fetch_workers",
        "fetch_workers_after",
        "fetch_workers_min_rate",
        "fetch_workers_min_busy",
        "max_per_host",
        "politeness_key",
        "timeout",
        "retries",
        "retry_after_cap",
        "backoff_base",
        "backoff_cap",
        "stream_timeout",
        # credentials rotate; a new password must not make the state "another audit"
        "auth",
        "cookies",
        "extra_headers",
        # where the checks run, not what they find (issue 21)
        "cluster",
        "cluster_batch",
        "cluster_fence",
        # a plan is edited between nights: the intent file never ties the state
        "intent",
    }
)


def _open_state(
    args: argparse.Namespace,
    mode: str,
    targets: list[str],
    config: CrawlConfig,
    more: dict[str, Any] | None = None,
) -> Any:
    """The --state store of this run, or None; a unusable file is a one-line error."""
    path = getattr(args, "state", None)
    if not path:
        for flag in ("fresh", "changed_only", "budget"):
            if getattr(args, flag, False):
                raise TargetError(f"--{flag.replace('_', '-')} needs --state PATH")
        return None
    if getattr(args, "budget", None):
        for flag, given in (
            ("--changed-only", args.changed_only),
            ("--links", config.links),
            ("--max-urls", config.max_urls),
        ):
            if given:
                raise TargetError(f"--budget cannot be used with {flag}")
    if getattr(args, "changed_only", False) and getattr(args, "links", False):
        # the link crawl needs every page's links: nothing may be carried unread
        raise TargetError(
            "--changed-only cannot be used with --links: the link crawl reads every page"
        )
    import dataclasses

    from audit.state.identity import identity
    from audit.state.store import StateStore, fingerprint

    # Only options set away from their defaults: an option added by a later version (at
    # its default) must not make an existing state "another audit".
    options = {
        f.name: value
        for f in dataclasses.fields(config)
        if f.name not in _NOT_FINGERPRINTED and (value := getattr(config, f.name)) != f.default
    }
    if ignored_codes(args):  # the state holds the report as filtered: another audit
        options["ignore"] = ignored_codes(args)
    options.update(more or {})  # a command's own options (migrate's --map, --new-sitemap)
    return StateStore.open(
        path,
        fingerprint=fingerprint(mode, targets, options),
        targets=targets,
        fresh=args.fresh,
        identity=identity(mode, targets, options),
    )


def cmd_inspect(args: argparse.Namespace) -> int:
    from audit.api import Audit, check_targets
    from audit.sitemap.inspect import Inspector

    config = config_from(args)
    check_targets(args.target, "inspect")  # before the output is opened
    inspector = Inspector()
    with open_output(args.output) as out:
        if args.urls:

            def urls_only(source: str, entry: Any) -> None:
                if entry.kind == "url" and entry.loc and entry.loc.strip():
                    # one usable URL a line: controls percent-encoded, never raw
                    out.write(url_printable(entry.loc.strip()) + "\n")

            run = Audit(
                args.target,
                config,
                mode="inspect",
                sinks=[inspector.on_record],
                on_entry=urls_only,
                on_sitemap=inspector.on_sitemap,
            )
        else:
            run = Audit(
                args.target,
                config,
                mode="inspect",
                sinks=[inspector.on_record],
                on_entry=inspector.on_entry,
                on_sitemap=inspector.on_sitemap,
            )
        interrupted = _run_interruptibly(run.run())
        if not args.urls:
            if args.format == "json":
                json.dump([inspector.stats[u].to_json() for u in inspector.order], out, indent=2)
                out.write("\n")
            else:
                inspector.write_text(out)
    if interrupted:
        return Exit.INTERRUPTED
    for message in run.fatal:
        print(f"{PROG}: error: {message}", file=sys.stderr)
    if run.fatal:
        return Exit.USAGE
    return max(_inspect_failures(inspector, args.urls), _inspect_unread(run.recorder.notes))


def _inspect_unread(notes: dict[str, Any]) -> int:
    """A local index whose children were not read (no --base-url, no --online): one line on
    stderr says which and why, and the exit status is 1, as for a child that failed (with
    --urls, stdout would otherwise hold none of the index's URLs and look complete)."""
    from audit.report.aggregate import unread_children_note

    note = unread_children_note(notes)
    if note is None:
        return Exit.OK
    print(f"{PROG}: {printable(note)}", file=sys.stderr)
    return Exit.FINDINGS


def _inspect_failures(inspector: Any, urls_only: bool) -> int:
    """inspect's exit status: 1 when a sitemap (an index's child) could not be read; with
    --urls, stdout holds only URLs, so each failure is a line on stderr."""
    failed = inspector.failed
    if urls_only:
        for st in failed:
            print(f"{PROG}: {st.url}: {st.failure}", file=sys.stderr)
    return Exit.FINDINGS if failed else Exit.OK


def cmd_discover(args: argparse.Namespace) -> int:
    from audit.api import discover_async

    found = asyncio.run(discover_async(args.site, config=config_from(args)))
    for d in found.sitemaps:
        if args.format == "jsonl":
            print(json.dumps(d))
        else:
            relative = ", relative" if d.get("relative") else ""
            print(f"{printable(d['url'])}\t(from {d['source']}{relative})")
    for f in found.findings:
        if args.format == "jsonl":
            print(json.dumps(f))
        else:
            print(f"{f['severity']}: {f['code']}: {printable(f['message'])}", file=sys.stderr)
    return Exit.OK if found.sitemaps else Exit.FINDINGS


def cmd_report(args: argparse.Namespace) -> int:
    from audit.report import convert

    src = Path(args.report)
    if not src.is_file():
        raise TargetError(f"{args.report}: no such report file")
    with open_output(args.output) as out:
        try:
            summary = convert(str(src), args.format, out, fail_on=args.fail_on)
        except ValueError as exc:
            raise TargetError(str(exc)) from exc
    if isinstance(summary, dict) and args.fail_on != "never":
        from audit.core.records import Severity

        threshold = Severity(args.fail_on).rank
        counts = summary.get("findings", {})
        if any(counts.get(s.value, 0) for s in Severity if s.rank >= threshold):
            return Exit.FINDINGS
    return Exit.OK


def _diff_alerts(args: argparse.Namespace) -> Any:
    """diff's --alert-drop / --alert-new-errors thresholds (None: no alerts asked)."""
    if args.alert_drop is None and args.alert_new_errors is None:
        return None
    from audit.state.diff import Alerts

    return Alerts(drop_pct=args.alert_drop, new_errors=args.alert_new_errors)


def cmd_diff(args: argparse.Namespace) -> int:
    from audit.state.diff import DiffError, diff_reports

    for path in (args.old, args.new):
        if not Path(path).is_file():
            raise TargetError(f"{path}: no such report or state file")
    with _whole_or_nothing(args.output) as target, open_output(target) as out:
        try:
            summary = diff_reports(
                args.old,
                args.new,
                out,
                fmt=args.format,
                fail_on=args.fail_on,
                limit=args.limit,
                alerts=_diff_alerts(args),
            )
        except DiffError as exc:
            raise TargetError(str(exc)) from exc
    return Exit.FINDINGS if summary.failed else Exit.OK


def cmd_migrate(args: argparse.Namespace) -> int:
    """migrate: judge every old URL on the new site; everything is checked (NEW, the
    targets, the map, the state) before the first request."""
    from audit.http.rewrite import parse_origin
    from audit.migrate.redirect_map import load_map
    from audit.pipeline.targets import classify_target

    try:
        new_origin = parse_origin(args.new, "NEW")
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    classify_target(args.old)
    if args.new_sitemap:
        classify_target(args.new_sitemap)
    redirect_map = load_map(args.map) if args.map else None
    # credentials are for the new site (staging), never for the live one
    config = config_from(args, [new_origin, args.new_sitemap])
    _validate_regexes(config)
    intent = _check_intent(config)  # path rows apply to old URLs of any origin
    more = {"map": args.map, "new_sitemap": args.new_sitemap}
    store = _open_state(args, "migrate", [args.old, new_origin], config, more)
    outcome: dict[str, Any] = {}
    interrupted = True
    try:
        interrupted, recorder = _migrate_report(
            args, new_origin, config, redirect_map, store, outcome, intent
        )
    finally:
        state_error = _close_state(store, complete=not interrupted and not outcome.get("fatal"))
    return _migrate_exit(args, recorder, store, outcome, interrupted, state_error)


def _migrate_report(
    args: argparse.Namespace,
    new_origin: str,
    config: CrawlConfig,
    redirect_map: Any,
    store: Any,
    outcome: dict[str, Any],
    intent: Any = None,
) -> tuple[bool, Any]:
    """Run the migration into its report: (interrupted, the recorder)."""
    from audit.migrate.auditor import MigrationRecorder, MigrationStats, run_migrate
    from audit.pipeline.progress import make_progress
    from audit.report import make_writer

    with open_output(args.output) as out:
        writer = make_writer(args.format, out, fail_on=args.fail_on)
        sinks: list[Any] = [writer.write]
        hooks = _migrate_state_hooks(store, sinks)
        recorder = MigrationRecorder(sinks, MigrationStats(new_origin))
        recorder.ignore(ignored_codes(args))
        progress = make_progress(not args.no_progress, "checked")
        try:
            interrupted = _run_interruptibly(
                run_migrate(
                    args.old,
                    new_origin,
                    config,
                    recorder,
                    redirect_map=redirect_map,
                    new_sitemap=args.new_sitemap,
                    progress=progress,
                    outcome=outcome,
                    hooks=hooks,
                    intent=intent,
                )
            )
        finally:
            progress.close()
        if interrupted:
            recorder.notes["interrupted"] = True
        recorder.emit(recorder.summary())
        writer.close()
    return interrupted, recorder


def _migrate_state_hooks(store: Any, sinks: list[Any]) -> list[Any]:
    """--state: the store's sink among the report's, and its hook for the pass over OLD."""
    if store is None:
        return []
    from audit.features.incremental import StateHook, StateSink

    sink = StateSink(store)
    sinks.append(sink)
    return [StateHook(sink)]


def _close_state(store: Any, *, complete: bool) -> str | None:
    """Close the --state store; why it could not be written (one line), or None. The
    report is written before: a full disk under the state never costs the report."""
    if store is None:
        return None
    from audit.state.store import StateError

    try:
        store.close(complete=complete)
    except StateError as exc:
        return str(exc)
    return None


def _migrate_exit(
    args: argparse.Namespace,
    recorder: Any,
    store: Any,
    outcome: dict[str, Any],
    interrupted: bool,
    state_error: str | None,
) -> int:
    """migrate's closing lines and exit status."""
    if store is not None and store.replayed:
        print(
            f"{PROG}: resumed from {store.path}: {store.replayed} old URLs already judged "
            "were not requested again",
            file=sys.stderr,
        )
    if interrupted:
        print(f"{PROG}: interrupted; the report holds what was done", file=sys.stderr)
    if state_error is not None:
        print(f"{PROG}: error: {state_error}", file=sys.stderr)
        return Exit.USAGE
    if interrupted:
        return Exit.INTERRUPTED
    if outcome.get("fatal"):
        print(f"{PROG}: error: {outcome['fatal']}", file=sys.stderr)
        return Exit.USAGE
    return Exit.FINDINGS if recorder.worst_at_or_above(args.fail_on) else Exit.OK


def migrate_config(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]
) -> None:
    """migrate --config: the file's options where the command line gave none; OLD and
    NEW are the command line's (a file naming targets is refused, not ignored)."""
    from audit.cli.configfile import ConfigFileError, apply_config_file

    try:
        targets = apply_config_file(parser, args, argv, required=False)
    except ConfigFileError as exc:
        raise TargetError(str(exc)) from exc
    if targets:
        raise TargetError(
            f"{args.config}: target/targets are for crawl and validate; "
            "migrate takes OLD and NEW on the command line"
        )


def audit_targets(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]
) -> list[str]:
    """crawl and validate: the TARGETs given and --targets-file's, else --config's."""
    from_config: list[str] = []
    if args.config:  # first: the file may name a targets-file too
        from audit.cli.configfile import ConfigFileError, apply_config_file

        try:
            from_config = apply_config_file(parser, args, argv, required=False)
        except ConfigFileError as exc:
            raise TargetError(str(exc)) from exc
    given = args.target if isinstance(args.target, list) else [args.target]
    given = [*getattr(args, "render_targets", []), *given]  # `--render TARGET`
    targets = [t for t in given if t]
    if getattr(args, "targets_file", None):
        targets += read_targets_file(args.targets_file)
    targets = targets or from_config
    if not targets:
        where = f"{args.config}: " if args.config else f"{args.command}: "
        raise TargetError(
            f"{where}no target: give TARGET, --targets-file FILE or target/targets in --config"
        )
    return targets


def read_targets_file(path: str) -> list[str]:
    """--targets-file: one target a line; blank lines and `#` comments are skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TargetError(f"--targets-file {path}: cannot read it: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise TargetError(f"--targets-file {path}: not UTF-8 text") from None
    targets = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    targets = [t for t in targets if t]
    if not targets:
        raise TargetError(f"--targets-file {path}: no target in it (one a line, # comments)")
    return targets


def _silence_stdout() -> None:
    """Point stdout at /dev/null: the interpreter's last flush of a closed pipe would
    otherwise print an "Exception ignored ... BrokenPipeError" on the way out."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _tune_gc() -> None:
    """For a whole process run only (never inside a caller's process): an audit allocates
    and frees millions of short-lived records and almost no reference cycles, so the
    cyclic collector's default of a pass every 700 net allocations costs 2-4% of a run
    for nothing. Start-up objects are frozen out of its scans; passes become rarer."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the console script or `python -m audit`: this process is ours
        _tune_gc()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors: already printed
        return int(exc.code) if isinstance(exc.code, int) else Exit.USAGE
    try:
        if args.command in ("crawl", "validate"):
            targets = audit_targets(parser, args, sys.argv[1:] if argv is None else argv)
            args.format = resolve_format(args)
            return cmd_audit(args, args.command, targets)
        if args.command == "migrate" and args.config:  # before --format is resolved
            migrate_config(parser, args, sys.argv[1:] if argv is None else argv)
        if hasattr(args, "format"):
            args.format = resolve_format(args, _FORMAT_CHOICES.get(args.command, FORMATS))
        if args.command == "inspect":
            return cmd_inspect(args)
        if args.command == "discover":
            return cmd_discover(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "diff":
            return cmd_diff(args)
        if args.command == "migrate":
            return cmd_migrate(args)
        if args.command == "codes":
            return cmd_codes(args)
        if args.command == "fix":
            from audit.cli.fix import cmd_fix

            return cmd_fix(args)
    except AuditError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return Exit.USAGE
    except BrokenPipeError:  # `| head`: the reader went away, nothing to report
        if argv is None:  # our own process: its stdout is ours to silence
            _silence_stdout()
        return Exit.OK
    parser.error(f"unknown command {args.command}")
    return Exit.USAGE
