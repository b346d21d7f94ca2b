"""Deletion vectors (spec: Table index > Deletion Vectors; Java DeletionVectorsIndexFile, DeletionFileWriter,
DeletionVector.read, BitmapDeletionVector, Bitmap64DeletionVector, OptimizedRoaringBitmap64).

An index file of type ``DELETION_VECTORS`` lives in ``index/`` and holds the vectors of one bucket:

* one version byte, 1;
* per data file, at the offset its index-manifest range (``_DELETIONS_VECTORS_RANGES`` element
  ``f0`` data file name, ``f1`` offset, ``f2`` length, ``_CARDINALITY``) gives: the size of the
  serialized bitmap (4 bytes big-endian), the serialized bitmap, and the CRC-32 of the serialized
  bitmap (4 bytes big-endian). The serialized bitmap starts with its magic, so the CRC covers it.

Two bitmaps, told apart by the magic (Java reads either, whatever ``deletion-vectors.bitmap64`` says):

* 32-bit (default): magic 1581511376 big-endian, then a portable 32-bit RoaringBitmap (Java runs
  ``runOptimize`` first). Positions are Java ints: at most 2^31 - 1.
* 64-bit (``deletion-vectors.bitmap64``): magic 1681511377 little-endian, then Iceberg's portable
  64-bit layout: the bitmap count (8 bytes LE), then per key from 0 up to the highest key the key
  (4 bytes LE) and a portable 32-bit bitmap. Java keeps a dense array of bitmaps, so it writes an
  empty bitmap for every key below the highest one; keys are at most 2^31 - 2.

What ``f2`` measures differs between the two, because ``DeletionFileWriter`` records what
``serializeTo`` returns: the bitmap size (magic included, prefix and CRC excluded) for 32-bit
vectors, the whole framed vector (prefix and CRC included) for 64-bit ones (PAIMON-INDEX-006).

Java checks the version byte, the magic and the size against ``f2``, and skips the CRC; this
reader also checks the CRC, the cardinality, that every byte of the bitmap is used, and (given
the data file's row count) that every position names a row of the file.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from reference_impl.common import roaring
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.storage import Storage

INDEX_TYPE = "DELETION_VECTORS"  # IndexManifestEntry._INDEX_TYPE of these files (PAIMON-IDXMAN-003)
VERSION = 1
MAGIC_32 = 1581511376  # BitmapDeletionVector.MAGIC_NUMBER, written big-endian
MAGIC_64 = 1681511377  # Bitmap64DeletionVector.MAGIC_NUMBER, written little-endian (as Iceberg's DV blob)
_MAGIC_32_BYTES = struct.pack(">I", MAGIC_32)
_MAGIC_64_BYTES = struct.pack("<I", MAGIC_64)
MAX_POSITION_32 = (1 << 31) - 1  # RoaringBitmap32.MAX_VALUE: BitmapDeletionVector refuses larger positions
MAX_KEY_64 = (1 << 31) - 2  # OptimizedRoaringBitmap64.readKey: key <= Integer.MAX_VALUE - 1
MAX_POSITION_64 = (MAX_KEY_64 << 32) | 0x80000000  # OptimizedRoaringBitmap64.MAX_VALUE
# A few KiB of run containers can claim billions of positions; what a vector may expand to is
# bounded before it is materialised (8 bytes a position), unless the caller knows the file's rows.
MAX_POSITIONS = 1 << 27
# Java writes an empty bitmap for every key below the highest: past 2^16 keys (positions of 2^48 and up)
# the vector would be megabytes of nothing; no data file has that many rows.
MAX_KEYS_WRITTEN = 1 << 16

RULE_VERSION = "PAIMON-INDEX-002"
RULE_FRAME = "PAIMON-INDEX-003"
RULE_BITMAP_32 = "PAIMON-INDEX-004"
RULE_BITMAP_64 = "PAIMON-INDEX-005"
RULE_RANGE = "PAIMON-INDEX-006"
RULE_SIZE = "PAIMON-INDEX-007"
RULE_POSITIONS = "PAIMON-INDEX-008"
RULE_NEGATIVE = "PAIMON-INDEX-009"
RULE_META = "PAIMON-IDXMAN-004"


@dataclass(frozen=True, slots=True, kw_only=True)
class DvRange:
    """One element of an index entry's ``_DELETIONS_VECTORS_RANGES`` (Java ``DeletionVectorMeta``)."""

    data_file: str  # f0
    offset: int  # f1: where the vector's 4-byte size prefix starts
    length: int  # f2: see the module docstring, it depends on the bitmap
    cardinality: int | None = None  # _CARDINALITY: null in files written before Paimon 1.0


# ---------------------------------------------------------------------------------------------
# Reading


def _bitmap32(body: bytes, where: str, path: str | None, rule: str):
    """A pyroaring BitMap of exactly ``body`` (a portable 32-bit bitmap, no byte left over)."""
    from pyroaring import BitMap

    try:
        size = roaring.roaring32_size(body, 0)
        bitmap = BitMap.deserialize(body[:size])
    except (roaring.RoaringError, ValueError, RuntimeError) as exc:
        raise InvalidTable(f"{where} is not a portable Roaring bitmap: {exc}", path=path, rule=rule) from None
    if size != len(body):
        # Java deserializes from a buffer of exactly this size and ignores the rest; the layout has no room for it.
        raise InvalidTable(f"{where}: {len(body) - size} bytes follow the bitmap", path=path, rule=rule)
    return bitmap


def _materialise(bitmaps: list[tuple[int, object]], limit: int, where: str, path: str | None) -> np.ndarray:
    """Sorted uint64 positions of (high key, 32-bit bitmap) pairs, refused past ``limit`` positions."""
    total = sum(len(b) for _, b in bitmaps)
    if total > limit:
        raise InvalidTable(f"{where} deletes {total:,} rows, more than the {limit:,} it may", path=path,
                           rule=RULE_POSITIONS, hint="a vector deletes rows of one data file")
    chunks = [np.asarray(b.to_array(), dtype=np.uint64) | np.uint64(key << 32) for key, b in bitmaps if len(b)]
    return np.concatenate(chunks) if chunks else np.empty(0, dtype=np.uint64)


def decode_bitmap(data: bytes, *, where: str = "deletion vector", path: str | None = None,
                  limit: int = MAX_POSITIONS) -> tuple[np.ndarray, bool]:
    """(sorted uint64 positions, is_64_bit) of a serialized bitmap: the magic and what follows it."""
    data = bytes(data)
    if data[:4] == _MAGIC_32_BYTES:
        bitmap = _bitmap32(data[4:], where, path, RULE_BITMAP_32)
        if len(bitmap) and bitmap.max() > MAX_POSITION_32:
            raise InvalidTable(f"{where} holds position {bitmap.max()}, beyond a 32-bit vector's 2^31 - 1",
                               path=path, rule=RULE_BITMAP_32, hint="Java reads it as a negative int")
        return _materialise([(0, bitmap)], limit, where, path), False
    if data[:4] != _MAGIC_64_BYTES:
        raise InvalidTable(f"{where} magic is {data[:4].hex() or 'missing'}: neither {MAGIC_32} (big-endian, "
                           f"32-bit) nor {MAGIC_64} (little-endian, 64-bit)", path=path, rule=RULE_BITMAP_32)
    body = data[4:]
    if len(body) < 8:
        raise InvalidTable(f"{where} is too short for its bitmap count", path=path, rule=RULE_BITMAP_64)
    (count,) = struct.unpack_from("<Q", body, 0)
    # Every bitmap takes a 4-byte key and at least 8 bytes: a larger count is refused before the walk.
    if count > (len(body) - 8) // 12:
        raise InvalidTable(f"{where} claims {count:,} bitmaps in {len(body)} bytes", path=path, rule=RULE_BITMAP_64)
    pos, last, bitmaps = 8, -1, []
    for _ in range(count):
        if pos + 4 > len(body):
            raise InvalidTable(f"{where} is truncated", path=path, rule=RULE_BITMAP_64)
        (key,) = struct.unpack_from("<I", body, pos)
        if key > MAX_KEY_64:
            raise InvalidTable(f"{where} has bitmap key {key}: positions must be below 2^63 (top bit clear)",
                               path=path, rule=RULE_NEGATIVE)
        if key <= last:
            raise InvalidTable(f"{where} bitmap keys are not ascending ({last} then {key})", path=path,
                               rule=RULE_BITMAP_64)
        try:
            size = roaring.roaring32_size(body, pos + 4)
        except roaring.RoaringError as exc:
            raise InvalidTable(f"{where} bitmap {key}: {exc}", path=path, rule=RULE_BITMAP_64) from None
        bitmaps.append((key, _bitmap32(body[pos + 4:pos + 4 + size], f"{where} bitmap {key}", path, RULE_BITMAP_64)))
        pos, last = pos + 4 + size, key
    if pos != len(body):
        raise InvalidTable(f"{where}: {len(body) - pos} bytes follow the last bitmap", path=path, rule=RULE_BITMAP_64)
    return _materialise(bitmaps, limit, where, path), True


def read_vector(data: bytes, offset: int, length: int, cardinality: int | None = None, *,
                path: str | None = None, data_file: str | None = None, row_count: int | None = None) -> np.ndarray:
    """The sorted uint64 positions of the vector at ``offset`` of an index file's bytes, every frame field checked.

    ``length`` and ``cardinality`` are the range's ``f2`` and ``_CARDINALITY``; ``row_count``, when
    known (the data file's ``_ROW_COUNT``), bounds the positions.
    """
    where = f"deletion vector of {data_file}" if data_file else f"deletion vector at offset {offset}"
    if not data:
        raise InvalidTable("deletion vector index file is empty", path=path, rule=RULE_VERSION)
    if data[0] != VERSION:
        raise InvalidTable(f"deletion vector index file has version {data[0]}, expected {VERSION}", path=path,
                           rule=RULE_VERSION)
    for name, value in (("offset (f1)", offset), ("length (f2)", length)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidTable(f"{where}: {name} must be a non-negative int, got {value!r}", path=path, rule=RULE_META)
    if offset < 1 or offset + 4 > len(data):
        raise InvalidTable(f"{where}: offset {offset} is outside the file's vectors (1..{len(data) - 4})",
                           path=path, rule=RULE_RANGE)
    (size,) = struct.unpack_from(">I", data, offset)
    start, end = offset + 4, offset + 4 + size
    if end + 4 > len(data):
        raise InvalidTable(f"{where} says {size:,} bitmap bytes, the file ends {len(data) - start:,} bytes after "
                           f"the size prefix", path=path, rule=RULE_FRAME)
    body = data[start:end]
    (crc,) = struct.unpack_from(">I", data, end)
    if crc != zlib.crc32(body) & 0xFFFFFFFF:
        raise InvalidTable(f"{where}: CRC-32 {crc:08x} does not match its bitmap ({zlib.crc32(body) & 0xFFFFFFFF:08x})",
                           path=path, rule=RULE_FRAME)
    is64 = body[:4] == _MAGIC_64_BYTES  # DeletionVector.read: the magic decides what f2 measures
    expected = size + 8 if is64 else size
    if length != expected:
        kind = "64-bit vectors count size prefix and CRC" if is64 else "32-bit vectors count magic and bitmap only"
        raise InvalidTable(f"{where}: range length (f2) is {length}, the vector's size prefix says {size} "
                           f"({kind}, so f2 should be {expected})", path=path, rule=RULE_SIZE)
    limit = MAX_POSITIONS if row_count is None else min(MAX_POSITIONS, max(row_count, 0))
    positions, _ = decode_bitmap(body, where=where, path=path, limit=limit)
    if cardinality is not None and cardinality != positions.size:
        raise InvalidTable(f"{where} deletes {positions.size} rows, _CARDINALITY says {cardinality}", path=path,
                           rule=RULE_META)
    if row_count is not None and positions.size and int(positions[-1]) >= row_count:
        raise InvalidTable(f"{where} deletes row {int(positions[-1])} of a file of {row_count} rows", path=path,
                           rule=RULE_POSITIONS)
    return positions


def read_index_file(data: bytes, ranges: Iterable[DvRange], *, path: str | None = None,
                    row_counts: Mapping[str, int] | None = None) -> dict[str, np.ndarray]:
    """Every vector an index entry's ranges name, by data file name (Java ``readAllDeletionVectors``)."""
    out: dict[str, np.ndarray] = {}
    for r in ranges:
        if r.data_file in out:
            raise InvalidTable(f"two deletion vectors for data file {r.data_file}", path=path, rule=RULE_META)
        out[r.data_file] = read_vector(data, r.offset, r.length, r.cardinality, path=path, data_file=r.data_file,
                                       row_count=(row_counts or {}).get(r.data_file))
    return out


def load_vector(storage: Storage, index_path: str, offset: int, length: int, cardinality: int | None = None, *,
                data_file: str | None = None, row_count: int | None = None) -> np.ndarray:
    """The positions of one vector of the index file at root-relative ``index_path`` (a missing file is invalid)."""
    try:
        data = storage.read(index_path)
    except FileNotFoundError:
        raise InvalidTable(f"deletion vector index file {index_path} does not exist", path=index_path,
                           rule="PAIMON-LAYOUT-007") from None
    return read_vector(data, offset, length, cardinality, path=index_path, data_file=data_file, row_count=row_count)


# ---------------------------------------------------------------------------------------------
# Writing (byte for byte what Java writes)


def _positions(positions: Iterable[int], bitmap64: bool) -> np.ndarray:
    try:
        values = roaring.sorted_unique_positions(positions)
    except roaring.RoaringError as exc:
        raise InvalidTable(f"cannot encode the deletion vector: {exc}", rule=RULE_NEGATIVE) from None
    top = MAX_POSITION_64 if bitmap64 else MAX_POSITION_32
    if values.size and int(values[-1]) > top:
        raise InvalidTable(f"position {int(values[-1])} is beyond a {'64' if bitmap64 else '32'}-bit vector's "
                           f"{top}", rule=RULE_NEGATIVE if bitmap64 else RULE_BITMAP_32)
    return values


def _roaring32(lows: np.ndarray) -> bytes:
    from pyroaring import BitMap

    bitmap = BitMap(lows.astype(np.uint32))
    bitmap.run_optimize()  # RoaringBitmap32.serialize and OptimizedRoaringBitmap64.runLengthEncode do the same
    return bitmap.serialize()


def _serialize(values: np.ndarray, bitmap64: bool) -> bytes:
    if not bitmap64:
        return _MAGIC_32_BYTES + _roaring32(values)
    highs = (values >> np.uint64(32)).astype(np.int64)
    count = int(highs[-1]) + 1 if values.size else 0
    if count > MAX_KEYS_WRITTEN:
        raise Unsupported(f"position {int(values[-1])} needs {count:,} bitmaps in Java's dense 64-bit layout "
                          f"({12 * count:,} bytes at least)", feature="deletion-vector-size")
    parts = [_MAGIC_64_BYTES, struct.pack("<Q", count)]
    for key in range(count):  # dense: Java writes an (8-byte) empty bitmap for every key it skips
        parts += [struct.pack("<I", key), _roaring32(values[highs == key] & np.uint64(0xFFFFFFFF))]
    return b"".join(parts)


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def serialize_bitmap(positions: Iterable[int], bitmap64: bool = False) -> bytes:
    """The serialized bitmap: magic, then the 32-bit or (dense) 64-bit portable Roaring layout."""
    return _serialize(_positions(positions, bitmap64), bitmap64)


def encode_vector(positions: Iterable[int], bitmap64: bool = False) -> bytes:
    """One framed vector as it sits in an index file: size (BE), serialized bitmap, CRC-32 (BE)."""
    return _frame(serialize_bitmap(positions, bitmap64))


def write_index_file(vectors: Mapping[str, Iterable[int]], *, bitmap64: bool = False) -> tuple[bytes, list[DvRange]]:
    """An index file holding a vector per data file (in the mapping's order) and the ranges its entry records."""
    body, ranges = bytearray([VERSION]), []
    for data_file, positions in vectors.items():
        values = _positions(positions, bitmap64)
        framed = _frame(_serialize(values, bitmap64))
        # DeletionFileWriter records serializeTo's result: the bitmap size (32-bit) or the framed size (64-bit).
        ranges.append(DvRange(data_file=data_file, offset=len(body),
                              length=len(framed) if bitmap64 else len(framed) - 8, cardinality=int(values.size)))
        body += framed
    return bytes(body), ranges


__all__ = ["INDEX_TYPE", "VERSION", "MAGIC_32", "MAGIC_64", "DvRange", "decode_bitmap", "read_vector",
           "read_index_file", "load_vector", "serialize_bitmap", "encode_vector", "write_index_file"]
