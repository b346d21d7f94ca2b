"""Leaf Arrow value and type strategies shared by every format's strategies (the ladder's first rung).

Each ``*_values`` strategy draws Python values that ``pyarrow.array(values, type=...)`` accepts for
its Arrow type, with the edges readers get wrong weighted in explicitly (extreme integers, NaN,
signed zero, infinities, astral-plane unicode, pre-1970 and far-future instants, decimals at their
precision limit). ``None`` is mixed in by ``nullable`` rather than by each leaf, so that a column's
nullability is decided in one place.

``bounds`` narrows ranges for engines with smaller domains than the spec: ``"spec"`` is the full
range the table formats allow (years 1..9999), ``"engines"`` keeps instants within years
1677..2262 (the nanosecond range some engines convert through) and avoids NaN in places where
engines disagree only about NaN ordering.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, Literal

import pyarrow as pa
from hypothesis import strategies as st

Bounds = Literal["spec", "engines"]

UTC = dt.timezone.utc
_EXACT = decimal.Context(prec=100)
EPOCH = dt.datetime(1970, 1, 1)

# --------------------------------------------------------------------------------------------
# Leaf Arrow types
# --------------------------------------------------------------------------------------------

INTEGER_TYPES = (pa.int8(), pa.int16(), pa.int32(), pa.int64())
FLOAT_TYPES = (pa.float32(), pa.float64())
TIMESTAMP_TYPES = (pa.timestamp("us", tz="UTC"), pa.timestamp("us"))
SIMPLE_TYPES = (
    *INTEGER_TYPES,
    *FLOAT_TYPES,
    pa.bool_(),
    pa.string(),
    pa.binary(),
    pa.date32(),
    *TIMESTAMP_TYPES,
)


def decimal_arrow_types(max_precision: int = 38) -> st.SearchStrategy[pa.Decimal128Type]:
    """decimal128(p, s) with 1 <= p <= max_precision and 0 <= s <= p, limits weighted in."""
    precision = st.one_of(st.sampled_from([1, max_precision]), st.integers(1, max_precision))
    return precision.flatmap(
        lambda p: st.one_of(st.sampled_from(sorted({0, p})), st.integers(0, p)).map(lambda s: pa.decimal128(p, s))
    )


def leaf_arrow_types(*, decimals: bool = True) -> st.SearchStrategy[pa.DataType]:
    """Any leaf (non-nested) Arrow type the table formats map to."""
    simple = st.sampled_from(SIMPLE_TYPES)
    return st.one_of(simple, decimal_arrow_types()) if decimals else simple


# --------------------------------------------------------------------------------------------
# Leaf values
# --------------------------------------------------------------------------------------------


def int_values(bits: int) -> st.SearchStrategy[int]:
    """Signed integers of ``bits`` width; min, max, 0 and -1 drawn often."""
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from([lo, hi, 0, -1, 1]), st.integers(lo, hi))


def float_values(width: int = 64, *, nan: bool = True) -> st.SearchStrategy[float]:
    """Floats of ``width`` bits including +-0.0, +-inf and (when ``nan``) NaN."""
    specials = [0.0, -0.0, float("inf"), float("-inf")] + ([float("nan")] if nan else [])
    return st.one_of(st.sampled_from(specials), st.floats(width=width, allow_nan=nan, allow_infinity=True))


def text_values(*, max_size: int = 20) -> st.SearchStrategy[str]:
    """Unicode strings (no surrogates, which UTF-8 cannot carry), astral and combining characters included."""
    specials = ["", " ", "\x00", "é", "e\u0301", "😀", "𝔘𝔫𝔦", "a/b", "a=b", "%", "__HIVE_DEFAULT_PARTITION__"]
    return st.one_of(st.sampled_from(specials), st.text(max_size=max_size))


def binary_values(*, max_size: int = 20) -> st.SearchStrategy[bytes]:
    """Byte strings, empty and NUL-only included."""
    return st.one_of(st.sampled_from([b"", b"\x00", b"\xff\x00\x01"]), st.binary(max_size=max_size))


def _year_range(bounds: Bounds) -> tuple[int, int]:
    return (1, 9999) if bounds == "spec" else (1678, 2261)


def date_values(bounds: Bounds = "spec") -> st.SearchStrategy[dt.date]:
    """Calendar dates, with the epoch, pre-1970 days and the range ends weighted in."""
    y0, y1 = _year_range(bounds)
    lo, hi = dt.date(y0, 1, 1), dt.date(y1, 12, 31)
    specials = [lo, hi, dt.date(1970, 1, 1), dt.date(1969, 12, 31), dt.date(2000, 2, 29)]
    return st.one_of(st.sampled_from(specials), st.dates(min_value=lo, max_value=hi))


def naive_datetime_values(bounds: Bounds = "spec") -> st.SearchStrategy[dt.datetime]:
    """Microsecond-precision naive instants (timestamp_ntz / wall clock)."""
    y0, y1 = _year_range(bounds)
    lo, hi = dt.datetime(y0, 1, 1), dt.datetime(y1, 12, 31, 23, 59, 59, 999999)
    specials = [
        lo,
        hi,
        EPOCH,
        EPOCH - dt.timedelta(microseconds=1),
        dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
        dt.datetime(2038, 1, 19, 3, 14, 8),
    ]
    return st.one_of(st.sampled_from(specials), st.datetimes(min_value=lo, max_value=hi))


def utc_datetime_values(bounds: Bounds = "spec") -> st.SearchStrategy[dt.datetime]:
    """Aware UTC instants (timestamp with time zone)."""
    return naive_datetime_values(bounds).map(lambda d: d.replace(tzinfo=UTC))


def decimal_values(precision: int, scale: int) -> st.SearchStrategy[decimal.Decimal]:
    """Decimals that fit decimal(precision, scale) exactly, the largest magnitudes weighted in."""
    top = 10**precision - 1
    unscaled = st.one_of(st.sampled_from([top, -top, 0, 1, -1]), st.integers(-top, top))
    # scaleb under the default 28-digit context would round 38-digit values: use an exact context
    return unscaled.map(lambda u: decimal.Decimal(u).scaleb(-scale, context=_EXACT))


def values_for_arrow_type(t: pa.DataType, *, bounds: Bounds = "spec", nan: bool = True) -> st.SearchStrategy[Any]:
    """Non-null Python values of Arrow type ``t`` (leaf or nested: list, map, struct)."""
    if pa.types.is_integer(t):
        return int_values(t.bit_width)
    if pa.types.is_floating(t):
        return float_values(t.bit_width, nan=nan)
    if pa.types.is_boolean(t):
        return st.booleans()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return text_values()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return binary_values()
    if pa.types.is_date32(t):
        return date_values(bounds)
    if pa.types.is_timestamp(t):
        return utc_datetime_values(bounds) if t.tz else naive_datetime_values(bounds)
    if pa.types.is_decimal(t):
        return decimal_values(t.precision, t.scale)
    if pa.types.is_null(t):
        return st.none()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        elem = nullable(values_for_arrow_type(t.value_type, bounds=bounds, nan=nan), t.value_field.nullable)
        return st.lists(elem, max_size=4)
    if pa.types.is_map(t):
        keys = values_for_arrow_type(t.key_type, bounds=bounds, nan=False)
        vals = nullable(values_for_arrow_type(t.item_type, bounds=bounds, nan=nan), t.item_field.nullable)
        # Arrow map values are lists of pairs; keys unique so every engine sees the same map.
        return st.dictionaries(keys, vals, max_size=3).map(lambda d: list(d.items()))
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        return st.fixed_dictionaries(
            {f.name: nullable(values_for_arrow_type(f.type, bounds=bounds, nan=nan), f.nullable) for f in fields}
        )
    raise NotImplementedError(f"no value strategy for Arrow type {t}")


def nullable(values: st.SearchStrategy[Any], allow_null: bool = True) -> st.SearchStrategy[Any]:
    """``values`` or None (when ``allow_null``)."""
    return st.one_of(st.none(), values) if allow_null else values


def arrow_arrays(t: pa.DataType, *, allow_null: bool = True, min_size: int = 0, max_size: int = 12,
                 bounds: Bounds = "spec", nan: bool = True) -> st.SearchStrategy[pa.Array]:
    """A ``pa.Array`` of type ``t``."""
    elems = nullable(values_for_arrow_type(t, bounds=bounds, nan=nan), allow_null)
    return st.lists(elems, min_size=min_size, max_size=max_size).map(lambda vs: pa.array(vs, type=t))
