"""What a target is (audit.pipeline.targets.classify_target): real files and directories,
URLs of each kind, and one-line errors for what is neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.core.errors import TargetError
from audit.pipeline.targets import classify_target


def test_a_readable_file_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text("<urlset/>")
    assert classify_target(str(path)) == ("file", str(path))


@pytest.mark.parametrize(
    ("target", "kind", "value"),
    [
        ("https://example.test", "site", "https://example.test/"),
        ("https://example.test/", "site", "https://example.test/"),
        ("http://example.test:8080/robots.txt", "robots", "http://example.test:8080/robots.txt"),
        ("https://example.test/ROBOTS.TXT", "robots", "https://example.test/ROBOTS.TXT"),
        ("https://example.test/sitemap.xml", "sitemap", "https://example.test/sitemap.xml"),
        ("https://example.test/?page=1", "sitemap", "https://example.test/?page=1"),
    ],
)
def test_urls_by_kind(target: str, kind: str, value: str) -> None:
    assert classify_target(target) == (kind, value)


def test_a_directory_a_missing_file_and_bad_urls_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text("<urlset/>")
    (tmp_path / "loop.xml").symlink_to(tmp_path / "loop.xml")
    cases = {
        str(tmp_path): "is a directory, not a sitemap file",
        str(tmp_path / "nope.xml"): "no such file (and not an http(s) URL)",
        str(tmp_path / "a.xml" / "b.xml"): "no such file (and not an http(s) URL)",  # ENOTDIR
        str(tmp_path / "loop.xml"): "no such file (and not an http(s) URL)",  # ELOOP
        "ftp://example.test/sitemap.xml": "not an http(s) URL or a local file",
        "https:///sitemap.xml": "not an http(s) URL or a local file",
        "https://example.test:99999/sitemap.xml": "bad port in URL",
    }
    for target, message in cases.items():
        with pytest.raises(TargetError) as err:
            classify_target(target)
        assert str(err.value) == f"{target}: {message}"
        assert "\n" not in str(err.value)


def test_an_unreadable_file_says_why(tmp_path: Path) -> None:
    path = tmp_path / "locked.xml"
    path.write_text("<urlset/>")
    path.chmod(0)
    try:
        try:
            path.open("rb").close()
        except OSError:
            pass
        else:
            pytest.skip("running as a user that reads any file")
        with pytest.raises(TargetError, match=r"locked\.xml: cannot be read: Permission denied"):
            classify_target(str(path))
    finally:
        path.chmod(0o644)
