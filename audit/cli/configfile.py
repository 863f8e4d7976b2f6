"""`--config FILE`: crawl, validate and migrate options and targets from a TOML file.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ConfigFileError", "apply_config_file", "load_config_file"]

_NOT_GIVEN = object()
_TARGET_KEYS = ("target", "targets")
_TARGET_KEYS_EXPECT = {"target": "a string", "targets": "a non-empty list of strings"}
_NOT_IN_FILE = ("help", "version", "config", "target", argparse.SUPPRESS)
# argparse converters of number options (by function name: the builtins, cli._number's are
# all "parse") and the words each also takes, as on the command line
_NUMBERS: dict[str, tuple[str, ...]] = {
    "int": (),
    "float": (),
    "parse": (),
    "_rate": ("unlimited",),
    "_fetch_workers": ("auto",),
}


class ConfigFileError(ValueError):
    """A config file that cannot be used; one line naming the file and the key."""


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of `command` (build_parser's parser has one subparsers action)."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub: argparse.ArgumentParser = commands.choices[command]
    return sub


def _options(sub: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in sub._actions if a.option_strings and a.dest not in _NOT_IN_FILE}


# what a TOML value is, in a message (tomllib makes these exact types; others by name)
_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a table",
}


@dataclass(frozen=True, slots=True)
class _Key:
    """A key of a config file, for the one-line messages that name the file and the key."""

    path: str
    key: str

    def error(self, text: str) -> ConfigFileError:
        return ConfigFileError(f"{self.path}: key {self.key!r}: {text}")

    def wrong(self, expected: str, got: Any) -> ConfigFileError:
        got_type = type(got)
        return self.error(
            f"expected {expected}, got {_TYPE_NAMES.get(got_type, got_type.__name__)}"
        )


def _convert(path: str, key: str, action: argparse.Action, value: Any) -> Any:
    """A file's value as the action would store it, checked like the command line's."""
    where = _Key(path, key)
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return _flag(where, action, value)
    if isinstance(action, argparse._AppendAction):
        return [_one(where, action, item) for item in _as_list(where, value)]
    return _one(where, action, value)


def _flag(where: _Key, action: argparse.Action, value: Any) -> bool:
    if not isinstance(value, bool):
        raise where.wrong("true or false", value)
    return value if isinstance(action, argparse._StoreTrueAction) else not value


def _as_list(where: _Key, value: Any) -> list[Any]:
    """The items of a list option: a list, one string, or (for `header`) a table."""
    if where.key.replace("-", "_") == "header" and isinstance(value, dict):
        value = [f"{k}: {v}" for k, v in value.items()]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise where.wrong("a list of strings", value)
    return value


def _one(where: _Key, action: argparse.Action, item: Any) -> Any:
    """One value converted by the action's type and checked against its choices."""
    conv = action.type
    if conv is None:
        result = _string(where, item)
    elif _converter_name(conv) in _NUMBERS:
        result = _number(where, conv, item)
    else:
        result = _call(where, conv, _string(where, item))
    if action.choices is not None and result not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise where.error(f"{result!r} is not one of {choices}")
    return result


def _converter_name(conv: Any) -> str:
    return str(getattr(conv, "__name__", ""))


def _string(where: _Key, item: Any) -> str:
    if not isinstance(item, str):
        raise where.wrong("a string", item)
    return item


def _number(where: _Key, conv: Any, item: Any) -> Any:
    """A number option: TOML numbers only (a quoted "10" is a mistake worth naming), but
    for `rate = "unlimited"`, the word the command line takes too."""
    word = item in _NUMBERS.get(_converter_name(conv), ())
    if not word and type(item) not in (int, float):  # (tomllib's exact types: no bool)
        raise where.wrong("a number", item)
    return _call(where, conv, str(item))


def _call(where: _Key, conv: Any, text: str) -> Any:
    """`conv(text)` (argparse only takes callable types); its complaint names the key."""
    try:
        return conv(text)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise where.error(str(exc)) from None


def load_config_file(path: str, sub: argparse.ArgumentParser) -> tuple[dict[str, Any], list[str]]:
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
    reader = _FileReader(path, sub)
    for key, value in data.items():
        reader.read(key, value)
    return reader.values, reader.targets


class _FileReader:
    """One config file's keys read into options (by argparse dest) and targets."""

    def __init__(self, path: str, sub: argparse.ArgumentParser) -> None:
        self.path = path
        self.sub = sub
        self.actions = _options(sub)
        self.values: dict[str, Any] = {}
        self.targets: list[str] = []  # set once, never to an empty list

    def read(self, key: str, value: Any) -> None:
        dest = key.replace("-", "_")
        if dest in _TARGET_KEYS:
            self._targets(key, dest, value)
            return
        action = self.actions.get(dest)
        if action is None:
            raise ConfigFileError(f"{self.path}: unknown key {key!r} for `{self.sub.prog}`")
        if dest in self.values:
            raise ConfigFileError(f"{self.path}: key {key!r} given twice (with - and _)")
        self.values[dest] = _convert(self.path, key, action, value)

    def _targets(self, key: str, dest: str, value: Any) -> None:
        where = _Key(self.path, key)
        if self.targets:
            raise where.error("give either target or targets")
        items = [value] if dest == "target" else value
        # a non-empty list of non-empty strings
        if not (isinstance(items, list) and items and all(isinstance(t, str) and t for t in items)):
            raise where.wrong(_TARGET_KEYS_EXPECT[dest], value)
        self.targets = list(items)


def _explicit(parser: argparse.ArgumentParser, command: str, argv: list[str]) -> set[str]:
    """The dests the command line itself set: re-parse with a marker as every default."""
    probe = copy.deepcopy(parser)
    sub = _subparser(probe, command)
    # every option's default a marker of "not given" (None for a list option: argparse
    # appends to its default)
    markers: dict[str, object] = {}
    for dest, action in _options(sub).items():
        marker = None if isinstance(action, argparse._AppendAction) else _NOT_GIVEN
        action.default = markers[dest] = marker
    ns = probe.parse_args(argv)
    return {dest for dest, marker in markers.items() if getattr(ns, dest, marker) is not marker}


def apply_config_file(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    argv: list[str],
) -> list[str]:
    """Fill `args` from `args.config` where the command line said nothing; return the
    file's targets (the caller's TARGETs win over them, as crawl's audit_targets decides;
    none: the caller says what is missing)."""
    sub = _subparser(parser, args.command)
    values, targets = load_config_file(args.config, sub)
    given = _explicit(parser, args.command, argv)
    for dest in values.keys() - given:
        setattr(args, dest, values[dest])
    return targets
