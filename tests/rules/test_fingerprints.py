"""The run's URL fingerprint table (audit/rules/fingerprints.py): SeenUrls as a set of
normalised URLs in 8 bytes each, growing its buckets, remembering which sitemap listed a URL
first; fingerprints equal for the spellings of one URL."""

from __future__ import annotations

import os
import subprocess
import sys

from audit.rules.fingerprints import SeenUrls, fingerprint, url_fingerprint, url_key
from audit.rules.urls import normalize_url

B = "https://www.example.com"


def test_spellings_of_one_url_share_a_fingerprint() -> None:
    same = [f"{B}/a%7e", "HTTPS://WWW.EXAMPLE.COM:443/a%7E", f"{B}/a%7E"]
    assert len({url_fingerprint(u) for u in same}) == 1
    assert url_fingerprint(f"{B}/a") != url_fingerprint(f"{B}/A")
    assert url_fingerprint(same[1]) == fingerprint(normalize_url(same[1]))
    assert fingerprint("") != 0  # never 0: 0 means "no fingerprint" in the buckets


def test_seen_urls() -> None:
    seen = SeenUrls()
    assert seen.add(f"{B}/a") is False
    assert seen.add(f"{B}/a") is True
    assert seen.add("https://WWW.example.com:443/a") is True
    assert seen.add(f"{B}/A") is False
    assert len(seen) == 2 and f"{B}/a" in seen and f"{B}/b" not in seen
    many = SeenUrls()
    n = 20_000
    assert not any(many.add(f"{B}/p/{i}", None) for i in range(n))
    assert all(many.add(f"{B}/p/{i}") for i in range(n))
    assert len(many) == n
    assert many.nbytes < 24 * n  # 8 bytes a URL plus bucket overhead


def test_seen_urls_grows_its_buckets() -> None:
    # Past 64 entries a bucket on average the table splits every bucket in four; what
    # was added before must still be found, with the source it was first added with.
    import random

    rng = random.Random(5)
    seen = SeenUrls()
    fps = [rng.getrandbits(64) | 1 for _ in range(300_000)]
    for i, fp in enumerate(fps):
        assert seen.add_fp(fp, i % 7 + 1) == -1
    assert len(seen) == len(fps) and len(seen._buckets) > 4096
    assert all(seen.add_fp(fps[i]) == i % 7 + 1 for i in range(0, len(fps), 97))
    assert all(seen.contains_fp(fp) for fp in fps[1::89])
    assert not any(seen.contains_fp(rng.getrandbits(64)) for _ in range(1000))
    assert len(seen) == len(fps)


def test_seen_urls_remembers_first_source() -> None:
    seen = SeenUrls()
    seen.add(f"{B}/a", "s1.xml")
    seen.add(f"{B}/b", "s2.xml")
    assert seen.source_name(seen.add_fp(fingerprint(f"{B}/b"))) == "s2.xml"
    assert seen.source_name(seen.add_fp(fingerprint(f"{B}/a"))) == "s1.xml"


def test_seen_urls_source_registered_once() -> None:
    seen = SeenUrls()
    assert seen.source_id("a.xml") == seen.source_id("a.xml") == 1
    assert seen.source_id("b.xml") == 2
    for i in range(100):
        seen.add(f"{B}/{i}", "a.xml")
    assert seen.source_id("c.xml") == 3


URL = "http://example.com/a%2fb?x=1"
VARIANT = "HTTP://Example.COM:80/a%2Fb?x=1"  # scheme and host case, the default port, %2f


def test_a_url_and_its_variant_share_one_fingerprint_and_one_key() -> None:
    assert normalize_url(VARIANT) == normalize_url(URL)
    assert url_fingerprint(VARIANT) == url_fingerprint(URL) == fingerprint(normalize_url(URL))
    assert url_key(VARIANT) == url_key(URL) != url_key("http://example.com/a%2fb?x=2")
    seen = SeenUrls()
    assert not seen.add(URL) and seen.add(VARIANT) and VARIANT in seen


def test_the_key_is_a_signed_64_bit_integer_the_same_in_every_process() -> None:
    keys = [url_key(f"http://example.com/{i}") for i in range(2000)]
    assert all(-(1 << 63) <= k < (1 << 63) for k in keys)
    assert any(k < 0 for k in keys) and len(set(keys)) == len(keys)
    code = f"from audit.rules.fingerprints import url_key; print(url_key({VARIANT!r}))"
    for seed in ("1", "2"):  # another process, another str hash seed
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert int(out.stdout) == url_key(URL)
