"""Staging access options: parsing `--auth`, `--cookie`, `--insecure-host`, the
credential scope, and a report sink that redacts secrets.

Credentials are sent by the HTTP client only to the origins of the scope (see
`credential_scope`); this module decides the scope and keeps secrets out of
reports. Pure: imports only the standard library and audit.http.rewrite.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from audit.http.rewrite import canonical_origin

__all__ = [
    "COOKIE_ENV",
    "HEADER_ENV",
    "REDACTED",
    "auth_from",
    "cookies_from",
    "credential_scope",
    "headers_from",
    "parse_auth",
    "parse_cookie",
    "parse_header",
    "parse_host",
    "redacting",
    "secret_forms",
]

REDACTED = "***"
# --cookie and --header from the environment, so secrets stay out of the process list:
# cookies as `name=value; name2=value2`, headers one `Name: value` a line
COOKIE_ENV = "SITEMAP_AUDIT_COOKIE"
HEADER_ENV = "SITEMAP_AUDIT_HEADER"
_MIN_FORM = 4  # a derived form shorter than this (a token part "T") is not redacted
_ESCAPE = re.compile(r"%[0-9A-F]{2}")


def _environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """The environment a value is read from: `env` when given (tests), else the process's."""
    return os.environ if env is None else env


def _contains_any(text: str, chars: str) -> bool:
    return any(c in text for c in chars)


def parse_auth(text: str, what: str = "--auth") -> tuple[str, str]:
    """`user:password` (the password may contain colons); ValueError with a one-line
    reason that never repeats the password."""
    user, sep, password = text.partition(":")
    if not sep or not user:
        raise ValueError(f"{what}: expected user:password")
    return user, password


def auth_from(option: str | None, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """--auth when given, else the SITEMAP_AUDIT_AUTH environment variable, else None."""
    from audit.core.config import AUTH_ENV

    if option is not None:
        return parse_auth(option)
    value = _environ(env).get(AUTH_ENV)
    if value:
        return parse_auth(value, f"environment variable {AUTH_ENV}")
    return None


def parse_cookie(text: str) -> tuple[str, str]:
    """`name=value` of `--cookie`; ValueError with a one-line reason."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name or _contains_any(name, ";, \t"):
        raise ValueError(f"--cookie: expected name=value, got {name or text[:20]!r}...")
    if _contains_any(value, ";\r\n"):
        raise ValueError(f"--cookie {name}: the value may not contain ';' or a line break")
    return name, value.strip()


def cookies_from(
    options: Iterable[tuple[str, str]], env: Mapping[str, str] | None = None
) -> tuple[tuple[str, str], ...]:
    """--cookie values, then those of SITEMAP_AUDIT_COOKIE (`a=1; b=2`)."""
    value = _environ(env).get(COOKIE_ENV, "")
    extra = [parse_cookie(part) for part in value.split(";") if part.strip()]
    return (*options, *extra)


def parse_header(text: str, what: str = "--header") -> tuple[str, str]:
    """`Name: value`; ValueError with a one-line reason that never repeats the value."""
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise ValueError(f"{what}: expected 'Name: value'")
    return name.strip(), value.strip()


def headers_from(
    options: Iterable[tuple[str, str]], env: Mapping[str, str] | None = None
) -> tuple[tuple[str, str], ...]:
    """--header values, then those of SITEMAP_AUDIT_HEADER (one `Name: value` a line)."""
    value = _environ(env).get(HEADER_ENV, "")
    what = f"environment variable {HEADER_ENV}"
    extra = [parse_header(line, what) for line in value.splitlines() if line.strip()]
    return (*options, *extra)


def parse_host(text: str) -> str:
    """A host name of `--insecure-host` (a URL or host:port is reduced to its host)."""
    value = _without_port(_authority(text)).lower().rstrip(".")
    if not value or _contains_any(value, "/?#@ "):
        raise ValueError(f"--insecure-host {text!r}: not a host name")
    return value


def _authority(text: str) -> str:
    """`host[:port]` as given, or of a URL's origin."""
    value = text.strip()
    if "://" not in value:
        return value
    origin = canonical_origin(value)
    if origin is None:
        raise ValueError(f"--insecure-host {text!r}: not a host name")
    return origin.split("://", 1)[1]


def _without_port(value: str) -> str:
    """The host of `host:port` or `[v6]:port` (an IPv6 address without brackets is kept)."""
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def credential_scope(
    targets: Iterable[str | None], rewrites: Iterable[tuple[str, str]] = ()
) -> tuple[str, ...]:
    """The origins credentials are sent to: each target's origin (where its URLs are
    requested: through a rewrite when one names it) and every rewrite target."""
    rules = {canonical_origin(a): canonical_origin(b) for a, b in rewrites}
    found = [*(_requested_origin(target, rules) for target in targets), *rules.values()]
    return tuple(dict.fromkeys(filter(None, found)))  # each once, in order; None: no origin


def _requested_origin(target: str | None, rules: Mapping[str | None, str | None]) -> str | None:
    """The origin a target's URLs are requested from: its own, or its rewrite's."""
    origin = canonical_origin(target) if target else None
    if origin is None:
        return None
    return rules.get(origin) or origin


def _redact(value: Any, secrets: tuple[str, ...]) -> Any:
    """A string with every secret replaced, each value of a dict or item of a list
    redacted; anything else as it is."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)  # (the same string when it is absent)
        return value
    if isinstance(value, dict):
        return {k: _redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, secrets) for v in value]
    return value


def _encodings(secret: str) -> list[str]:
    """The forms a server may echo a secret in: raw, percent-encoded (both hex cases,
    `+` for spaces) and base64 (standard and URL-safe, with and without padding)."""
    quoted = [quote(secret, safe=""), quote(secret), quote_plus(secret)]
    quoted += [_ESCAPE.sub(lambda m: m.group(0).lower(), q) for q in quoted]
    raw = secret.encode()
    b64 = [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    b64 += [b.rstrip("=") for b in b64]
    return [secret, *quoted, *b64]


def secret_forms(secrets: Iterable[str]) -> tuple[str, ...]:
    """Every form of every secret, longest first: each secret, and for a header value
    such as `Bearer T` its token part when long enough, in each of its encodings
    (`_encodings`) that is long enough."""
    parts: set[str] = set()
    for secret in secrets:
        parts.add(secret)
        words = secret.split()
        if words and len(words[-1]) >= _MIN_FORM:
            parts.add(words[-1])
    forms = {form for part in parts for form in _encodings(part) if len(form) >= _MIN_FORM}
    return tuple(sorted(forms, key=len, reverse=True))


def redacting(
    sink: Callable[[dict[str, Any]], None], secrets: tuple[str, ...]
) -> Callable[[dict[str, Any]], None]:
    """A record sink that replaces every secret in every string of a record before
    passing it on (a server that echoes a cookie into a page excerpt, a header value
    in a URL), in its raw, percent-encoded and base64 forms and the token part of a
    header value. Without secrets it is the sink itself: no cost for ordinary runs."""
    if not secrets:
        return sink
    secrets = secret_forms(secrets)

    def write(record: dict[str, Any]) -> None:
        sink(_redact(record, secrets))

    return write
