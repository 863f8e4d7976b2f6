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
    value = (os.environ if env is None else env).get(AUTH_ENV)
    if value:
        return parse_auth(value, f"environment variable {AUTH_ENV}")
    return None


def parse_cookie(text: str) -> tuple[str, str]:
    """`name=value` of `--cookie`; ValueError with a one-line reason."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name or any(c in name for c in ";, \t"):
        raise ValueError(f"--cookie: expected name=value, got {name or text[:20]!r}...")
    if any(c in value for c in ";\r\n"):
        raise ValueError(f"--cookie {name}: the value may not contain ';' or a line break")
    return name, value.strip()


def cookies_from(
    options: Iterable[tuple[str, str]], env: Mapping[str, str] | None = None
) -> tuple[tuple[str, str], ...]:
    """--cookie values, then those of SITEMAP_AUDIT_COOKIE (`a=1; b=2`)."""
    value = (os.environ if env is None else env).get(COOKIE_ENV, "")
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
    value = (os.environ if env is None else env).get(HEADER_ENV, "")
    what = f"environment variable {HEADER_ENV}"
    extra = [parse_header(line, what) for line in value.splitlines() if line.strip()]
    return (*options, *extra)


def parse_host(text: str) -> str:
    """A host name of `--insecure-host` (a URL or host:port is reduced to its host)."""
    value = text.strip()
    if "://" in value:
        origin = canonical_origin(value)
        if origin is None:
            raise ValueError(f"--insecure-host {text!r}: not a host name")
        value = origin.split("://", 1)[1]
    if value.startswith("["):
        value = value[1 : value.find("]")] if "]" in value else value
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    value = value.lower().rstrip(".")
    if not value or any(c in value for c in "/?#@ "):
        raise ValueError(f"--insecure-host {text!r}: not a host name")
    return value


def credential_scope(
    targets: Iterable[str | None], rewrites: Iterable[tuple[str, str]] = ()
) -> tuple[str, ...]:
    """The origins credentials are sent to: each target's origin (where its URLs are
    requested: through a rewrite when one names it) and every rewrite target."""
    rules = {canonical_origin(a): canonical_origin(b) for a, b in rewrites}
    out: list[str] = []
    for target in targets:
        origin = canonical_origin(target) if target else None
        if origin is not None:
            origin = rules.get(origin) or origin
            if origin not in out:
                out.append(origin)
    for target_origin in rules.values():
        if target_origin is not None and target_origin not in out:
            out.append(target_origin)
    return tuple(out)


def _redact(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
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
    such as `Bearer T` its token part, in each of its encodings (`_encodings`)."""
    parts: set[str] = set()
    for secret in secrets:
        parts.add(secret)
        token = secret.split()[-1] if secret.split() else ""
        if len(token) >= _MIN_FORM:
            parts.add(token)
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
