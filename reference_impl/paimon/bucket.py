"""Bucketing (spec: Data File > Bucket; Java ``bucket.BucketFunction``, ``DefaultBucketFunction``,
``ModBucketFunction``, ``HiveBucketFunction``, ``HiveHasher``, ``utils.MurmurHashUtils``).

A fixed-bucket table (``bucket`` > 0) places a record by its bucket key (``bucket-key``, else the
trimmed primary key) with the function named by ``bucket-function.type`` (case-insensitive):

- ``default``: ``Math.abs(hash % n)`` (Java remainder: sign of the dividend) where ``hash`` is
  ``BinaryRow.hashCode`` of the bucket-key row written with RowKind INSERT: MurmurHash3 x86-32,
  seed 42, over the whole row (header, null bits, slots, variable part) read as little-endian
  4-byte words, finalised with the byte length. Anything that changes the row bytes (a TIMESTAMP(3)
  vs TIMESTAMP(6) key, the 16 bytes a null DECIMAL(20) keeps) changes the bucket.
- ``mod``: ``Math.floorMod(key, n)`` on a single INT or BIGINT key (a null key reads its zeroed
  slot, 0, as Java's ``row.getInt(0)`` does).
- ``hive``: Hive's ``31 * h + hash(field)`` over the fields (null -> 0), then ``(h & MAX_INT) % n``.

Dynamic-bucket tables (``bucket`` = -1) keep key -> bucket in HASH index files; nothing here
recomputes those (PAIMON-BUCKET-007).
"""

from __future__ import annotations

import struct
from typing import Any, Callable, Sequence

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon.binary_row import date_days, serialize, time_millis, unscaled
from reference_impl.paimon.types import DataType, sql_string

DEFAULT_SEED = 42  # MurmurHashUtils.DEFAULT_SEED
_C1, _C2 = 0xCC9E2D51, 0x1B873593
_M32 = 0xFFFFFFFF
FUNCTION_TYPES = ("default", "mod", "hive")


def _signed(h: int) -> int:
    h &= _M32
    return h - (1 << 32) if h & 0x80000000 else h


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def hash_code(row: bytes, seed: int = DEFAULT_SEED) -> int:
    """``BinaryRow.hashCode`` (``MurmurHashUtils.hashBytesByWords``) of row bytes, as a signed 32-bit int."""
    if not isinstance(row, (bytes, bytearray, memoryview)):
        raise InvalidTable(f"a BinaryRow must be bytes, not {type(row).__name__}", rule="PAIMON-ROW-034")
    if len(row) % 4:
        # Java asserts word alignment; a real row is a multiple of 8 bytes (PAIMON-ROW-032)
        raise InvalidTable(f"a BinaryRow of {len(row)} bytes is not word aligned", rule="PAIMON-ROW-032")
    h = seed
    for (k,) in struct.iter_unpack("<I", row):
        k = _rotl((k * _C1) & _M32, 15) * _C2 & _M32
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & _M32
    h ^= len(row)
    h = ((h ^ (h >> 16)) * 0x85EBCA6B) & _M32
    h = ((h ^ (h >> 13)) * 0xC2B2AE35) & _M32
    return _signed(h ^ (h >> 16))


def java_rem(a: int, n: int) -> int:
    """Java's ``a % n`` (truncated division: the result has the sign of ``a``)."""
    r = abs(a) % abs(n)
    return -r if a < 0 else r


def bucket_of_hash(h: int, num_buckets: int) -> int:
    """``DefaultBucketFunction``: ``Math.abs(hash % numBuckets)``."""
    return abs(java_rem(h, num_buckets))


def _default(values: Sequence[Any], types: Sequence[DataType], n: int) -> int:
    return bucket_of_hash(hash_code(serialize(values, types, 0)), n)


def _mod(values: Sequence[Any], types: Sequence[DataType], n: int) -> int:
    if len(types) != 1 or types[0].root not in ("INT", "BIGINT"):
        raise InvalidTable("bucket-function.type=mod needs exactly one INT or BIGINT bucket key, got "
                           f"({', '.join(map(sql_string, types))})", rule="PAIMON-BUCKET-005")
    serialize(values, types, 0)  # the same value checks as the other functions
    return (values[0] or 0) % n  # Python's % on a positive divisor is Math.floorMod


# --- Hive --------------------------------------------------------------------------------------


def _hive_bytes(data: bytes) -> int:
    h = 0
    for b in data:
        h = (h * 31 + (b - 256 if b > 127 else b)) & _M32  # Java bytes are signed
    return h


def _long_hash(x: int) -> int:
    x &= (1 << 64) - 1
    return (x ^ (x >> 32)) & _M32  # Long.hashCode


def _big_decimal_hash(u: int, scale: int) -> int:
    """``BigDecimal.hashCode``: 31 * unscaled.hashCode() + scale (BigInteger hash over 32-bit magnitude words)."""
    h, mag = 0, abs(u)
    for shift in range(((mag.bit_length() + 31) // 32 - 1) * 32, -1, -32):
        h = (31 * h + ((mag >> shift) & _M32)) & _M32
    return (31 * (-h if u < 0 else h) + scale) & _M32


def _hive_decimal(u: int, scale: int) -> int:
    """``HiveHasher.normalizeDecimal`` (trailing zeros stripped, at most 38 digits) then ``BigDecimal.hashCode``."""
    if u == 0:
        return 0  # BigDecimal.ZERO
    while True:
        while scale > 0 and u % 10 == 0:  # stripTrailingZeros, then a negative scale is set back to 0
            u, scale = u // 10, scale - 1
        int_digits = len(str(abs(u))) - scale
        max_scale = min(38, 38 - int_digits, scale)
        if scale <= max_scale:
            return _big_decimal_hash(u, scale)
        q, r = divmod(abs(u), 10 ** (scale - max_scale))  # setScale(maxScale, HALF_UP)
        q += 2 * r >= 10 ** (scale - max_scale)
        u, scale = (q if u > 0 else -q), max_scale
        if u == 0:
            return 0


def _hive_field(v: Any, t: DataType) -> int:
    if v is None:
        return 0
    r = t.root
    if r == "BOOLEAN":
        return 1 if v else 0
    if r in ("TINYINT", "SMALLINT", "INT"):
        return v & _M32
    if r == "DATE":
        return date_days(v, t) & _M32
    if r == "TIME":
        return time_millis(v, t)
    if r == "BIGINT":
        return _long_hash(v)
    if r == "FLOAT":  # -0.0 and 0.0 hash alike; floatToIntBits canonicalises NaN
        return 0 if v == 0 else 0x7FC00000 if v != v else struct.unpack("<I", struct.pack("<f", v))[0]
    if r == "DOUBLE":
        return 0 if v == 0 else _long_hash(0x7FF8000000000000 if v != v else struct.unpack("<Q", struct.pack("<d", v))[0])
    if r in ("CHAR", "VARCHAR"):
        return _hive_bytes(v.encode("utf-8"))
    if r in ("BINARY", "VARBINARY"):
        return _hive_bytes(bytes(v))
    if r == "DECIMAL":
        return _hive_decimal(unscaled(v, t), t.scale)
    raise Unsupported(f"bucket-function.type=hive cannot hash {sql_string(t)} values (Java: Unsupported type as "
                      "bucket key type)", feature="hive-bucket-" + r.lower())


def _hive(values: Sequence[Any], types: Sequence[DataType], n: int) -> int:
    serialize(values, types, 0)  # the same value checks as the other functions
    h = 0
    for v, t in zip(values, types):
        h = (31 * h + _hive_field(v, t)) & _M32
    return (h & 0x7FFFFFFF) % n


_FUNCTIONS: dict[str, Callable[[Sequence[Any], Sequence[DataType], int], int]] = {
    "default": _default, "mod": _mod, "hive": _hive}


def bucket(values: Sequence[Any], types: Sequence[DataType], num_buckets: int, function_type: str = "default") -> int:
    """The bucket of a record whose bucket-key fields have these values and types."""
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, int) or not 0 < num_buckets <= 0x7FFFFFFF:
        raise InvalidTable(f"a fixed bucket count must be a positive int, not {num_buckets!r}", rule="PAIMON-BUCKET-001")
    fn = _FUNCTIONS.get(str(function_type).lower())
    if fn is None:
        raise InvalidTable(f"unknown bucket-function.type {function_type!r} (default, mod or hive)", rule="PAIMON-BUCKET-005")
    return fn(values, types, num_buckets)


__all__ = ["bucket", "hash_code", "bucket_of_hash", "java_rem", "DEFAULT_SEED", "FUNCTION_TYPES"]
