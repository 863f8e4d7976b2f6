"""Which hosts are private, and whether a redirect may go to one.

A sitemap or page on a public host can answer with a redirect to
`http://169.254.169.254/` (cloud metadata), `http://127.0.0.1:6379/` or
`http://10.0.0.5/admin`: an auditor that follows it makes requests inside the
network it runs in on a stranger's behalf. So a redirect from a public host to a
private, loopback or link-local address is reported and not followed unless the
run allows it (`--allow-private`); a chain that STARTS on such an address (an
intranet audit, the tests on 127.0.0.1) is the user's own choice and is followed.

A host is judged as the client connects to it: normalised first (IDNA/UTS 46
mapping, so `１２７.０.０.１`, `127。0。0。1`, `ⓛⓞⓒⓐⓛⓗⓞⓢⓣ` and `ｌｏｃａｌｈｏｓｔ` are
what yarl turns them into), then IP literals in every form a resolver accepts
(`127.1`, `0x7f000001`, `2130706433`, `[::ffff:127.0.0.1]`) and the `localhost`
names (RFC 6761). A DNS name is judged by its answers, at connect time
(`PrivateGuard.keeps`, used by audit.http.resolver), so a name cannot answer one
address to a check and another to the connection.

`PrivateGuard` is a run's rule: the targets the user gave are trusted as given
(their hosts, whatever they resolve to); with a public target, any other host
that is or resolves to a private address is not requested. A run whose target
is itself private (an intranet audit, the tests on 127.0.0.1) or that passes
`--allow-private` requests everything, as before.

Pure and synchronous: the standard library and idna (yarl's own dependency, the
mapping yarl applies) only; no aiohttp, no asyncio.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "PrivateGuard",
    "ip_of",
    "is_private_host",
    "is_private_ip",
    "normal_host",
    "redirect_to_private",
]

# IPv6 ranges that embed or stand for IPv4 (mapped, whatever it embeds; NAT64, 6to4) or
# are deprecated site-local: an answer in them may reach an internal IPv4 host, so none is
# public.
_SPECIAL_V6 = tuple(
    ipaddress.IPv6Network(n)
    for n in ("::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "fec0::/10")
)
# Dots that UTS 46 maps to "." (ideographic, full-width, half-width ideographic).
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})

# Characters of the IPv4 forms inet_aton() accepts: dotted, short, octal, hex, one integer.
_IPV4_ISH = re.compile(r"[0-9a-fA-FxX.]+")


def ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address an IP-literal host names (any form a resolver accepts), else None."""
    host = host.strip().strip("[]").rstrip(".")
    try:
        if ":" in host:
            return ipaddress.IPv6Address(host.split("%", 1)[0])  # drop a zone id
        if _IPV4_ISH.fullmatch(host) is None:  # (an empty host too)
            return None
        # inet_aton, like getaddrinfo, reads 127.1, 0x7f.1, 017700000001, 2130706433
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (ValueError, OSError):  # IPv6Address's, inet_aton's
        return None


def normal_host(host: str) -> str:
    """The host as the client connects to it: UTS 46 mapped (full-width digits and
    letters, ideographic full stops, circled letters), lower case, no brackets or
    trailing dot."""
    name = host.strip().strip("[]")
    if not name.isascii():
        try:
            import idna

            name = str(idna.uts46_remap(name, std3_rules=False, transitional=False))
        except (ImportError, ValueError):  # idna refuses some code points: NFKC maps the rest
            name = unicodedata.normalize("NFKC", name).translate(_DOTS)
    return name.rstrip(".").lower()


def is_private_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Not a public unicast address: loopback, private, link-local, shared, unspecified,
    reserved, multicast, or an IPv6 form that embeds IPv4 (mapped, NAT64, 6to4) or is
    site-local."""
    if isinstance(ip, ipaddress.IPv6Address) and any(ip in net for net in _SPECIAL_V6):
        return True
    return not ip.is_global or ip.is_multicast


def is_private_host(host: str) -> bool:
    """`localhost` (and `*.localhost`), or an IP literal that is not a public unicast
    address (`is_private_ip`), judged after `normal_host`."""
    name = normal_host(host)
    if name.rpartition(".")[2] == "localhost":  # its last label (RFC 6761: and below it)
        return True
    ip = ip_of(name)
    return ip is not None and is_private_ip(ip)


def _host(url: str) -> str:
    """The URL's host after `normal_host`; "" when it has none (or is no URL), which no
    rule calls private and no target's host is."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return ""
    return normal_host(host or "")


def redirect_to_private(start_url: str, next_url: str) -> bool:
    """True when a redirect chain that started at `start_url` (a public host) would go
    on to `next_url` on a private, loopback or link-local host: not to be followed."""
    return is_private_host(_host(next_url)) and not is_private_host(_host(start_url))


@dataclass(slots=True)
class PrivateGuard:
    """A run's private-address rule. `trusted`: the normalised hosts of the targets the
    user gave; `active` when there is a public target and private addresses are not
    allowed. Inactive, everything may be requested (the redirect rule still holds)."""

    trusted: frozenset[str] = frozenset()
    active: bool = False

    @classmethod
    def of(cls, targets: Iterable[str], allow_private: bool) -> PrivateGuard:
        """The rule of a run over `targets` (URLs or origins)."""
        hosts = frozenset(map(_host, targets)) - {""}  # ("": no host)
        # public: at least one host, and none private (no host at all: as a private one)
        private = max(map(is_private_host, hosts), default=True)
        return cls(hosts, not (private or allow_private))

    def refuses(self, url: str) -> bool:
        """True when `url` names a private address by spelling and is not a target's."""
        if not self.active:
            return False
        host = _host(url)
        return host not in self.trusted and is_private_host(host)

    def keeps(self, host: str, address: str) -> bool:
        """Whether a DNS answer `address` of `host` may be connected to."""
        if not self.active or normal_host(host) in self.trusted:
            return True
        ip = ip_of(address)
        return ip is not None and not is_private_ip(ip)
