"""Appendix D: Single-value serialization (binary form for bounds/partition values, and JSON form).

Internal values (what every function here takes and returns):

=================  ==========================================================
boolean            bool
int, long          int
float, double      float
decimal(P,S)       decimal.Decimal (its exponent is -S)
date               int, days from 1970-01-01
time               int, microseconds from midnight
timestamp(tz)      int, microseconds from 1970-01-01T00:00 (UTC for tz)
timestamp(tz)_ns   int, nanoseconds from 1970-01-01T00:00 (UTC for tz)
string             str
uuid               uuid.UUID
fixed, binary      bytes
geometry/geography bytes (WKB)
struct             dict {field id: value}; list: list; map: dict or list of (key, value) pairs
=================  ==========================================================

``to_internal`` also accepts the natural Python objects (``datetime.date``/``time``/``datetime``,
uuid strings, ``int`` for decimals) so that callers can write test values plainly.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
import uuid as uuid_mod
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import types as T

EPOCH_DATE = dt.date(1970, 1, 1)
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_TZ = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
MICROS_PER_DAY = 86_400_000_000
NANOS_PER_MICRO = 1000
UTC_OFFSET = "+00:00"
# JSON map single value keys (Appendix D).
MAP_KEYS = "keys"
MAP_VALUES = "values"

# Decimal arithmetic here must be exact: 38 digits exceed the default context's 28.
_DEC = Context(prec=200)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

_TIME_RE = re.compile(r"^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$", re.ASCII)
_TS_RE = re.compile(r"^([+-]?\d{4,40})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?$", re.ASCII)
_DATE_RE = re.compile(r"^([+-]?\d{4,40})-(\d{2})-(\d{2})$", re.ASCII)


def _bad(msg: str, where: str = "", rule: str | None = None) -> InvalidTable:
    return InvalidTable(msg + (f" at {where}" if where else ""), rule=rule)


def _is_nano(t: T.IcebergType) -> bool:
    return t in T.NANO_TYPES


# ---------------------------------------------------------------------------------------------
# Python objects -> internal values


def to_internal(value: Any, t: T.IcebergType, *, where: str = "") -> Any:
    """Normalise a Python value (natural or internal form) to the internal value of type ``t``."""
    if value is None:
        return None
    name = t.name if isinstance(t, T.PrimitiveType) else None
    try:
        if name == "boolean":
            if not isinstance(value, bool):
                raise _bad(f"boolean value expected, got {value!r}", where)
            return value
        if name in ("int", "long"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise _bad(f"{name} value must be an int, got {value!r}", where)
            lo, hi = (INT_MIN, INT_MAX) if name == "int" else (LONG_MIN, LONG_MAX)
            if not lo <= value <= hi:
                raise _bad(f"{value} is out of range for {name}", where, "ICEBERG-TYPE-003")
            return value
        if name in ("float", "double"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _bad(f"{name} value must be a number, got {value!r}", where)
            return float(value)
        if isinstance(t, T.DecimalType):
            return _to_decimal(value, t, where)
        if name == "date":
            if isinstance(value, dt.datetime):
                raise _bad("a date value must not carry a time of day", where)
            if isinstance(value, dt.date):
                return (value - EPOCH_DATE).days
            return _int_value(value, where, INT_MIN, INT_MAX)
        if name == "time":
            if isinstance(value, dt.time):
                if value.tzinfo is not None:
                    raise _bad("a time value must not carry a zone", where)
                return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
            v = _int_value(value, where)
            if not 0 <= v < MICROS_PER_DAY:
                raise _bad(f"time {v} is not within a day", where, "ICEBERG-TYPE-005")
            return v
        if t in T.TIMESTAMP_TYPES:
            if isinstance(value, dt.datetime):
                with_zone = t in (T.TIMESTAMPTZ, T.TIMESTAMPTZ_NS)
                if with_zone:
                    if value.tzinfo is None:
                        raise _bad(f"{t} needs a zone-aware datetime (values are instants)", where, "ICEBERG-TYPE-007")
                    delta = value - EPOCH_TZ
                else:
                    if value.tzinfo is not None:
                        raise _bad(f"{t} takes a zone-less datetime (wall-clock value)", where, "ICEBERG-TYPE-006")
                    delta = value - EPOCH
                micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
                return _int_value(micros * NANOS_PER_MICRO if _is_nano(t) else micros, where, LONG_MIN, LONG_MAX)
            return _int_value(value, where, LONG_MIN, LONG_MAX)
        if name == "string":
            if not isinstance(value, str):
                raise _bad(f"string value expected, got {value!r}", where)
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _bad("string value is not valid Unicode (lone surrogate)", where, "ICEBERG-TYPE-009") from None
            return value
        if name == "uuid":
            if isinstance(value, uuid_mod.UUID):
                return value
            if isinstance(value, str):
                return uuid_mod.UUID(value)
            if isinstance(value, (bytes, bytearray)) and len(value) == 16:
                return uuid_mod.UUID(bytes=bytes(value))
            raise _bad(f"uuid value expected, got {value!r}", where)
        if isinstance(t, T.FixedType):
            if not isinstance(value, (bytes, bytearray)):
                raise _bad(f"fixed value must be bytes, got {type(value).__name__}", where)
            if len(value) != t.length:
                raise _bad(f"fixed[{t.length}] value has {len(value)} bytes", where, "ICEBERG-TYPE-011")
            return bytes(value)
        if name == "binary" or isinstance(t, (T.GeometryType, T.GeographyType)):
            if not isinstance(value, (bytes, bytearray)):
                raise _bad(f"{t} value must be bytes, got {type(value).__name__}", where)
            return bytes(value)
        if name == "unknown":
            raise _bad("an unknown-typed value is always null", where, "ICEBERG-TYPE-002")
        if isinstance(t, T.StructType):
            if not isinstance(value, dict):
                raise _bad("struct value must be a dict keyed by field id", where)
            return {f.id: to_internal(value.get(f.id), f.type, where=f"{where}.{f.name}") for f in t.fields if f.id in value}
        if isinstance(t, T.ListType):
            return [to_internal(v, t.element, where=f"{where}[]") for v in value]
        if isinstance(t, T.MapType):
            items = value.items() if isinstance(value, dict) else value
            return {to_internal(k, t.key, where=f"{where}.key"): to_internal(v, t.value, where=f"{where}.value") for k, v in items}
    except (ValueError, TypeError, ArithmeticError, AttributeError) as exc:
        raise _bad(f"bad {t} value {value!r}: {exc}", where) from None
    raise Unsupported(f"no single-value form for {t}", feature=f"type:{t}")


def _int_value(value: Any, where: str, lo: int = LONG_MIN, hi: int = LONG_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"integer value expected, got {value!r}", where)
    if not lo <= value <= hi:
        raise _bad(f"{value} is out of range ({lo}..{hi})", where, "ICEBERG-TYPE-003")
    return value


def _to_decimal(value: Any, t: T.DecimalType, where: str) -> Decimal:
    if isinstance(value, bool):
        raise _bad(f"decimal value expected, got {value!r}", where)
    if isinstance(value, int):
        d = Decimal(value)
    elif isinstance(value, Decimal):
        d = value
    elif isinstance(value, str):
        try:
            d = Decimal(value)
        except InvalidOperation:
            raise _bad(f"bad decimal {value!r}", where) from None
    else:
        raise _bad(f"decimal value expected, got {type(value).__name__}", where)
    if not d.is_finite():
        raise _bad(f"decimal must be finite, got {d}", where)
    q = d.scaleb(t.scale, context=_DEC).to_integral_value(context=_DEC)
    if q.scaleb(-t.scale, context=_DEC) != d:
        raise _bad(f"{d} does not fit scale {t.scale} exactly", where, "ICEBERG-TYPE-004")
    if len(str(abs(int(q)))) > t.precision:
        raise _bad(f"{d} has more than {t.precision} digits", where, "ICEBERG-TYPE-004")
    return Decimal(int(q)).scaleb(-t.scale, context=_DEC)


def unscaled(d: Decimal) -> int:
    """The unscaled integer of a decimal at its own exponent (e.g. 14.20 -> 1420)."""
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    return -n if sign else n


def min_bytes_twos_complement(n: int) -> bytes:
    """Shortest big-endian two's-complement bytes of ``n`` (0 -> b"\\x00", -1 -> b"\\xff")."""
    length = max(1, (n.bit_length() + 8) // 8) if n >= 0 else max(1, ((~n).bit_length() + 8) // 8)
    return n.to_bytes(length, "big", signed=True)


# Natural Python objects from internal values (for display and for callers that want them).


def civil_from_days(days: int) -> tuple[int, int, int]:
    """days from 1970-01-01 -> proleptic Gregorian (year, month, day) for any int (year 0 and below too)."""
    # Hinnant's algorithm: exact integer arithmetic, no datetime range limits.
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if m <= 2 else 0), m, d


def days_from_civil(y: int, m: int, d: int) -> int:
    """Inverse of ``civil_from_days``."""
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    mp = m - 3 if m > 2 else m + 9
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def date_from_days(days: int) -> dt.date:
    """days from 1970-01-01 -> datetime.date (InvalidTable outside years 1..9999)."""
    try:
        return EPOCH_DATE + dt.timedelta(days=days)
    except OverflowError:
        raise InvalidTable(f"day {days} is outside the years Python's date can hold") from None


def iso_date(days: int) -> str:
    """ISO-8601 date text for any day number (years past 9999 get "+", years before 0 get "-", as Java prints them)."""
    y, m, d = civil_from_days(days)
    year = f"{y:04d}" if 0 <= y <= 9999 else (f"+{y}" if y > 9999 else f"-{-y:04d}")
    return f"{year}-{m:02d}-{d:02d}"


def time_from_micros(micros: int) -> dt.time:
    """microseconds from midnight -> datetime.time."""
    s, us = divmod(micros, 1_000_000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return dt.time(h, m, s, us)


def datetime_from_micros(micros: int, *, tz: bool = False) -> dt.datetime:
    """microseconds from the epoch -> datetime (UTC-aware when ``tz``); InvalidTable outside years 1..9999."""
    try:
        return (EPOCH_TZ if tz else EPOCH) + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise InvalidTable(f"timestamp {micros} is outside the years Python's datetime can hold") from None


# ---------------------------------------------------------------------------------------------
# Binary single-value serialization


def to_bytes(value: Any, t: T.IcebergType) -> bytes:
    """The binary single value of ``value`` (Appendix D); Unsupported for types that have none."""
    if isinstance(t, T.PrimitiveType) and t.name in ("unknown", "variant") or isinstance(t, T.NestedType):
        raise Unsupported(f"{t} has no binary single-value serialization", feature=f"binary:{t}", rule="ICEBERG-SERDE-015")
    v = to_internal(value, t)
    if v is None:
        raise InvalidTable("null has no binary single value", rule="ICEBERG-SERDE-015")
    name = t.name if isinstance(t, T.PrimitiveType) else None
    if name == "boolean":
        return b"\x01" if v else b"\x00"
    if name in ("int", "date"):
        return struct.pack("<i", v)
    if name in ("long", "time") or t in T.TIMESTAMP_TYPES:
        try:
            return struct.pack("<q", v)
        except struct.error:
            raise InvalidTable(f"{v} does not fit in a 64-bit {t}", rule="ICEBERG-SERDE-010") from None
    if name == "float":
        try:
            return struct.pack("<f", v)
        except (struct.error, OverflowError):
            raise InvalidTable(f"{v!r} does not fit in a 32-bit float", rule="ICEBERG-SERDE-010") from None
    if name == "double":
        return struct.pack("<d", v)
    if name == "string":
        return v.encode("utf-8")
    if name == "uuid":
        return v.bytes  # big-endian, RFC 4122 order
    if isinstance(t, T.DecimalType):
        return min_bytes_twos_complement(unscaled(v))
    return v  # fixed, binary, geometry/geography WKB


_FIXED_WIDTH = {"boolean": 1, "int": 4, "date": 4, "long": 8, "time": 8, "float": 4, "double": 8}


def from_bytes(data: bytes, t: T.IcebergType, *, where: str = "") -> Any:
    """Decode a binary single value (InvalidTable on a wrong length); see ``bound_from_bytes`` for promoted types."""
    if isinstance(t, T.PrimitiveType) and t.name in ("unknown", "variant") or isinstance(t, T.NestedType):
        raise Unsupported(f"{t} has no binary single-value serialization", feature=f"binary:{t}", rule="ICEBERG-SERDE-015")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _bad(f"binary value expected, got {type(data).__name__}", where)
    data = bytes(data)
    name = t.name if isinstance(t, T.PrimitiveType) else None
    width = _FIXED_WIDTH.get(name or "") or (8 if t in T.TIMESTAMP_TYPES else None)
    if width is not None and len(data) != width:
        raise _bad(f"{t} single value must be {width} bytes, got {len(data)}", where, "ICEBERG-SERDE-010")
    if name == "boolean":
        return data != b"\x00"
    if name in ("int", "date"):
        return struct.unpack("<i", data)[0]
    if name in ("long", "time") or t in T.TIMESTAMP_TYPES:
        return struct.unpack("<q", data)[0]
    if name == "float":
        return struct.unpack("<f", data)[0]
    if name == "double":
        return struct.unpack("<d", data)[0]
    if name == "string":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise _bad("string single value is not valid UTF-8", where, "ICEBERG-TYPE-009") from None
    if name == "uuid":
        if len(data) != 16:
            raise _bad(f"uuid single value must be 16 bytes, got {len(data)}", where, "ICEBERG-SERDE-013")
        return uuid_mod.UUID(bytes=data)
    if isinstance(t, T.DecimalType):
        if not data:
            raise _bad("decimal single value is empty", where, "ICEBERG-SERDE-014")
        return Decimal(int.from_bytes(data, "big", signed=True)).scaleb(-t.scale, context=_DEC)
    if isinstance(t, T.FixedType) and len(data) != t.length:
        raise _bad(f"fixed[{t.length}] single value has {len(data)} bytes", where, "ICEBERG-TYPE-011")
    return data


def bound_from_bytes(data: bytes, t: T.IcebergType, *, where: str = "") -> Any:
    """Decode a lower/upper bound of a column of current type ``t``, inferring a pre-promotion type by length."""
    if isinstance(data, (bytes, bytearray, memoryview)) and len(data) == 4:
        # Schema Evolution: promotion does not rewrite bounds, so the length tells the old type.
        if t == T.LONG:
            return from_bytes(data, T.INT, where=where)
        if t == T.DOUBLE:
            return from_bytes(data, T.FLOAT, where=where)
        if t == T.TIMESTAMP:
            return from_bytes(data, T.DATE, where=where) * MICROS_PER_DAY
        if t == T.TIMESTAMP_NS:
            nanos = from_bytes(data, T.DATE, where=where) * MICROS_PER_DAY * NANOS_PER_MICRO
            if not LONG_MIN <= nanos <= LONG_MAX:
                # A date promoted to timestamp_ns that the new type cannot hold must fail, not wrap.
                raise _bad(f"date bound {nanos // (MICROS_PER_DAY * NANOS_PER_MICRO)} is outside timestamp_ns", where, "ICEBERG-EVOL-005")
            return nanos
    return from_bytes(data, t, where=where)


@dataclass(frozen=True, slots=True, kw_only=True)
class GeoPoint:
    """A geometry/geography bound point; z and m are optional."""

    x: float
    y: float
    z: float | None = None
    m: float | None = None


def geo_bound_to_bytes(p: GeoPoint) -> bytes:
    """x:y, x:y:z, x:y:NaN:m or x:y:z:m as little-endian doubles (Appendix D, Bound serialization)."""
    coords = [p.x, p.y]
    if p.m is not None:
        coords += [math.nan if p.z is None else p.z, p.m]
    elif p.z is not None:
        coords.append(p.z)
    return struct.pack(f"<{len(coords)}d", *coords)


def geo_bound_from_bytes(data: bytes, *, where: str = "") -> GeoPoint:
    """Inverse of ``geo_bound_to_bytes``; InvalidTable unless 16, 24 or 32 bytes."""
    if len(data) not in (16, 24, 32):
        raise _bad(f"geo bound must be 16, 24 or 32 bytes, got {len(data)}", where, "ICEBERG-SERDE-016")
    c = struct.unpack(f"<{len(data) // 8}d", data)
    if len(c) == 2:
        return GeoPoint(x=c[0], y=c[1])
    if len(c) == 3:
        return GeoPoint(x=c[0], y=c[1], z=c[2])
    return GeoPoint(x=c[0], y=c[1], z=None if math.isnan(c[2]) else c[2], m=c[3])


# ---------------------------------------------------------------------------------------------
# JSON single-value serialization


def decimal_to_json(d: Decimal, scale: int) -> str:
    """"14.20" for scale 2; scientific with exponent -scale for negative scales ("2E+20")."""
    n = int(d.scaleb(scale, context=_DEC))
    if scale >= 0:
        digits = str(abs(n)).rjust(scale + 1, "0")
        body = digits if scale == 0 else f"{digits[:-scale]}.{digits[-scale:]}"
        return ("-" if n < 0 else "") + body
    return f"{n}E+{-scale}"


def _frac(digits: str | None, width: int) -> int:
    return int((digits or "").ljust(width, "0")) if digits else 0


def _format_time(micros: int) -> str:
    t = time_from_micros(micros)
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond:06d}"


def _format_ts(value: int, nano: bool, tz: bool) -> str:
    unit = 1_000_000_000 if nano else 1_000_000
    secs, frac = divmod(value, unit)
    days, sod = divmod(secs, 86_400)
    h, rem = divmod(sod, 3600)
    mi, s = divmod(rem, 60)
    text = f"{iso_date(days)}T{h:02d}:{mi:02d}:{s:02d}.{frac:0{9 if nano else 6}d}"
    return text + UTC_OFFSET if tz else text


def _checked_days(ys: str, ms: str, ds: str, text: str, where: str, rule: str) -> int:
    y, m, d = int(ys), int(ms), int(ds)
    if not 1 <= m <= 12 or not 1 <= d <= 31:
        raise _bad(f"bad date in {text!r}", where, rule)
    days = days_from_civil(y, m, d)
    if civil_from_days(days) != (y, m, d):
        raise _bad(f"no such day in {text!r}", where, rule)
    return days


def _parse_date(text: str, where: str) -> int:
    m = _DATE_RE.match(text)
    if not m:
        raise _bad(f"bad ISO-8601 date {text!r}", where, "ICEBERG-SERDE-020")
    return _checked_days(m.group(1), m.group(2), m.group(3), text, where, "ICEBERG-SERDE-020")


def _parse_time(text: str, where: str) -> int:
    m = _TIME_RE.match(text)
    if not m or (m.group(4) and len(m.group(4)) > 6):
        raise _bad(f"bad ISO-8601 time {text!r} (microsecond precision)", where, "ICEBERG-SERDE-020")
    h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if h > 23 or mi > 59 or s > 59:
        raise _bad(f"time out of range {text!r}", where, "ICEBERG-SERDE-020")
    return ((h * 60 + mi) * 60 + s) * 1_000_000 + _frac(m.group(4), 6)


def _parse_ts(text: str, t: T.IcebergType, where: str) -> int:
    nano, tz = _is_nano(t), t in (T.TIMESTAMPTZ, T.TIMESTAMPTZ_NS)
    m = _TS_RE.match(text)
    if not m:
        raise _bad(f"bad ISO-8601 {t} {text!r}", where, "ICEBERG-SERDE-021")
    frac = m.group(7)
    if frac and len(frac) > (9 if nano else 6):
        raise _bad(f"{t} {text!r} has more fractional digits than its precision", where, "ICEBERG-SERDE-021")
    offset = m.group(8)
    if tz and offset != UTC_OFFSET:
        raise _bad(f"{t} JSON value must end with the offset +00:00, got {text!r}", where, "ICEBERG-SERDE-021")
    if not tz and offset is not None:
        raise _bad(f"{t} JSON value must not carry a zone offset, got {text!r}", where, "ICEBERG-SERDE-021")
    day = _checked_days(m.group(1), m.group(2), m.group(3), text, where, "ICEBERG-SERDE-021")
    h, mi, s = int(m.group(4)), int(m.group(5)), int(m.group(6) or 0)
    if h > 23 or mi > 59 or s > 59:
        raise _bad(f"time of day out of range in {text!r}", where, "ICEBERG-SERDE-021")
    secs = day * 86_400 + h * 3600 + mi * 60 + s
    v = secs * 1_000_000_000 + _frac(frac, 9) if nano else secs * 1_000_000 + _frac(frac, 6)
    return _int_value(v, where)


def to_json(value: Any, t: T.IcebergType) -> Any:
    """The JSON single value (a JSON-ready Python object) of ``value``; None -> None."""
    v = to_internal(value, t)
    if v is None:
        return None
    name = t.name if isinstance(t, T.PrimitiveType) else None
    if name in ("boolean", "int", "long", "string"):
        return v
    if name in ("float", "double"):
        if math.isnan(v) or math.isinf(v):
            raise InvalidTable(f"{v} has no JSON number form", rule="ICEBERG-SERDE-018")
        return v
    if isinstance(t, T.DecimalType):
        return decimal_to_json(v, t.scale)
    if name == "date":
        return iso_date(v)
    if name == "time":
        return _format_time(v)
    if t in T.TIMESTAMP_TYPES:
        return _format_ts(v, _is_nano(t), t in (T.TIMESTAMPTZ, T.TIMESTAMPTZ_NS))
    if name == "uuid":
        return str(v)  # lowercase canonical form
    if name == "binary" or isinstance(t, T.FixedType):
        return v.hex()
    if isinstance(t, (T.GeometryType, T.GeographyType)):
        from reference_impl.iceberg import geospatial

        return geospatial.wkb_to_wkt(v)
    if isinstance(t, T.StructType):
        return {str(f.id): to_json(v[f.id], f.type) for f in t.fields if f.id in v}
    if isinstance(t, T.ListType):
        return [to_json(x, t.element) for x in v]
    if isinstance(t, T.MapType):
        return {MAP_KEYS: [to_json(k, t.key) for k in v], MAP_VALUES: [to_json(x, t.value) for x in v.values()]}
    raise Unsupported(f"no JSON single value for {t}", feature=f"json:{t}")


def from_json(obj: Any, t: T.IcebergType, *, where: str = "") -> Any:
    """Parse a JSON single value (already decoded by ``json``) into the internal value; InvalidTable on bad input."""
    if obj is None:
        return None
    name = t.name if isinstance(t, T.PrimitiveType) else None
    if name == "boolean":
        if not isinstance(obj, bool):
            raise _bad(f"boolean JSON value expected, got {obj!r}", where, "ICEBERG-SERDE-018")
        return obj
    if name in ("int", "long"):
        if isinstance(obj, bool) or not isinstance(obj, int):
            raise _bad(f"{name} JSON value must be an integer, got {obj!r}", where, "ICEBERG-SERDE-018")
        return to_internal(obj, t, where=where)
    if name in ("float", "double"):
        if isinstance(obj, bool) or not isinstance(obj, (int, float)):
            raise _bad(f"{name} JSON value must be a number, got {obj!r}", where, "ICEBERG-SERDE-018")
        try:
            return float(obj)
        except OverflowError:
            raise _bad(f"{obj} does not fit a {name}", where, "ICEBERG-SERDE-018") from None
    if isinstance(t, T.DecimalType):
        if not isinstance(obj, str):
            raise _bad(f"decimal JSON value must be a string, got {obj!r}", where, "ICEBERG-SERDE-019")
        try:
            d = Decimal(obj.strip())
        except InvalidOperation:
            raise _bad(f"bad decimal {obj!r}", where, "ICEBERG-SERDE-019") from None
        if not d.is_finite() or -d.as_tuple().exponent != t.scale:
            raise _bad(f"decimal {obj!r} does not have scale {t.scale}", where, "ICEBERG-SERDE-019")
        return _to_decimal(d, t, where)
    if name in ("date", "time", "string", "uuid", "binary") or t in T.TIMESTAMP_TYPES or isinstance(t, (T.FixedType, T.GeometryType, T.GeographyType)):
        if not isinstance(obj, str):
            raise _bad(f"{t} JSON value must be a string, got {obj!r}", where, "ICEBERG-SERDE-020")
    if name == "date":
        return _parse_date(obj, where)
    if name == "time":
        return _parse_time(obj, where)
    if t in T.TIMESTAMP_TYPES:
        return _parse_ts(obj, t, where)
    if name == "string":
        return obj
    if name == "uuid":
        try:
            return uuid_mod.UUID(obj)
        except ValueError:
            raise _bad(f"bad uuid {obj!r}", where, "ICEBERG-SERDE-022") from None
    if name == "binary" or isinstance(t, T.FixedType):
        try:
            b = bytes.fromhex(obj)
        except ValueError:
            raise _bad(f"bad hexadecimal string {obj!r}", where, "ICEBERG-SERDE-022") from None
        return to_internal(b, t, where=where)
    if isinstance(t, (T.GeometryType, T.GeographyType)):
        from reference_impl.iceberg import geospatial

        return geospatial.wkt_to_wkb(obj)
    if name in ("unknown", "variant"):
        raise _bad(f"a non-null {t} value is not allowed", where, "ICEBERG-SCHEMA-020")
    if isinstance(t, T.StructType):
        if not isinstance(obj, dict):
            raise _bad("struct JSON value must be an object keyed by field id", where, "ICEBERG-SERDE-023")
        by_id = {str(f.id): f for f in t.fields}
        unknown = [k for k in obj if k not in by_id]
        if unknown:
            raise _bad(f"struct JSON value has keys that are no field id: {unknown}", where, "ICEBERG-SERDE-023")
        return {by_id[k].id: from_json(v, by_id[k].type, where=f"{where}.{by_id[k].name}") for k, v in obj.items()}
    if isinstance(t, T.ListType):
        if not isinstance(obj, list):
            raise _bad("list JSON value must be an array", where, "ICEBERG-SERDE-023")
        return [from_json(x, t.element, where=f"{where}[]") for x in obj]
    if isinstance(t, T.MapType):
        if not isinstance(obj, dict) or set(obj) != {MAP_KEYS, MAP_VALUES} or not isinstance(obj[MAP_KEYS], list) or not isinstance(obj[MAP_VALUES], list):
            raise _bad('map JSON value must be {"keys": [...], "values": [...]}', where, "ICEBERG-SERDE-023")
        if len(obj[MAP_KEYS]) != len(obj[MAP_VALUES]):
            raise _bad("map JSON value has keys and values of different lengths", where, "ICEBERG-SERDE-023")
        keys = [from_json(k, t.key, where=f"{where}.key") for k in obj[MAP_KEYS]]
        if any(k is None for k in keys):
            raise _bad("map keys must not be null", where, "ICEBERG-SCHEMA-004")
        vals = [from_json(v, t.value, where=f"{where}.value") for v in obj[MAP_VALUES]]
        try:
            return dict(zip(keys, vals))
        except TypeError:
            raise Unsupported(f"map keys of type {t.key} cannot be held in a dict", feature="map-nested-keys") from None
    raise Unsupported(f"no JSON single value for {t}", feature=f"json:{t}")


def default_from_json(obj: Any, t: T.IcebergType, *, where: str = "") -> Any:
    """A field default from schema JSON: like ``from_json`` but a struct default must be null or {}."""
    if isinstance(t, T.StructType):
        if obj is None:
            return None
        if obj != {}:
            raise _bad("a struct default must be null or {} (child defaults live on the children)", where, "ICEBERG-SCHEMA-021")
        return {}
    if obj is not None and (t in (T.UNKNOWN, T.VARIANT) or isinstance(t, (T.GeometryType, T.GeographyType))):
        raise _bad(f"a {t} field may only default to null", where, "ICEBERG-SCHEMA-020")
    return from_json(obj, t, where=where)


def default_to_json(value: Any, t: T.IcebergType) -> Any:
    """The JSON form of a field default (null stays null; a struct default is {})."""
    if value is None:
        return None
    if isinstance(t, T.StructType):
        return {}
    return to_json(value, t)
