"""Bounded reading of compressed and length-prefixed content from a table.

Every size a file declares, and every size its content inflates to, is checked against what is
actually there and against one limit before anything is allocated: a 3 MB GZIP of zeros must not
become 3 GiB in memory, an Avro block must not claim more bytes than the file holds. The limit on
inflated content is ``LAKECONF_MAX_INFLATE_BYTES`` (default 128 MiB per file: far above any real
metadata file or manifest, which writers keep to a few MiB, and low enough that parsing what
survives stays well under a GiB).
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import zlib
from typing import Callable, Iterator

from reference_impl.errors import InvalidTable, Unsupported

DEFAULT_MAX_INFLATE = 128 << 20
_CHUNK = 1 << 20


def max_inflate() -> int:
    """The most bytes one file's compressed content may inflate to."""
    raw = os.environ.get("LAKECONF_MAX_INFLATE_BYTES", "")
    return int(raw) if raw.isascii() and raw.isdigit() else DEFAULT_MAX_INFLATE


def _too_big(what: str, limit: int, path: str | None, rule: str | None) -> InvalidTable:
    return InvalidTable(f"{what} inflates to more than {limit:,} bytes", path=path, rule=rule,
                        hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")


DEFAULT_MAX_PARSE = 512 << 20


def inflate_json_text(data: bytes, *, what: str, path: str | None = None, rule: str | None = None) -> bytes:
    """JSON text that may be GZIP-compressed (the magic decides, not the name), bounded twice.

    The inflated size is bounded by ``max_inflate``; then, because parsing JSON into Python objects
    multiplies its size (``[[],[],...]`` becomes about twenty times its text), what parsing would
    take is estimated from the text's containers and separators and refused past
    ``LAKECONF_MAX_PARSE_BYTES`` (default 512 MiB). Plain text is not estimated: it costs what a
    table's own file costs, and it was not amplified on the way in.
    """
    if data[:2] != b"\x1f\x8b":
        return data
    text = inflate("gzip", data, what=what, path=path, rule=rule)
    raw = os.environ.get("LAKECONF_MAX_PARSE_BYTES", "")
    budget = int(raw) if raw.isascii() and raw.isdigit() else DEFAULT_MAX_PARSE
    containers = text.count(b"[") + text.count(b"{")
    separators = text.count(b",") + text.count(b":")
    estimate = 2 * len(text) + 64 * containers + 16 * separators
    if estimate > budget:
        raise InvalidTable(f"{what} would take about {estimate:,} bytes to parse ({len(text):,} bytes of text, "
                           f"{containers:,} arrays and objects), over the {budget:,} allowed", path=path, rule=rule,
                           hint="if the table is genuine, raise LAKECONF_MAX_PARSE_BYTES")
    return text


def require_length(declared: int, available: int, what: str, *, path: str | None = None,
                   rule: str | None = None) -> int:
    """``declared`` if it is a length that fits in the ``available`` bytes; InvalidTable otherwise."""
    if declared < 0 or declared > available:
        raise InvalidTable(f"{what} declares {declared:,} bytes where only {available:,} remain", path=path, rule=rule)
    return declared


def _zlib_chunks(data: bytes, wbits: int, what: str, path: str | None, rule: str | None) -> Iterator[bytes]:
    """Inflated chunks of one or more concatenated zlib-family streams (GZIP allows several members)."""
    rest = data
    while rest:
        d = zlib.decompressobj(wbits)
        try:
            buf = rest
            while True:
                chunk = d.decompress(buf, _CHUNK)
                if chunk:
                    yield chunk
                buf = d.unconsumed_tail
                if not buf and (d.eof or not chunk):
                    break
        except zlib.error as exc:
            raise InvalidTable(f"{what} is not valid compressed data: {exc}", path=path, rule=rule) from None
        if not d.eof:
            raise InvalidTable(f"{what} ends inside its compressed stream", path=path, rule=rule)
        rest = d.unused_data
        if wbits != 16 + zlib.MAX_WBITS or not rest.strip(b"\x00"):
            break  # raw deflate is one stream; trailing zero padding after GZIP members is tolerated


def _stream_chunks(decompressor: Callable[[bytes, int], bytes], eof: Callable[[], bool] | None, data: bytes,
                   what: str, path: str | None, rule: str | None, errors: tuple[type[BaseException], ...]) -> Iterator[bytes]:
    """Chunks of a decompressor fed once and then drained; ``eof`` (if the codec can tell) must be reached."""
    try:
        chunk = decompressor(data, _CHUNK)
        while chunk:
            yield chunk
            if eof is not None and eof():
                break
            chunk = decompressor(b"", _CHUNK)
    except errors as exc:
        raise InvalidTable(f"{what} is not valid compressed data: {exc}", path=path, rule=rule) from None
    if eof is not None and not eof():
        raise InvalidTable(f"{what} ends inside its compressed stream", path=path, rule=rule)


def _chunks(codec: str, data: bytes, what: str, path: str | None, rule: str | None) -> Iterator[bytes]:
    if codec in ("gzip", "gz"):
        return _zlib_chunks(data, 16 + zlib.MAX_WBITS, what, path, rule)
    if codec == "deflate":
        return _zlib_chunks(data, -zlib.MAX_WBITS, what, path, rule)
    if codec == "bzip2":
        d = bz2.BZ2Decompressor()
        return _stream_chunks(d.decompress, lambda: d.eof, data, what, path, rule, (OSError, EOFError, ValueError))
    if codec == "xz":
        x = lzma.LZMADecompressor()
        return _stream_chunks(x.decompress, lambda: x.eof, data, what, path, rule, (lzma.LZMAError, EOFError))
    if codec in ("zstd", "zstandard"):
        try:
            import zstandard
        except ImportError:
            raise Unsupported(f"{what} is zstd-compressed and the zstandard package is not installed",
                              feature="codec:zstd", path=path) from None
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)

        def read(_data: bytes, n: int) -> bytes:
            return reader.read(n)

        return _stream_chunks(read, None, data, what, path, rule, (zstandard.ZstdError,))
    raise Unsupported(f"{what} uses compression codec {codec!r}", feature=f"codec:{codec}", path=path)


def inflate(codec: str, data: bytes, *, what: str, path: str | None = None, rule: str | None = None,
            limit: int | None = None) -> bytes:
    """The decompressed bytes, refused (InvalidTable) past ``limit`` before the excess is held."""
    limit = max_inflate() if limit is None else limit
    out = bytearray()
    for chunk in _chunks(codec, data, what, path, rule):
        out += chunk
        if len(out) > limit:
            raise _too_big(what, limit, path, rule)
    return bytes(out)


def inflated_size(codec: str, data: bytes, *, what: str, path: str | None = None, rule: str | None = None,
                  limit: int | None = None) -> int:
    """How many bytes ``data`` inflates to, counted without holding them; InvalidTable past ``limit``."""
    limit = max_inflate() if limit is None else limit
    total = 0
    for chunk in _chunks(codec, data, what, path, rule):
        total += len(chunk)
        if total > limit:
            raise _too_big(what, limit, path, rule)
    return total


def read_varint(data: bytes, pos: int, what: str, *, path: str | None = None, rule: str | None = None) -> tuple[int, int]:
    """An unsigned LEB128 varint at ``pos`` (at most 10 bytes) and the position after it."""
    value = shift = 0
    for i in range(10):
        if pos + i >= len(data):
            raise InvalidTable(f"{what} ends inside a length", path=path, rule=rule)
        b = data[pos + i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos + i + 1
        shift += 7
    raise InvalidTable(f"{what} has a length longer than 10 bytes", path=path, rule=rule)


def read_long(data: bytes, pos: int, what: str, *, path: str | None = None, rule: str | None = None) -> tuple[int, int]:
    """An Avro long (zig-zag varint) at ``pos`` and the position after it."""
    raw, pos = read_varint(data, pos, what, path=path, rule=rule)
    return (raw >> 1) ^ -(raw & 1), pos


def write_long(n: int) -> bytes:
    """An Avro long: zig-zag, then an unsigned LEB128 varint (the inverse of ``read_long``)."""
    z, out = (n << 1) ^ (n >> 63), bytearray()
    while True:
        if z < 0x80:
            out.append(z)
            return bytes(out)
        out.append((z & 0x7F) | 0x80)
        z >>= 7


_AVRO_MAGIC = b"Obj\x01"


def read_avro_header(data: bytes, *, what: str, path: str | None = None,
                     rule: str | None = None) -> tuple[dict[bytes, bytes], bytes, int]:
    """An Avro object container's header: its metadata map, its sync marker and where the blocks start.

    Every count and length in the map is checked against the bytes that remain.
    """
    if not data.startswith(_AVRO_MAGIC):
        raise InvalidTable(f"{what} does not start with the Avro magic", path=path, rule=rule)
    pos, n = len(_AVRO_MAGIC), len(data)
    meta: dict[bytes, bytes] = {}
    # File metadata: a map of string -> bytes, in blocks of (count, [size,] entries).
    while True:
        count, pos = read_long(data, pos, what, path=path, rule=rule)
        if count == 0:
            break
        if count < 0:
            _size, pos = read_long(data, pos, what, path=path, rule=rule)
            count = -count
        require_length(count, n - pos, f"{what} header map", path=path, rule=rule)
        for _ in range(count):
            klen, pos = read_long(data, pos, what, path=path, rule=rule)
            require_length(klen, n - pos, f"{what} header key", path=path, rule=rule)
            key = data[pos:pos + klen]
            pos += klen
            vlen, pos = read_long(data, pos, what, path=path, rule=rule)
            require_length(vlen, n - pos, f"{what} header value", path=path, rule=rule)
            meta[key] = data[pos:pos + vlen]
            pos += vlen
    require_length(16, n - pos, f"{what} sync marker", path=path, rule=rule)
    return meta, data[pos:pos + 16], pos + 16


def check_avro_container(data: bytes, *, what: str, path: str | None = None, rule: str | None = None,
                         limit: int | None = None, min_record_size: int = 1) -> None:
    """Walk an Avro object container file's header and blocks, bounding every declared size.

    Each block's byte count must fit in the file, its record count in its bytes (records of table
    metadata schemas take at least ``min_record_size`` bytes each), and the whole
    file's blocks must inflate to at most ``limit`` bytes (counted, never held). Record contents
    are left to the decoder; this only makes sure the decoder cannot be made to allocate without bound.
    """
    limit = max_inflate() if limit is None else limit
    meta, sync, pos = read_avro_header(data, what=what, path=path, rule=rule)
    codec = meta.get(b"avro.codec", b"").decode("ascii", "replace") or "null"
    n = len(data)
    total = 0
    while pos < n:
        records, pos = read_long(data, pos, what, path=path, rule=rule)
        size, pos = read_long(data, pos, what, path=path, rule=rule)
        require_length(size, n - pos, f"{what} block", path=path, rule=rule)
        block = data[pos:pos + size]
        pos += size
        if codec == "snappy":  # Avro's snappy: the raw snappy block, then a 4-byte CRC-32
            inflated, _ = read_varint(block, 0, f"{what} snappy block", path=path, rule=rule)
            if inflated > limit:
                raise _too_big(what, limit, path, rule)
        elif codec != "null":
            inflated = inflated_size(codec, block, what=what, path=path, rule=rule, limit=limit - total)
        else:
            inflated = size
        total += inflated
        if total > limit:
            raise _too_big(what, limit, path, rule)
        if records < 0 or records * min_record_size > inflated:
            raise InvalidTable(f"{what} block claims {records:,} records in {inflated:,} bytes", path=path, rule=rule)
        if data[pos:pos + 16] != sync:
            raise InvalidTable(f"{what} block does not end with the file's sync marker", path=path, rule=rule)
        pos += 16
