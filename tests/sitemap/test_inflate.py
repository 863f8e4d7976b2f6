"""audit.sitemap.inflate: gzip by magic bytes, nested layers, members, a hard output cap."""

from __future__ import annotations

import gzip

import pytest

from audit.sitemap.inflate import MAX_GZIP_LAYERS, GzipError, Inflater

DOC = b"<urlset>" + b"<url><loc>https://www.example.com/p</loc></url>" * 500 + b"</urlset>"


def inflate(
    data: bytes, chunk: int | None = None, max_output: int = 10**7
) -> tuple[bytes, Inflater]:
    inf = Inflater(max_output)
    step = chunk or max(len(data), 1)
    out = [inf.feed(data[i : i + step]) for i in range(0, len(data), step)]
    out.append(inf.close())
    return b"".join(out), inf


@pytest.mark.parametrize("chunk", [1, 7, None])
def test_plain_passes_through(chunk: int | None) -> None:
    out, inf = inflate(DOC, chunk)
    assert out == DOC
    assert inf.gzip_layers == 0
    assert not inf.truncated_at_limit


@pytest.mark.parametrize("chunk", [1, 7, None])
@pytest.mark.parametrize("layers", [1, 2, 3])
def test_nested_gzip_is_inflated_layer_by_layer(chunk: int | None, layers: int) -> None:
    data = DOC
    for _ in range(layers):
        data = gzip.compress(data, mtime=0)
    out, inf = inflate(data, chunk)
    assert out == DOC
    assert inf.gzip_layers == layers


def test_multi_member_gzip_is_one_stream() -> None:
    data = gzip.compress(DOC[:100]) + gzip.compress(DOC[100:])
    out, inf = inflate(data, 5)
    assert out == DOC
    assert inf.gzip_layers == 1


def test_zero_padding_after_the_last_member_is_tolerated() -> None:
    out, _ = inflate(gzip.compress(DOC) + b"\x00" * 10)
    assert out == DOC


def test_trailing_garbage_is_an_error() -> None:
    with pytest.raises(GzipError, match="trailing garbage"):
        inflate(gzip.compress(DOC) + b"<html>")


def test_detection_ignores_names_only_magic_counts() -> None:
    # Starts with 0x1f but not the full magic: plain.
    out, inf = inflate(b"\x1fplain")
    assert out == b"\x1fplain"
    assert inf.gzip_layers == 0
    out, inf = inflate(b"\x1f")  # a single byte, decided at close
    assert out == b"\x1f"


def test_truncated_gzip_raises_at_close_with_one_line() -> None:
    data = gzip.compress(DOC)
    inf = Inflater(10**7)
    head = inf.feed(data[: len(data) // 2])
    assert DOC.startswith(head)
    with pytest.raises(GzipError) as err:
        inf.close()
    assert "truncated" in str(err.value)
    assert "\n" not in str(err.value)


def test_corrupt_gzip_raises_on_feed_and_keeps_partial_output() -> None:
    data = bytearray(gzip.compress(DOC * 20, compresslevel=1))
    data[len(data) // 2] ^= 0xFF
    data[len(data) // 2 + 1] ^= 0xFF
    with pytest.raises(GzipError) as err:
        inflate(bytes(data), 1)
    assert "\n" not in str(err.value)

    def until_fault(step: int) -> bytes:
        inf, out = Inflater(10**7), b""
        try:
            for i in range(0, len(data), step):
                out += inf.feed(bytes(data[i : i + step]))
            inf.close()
        except GzipError as exc:
            return out + exc.partial
        pytest.fail("corrupt data was accepted")

    # what comes out before the fault (good data, then what the damage decodes to)
    # is the same however the input is split
    whole = until_fault(len(data))
    assert whole == until_fault(1) == until_fault(7)
    assert whole[:1000] == (DOC * 20)[:1000]


def test_output_is_capped_and_flagged() -> None:
    data = gzip.compress(b" " * 1_000_000)
    out, inf = inflate(data, 1000, max_output=50_000)
    assert len(out) == 50_000
    assert inf.truncated_at_limit
    # Exactly at the limit is not over it.
    out, inf = inflate(gzip.compress(b"x" * 1000), max_output=1000)
    assert len(out) == 1000
    assert not inf.truncated_at_limit


def test_nested_bomb_is_capped_at_every_layer() -> None:
    data = gzip.compress(gzip.compress(b"\x00" * 20_000_000))
    inf = Inflater(100_000)
    out = inf.feed(data)
    assert len(out) <= 100_000
    assert inf.truncated_at_limit
    assert inf.gzip_layers == 2
    assert inf.close() == b""


def test_plain_input_is_capped_too() -> None:
    out, inf = inflate(b"a" * 100, 7, max_output=10)
    assert out == b"a" * 10
    assert inf.truncated_at_limit


def test_too_many_layers_is_an_error() -> None:
    data = b"x"
    for _ in range(MAX_GZIP_LAYERS + 1):
        data = gzip.compress(data)
    with pytest.raises(GzipError, match="nested gzip layers"):
        inflate(data)
