"""The intent file of `--intent FILE` (contracts/nights.md section 3): what URLs must do.

A CSV file (RFC 4180 quoting, UTF-8 with or without a BOM) of `url,action[,target]` rows:

- `url` is an absolute http(s) URL or a path starting with `/`; a final `*` makes the row
  a prefix row (`*` nowhere else);
- `action` is `keep`, `redirect` or `gone`, in any case;
- `target` (only on a `redirect` row, optional there) is an absolute http(s) URL or a path;
  on a prefix row it may end with `*`, the rest of the URL after the prefix.

Blank lines and lines whose first non-blank character is `#` are skipped; the first row
left is a header when its first two cells are `url` and `action`. Anything malformed
raises `IntentError`, one line `FILE:LINE: problem`, before a request is sent.

`IntentPlan.match(url)` finds the row that applies (an exact row beats every prefix row;
among prefix rows the longest match wins; a path row matches on the path and query, on
the origins the plan is scoped to, or on any origin). `judge(match, served)` says whether
an answer does what the row says, with the `intent-violated` message. URLs compare in the
normalisation of `loc-duplicate` (`normalize_url`).

Pure and synchronous: imports the standard library, core and rules only; knows no HTTP.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from audit.core.records import Hop, UrlResult
from audit.rules.urls import normalize_url, origin

__all__ = [
    "ACTIONS",
    "IntentError",
    "IntentPlan",
    "Match",
    "Row",
    "Served",
    "Verdict",
    "judge",
    "load_intent",
    "parse_intent",
]

Action = Literal["keep", "redirect", "gone"]
ACTIONS: Final[tuple[Action, ...]] = ("keep", "redirect", "gone")
_ACTION_OF: Final[dict[str, Action]] = {a: a for a in ACTIONS}  # the action a cell names
_PERMANENT: Final = frozenset({301, 308})
_GONE: Final = frozenset({404, 410})


class IntentError(ValueError):
    """A malformed or unreadable intent file: `FILE:LINE: problem`. The callers make it a
    TargetError (the CLI exits 2); the rules know no errors module (it loads HTTP)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the plan. `key` is the normalised `url` without its final `*`: an
    absolute URL, or the path and query of a path row."""

    url: str
    action: Action
    target: str | None
    line: int
    key: str
    prefix: bool
    path: bool


@dataclass(frozen=True, slots=True)
class Match:
    """The row that applies to a URL, and for a `redirect` row with a target the URL it
    must end on (a path resolved against the URL's origin, a `*` filled in)."""

    row: Row
    url: str
    expected: str | None


@dataclass(frozen=True, slots=True)
class Served:
    """What a URL's check got, as its url record says: the final status (None: no
    answer), every 3xx hop in order, the final URL, and whether it is indexable."""

    status: int | None
    redirects: tuple[Hop, ...] = ()
    final_url: str | None = None
    indexable: bool = False
    indexability: str | None = None  # the first reason it is not indexable
    error: str | None = None

    @classmethod
    def of(cls, record: UrlResult | Mapping[str, Any]) -> Served:
        """The answer a url record (a UrlResult, or its jsonl dict as `UrlResult.to_json`
        writes it: status, final_url, redirects and error always there) stands for."""
        if isinstance(record, UrlResult):
            extra = record.extra or {}
            return cls(
                record.status,
                record.redirects,
                record.final_url,
                extra.get("indexable") is True,
                extra.get("indexability"),
                record.error,
            )
        return cls(
            record["status"],
            tuple(Hop(h["url"], h["status"]) for h in record["redirects"]),
            record["final_url"],
            record.get("indexable") is True,  # (the extras: only when the record has them)
            record.get("indexability"),
            record["error"],
        )

    def text(self) -> str:
        """`200`, or `301 -> https://www.example.com/ (200)`: the first status, then after
        a redirect every further hop and the final URL with its status."""
        if not self.redirects:
            return _status_text(self.status, self.error)
        parts = [str(self.redirects[0].status)]
        parts += [f"{h.url} ({h.status})" for h in self.redirects[1:]]
        last = f"{self.final_url} ({_status_text(self.status, self.error)})"
        # a loop ends on its last hop (a first part, a bare status, is never `last`)
        if parts[-1] != last:
            parts.append(last)
        return " -> ".join(parts)


def _status_text(status: int | None, error: str | None) -> str:
    if status is not None:
        return str(status)
    return f"no answer: {error}" if error else "no answer"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A URL judged under its row: `ok`, and the `intent-violated` message when not."""

    action: Action
    line: int
    ok: bool
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        """The url record's `intent` object."""
        return {"action": self.action, "line": self.line, "ok": self.ok}


Same = Callable[[str, str], bool]


def _same_url(final: str, expected: str) -> bool:
    return normalize_url(final) == normalize_url(expected)


def judge(match: Match, served: Served, *, file: str, same: Same = _same_url) -> Verdict:
    """Does the answer do what the row says (contracts/nights.md section 3, Judgement)?
    `same(final, expected)` compares a redirect's final URL with the expected one
    (normalised equality; `migrate` compares by path on another origin)."""
    row = match.row
    if _RULES[row.action](match, served, same):
        return Verdict(row.action, row.line, True)
    want = f"redirect to {match.expected}" if match.expected else row.action
    message = f"intent {want} ({file}:{row.line}), served {served.text()}"
    if row.action == "keep" and _plain_200(served) and served.indexability:
        message += f", not indexable ({served.indexability})"
    return Verdict(row.action, row.line, False, message)


def _plain_200(served: Served) -> bool:
    return served.status == 200 and not served.redirects


def _keeps(match: Match, served: Served, same: Same) -> bool:
    return _plain_200(served) and served.indexable


def _gone(match: Match, served: Served, same: Same) -> bool:
    return not served.redirects and served.status in _GONE


def _redirects(match: Match, served: Served, same: Same) -> bool:
    """Permanent redirects only, to a 200: to the expected URL, or (none given) to a page
    other than the site's root."""
    hops = served.redirects
    if not hops or served.status != 200 or not all(h.status in _PERMANENT for h in hops):
        return False
    final = served.final_url or ""
    if match.expected is None:
        return _split(normalize_url(final))[1].split("?", 1)[0] != "/"
    return same(final, match.expected)


_RULES: Final[dict[str, Callable[[Match, Served, Same], bool]]] = {
    "keep": _keeps,
    "redirect": _redirects,
    "gone": _gone,
}


# --- URLs as the rows see them ---------------------------------------------------------


def _split(norm: str) -> tuple[str, str]:
    """A normalised absolute URL as (origin, path and query); the fragment is dropped."""
    cut = norm.find("/", norm.find("://") + 3)
    if cut < 0:
        return norm, "/"
    return norm[:cut], norm[cut:].split("#", 1)[0]


# --- the plan ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Table:
    """Rows keyed by their normalised url: exact rows, and prefix rows by length."""

    exact: dict[str, Row] = field(default_factory=dict)
    prefix: dict[str, Row] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)  # of the prefix keys, longest first

    def add(self, row: Row) -> None:
        if not row.prefix:
            self.exact[row.key] = row
            return
        self.prefix[row.key] = row
        # few distinct lengths: a short list
        self.lengths = sorted({*self.lengths, len(row.key)}, reverse=True)

    def longest(self, text: str) -> Row | None:
        for n in self.lengths:  # a key longer than `text` is never its text[:n]
            row = self.prefix.get(text[:n])
            if row is not None:
                return row
        return None


_NO_ROWS: Final = _Table()  # the path rows of an origin the plan is not scoped to: none


class IntentPlan:
    """The rows of one intent file, and the row that applies to a URL."""

    def __init__(self, file: str) -> None:
        """An empty plan of intent file `file`; `add` gives it its rows."""
        self.file = file
        self.rows: list[Row] = []
        self._absolute = _Table()
        self._paths = _Table()
        # the path rows that apply on an origin ("scheme://host[:port]", normalised): all of
        # them on the origins a scoped plan names, and on any other origin `_elsewhere`'s
        # (all of them again for a plan not scoped, none for a scoped one)
        self._on: dict[str, _Table] = {}
        self._elsewhere = self._paths

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        (self._paths if row.path else self._absolute).add(row)

    def scoped(self, origins: Iterable[str] | None) -> IntentPlan:
        """This plan with path rows applying only on these origins (crawl: the TARGETs'
        origins); None: on any origin (migrate). The rows are shared."""
        plan = IntentPlan(self.file)
        plan.rows, plan._absolute = self.rows, self._absolute
        plan._paths = plan._elsewhere = self._paths
        if origins is not None:
            plan._on = {_split(normalize_url(o))[0]: self._paths for o in origins}
            plan._elsewhere = _NO_ROWS
        return plan

    def exact_urls(self) -> list[Row]:
        """The absolute exact rows (a crawl requests those no sitemap lists), in file order
        (parse_intent admits each key once)."""
        return list(self._absolute.exact.values())

    def match(self, url: str) -> Match | None:
        """The row that applies to `url`, or None."""
        norm = normalize_url(url)
        home, rest = _split(norm)
        paths = self._on.get(home, self._elsewhere)
        row = (
            self._absolute.exact.get(norm)
            or paths.exact.get(rest)
            or self._prefix_row(norm, home, rest, paths)
        )
        if row is None:
            return None
        # Where a redirect row says the URL must end (only a redirect row has a target,
        # _check_target): the target, its `*` filled with the rest of the URL after the
        # prefix row's key, a path resolved against the URL's origin.
        expected = row.target
        if expected is not None:
            if expected.endswith("*"):
                expected = expected[:-1] + (rest if row.path else norm)[len(row.key) :]
            if expected.startswith("/"):
                expected = home + expected
        return Match(row, url, expected)

    def _prefix_row(self, norm: str, home: str, rest: str, paths: _Table) -> Row | None:
        """The prefix row with the longest match (an absolute one on a tie)."""
        best = self._absolute.longest(norm)
        by_path = paths.longest(rest)
        if by_path is None:
            return best
        if best is None or len(home) + len(by_path.key) > len(best.key):
            return by_path
        return best


# --- reading the file --------------------------------------------------------------------


def load_intent(path: str | Path) -> IntentPlan:
    """Read and check an intent file; IntentError (`FILE:LINE: problem`) otherwise."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise IntentError(f"{name}:1: cannot be read: is a directory") from None
    except OSError as exc:
        raise IntentError(f"{name}:1: cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IntentError(f"{name}:{line}: not UTF-8 ({exc.reason})") from None
    return parse_intent(text, name)


def parse_intent(text: str, name: str) -> IntentPlan:
    """The plan of an intent file's text (a BOM already removed); `name` is FILE."""
    plan = IntentPlan(name)
    seen: dict[tuple[str, bool, bool], int] = {}
    for i, (line, cells) in enumerate(_records(text.removeprefix("\ufeff"), name)):
        if i == 0 and list(map(str.lower, cells[:2])) == ["url", "action"]:
            continue  # the header
        row = _row(cells, name, line)
        where = (row.key, row.prefix, row.path)
        if where in seen:
            raise IntentError(f"{name}:{line}: {row.url} is already on line {seen[where]}")
        seen[where] = line
        plan.add(row)
    return plan


def _records(text: str, name: str) -> Iterable[tuple[int, list[str]]]:
    """(first line, trimmed cells) of every CSV record that is not skipped. A record may
    span lines inside quotes (RFC 4180); skipped lines are only looked for between
    records."""
    lines = [f"{piece}\n" for piece in text.split("\n")]  # the file's lines are \n's
    i = 0
    while i < len(lines):
        start, i = i, i + 1
        if lines[start].strip()[:1] in ("", "#"):  # blank, or a comment
            continue
        chunk = lines[start]
        while chunk.count('"') % 2 and i < len(lines):  # a quoted cell goes on
            chunk, i = chunk + lines[i], i + 1
        yield start + 1, _cells(chunk, name, start + 1)


def _cells(chunk: str, name: str, line: int) -> list[str]:
    try:
        rows = list(csv.reader([chunk], strict=True))
    except csv.Error as exc:
        raise IntentError(f"{name}:{line}: not valid CSV ({exc})") from None
    if len(rows) != 1:
        raise IntentError(f"{name}:{line}: not valid CSV (a quoted cell is never closed)")
    return [c.strip() for c in rows[0]]


def _row(cells: list[str], name: str, line: int) -> Row:
    if not 2 <= len(cells) <= 3:
        raise IntentError(
            f"{name}:{line}: expected 2 or 3 cells (url,action[,target]), found {len(cells)}"
        )
    url, word, target = [*cells, ""][:3]  # an empty third cell is no target
    action = _ACTION_OF.get(word.lower())
    if action is None:
        raise IntentError(f"{name}:{line}: unknown action {word!r} (use keep, redirect or gone)")
    _check_url(url, "url", name, line)
    if target:
        _check_target(url, action, target, name, line)
    bare = url.removesuffix("*")
    path = bare.startswith("/")
    # a path row's path and query in the normalisation of loc-duplicate (the case of
    # percent-escapes; nothing else applies to a path)
    key = normalize_url("http://h" + bare)[len("http://h") :] if path else normalize_url(bare)
    return Row(url, action, target or None, line, key, bare != url, path)


def _check_url(url: str, what: str, name: str, line: int) -> None:
    bare = url.removesuffix("*")
    if "*" in bare:
        raise IntentError(f"{name}:{line}: {what} {url!r}: '*' may only be the last character")
    if not (bare.startswith("/") or (origin(bare) is not None and "://" in bare)):
        raise IntentError(
            f"{name}:{line}: {what} {url!r} is neither an absolute http(s) URL "
            "nor a path starting with /"
        )


def _check_target(url: str, action: str, target: str, name: str, line: int) -> None:
    if action != "redirect":
        raise IntentError(f"{name}:{line}: a target is allowed only on a redirect row")
    _check_url(target, "target", name, line)
    if target.endswith("*") and not url.endswith("*"):
        raise IntentError(
            f"{name}:{line}: target {target!r} ends with '*' but the url {url!r} does not"
        )
