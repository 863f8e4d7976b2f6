"""The connector's resolver: DNS answers judged by the run's private-address rule.

`GuardedResolver` wraps aiohttp's default resolver. For a host that is not a
target's, answers on loopback, private, link-local or otherwise special addresses
(`PrivateGuard.keeps`) are dropped; a name with only such answers fails like a DNS
lookup (`PrivateAnswer`, a socket.gaierror), so it is reported and never connected
to. The check and the connection use the same answers: aiohttp connects to what
this resolver returns (and caches that).

Imports aiohttp (only when a session is made) and audit.http.addresses.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

from audit.http.addresses import PrivateGuard

if TYPE_CHECKING:
    from aiohttp.abc import AbstractResolver

__all__ = ["PrivateAnswer", "guarded_resolver"]


class PrivateAnswer(socket.gaierror):
    """A name that resolves only to private, loopback or link-local addresses."""


def guarded_resolver(guard: PrivateGuard) -> AbstractResolver | None:
    """The resolver of a session under `guard`; None (aiohttp's default) when the guard
    lets everything through."""
    if not guard.active:
        return None
    from aiohttp.abc import AbstractResolver
    from aiohttp.resolver import DefaultResolver

    class GuardedResolver(AbstractResolver):
        def __init__(self) -> None:
            self._inner = DefaultResolver()

        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[Any]:
            answers = await self._inner.resolve(host, port, family)
            kept = [a for a in answers if guard.keeps(host, a["host"])]
            if not kept:
                raise PrivateAnswer(
                    socket.EAI_NONAME,
                    "resolves only to private, loopback or link-local addresses; "
                    "not connected to (--allow-private connects)",
                )
            return kept

        async def close(self) -> None:
            await self._inner.close()

    return GuardedResolver()
