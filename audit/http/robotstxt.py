"""robots.txt text -> groups and rules; which paths a product token may fetch (RFC 9309).

Pure (no I/O): `parse_robots_txt()` reads a decoded body into a `RobotsTxt`;
`RobotsTxt.group(token)` is the group a product token obeys and `Group.allowed(url)` applies
its rules. What robots.py does with a fetched file (status mapping, `/robots.txt` always
allowed, Crawl-delay on the host) stays there.

- Lines end at CR, LF or CRLF; `#` starts a comment; keys are case-insensitive. A line
  without a colon is read as key and value when it holds exactly two words (`Disallow /`,
  `User-agent FooBot`): Google accepts that mistake, for every key alike.
- Groups (RFC 9309 2.2.1, 2.2.4): one or more consecutive user-agent lines start a group;
  a user-agent line after an allow or disallow line starts the next one. Any other record
  (Crawl-delay, Request-rate, Sitemap, unknown lines, blank lines) ends nothing. Rules
  before the first user-agent line belong to no group. Groups naming the same agent merge.
- A group's name is the product token at the start of its value (`sitemap-audit` of
  `sitemap-audit/2.0`), matched case-insensitively with the whole token; the token's own
  groups, else `*`'s, else none (everything allowed).
- Matching (RFC 9309 2.2.2, 2.2.3): the path and query of the URL against each pattern,
  both with percent-encoding normalised (non-ASCII and spaces encoded as UTF-8, escapes of
  unreserved characters decoded, other escapes upper-cased); `*` matches any run, a final
  `$` anchors the end; `%2A` and `%24` in a pattern are a literal `*` and `$` (RFC 9309
  2.2.3, Figure 6), so the URL's own `*` and `$` (and a `$` inside a pattern) are compared
  as those escapes; the longest matching pattern (in octets) wins, a tie goes to Allow;
  no match allows. An empty pattern is no rule.
- Usage lines (contracts/agents.md, "Usage signals"): `Content-Signal` and `Content-Usage`
  are neither user-agent lines nor rules, so they end and start no group. A group's lines
  apply to every agent it names; lines before the first user-agent line are site-wide (a
  `Content-Usage` value starting with `/` names a path and is left out).
  `RobotsTxt.usage(token)` layers them: site-wide, then `*`'s groups, then the token's own.
- `Sitemap:` lines are global. `Crawl-delay` and `Request-rate` (not in the RFC) apply to
  the agents their group names above them (`User-agent: a`, `Crawl-delay: 5`,
  `User-agent: b`, `Disallow: /x`: both obey the Disallow, only `a` the delay); an agent
  keeps its longest delay and lowest rate.

Imports only the standard library and never aiohttp.
"""

from __future__ import annotations

import contextlib
import re
from bisect import insort
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import cast
from urllib.parse import urlsplit

from audit.core.agent import usage_pairs

__all__ = [
    "Group",
    "RobotsTxt",
    "Rule",
    "UsageLine",
    "group_name",
    "normalise_path",
    "parse_robots_txt",
    "path_of",
]

_LINES = re.compile(r"\r\n|\r|\n")
_TRIED: Callable[[Rule], tuple[int, bool]] = attrgetter("order")  # a group's rules' order
_USER_AGENT = frozenset({"user-agent", "useragent", "user agent"})
# Google reads these misspellings as disallow (its robots.txt parser's accepted typos)
_DISALLOW = frozenset({"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_SITEMAP = frozenset({"sitemap", "site-map"})
_SIGNAL, _USAGE = "content-signal", "content-usage"
# one usage line: its key (content-signal or content-usage) and its pairs
UsageLine = tuple[str, dict[str, str]]
# RFC 9309 2.2.1: a user-agent line names `*`, or a product token of letters, `_` and `-`
# (Google reads the same prefix)
_GROUP_NAME = re.compile(r"\*|[A-Za-z_-]+")
_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d*)?)\s*([smhd]?)", re.IGNORECASE)
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# A path's units: a `%XX` escape, else one character (a `%` without two hex digits too)
_UNITS_OF_PATH = re.compile(r"%[0-9A-Fa-f]{2}|.", re.DOTALL)
# a URL's `*` and `$` as a pattern spells them literally (RFC 9309 2.2.3, Figure 6)
_LITERALS = str.maketrans({"*": "%2A", "$": "%24"})
# After an absolute URL's `://`: its authority, then its path and its query (a fragment ends
# both). Every part may be empty, so it matches at any position: never None.
_PATH_QUERY = cast(
    "Callable[[str, int], re.Match[str]]",
    re.compile(r"[^/?#]*([^?#]*)(?:\?([^#]*))?").match,
)


def _normal_unit(unit: re.Match[str]) -> str:
    """One unit of a path as it is compared: a `%XX` escape of an unreserved character
    decoded, any other upper-cased; non-ASCII, controls and space as UTF-8 escapes."""
    text = unit.group()
    if len(text) == 3:  # an escape
        decoded = chr(int(text[1:], 16))
        return decoded if decoded in _UNRESERVED else text.upper()
    if not 0x20 < ord(text) <= 0x7E:  # not printable ASCII
        return "%" + text.encode("utf-8", "surrogatepass").hex("%").upper()
    return text


def normalise_path(text: str) -> str:
    """Percent-encoding normalised for comparison (RFC 9309 2.2.2, RFC 3986 6.2.2)."""
    if text.isascii() and "%" not in text and " " not in text:
        return text  # the common case: nothing to normalise
    return _normalised(text)


def _normalised(text: str) -> str:
    """`normalise_path` unit by unit (`_normal_unit`): escapes normalised, the rest encoded."""
    return _UNITS_OF_PATH.sub(_normal_unit, text)


def path_of(url: str) -> str:
    """The path and query a URL is matched with (`/` for an empty path), normalised.

    A literal `*` or `$` of the URL becomes `%2A` or `%24`: in a pattern those escapes are
    the literal characters, while a bare `*` or `$` is a wildcard (RFC 9309 2.2.3).

    An absolute URL's path (`/` when empty) and `?query` are read by one match after its
    `://` (once per listed URL: urlsplit costs several times this); one with characters
    urlsplit would strip (tab, CR, LF), or without `://`, goes through urlsplit.
    """
    if url.startswith("/"):
        target = url.split("#", 1)[0]
    else:
        start = url.find("://")
        if start < 0 or "\t" in url or "\n" in url or "\r" in url:
            path = query = ""  # (a URL urlsplit cannot read: ValueError)
            with contextlib.suppress(ValueError):
                parts = urlsplit(url)
                path, query = parts.path, parts.query
        else:
            path, query = _PATH_QUERY(url, start + 3).group(1, 2)
        target = (path or "/") + ("?" + query if query else "")
    if target.isascii() and "%" not in target and " " not in target:
        if "*" in target or "$" in target:
            return target.translate(_LITERALS)
        return target  # normalise_path's common case, without its call (once per URL)
    return _normalised(target).translate(_LITERALS)


def group_name(value: str) -> str:
    """The product token a user-agent line names: `*`, or its leading identifier, lower-case.

    `sitemap-audit/2.0` names `sitemap-audit`, `Foo Bar` names `foo`, `AB42bot` names `ab`
    (RFC 9309's identifier has no digits); a value that starts with none names nothing.
    """
    found = _GROUP_NAME.match(value.strip())
    return found.group(0).lower() if found else ""


@dataclass(frozen=True, slots=True)
class Rule:
    """One allow or disallow line; `pattern` is normalised, `$` and `*` kept."""

    allow: bool
    pattern: str
    line: int = 0
    _head: str = field(init=False, repr=False, compare=False)
    _parts: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _anchored: bool = field(init=False, repr=False, compare=False)
    _plain: bool = field(init=False, repr=False, compare=False)
    # the order rules are tried in: longest pattern first, Allow before Disallow on a tie
    order: tuple[int, bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        anchored = self.pattern.endswith("$")
        body = self.pattern.removesuffix("$")
        # a `$` before the end is literal (Google); the URL's `$` is compared as `%24`
        parts = body.replace("$", "%24").split("*")
        object.__setattr__(self, "order", (-len(self.pattern), not self.allow))
        object.__setattr__(self, "_anchored", anchored)
        object.__setattr__(self, "_plain", len(parts) == 1)
        object.__setattr__(self, "_head", parts[0])
        # runs of `*` and a trailing `*` change nothing
        object.__setattr__(self, "_parts", (*filter(None, parts[1:-1]), parts[-1]))

    def matches(self, path: str) -> bool:
        """Does the pattern match this normalised path (and query)?"""
        if not path.startswith(self._head):
            return False
        if self._plain:  # no wildcard: a prefix, or the whole path when anchored
            return not self._anchored or len(path) == len(self._head)
        # the parts between the first and the last `*`, in order, each where it is first
        # found (leftmost is always safe for `*`-only patterns: it leaves the most room after)
        pos = len(self._head)
        for part in self._parts[:-1]:
            found = path.find(part, pos)
            if found < 0:
                return False
            pos = found + len(part)
        last = self._parts[-1]  # then the last part: at the end when anchored, else anywhere
        if self._anchored:  # (at the end, at or after pos)
            return path.endswith(last, pos)
        return path.find(last, pos) >= 0  # ("" is found at pos: pos is within the path)


@dataclass(slots=True)
class Group:
    """A group of the file, or the rules one product token obeys (its groups merged)."""

    agents: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None  # seconds, for the token the group was chosen for
    request_rate: float | None = None  # requests per second, likewise
    # Crawl-delay and Request-rate by agent: such a line is meant for the agents named
    # above it, even when a later user-agent line shares the group's rules
    delays: dict[str, float] = field(default_factory=dict, repr=False)
    rates: dict[str, float] = field(default_factory=dict, repr=False)
    usage_lines: list[UsageLine] = field(default_factory=list, repr=False)

    def allowed(self, url: str) -> bool:
        """May this group's agents fetch `url` (a URL, or a path starting with `/`)? Its
        rules are kept in the order they are tried (`Rule.order`): the first match decides."""
        path = path_of(url)
        for rule in self.rules:
            if rule.matches(path):
                return rule.allow
        return True


@dataclass(slots=True)
class RobotsTxt:
    """A parsed robots.txt: its groups in file order and its global `Sitemap:` lines."""

    groups: list[Group] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    usage_lines: list[UsageLine] = field(default_factory=list)  # site-wide ones
    # the groups that name an agent, in file order (filled as the user-agent lines are read)
    _by_agent: dict[str, list[Group]] = field(default_factory=dict, repr=False)
    _chosen: dict[str, Group] = field(default_factory=dict, repr=False)

    def usage(self, token: str) -> tuple[dict[str, str], dict[str, str]]:
        """The agent's effective `Content-Signal` and `Content-Usage` values: per name,
        the site-wide lines, then the `*` groups', then its own groups', later winning."""
        # (for `*` itself its groups' lines come twice: the same updates again, no change)
        groups = [*self._naming("*"), *self._naming(token.strip().lower())]
        values: dict[str, dict[str, str]] = {_SIGNAL: {}, _USAGE: {}}  # by the line's key
        for key, pairs in [*self.usage_lines, *(line for g in groups for line in g.usage_lines)]:
            values[key].update(pairs)
        return values[_SIGNAL], values[_USAGE]

    def group(self, token: str) -> Group:
        """The group `token` obeys: its own groups merged, else `*`'s, else an empty one
        (no rule: all allowed).

        Its crawl_delay is the longest and its request_rate the lowest given for that agent.
        """
        wanted = token.strip().lower()
        if wanted not in self._chosen:  # its own groups and delays and rates, else `*`'s
            own = self._naming(wanted)
            self._chosen[wanted] = _merged(own, wanted) if own else _merged(self._naming("*"), "*")
        return self._chosen[wanted]

    def _naming(self, agent: str) -> list[Group]:
        """The groups that name `agent`, in file order."""
        return self._by_agent.get(agent, [])

    def allowed(self, url: str, token: str) -> bool:
        """May `token` fetch `url`? (`/robots.txt` itself is robots.py's concern.)"""
        return self.group(token).allowed(url)


def _merged(chosen: list[Group], key: str) -> Group:
    """One group of the rules of `chosen`, with the longest delay and lowest rate of `key`
    (none chosen: a group without agents, rules, delay or rate)."""
    merged = Group()
    for g in chosen:
        merged.agents += g.agents
        merged.rules += g.rules
    merged.agents = list(dict.fromkeys(merged.agents))  # each once, in order
    merged.rules.sort(key=_TRIED)  # (stable: of equal order, the earlier group's first)
    merged.crawl_delay = max((g.delays[key] for g in chosen if key in g.delays), default=None)
    merged.request_rate = min((g.rates[key] for g in chosen if key in g.rates), default=None)
    return merged


def _key_value(line: str) -> tuple[str, str] | None:
    key, colon, value = line.partition(":")
    if colon:
        return key.strip().lower(), value.strip()
    words = line.split()
    if len(words) == 2:  # `Disallow /`: a forgotten colon (Google accepts it)
        return words[0].lower(), words[1]
    return None


def _seconds(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds < float("inf") else None


def _rate(value: str) -> float | None:
    found = _RATE.match(value)
    if found is None:
        return None
    requests, per, unit = int(found.group(1)), float(found.group(2)), found.group(3).lower()
    window = per * _UNITS[unit]
    return requests / window if requests > 0 and window > 0 else None


class _Parser:
    """The state of one pass over a file: the groups so far and the one being read."""

    def __init__(self) -> None:
        self.out = RobotsTxt()
        # Before the first user-agent line, a stand-in for a group that is no group of the
        # file: it names no agent (a delay or rate there is nobody's), its rules apply to
        # nobody, and its usage lines are the site-wide ones.
        self.current = Group(usage_lines=self.out.usage_lines)
        # the current group has an allow/disallow line, or is the stand-in: a user-agent
        # line starts anew
        self.has_rules = True

    def user_agent(self, value: str, number: int) -> None:
        """A user-agent line: its product token joins the group being read, the current
        one until it has rules."""
        if self.has_rules:
            self.current = Group()
            self.out.groups.append(self.current)
            self.has_rules = False
        name = group_name(value)
        if name and name not in self.current.agents:
            self.current.agents.append(name)
            self.out._by_agent.setdefault(name, []).append(self.current)

    def rule(self, allow: bool, value: str, number: int) -> None:
        """An allow or disallow line: a rule of the current group (an empty one is none)."""
        self.has_rules = True
        if value:
            insort(self.current.rules, Rule(allow, normalise_path(value), number), key=_TRIED)

    def ignore(self, value: str, number: int) -> None:
        """An unknown key, or one this module does not use."""

    def allow(self, value: str, number: int) -> None:
        self.rule(True, value, number)

    def disallow(self, value: str, number: int) -> None:
        self.rule(False, value, number)

    def sitemap(self, value: str, number: int) -> None:
        """A sitemap line: global, whatever group it stands in."""
        if value:
            self.out.sitemaps.append(value)

    def usage_line(self, key: str, value: str) -> None:
        """A Content-Signal or Content-Usage line: the current group's (the stand-in's
        are the site-wide ones)."""
        pairs = usage_pairs(value)
        if pairs:
            self.current.usage_lines.append((key, pairs))

    def content_signal(self, value: str, number: int) -> None:
        self.usage_line(_SIGNAL, value)

    def content_usage(self, value: str, number: int) -> None:
        if not value.startswith("/"):  # (preferences for a path: left out)
            self.usage_line(_USAGE, value)

    def crawl_delay(self, value: str, number: int) -> None:
        """A Crawl-delay line: an agent keeps its longest delay."""
        self._per_agent("delays", _seconds(value), max)

    def request_rate(self, value: str, number: int) -> None:
        """A Request-rate line: an agent keeps its lowest rate."""
        self._per_agent("rates", _rate(value), min)

    def _per_agent(
        self, table: str, value: float | None, keep: Callable[[float, float], float]
    ) -> None:
        """A Crawl-delay or Request-rate `value` for the agents the current group names so
        far, in its `table` (`delays` or `rates`), kept against their earlier one."""
        if value is not None:
            given: dict[str, float] = getattr(self.current, table)
            for agent in self.current.agents:
                given[agent] = keep(given.get(agent, value), value)


# what each key of a line means; any other key is ignored (`_Parser.ignore`)
_RECORDS: dict[str, Callable[[_Parser, str, int], None]] = {
    **dict.fromkeys(_USER_AGENT, _Parser.user_agent),
    "allow": _Parser.allow,
    **dict.fromkeys(_DISALLOW, _Parser.disallow),
    **dict.fromkeys(_SITEMAP, _Parser.sitemap),
    "crawl-delay": _Parser.crawl_delay,
    "request-rate": _Parser.request_rate,
    _SIGNAL: _Parser.content_signal,
    _USAGE: _Parser.content_usage,
}


def parse_robots_txt(text: str) -> RobotsTxt:
    """Parse a decoded robots.txt body (a leading BOM is skipped)."""
    parser = _Parser()
    for number, raw in enumerate(_LINES.split(text.lstrip("\ufeff")), start=1):
        pair = _key_value(raw.split("#", 1)[0].strip())
        if pair is not None:
            key, value = pair
            _RECORDS.get(key, _Parser.ignore)(parser, value, number)
    return parser.out
