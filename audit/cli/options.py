"""The option table: every command's parser, its flags and their value types, and the
mapping of parsed flags to what the front door takes (a CrawlConfig, RunOptions).

One long list that reads best as one (scripts/house.py names it the one module allowed over
the size limit). It checks a flag's own value (argparse types, one line, exit 2); checks of
options that go together are the front door's (audit.front.options), run once for the command
line and a library caller alike. Imports nothing below the front door (audit.api).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from enum import IntEnum
from functools import partial
from pathlib import Path
from typing import Any

from audit.core.config import (
    AUTH_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_DROPPED_MAX,
    DEFAULT_MAX_PAGES,
    DEFAULT_PAGE_CAP,
    DEFAULT_RATE,
    DEFAULT_RENDER,
    DEFAULT_RENDER_TABS,
    DEFAULT_RENDER_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_SLOW_MS,
    DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT,
    FETCH_WORKERS_MAX,
    MAX_RENDER_TABS,
    RENDER_ALL,
    RETRY_AFTER_CAP,
    CrawlConfig,
)
from audit.core.errors import TargetError
from audit.core.version import __version__

PROG = "sitemap-audit"


class Exit(IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    INTERRUPTED = 130


FORMATS = ("text", "json", "jsonl", "csv", "junit", "sarif", "markdown", "html")
LEVELS = ("error", "warning", "info", "never")


# defaults --help does not show: off, unset, empty, suppressed
_NO_DEFAULT: tuple[object, ...] = (None, False, [], (), argparse.SUPPRESS)


class _HelpFormatter(argparse.HelpFormatter):
    """--help shows every option's default, unless its help already says it or there is
    none to show (off, unset, empty; no positional argument has a default)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        # argparse asks only for a help that is not empty (HelpFormatter._format_action)
        text = str(action.help)
        default = action.default
        if "default" in text or default in _NO_DEFAULT:
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # one line, exit 2 (argparse's own convention)
        self.exit(Exit.USAGE, f"{self.prog}: error: {message}\n")


# --output's extension names the format when --format is not given; none (`--output
# report`) claims no other format: text, which every command writes
_EXTENSIONS = {
    "": "text",
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
    fmt = _EXTENSIONS.get(suffix, "")  # "": an extension of no format, in no choices
    if fmt not in choices:
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
        # a float's bound is exclusive (seconds, a rate: more than nothing), an int's not
        if value < minimum or (kind is float and value == minimum):
            bound = f"greater than {minimum}" if kind is float else f"at least {minimum}"
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


AGENTS_FETCH_DEFAULT = 20  # `--agents-fetch` alone (contracts/agents.md)


# --- --render (contracts/render.md): the rendered page against the raw HTML ---------


def _render_count(text: str) -> int:
    """--render N: a positive integer, or `all` (RENDER_ALL)."""
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
        text = str(values)  # `--render` alone: its const, DEFAULT_RENDER
        if "://" in text or (not text.strip().isdigit() and Path(text).exists()):
            setattr(namespace, self.dest, DEFAULT_RENDER)
            namespace.render_targets = [*getattr(namespace, "render_targets", []), text]
            return
        try:
            setattr(namespace, self.dest, _render_count(text))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --render: {exc}")


def _render_options(args: argparse.Namespace) -> dict[str, Any]:
    """--render's config (--render turns on --page-checks)."""
    render = getattr(args, "render", None)
    if isinstance(render, str):  # `render = "all"` (or "20") in --config
        try:
            render = _render_count(render)
        except argparse.ArgumentTypeError as exc:
            raise TargetError(f"--render: {exc}") from None
    tabs = getattr(args, "render_tabs", DEFAULT_RENDER_TABS)  # at most 16: the front door's
    out: dict[str, Any] = {
        "render": render,
        "render_tabs": tabs,
        "render_timeout": getattr(args, "render_timeout", DEFAULT_RENDER_TIMEOUT),
        "browser": getattr(args, "browser", None),
    }
    if render is not None:
        out["page_checks"] = True
    return out


def _front_value(option: str, text: str) -> Any:
    """An argparse type: the front door's parse of one option's value (audit.api.parse_value),
    its ValueError a one-line usage error."""
    from audit.api import parse_value

    try:
        return parse_value(option, text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {text!r}")
    return name.strip(), value.strip()


_FORMAT_HELP = "report format (default: from --output's extension, else text)"
_INSPECT_FORMATS = ("text", "json")
_DIFF_FORMATS = ("text", "markdown", "jsonl")
FORMAT_CHOICES = {"inspect": _INSPECT_FORMATS, "diff": _DIFF_FORMATS}


def _add_format_output(
    p: argparse.ArgumentParser, formats: tuple[str, ...], what: str, fail_on: str | None = None
) -> None:
    """--format of `formats`, --output of the `what` a command writes and, with the help
    text `fail_on`, --fail-on: the options every command that writes something shares."""
    p.add_argument("--format", choices=formats, default=None, help=_FORMAT_HELP)
    p.add_argument("--output", "-o", metavar="PATH", help=f"write the {what} here (default stdout)")
    if fail_on is not None:
        p.add_argument("--fail-on", choices=LEVELS, default="error", help=fail_on)


def _add_output(p: argparse.ArgumentParser) -> None:
    _add_format_output(p, FORMATS, "report", "exit 1 at or above this severity")
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
        type=partial(_front_value, "agents"),
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
        type=partial(_front_value, "rewrite"),
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
        type=partial(_front_value, "cookie"),
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
        type=partial(_front_value, "insecure_host"),
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


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file of options (flag names) and target/targets; flags override it",
    )


# README's options table says the same, word for word (tests/cli/test_help_and_docs.py)
CHANGED_ONLY_HELP = (
    "with --state: request only URLs that are new, whose <lastmod> moved, whose last "
    "answer was not a plain 2xx or carried an error or warning, or whose last answer was "
    "itself carried without a request; the rest are carried forward"
)


def _add_intent(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--intent",
        metavar="FILE",
        help="CSV of url,action[,target] rows: what URLs must do (keep, redirect, gone); a URL "
        'that does otherwise is intent-violated (also intent = "FILE" in --config)',
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. `command`: only that command's parser gets its options;
    the others are listed (name and help, as --help shows them) but left empty. A run
    parses with one command's parser alone, and adding every command's options cost about
    5 ms at every start. None: every command's (what `--help` and a command named wrongly
    or not at all need; audit.cli.main.command_named says which applies)."""
    parser = _Parser(prog=PROG, description="Asynchronous deep-crawl auditor for XML sitemaps.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    crawl = sub.add_parser("crawl", help="full audit: discover, expand, validate, check every URL")
    if command in (None, "crawl"):
        crawl.add_argument(
            "target",
            nargs="*",
            metavar="TARGET",
            help="site roots, sitemap URLs, robots.txt URLs or local sitemap files, audited "
            "into one report (or --targets-file, or in --config)",
        )
        crawl.add_argument(
            "--targets-file",
            metavar="FILE",
            help="more targets, one a line (# comments), audited into the same report",
        )
        _add_config(crawl)
        crawl.add_argument(
            "--state",
            metavar="PATH",
            help="SQLite state file: resume after a crash; after a completed run, check incrementally",
        )
        crawl.add_argument(
            "--fresh", action="store_true", help="with --state: discard the state and start over"
        )
        crawl.add_argument(
            "--changed-only",
            action="store_true",
            help=CHANGED_ONLY_HELP,
        )
        crawl.add_argument(
            "--dropped-max",
            type=_nonneg_int,
            default=DEFAULT_DROPPED_MAX,
            metavar="N",
            help="with --state: URLs that left the sitemaps since an earlier run asked again per "
            f"run at most (url-dropped-*; the latest dropped first; 0: none) (default {DEFAULT_DROPPED_MAX:,})",
        )
        crawl.add_argument(
            "--budget",
            type=_positive_int,
            metavar="N",
            help="with --state: a rolling audit: check at most N listed URLs this run (due, "
            "never checked, moved, failing first) and carry the others from the state",
        )
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
        # lastmod over time and notifications (audit.features.lastmod, audit.report.notify).
        crawl.add_argument(
            "--content",
            action="store_true",
            help="GET pages for content fingerprints (lastmod-frozen, lastmod-churn with --state; "
            "lastmod-page-date) without the other page checks",
        )
        crawl.add_argument(
            "--notify",
            action="append",
            default=[],
            metavar="DEST",
            help="after the run, send the summary and alerts to a webhook URL or mailto:ADDRESS "
            "(repeatable); only when the run got worse unless --notify-always",
        )
        crawl.add_argument(
            "--notify-always", action="store_true", help="with --notify: send after every run"
        )
        crawl.add_argument(
            "--notify-on",
            choices=("error", "warning", "info"),
            metavar="LEVEL",
            help="with --notify: new findings at or above LEVEL (error, warning, info) make a "
            "night worse, whatever --fail-on says (default: error)",
        )
        crawl.add_argument(
            "--smtp",
            metavar="HOST:PORT",
            help="mail server for mailto: notifications (login from SITEMAP_AUDIT_SMTP_USER and "
            "SITEMAP_AUDIT_SMTP_PASSWORD)",
        )
        # --links and its bounds (RULES.md, Site coverage).
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
        # --llms and --agents-fetch (contracts/agents.md): what each AI agent is served.
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
        # --render (contracts/render.md): the rendered page against the raw HTML
        crawl.add_argument(
            "--render",
            nargs="?",
            const=DEFAULT_RENDER,
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
        crawl.add_argument("--max-urls", type=_positive_int, metavar="N", help="stop after N URLs")
        crawl.add_argument(
            "--include",
            action="append",
            default=[],
            metavar="REGEX",
            help="only page URLs matching",
        )
        crawl.add_argument(
            "--exclude",
            action="append",
            default=[],
            metavar="REGEX",
            help="skip page URLs matching",
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
        crawl.add_argument(
            "--cluster",
            type=partial(_front_value, "cluster"),
            metavar="SPEC",
            help="run the URL checks on a Dask cluster: local:N (N worker processes here) or "
            "tcp://HOST:PORT (a running scheduler); politeness stays per host across all "
            "workers (needs the cluster extra)",
        )
        crawl.add_argument(
            "--cluster-batch",
            type=_positive_int,
            metavar="N",
            help="with --cluster: URLs of one host per batch (default: 2 s of --rate, at most 500)",
        )
        _add_intent(crawl)
        from audit.cli.indexnow import add_indexnow_options  # --indexnow (contracts/fix.md)

        add_indexnow_options(crawl)

    validate = sub.add_parser("validate", help="protocol validation only; no page URL is requested")
    if command in (None, "validate"):
        validate.add_argument(
            "target",
            nargs="?",
            help="sitemap URL or local sitemap file (plain or .gz; or in --config)",
        )
        _add_config(validate)
        _add_output(validate)
        _add_http(validate)

    inspect = sub.add_parser(
        "inspect", help="counts, sizes, lastmod distribution, extensions, children"
    )
    if command in (None, "inspect"):
        inspect.add_argument("target", help="sitemap URL or local sitemap file (plain or .gz)")
        inspect.add_argument("--urls", action="store_true", help="print only the URLs, one a line")
        _add_format_output(inspect, _INSPECT_FORMATS, "statistics")
        _add_http(inspect, skip=_NOT_FOR_INSPECT)

    disc = sub.add_parser("discover", help="list the sitemaps a site declares or exposes")
    if command in (None, "discover"):
        disc.add_argument("site", help="site root URL, e.g. https://www.example.com/")
        disc.add_argument(
            "--format",
            choices=("text", "jsonl"),
            default="text",
            help="text: one sitemap a line with where it was found; jsonl: one record a line",
        )
        _add_http(disc, skip=_NOT_FOR_DISCOVER)

    report = sub.add_parser("report", help="turn a saved jsonl report into another format")
    if command in (None, "report"):
        report.add_argument("report", help="a jsonl report written by --format jsonl")
        _add_format_output(
            report,
            FORMATS,
            "report",
            "exit 1 at or above this severity; the verdict the report states",
        )

    diff = sub.add_parser(
        "diff", help="compare two jsonl reports (or state files): new, fixed, still failing"
    )
    if command in (None, "diff"):
        diff.add_argument("old", help="the earlier report (jsonl) or state file")
        diff.add_argument("new", help="the later report (jsonl) or state file")
        _add_format_output(
            diff,
            _DIFF_FORMATS,
            "comparison",
            "exit 1 when a NEW finding is at or above this severity",
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
    if command in (None, "migrate"):
        migrate.add_argument(
            "old", help="the site as it is: sitemap URL, site root, local sitemap or file of URLs"
        )
        migrate.add_argument(
            "new", help="the origin of the new site, e.g. https://staging.example.com"
        )
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
        migrate.add_argument(
            "--max-urls", type=_positive_int, metavar="N", help="stop after N URLs"
        )
        migrate.add_argument(
            "--include", action="append", default=[], metavar="REGEX", help="only old URLs matching"
        )
        migrate.add_argument(
            "--exclude", action="append", default=[], metavar="REGEX", help="skip old URLs matching"
        )
        _add_output(migrate)
        _add_http(migrate)
        # migrate's --config (options only: OLD and NEW stay on the command line) and --state
        # (resume a killed run; no --changed-only: the old sitemap's <lastmod> says nothing of the
        # new site).
        migrate.add_argument(
            "--config",
            metavar="FILE",
            help="TOML file of options (flag names, no OLD/NEW); flags override it",
        )
        migrate.add_argument(
            "--state",
            metavar="PATH",
            help="SQLite state file: a killed run resumes; old URLs already judged are not "
            "requested again",
        )
        migrate.add_argument(
            "--fresh", action="store_true", help="with --state: discard the state and start over"
        )
        _add_intent(migrate)
    # The `codes` subcommand, and --ignore on the commands that report findings.
    codes = sub.add_parser(
        "codes", help="every finding code: severity, meaning, how to fix, Search Console's name"
    )
    if command in (None, "codes"):
        from audit.cli.codes import FORMATS as CODE_FORMATS

        codes.add_argument(
            "--format",
            choices=CODE_FORMATS,
            default="text",
            help="text: a table; json: one object per code; markdown: docs/codes.md",
        )
    for name, p in (("crawl", crawl), ("validate", validate), ("migrate", migrate)):
        if command in (None, name):
            p.add_argument(
                "--ignore",
                action="append",
                type=partial(_front_value, "ignore"),
                default=[],
                metavar="CODES",
                help="comma-separated finding codes neither reported nor counted (default none)",
            )
    fix = sub.add_parser(  # contracts/fix.md
        "fix",
        help="write the sitemap set a complete audit says the site should have, "
        "from a jsonl report or state file",
    )
    if command in (None, "fix"):
        from audit.cli.fix import add_fix_options

        add_fix_options(fix)
    worker = sub.add_parser(
        "worker",
        help="a Dask worker for --cluster tcp://... runs, tuned as local:N's (cluster extra)",
        description="Start `dask worker` with the settings --cluster local:N gives its own "
        "workers (uvloop, Dask's profiler off, fewer monitor ticks, the collector tuned), "
        "each only where the environment sets none. Every argument goes to `dask worker`: "
        "the scheduler's address and its options (`dask worker --help`).",
    )
    if command in (None, "worker"):
        worker.add_argument(
            "scheduler", help="the scheduler's address (tcp://HOST:PORT) or its scheduler file"
        )
        worker.add_argument("dask_args", nargs=argparse.REMAINDER, metavar="DASK-OPTION")
    return parser


# --- `codes` and --ignore (issue 17.8) ---------------------------------------------------


def ignored_codes(args: argparse.Namespace) -> list[str]:
    """The --ignore codes of a command (repeatable, comma-separated; also from --config)."""
    return sorted({code for group in getattr(args, "ignore", ()) for code in group})


def config_from(args: argparse.Namespace) -> CrawlConfig:
    """The run's CrawlConfig from the parsed flags, with the credentials of the environment
    (SITEMAP_AUDIT_AUTH, _COOKIE, _HEADER). The front door scopes the credentials to the run's
    origins and checks the options that go together."""
    from audit.api import credentials

    # --cluster's config (with --state, the front door adds the fence a resumed run takes over)
    spec = getattr(args, "cluster", None)
    cluster: dict[str, Any] = {
        "cluster": spec,
        "cluster_batch": getattr(args, "cluster_batch", None),
    }
    return CrawlConfig(
        rewrites=tuple(getattr(args, "rewrite", ())),
        **credentials(
            getattr(args, "auth", None), getattr(args, "cookie", ()), getattr(args, "header", ())
        ),
        insecure_hosts=tuple(getattr(args, "insecure_host", ())),
        allow_private=getattr(args, "allow_private", False),
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
        **(cluster if spec else {}),
        **{"page_checks": getattr(args, "page_checks", False), **_render_options(args)},
        online=getattr(args, "online", False),
    )


def run_options(args: argparse.Namespace) -> Any:
    """The run options of the parsed flags (audit.api.RunOptions): --state and what reads it,
    --content, --notify and friends, --indexnow and friends, --ignore."""
    from audit.api import RunOptions

    return RunOptions(
        state=getattr(args, "state", None),
        fresh=getattr(args, "fresh", False),
        changed_only=getattr(args, "changed_only", False),
        budget=getattr(args, "budget", None),
        dropped_max=getattr(args, "dropped_max", DEFAULT_DROPPED_MAX),
        content=getattr(args, "content", False),
        notify=tuple(getattr(args, "notify", ())),
        notify_always=getattr(args, "notify_always", False),
        notify_on=getattr(args, "notify_on", None),
        smtp=getattr(args, "smtp", None),
        indexnow=getattr(args, "indexnow", None),
        indexnow_endpoint=getattr(args, "indexnow_endpoint", None),
        dry_run=getattr(args, "dry_run", False),
        ignore=tuple(ignored_codes(args)),
    )
