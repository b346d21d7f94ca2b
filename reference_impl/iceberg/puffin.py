"""Puffin file format (format/puffin-spec.md): the container of blobs (deletion vectors, sketches) and its footer.

Layout: ``Magic Blob_1 .. Blob_n Footer`` with ``Footer = Magic FooterPayload FooterPayloadSize
Flags Magic``; ``Magic`` is ``PFA1``; the payload size is a signed 4-byte little-endian integer;
``Flags`` is 4 bytes whose lowest bit of the first byte says the payload is compressed (one LZ4
frame), every other bit being reserved. The payload is UTF-8 JSON: a ``FileMetadata`` object
(``blobs`` required, ``properties`` optional) whose ``BlobMetadata`` entries locate each blob
(``offset``, ``length``) and say what it is (``type``, ``fields``, ``snapshot-id``,
``sequence-number``, optional ``compression-codec`` lz4 or zstd, optional ``properties``).

Compression needs libraries the reference does not require: zstd through ``zstandard`` and LZ4
frames through ``lz4``; when one is missing, a file that needs it is ``Unsupported`` (never
misread). Damage is ``InvalidTable`` with the rule it breaks (ICEBERG-DV-014 for the container,
ICEBERG-DV-015 for the footer fields).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from reference_impl.common.bounded import max_inflate
from reference_impl.errors import InvalidTable, Unsupported

MAGIC = b"PFA1"
FLAG_FOOTER_COMPRESSED = 0x01  # byte 0, bit 0; every other bit is reserved
CODEC_LZ4 = "lz4"
CODEC_ZSTD = "zstd"
CODECS = (CODEC_LZ4, CODEC_ZSTD)

# FileMetadata / BlobMetadata keys, spelled as the spec spells them.
BLOBS = "blobs"
PROPERTIES = "properties"
TYPE = "type"
FIELDS = "fields"
SNAPSHOT_ID = "snapshot-id"
SEQUENCE_NUMBER = "sequence-number"
OFFSET = "offset"
LENGTH = "length"
COMPRESSION_CODEC = "compression-codec"
CREATED_BY = "created-by"  # recommended FileMetadata property

# Blob types.
DELETION_VECTOR_V1 = "deletion-vector-v1"
THETA_SKETCH_V1 = "apache-datasketches-theta-v1"

RULE_CONTAINER = "ICEBERG-DV-014"
RULE_FOOTER_FIELDS = "ICEBERG-DV-015"

# Magic + FooterPayloadSize + Flags + Magic around an (empty) payload, plus the leading file magic.
_FOOTER_FIXED = len(MAGIC) + 4 + 4 + len(MAGIC)
_MIN_FILE = len(MAGIC) + _FOOTER_FIXED


@dataclass(frozen=True, slots=True, kw_only=True)
class BlobMetadata:
    """One footer entry: what a blob is and where its (possibly compressed) bytes are."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileMetadata:
    """The footer payload: the blobs and the file's properties."""

    blobs: tuple[BlobMetadata, ...]
    properties: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Blob:
    """A blob to write: its uncompressed payload and metadata (offset and length are assigned on write)."""

    type: str
    payload: bytes
    fields: tuple[int, ...] = ()
    snapshot_id: int = -1
    sequence_number: int = -1
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict, hash=False)


# ---------------------------------------------------------------------------------------------
# Codecs


def _zstd():
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def _lz4_frame():
    try:
        import lz4.frame
    except ImportError:
        return None
    return lz4.frame


def decompress(raw: bytes, codec: str | None, *, what: str, path: str | None = None) -> bytes:
    """Undo a Puffin codec (None = stored as is); Unsupported when the codec's library is missing."""
    if codec is None:
        return raw
    if codec == CODEC_ZSTD:
        zstd = _zstd()
        if zstd is None:
            raise Unsupported(f"{what} is zstd-compressed and the zstandard package is not installed", feature="puffin:zstd", path=path)
        try:
            # One frame "with content size present" (Compression codecs): decompress() needs it,
            # and allocates what the frame declares, so the declaration is bounded first.
            declared = zstd.frame_content_size(raw)
            if declared > max_inflate():
                raise InvalidTable(f"{what} declares {declared:,} bytes once decompressed, over the limit of "
                                   f"{max_inflate():,}", rule=RULE_CONTAINER, path=path,
                                   hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")
            return zstd.ZstdDecompressor().decompress(raw)
        except zstd.ZstdError as exc:
            raise InvalidTable(f"{what} is not one zstd frame with its content size: {exc}", rule=RULE_CONTAINER, path=path) from None
    if codec == CODEC_LZ4:
        frame = _lz4_frame()
        if frame is None:
            raise Unsupported(f"{what} is LZ4-compressed and the lz4 package is not installed", feature="puffin:lz4", path=path)
        try:
            # Streamed with a ceiling: a frame need not declare its size, and one that does may lie.
            d = frame.LZ4FrameDecompressor()
            out = d.decompress(raw, max_length=max_inflate() + 1)
            if len(out) > max_inflate():
                raise InvalidTable(f"{what} inflates to more than {max_inflate():,} bytes", rule=RULE_CONTAINER, path=path,
                                   hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")
            if not d.eof:
                raise InvalidTable(f"{what} is not one complete LZ4 frame", rule=RULE_CONTAINER, path=path)
            return out
        except RuntimeError as exc:
            raise InvalidTable(f"{what} is not one LZ4 frame: {exc}", rule=RULE_CONTAINER, path=path) from None
    raise InvalidTable(f"{what} uses compression codec {codec!r}; Puffin allows only {CODECS}", rule=RULE_FOOTER_FIELDS, path=path)


def compress(raw: bytes, codec: str | None) -> bytes:
    """Apply a Puffin codec (one frame with the content size, as the spec requires)."""
    if codec is None:
        return raw
    if codec == CODEC_ZSTD:
        zstd = _zstd()
        if zstd is None:
            raise Unsupported("zstd compression needs the zstandard package", feature="puffin:zstd")
        return zstd.ZstdCompressor(write_content_size=True).compress(raw)
    if codec == CODEC_LZ4:
        frame = _lz4_frame()
        if frame is None:
            raise Unsupported("LZ4 compression needs the lz4 package", feature="puffin:lz4")
        return frame.compress(raw, store_size=True)
    raise InvalidTable(f"compression codec {codec!r} is not one of {CODECS}", rule=RULE_FOOTER_FIELDS)


# ---------------------------------------------------------------------------------------------
# Reading


def _bad(message: str, path: str | None, rule: str = RULE_CONTAINER) -> InvalidTable:
    return InvalidTable(message, rule=rule, path=path)


def _json_int(obj: Mapping, key: str, where: str, path: str | None) -> int:
    if key not in obj or obj[key] is None:
        raise _bad(f"{where} lacks required field {key!r}", path, RULE_FOOTER_FIELDS)
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise _bad(f"{where} field {key!r} must be a JSON integer, got {v!r}", path, RULE_FOOTER_FIELDS)
    return v


def _str_props(v: Any, where: str, path: str | None) -> Mapping[str, str]:
    if v is None:
        return MappingProxyType({})
    if not isinstance(v, dict) or not all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()):
        raise _bad(f"{where} properties must be a JSON object of string values", path, RULE_FOOTER_FIELDS)
    return MappingProxyType(dict(v))


def parse_file_metadata(payload: bytes | str | Mapping, *, path: str | None = None, blob_area: tuple[int, int] | None = None) -> FileMetadata:
    """FileMetadata from the footer JSON; ``blob_area`` (start, end) bounds where blobs may lie."""
    if isinstance(payload, (bytes, str)):
        try:
            obj = json.loads(payload)
        except (ValueError, RecursionError) as exc:
            raise _bad(f"Puffin footer payload is not UTF-8 JSON: {exc}", path) from None
    else:
        obj = payload
    if not isinstance(obj, dict):
        raise _bad("Puffin footer payload must be a JSON object (FileMetadata)", path, RULE_FOOTER_FIELDS)
    raw_blobs = obj.get(BLOBS)
    if not isinstance(raw_blobs, list):
        raise _bad("Puffin FileMetadata lacks the required 'blobs' list", path, RULE_FOOTER_FIELDS)
    blobs = []
    for i, b in enumerate(raw_blobs):
        where = f"blobs[{i}]"
        if not isinstance(b, dict):
            raise _bad(f"{where} must be a JSON object (BlobMetadata)", path, RULE_FOOTER_FIELDS)
        btype = b.get(TYPE)
        if not isinstance(btype, str):
            raise _bad(f"{where} lacks the required string 'type'", path, RULE_FOOTER_FIELDS)
        fields = b.get(FIELDS)
        if not isinstance(fields, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in fields):
            raise _bad(f"{where} lacks the required 'fields' list of field ids", path, RULE_FOOTER_FIELDS)
        codec = b.get(COMPRESSION_CODEC)
        if codec is not None and codec not in CODECS:
            raise _bad(f"{where} compression-codec {codec!r} is not one of {CODECS}", path, RULE_FOOTER_FIELDS)
        offset, length = _json_int(b, OFFSET, where, path), _json_int(b, LENGTH, where, path)
        if offset < 0 or length < 0:
            raise _bad(f"{where} has a negative offset or length ({offset}, {length})", path)
        if blob_area is not None and not (blob_area[0] <= offset and offset + length <= blob_area[1]):
            raise _bad(f"{where} (offset {offset}, length {length}) lies outside the blob area {blob_area[0]}..{blob_area[1]}", path)
        blobs.append(BlobMetadata(
            type=btype, fields=tuple(fields),
            snapshot_id=_json_int(b, SNAPSHOT_ID, where, path), sequence_number=_json_int(b, SEQUENCE_NUMBER, where, path),
            offset=offset, length=length, compression_codec=codec,
            properties=_str_props(b.get(PROPERTIES), where, path),
        ))
    return FileMetadata(blobs=tuple(blobs), properties=_str_props(obj.get(PROPERTIES), "FileMetadata", path))


def footer_bounds(data: bytes, *, path: str | None = None) -> tuple[int, int, bool]:
    """(start of the footer, payload size, compressed?) after checking both magics, the size and the flags."""
    n = len(data)
    if n < _MIN_FILE:
        raise _bad(f"a Puffin file is at least {_MIN_FILE} bytes, this one has {n}", path)
    if data[:4] != MAGIC:
        raise _bad(f"a Puffin file starts with {MAGIC!r}, this one with {bytes(data[:4])!r}", path)
    if data[-4:] != MAGIC:
        raise _bad(f"a Puffin file ends with {MAGIC!r}, this one with {bytes(data[-4:])!r}", path)
    (size,) = struct.unpack_from("<i", data, n - 12)
    flags = bytes(data[n - 8 : n - 4])
    if size < 0 or size > n - _MIN_FILE:
        raise _bad(f"Puffin footer payload size {size} does not fit a {n}-byte file", path)
    if flags[0] & ~FLAG_FOOTER_COMPRESSED or any(flags[1:]):
        # Reserved bits may mean something in a later Puffin version: reading on could misread.
        raise Unsupported(f"Puffin footer flags {flags.hex()} set reserved bits", feature="puffin:flags", path=path)
    start = n - 12 - size - 4
    if data[start : start + 4] != MAGIC:
        raise _bad(f"the Puffin footer does not start with {MAGIC!r} ({size}-byte payload)", path)
    return start, size, bool(flags[0] & FLAG_FOOTER_COMPRESSED)


def read_footer(data: bytes, *, path: str | None = None) -> FileMetadata:
    """The FileMetadata of a whole Puffin file's bytes; InvalidTable naming what is wrong."""
    start, size, compressed = footer_bounds(data, path=path)
    payload = bytes(data[start + 4 : start + 4 + size])
    if compressed:
        payload = decompress(payload, CODEC_LZ4, what="Puffin footer payload", path=path)
    return parse_file_metadata(payload, path=path, blob_area=(len(MAGIC), start))


def footer_size(data: bytes, *, path: str | None = None) -> int:
    """The footer's length in bytes (what table statistics call ``file-footer-size-in-bytes``)."""
    start, _size, _c = footer_bounds(data, path=path)
    return len(data) - start


def read_blob(data: bytes, blob: BlobMetadata, *, path: str | None = None) -> bytes:
    """A blob's payload, decompressed."""
    raw = bytes(data[blob.offset : blob.offset + blob.length])
    if len(raw) != blob.length:
        raise _bad(f"blob at {blob.offset} (length {blob.length}) runs past the end of the file", path)
    return decompress(raw, blob.compression_codec, what=f"{blob.type} blob at offset {blob.offset}", path=path)


# ---------------------------------------------------------------------------------------------
# Writing


def file_metadata_to_dict(md: FileMetadata) -> dict:
    """The footer JSON object (optional keys left out when unset)."""
    blobs = []
    for b in md.blobs:
        d: dict[str, Any] = {TYPE: b.type, FIELDS: list(b.fields), SNAPSHOT_ID: b.snapshot_id,
                             SEQUENCE_NUMBER: b.sequence_number, OFFSET: b.offset, LENGTH: b.length}
        if b.compression_codec is not None:
            d[COMPRESSION_CODEC] = b.compression_codec
        if b.properties:
            d[PROPERTIES] = dict(b.properties)
        blobs.append(d)
    out: dict[str, Any] = {BLOBS: blobs}
    if md.properties:
        out[PROPERTIES] = dict(md.properties)
    return out


def write_puffin(blobs: Iterable[Blob], *, properties: Mapping[str, str] | None = None,
                 compress_footer: bool = False) -> tuple[bytes, FileMetadata]:
    """The bytes of a Puffin file holding ``blobs`` in order, and its FileMetadata (offsets filled in)."""
    parts = [MAGIC]
    pos = len(MAGIC)
    metas = []
    for b in blobs:
        if not isinstance(b.payload, (bytes, bytearray)):
            raise InvalidTable(f"a {b.type} blob payload must be bytes", rule=RULE_CONTAINER)
        stored = compress(bytes(b.payload), b.compression_codec)
        metas.append(BlobMetadata(type=b.type, fields=tuple(b.fields), snapshot_id=b.snapshot_id, sequence_number=b.sequence_number,
                                  offset=pos, length=len(stored), compression_codec=b.compression_codec,
                                  properties=MappingProxyType(dict(b.properties))))
        parts.append(stored)
        pos += len(stored)
    md = FileMetadata(blobs=tuple(metas), properties=MappingProxyType(dict(properties or {CREATED_BY: "lakeconf reference"})))
    payload = json.dumps(file_metadata_to_dict(md), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    flags = 0
    if compress_footer:
        payload = compress(payload, CODEC_LZ4)
        flags |= FLAG_FOOTER_COMPRESSED
    parts += [MAGIC, payload, struct.pack("<i", len(payload)), bytes([flags, 0, 0, 0]), MAGIC]
    return b"".join(parts), md
