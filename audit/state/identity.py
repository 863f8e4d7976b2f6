"""What audit a `--state` file belongs to, readable: which target or option differs.

A state is tied to its audit by a digest (`store.fingerprint`) of the command, the targets
and the options that change results. The digest says *that* a state belongs to another
audit; to say *what* differs, the state also keeps the audit itself (`identity`, a
JSON-able dict, the same values the digest is made of), and a refusal names the
difference (`what_differs`): `--max-urls is 100 in the state, 200 in this run`.

The options are those the caller fingerprints: never credentials (`--auth`, `--cookie`,
`--header` are left out of both), so the identity holds nothing secret.

Imports only the standard library and audit.report.aggregate (for `as_dict`, as
audit.state.diff does).
"""

from __future__ import annotations

import json
from typing import Any, Final

from audit.report.aggregate import as_dict

__all__ = ["identity", "what_differs"]

SHOWN: Final = 3  # differences named in one line; the rest are counted
VALUE_CHARS: Final = 60  # a longer value is cut, with an ellipsis


def identity(mode: str, targets: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """The audit as the fingerprint sees it, as plain JSON values (tuples become lists,
    anything else not JSON its str), so that a stored one compares equal to a fresh one."""
    blob = json.dumps({"mode": mode, "targets": targets, "options": options}, default=str)
    value: dict[str, Any] = json.loads(blob)
    return value


def _flag(name: str) -> str:
    """An option's field name as the flag a user types (`max_urls` -> `--max-urls`)."""
    for suffix in ("_ms", "_s"):  # slow_ms is --slow, lastmod_tolerance_s --lastmod-tolerance
        name = name.removesuffix(suffix)
    return "--" + name.replace("_", "-")


_NOT_GIVEN: Final = object()  # an option one side does not set


def _show(name: str, value: Any) -> str:
    if value is _NOT_GIVEN:
        return "not given"
    if name.endswith("_ms") and type(value) in (int, float):  # (JSON values: a bool is not)
        value = value / 1000  # shown in seconds, as the flag takes it
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 3] + "..."


def _targets(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return " ".join(value) if value else "none"
    return _show("targets", value)


def what_differs(stored: dict[str, Any], current: dict[str, Any]) -> str:
    """One phrase naming what makes `current` another audit than `stored`: the command,
    the targets, then each option (set away from its default) that differs, by flag."""
    diffs: list[str] = []
    if stored.get("mode") != current.get("mode"):
        diffs.append(f"the state is of `{stored.get('mode')}`, this run is `{current.get('mode')}`")
    if stored.get("targets") != current.get("targets"):
        diffs.append(
            f"the targets are {_targets(stored.get('targets'))} in the state, "
            f"{_targets(current.get('targets'))} in this run"
        )
    old, new = as_dict(stored.get("options")), as_dict(current.get("options"))
    for name in sorted(set(old) | set(new)):
        was, now = old.get(name, _NOT_GIVEN), new.get(name, _NOT_GIVEN)
        if was != now:
            diffs.append(
                f"{_flag(name)} is {_show(name, was)} in the state, {_show(name, now)} in this run"
            )
    if not diffs:
        return "the same targets and options, recorded by another version"
    more = len(diffs) - SHOWN
    return "; ".join(diffs[:SHOWN]) + (f"; and {more} more" if more > 0 else "")
