"""The run's URL fingerprint table: `fingerprint` and `SeenUrls`, the one source of both.

A URL is remembered as the 64-bit fingerprint of its normalised form, never as a string:
SeenUrls (loc-duplicate across sitemaps, the crawl frontier, migrate's listed URLs) and the
hreflang graphs (audit.rules.hreflang) all key URLs this way.

Fingerprints use Python's `hash()` of the normalised URL: fast, 64 bits, and stable within
one process only (PYTHONHASHSEED): a run that is resumed in a new process must re-add the
URLs it had seen. A URL's key in a file that another process reads again (the state's
tables, the link crawl's store) is `url_key`: the same normalised form, hashed with blake2b,
the same in every process. These two are the only ways a URL is hashed.

Pure and synchronous, standard library only; must not import aiohttp, asyncio or the parser.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Sequence

from audit.rules.urls import normalize_url

__all__ = ["SeenUrls", "fingerprint", "url_fingerprint", "url_key"]

_MASK64 = (1 << 64) - 1
_SRC_BITS = 12  # low bits of a stored value: which sitemap listed the URL first (0 = unknown)
_SRC_MAX = (1 << _SRC_BITS) - 1
_KEY_MASK = _MASK64 ^ _SRC_MAX  # the fingerprint bits a stored value keeps
_FIRST_BITS = 12  # 4,096 buckets at first, chosen by the top bits of the fingerprint
_MAX_BITS = 20
_GROW_AT = 64  # average entries per bucket at which there become 4 times as many buckets


def fingerprint(normalized_url: str) -> int:
    """The 64-bit fingerprint of an already normalised URL (never 0)."""
    return (hash(normalized_url) & _MASK64) or 1


def url_fingerprint(url: str) -> int:
    """The fingerprint of any URL as written (normalised here)."""
    return fingerprint(normalize_url(url))


def url_key(url: str) -> int:
    """The stored key of any URL as written (normalised here): a signed 64-bit integer
    (a SQLite rowid) from blake2b, the same in every process, so a file written by one run
    is read by the next (the state, a resumed link crawl)."""
    norm = normalize_url(url).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(norm, digest_size=8).digest(), "big", signed=True)


class SeenUrls:
    """A set of URLs that stores 8 bytes per URL instead of the URL strings.

    The 64-bit fingerprint of each normalised URL goes into one of 4,096
    sorted `array('Q')` buckets (chosen by its top 12 bits; created lazily).
    When the buckets average 64 entries, each is split into 4 by the next 2
    bits (slices of a sorted array, no rehashing), so a lookup stays a short
    bisect at any size while a small table keeps few bucket objects.
    A stored value is the fingerprint's top 52 bits and, in the low 12 bits,
    the ordinal of the sitemap that listed it first (sitemaps 1..4095 are
    remembered; later ones show as unknown). Lookup is a C-level bisect,
    insertion a memmove within one small bucket, so there is no load factor:
    1,000,000 URLs take about 10 MB. Two different URLs share a
    52-bit fingerprint with probability about n²/2⁵³ (1e-4 for a million
    URLs): such a pair would be reported as a duplicate.
    """

    __slots__ = ("_buckets", "_count", "_grow_at", "_shift", "_source_ids", "_sources")

    def __init__(self) -> None:
        self._buckets: list[array[int] | None] = [None] * (1 << _FIRST_BITS)
        self._shift = 64 - _FIRST_BITS  # fp >> _shift is the bucket index
        self._grow_at = _GROW_AT << _FIRST_BITS
        self._count = 0
        self._sources: list[str] = []
        self._source_ids: dict[str, int] = {}

    def __len__(self) -> int:
        return self._count

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.contains_fp(url_fingerprint(url))

    @property
    def nbytes(self) -> int:
        """Bytes allocated by the buckets and their index (the dominant memory cost)."""
        total = 8 * len(self._buckets)
        for bucket in self._buckets:
            if bucket is not None:
                total += bucket.buffer_info()[1] * 8 + 64
        return total

    def source_id(self, source: str) -> int:
        """The ordinal of a sitemap (registered on first use) stored with the URLs it lists first."""
        sid = self._source_ids.get(source)
        if sid is None:
            if len(self._sources) >= _SRC_MAX:
                return 0
            self._sources.append(source)
            sid = self._source_ids[source] = len(self._sources)
        return sid

    def source_name(self, source_id: int) -> str | None:
        return self._sources[source_id - 1] if 0 < source_id <= len(self._sources) else None

    def add(self, url: str, source: str | None = None) -> bool:
        """Add a URL (normalised here); True if it had been added before."""
        sid = self.source_id(source) if source is not None else 0
        return bool(self.add_all((normalize_url(url),), sid))

    def add_all(
        self, norms: Sequence[str | None], source_id: int = 0
    ) -> list[tuple[int, str, int]]:
        """Add each of the already normalised URLs `norms` in order (None: skipped), as
        add_fp(fingerprint(norm), source_id) would; returns the (position, URL, first
        source id) of each one added before. Written out, with no call per URL: the
        validator adds every <url> of an audit through it a batch of entries at a time,
        the link crawl a page's links at a time."""
        again: list[tuple[int, str, int]] = []
        buckets, shift = self._buckets, self._shift
        for i, norm in enumerate(norms):
            if norm is None:
                continue
            low = hash(norm) & _KEY_MASK
            bucket = buckets[low >> shift]
            if bucket is None:
                bucket = buckets[low >> shift] = array("Q")
            j = bisect_left(bucket, low)
            # bucket[j] >= low: the same key exactly when only the source bits differ
            if j < len(bucket) and bucket[j] - low <= _SRC_MAX:
                again.append((i, norm, bucket[j] & _SRC_MAX))
                continue
            bucket.insert(j, low | source_id)
            self._count += 1
            if self._count > self._grow_at:
                self._grow()
                buckets, shift = self._buckets, self._shift
        return again

    def contains_fp(self, fp: int) -> bool:
        bucket = self._buckets[fp >> self._shift]
        if bucket is None:
            return False
        key = fp >> _SRC_BITS
        i = bisect_left(bucket, key << _SRC_BITS)
        return i < len(bucket) and bucket[i] >> _SRC_BITS == key

    def add_fp(self, fp: int, source_id: int = 0) -> int:
        """Add a fingerprint; -1 if it is new, else the source id it was first added with."""
        index = fp >> self._shift
        bucket = self._buckets[index]
        if bucket is None:
            bucket = self._buckets[index] = array("Q")
        key = fp >> _SRC_BITS
        low = key << _SRC_BITS
        i = bisect_left(bucket, low)
        if i < len(bucket):
            stored = bucket[i]
            if stored >> _SRC_BITS == key:
                return stored & _SRC_MAX
        bucket.insert(i, low | source_id)
        self._count += 1
        if self._count > self._grow_at:
            self._grow()
        return -1

    def _grow(self) -> None:
        """Four times as many buckets: each sorted bucket splits into 4 consecutive slices."""
        shift = self._shift - 2
        if shift < 64 - _MAX_BITS:
            self._grow_at = 1 << 62  # large enough already: buckets just get longer
            return
        split: list[array[int] | None] = [None] * (len(self._buckets) * 4)
        for index, bucket in enumerate(self._buckets):
            if bucket is None:
                continue
            # the 4 consecutive slices of the sorted bucket go to index*4 .. index*4+3 (the
            # last ends at the old bucket's end: every value is below (index+1) << old shift)
            start = 0
            for new_index in range(index * 4, index * 4 + 4):
                end = bisect_left(bucket, (new_index + 1) << shift)
                if end > start:
                    split[new_index] = bucket[start:end]
                start = end
        self._buckets = split
        self._shift = shift
        self._grow_at <<= 2
