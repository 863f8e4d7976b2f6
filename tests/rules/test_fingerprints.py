"""rules/fingerprints.py: the two ways a URL is hashed, both of its normalised form: the
in-memory fingerprint of SeenUrls, and `url_key`, the key a file keeps (the state, the link
crawl's store), the same in every process."""

from __future__ import annotations

import os
import subprocess
import sys

from audit.rules.fingerprints import SeenUrls, fingerprint, url_fingerprint, url_key
from audit.rules.urls import normalize_url

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
