"""Portable Roaring bitmaps (RoaringFormatSpec): the 32-bit layout, and the 64-bit layout the
deletion vectors of several table formats carry.

64-bit portable layout: the number of buckets (8 bytes, little-endian), then per bucket in
ascending key order the key (4 bytes LE; the high 32 bits of every value in the bucket) and a
portable 32-bit Roaring bitmap of the low 32 bits. Positions are row indexes, so a key with its
top bit set would describe a position >= 2^63: both formats forbid it.

Decoding is pyroaring's; the header walk here only finds where each 32-bit bitmap ends (the
64-bit layout stores no lengths) and refuses truncated or over-long input before anything is
allocated from a declared count. Every failure is a ``RoaringError`` (a ``ValueError``) that the
caller turns into its format's error with its own rule id.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

SERIAL_COOKIE = 12347  # with run containers (low 16 bits; the high 16 bits hold count - 1)
SERIAL_COOKIE_NO_RUN = 12346
NO_OFFSET_THRESHOLD = 4  # with runs, offsets are written only from this many containers on
ARRAY_MAX = 4096  # above this cardinality a container is a 8 KiB bitmap
MAX_CONTAINERS = 1 << 16  # a 32-bit bitmap has at most 2^16 containers
MAX_POSITION = (1 << 63) - 1


class RoaringError(ValueError):
    """Bytes that are not a well-formed portable Roaring bitmap."""


def roaring32_size(buf: bytes, pos: int = 0) -> int:
    """Bytes used by the portable 32-bit bitmap starting at ``pos`` (a header walk, bounded by ``buf``)."""
    end = len(buf)

    def need(p: int, n: int) -> None:
        if p + n > end:
            raise RoaringError("bitmap is truncated")

    start = pos
    need(pos, 4)
    (cookie,) = struct.unpack_from("<I", buf, pos)
    if cookie & 0xFFFF == SERIAL_COOKIE:
        count = (cookie >> 16) + 1
        pos += 4
        run_bytes = (count + 7) // 8
        need(pos, run_bytes)
        runs = bytes(buf[pos : pos + run_bytes])
        pos += run_bytes
        offsets = count >= NO_OFFSET_THRESHOLD
    elif cookie == SERIAL_COOKIE_NO_RUN:
        need(pos, 8)
        (count,) = struct.unpack_from("<I", buf, pos + 4)
        pos += 8
        runs = b""
        offsets = True
    else:
        raise RoaringError(f"not a portable 32-bit Roaring bitmap (cookie {cookie})")
    if count > MAX_CONTAINERS:
        raise RoaringError(f"bitmap claims {count} containers (at most {MAX_CONTAINERS})")
    need(pos, 4 * count)
    header = struct.unpack_from("<" + "HH" * count, buf, pos)
    pos += 4 * count
    if offsets:
        need(pos, 4 * count)
        pos += 4 * count
    for i in range(count):
        if runs and runs[i // 8] & (1 << (i % 8)):
            need(pos, 2)
            (n_runs,) = struct.unpack_from("<H", buf, pos)
            pos += 2 + 4 * n_runs
        elif header[2 * i + 1] + 1 > ARRAY_MAX:
            pos += 8192
        else:
            pos += 2 * (header[2 * i + 1] + 1)
        if pos > end:
            raise RoaringError("bitmap is truncated")
    return pos - start


def serialize64(values: np.ndarray) -> bytes:
    """The portable 64-bit layout of sorted, unique uint64 ``values`` (no empty buckets written)."""
    from pyroaring import BitMap

    values = np.asarray(values, dtype=np.uint64)
    if values.size and int(values[-1]) > MAX_POSITION:
        raise RoaringError(f"value {int(values[-1])} needs the top bit of a key")
    highs = (values >> np.uint64(32)).astype(np.uint32)
    lows = (values & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    keys, starts = np.unique(highs, return_index=True)
    ends = list(starts[1:]) + [values.size]
    parts = [struct.pack("<Q", len(keys))]
    for key, begin, stop in zip(keys, starts, ends):
        bitmap = BitMap(lows[begin:stop])
        bitmap.run_optimize()
        parts.append(struct.pack("<I", int(key)))
        parts.append(bitmap.serialize())
    return b"".join(parts)


@dataclass(slots=True)
class Decoded64:
    """A decoded 64-bit bitmap: its sorted positions and what is wrong with its layout, if anything."""

    positions: np.ndarray
    problems: list[str] = field(default_factory=list)  # layout faults that still let it decode


def decode64(data: bytes) -> Decoded64:
    """Decode the portable 64-bit layout. Keys out of order, a key with its top bit set and trailing
    bytes are listed in ``problems`` (a reader refuses them; a validator names each); input that
    cannot be decoded at all raises ``RoaringError``."""
    from pyroaring import BitMap

    data = bytes(data)
    if len(data) < 8:
        raise RoaringError(f"{len(data)} bytes: too short for the bucket count")
    (buckets,) = struct.unpack_from("<Q", data, 0)
    pos = 8
    # Each bucket needs a key and at least an 8-byte bitmap: a larger count is a lie, refused
    # before anything is allocated for it.
    if buckets > (len(data) - pos) // 12:
        raise RoaringError(f"claims {buckets} buckets in {len(data)} bytes")
    problems: list[str] = []
    chunks: list[np.ndarray] = []
    last = -1
    for _ in range(buckets):
        if pos + 4 > len(data):
            raise RoaringError("bitmap is truncated")
        (key,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if key & 0x80000000:
            problems.append(f"bucket key {key} has its top bit set")
        if key <= last:
            problems.append(f"bucket keys are not strictly ascending ({last} then {key})")
        last = key
        size = roaring32_size(data, pos)
        try:
            bitmap = BitMap.deserialize(data[pos : pos + size])
        except Exception as exc:  # pyroaring raises plain ValueError/RuntimeError on corrupt input
            raise RoaringError(f"bucket {key} is corrupt: {exc}") from None
        pos += size
        if len(bitmap):
            lows = np.asarray(bitmap.to_array(), dtype=np.uint64)
            chunks.append(lows | (np.uint64(key) << np.uint64(32)))
    if pos != len(data):
        problems.append(f"{len(data) - pos} trailing bytes follow the last bitmap")
    positions = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.uint64)
    if problems and positions.size > 1:
        positions = np.unique(positions)  # out-of-order buckets: keep the set, sorted
    return Decoded64(positions=positions, problems=problems)


def sorted_unique_positions(rows) -> np.ndarray:
    """Sorted unique uint64 positions from any iterable of ints; ``RoaringError`` for negatives,
    non-integers or values of 2^63 and above."""
    arr = np.asarray(rows if isinstance(rows, np.ndarray) else list(rows))
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.dtype == object:
        if not all(isinstance(r, (int, np.integer)) and not isinstance(r, bool) and 0 <= r <= MAX_POSITION for r in arr):
            raise RoaringError("positions must be integers in [0, 2^63)")
        arr = arr.astype(np.uint64)
    elif arr.dtype.kind not in "iu":
        raise RoaringError(f"positions must be integers, got {arr.dtype}")
    elif arr.dtype.kind == "i" and int(arr.min()) < 0:
        raise RoaringError(f"position {int(arr.min())} is negative")
    return np.unique(arr.astype(np.uint64))
