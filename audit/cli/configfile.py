"""`--config FILE`: crawl and validate options and targets from a TOML file.

The file holds any option of the subcommand under the flag's own name, spelled
with `-` or `_` (`max-urls = 1000`, `user_agent = "..."`, `no-progress = true`),
and the targets: `target = "https://..."` or `targets = ["https://a/", "https://b/"]`.
`header` takes a list of "Name: value" strings or a table of name = value.

Precedence: argparse defaults < the file < flags given on the command line (a
list option given on the command line replaces the file's list). Every key and
type is checked against the subcommand's own argparse actions, so the file can
never drift from the flags; a bad file is one line naming the file and the key.

Imports only the standard library.
"""

from __future__ import annotations

import argparse
import copy
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["ConfigFileError", "apply_config_file", "load_config_file"]

_NOT_GIVEN = object()
_TARGET_KEYS = ("target", "targets")
_NOT_IN_FILE = ("help", "version", "config", "target")
# argparse converters of number options (by function name; cli._number's are all "parse")
# and the words each also takes, as on the command line
_NUMBERS: dict[str, tuple[str, ...]] = {
    "parse": (),
    "_rate": ("unlimited",),
    "_fetch_workers": ("auto",),
}


class ConfigFileError(ValueError):
    """A config file that cannot be used; one line naming the file and the key."""


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(command)
            if isinstance(sub, argparse.ArgumentParser):
                return sub
    raise KeyError(command)


def _options(sub: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        a.dest: a
        for a in sub._actions
        if a.option_strings and a.dest not in _NOT_IN_FILE and a.dest != argparse.SUPPRESS
    }


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    for t, name in names.items():
        if type(value) is t:
            return name
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _convert(path: str, key: str, action: argparse.Action, value: Any) -> Any:
    def wrong(expected: str, got: Any = value) -> ConfigFileError:
        return ConfigFileError(f"{path}: key {key!r}: expected {expected}, got {_type_name(got)}")

    def one(item: Any) -> Any:
        conv = action.type
        if conv is None:
            if not isinstance(item, str):
                raise wrong("a string", item)
            result: Any = item
        elif conv in (int, float) or getattr(conv, "__name__", "") in _NUMBERS:
            # a number option: TOML numbers only (a quoted "10" is a mistake worth naming),
            # but for `rate = "unlimited"`, the word the command line takes too
            word = item in _NUMBERS.get(getattr(conv, "__name__", ""), ())
            if not word and (isinstance(item, bool) or not isinstance(item, int | float)):
                raise wrong("a number", item)
            try:
                result = conv(str(item)) if callable(conv) else item
            except (argparse.ArgumentTypeError, ValueError) as exc:
                raise ConfigFileError(f"{path}: key {key!r}: {exc}") from None
        else:
            if not isinstance(item, str):
                raise wrong("a string", item)
            try:
                result = conv(item) if callable(conv) else item
            except (argparse.ArgumentTypeError, ValueError) as exc:
                raise ConfigFileError(f"{path}: key {key!r}: {exc}") from None
        if action.choices is not None and result not in action.choices:
            choices = ", ".join(str(c) for c in action.choices)
            raise ConfigFileError(f"{path}: key {key!r}: {result!r} is not one of {choices}")
        return result

    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value if isinstance(action, argparse._StoreTrueAction) else not value
    if isinstance(action, argparse._AppendAction):
        if key.replace("-", "_") == "header" and isinstance(value, dict):
            value = [f"{k}: {v}" for k, v in value.items()]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise wrong("a list of strings")
        return [one(item) for item in value]
    return one(value)


def load_config_file(
    path: str, sub: argparse.ArgumentParser
) -> tuple[dict[str, Any], list[str] | None]:
    """The options (by argparse dest, converted and checked) and targets of a config file."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigFileError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot read the config file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path}: the config file is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path}: not valid TOML: {exc}") from None
    actions = _options(sub)
    values: dict[str, Any] = {}
    targets: list[str] | None = None
    for key, value in data.items():
        dest = key.replace("-", "_")
        if dest in _TARGET_KEYS:
            if targets is not None:
                raise ConfigFileError(f"{path}: key {key!r}: give either target or targets")
            items = [value] if dest == "target" else value
            if (
                not isinstance(items, list)
                or not items
                or not all(isinstance(t, str) and t for t in items)
            ):
                expected = "a string" if dest == "target" else "a non-empty list of strings"
                raise ConfigFileError(
                    f"{path}: key {key!r}: expected {expected}, got {_type_name(value)}"
                )
            targets = list(items)
            continue
        action = actions.get(dest)
        if action is None:
            raise ConfigFileError(f"{path}: unknown key {key!r} for `{sub.prog}`")
        if dest in values:
            raise ConfigFileError(f"{path}: key {key!r} given twice (with - and _)")
        values[dest] = _convert(path, key, action, value)
    return values, targets


def _explicit(parser: argparse.ArgumentParser, command: str, argv: list[str]) -> set[str]:
    """The dests the command line itself set: re-parse with a marker as every default."""
    probe = copy.deepcopy(parser)
    sub = _subparser(probe, command)
    for action in _options(sub).values():
        action.default = None if isinstance(action, argparse._AppendAction) else _NOT_GIVEN
    ns = probe.parse_args(argv)
    given = set()
    for dest, action in _options(sub).items():
        value = getattr(ns, dest, _NOT_GIVEN)
        if isinstance(action, argparse._AppendAction):
            if value is not None:
                given.add(dest)
        elif value is not _NOT_GIVEN:
            given.add(dest)
    return given


def apply_config_file(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    argv: list[str],
    *,
    required: bool = True,
) -> list[str]:
    """Fill `args` from `args.config` where the command line said nothing; return the
    targets (the command line's TARGETs win over the file's). `required`: the file must
    name targets (the command line gave none)."""
    sub = _subparser(parser, args.command)
    values, targets = load_config_file(args.config, sub)
    given = _explicit(parser, args.command, argv)
    for dest, value in values.items():
        if dest not in given:
            setattr(args, dest, value)
    if args.target:
        return list(args.target) if isinstance(args.target, list) else [args.target]
    if not targets and required:
        raise ConfigFileError(
            f"{args.config}: no target: give TARGET on the command line or "
            'target = "..." / targets = [...] in the file'
        )
    return targets or []
