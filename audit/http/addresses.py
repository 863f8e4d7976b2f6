"""Which hosts are private, and whether a redirect may go to one.

A sitemap or page on a public host can answer with a redirect to
`http://169.254.169.254/` (cloud metadata), `http://127.0.0.1:6379/` or
`http://10.0.0.5/admin`: an auditor that follows it makes requests inside the
network it runs in on a stranger's behalf. So a redirect from a public host to a
private, loopback or link-local address is reported and not followed unless the
run allows it (`--allow-private`); a chain that STARTS on such an address (an
intranet audit, the tests on 127.0.0.1) is the user's own choice and is followed.

Only what the URL itself says is judged: IP literals in every form a resolver
accepts (`127.1`, `0x7f000001`, `2130706433`, `[::ffff:127.0.0.1]`) and the
`localhost` names (RFC 6761). A DNS name is not resolved here; one that resolves
to a private address is outside this rule.

Pure and synchronous: the standard library only (no aiohttp, no asyncio).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

__all__ = ["ip_of", "is_private_host", "redirect_to_private"]

# Characters of the IPv4 forms inet_aton() accepts: dotted, short, octal, hex, one integer.
_IPV4_ISH = re.compile(r"[0-9a-fA-FxX.]+")


def ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address an IP-literal host names (any form a resolver accepts), else None."""
    host = host.strip().strip("[]").rstrip(".")
    if not host:
        return None
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])  # drop a zone id
        except ValueError:
            return None
    if _IPV4_ISH.fullmatch(host) is None:
        return None
    try:
        # inet_aton, like getaddrinfo, reads 127.1, 0x7f.1, 017700000001, 2130706433
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def is_private_host(host: str) -> bool:
    """`localhost` (and `*.localhost`), or an IP literal that is not a public unicast
    address: loopback, RFC 1918 / ULA private, link-local (169.254.0.0/16, fe80::/10),
    shared (100.64.0.0/10), unspecified, reserved, multicast."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    ip = ip_of(name)
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def redirect_to_private(start_url: str, next_url: str) -> bool:
    """True when a redirect chain that started at `start_url` (a public host) would go
    on to `next_url` on a private, loopback or link-local host: not to be followed."""
    nxt = _host(next_url)
    if nxt is None or not is_private_host(nxt):
        return False
    start = _host(start_url)
    return start is None or not is_private_host(start)
