"""Deletion Vectors: descriptors, the RoaringBitmapArray format, DV files, Z85 and UUID paths.

Layouts (all from the spec's "Deletion Vector Format" and "Deletion Vector File Storage Format"):

* serialized DV = magic 1681511377 (4 bytes, little-endian) + a portable 64-bit roaring bitmap:
  numBuckets (8 bytes LE), then per bucket, in ascending key order, key (4 bytes LE, top bit
  clear) + a standard portable 32-bit RoaringBitmap of the low 32 bits (pyroaring's format).
* DV file = version byte 1, then per DV: dataSize (4 bytes big-endian), the serialized DV,
  CRC-32 of the serialized DV (4 bytes big-endian). A descriptor's offset points at its dataSize.
* ``u`` descriptors: optional random prefix + the 16 UUID bytes in Z85 (20 characters); the file
  is ``<prefix>/deletion_vector_<uuid>.bin`` under the table root. ``i``: the serialized DV in
  Z85, zero-padded to a multiple of 4 bytes (sizeInBytes gives the true length). ``p``: an
  absolute URI, escaped like add.path.

The spec's inline example (JSON Example 3) is not in this format: its bytes are magic 1681511376
written big-endian followed by Delta's "native" layout. Delta Spark refuses it and so do we, with
a message that says so; its inner 32-bit bitmap does hold the rows the spec lists.

The portable Roaring layout itself is ``reference_impl.common.roaring`` (Iceberg's deletion vectors
carry the same bytes); this module adds Delta's framing and rule ids.
"""

from __future__ import annotations

import random
import string
import struct
import uuid
import zlib
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import unquote, urlparse

import numpy as np
from reference_impl.common import roaring
from reference_impl.errors import InvalidTable
from reference_impl.storage import Storage

STORAGE_TYPE = "storageType"
PATH_OR_INLINE_DV = "pathOrInlineDv"
OFFSET = "offset"
SIZE_IN_BYTES = "sizeInBytes"
CARDINALITY = "cardinality"

UUID_RELATIVE = "u"
INLINE = "i"
ABSOLUTE_PATH = "p"
STORAGE_TYPES = (UUID_RELATIVE, INLINE, ABSOLUTE_PATH)

MAGIC_PORTABLE = 1681511377
MAGIC_NATIVE = 1681511376  # Delta's other RoaringBitmapArray layout; not allowed on the wire
FILE_FORMAT_VERSION = 1
FILE_NAME_PREFIX = "deletion_vector_"
FILE_NAME_SUFFIX = ".bin"
Z85_UUID_LENGTH = 20
MAX_ROW_INDEX = (1 << 63) - 1  # keys must have their top bit clear

Z85_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_INDEX = {c: i for i, c in enumerate(Z85_ALPHABET)}

RULE_STORAGE_TYPE = "DELTA-DV-005"
RULE_UUID_PATH = "DELTA-DV-006"
RULE_INLINE = "DELTA-DV-007"
RULE_ABSOLUTE = "DELTA-DV-008"
RULE_CARDINALITY = "DELTA-DV-010"
RULE_Z85 = "DELTA-DV-012"
RULE_BITMAP = "DELTA-DV-013"
RULE_FILE = "DELTA-DV-014"


# ---------------------------------------------------------------------------------------------
# Z85


def z85_encode(b: bytes) -> str:
    """Z85 text of ``b``, zero-padded to a multiple of 4 bytes first (as Delta does)."""
    data = bytes(b) + b"\x00" * (-len(b) % 4)
    out = []
    for (word,) in struct.iter_unpack(">I", data):
        chunk = []
        for _ in range(5):
            word, r = divmod(word, 85)
            chunk.append(Z85_ALPHABET[r])
        out.append("".join(reversed(chunk)))
    return "".join(out)


def z85_decode(s: str) -> bytes:
    """Bytes of Z85 text; InvalidTable on a bad length or a character outside the Z85 alphabet."""
    if not isinstance(s, str) or len(s) % 5:
        raise InvalidTable(f"Z85 text must be a multiple of 5 characters, got {len(s) if isinstance(s, str) else s!r}", rule=RULE_Z85)
    out = bytearray()
    for i in range(0, len(s), 5):
        word = 0
        for c in s[i : i + 5]:
            v = _Z85_INDEX.get(c)
            if v is None:
                raise InvalidTable(f"character {c!r} is not in the Z85 alphabet", rule=RULE_Z85)
            word = word * 85 + v
        if word > 0xFFFFFFFF:
            raise InvalidTable(f"Z85 group {s[i:i+5]!r} is out of range", rule=RULE_Z85)
        out += word.to_bytes(4, "big")
    return bytes(out)


def encode_uuid(u: uuid.UUID) -> str:
    """The 20-character Z85 form of a UUID (its 16 bytes, most significant first)."""
    return z85_encode(u.bytes)


def decode_uuid(text: str) -> uuid.UUID:
    """The UUID of a 20-character Z85 string."""
    if len(text) != Z85_UUID_LENGTH:
        raise InvalidTable(f"a Z85 UUID has 20 characters, got {len(text)}: {text!r}", rule=RULE_UUID_PATH)
    return uuid.UUID(bytes=z85_decode(text))


# ---------------------------------------------------------------------------------------------
# descriptor


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletionVectorDescriptor:
    """Where a DV lives and what it says: the add/remove ``deletionVector`` struct."""

    storage_type: str
    path_or_inline_dv: str
    offset: int | None = None
    size_in_bytes: int
    cardinality: int

    @property
    def unique_id(self) -> str:
        """storageType + pathOrInlineDv, plus ``@offset`` when the offset is set (DELTA-DV-011)."""
        base = f"{self.storage_type}{self.path_or_inline_dv}"
        return base if self.offset is None else f"{base}@{self.offset}"

    @property
    def is_inline(self) -> bool:
        """Whether the bitmap is stored in the log itself."""
        return self.storage_type == INLINE

    def to_wire(self) -> dict:
        """The JSON object of the log (offset omitted when None)."""
        out: dict[str, Any] = {STORAGE_TYPE: self.storage_type, PATH_OR_INLINE_DV: self.path_or_inline_dv}
        if self.offset is not None:
            out[OFFSET] = self.offset
        out[SIZE_IN_BYTES] = self.size_in_bytes
        out[CARDINALITY] = self.cardinality
        return out

    @classmethod
    def from_wire(cls, d: dict) -> "DeletionVectorDescriptor":
        """Parse the log's deletionVector object; InvalidTable on a bad shape."""
        if not isinstance(d, dict):
            raise InvalidTable(f"deletionVector must be an object, got {type(d).__name__}")
        missing = [k for k in (STORAGE_TYPE, PATH_OR_INLINE_DV, SIZE_IN_BYTES, CARDINALITY) if d.get(k) is None]
        if missing:
            raise InvalidTable(f"deletionVector lacks {', '.join(missing)}")
        st = d[STORAGE_TYPE]
        if st not in STORAGE_TYPES:
            raise InvalidTable(f"deletionVector.storageType must be one of u, i, p; got {st!r}", rule=RULE_STORAGE_TYPE)
        path = d[PATH_OR_INLINE_DV]
        if not isinstance(path, str) or not path:
            raise InvalidTable("deletionVector.pathOrInlineDv must be a non-empty string")
        offset = d.get(OFFSET)
        for key, value in ((OFFSET, offset), (SIZE_IN_BYTES, d[SIZE_IN_BYTES]), (CARDINALITY, d[CARDINALITY])):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InvalidTable(f"deletionVector.{key} must be a non-negative integer, got {value!r}")
        if st == INLINE and offset is not None:
            raise InvalidTable("an inline deletion vector must not have an offset", rule=RULE_INLINE)
        if st == UUID_RELATIVE and len(path) < Z85_UUID_LENGTH:
            raise InvalidTable(
                f"a 'u' deletion vector needs at least 20 characters (Z85 UUID), got {path!r}", rule=RULE_UUID_PATH
            )
        if st == ABSOLUTE_PATH and ":" not in path.split("/", 1)[0] and not path.startswith("/"):
            raise InvalidTable(f"a 'p' deletion vector needs an absolute path, got {path!r}", rule=RULE_ABSOLUTE)
        return cls(
            storage_type=st,
            path_or_inline_dv=path,
            offset=offset,
            size_in_bytes=d[SIZE_IN_BYTES],
            cardinality=d[CARDINALITY],
        )


def absolute_dv_path(descriptor: DeletionVectorDescriptor, storage: Storage | None = None) -> str:
    """Root-relative path of a 'u' DV file; for 'p', the path resolved in ``storage`` (or as given)."""
    if descriptor.storage_type == UUID_RELATIVE:
        text = descriptor.path_or_inline_dv
        prefix, encoded = text[:-Z85_UUID_LENGTH], text[-Z85_UUID_LENGTH:]
        name = f"{FILE_NAME_PREFIX}{decode_uuid(encoded)}{FILE_NAME_SUFFIX}"
        return f"{prefix}/{name}" if prefix else name
    if descriptor.storage_type == ABSOLUTE_PATH:
        path = descriptor.path_or_inline_dv
        if storage is None:
            return path
        # The path is a URI like add.path: percent-escapes stand for the characters themselves.
        # Spark writes local files as file:/abs/path; compare those as plain local paths.
        parsed = urlparse(path)
        if parsed.scheme in ("file", ""):
            return storage.resolve(unquote(parsed.path))
        return unquote(storage.resolve(path))
    raise InvalidTable("an inline deletion vector has no file path", rule=RULE_INLINE)


# ---------------------------------------------------------------------------------------------
# RoaringBitmapArray (portable)


def serialize_bitmap(rows: Iterable[int]) -> bytes:
    """Magic + portable 64-bit roaring bitmap of the row indexes (empty buckets are not written)."""
    try:
        return struct.pack("<I", MAGIC_PORTABLE) + roaring.serialize64(roaring.sorted_unique_positions(rows))
    except roaring.RoaringError as exc:
        raise InvalidTable(f"cannot encode the deletion vector: {exc}", rule=RULE_BITMAP) from None


def deserialize_bitmap(data: bytes) -> np.ndarray:
    """Sorted uint64 row indexes of a serialized DV; InvalidTable on bad magic, keys or length."""
    data = bytes(data)
    if len(data) < 12:
        raise InvalidTable(f"deletion vector is {len(data)} bytes, too short for magic and bucket count", rule=RULE_BITMAP)
    (magic,) = struct.unpack_from("<I", data, 0)
    if magic != MAGIC_PORTABLE:
        (magic_be,) = struct.unpack_from(">I", data, 0)
        extra = ""
        if magic == MAGIC_NATIVE:
            extra = " (Delta's native layout, which the protocol does not allow)"
        elif magic_be in (MAGIC_NATIVE, MAGIC_PORTABLE):
            # The spec's own inline example (JSON Example 3) is framed this way; Delta Spark refuses it too.
            extra = " (the magic is written big-endian; the protocol requires little-endian)"
        raise InvalidTable(f"deletion vector magic is {magic}, expected {MAGIC_PORTABLE}{extra}", rule=RULE_BITMAP)
    try:
        decoded = roaring.decode64(data[4:])
    except roaring.RoaringError as exc:
        raise InvalidTable(f"deletion vector bitmap: {exc}", rule=RULE_BITMAP) from None
    if decoded.problems:
        raise InvalidTable(f"deletion vector bitmap: {decoded.problems[0]}", rule=RULE_BITMAP)
    return decoded.positions


# ---------------------------------------------------------------------------------------------
# files and inline vectors


def _frame(bitmap: bytes) -> bytes:
    return struct.pack(">I", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap) & 0xFFFFFFFF)


def read_dv_from_file_bytes(data: bytes, offset: int, size: int, *, where: str = "deletion vector file") -> bytes:
    """The serialized DV at ``offset`` of a DV file's bytes, after checking version, size and CRC."""
    if not data:
        raise InvalidTable(f"{where} is empty", rule=RULE_FILE)
    if data[0] != FILE_FORMAT_VERSION:
        raise InvalidTable(f"{where} has format version {data[0]}, expected {FILE_FORMAT_VERSION}", rule=RULE_FILE)
    if offset + 4 > len(data):
        raise InvalidTable(f"{where}: offset {offset} is beyond the end of the file ({len(data)} bytes)", rule=RULE_FILE)
    (stored,) = struct.unpack_from(">I", data, offset)
    if stored != size:
        raise InvalidTable(
            f"{where}: the file says the DV at offset {offset} has {stored} bytes, the log says {size}", rule=RULE_FILE
        )
    start, end = offset + 4, offset + 4 + size
    if end + 4 > len(data):
        raise InvalidTable(f"{where}: the DV at offset {offset} is truncated", rule=RULE_FILE)
    bitmap = data[start:end]
    (crc,) = struct.unpack_from(">I", data, end)
    if crc != zlib.crc32(bitmap) & 0xFFFFFFFF:
        raise InvalidTable(f"{where}: CRC-32 mismatch for the DV at offset {offset}", rule=RULE_FILE)
    return bitmap


def load_deleted_rows(storage: Storage, descriptor: DeletionVectorDescriptor) -> np.ndarray:
    """The sorted uint64 row indexes a descriptor deletes (inline or from its file, CRC checked)."""
    if descriptor.storage_type == INLINE:
        raw = z85_decode(descriptor.path_or_inline_dv)
        if descriptor.size_in_bytes > len(raw):
            raise InvalidTable(
                f"inline deletion vector has {len(raw)} bytes, sizeInBytes says {descriptor.size_in_bytes}",
                rule=RULE_INLINE,
            )
        rows = deserialize_bitmap(raw[: descriptor.size_in_bytes])
    else:
        path = absolute_dv_path(descriptor, storage)
        try:
            data = storage.read(path)
        except FileNotFoundError:
            raise InvalidTable(f"deletion vector file {path} does not exist", path=path) from None
        offset = 0 if descriptor.offset is None else descriptor.offset
        bitmap = read_dv_from_file_bytes(data, offset, descriptor.size_in_bytes, where=f"deletion vector file {path}")
        rows = deserialize_bitmap(bitmap)
    if rows.size != descriptor.cardinality:
        raise InvalidTable(
            f"deletion vector {descriptor.unique_id[:40]} holds {rows.size} rows, cardinality says {descriptor.cardinality}",
            rule=RULE_CARDINALITY,
        )
    return rows


def _random_prefix(n: int) -> str:
    rng = random.SystemRandom()
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def write_deletion_vectors(
    storage: Storage, row_sets: list[Iterable[int]], prefix_len: int = 2
) -> list[DeletionVectorDescriptor]:
    """Write all DVs into one new 'u' file (offsets set) and return their descriptors, in order."""
    if not row_sets:
        return []
    prefix = _random_prefix(prefix_len) if prefix_len > 0 else ""
    encoded = prefix + encode_uuid(uuid.uuid4())
    body = bytearray([FILE_FORMAT_VERSION])
    descriptors = []
    for rows in row_sets:
        bitmap = serialize_bitmap(rows)
        cardinality = _cardinality(bitmap)
        descriptors.append(
            DeletionVectorDescriptor(
                storage_type=UUID_RELATIVE,
                path_or_inline_dv=encoded,
                offset=len(body),
                size_in_bytes=len(bitmap),
                cardinality=cardinality,
            )
        )
        body += _frame(bitmap)
    storage.put_if_absent(absolute_dv_path(descriptors[0]), bytes(body))
    return descriptors


def _cardinality(bitmap: bytes) -> int:
    return int(deserialize_bitmap(bitmap).size)


def inline_deletion_vector(rows: Iterable[int]) -> DeletionVectorDescriptor:
    """An 'i' descriptor carrying the rows in the log itself."""
    bitmap = serialize_bitmap(rows)
    return DeletionVectorDescriptor(
        storage_type=INLINE,
        path_or_inline_dv=z85_encode(bitmap),
        offset=None,
        size_in_bytes=len(bitmap),
        cardinality=_cardinality(bitmap),
    )
