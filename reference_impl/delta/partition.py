"""Partition Value Serialization: partition values as strings in add.partitionValues, and paths.

Values in the log are strings; an empty string (or a JSON null) is the null partition for every
type. Writers here produce one canonical form per type (timestamps as UTC ISO-8601 with
microseconds and ``Z``, as the spec recommends); readers accept every form the spec allows.

Two corners the spec leaves open, and what we do:
* A timestamp without a zone (``1970-01-01 00:00:00``) is "in the writer's time zone", which the
  log does not record. We read it as UTC, as delta-rs and delta-kernel do.
* Binary: the spec shows ``"\\u0001\\u0002"``, i.e. one character per byte. Spark casts the bytes
  to a UTF-8 string; delta-rs writes the literal six-character escapes ``\\u0001``. We read both
  (the literal-escape form when the whole value is made of ``\\uXXXX`` escapes of bytes, else the
  UTF-8 bytes of the string) and write UTF-8 text when the bytes are valid UTF-8, the literal
  escapes otherwise, so that our own values always round-trip.

Directory names follow Hive: ``col=value`` with Spark's set of %XX-escaped characters and
``__HIVE_DEFAULT_PARTITION__`` for null. The directory layout is a convention only; the log is the
truth (DELTA-LOG-003).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import pyarrow as pa

from reference_impl.delta.schema import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    PrimitiveType,
    StructType,
    to_arrow_type,
)
from reference_impl.errors import InvalidTable, Unsupported

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

RULE_NULL = "DELTA-PART-001"
RULE_NUMBER = "DELTA-PART-002"
RULE_DATE = "DELTA-PART-003"
RULE_TIMESTAMP = "DELTA-PART-004"
RULE_NTZ = "DELTA-PART-006"
RULE_BOOLEAN = "DELTA-PART-007"
RULE_BINARY = "DELTA-PART-008"

_INT_RANGES = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
}
_INT_RE = re.compile(r"^[+-]?[0-9]{1,40}$")  # ASCII digits; no integer type is longer
_DATE_RE = re.compile(r"^(\d{4,40})-(\d{1,2})-(\d{1,2})$", re.ASCII)
# {year}-{month}-{day} {hour}:{minute}:{second}[.fraction], or ISO-8601 with T and a zone.
_TS_RE = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})([ T])(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(Z|[+-]\d{2}:?\d{2})?$"
)
_ESCAPED_BINARY_RE = re.compile(r"^(?:\\u00[0-9A-Fa-f]{2})+$")
_UTC = dt.timezone.utc
# Python's default 28 digits cannot quantize decimal(38, s) values.
_DECIMAL_CONTEXT = decimal.Context(prec=100)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=_UTC)
_EPOCH_NAIVE = dt.datetime(1970, 1, 1)

# Spark's ExternalCatalogUtils.escapePathName set (Unix): control characters, and "#%'*/:=?\{[]^
# Hive escapes 0x01-0x1F; NUL is escaped too, since no file system takes it in a name.
_PATH_ESCAPE = frozenset([chr(c) for c in range(0x00, 0x20)] + list('"#%\'*/:=?\\\x7f{[]^'))


def _type_name(dtype: DataType) -> str:
    if isinstance(dtype, PrimitiveType):
        return dtype.name
    if isinstance(dtype, DecimalType):
        return "decimal"
    return type(dtype).__name__


def _check_partition_type(dtype: DataType) -> None:
    if isinstance(dtype, (StructType, ArrayType, MapType)) or (
        isinstance(dtype, PrimitiveType) and dtype.name == "variant"
    ):
        raise InvalidTable(f"a {dtype} column cannot be a partition column")


# ---------------------------------------------------------------------------------------------
# serialize


def serialize_partition_value(value: Any, dtype: DataType) -> str | None:
    """The partitionValues string for a Python value of ``dtype``; None for a null partition."""
    _check_partition_type(dtype)
    if value is None:
        return None
    name = _type_name(dtype)
    try:
        if name == "string":
            if not isinstance(value, str):
                raise TypeError("expected str")
            return value
        if name in _INT_RANGES:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError("expected an integer")
            lo, hi = _INT_RANGES[name]
            if not lo <= int(value) <= hi:
                raise InvalidTable(f"{value} is out of range for {name}", rule=RULE_NUMBER)
            return str(int(value))
        if name in ("float", "double"):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise TypeError("expected a number")
            return _float_text(float(value), name)
        if name == "decimal":
            with decimal.localcontext(_DECIMAL_CONTEXT):
                return _decimal_text(value, dtype)  # type: ignore[arg-type]
        if name == "boolean":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError("expected a bool")
            return "true" if value else "false"
        if name == "date":
            if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
                raise TypeError("expected a datetime.date")
            return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
        if name == "timestamp":
            return _timestamp_text(_to_utc(value))
        if name == "timestamp_ntz":
            return _ntz_text(_to_naive(value))
        if name == "binary":
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise TypeError("expected bytes")
            return _binary_text(bytes(value))
        if name == "void":
            return None
    except (TypeError, OverflowError) as exc:
        raise InvalidTable(f"cannot serialize {value!r} as a {dtype} partition value: {exc}") from None
    raise Unsupported(f"partition values of type {dtype} are not supported", feature=f"type:{dtype}")


def _float_text(v: float, name: str) -> str:
    # Java's spellings for the non-finite values, since Spark wrote most existing tables.
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    # float: the shortest text that reads back as the same float32, not float64 noise.
    return str(np.float32(v)) if name == "float" else repr(v)


def _decimal_text(value: Any, dtype: DecimalType) -> str:
    if isinstance(value, bool) or not isinstance(value, (Decimal, int, str)):
        raise TypeError("expected a Decimal")
    try:
        d = Decimal(value)
        q = d.quantize(Decimal(1).scaleb(-dtype.scale))
    except InvalidOperation:
        raise InvalidTable(f"{value!r} is not a decimal", rule=RULE_NUMBER) from None
    if q != d:
        raise InvalidTable(f"{value} has more than {dtype.scale} fractional digits for {dtype}", rule=RULE_NUMBER)
    if len(q.as_tuple().digits) > dtype.precision and q != 0:
        raise InvalidTable(f"{value} does not fit {dtype}", rule=RULE_NUMBER)
    return format(q, "f")


def _to_utc(value: Any) -> dt.datetime:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return _EPOCH + dt.timedelta(microseconds=int(value))
    if not isinstance(value, dt.datetime):
        raise TypeError("expected a datetime or microseconds since the epoch")
    if value.tzinfo is None:
        return value.replace(tzinfo=_UTC)
    return value.astimezone(_UTC)


def _to_naive(value: Any) -> dt.datetime:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return _EPOCH_NAIVE + dt.timedelta(microseconds=int(value))
    if not isinstance(value, dt.datetime):
        raise TypeError("expected a datetime or microseconds since the epoch")
    if value.tzinfo is not None:
        raise TypeError("timestamp_ntz values carry no time zone")
    return value


def _timestamp_text(v: dt.datetime) -> str:
    return (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}."
        f"{v.microsecond:06d}Z"
    )


def _ntz_text(v: dt.datetime) -> str:
    text = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    return text + (f".{v.microsecond:06d}" if v.microsecond else "")


def _binary_text(b: bytes) -> str:
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _ESCAPED_BINARY_RE.match(text):
        return text
    return "".join(f"\\u{byte:04X}" for byte in b)


# ---------------------------------------------------------------------------------------------
# parse


def parse_partition_value(text: str | None, dtype: DataType) -> Any:
    """The Python value of a partitionValues string: None for null ("" or null), else typed."""
    _check_partition_type(dtype)
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise InvalidTable(f"partition value must be a string or null, got {type(text).__name__}", rule=RULE_NULL)
    name = _type_name(dtype)
    if name == "string":
        return text
    if name in _INT_RANGES:
        if not _INT_RE.match(text):
            raise InvalidTable(f"partition value {text!r} is not a plain {name} number", rule=RULE_NUMBER)
        v = int(text)
        lo, hi = _INT_RANGES[name]
        if not lo <= v <= hi:
            raise InvalidTable(f"partition value {text!r} is out of range for {name}", rule=RULE_NUMBER)
        return v
    if name in ("float", "double"):
        try:
            v = float(text)
        except ValueError:
            raise InvalidTable(f"partition value {text!r} is not a {name}", rule=RULE_NUMBER) from None
        return v
    if name == "decimal":
        with decimal.localcontext(_DECIMAL_CONTEXT):
            return _parse_decimal(text, dtype)  # type: ignore[arg-type]
    if name == "boolean":
        if text == "true":
            return True
        if text == "false":
            return False
        raise InvalidTable(f'boolean partition value must be "true" or "false", got {text!r}', rule=RULE_BOOLEAN)
    if name == "date":
        return _parse_date(text)
    if name == "timestamp":
        return _parse_timestamp(text, ntz=False)
    if name == "timestamp_ntz":
        return _parse_timestamp(text, ntz=True)
    if name == "binary":
        if _ESCAPED_BINARY_RE.match(text):
            return bytes(int(text[i + 2 : i + 6], 16) for i in range(0, len(text), 6))
        return text.encode("utf-8")
    if name == "void":
        return None
    raise Unsupported(f"partition values of type {dtype} are not supported", feature=f"type:{dtype}")


def _parse_decimal(text: str, dtype: DecimalType) -> Decimal:
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise InvalidTable(f"partition value {text!r} is not a decimal", rule=RULE_NUMBER) from None
    if not d.is_finite():
        raise InvalidTable(f"partition value {text!r} is not a finite decimal", rule=RULE_NUMBER)
    try:
        q = d.quantize(Decimal(1).scaleb(-dtype.scale))
    except InvalidOperation:
        raise InvalidTable(f"partition value {text!r} does not fit {dtype}", rule=RULE_NUMBER) from None
    if q != d:
        raise InvalidTable(f"partition value {text!r} has more fractional digits than {dtype} allows", rule=RULE_NUMBER)
    if q != 0 and len(q.as_tuple().digits) > dtype.precision:
        raise InvalidTable(f"partition value {text!r} does not fit {dtype}", rule=RULE_NUMBER)
    return q


def _parse_date(text: str) -> dt.date:
    m = _DATE_RE.match(text)
    if not m:
        raise InvalidTable(f"date partition value {text!r} is not {{year}}-{{month}}-{{day}}", rule=RULE_DATE)
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError as exc:
        raise InvalidTable(f"date partition value {text!r} is not a valid date: {exc}", rule=RULE_DATE) from None


def _parse_timestamp(text: str, *, ntz: bool) -> dt.datetime:
    rule = RULE_NTZ if ntz else RULE_TIMESTAMP
    m = _TS_RE.match(text)
    if not m:
        raise InvalidTable(
            f"timestamp partition value {text!r} is not 'yyyy-MM-dd HH:mm:ss[.ffffff]' or ISO-8601", rule=rule
        )
    year, month, day, sep, hour, minute, second, frac, zone = m.groups()
    if ntz and zone is not None:
        raise InvalidTable(f"timestamp_ntz partition value {text!r} must not carry a time zone", rule=RULE_NTZ)
    micros = 0
    if frac:
        # Nanosecond digits beyond the type's microsecond precision are truncated.
        micros = int(frac[:6].ljust(6, "0"))
    try:
        value = dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros)
    except ValueError as exc:
        raise InvalidTable(f"timestamp partition value {text!r} is not a valid time: {exc}", rule=rule) from None
    if ntz:
        return value
    if zone is None or zone == "Z":
        return value.replace(tzinfo=_UTC)
    sign = 1 if zone[0] == "+" else -1
    digits = zone[1:].replace(":", "")
    offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return value.replace(tzinfo=dt.timezone(sign * offset)).astimezone(_UTC)


# ---------------------------------------------------------------------------------------------
# Arrow


def partition_values_to_arrow(values: list[str | None], dtype: DataType, length: int) -> pa.Array:
    """An Arrow array of ``length`` rows: one value broadcast, or one value per row parsed."""
    target = to_arrow_type(dtype)
    if len(values) == 1:
        value = parse_partition_value(values[0], dtype)
        if value is None:
            return pa.nulls(length, type=target)
        return pa.repeat(pa.scalar(value, type=target), length)
    if len(values) != length:
        raise InvalidTable(f"{len(values)} partition values for {length} rows: need one, or one per row")
    parsed = [parse_partition_value(v, dtype) for v in values]
    return pa.array(parsed, type=target)


# ---------------------------------------------------------------------------------------------
# Hive-style directory names


def escape_partition_path_component(s: str) -> str:
    """Escape a partition column name or value for a directory name, Hive/Spark style (%XX)."""
    return "".join(f"%{ord(c):02X}" if c in _PATH_ESCAPE else c for c in s)


def unescape_partition_path_component(s: str) -> str:
    """Undo ``escape_partition_path_component``; runs of %XX that spell UTF-8 become characters."""
    out: list[str] = []
    pending = bytearray()
    i = 0

    def flush() -> None:
        if pending:
            try:
                out.append(pending.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(pending.decode("latin-1"))
            pending.clear()

    while i < len(s):
        c = s[i]
        if c == "%" and _is_hex(s[i + 1 : i + 3]):
            pending.append(int(s[i + 1 : i + 3], 16))
            i += 3
            continue
        flush()
        out.append(c)
        i += 1
    flush()
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


def partition_directory(columns: list[tuple[str, str | None]]) -> str:
    """The relative directory for serialized partition values: ``a=1/b=__HIVE_DEFAULT_PARTITION__``."""
    parts = []
    for name, value in columns:
        shown = HIVE_DEFAULT_PARTITION if value is None or value == "" else escape_partition_path_component(value)
        parts.append(f"{escape_partition_path_component(name)}={shown}")
    return "/".join(parts)


def parse_partition_directory(path: str) -> list[tuple[str, str | None]]:
    """The ``(column, value)`` pairs spelled by the ``col=value`` components of a relative path."""
    pairs: list[tuple[str, str | None]] = []
    for component in path.split("/"):
        if "=" not in component:
            continue
        name, _, value = component.partition("=")
        text = None if value == HIVE_DEFAULT_PARTITION else unescape_partition_path_component(value)
        pairs.append((unescape_partition_path_component(name), text))
    return pairs
