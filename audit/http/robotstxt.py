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
  `$` anchors the end; the longest matching pattern (in octets) wins, a tie goes to Allow;
  no match allows. An empty pattern is no rule.
- `Sitemap:` lines are global. `Crawl-delay` and `Request-rate` (not in the RFC) apply to
  the agents their group names above them (`User-agent: a`, `Crawl-delay: 5`,
  `User-agent: b`, `Disallow: /x`: both obey the Disallow, only `a` the delay); an agent
  keeps its longest delay and lowest rate.

Imports only the standard library and never aiohttp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = [
    "Group",
    "RobotsTxt",
    "Rule",
    "group_name",
    "normalise_path",
    "parse_robots_txt",
    "path_of",
]

_LINES = re.compile(r"\r\n|\r|\n")
_USER_AGENT = frozenset({"user-agent", "useragent", "user agent"})
# Google reads these misspellings as disallow (its robots.txt parser's accepted typos)
_DISALLOW = frozenset({"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_SITEMAP = frozenset({"sitemap", "site-map"})
# RFC 9309 2.2.1: a product token is letters, `_` and `-` (Google reads the same prefix)
_IDENTIFIER = re.compile(r"[A-Za-z_-]+")
_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d*)?)\s*([smhd]?)", re.IGNORECASE)
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789abcdefABCDEF")


def normalise_path(text: str) -> str:
    """Percent-encoding normalised for comparison (RFC 9309 2.2.2, RFC 3986 6.2.2)."""
    if text.isascii() and "%" not in text and " " not in text:
        return text  # the common case: nothing to normalise
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if ord(ch) > 0x7E or ord(ch) <= 0x20:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def path_of(url: str) -> str:
    """The path and query a URL is matched with (`/` for an empty path), normalised."""
    if url.startswith("/"):
        target = url.split("#", 1)[0]
    else:
        try:
            parts = urlsplit(url)
        except ValueError:
            return "/"
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    return normalise_path(target)


def group_name(value: str) -> str:
    """The product token a user-agent line names: `*`, or its leading identifier, lower-case.

    `sitemap-audit/2.0` names `sitemap-audit`, `Foo Bar` names `foo`, `AB42bot` names `ab`
    (RFC 9309's identifier has no digits); a value that starts with none names nothing.
    """
    value = value.strip()
    if value.startswith("*"):
        return "*"
    found = _IDENTIFIER.match(value)
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

    def __post_init__(self) -> None:
        body = self.pattern
        anchored = body.endswith("$")
        if anchored:
            body = body[:-1]
        parts = body.split("*")
        object.__setattr__(self, "_anchored", anchored)
        object.__setattr__(self, "_plain", len(parts) == 1)
        object.__setattr__(self, "_head", parts[0])
        # runs of `*` and a trailing `*` change nothing
        object.__setattr__(self, "_parts", (*[p for p in parts[1:-1] if p], parts[-1]))

    def matches(self, path: str) -> bool:
        """Does the pattern match this normalised path (and query)?"""
        if not path.startswith(self._head):
            return False
        if self._plain:  # no wildcard: a prefix, or the whole path when anchored
            return not self._anchored or len(path) == len(self._head)
        pos = len(self._head)
        *middle, last = self._parts
        for part in middle:
            # leftmost is always safe for `*`-only patterns: it leaves the most room after
            found = path.find(part, pos)
            if found < 0:
                return False
            pos = found + len(part)
        if self._anchored:
            return len(path) - len(last) >= pos and path.endswith(last)
        return not last or path.find(last, pos) >= 0


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
    _ordered: list[Rule] | None = field(default=None, repr=False)

    def allowed(self, url: str) -> bool:
        """May this group's agents fetch `url` (a URL, or a path starting with `/`)?"""
        if self._ordered is None:
            # longest first, Allow before Disallow on a tie: the first match decides
            self._ordered = sorted(self.rules, key=lambda r: (-len(r.pattern), not r.allow))
        path = path_of(url)
        for rule in self._ordered:
            if rule.matches(path):
                return rule.allow
        return True


@dataclass(slots=True)
class RobotsTxt:
    """A parsed robots.txt: its groups in file order and its global `Sitemap:` lines."""

    groups: list[Group] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    _chosen: dict[str, Group | None] = field(default_factory=dict, repr=False)

    def group(self, token: str) -> Group | None:
        """The group `token` obeys: its own groups merged, else `*`'s, else None (all allowed).

        Its crawl_delay is the longest and its request_rate the lowest given for that agent.
        """
        wanted = token.strip().lower()
        if wanted not in self._chosen:
            own = [g for g in self.groups if wanted in g.agents] if wanted != "*" else []
            key = wanted if own else "*"  # whose Crawl-delay and Request-rate apply
            chosen = own or [g for g in self.groups if "*" in g.agents]
            merged: Group | None = None
            if chosen:
                merged = Group()
                for g in chosen:
                    merged.agents += [a for a in g.agents if a not in merged.agents]
                    merged.rules += g.rules
                delays = [g.delays[key] for g in chosen if key in g.delays]
                rates = [g.rates[key] for g in chosen if key in g.rates]
                merged.crawl_delay = max(delays) if delays else None
                merged.request_rate = min(rates) if rates else None
            self._chosen[wanted] = merged
        return self._chosen[wanted]

    def allowed(self, url: str, token: str) -> bool:
        """May `token` fetch `url`? (`/robots.txt` itself is robots.py's concern.)"""
        group = self.group(token)
        return True if group is None else group.allowed(url)


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


def parse_robots_txt(text: str) -> RobotsTxt:
    """Parse a decoded robots.txt body (a leading BOM is skipped)."""
    out = RobotsTxt()
    current: Group | None = None
    has_rules = False  # the current group has an allow/disallow line: a user-agent starts anew
    for number, raw in enumerate(_LINES.split(text.lstrip("\ufeff")), start=1):
        pair = _key_value(raw.split("#", 1)[0].strip())
        if pair is None:
            continue
        key, value = pair
        if key in _USER_AGENT:
            if current is None or has_rules:
                current = Group()
                out.groups.append(current)
                has_rules = False
            name = group_name(value)
            if name and name not in current.agents:
                current.agents.append(name)
        elif key == "allow" or key in _DISALLOW:
            if current is None:
                continue  # a rule outside any group applies to nobody
            has_rules = True
            if value:
                current.rules.append(Rule(key == "allow", normalise_path(value), number))
        elif key in _SITEMAP:
            if value:
                out.sitemaps.append(value)
        elif key == "crawl-delay" and current is not None:
            delay = _seconds(value)
            if delay is not None:
                for agent in current.agents:
                    current.delays[agent] = max(current.delays.get(agent, 0.0), delay)
        elif key == "request-rate" and current is not None:
            rate = _rate(value)
            if rate is not None:
                for agent in current.agents:
                    current.rates[agent] = min(current.rates.get(agent, rate), rate)
    return out
