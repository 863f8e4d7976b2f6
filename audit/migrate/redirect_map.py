"""The redirect map of `sitemap-audit migrate --map FILE.csv`: old URL -> expected new URL.

A CSV file of two columns, `old,new`:

- an exact row: `https://old.example.com/a,https://www.example.com/b`. The old
  column may also be a path (`/a?x=1`), matched against the old URL's path and query;
- a regex rule: the old column starts with `regex:` or `~`; the pattern is searched
  in the old URL (in its path and query when the pattern starts with `^/` or `/`),
  and the new column may use backreferences (`\\1`, `\\g<name>`) to its groups;
- an optional header row (neither column a URL, e.g. `old,new`), blank lines and
  lines starting with `#`.

Exact rows win over rules; rules apply in file order, the first match wins. Every
expected URL must be absolute http(s). Anything else raises `MapError`, whose
message is one line naming the file, the line and the problem, so the CLI can stop
before a single request is sent.

Pure and synchronous: imports only the standard library and audit.urls/errors.
"""

from __future__ import annotations

import contextlib
import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from audit.core.errors import TargetError
from audit.rules.urls import normalize_url

__all__ = ["NO_MAP", "MapError", "RedirectMap", "Rule", "load_map", "parse_map", "path_query"]

_REGEX_PREFIXES = ("regex:", "~")
_RULE_PREFIX = re.compile("|".join(map(re.escape, _REGEX_PREFIXES)))
_BACKREF = re.compile(r"\\(?:(\d+)|g<([^>]*)>|(.))", re.DOTALL)


class MapError(TargetError):
    """A malformed map file: `FILE:LINE: problem` (the CLI exits 2)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One regex rule of the map."""

    pattern: re.Pattern[str]
    template: str
    line: int
    on_path: bool  # matched against path+query instead of the whole URL


def path_query(url: str) -> str:
    """The path (`/` when empty) and `?query` of a URL: what a map row or a new origin keeps."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _absolute(url: str) -> bool:
    absolute = False  # a URL urlsplit refuses, or whose port is not a number, is not
    with contextlib.suppress(ValueError):
        parts = urlsplit(url)
        _ = parts.port
        absolute = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    return absolute


class RedirectMap:
    """Exact rows and regex rules; `expected(old_url)` -> (new URL, map line) or None.
    `name` is the map file's (None: NO_MAP, a run without --map)."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self._exact: dict[str, tuple[str, int]] = {}  # normalised URL or path -> (target, line)
        self._rules: list[Rule] = []

    def __len__(self) -> int:
        return len(self._exact) + len(self._rules)

    def add_exact(self, old: str, new: str, line: int) -> None:
        key = old if old.startswith("/") else normalize_url(old)
        known = self._exact.setdefault(key, (new, line))  # the first row of a key stands
        if known[0] != new:  # (the same row twice is harmless)
            raise MapError(
                f"{self.name}:{line}: {old} is already mapped to {known[0]} on line {known[1]}"
            )

    def add_rule(self, rule: Rule) -> None:
        self._rules.append(rule)

    def expected(self, old_url: str) -> tuple[str, int] | None:
        """The expected new URL of an old URL and the map line that says so, or None."""
        path = path_query(old_url)
        if self._exact:
            hit = self._exact.get(normalize_url(old_url)) or self._exact.get(path)
            if hit is not None:
                return hit
        # else the first rule that matches and expands to an absolute URL, and its line
        for rule in self._rules:
            m = rule.pattern.search(path if rule.on_path else old_url)
            # "": no match, or a template that cannot expand (a trailing backslash passes
            # the load-time check of its groups and escapes)
            target = ""
            if m is not None:
                with contextlib.suppress(re.error, IndexError):
                    target = m.expand(rule.template)
            if _absolute(target):
                return target, rule.line
        return None


NO_MAP: Final = RedirectMap(None)  # a run without --map: no row, no rule (never added to)


def _backref_problem(pattern: re.Pattern[str], ref: re.Match[str]) -> str | None:
    """What is wrong with one backslash sequence of a template (`ref`, a _BACKREF match:
    exactly one of its three alternatives, so exactly one group is set), or None."""
    number, group, other = ref.groups()
    if number is not None:
        # ref[0]: the sequence as written (`\1`, `\g<1>`)
        return _group_count_problem(pattern, ref[0], int(number))
    if group is not None:
        if group.isdigit():
            return _group_count_problem(pattern, ref[0], int(group))
        if group not in pattern.groupindex:
            return f"backreference \\g<{group}> names no group of the pattern"
        return None
    if other not in "\\ntrfvab":  # (a character escape: `other` is the one group set)
        return f"bad escape \\{other} in the new URL (use \\1 or \\g<name> for groups)"
    return None


def _group_count_problem(pattern: re.Pattern[str], shown: str, number: int) -> str | None:
    if number > pattern.groups:
        return f"backreference {shown} but the pattern has {pattern.groups} group(s)"
    return None


def parse_map(lines: Iterable[str], name: str) -> RedirectMap:
    """Parse the text lines of a map file (see the module docstring)."""
    result = RedirectMap(name)
    reader = csv.reader(lines, strict=True)
    first = True
    try:
        for row in reader:
            line = reader.line_num
            cells = _cells(row, name, line)
            if cells is None:
                continue
            if first:
                first = False
                # a first row naming the columns (`old,new`, `Old URL,New URL`): neither cell
                # is a URL, a path or a rule
                old, new = cells
                if not old.startswith(("/", *_REGEX_PREFIXES)) and "://" not in old + new:
                    continue
            _add_row(result, cells, name, line)
    except csv.Error as exc:
        raise MapError(f"{name}:{reader.line_num}: not valid CSV ({exc})") from None
    return result


def _cells(row: list[str], name: str, line: int) -> tuple[str, str] | None:
    """The (old, new) cells of a row, or None for a blank or comment line."""
    cells = list(map(str.strip, row))
    if not any(cells) or cells[0].startswith("#"):  # not any(): an empty row too
        return None
    while len(cells) > 2 and not cells[-1]:  # trailing empty cells of spreadsheets
        cells.pop()
    if len(cells) != 2:
        raise MapError(f"{name}:{line}: expected 2 columns (old,new), found {len(cells)}")
    return cells[0], cells[1]


def _add_row(result: RedirectMap, cells: tuple[str, str], name: str, line: int) -> None:
    """One row of the map: a regex rule or an exact row."""
    old, new = cells
    if not all(cells):
        raise MapError(f"{name}:{line}: empty {'old' if not old else 'new'} column")
    prefix = _RULE_PREFIX.match(old)
    if prefix is not None:
        result.add_rule(_rule(old[prefix.end() :].strip(), new, name, line))
        return
    if not (old.startswith("/") or _absolute(old)):
        raise MapError(
            f"{name}:{line}: the old URL {old!r} is neither an absolute http(s) URL "
            "nor a path starting with /"
        )
    if not _absolute(new):
        raise MapError(f"{name}:{line}: the new URL {new!r} is not an absolute http(s) URL")
    result.add_exact(old, new, line)


def _rule(source: str, new: str, name: str, line: int) -> Rule:
    """A regex rule: the pattern compiles and the template's groups exist."""
    if not source:
        raise MapError(f"{name}:{line}: empty regular expression")
    try:
        pattern = re.compile(source)
    except re.error as exc:
        raise MapError(f"{name}:{line}: broken regular expression {source!r}: {exc}") from None
    for m in _BACKREF.finditer(new):  # every backreference names a group of the pattern
        problem = _backref_problem(pattern, m)
        if problem is not None:
            raise MapError(f"{name}:{line}: {problem}")
    if not _absolute(_BACKREF.sub("x", new)):
        raise MapError(f"{name}:{line}: the new URL {new!r} is not an absolute http(s) URL")
    return Rule(pattern, new, line, source.startswith(("^/", "/")))


def load_map(path: str | Path) -> RedirectMap:
    """Read and parse a map file; MapError (one line) if it cannot be read or is malformed."""
    name = str(path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return parse_map(fh, name)
    except UnicodeDecodeError as exc:
        raise MapError(f"{name}: not UTF-8 ({exc.reason})") from None
    except OSError as exc:
        why = _UNREADABLE.get(type(exc), f"cannot read the map file: {exc.strerror}")
        raise MapError(f"{name}: {why}") from None


# why a map file cannot be read, by the OSError opening it raised (else its strerror)
_UNREADABLE: dict[type[OSError], str] = {
    FileNotFoundError: "no such map file",
    IsADirectoryError: "is a directory, not a map file",
}
