"""Partition Transforms (and Appendix B, 32-bit Hash Requirements).

Transforms are parsed from their JSON strings (``identity``, ``bucket[N]``, ``truncate[W]``,
``year``, ``month``, ``day``, ``hour``, ``void``); any other string is an ``UnknownTransform``,
which readers must tolerate (v3: required; v1/v2: should) and writers must not commit with.
``apply`` works on the internal values of ``values`` (temporal values are integers in the
spec's unit); ``apply_arrow`` works on whole pyarrow arrays, element by element through the
same code path so the two can never disagree.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import mmh3
import pyarrow as pa

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V

IDENTITY = "identity"
BUCKET = "bucket"
TRUNCATE = "truncate"
YEAR = "year"
MONTH = "month"
DAY = "day"
HOUR = "hour"
VOID = "void"

_PARAM_RE = re.compile(r"^(bucket|truncate)\[\s*(-?\d{1,40})\s*\]$", re.ASCII)
MICROS_PER_HOUR = 3_600_000_000
INT_MAX = 2**31 - 1

BUCKET_SOURCE_NAMES = frozenset(
    {"int", "long", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary"}
)
TEMPORAL_SOURCES = frozenset({T.DATE, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMP_NS, T.TIMESTAMPTZ_NS})


# ---------------------------------------------------------------------------------------------
# Appendix B hashing


def hash_bytes(data: bytes) -> int:
    """32-bit Murmur3, x86 variant, seed 0, as a signed int (Java's int)."""
    return mmh3.hash(data, 0, signed=True)


def hash_long(v: int) -> int:
    """hashBytes of the 8 little-endian bytes of a long."""
    return hash_bytes(struct.pack("<q", v))


def _double_bits(x: float) -> int:
    if math.isnan(x):
        return 0x7FF8000000000000  # every NaN hashes like the canonical NaN
    if x == 0.0:
        x = 0.0  # -0.0 hashes like 0.0
    return struct.unpack("<q", struct.pack("<d", x))[0]


def hash_value(value: Any, t: T.IcebergType) -> int | None:
    """The Appendix B hash of one value (None for null and for ``unknown``); Unsupported for variant/nested."""
    if value is None or t == T.UNKNOWN:
        return None
    if t == T.VARIANT or T.is_nested(t) or isinstance(t, (T.GeometryType, T.GeographyType)):
        # Variant has several encodings of equal values; nested and geo types are never bucketed.
        raise Unsupported(f"no 32-bit hash is defined for {t}", feature=f"hash:{t}", rule="ICEBERG-PART-024")
    v = V.to_internal(value, t)
    name = t.name if isinstance(t, T.PrimitiveType) else None
    if name in ("int", "long", "time"):
        return hash_long(v)  # int widened to long so promotion keeps the bucket
    if name == "date":
        return hash_long(v)  # hashInt(x) is defined as hashLong(long(x)) in Appendix B note 1
    if t in T.TIMESTAMP_TYPES:
        if t in T.NANO_TYPES:
            v = v // V.NANOS_PER_MICRO  # floor: converted to microseconds before hashing
        return hash_long(v)
    if isinstance(t, T.DecimalType):
        return hash_bytes(V.min_bytes_twos_complement(V.unscaled(v)))
    if name == "string":
        return hash_bytes(v.encode("utf-8"))
    if name == "uuid":
        return hash_bytes(v.bytes)
    if name == "binary" or isinstance(t, T.FixedType):
        return hash_bytes(v)
    if name == "boolean":
        return hash_long(1 if v else 0)
    if name in ("float", "double"):
        return hash_long(_double_bits(v))
    raise Unsupported(f"no 32-bit hash is defined for {t}", feature=f"hash:{t}", rule="ICEBERG-PART-024")


# ---------------------------------------------------------------------------------------------
# Transforms


@dataclass(frozen=True, slots=True, kw_only=True)
class Transform:
    """Base of every transform; ``str(t)`` is its JSON string."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def is_known(self) -> bool:
        """False only for ``UnknownTransform``."""
        return True

    def can_transform(self, source: T.IcebergType) -> bool:
        """Whether the spec allows this transform on a source of type ``source``."""
        raise NotImplementedError

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        """The partition value type for ``source``; InvalidTable when the source type is not accepted."""
        raise NotImplementedError

    def _check(self, source: T.IcebergType) -> None:
        if not self.can_transform(source):
            raise InvalidTable(f"transform {self} cannot be applied to {source}", rule=_SOURCE_RULE.get(type(self).__name__, "ICEBERG-PART-010"))

    def _apply(self, v: Any, source: T.IcebergType) -> Any:
        raise NotImplementedError

    def apply(self, value: Any, source: T.IcebergType) -> Any:
        """Transform one value (natural or internal form); null -> null for every transform."""
        self._check(source)
        if value is None:
            return None
        return self._apply(V.to_internal(value, source), source)

    def apply_arrow(self, array: pa.Array | pa.ChunkedArray, source: T.IcebergType) -> pa.Array:
        """Transform a whole Arrow column of ``source`` type; result typed as ``result_type(source)``."""
        self._check(source)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        internal = arrow_to_internal(array, source)
        out = [None if v is None else self._apply(v, source) for v in internal]
        return internal_to_arrow(out, self.result_type(source))

    @property
    def preserves_order(self) -> bool:
        """Whether v1 <= v2 implies t(v1) <= t(v2) (monotone, so usable for range pruning and sort)."""
        return False

    def satisfies_order_of(self, other: "Transform", source: T.IcebergType | None = None) -> bool:
        """Whether data ordered by this transform is also ordered by ``other`` (on the same source)."""
        return self == other


def _check_param(name: str, n: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= INT_MAX:
        raise InvalidTable(f"{name} parameter must be a positive int, got {n!r}", rule="ICEBERG-PART-037")


_SOURCE_RULE = {
    "IdentityTransform": "ICEBERG-PART-010",
    "BucketTransform": "ICEBERG-PART-011",
    "TruncateTransform": "ICEBERG-PART-012",
    "YearTransform": "ICEBERG-PART-013",
    "MonthTransform": "ICEBERG-PART-013",
    "DayTransform": "ICEBERG-PART-013",
    "HourTransform": "ICEBERG-PART-013",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityTransform(Transform):
    """The source value, unmodified."""

    def __str__(self) -> str:
        return IDENTITY

    def can_transform(self, source: T.IcebergType) -> bool:
        return T.is_primitive(source) and not isinstance(source, (T.GeometryType, T.GeographyType))

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        self._check(source)
        return source

    def _apply(self, v: Any, source: T.IcebergType) -> Any:
        return v

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform, source: T.IcebergType | None = None) -> bool:
        """Ordering by the value orders by every order-preserving transform of it."""
        return other.preserves_order


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketTransform(Transform):
    """(murmur3_x86_32(v) & Integer.MAX_VALUE) % N."""

    num_buckets: int

    def __post_init__(self) -> None:
        _check_param(BUCKET, self.num_buckets)

    def __str__(self) -> str:
        return f"{BUCKET}[{self.num_buckets}]"

    def can_transform(self, source: T.IcebergType) -> bool:
        return (isinstance(source, T.PrimitiveType) and source.name in BUCKET_SOURCE_NAMES) or isinstance(source, (T.DecimalType, T.FixedType))

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        self._check(source)
        return T.INT

    def _apply(self, v: Any, source: T.IcebergType) -> int:
        return (hash_value(v, source) & INT_MAX) % self.num_buckets


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateTransform(Transform):
    """Truncate to width W (int/long/decimal, remainder never negative) or length L (string code points, binary bytes)."""

    width: int

    def __post_init__(self) -> None:
        _check_param(TRUNCATE, self.width)

    def __str__(self) -> str:
        return f"{TRUNCATE}[{self.width}]"

    def can_transform(self, source: T.IcebergType) -> bool:
        return source in (T.INT, T.LONG, T.STRING, T.BINARY) or isinstance(source, T.DecimalType)

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        self._check(source)
        return source

    def _apply(self, v: Any, source: T.IcebergType) -> Any:
        w = self.width
        if source in (T.INT, T.LONG):
            return v - (((v % w) + w) % w)  # Python's % is already non-negative; kept as the spec writes it
        if isinstance(source, T.DecimalType):
            n = V.unscaled(v)
            return Decimal(n - (((n % w) + w) % w)).scaleb(-source.scale, context=V._DEC)
        if source == T.STRING:
            return v[:w]  # Python str indexes by code point, so the result is valid UTF-8
        return v[:w]

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform, source: T.IcebergType | None = None) -> bool:
        """Strings/binary: a longer prefix orders every shorter one; numbers: only when W divides the other's W."""
        if not isinstance(other, TruncateTransform):
            return False
        if source is None or source in (T.STRING, T.BINARY):
            return self.width >= other.width
        # floor(v / b) is monotone in floor(v / a) exactly when a divides b.
        return other.width % self.width == 0


@dataclass(frozen=True, slots=True, kw_only=True)
class _TimeTransform(Transform):
    """Shared source rules of year/month/day/hour."""

    _granularity = 0  # larger is finer: year 1, month 2, day 3, hour 4

    def can_transform(self, source: T.IcebergType) -> bool:
        return source in TEMPORAL_SOURCES

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        self._check(source)
        return T.INT

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform, source: T.IcebergType | None = None) -> bool:
        # Ordering by hours also orders by days, months and years (and so on), never the reverse.
        return isinstance(other, _TimeTransform) and self._granularity >= other._granularity


def _micros(v: int, source: T.IcebergType) -> int:
    if source == T.DATE:
        return v * V.MICROS_PER_DAY
    if source in T.NANO_TYPES:
        return v // V.NANOS_PER_MICRO
    return v


def _days(v: int, source: T.IcebergType) -> int:
    return v if source == T.DATE else _micros(v, source) // V.MICROS_PER_DAY


def _ym(v: int, source: T.IcebergType) -> tuple[int, int]:
    y, m, _ = V.civil_from_days(_days(v, source))
    return y, m


@dataclass(frozen=True, slots=True, kw_only=True)
class YearTransform(_TimeTransform):
    """Whole years from 1970 (negative before)."""

    _granularity = 1

    def __str__(self) -> str:
        return YEAR

    def _apply(self, v: int, source: T.IcebergType) -> int:
        return _ym(v, source)[0] - 1970


@dataclass(frozen=True, slots=True, kw_only=True)
class MonthTransform(_TimeTransform):
    """Whole months from 1970-01."""

    _granularity = 2

    def __str__(self) -> str:
        return MONTH

    def _apply(self, v: int, source: T.IcebergType) -> int:
        y, m = _ym(v, source)
        return (y - 1970) * 12 + (m - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class DayTransform(_TimeTransform):
    """Days from 1970-01-01; the result type is ``date`` (readers also accept a plain int)."""

    _granularity = 3

    def __str__(self) -> str:
        return DAY

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        self._check(source)
        return T.DATE

    def _apply(self, v: int, source: T.IcebergType) -> int:
        return _days(v, source)


@dataclass(frozen=True, slots=True, kw_only=True)
class HourTransform(_TimeTransform):
    """Hours from 1970-01-01T00:00 (timestamps only)."""

    _granularity = 4

    def __str__(self) -> str:
        return HOUR

    def can_transform(self, source: T.IcebergType) -> bool:
        return source in T.TIMESTAMP_TYPES

    def _apply(self, v: int, source: T.IcebergType) -> int:
        return _micros(v, source) // MICROS_PER_HOUR


@dataclass(frozen=True, slots=True, kw_only=True)
class VoidTransform(Transform):
    """Always null; result type is the source type."""

    def __str__(self) -> str:
        return VOID

    def can_transform(self, source: T.IcebergType) -> bool:
        return True

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        return source

    def apply(self, value: Any, source: T.IcebergType) -> Any:
        return None

    def _apply(self, v: Any, source: T.IcebergType) -> Any:
        return None

    def apply_arrow(self, array, source: T.IcebergType) -> pa.Array:
        return pa.nulls(len(array), type=_arrow_type_or_null(source))


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownTransform(Transform):
    """A transform this implementation does not know; kept verbatim, never applied."""

    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def is_known(self) -> bool:
        return False

    def can_transform(self, source: T.IcebergType) -> bool:
        return False

    def result_type(self, source: T.IcebergType) -> T.IcebergType:
        # The spec gives none; Java and PyIceberg read the partition value as a string.
        return T.STRING

    def apply(self, value: Any, source: T.IcebergType) -> Any:
        raise Unsupported(f"unknown transform {self.text!r} cannot be applied", feature=f"transform:{self.text}", rule="ICEBERG-PART-007")

    def apply_arrow(self, array, source):
        return self.apply(None, source)


def _arrow_type_or_null(t: T.IcebergType) -> pa.DataType:
    try:
        return T.to_arrow_type(t)
    except Unsupported:
        return pa.null()


def parse_transform(text: Any) -> Transform:
    """A transform from its JSON string; unknown names give UnknownTransform, bad parameters InvalidTable."""
    if not isinstance(text, str):
        raise InvalidTable(f"transform must be a JSON string, got {text!r}", rule="ICEBERG-PART-037")
    s = text.strip()
    simple = {IDENTITY: IdentityTransform, YEAR: YearTransform, MONTH: MonthTransform, DAY: DayTransform, HOUR: HourTransform, VOID: VoidTransform}
    if s in simple:
        return simple[s]()
    m = _PARAM_RE.match(s)
    if m:
        n = int(m.group(2))
        _check_param(m.group(1), n)
        return BucketTransform(num_buckets=n) if m.group(1) == BUCKET else TruncateTransform(width=n)
    return UnknownTransform(text=text)


# ---------------------------------------------------------------------------------------------
# Arrow <-> internal values (temporal columns via their integer storage)


def arrow_to_internal(array: pa.Array, t: T.IcebergType) -> list[Any]:
    """The internal values of an Arrow column of Iceberg type ``t`` (nulls as None)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    try:
        if t in TEMPORAL_SOURCES or t == T.TIME:
            storage = pa.int32() if t == T.DATE else pa.int64()
            want = T.to_arrow_type(t)
            if array.type != want:
                array = array.cast(want)
            return array.cast(storage).to_pylist()
        if t == T.UUID:
            if isinstance(array.type, pa.ExtensionType):
                array = array.storage
            return [None if b is None else V.to_internal(b, t) for b in array.to_pylist()]
        return array.to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise InvalidTable(f"column of Arrow type {array.type} cannot hold Iceberg {t}: {exc}") from None


def internal_to_arrow(items: list[Any], t: T.IcebergType) -> pa.Array:
    """Build an Arrow array of Iceberg type ``t`` from internal values."""
    at = T.to_arrow_type(t)
    try:
        if t in TEMPORAL_SOURCES or t == T.TIME:
            storage = pa.int32() if t == T.DATE else pa.int64()
            return pa.array(items, type=storage).cast(at)
        if t == T.UUID:
            return pa.array([None if u is None else u.bytes for u in items], type=at)
        return pa.array(items, type=at)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        # e.g. truncate[50] of -99 in decimal(2,0) is -100, which needs one more digit.
        raise InvalidTable(f"values do not fit Arrow {at}: {exc}") from None


def bucket(value: Any, source: T.IcebergType, num_buckets: int) -> int | None:
    """bucket[N] of one value (a convenience over ``BucketTransform``)."""
    return BucketTransform(num_buckets=num_buckets).apply(value, source)


def truncate(value: Any, source: T.IcebergType, width: int) -> Any:
    """truncate[W] of one value (a convenience over ``TruncateTransform``)."""
    return TruncateTransform(width=width).apply(value, source)


def human_string(value: Any, transform: Transform, source: T.IcebergType) -> str:
    """A readable partition value: dates as ISO, months as yyyy-MM, hours as yyyy-MM-dd-HH (like Java's toHumanString)."""
    if value is None:
        return "null"
    if isinstance(transform, YearTransform):
        return f"{1970 + value:04d}"
    if isinstance(transform, MonthTransform):
        y, m = divmod(value, 12)
        return f"{1970 + y:04d}-{m + 1:02d}"
    if isinstance(transform, DayTransform):
        return V.iso_date(value)
    if isinstance(transform, HourTransform):
        days, h = divmod(value, 24)
        return f"{V.iso_date(days)}-{h:02d}"
    rt = transform.result_type(source)
    j = V.to_json(value, rt)
    return j if isinstance(j, str) else str(j).lower() if isinstance(j, bool) else str(j)
