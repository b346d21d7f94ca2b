"""ORC type attributes (Java ``OrcTypeUtil``: every ORC type of a Paimon data file carries its Paimon field id
as the attribute ``paimon.id``; ARRAY elements and MAP keys/values carry ``SpecialFields`` ids).

pyarrow's ORC writer cannot set type attributes and its reader does not expose them, so this module
works on the file tail directly: the PostScript (uncompressed protobuf, its length in the last byte)
gives the Footer's length and compression; the Footer (protobuf, in compression chunks with 3-byte
headers) lists the types in column-id (pre-)order, each a ``Type`` message whose field 7 holds the
``StringPair`` attributes. Adding attributes appends field-7 entries to each Type message and writes the
footer again; nothing before the footer (stripes, stripe statistics) moves, so every offset stays valid.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from reference_impl.errors import InvalidTable, Unsupported

FIELD_ID_ATTRIBUTE = "paimon.id"  # OrcTypeUtil.PAIMON_ORC_FIELD_ID_KEY
_NONE, _ZLIB, _SNAPPY, _LZO, _LZ4, _ZSTD = range(6)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if pos >= len(data):
            raise InvalidTable("ORC tail: truncated protobuf varint")
        b = data[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, pos
        shift += 7


def _enc_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _fields(msg: bytes) -> Iterator[tuple[int, int, bytes | int, bytes]]:
    """(field number, wire type, value, raw bytes of the whole field) of a protobuf message."""
    pos = 0
    while pos < len(msg):
        start = pos
        tag, pos = _varint(msg, pos)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            value, pos = _varint(msg, pos)
        elif wt == 1:
            value, pos = msg[pos:pos + 8], pos + 8
        elif wt == 2:
            n, pos = _varint(msg, pos)
            value, pos = msg[pos:pos + n], pos + n
        elif wt == 5:
            value, pos = msg[pos:pos + 4], pos + 4
        else:
            raise InvalidTable(f"ORC tail: protobuf wire type {wt} is not readable")
        if pos > len(msg):
            raise InvalidTable("ORC tail: truncated protobuf field")
        yield num, wt, value, msg[start:pos]


def _bytes_field(num: int, value: bytes) -> bytes:
    return _enc_varint(num << 3 | 2) + _enc_varint(len(value)) + value


def _decompress(data: bytes, kind: int) -> bytes:
    if kind == _NONE:
        return data
    out, pos = bytearray(), 0
    while pos < len(data):
        h = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        pos += 3
        n, original = h >> 1, h & 1
        chunk = data[pos:pos + n]
        pos += n
        if original:
            out += chunk
        elif kind == _ZSTD:
            import zstandard

            out += zstandard.ZstdDecompressor().decompressobj().decompress(chunk)
        elif kind == _ZLIB:
            import zlib

            out += zlib.decompress(chunk, -15)
        else:
            raise Unsupported(f"ORC footer compression kind {kind} is not handled", feature="orc-footer-compression")
    return bytes(out)


def _compress(data: bytes, kind: int, block: int) -> bytes:
    if kind == _NONE:
        return data
    out = bytearray()
    for i in range(0, len(data), block) or [0]:
        raw = data[i:i + block]
        packed = None
        if kind == _ZSTD:
            import zstandard

            packed = zstandard.ZstdCompressor(level=1, write_content_size=False).compress(raw)
        elif kind == _ZLIB:
            import zlib

            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            packed = c.compress(raw) + c.flush()
        if packed is None or len(packed) >= len(raw):  # stored "original", as ORC writers do when it does not shrink
            out += ((len(raw) << 1) | 1).to_bytes(3, "little") + raw
        else:
            out += (len(packed) << 1).to_bytes(3, "little") + packed
    return bytes(out)


def _tail(data: bytes) -> tuple[bytes, dict[int, int], int, int]:
    """(postscript bytes, postscript varint fields, footer start, footer length)."""
    if len(data) < 4 or data[:3] != b"ORC":
        raise InvalidTable("not an ORC file (no ORC magic)")
    ps_len = data[-1]
    ps = data[-1 - ps_len:-1]
    ints = {num: v for num, wt, v, _ in _fields(ps) if wt == 0}
    footer_len = ints.get(1, 0)
    start = len(data) - 1 - ps_len - footer_len
    if start < 3:
        raise InvalidTable("ORC tail: footer length points before the file start")
    return ps, ints, start, footer_len


def type_attributes(data: bytes) -> list[dict[str, str]]:
    """Per ORC type (column id order, root first), its attributes."""
    _ps, ints, start, n = _tail(data)
    footer = _decompress(data[start:start + n], ints.get(2, _NONE))
    out = []
    for num, wt, value, _raw in _fields(footer):
        if num == 4 and wt == 2:
            attrs = {}
            for tnum, twt, tval, _ in _fields(value):
                if tnum == 7 and twt == 2:
                    pair = {pn: pv for pn, pw, pv, _ in _fields(tval) if pw == 2}
                    attrs[pair.get(1, b"").decode()] = pair.get(2, b"").decode()
            out.append(attrs)
    return out


def with_type_attributes(data: bytes, attributes: Sequence[dict[str, str]]) -> bytes:
    """The ORC file ``data`` with ``attributes[i]`` added to its i-th type (one entry per type)."""
    ps, ints, start, n = _tail(data)
    kind = ints.get(2, _NONE)
    footer = _decompress(data[start:start + n], kind)
    parts, i = [], 0
    for num, wt, value, raw in _fields(footer):
        if num == 4 and wt == 2:
            if i >= len(attributes):
                raise InvalidTable(f"ORC footer has more types than the {len(attributes)} attribute sets given")
            extra = b"".join(_bytes_field(7, _bytes_field(1, k.encode()) + _bytes_field(2, v.encode()))
                             for k, v in attributes[i].items())
            parts.append(_bytes_field(4, value + extra))
            i += 1
        else:
            parts.append(raw)
    if i != len(attributes):
        raise InvalidTable(f"ORC footer has {i} types, {len(attributes)} attribute sets were given")
    new_footer = _compress(b"".join(parts), kind, ints.get(3, 256 * 1024))
    new_ps = b"".join(_enc_varint(1 << 3 | 0) + _enc_varint(len(new_footer)) if num == 1 else raw
                      for num, _wt, _v, raw in _fields(ps))
    if len(new_ps) > 255:
        raise InvalidTable("ORC postscript would exceed 255 bytes")
    return data[:start] + new_footer + new_ps + bytes([len(new_ps)])


__all__ = ["FIELD_ID_ATTRIBUTE", "type_attributes", "with_type_attributes"]
