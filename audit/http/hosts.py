"""Per-host politeness: one `Host` per scheme://host:port owns everything that spaces requests.

A `Host` holds (STYLE lessons 4 and 5):

- the rate limiter, built lazily inside the running loop: up to BURST_FROM requests/second
  an even pace (`Pacer`: one turn every 1/rate s, which keeps its schedule when a turn is
  taken a little late), above it `aiolimiter.AsyncLimiter(burst, burst/rate)` with a burst of
  BURST_WINDOW seconds' worth of requests (the same average rate; at 100,000/s a burst of one
  would park nearly every request on a 10-microsecond timer); no limiter at all when the rate
  is unlimited;
- a "not before" deadline that `Retry-After` pushes (to the later of the current and the
  requested time); a Retry-After above `retry_after_cap` (--max-retry-after) defers nothing:
  `over_cap` notes it and the URL is reported at once;
- the in-flight cap (`max_per_host` concurrent requests), taken outside aiohttp's timeout so
  a request waiting for its turn does not burn its own deadline;
- the adaptive rate: robots.txt `Crawl-delay` / `Request-rate` lower it (never above --rate);
  a burst of 429s halves it once (floor MIN_RATE; answers to requests already in flight do
  not halve it again), unless the 429 said when to come back (Retry-After defers the host
  instead); a host that keeps answering 429/503 is marked `slow` and halved once more; good
  answers in a row double it back, up to --rate: RECOVER_AFTER of them, or fewer at a low
  rate (RECOVER_S seconds' worth), so each doubling takes at most about RECOVER_S and the
  climb back from MIN_RATE is bounded in time, not in answers;
- counters, reported as `HostStats`.

Knows nothing of sitemaps, HTTP sessions or robots.txt parsing; imports only its pace
(audit.http.pace, which loads aiolimiter when a rate needs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import urlsplit

from audit.http.pace import Pacer, limiter_for

if TYPE_CHECKING:  # audit.http.pace loads it when a limiter needs it (13 ms of start-up)
    from aiolimiter import AsyncLimiter

MIN_RATE = 0.2  # requests/second: a 429 or a slow host never pushes a host below this
UNLIMITED_429_RATE = 5.0  # an unlimited host that answers 429 falls back to this rate
SLOW_STREAK = 3  # consecutive 429/503 answers that mark a host slow
RECOVER_AFTER = 20  # good answers in a row that double a lowered rate (up to --rate)...
RECOVER_S = 2.0  # ... or fewer: as many as this many seconds of the lowered rate bring
RECOVER_UNLIMITED = 1000.0  # an unlimited host recovered to this rate is unlimited again
DEFAULT_PORTS = {"http": 80, "https": 443}
_SLOWING = frozenset({429, 503})  # the answers that slow a host down (any other is good)
_KEY_CACHE_MAX = 4096  # URL prefixes remembered by HostPool.get
POLITENESS_KEYS = ("host", "ip", "domain")  # --politeness-key: what shares one Group

__all__ = [
    "MIN_RATE",
    "POLITENESS_KEYS",
    "Group",
    "Host",
    "HostPool",
    "HostStats",
    "address_id",
    "canonical_origin",
    "origin_key",
    "origin_of",
    "registrable_domain",
    "url_prefix",
]


def _origin_parts(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an absolute http(s) URL, lower-cased, the port always set.

    The one parse behind `origin_of`, `origin_key`, `canonical_origin` and
    `Host.scheme`/`Host.hostname`.
    Raises ValueError for a URL without an http(s) scheme or host, or with a bad port.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = parts.hostname  # lower-cased by urllib already
    if scheme not in DEFAULT_PORTS or not host:
        raise ValueError(f"not an absolute http(s) URL: {url!r}")
    return scheme, host, parts.port or DEFAULT_PORTS[scheme]  # ValueError for a bad port


def origin_of(url: str) -> str:
    """`scheme://host:port` of an absolute URL, lower-cased, port always explicit: a
    `Host` key.

    Raises ValueError for a URL without an http(s) scheme or host.
    """
    scheme, host, port = _origin_parts(url)
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def canonical_origin(url: str) -> str | None:
    """`scheme://host[:port]` as users write it: lower-cased, default port dropped; None
    for anything but an absolute http(s) URL (no scheme, no host, a bad port)."""
    try:
        origin = origin_of(url)
    except ValueError:
        return None
    scheme = origin.partition(":")[0]
    return origin.removesuffix(f":{DEFAULT_PORTS[scheme]}")  # (":80" is not ":8080"'s end)


def origin_key(url: str) -> str:
    """`origin_of(url)`, or "" (a key no host has) for a URL without an http(s) origin."""
    try:
        return origin_of(url)
    except ValueError:
        return ""


# The authority of an absolute URL: everything up to the first "/", "?" or "#" (matched
# from just after "://"; one C call where a loop of str.find took three).
# It matches at any position (maybe nothing): never None.
_AUTHORITY: Final = cast("Callable[[str, int], re.Match[str]]", re.compile(r"[^/?#]*").match)


def url_prefix(url: str) -> str | None:
    """`scheme://netloc` exactly as written in an absolute URL, or None.

    A memo key only, not an origin: urlsplit reads scheme, host and port from this text
    alone, so every URL with the same prefix has the same origin (`origin_of` still does
    the parsing once).
    """
    start = url.find("://")
    if start <= 0:
        return None
    return url[: _AUTHORITY(url, start + 3).end()]


@dataclass(frozen=True, slots=True)
class HostStats:
    """Counters of one host for the run report."""

    host: str  # scheme://host:port
    group: str  # the politeness group's id (--politeness-key; the host's own key by default)
    requests: int
    retries: int
    rate_limited: int  # 429 answers
    server_errors: int  # 5xx answers
    backoff_s: float  # wall time the host's sending was held back (backoff, Retry-After)
    rate: float | None  # effective requests/second at the end; None = unlimited
    slow: bool
    crawl_delay: float | None
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "group": self.group,
            "requests": self.requests,
            "retries": self.retries,
            "rate_limited": self.rate_limited,
            "server_errors": self.server_errors,
            "backoff_s": round(self.backoff_s, 3),
            "rate": self.rate,
            "slow": self.slow,
            "crawl_delay": self.crawl_delay,
            "notes": list(self.notes),
        }


class Group:
    """The politeness of a group of hosts (--politeness-key: one host, one address, one
    registrable domain): rate limiter, in-flight slots, Retry-After deadline, 429 halving,
    slow mark, robots.txt ceiling. Its hosts keep their counters (`Host`)."""

    def __init__(
        self,
        key: str,
        *,
        rate: float,
        max_in_flight: int,
        retry_after_cap: float,
    ) -> None:
        self.key = key  # the group id of the hosts record
        # --rate: never exceeded; 0, a negative, an infinite or a NaN rate is unlimited
        self.max_rate = rate if 0 < rate < math.inf else math.inf
        # requests per second now (math.inf when unlimited): read, never set, from outside
        # (an attribute: a frontier reads it for every URL it hands out)
        self.rate = self.max_rate
        self._limiter: Pacer | AsyncLimiter | None = None  # built in the loop, at first use
        self._retry_after_cap = retry_after_cap
        # The in-flight cap: free slots and the requests waiting for one, first come first
        # served (asyncio.Semaphore's own fast path costs more than the request's bookkeeping).
        # A free slot means nobody waits: a request waits only when none is free, and
        # release() frees one only when no live waiter is left to hand it to (it drops the
        # cancelled ones it meets; a cancelled waiter removes itself).
        self._free = max(1, max_in_flight)
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        # loop time before which the group sends nothing (Retry-After); 0.0: none (read,
        # never set, from outside)
        self.not_before = 0.0
        self._streak = 0  # consecutive 429/503
        self._halved = False  # the rate was halved in the current 429 burst
        # --rate, lowered by robots.txt's Crawl-delay / Request-rate: never recovered past
        self._ceiling = self.max_rate
        self._good = 0  # good answers in a row since the rate was lowered
        self.slow = False
        self.notes: list[str] = []

    # --- rate -----------------------------------------------------------------

    def _set_rate(self, rate: float) -> None:
        rate = min(rate, self.max_rate)
        if rate != self.rate:
            self.rate = rate
            self._limiter = None  # rebuilt at the new rate by the next acquire

    def set_max_rate(self, rate: float) -> None:
        """Lower the rate to `rate` requests/second (robots.txt Request-rate); never raises it."""
        if 0 < rate < math.inf:
            self._ceiling = min(self._ceiling, max(rate, 1e-6))  # recovery stops here
            self._set_rate(min(self.rate, self._ceiling))

    # --- answers --------------------------------------------------------------

    def record_status(self, status: int, *, deferred: bool = False) -> None:
        """Count an answer and adapt: a burst of 429s halves the rate once (the answers to
        requests already in flight do not halve it again); a 429 whose Retry-After
        `deferred` the host does not (the server said when to come back, and a scattered
        one must cost its wait, not the rest of the run); a 429/503 streak marks the host
        slow; any other answer is a good one (`good_answer`)."""
        if status not in _SLOWING:
            self.good_answer()
            return
        if status == 429 and not (self._halved or deferred):  # once per burst
            self._halve_rate()  # a good answer ends the burst
        self._good = 0
        self._streak += 1
        if self._streak >= SLOW_STREAK and not self.slow:
            self.slow = True
            self._halve_rate()
            _note(
                self.notes,
                f"{SLOW_STREAK} answers 429/503 in a row: host marked slow, "
                f"rate lowered to {self.rate:g}/s",
            )

    def good_answer(self) -> None:
        """An answer that is not a 429 or a 503 (the client's final answers, once per URL):
        the burst and the streak are over; good answers in a row double a lowered rate
        back towards its ceiling (--rate, or robots.txt's)."""
        self._streak = 0
        self._halved = False
        ceiling = self._ceiling
        if self.rate < ceiling:
            self._good += 1
            if self._good >= min(RECOVER_AFTER, math.ceil(self.rate * RECOVER_S)):
                self._good = 0
                self.slow = False
                doubled = self.rate * 2
                self._set_rate(ceiling if doubled >= RECOVER_UNLIMITED else min(doubled, ceiling))

    def _halve_rate(self) -> None:
        """Half the current rate (an unlimited host starts from UNLIMITED_429_RATE), not
        below MIN_RATE."""
        base = UNLIMITED_429_RATE if math.isinf(self.rate) else self.rate
        self._set_rate(max(MIN_RATE, min(self.rate, base / 2)))
        self._halved = True
        self._good = 0

    def over_cap(self, seconds: float) -> bool:
        """True (with a note) when a Retry-After asks for longer than --max-retry-after: the
        answer is final and the host is not deferred."""
        if seconds <= self._retry_after_cap:
            return False
        _note(
            self.notes,
            f"Retry-After over the {self._retry_after_cap:g} s cap (--max-retry-after): "
            "URLs reported at once, not waited for",
        )
        return True

    def defer(self, seconds: float, *, reason: str = "Retry-After") -> float:
        """Push the host's "not before" deadline `seconds` from now (capped); returns the wait."""
        seconds = max(0.0, seconds)
        if seconds > self._retry_after_cap:
            _note(self.notes, f"{reason} {seconds:g} s capped to {self._retry_after_cap:g} s")
            seconds = self._retry_after_cap
        now = asyncio.get_running_loop().time()
        self.not_before = max(self.not_before, now + seconds)
        return seconds

    # --- taking a turn --------------------------------------------------------

    async def _wait_turn(self, host: Host) -> None:
        loop = asyncio.get_running_loop()
        while True:
            wait = self.not_before - loop.time()
            if wait > 0:
                host.backed_off(wait)
                await asyncio.sleep(wait)
                continue
            if math.isinf(self.rate):
                return
            limiter = self._limiter
            if limiter is None:
                limiter = self._limiter = limiter_for(self.rate)
            await limiter.acquire()
            # a Retry-After may have arrived while this request waited on the limiter
            if self.not_before <= loop.time():
                return

    def try_acquire(self) -> bool:
        """Take a slot and a turn now if neither needs a wait (the common case at an unlimited
        rate), without a coroutine. False: nothing was taken; `await acquire()` instead."""
        if self._free and not self.not_before and self.rate == math.inf:
            self._free -= 1
            return True
        return False

    async def acquire(self, host: Host, *, hold_slot: bool = True) -> bool:
        """Wait for the group's turn: deadline, rate limiter and (optionally) an in-flight
        slot. Returns True when a slot is held; the caller must then `release()` it.
        """
        if hold_slot:
            if self._free:  # (then nobody waits: first come, first served)
                self._free -= 1
            else:
                waiter = asyncio.get_running_loop().create_future()
                self._slot_waiters.append(waiter)
                try:
                    await waiter  # release() hands its slot over by setting the result
                except BaseException:  # (the task's cancellation: the waiter is done)
                    if not waiter.cancelled():
                        self.release()  # handed a slot, then cancelled: pass it on
                    else:
                        with contextlib.suppress(ValueError):  # a release() may have dropped it
                            self._slot_waiters.remove(waiter)
                    raise
        try:
            if self.not_before or self.rate != math.inf:  # else nothing to wait for
                await self._wait_turn(host)
        except BaseException:
            if hold_slot:
                self.release()
            raise
        return hold_slot

    def release(self) -> None:
        waiters = self._slot_waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


class Host:
    """One scheme://host:port: its counters, robots.txt and queue, paced by its `group`.
    Create through `HostPool.get()`."""

    def __init__(
        self,
        key: str,
        group: Group | None = None,
        *,
        retry_after_cap: float,
        rate: float = math.inf,
        max_in_flight: int = 1,
    ) -> None:
        """`group`: the host's politeness group; None, a group of its own (`rate`,
        `max_in_flight`)."""
        self.key = key
        self.scheme, self.hostname, _ = _origin_parts(key)  # hostname: no [] around IPv6
        if group is None:
            group = Group(
                key, rate=rate, max_in_flight=max_in_flight, retry_after_cap=retry_after_cap
            )
        self.group = group
        self._retry_after_cap = retry_after_cap
        self.crawl_delay: float | None = None
        self.requests = 0
        self.retries = 0
        self.rate_limited = 0
        self.server_errors = 0
        self.backoff_s = 0.0  # wall time backed off: the union of the waits, not their sum
        self._backed_off_until = 0.0  # loop time up to which backoff_s is counted
        self.notes: list[str] = []
        # The host's robots.txt (audit.http.robots): the one cache of the run, kept here so
        # a URL's policy is one HostPool.get away. Opaque to this module.
        self.robots: Any = None  # the policy once read
        self.robots_task: asyncio.Task[Any] | None = None  # the read in flight
        # The host's queue in the pipeline's frontier (audit.pipeline.frontier), opaque here
        self.queue: Any = None
        # --politeness-key ip: the group is known once the name is resolved (settle())
        self._settle: Callable[[Host], Awaitable[None]] | None = None
        self._settling: asyncio.Task[None] | None = None

    # --- the group's, read through the host ---------------------------------------

    @property
    def rate(self) -> float:
        """The group's requests per second now (math.inf when unlimited)."""
        return self.group.rate

    @property
    def slow(self) -> bool:
        return self.group.slow

    @property
    def not_before(self) -> float:
        """Loop time before which the group sends nothing (Retry-After); 0.0: none."""
        return self.group.not_before

    @property
    def pending(self) -> bool:
        """True while the host's group is not known yet (a name still to resolve)."""
        return self._settle is not None

    async def settle(self) -> None:
        """Join the host's group (--politeness-key ip: resolve its name, once)."""
        settle = self._settle
        if settle is None:
            return
        task = self._settling
        if task is None:
            task = self._settling = asyncio.ensure_future(settle(self))
        await asyncio.shield(task)
        self._settle = None

    def set_max_rate(self, rate: float) -> None:
        """Lower the group's rate to `rate` requests/second (robots.txt Request-rate)."""
        self.group.set_max_rate(rate)

    def set_min_interval(self, seconds: float) -> None:
        """Space the group's requests at least `seconds` apart (robots.txt Crawl-delay).

        Lowers the rate, never raises it above --rate; a delay above the Retry-After cap is
        capped with a note, since an absurd Crawl-delay would stall the audit. Of several
        hosts of a group, the strictest one counts.
        """
        if not 0 < seconds < math.inf:  # a NaN too
            return
        if seconds > self._retry_after_cap:
            _note(self.notes, f"Crawl-delay {seconds:g} s capped to {self._retry_after_cap:g} s")
            seconds = self._retry_after_cap
        self.crawl_delay = seconds
        self.group.set_max_rate(1.0 / seconds)

    def record_status(self, status: int, *, deferred: bool = False) -> None:
        """Count an answer; the group adapts its rate (Group.record_status)."""
        if status == 429:
            self.rate_limited += 1
        elif status >= 500:
            self.server_errors += 1
        self.group.record_status(status, deferred=deferred)

    def over_cap(self, seconds: float) -> bool:
        return self.group.over_cap(seconds)

    def defer(self, seconds: float, *, reason: str = "Retry-After") -> float:
        """Push the group's "not before" deadline `seconds` from now (capped)."""
        return self.group.defer(seconds, reason=reason)

    # --- taking a turn --------------------------------------------------------

    def backed_off(self, seconds: float) -> None:
        """A request of this host waits `seconds` from now: count the wall time once, however
        many requests wait at the same time (backoff_s never exceeds the run's length)."""
        now = asyncio.get_running_loop().time()
        until = now + seconds
        if until > self._backed_off_until:
            self.backoff_s += until - max(now, self._backed_off_until)
            self._backed_off_until = until

    def try_acquire(self) -> bool:
        """Take a slot and a turn now if neither needs a wait (the common case at an unlimited
        rate), without a coroutine. False: nothing was taken; `await acquire()` instead."""
        if self._settle is None and self.group.try_acquire():
            self.requests += 1
            return True
        return False

    async def acquire(self, *, hold_slot: bool = True) -> bool:
        """Wait for the group's turn: deadline, rate limiter and (optionally) an in-flight
        slot. Returns True when a slot is held; the caller must then `release()` it."""
        if self._settle is not None:
            await self.settle()
        held = await self.group.acquire(self, hold_slot=hold_slot)
        self.requests += 1
        return held

    def release(self) -> None:
        self.group.release()

    def stats(self) -> HostStats:
        group = self.group
        notes = dict.fromkeys([*self.notes, *group.notes])  # each once, the host's first
        rate = group.rate
        return HostStats(
            host=self.key,
            requests=self.requests,
            retries=self.retries,
            rate_limited=self.rate_limited,
            server_errors=self.server_errors,
            backoff_s=self.backoff_s,
            rate=None if math.isinf(rate) else rate,
            slow=group.slow,
            crawl_delay=self.crawl_delay,
            notes=tuple(notes),
            group=group.key,
        )


class HostPool:
    """One `Host` per scheme://host:port, created lazily on first use, each in its group:
    `key` is --politeness-key (host, ip, domain). With `ip`, `address_of(name)` gives a
    name's address (None, or any error: it does not resolve), asked once per host, at its
    first request."""

    def __init__(
        self,
        *,
        rate: float,
        max_in_flight: int,
        retry_after_cap: float,
        key: str = "host",
        address_of: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        if key not in POLITENESS_KEYS:
            raise ValueError(f"unknown politeness key: {key!r}")
        self._rate = rate
        self._max_in_flight = max_in_flight
        self._retry_after_cap = retry_after_cap
        self.key = key
        self._address_of = address_of
        self._hosts: dict[str, Host] = {}
        self._groups: dict[str, Group] = {}
        # url_prefix() -> host: no urlsplit per request (None, no prefix, is never a key)
        self._by_prefix: dict[str | None, Host] = {}
        # The last URL asked for and its host: a listed URL is looked up by the worker that
        # takes it, then by its request, with no other lookup in between. (No URL is the
        # object the key starts as.)
        self._last_url: object = object()
        self._last_host: Host

    def get(self, url: str) -> Host:
        """The host object of `url` (an absolute http(s) URL or an origin); ValueError otherwise."""
        if self._last_url is url:
            return self._last_host
        prefix = url_prefix(url)
        host = self._by_prefix.get(prefix)
        if host is None:
            key = origin_of(url)
            host = self._hosts.get(key)
            if host is None:
                host = self._hosts[key] = self._new_host(key)
            if prefix is not None:
                if len(self._by_prefix) >= _KEY_CACHE_MAX:
                    self._by_prefix.clear()
                self._by_prefix[prefix] = host
        self._last_url, self._last_host = url, host
        return host

    def _group(self, gid: str) -> Group:
        group = self._groups.get(gid)
        if group is None:
            group = self._groups[gid] = Group(
                gid,
                rate=self._rate,
                max_in_flight=self._max_in_flight,
                retry_after_cap=self._retry_after_cap,
            )
        return group

    def _new_host(self, key: str) -> Host:
        _, hostname, _ = _origin_parts(key)
        literal = _ip_literal(hostname)
        if self.key == "host":
            gid = key
        elif literal is not None:
            gid = literal
        elif self.key == "domain":
            gid = registrable_domain(hostname)
        else:  # ip: a group of its own until its name is resolved
            host = Host(
                key,
                rate=self._rate,
                max_in_flight=self._max_in_flight,
                retry_after_cap=self._retry_after_cap,
            )
            host._settle = self._resolve
            return host
        return Host(key, self._group(gid), retry_after_cap=self._retry_after_cap)

    async def _resolve(self, host: Host) -> None:
        """--politeness-key ip: the host joins the group of its name's first address."""
        address = None  # a name that does not resolve: a group of its own
        if self._address_of is not None:
            with contextlib.suppress(Exception):
                address = await self._address_of(host.hostname)
        host.group = self._group(address or host.hostname)

    def stats(self) -> list[HostStats]:
        return [h.stats() for h in sorted(self._hosts.values(), key=lambda h: h.key)]

    def groups(self) -> list[dict[str, Any]]:
        """Each group of the run: its id, its hosts and their requests (the hosts record)."""
        found: dict[str, dict[str, Any]] = {}
        for host in sorted(self._hosts.values(), key=lambda h: h.key):
            entry = found.setdefault(
                host.group.key, {"group": host.group.key, "requests": 0, "hosts": []}
            )
            entry["requests"] += host.requests
            entry["hosts"].append(host.key)
        return list(found.values())


def _ip_literal(hostname: str) -> str | None:
    """An IP-literal host as its group id (IPv6 compressed, lower case), else None."""
    try:
        return ipaddress.ip_address(hostname.split("%", 1)[0]).compressed
    except ValueError:
        return None


def address_id(address: str) -> str:
    """A resolver's answer as a group id: IPv4 dotted, IPv6 compressed, lower case."""
    return _ip_literal(address) or address.lower()


_PSL: Any = None


def registrable_domain(hostname: str) -> str:
    """The registrable domain of a host name (Public Suffix List, ICANN and PRIVATE
    sections, from the `publicsuffixlist` package: nothing is fetched), as IDNA A-labels
    in lower case; a name that is itself a public suffix, or has one label, is its own."""
    global _PSL
    name = hostname.rstrip(".").lower()
    with contextlib.suppress(UnicodeError):
        name = name.encode("idna").decode("ascii")
    if "." not in name:
        return name
    if _PSL is None:
        from publicsuffixlist import PublicSuffixList  # the list ships with the package

        _PSL = PublicSuffixList()
    found = _PSL.privatesuffix(name)
    return found if isinstance(found, str) else name


def _note(notes: list[str], text: str) -> None:
    """A note for a group's or a host's record, once: one repeating itself is noted once."""
    if text not in notes:
        notes.append(text)
