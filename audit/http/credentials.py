"""What a request carries beyond the session's defaults: staging credentials within their
scope, TLS verification per host, the raw-bytes header of a sitemap stream.

Staging credentials (`config.auth`, `cookies`, `extra_headers`) are added per request
(`RequestScope.prepare`, called from the client's one send path) and only when its
origin is in `config.credential_origins` (without a scope: the origin its redirect chain
started at). So they never follow a redirect to another host, and a robots.txt or a
listed URL elsewhere never sees them. `config.insecure_hosts` turns TLS verification off
per request, for those host names only. access.py parses the options and decides the
scope; this module applies it.

Imports audit.core.config and audit.http.hosts only.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Final

from audit.core.config import CrawlConfig
from audit.http.hosts import Host, origin_key

__all__ = ["RequestScope", "credential_headers", "request_headers", "user_agent_of"]

_IDENTITY: Final = {"Accept-Encoding": "identity"}


def request_headers(stream: bool, extra: Mapping[str, str] | None) -> dict[str, str] | None:
    """Per-request headers: the raw bytes of a stream, plus a caller's extra headers."""
    if not extra:
        return _IDENTITY if stream else None
    return {**_IDENTITY, **extra} if stream else dict(extra)


def credential_headers(config: CrawlConfig) -> dict[str, str]:
    """The headers that carry the run's staging credentials (sent only within their scope;
    the browser of --render sends them by the same rule)."""
    out: dict[str, str] = {}
    for name, value in config.extra_headers:
        if name.lower() != "user-agent":
            out[name] = value
    if config.cookies:
        out["Cookie"] = "; ".join(f"{k}={v}" for k, v in config.cookies)
    if config.auth is not None:
        user, password = config.auth
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        out["Authorization"] = f"Basic {token}"
    return out


def user_agent_of(config: CrawlConfig) -> str:
    """The run's User-Agent: --header User-Agent replaces ours everywhere (other extra
    headers are credentials)."""
    return next(
        (v for k, v in config.extra_headers if k.lower() == "user-agent"), config.user_agent
    )


class RequestScope:
    """The run's credentials and insecure hosts, applied request by request."""

    def __init__(self, config: CrawlConfig) -> None:
        self.credentials = credential_headers(config)
        # (origin_key gives "" for what is no http(s) origin)
        self._scope = frozenset(map(origin_key, config.credential_origins)) - {""}
        # (scheme, host name) of the requests sent without TLS verification: https only
        self._insecure = frozenset(("https", h.lower().strip("[]")) for h in config.insecure_hosts)
        self.adds = bool(self.credentials or self._insecure)  # prepare has work to do

    def prepare(
        self,
        host: Host,
        stream: bool,
        headers: Mapping[str, str] | None,
        chain_origin: str | None,
    ) -> tuple[dict[str, str] | None, bool]:
        """A request's headers (credentials within their scope) and TLS verification.
        (No credentials: adding none changes nothing; no insecure host: no name is in it.)"""
        if self.may_send(host.key, chain_origin):
            headers = {**self.credentials, **headers} if headers else self.credentials
        verify = (host.scheme, host.hostname) not in self._insecure
        return request_headers(stream, headers), verify

    def may_send(self, host_key: str, chain_origin: str | None) -> bool:
        """Credentials go to their scope's origins only; without a scope, to the origin a
        redirect chain started at, never to another host it redirects to."""
        if self._scope:
            return host_key in self._scope
        return chain_origin in (None, host_key)  # no chain to bind to, or its own origin

    def chain_origin(self, url: str) -> str | None:
        """The origin a chain starts at, when credentials without a scope are bound to it
        (asked only when there are credentials: client.py `_start` and `_follow`)."""
        return None if self._scope else origin_key(url)
