"""Origin rewriting (`--rewrite ORIGIN=ORIGIN`) and origin parsing for staging access.

A rewrite maps every URL on one origin to the same path and query on another:
`https://www.example.com=https://staging.example.com` checks the live sitemap's
URLs against staging. Pure and synchronous: imports nothing but the standard
library and the one origin parse of audit.http.hosts (`canonical_origin`, re-exported
here), so the pipeline, the HTTP client and the CLI share one definition of "origin".
"""

from __future__ import annotations

from urllib.parse import urlsplit

from audit.http.hosts import DEFAULT_PORTS, canonical_origin, url_prefix

__all__ = ["DEFAULT_PORTS", "Rewriter", "canonical_origin", "parse_origin", "parse_rewrite"]


def parse_origin(text: str, what: str) -> str:
    """An origin given on the command line (`https://host[:port]`, a trailing `/`
    allowed); ValueError with a one-line reason otherwise. Credentials in the URL
    are refused: they would be written into every report."""
    text = text.strip()
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        raise ValueError(f"{what} {text!r}: not a URL ({exc})") from None
    if parts.username is not None:  # any user info: a password never comes without it
        raise ValueError(
            f"{what} {parts.scheme}://…@{parts.hostname}: no credentials in URLs; "
            "use --auth or the SITEMAP_AUDIT_AUTH environment variable"
        )
    origin = canonical_origin(text)
    if origin is None:
        raise ValueError(f"{what} {text!r}: not an http(s) origin such as https://www.example.com")
    if any((parts.path.removeprefix("/"), parts.query, parts.fragment)):
        raise ValueError(
            f"{what} {text!r}: an origin has no path, query or fragment (did you mean {origin}?)"
        )
    return origin


def parse_rewrite(text: str) -> tuple[str, str]:
    """`FROM=TO` of `--rewrite`, both origins; ValueError with a one-line reason."""
    source, sep, target = text.partition("=")
    if not sep:
        raise ValueError(
            f"--rewrite {text!r}: expected FROM=TO, e.g. "
            "https://www.example.com=https://staging.example.com"
        )
    a = parse_origin(source, "--rewrite FROM")
    b = parse_origin(target, "--rewrite TO")
    if a == b:
        raise ValueError(f"--rewrite {text!r}: FROM and TO are the same origin")
    return a, b


class Rewriter:
    """Applies a run's rewrites: `rewriter(url)` is the URL to request for a listed URL.

    The first rule whose FROM origin is the URL's origin wins; the path, query and
    fragment are kept byte for byte. Without rules it returns the URL unchanged at
    the cost of one truth test.
    """

    __slots__ = ("_back", "_memo", "_rules")

    def __init__(self, rules: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> None:
        # FROM -> TO, and TO -> FROM (the first rule naming a TO origin: a checked URL in the
        # listing's terms), keyed by canonical_origin's answer: None (no origin) is never a
        # key, so it is looked up as it is
        self._rules: dict[str | None, str] = {}
        self._back: dict[str | None, str] = {}
        for source, target in rules:
            key = canonical_origin(source)
            if key is not None and key not in self._rules:
                self._rules[key] = to = canonical_origin(target) or target.rstrip("/")
                self._back.setdefault(to, key)
        # the text before the path, as written -> the origin it rewrites to (or "")
        self._memo: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self._rules)

    @property
    def targets(self) -> tuple[str, ...]:
        """The origins URLs are rewritten to."""
        return tuple(self._rules.values())

    def back(self, url: str) -> str:
        """A URL on an origin URLs are rewritten to, on the origin they were listed on (the
        advice of a finding names what the sitemap should list: production, not staging);
        any other URL unchanged."""
        prefix = url_prefix(url) if self._back else None  # the text before the path
        if prefix is None:
            return url
        source = self._back.get(canonical_origin(prefix))
        return url if source is None else source + url[len(prefix) :]

    def __call__(self, url: str) -> str:
        if not self._rules:
            return url
        prefix = url_prefix(url)  # the text before the path, as written
        if prefix is None:
            return url
        target = self._memo.get(prefix)
        if target is None:
            target = self._rules.get(canonical_origin(prefix), "")
            if len(self._memo) < 4096:
                self._memo[prefix] = target
        if not target:
            return url
        return target + url[len(prefix) :]
