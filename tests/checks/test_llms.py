"""checks/llms.py: the llmstxt.org shape, the links of an llms.txt, HTML shells, link codes
(contracts/agents.md, "llms.txt"; issue 30)."""

from __future__ import annotations

import pytest

from audit.checks.llms import (
    LinkAnswer,
    decode_llms,
    is_html_shell,
    link_code,
    read_llms,
    resolve_links,
)

VALID = """\
# Example

> A site about examples.

Some prose, and a [link in prose](/prose).

## Docs

- [Guide](https://example.com/guide): how to start
- [API](/api.md)
  - [Nested](/nested)

### Details

More text with an autolink <https://example.com/auto>.

```
- not a link item [x](/in-fence)
# not a title
```

## Optional

* [Changelog](changelog)
"""


def test_a_valid_file_and_its_links_in_order() -> None:
    read = read_llms(VALID)
    assert read.invalid_line is None
    assert read.links == (
        ("/prose", 5),
        ("https://example.com/guide", 9),
        ("/api.md", 10),
        ("/nested", 11),
        ("https://example.com/auto", 15),
        ("changelog", 24),
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("\n\nExample\n## Docs\n", 3),  # first non-blank line is not an H1
        ("# A\ntext\n# B\n", 3),  # a second title
        ("# A\n## Docs\n- [ok](/a)\n- plain text item\n", 4),  # an item without a link
        ("# A\n## Docs\n+ see [x](/x)\n", 3),  # the link must open the item
        ("#A\n", 1),  # `#` needs a space or tab
        ("    # indented code\n", 1),
    ],
)
def test_the_first_line_that_breaks_the_shape(text: str, line: int) -> None:
    assert read_llms(text).invalid_line == line


@pytest.mark.parametrize(
    "text",
    [
        "# A\n- plain item before the first H2\n## S\n- [a](/a) text after\n",
        "   #\t A\n## S\n### H3\nparagraph\n- [a](</a b>)\n",
        "~~~\nnot checked\n~~~\n# A\n## S\n",  # fence lines are ignored by the shape
        "\ufeff# A\r\n## S\r- [a](/a)\r\n",
        "",
    ],
)
def test_allowed_shapes(text: str) -> None:
    assert read_llms(decode_llms(text.encode())).invalid_line is None


def test_code_blocks_and_code_spans_hold_no_links() -> None:
    text = (
        "# A\n````md\n[x](/fenced)\n```\n[y](/still-fenced)\n````\n"
        "Use `[z](/span)` or ``<https://e.com/span2>`` here, and ![img](/image.png).\n"
        "~~~\n<https://e.com/tilde>\n~~~\n[real](/real) and [ref][r] and [empty]()\n"
    )
    assert [dest for dest, _ in read_llms(text).links] == ["/real", ""]


def test_resolve_drops_fragments_and_other_schemes_and_keeps_the_first_line() -> None:
    links = (
        ("/a#part", 3),
        ("HTTPS://Example.COM:443/a", 5),
        ("mailto:x@example.com", 6),
        ("b/c", 7),
        ("", 8),
        ("http://[bad", 9),
    )
    out = resolve_links("https://example.com/docs/llms.txt", links)
    assert out == {
        "https://example.com/a": ("https://example.com/a", 3),
        "https://example.com/docs/b/c": ("https://example.com/docs/b/c", 7),
        "https://example.com/docs/llms.txt": ("https://example.com/docs/llms.txt", 8),
    }


@pytest.mark.parametrize(
    ("ctype", "body", "shell"),
    [
        ("text/html; charset=utf-8", b"# A", True),
        ("application/xhtml+xml", b"", True),
        ("text/plain", b"  \n<!DOCTYPE html><html>", True),
        ("text/plain", b"<HTML lang=en>", True),
        ("text/markdown", b"# A <html>", False),
        (None, b"<htmlx", False),
    ],
)
def test_html_shells(ctype: str | None, body: bytes, shell: bool) -> None:
    assert is_html_shell(ctype, body) is shell


def _answer(status: int | None = 200, **kw: bool) -> LinkAnswer:
    fields = {
        "redirected": False,
        "failed": False,
        "html": True,
        "noindex": False,
        "canonical_elsewhere": False,
        "listed": False,
    }
    return LinkAnswer(status, **{**fields, **kw})


def test_link_codes_first_that_applies() -> None:
    page, md = "https://e.com/p", "https://e.com/p.md"
    assert link_code(page, _answer(404)) == "llms-link-broken"
    assert link_code(page, _answer(None)) == "llms-link-broken"
    assert link_code(page, _answer(200, redirected=True, failed=True)) == "llms-link-broken"
    assert link_code(page, _answer(410, redirected=True)) == "llms-link-broken"
    assert link_code(page, _answer(200, redirected=True)) == "llms-link-redirect"
    assert link_code(page, _answer(200, noindex=True)) == "llms-link-noindex"
    assert link_code(md, _answer(200, noindex=True)) == "llms-link-noindex"
    assert link_code(md, _answer(200)) == "llms-md-html"
    assert link_code(md, _answer(200, html=False)) is None
    assert link_code(md, _answer(404)) == "llms-link-broken"
    assert link_code(page, _answer(200)) == "llms-link-not-in-sitemap"
    assert link_code(page, _answer(200, listed=True)) is None
    assert link_code(page, _answer(200, html=False)) is None
    assert link_code(page, _answer(200, canonical_elsewhere=True)) is None
    assert link_code(page, _answer(204)) is None
