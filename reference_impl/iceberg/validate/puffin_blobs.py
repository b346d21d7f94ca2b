"""Puffin spec (container and ``deletion-vector-v1`` blobs), read tolerantly: every defect is listed, none raised.

Kept here rather than borrowed from a reader because a reader stops at the first defect and the
validator has to name each rule a file breaks (the container's magic and footer, the footer JSON,
then each DV blob's length, magic, CRC and portable Roaring layout).
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from reference_impl.common import roaring

MAGIC = b"PFA1"
DV_MAGIC = bytes.fromhex("D1D33964")
DV_TYPE = "deletion-vector-v1"
CODECS = ("lz4", "zstd")
BLOB_REQUIRED = ("type", "fields", "snapshot-id", "sequence-number", "offset", "length")


@dataclass(slots=True)
class Footer:
    """A parsed Puffin footer, or the container defects that stopped it (``container``) and the JSON ones (``payload``)."""

    blobs: list[dict] = field(default_factory=list)
    container: list[str] = field(default_factory=list)
    payload: list[str] = field(default_factory=list)
    footer_size: int | None = None  # magic + payload + size + flags + magic


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def read_footer(data: bytes) -> Footer:
    """The blob descriptors of a Puffin file and what is wrong with its container or footer JSON."""
    out = Footer()
    if len(data) < 4 + 16 or data[:4] != MAGIC:
        out.container.append("the file does not start with the Puffin magic PFA1")
    if len(data) < 16 or data[-4:] != MAGIC:
        out.container.append("the file does not end with the Puffin magic PFA1")
        return out
    size = struct.unpack("<i", data[-12:-8])[0]
    flags = data[-8:-4]
    start = len(data) - 16 - size
    if size < 0 or start < 4 or data[start:start + 4] != MAGIC:
        out.container.append(f"footer payload size {size} does not lead back to the footer's opening magic")
        return out
    if flags[0] & 0xFE or any(flags[1:]):
        out.container.append(f"footer flags {flags.hex()} set reserved bits")
    out.footer_size = size + 16
    payload = data[start + 4:start + 4 + size]
    if flags[0] & 1:
        out.container.append("the footer payload is LZ4-compressed, which this validator does not decode")
        return out
    try:
        meta = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        out.payload.append(f"footer payload is not UTF-8 JSON: {exc}")
        return out
    if not isinstance(meta, dict) or not isinstance(meta.get("blobs"), list):
        out.payload.append("footer FileMetadata lacks the required 'blobs' list")
        return out
    for i, b in enumerate(meta["blobs"]):
        if not isinstance(b, dict):
            out.payload.append(f"blobs[{i}] is not an object")
            continue
        for key in BLOB_REQUIRED:
            if key not in b:
                out.payload.append(f"blobs[{i}] lacks required {key!r}")
        if "fields" in b and not (isinstance(b["fields"], list) and all(_is_int(x) for x in b["fields"])):
            out.payload.append(f"blobs[{i}] fields must be a list of ints")
        for key in ("snapshot-id", "sequence-number", "offset", "length"):
            if key in b and not _is_int(b[key]):
                out.payload.append(f"blobs[{i}] {key} must be a JSON long")
        codec = b.get("compression-codec")
        if codec is not None and codec not in CODECS:
            out.payload.append(f"blobs[{i}] compression-codec {codec!r} is not lz4 or zstd")
        props = b.get("properties")
        if props is not None and not (isinstance(props, dict) and all(isinstance(v, str) for v in props.values())):
            out.payload.append(f"blobs[{i}] properties must map strings to strings")
        out.blobs.append(b)
    return out


@dataclass(slots=True)
class DV:
    """A decoded deletion vector blob: its cardinality and positions, or what is wrong with its bytes."""

    cardinality: int | None = None
    positions: list[int] | None = None
    framing: list[str] = field(default_factory=list)   # length, magic, CRC (DV-004)
    vector: list[str] = field(default_factory=list)    # portable Roaring layout (DV-005)


def decode_dv(blob: bytes) -> DV:
    """Length, magic and CRC of a deletion-vector-v1 blob, then its 64-bit portable Roaring positions."""
    out = DV()
    if len(blob) < 12:
        out.framing.append(f"blob of {len(blob)} bytes is too short for length, magic and CRC")
        return out
    n = struct.unpack(">I", blob[:4])[0]
    if n != len(blob) - 8:
        out.framing.append(f"length field {n} is not the magic plus vector length {len(blob) - 8}")
    if blob[4:8] != DV_MAGIC:
        out.framing.append(f"magic {blob[4:8].hex()} is not d1d33964")
    body = blob[4:-4]
    crc = struct.unpack(">I", blob[-4:])[0]
    if zlib.crc32(body) & 0xFFFFFFFF != crc:
        out.framing.append("CRC-32 of the magic and vector does not match")
    try:
        decoded = roaring.decode64(body[4:])
    except roaring.RoaringError as exc:
        out.vector.append(f"vector is not a portable 64-bit Roaring bitmap: {exc}")
        return out
    out.vector.extend(decoded.problems)
    out.positions = decoded.positions.tolist()
    out.cardinality = len(out.positions)
    return out
