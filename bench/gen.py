"""Deterministic (seeded) generators of the benchmark's sitemap sets and crawl sites.

Writes only under bench/out/. A stamp file per set records the parameters it was made
with, so a second run reuses the files instead of writing hundreds of MB again.
Imports nothing of the product.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GEN_VERSION = 4
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS_IMAGE = "http://www.google.com/schemas/sitemap-image/1.1"
PAGE_MTIME = 1_705_320_000  # 2024-01-15T12:00:00Z: Last-Modified of every 200 page
PAGE_LASTMOD = "2024-01-15T12:00:00+00:00"

# fmt: off
_WORDS = (
    "blue", "linen", "shirt", "oak", "table", "garden", "lamp", "travel", "guide", "winter",
    "boots", "coffee", "grinder", "city", "bike", "kitchen", "knife", "summer", "dress", "wool",
    "scarf", "desk", "chair", "running", "shoes",
)
# fmt: on
_SECTIONS = ("products", "blog", "category", "guides", "stores", "help")
_FREQS = ("daily", "weekly", "monthly", "yearly")
_TZ = ("+00:00", "Z", "+01:00", "+02:00", "-05:00", "+05:30")


@dataclass(frozen=True)
class SitemapSet:
    """A generated set on disk: the index and its children (the urlset files)."""

    directory: Path
    index: Path
    children: list[Path]
    entries: int


def _stamp_ok(directory: Path, params: dict[str, object]) -> bool:
    stamp = directory / "stamp.json"
    try:
        return bool(json.loads(stamp.read_text()) == params)
    except (OSError, ValueError):
        return False


def _write_stamp(directory: Path, params: dict[str, object]) -> None:
    (directory / "stamp.json").write_text(json.dumps(params, sort_keys=True))


def _lastmod(rng: random.Random) -> str:
    # Spread over 2022-2024, always in the past; a tenth are date-only (W3C allows it).
    y, mo, d = rng.randint(2022, 2024), rng.randint(1, 12), rng.randint(1, 28)
    if rng.random() < 0.1:
        return f"{y:04d}-{mo:02d}-{d:02d}"
    h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{rng.choice(_TZ)}"


def _validate_entries(rng: random.Random, start: int, count: int) -> Iterator[str]:
    """Realistic urlset entries: unique locs, lastmod with timezone, some changefreq and
    priority, a few image extensions. One element a line, as most generators write."""
    for n in range(start, start + count):
        section = _SECTIONS[n % len(_SECTIONS)]
        slug = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{n}"
        parts = [
            "  <url>\n",
            f"    <loc>https://bench.example/{section}/{n % 97}/{slug}.html</loc>\n",
            f"    <lastmod>{_lastmod(rng)}</lastmod>\n",
        ]
        if rng.random() < 0.4:
            parts.append(f"    <changefreq>{rng.choice(_FREQS)}</changefreq>\n")
        if rng.random() < 0.3:
            parts.append(f"    <priority>{rng.randint(1, 10) / 10:.1f}</priority>\n")
        if rng.random() < 0.05:
            parts.append(
                "    <image:image>\n"
                f"      <image:loc>https://bench.example/img/{n}.jpg</image:loc>\n"
                "    </image:image>\n"
            )
        parts.append("  </url>\n")
        yield "".join(parts)


def _urlset(entries: Iterator[str]) -> bytes:
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{NS}"\n        xmlns:image="{NS_IMAGE}">\n'
    )
    return (head + "".join(entries) + "</urlset>\n").encode()


def _index(locs: list[str], lastmod: str) -> bytes:
    body = "".join(
        f"  <sitemap>\n    <loc>{loc}</loc>\n    <lastmod>{lastmod}</lastmod>\n  </sitemap>\n"
        for loc in locs
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n'
        f"{body}</sitemapindex>\n"
    ).encode()


def _write(path: Path, data: bytes, gz: bool) -> None:
    tmp = path.with_name(path.name + ".tmp")
    # mtime=0 keeps the gzip bytes identical run after run.
    tmp.write_bytes(gzip.compress(data, compresslevel=6, mtime=0) if gz else data)
    os.replace(tmp, path)


def validate_set(
    directory: Path, files: int, per_file: int, gzipped: set[int], seed: int = 20240115
) -> SitemapSet:
    """An index plus `files` urlsets of `per_file` entries; child numbers in `gzipped`
    (1-based) are written gzip-compressed as sitemap-NN.xml.gz."""
    params: dict[str, object] = {
        "v": GEN_VERSION,
        "files": files,
        "per_file": per_file,
        "gz": sorted(gzipped),
        "seed": seed,
    }
    names = [f"sitemap-{i:02d}.xml" + (".gz" if i in gzipped else "") for i in range(1, files + 1)]
    children = [directory / name for name in names]
    index = directory / "sitemap_index.xml"
    result = SitemapSet(directory, index, children, files * per_file)
    if _stamp_ok(directory, params) and index.is_file() and all(c.is_file() for c in children):
        return result
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for i, path in enumerate(children):
        data = _urlset(_validate_entries(rng, i * per_file, per_file))
        _write(path, data, gz=(i + 1) in gzipped)
    locs = [f"https://bench.example/{name}" for name in names]
    _write(index, _index(locs, "2024-06-01T00:00:00+00:00"), gz=False)
    _write_stamp(directory, params)
    return result


@dataclass(frozen=True)
class Site:
    """A generated crawl site: the web root nginx serves and what it lists."""

    root: Path
    origin: str
    children: list[Path]
    urls: int
    mix: dict[str, int]


def _page_html() -> bytes:
    filler = "".join(f"<p>Paragraph {i} of a typical product page.</p>\n" for i in range(30))
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        "<title>Bench page</title></head>\n<body>\n<h1>Bench page</h1>\n"
        f"{filler}</body></html>\n"
    ).encode()


def crawl_site(
    root: Path, origin: str, files: int, per_file: int, gzipped: set[int], seed: int = 20240116
) -> Site:
    """A site of files*per_file URLs: ~85% 200 pages (/p/, Last-Modified from one static
    file), ~5% 301 to a 200 (/r/), ~5% 404 (/gone/), ~5% disallowed by robots.txt
    (/private/). The sitemaps name `origin`, so the site is rewritten when the port changes."""
    mix = {"200": 0, "301": 0, "404": 0, "robots": 0}
    params: dict[str, object] = {
        "v": GEN_VERSION,
        "files": files,
        "per_file": per_file,
        "gz": sorted(gzipped),
        "seed": seed,
        "origin": origin,
    }
    names = [f"sitemap-{i}.xml" + (".gz" if i in gzipped else "") for i in range(1, files + 1)]
    # Children beside the index at the root, as real generators lay them out: a child
    # under /sitemaps/ could not list /p/... (sitemaps.org: loc-outside-path).
    children = [root / name for name in names]
    rng = random.Random(seed)
    kinds = [rng.random() for _ in range(files * per_file)]
    for x in kinds:
        mix["200" if x < 0.85 else "301" if x < 0.90 else "404" if x < 0.95 else "robots"] += 1
    site = Site(root, origin, children, files * per_file, mix)
    if _stamp_ok(root, params) and all(c.is_file() for c in children):
        return site
    root.mkdir(parents=True, exist_ok=True)
    page = root / "page.html"
    page.write_bytes(_page_html())
    os.utime(page, (PAGE_MTIME, PAGE_MTIME))
    (root / "robots.txt").write_text(
        f"User-agent: *\nDisallow: /private/\n\nSitemap: {origin}/sitemap_index.xml\n"
    )
    prefix = {"200": "p", "301": "r", "404": "gone", "robots": "private"}
    for i, path in enumerate(children):
        lines = []
        for n in range(i * per_file, (i + 1) * per_file):
            x = kinds[n]
            kind = "200" if x < 0.85 else "301" if x < 0.90 else "404" if x < 0.95 else "robots"
            lines.append(
                f"  <url>\n    <loc>{origin}/{prefix[kind]}/{n}.html</loc>\n"
                f"    <lastmod>{PAGE_LASTMOD}</lastmod>\n  </url>\n"
            )
        _write(path, _urlset(iter(lines)), gz=(i + 1) in gzipped)
    locs = [f"{origin}/{name}" for name in names]
    _write(root / "sitemap_index.xml", _index(locs, PAGE_LASTMOD), gz=False)
    _write_stamp(root, params)
    return site
