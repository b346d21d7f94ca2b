"""BinaryRow (spec: Manifest > Appendix > BinaryRow; Java ``data.BinaryRow``, ``BinaryRowWriter``,
``AbstractBinaryWriter``, ``BinaryArray(Writer)``, ``BinaryMap``, ``RowHelper``, ``memory.MemorySegmentUtils``,
``utils.SerializationUtils``, ``stats.SimpleStats``).

A row is a fixed part (header byte = RowKind, null bits padded so that header + bits fill whole
8-byte words, one 8-byte little-endian slot per field) followed by a variable part of 8-byte
aligned segments. Var-length values of <= 7 bytes live inside their slot (byte 7 = ``0x80 | len``),
longer ones in the variable part with slot = ``offset << 32 | length`` (offset from the header
byte). DECIMAL(p > 18) always takes 16 reserved bytes there and TIMESTAMP(p > 3) 8 bytes (epoch
millis; the slot's low word holds the nano-of-millisecond), even when null: Java's ``RowHelper`` and
code-generated projections write such nulls through ``writeDecimal(pos, null)`` /
``writeTimestamp(pos, null)`` so that the field can later be updated in place. Nested ROW, ARRAY,
MAP/MULTISET and VARIANT values are complete binary sections in the variable part, never inline.
Manifests store a row "schemaless": a 4-byte big-endian arity, then the row bytes.

The byte layout decides equality and hashing (``BinaryRow.equals`` compares bytes,
``hashCode`` hashes them, and bucket assignment depends on it), so ``serialize`` writes exactly
the bytes Java writes, and ``deserialize(strict=True)`` rejects any other encoding of the values.

Python values (what ``serialize`` takes and ``deserialize`` returns):

=====================  ===================================================================================
BOOLEAN                bool (read as Java does: any non-zero byte is true)
TINYINT .. BIGINT      int, range-checked
FLOAT, DOUBLE          float (int accepted); FLOAT reads back as the float32 value
DECIMAL(p, s)          decimal.Decimal (int accepted), rounded HALF_UP to scale s as Java's
                       ``Decimal.fromBigDecimal``; a value with more than p digits is an error (Java: null)
CHAR, VARCHAR          str (UTF-8; the declared length is not enforced, Java does not either)
BINARY, VARBINARY      bytes; BLOB: the stored bytes (serialized blob data or descriptor)
DATE                   datetime.date (int days since 1970-01-01 accepted)
TIME(p)                datetime.time (int millis of day accepted); Paimon stores milliseconds at every
                       precision, so sub-millisecond digits are dropped
TIMESTAMP(p)           naive datetime.datetime, or ``Timestamp(millis, nano_of_milli)`` for what a
                       datetime cannot hold (sub-microsecond nanos, years outside 1..9999)
TIMESTAMP_LTZ(p)       aware datetime (any zone; stored as its UTC instant; a naive one is taken as UTC),
                       read back as an aware UTC datetime (or a ``Timestamp``, as above)
VARIANT                (value bytes, metadata bytes)
ARRAY / MULTISET       list / dict element -> count
MAP                    dict (read back as a list of (key, value) pairs when keys are unhashable or repeat)
ROW                    tuple (any sequence accepted), one value per field
=====================  ===================================================================================

Timestamps are truncated (floor) to milliseconds for p <= 3 as Java's ``Timestamp.getMillisecond``.
``None`` is null everywhere. Bad input bytes raise ``InvalidTable`` naming the PAIMON-ROW rule and
where (``field 2 element 0``); values a Python date cannot hold raise ``Unsupported``.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon.types import DataType, sql_string

HEADER_SIZE_IN_BITS = 8
MAX_FIX_PART_DATA_SIZE = 7  # BinarySection: longest var-length value kept inside its slot
MAX_COMPACT_DECIMAL_PRECISION = 18  # Decimal.isCompact: unscaled value fits a long
MAX_COMPACT_TIMESTAMP_PRECISION = 3  # Timestamp.isCompact: epoch millis only
ROW_KINDS = ("+I", "-U", "+U", "-D")  # RowKind byte values 0..3
EMPTY_ROW = bytes(8)  # BinaryRow.EMPTY_ROW
EMPTY_ROW_SERIALIZED = bytes(12)  # arity 0 + EMPTY_ROW
MILLIS_PER_DAY = 86_400_000
_MARK = 1 << 63  # slot bit 63: value stored inline
_MAX_SECTION = (1 << 31) - 1  # offsets and lengths are Java ints
_DEC = Context(prec=100, rounding=ROUND_HALF_UP)  # exact for 38 digits at any scale <= 38
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_UTC = dt.timezone.utc

# SimpleStats record fields (manifest Avro)
MIN_VALUES, MAX_VALUES, NULL_COUNTS = "_MIN_VALUES", "_MAX_VALUES", "_NULL_COUNTS"


class Timestamp(NamedTuple):
    """Java's ``Timestamp``: epoch milliseconds and nano-of-millisecond (0..999,999)."""

    millis: int
    nano_of_milli: int = 0

    @property
    def epoch_nanos(self) -> int:
        return self.millis * 1_000_000 + self.nano_of_milli


def null_bits_size(arity: int) -> int:
    """Bytes of header + null bits (``BinaryRow.calculateBitSetWidthInBytes``)."""
    return ((arity + 63 + HEADER_SIZE_IN_BITS) // 64) * 8


def fixed_part_size(arity: int) -> int:
    """Header, null bits and slots (``BinaryRow.calculateFixPartSizeInBytes``)."""
    return null_bits_size(arity) + 8 * arity


def _round8(n: int) -> int:
    return (n + 7) & ~7


def _bad(rule: str, msg: str) -> InvalidTable:
    return InvalidTable(msg, rule=rule)


def _bad_value(t: DataType, v: Any, why: str) -> InvalidTable:
    # repr of a huge int raises (int_max_str_digits); the message needs only a glimpse of the value
    shown = f"<int of {v.bit_length()} bits>" if isinstance(v, int) and v.bit_length() > 256 else f"{v!r:.80}"
    return InvalidTable(f"{sql_string(t)} value {shown}: {why}", rule="PAIMON-ROW-012")


def is_compact(t: DataType) -> bool:
    """Whether the value lives in its slot alone (DECIMAL p <= 18, TIMESTAMP p <= 3, every fixed-width type)."""
    if t.root == "DECIMAL":
        return t.precision <= MAX_COMPACT_DECIMAL_PRECISION
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return t.precision <= MAX_COMPACT_TIMESTAMP_PRECISION
    return True


# ----------------------------------------------------------------------------------------------
# Python value -> internal value
# ----------------------------------------------------------------------------------------------


def _int(v: Any, t: DataType, bits: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _bad_value(t, v, "an int is expected")
    if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
        raise _bad_value(t, v, f"outside the {bits}-bit range")
    return v


def unscaled(v: Any, t: DataType) -> int:
    """The unscaled value of a DECIMAL(p, s), rounded HALF_UP to s digits (Java ``Decimal.fromBigDecimal``)."""
    if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
        raise _bad_value(t, v, "a Decimal or an int is expected")
    p, s = t.precision, t.scale
    if isinstance(v, int) and v.bit_length() > 128:  # more than 38 digits: no DECIMAL holds it
        raise _bad_value(t, v, f"does not fit DECIMAL({p}, {s})")
    d = Decimal(v)
    # adjusted() > p means |d| >= 10**p: overflow, and quantizing it could be arbitrarily expensive
    if not d.is_finite() or (d and d.adjusted() > p):
        raise _bad_value(t, v, f"does not fit DECIMAL({p}, {s})")
    try:
        u = int(d.quantize(Decimal(1).scaleb(-s), context=_DEC).scaleb(s, context=_DEC))
    except InvalidOperation:
        raise _bad_value(t, v, f"does not fit DECIMAL({p}, {s})") from None
    if abs(u) >= 10**p:
        raise _bad_value(t, v, f"has more than {p} digits at scale {s}")
    return u


def _decimal(u: int, t: DataType, where: str) -> Decimal:
    if abs(u) >= 10**t.precision:
        rule = "PAIMON-ROW-014" if is_compact(t) else "PAIMON-ROW-015"
        raise _bad(rule, f"{where}: unscaled value {u} has more digits than {sql_string(t)} allows")
    return Decimal(u).scaleb(-t.scale, context=_DEC)


def to_timestamp(v: Any, t: DataType) -> Timestamp:
    """A TIMESTAMP / TIMESTAMP_LTZ value as (epoch millis, nano-of-millisecond)."""
    if isinstance(v, Timestamp):
        if isinstance(v.millis, bool) or not isinstance(v.millis, int) or not -(1 << 63) <= v.millis < 1 << 63:
            raise _bad_value(t, v, "millis outside the 64-bit range")
        if isinstance(v.nano_of_milli, bool) or not isinstance(v.nano_of_milli, int) or not 0 <= v.nano_of_milli <= 999_999:
            raise _bad_value(t, v, "nano_of_milli outside 0..999999")
        return v
    if not isinstance(v, dt.datetime):
        raise _bad_value(t, v, "a datetime or a Timestamp is expected")
    offset = v.utcoffset()
    if offset is not None and t.root == "TIMESTAMP":
        raise _bad_value(t, v, "TIMESTAMP (without time zone) takes a naive datetime")
    # timedelta arithmetic, not astimezone: 0001-01-01T00:00+05:00 is a valid instant before year 1
    delta = v.replace(tzinfo=None) - _EPOCH - (offset or dt.timedelta(0))
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    millis, sub = divmod(micros, 1000)  # floor, as Java's Timestamp.fromLocalDateTime
    return Timestamp(millis, sub * 1000)


def _timestamp_value(ts: Timestamp, t: DataType) -> Any:
    """A datetime when one holds the value exactly, else the Timestamp itself."""
    if ts.nano_of_milli % 1000:
        return ts
    try:
        value = _EPOCH + dt.timedelta(milliseconds=ts.millis, microseconds=ts.nano_of_milli // 1000)
    except OverflowError:
        return ts
    return value.replace(tzinfo=_UTC) if t.root == "TIMESTAMP_LTZ" else value


def date_days(v: Any, t: DataType) -> int:
    """A DATE value as days since 1970-01-01."""
    if isinstance(v, dt.datetime) or not isinstance(v, (dt.date, int)) or isinstance(v, bool):
        raise _bad_value(t, v, "a date (or int days) is expected")
    return (v - _EPOCH_DATE).days if isinstance(v, dt.date) else _int(v, t, 32)


def time_millis(v: Any, t: DataType) -> int:
    """A TIME value as milliseconds of the day (sub-millisecond digits dropped)."""
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MILLIS_PER_DAY:
        raise _bad_value(t, v, "a time (or int millis of day in 0..86399999) is expected")
    return v


def _utf8(v: Any, t: DataType) -> bytes:
    if not isinstance(v, str):
        raise _bad_value(t, v, "a str is expected")
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError:
        raise _bad_value(t, v, "not valid Unicode (lone surrogate)") from None


def _raw(v: Any, t: DataType) -> bytes:
    if not isinstance(v, (bytes, bytearray, memoryview)):
        raise _bad_value(t, v, "bytes are expected")
    return bytes(v)


def _bool(v: Any, t: DataType) -> bytes:
    if not isinstance(v, bool):
        raise _bad_value(t, v, "a bool is expected")
    return b"\x01" if v else b"\x00"


def _float(v: Any, t: DataType, fmt: str) -> bytes:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _bad_value(t, v, "a float is expected")
    try:
        return struct.pack(fmt, v)
    except (OverflowError, struct.error):
        raise _bad_value(t, v, "outside the float range") from None


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


class _Writer:
    """One binary section being written: a zeroed fixed part, then 8-byte aligned variable segments."""

    __slots__ = ("buf",)

    def __init__(self, fixed_size: int) -> None:
        self.buf = bytearray(fixed_size)

    def put(self, offset: int, data: bytes) -> None:
        self.buf[offset:offset + len(data)] = data

    def append(self, data: bytes, reserve: int = 0) -> int:
        """Append at the cursor, zero-padded to a word (at least ``reserve`` bytes); return the offset."""
        offset = len(self.buf)
        size = _round8(max(len(data), reserve))
        if offset + size > _MAX_SECTION:
            raise Unsupported("a binary row larger than 2 GiB cannot be addressed (Java int offsets)")
        self.buf += data + bytes(size - len(data))
        return offset


def _slot(offset: int, low: int) -> bytes:
    return struct.pack("<Q", (offset << 32) | low)


def _var(w: _Writer, data: bytes) -> bytes:
    """Slot bytes of a var-length value: inline when <= 7 bytes (``writeBytesToFixLenPart``) or appended."""
    n = len(data)
    if n <= MAX_FIX_PART_DATA_SIZE:
        return data + bytes(7 - n) + bytes([0x80 | n])
    return _slot(w.append(data), n)


def _java_unscaled_bytes(u: int) -> bytes:
    """``BigInteger.toByteArray``: minimal big-endian two's complement (bitLength / 8 + 1 bytes)."""
    return u.to_bytes((u if u >= 0 else ~u).bit_length() // 8 + 1, "big", signed=True)


def _enc_decimal(v: Any, t: DataType, w: _Writer) -> bytes:
    u = unscaled(v, t)
    if is_compact(t):
        return struct.pack("<q", u)
    data = _java_unscaled_bytes(u)
    return _slot(w.append(data, reserve=16), len(data))


def _enc_timestamp(v: Any, t: DataType, w: _Writer) -> bytes:
    ts = to_timestamp(v, t)
    if is_compact(t):
        return struct.pack("<q", ts.millis)
    return _slot(w.append(struct.pack("<q", ts.millis)), ts.nano_of_milli)


def _enc_variant(v: Any, t: DataType, w: _Writer) -> bytes:
    if not (isinstance(v, (tuple, list)) and len(v) == 2):
        raise _bad_value(t, v, "a (value bytes, metadata bytes) pair is expected")
    value, metadata = _raw(v[0], t), _raw(v[1], t)
    data = struct.pack("<i", len(value)) + value + metadata
    return _slot(w.append(data), len(data))


def _enc_nested(v: Any, t: DataType, w: _Writer) -> bytes:
    data = _write_nested(v, t)
    return _slot(w.append(data), len(data))


# root -> encoder(value, type, writer) -> the bytes stored at the slot: the natural width of
# fixed-width types (what a BinaryArray element takes), 8 bytes for everything else.
_ENCODERS: dict[str, Callable[[Any, DataType, _Writer], bytes]] = {
    "BOOLEAN": lambda v, t, w: _bool(v, t),
    "TINYINT": lambda v, t, w: struct.pack("<b", _int(v, t, 8)),
    "SMALLINT": lambda v, t, w: struct.pack("<h", _int(v, t, 16)),
    "INT": lambda v, t, w: struct.pack("<i", _int(v, t, 32)),
    "BIGINT": lambda v, t, w: struct.pack("<q", _int(v, t, 64)),
    "FLOAT": lambda v, t, w: _float(v, t, "<f"),
    "DOUBLE": lambda v, t, w: _float(v, t, "<d"),
    "DATE": lambda v, t, w: struct.pack("<i", date_days(v, t)),
    "TIME": lambda v, t, w: struct.pack("<i", time_millis(v, t)),
    "DECIMAL": _enc_decimal,
    "TIMESTAMP": _enc_timestamp,
    "TIMESTAMP_LTZ": _enc_timestamp,
    "CHAR": lambda v, t, w: _var(w, _utf8(v, t)),
    "VARCHAR": lambda v, t, w: _var(w, _utf8(v, t)),
    "BINARY": lambda v, t, w: _var(w, _raw(v, t)),
    "VARBINARY": lambda v, t, w: _var(w, _raw(v, t)),
    "BLOB": lambda v, t, w: _var(w, _raw(v, t)),
    "VARIANT": _enc_variant,
    "ARRAY": _enc_nested,
    "MULTISET": _enc_nested,
    "MAP": _enc_nested,
    "ROW": _enc_nested,
}

# BinaryArray.calculateFixLengthPartSize: element slot width (8 for all other types)
_ARRAY_WIDTH = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "FLOAT": 4, "DATE": 4, "TIME": 4}


def _encode(v: Any, t: DataType, w: _Writer) -> bytes:
    enc = _ENCODERS.get(t.root)
    if enc is None:
        raise Unsupported(f"{t.root} values cannot be written into a BinaryRow", feature=t.root)
    return enc(v, t, w)


def _write_row(values: Sequence[Any], types: Sequence[DataType], row_kind: int) -> bytes:
    """``BinaryRowWriter`` driven as ``RowHelper.copyInto`` drives it."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise InvalidTable(f"row values must be a sequence, not {type(values).__name__}", rule="PAIMON-ROW-009")
    if len(values) != len(types):
        raise InvalidTable(f"{len(values)} values for {len(types)} field types", rule="PAIMON-ROW-009")
    if isinstance(row_kind, bool) or row_kind not in range(len(ROW_KINDS)):
        raise InvalidTable(f"row kind {row_kind!r} is not a RowKind byte (0..3)", rule="PAIMON-ROW-003")
    bits = null_bits_size(len(types))
    w = _Writer(bits + 8 * len(types))
    w.buf[0] = row_kind
    for i, (v, t) in enumerate(zip(values, types)):
        if v is not None:
            w.put(bits + 8 * i, _encode(v, t, w))
            continue
        w.buf[(i + HEADER_SIZE_IN_BITS) >> 3] |= 1 << ((i + HEADER_SIZE_IN_BITS) & 7)
        if not is_compact(t):  # PAIMON-ROW-016/019: nulls keep their var-part area
            reserve = 16 if t.root == "DECIMAL" else 8
            w.put(bits + 8 * i, _slot(w.append(b"", reserve=reserve), 0))
    return bytes(w.buf)


def _write_array(values: Any, et: DataType) -> bytes:
    """``InternalArraySerializer.toBinaryArray``: count, null bits in 4-byte words, element slots, var part."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (Sequence, set, frozenset)):
        raise _bad_value(DataType("ARRAY", element=et), values, "a list is expected")
    values = list(values)
    n, width = len(values), _ARRAY_WIDTH.get(et.root, 8)
    header = 4 + ((n + 31) // 32) * 4
    w = _Writer(_round8(header + width * n))
    w.put(0, struct.pack("<i", n))
    for i, v in enumerate(values):
        if v is None:  # BinaryArrayWriter.setNullAt: zeroed slot, no reserved var area (unlike rows)
            w.buf[4 + (i >> 3)] |= 1 << (i & 7)
        elif et.root in ("FLOAT", "DOUBLE") and isinstance(v, float) and math.isnan(v):
            w.put(header + width * i, struct.pack("<f" if width == 4 else "<d", math.nan))  # writeFloat canonicalises NaN
        else:
            w.put(header + width * i, _encode(v, et, w))
    return bytes(w.buf)


def _pairs(v: Any, t: DataType) -> list[tuple[Any, Any]]:
    if isinstance(v, Mapping):
        return list(v.items())
    if isinstance(v, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in v):
        return [tuple(p) for p in v]
    raise _bad_value(t, v, "a dict (or a list of (key, value) pairs) is expected")


_COUNT = DataType("INT", False)  # MULTISET is MAP<element, INT NOT NULL>


def _write_nested(v: Any, t: DataType) -> bytes:
    if t.root == "ROW":
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
            raise _bad_value(t, v, "a tuple is expected")
        return _write_row(v, [f.type for f in t.fields], 0)
    if t.root == "ARRAY":
        return _write_array(v, t.element)
    key_type, value_type = (t.element, _COUNT) if t.root == "MULTISET" else (t.key, t.value)
    pairs = _pairs(v, t)
    keys = _write_array([k for k, _ in pairs], key_type)
    return struct.pack("<i", len(keys)) + keys + _write_array([x for _, x in pairs], value_type)


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


class _Section:
    """A binary section being read: its bytes and where its fixed part ends."""

    __slots__ = ("data", "fixed")

    def __init__(self, data: bytes, fixed: int) -> None:
        self.data, self.fixed = data, fixed

    def u64(self, offset: int) -> int:
        return int.from_bytes(self.data[offset:offset + 8], "little")

    def span(self, offset: int, length: int, where: str, rule: str = "PAIMON-ROW-024") -> bytes:
        """The bytes an out-of-line slot points at, which must lie in the variable part."""
        if offset < self.fixed or offset + length > len(self.data):
            raise _bad(rule, f"{where}: variable-part reference (offset {offset}, length {length}) lies outside "
                             f"{self.fixed}..{len(self.data)} (fixed part .. end of the {len(self.data)}-byte section)")
        return self.data[offset:offset + length]


def _unpack(fmt: str) -> Callable[[_Section, int, DataType, str], Any]:
    size = struct.calcsize(fmt)
    return lambda s, off, t, where: struct.unpack(fmt, s.data[off:off + size])[0]


def _read_bytes(s: _Section, off: int, where: str) -> bytes:
    """``MemorySegmentUtils.readBinary``: bit 63 chooses inline (length in bits 56..62) or offset/length."""
    slot = s.u64(off)
    if slot & _MARK:
        n = (slot >> 56) & 0x7F
        if n > MAX_FIX_PART_DATA_SIZE:
            raise _bad("PAIMON-ROW-022", f"{where}: inline length {n} is more than {MAX_FIX_PART_DATA_SIZE} bytes")
        return s.data[off:off + n]
    return s.span(slot >> 32, slot & 0xFFFFFFFF, where)


def _dec_string(s: _Section, off: int, t: DataType, where: str) -> str:
    raw = _read_bytes(s, off, where)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad("PAIMON-ROW-020", f"{where}: {sql_string(t)} bytes are not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def _dec_decimal(s: _Section, off: int, t: DataType, where: str) -> Decimal:
    if is_compact(t):
        return _decimal(struct.unpack("<q", s.data[off:off + 8])[0], t, where)
    slot = s.u64(off)
    length = slot & 0xFFFFFFFF
    if not 1 <= length <= 16:  # Java: BigInteger(new byte[0]) throws; the writer asserts <= 16
        raise _bad("PAIMON-ROW-015", f"{where}: {sql_string(t)} takes 1..16 unscaled bytes, the slot says {length}")
    raw = s.span(slot >> 32, length, where, "PAIMON-ROW-015")
    return _decimal(int.from_bytes(raw, "big", signed=True), t, where)


def _dec_timestamp(s: _Section, off: int, t: DataType, where: str) -> Any:
    if is_compact(t):
        return _timestamp_value(Timestamp(struct.unpack("<q", s.data[off:off + 8])[0]), t)
    slot = s.u64(off)
    nanos = slot & 0xFFFFFFFF
    if nanos > 999_999:
        raise _bad("PAIMON-ROW-018", f"{where}: nano-of-millisecond {nanos} is outside 0..999999")
    millis = struct.unpack("<q", s.span(slot >> 32, 8, where, "PAIMON-ROW-018"))[0]
    return _timestamp_value(Timestamp(millis, nanos), t)


def _dec_date(s: _Section, off: int, t: DataType, where: str) -> dt.date:
    days = struct.unpack("<i", s.data[off:off + 4])[0]
    try:
        return _EPOCH_DATE + dt.timedelta(days=days)
    except OverflowError:
        raise Unsupported(f"{where}: DATE {days} days from 1970-01-01 is outside Python's date range", feature="DATE") from None


def _dec_time(s: _Section, off: int, t: DataType, where: str) -> dt.time:
    ms = struct.unpack("<i", s.data[off:off + 4])[0]
    if not 0 <= ms < MILLIS_PER_DAY:
        raise _bad("PAIMON-ROW-012", f"{where}: TIME {ms} ms is not a millisecond of the day")
    return dt.time(ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60, ms % 1000 * 1000)


def _dec_variant(s: _Section, off: int, t: DataType, where: str) -> tuple[bytes, bytes]:
    slot = s.u64(off)
    raw = s.span(slot >> 32, slot & 0xFFFFFFFF, where, "PAIMON-ROW-031")
    size = struct.unpack("<i", raw[:4])[0] if len(raw) >= 4 else -1
    if not 0 <= size <= len(raw) - 4:
        raise _bad("PAIMON-ROW-031", f"{where}: VARIANT value length {size} does not fit its {len(raw)}-byte area")
    return raw[4:4 + size], raw[4 + size:]


def _dec_nested(s: _Section, off: int, t: DataType, where: str) -> Any:
    if s.u64(off) & _MARK:
        raise _bad("PAIMON-ROW-028", f"{where}: a {t.root} value is never stored inline")
    slot = s.u64(off)
    return _read_nested(s.span(slot >> 32, slot & 0xFFFFFFFF, where), t, where)


_DECODERS: dict[str, Callable[[_Section, int, DataType, str], Any]] = {
    "BOOLEAN": lambda s, off, t, where: s.data[off] != 0,  # MemorySegment.getBoolean
    "TINYINT": _unpack("<b"),
    "SMALLINT": _unpack("<h"),
    "INT": _unpack("<i"),
    "BIGINT": _unpack("<q"),
    "FLOAT": _unpack("<f"),
    "DOUBLE": _unpack("<d"),
    "DATE": _dec_date,
    "TIME": _dec_time,
    "DECIMAL": _dec_decimal,
    "TIMESTAMP": _dec_timestamp,
    "TIMESTAMP_LTZ": _dec_timestamp,
    "CHAR": _dec_string,
    "VARCHAR": _dec_string,
    "BINARY": lambda s, off, t, where: _read_bytes(s, off, where),
    "VARBINARY": lambda s, off, t, where: _read_bytes(s, off, where),
    "BLOB": lambda s, off, t, where: _read_bytes(s, off, where),
    "VARIANT": _dec_variant,
    "ARRAY": _dec_nested,
    "MULTISET": _dec_nested,
    "MAP": _dec_nested,
    "ROW": _dec_nested,
}


def _decode(s: _Section, off: int, t: DataType, where: str) -> Any:
    dec = _DECODERS.get(t.root)
    if dec is None:
        raise Unsupported(f"{where}: {t.root} values cannot be read from a BinaryRow", feature=t.root)
    return dec(s, off, t, where)


def _read_row(data: bytes, types: Sequence[DataType], where: str) -> tuple[tuple, int]:
    arity = len(types)
    bits, fixed = null_bits_size(arity), fixed_part_size(arity)
    if len(data) < fixed:
        raise _bad("PAIMON-ROW-037", f"{where}row of {len(data)} bytes is shorter than the {fixed}-byte fixed part "
                                     f"of {arity} fields")
    if data[0] >= len(ROW_KINDS):
        raise _bad("PAIMON-ROW-003", f"{where}header byte {data[0]} is not a RowKind (0..3)")
    s = _Section(data, fixed)
    values = tuple(
        None if data[(i + HEADER_SIZE_IN_BITS) >> 3] >> ((i + HEADER_SIZE_IN_BITS) & 7) & 1
        else _decode(s, bits + 8 * i, t, f"{where}field {i}")
        for i, t in enumerate(types)
    )
    return values, data[0]


def _read_array(data: bytes, et: DataType, where: str) -> list:
    n = struct.unpack("<i", data[:4])[0] if len(data) >= 4 else -1
    width = _ARRAY_WIDTH.get(et.root, 8)
    header = 4 + ((n + 31) // 32) * 4
    if n < 0 or header + width * n > len(data):
        raise _bad("PAIMON-ROW-029", f"{where}: array of {len(data)} bytes cannot hold {n} elements of {width} bytes")
    s = _Section(data, _round8(header + width * n))
    return [None if data[4 + (i >> 3)] >> (i & 7) & 1 else _decode(s, header + width * i, et, f"{where} element {i}")
            for i in range(n)]


def _read_nested(data: bytes, t: DataType, where: str) -> Any:
    if t.root == "ROW":
        return _read_row(data, [f.type for f in t.fields], f"{where}: nested ")[0]
    if t.root == "ARRAY":
        return _read_array(data, t.element, where)
    key_type, value_type = (t.element, _COUNT) if t.root == "MULTISET" else (t.key, t.value)
    size = struct.unpack("<i", data[:4])[0] if len(data) >= 4 else -1
    if not 0 <= size <= len(data) - 4:  # BinaryMap.pointTo
        raise _bad("PAIMON-ROW-030", f"{where}: key array length {size} does not fit the {len(data)}-byte map")
    keys = _read_array(data[4:4 + size], key_type, f"{where} keys")
    values = _read_array(data[4 + size:], value_type, f"{where} values")
    if len(keys) != len(values):
        raise _bad("PAIMON-ROW-030", f"{where}: {len(keys)} keys but {len(values)} values")
    try:
        out = dict(zip(keys, values))
    except TypeError:  # unhashable keys (ARRAY, MAP, VARIANT-as-list ...)
        return list(zip(keys, values))
    return out if len(out) == len(keys) else list(zip(keys, values))


def _as_bytes(data: Any, what: str) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidTable(f"{what} must be bytes, not {type(data).__name__}", rule="PAIMON-ROW-001")
    return bytes(data)


# ----------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------


def serialize(values: Sequence[Any], types: Sequence[DataType], row_kind: int = 0) -> bytes:
    """The row bytes Java's ``BinaryRowWriter`` writes for these values (header, null bits, slots, var part)."""
    return _write_row(values, types, row_kind)


def deserialize(data: bytes, types: Sequence[DataType], *, strict: bool = False) -> tuple[tuple, int]:
    """(values, row kind) of row bytes read as Java reads them; ``strict`` also demands Java's exact bytes."""
    data = _as_bytes(data, "a BinaryRow")
    values, kind = _read_row(data, list(types), "")
    if strict:
        # re-encoding is the definition of canonical; the one blind spot: a FLOAT/DOUBLE signalling NaN
        # comes back quiet through Python floats, so strict mode flags it although Java keeps raw bits
        canonical = _write_row(values, list(types), kind)
        if canonical != data:
            at = next((i for i, (a, b) in enumerate(zip(canonical, data)) if a != b), min(len(canonical), len(data)))
            raise _bad("PAIMON-ROW-033", f"row bytes are not the canonical encoding of their values: first difference "
                                         f"at byte {at} ({len(data)} bytes, canonical {len(canonical)})")
    return values, kind


def serialize_with_arity(values: Sequence[Any], types: Sequence[DataType], row_kind: int = 0) -> bytes:
    """``SerializationUtils.serializeBinaryRow``: 4-byte big-endian arity, then the row (manifest ``bytes``)."""
    return struct.pack(">i", len(types)) + _write_row(values, types, row_kind)


def serialized_arity(data: bytes) -> int:
    """The arity prefix of a schemaless-serialized row."""
    data = _as_bytes(data, "a serialized BinaryRow")
    if len(data) < 4:
        raise _bad("PAIMON-ROW-035", f"a serialized BinaryRow needs a 4-byte arity, got {len(data)} bytes")
    arity = struct.unpack(">i", data[:4])[0]
    if arity < 0:
        raise _bad("PAIMON-ROW-035", f"serialized BinaryRow has negative arity {arity}")
    return arity


def deserialize_with_arity(data: bytes, types: Sequence[DataType], *, strict: bool = False) -> tuple[tuple, int]:
    """``SerializationUtils.deserializeBinaryRow``, checking the arity against the expected types."""
    arity = serialized_arity(data)
    if arity != len(types):
        raise _bad("PAIMON-ROW-035", f"serialized BinaryRow has arity {arity} but {len(types)} field types are expected")
    if strict and arity == 0 and len(data) != len(EMPTY_ROW_SERIALIZED):
        raise _bad("PAIMON-ROW-036", f"the empty row serializes to 12 bytes, not {len(data)}")
    return deserialize(bytes(data)[4:], types, strict=strict)


class SimpleStats(NamedTuple):
    """Per-column min, max and null count; ``None`` where unknown (empty stats are all unknown)."""

    min_values: tuple
    max_values: tuple
    null_counts: tuple


def decode_stats(record: Mapping[str, Any], types: Sequence[DataType], *, strict: bool = False) -> SimpleStats:
    """A manifest SimpleStats record (``_MIN_VALUES``, ``_MAX_VALUES``, ``_NULL_COUNTS``) over columns of ``types``."""
    if not isinstance(record, Mapping) or MIN_VALUES not in record or MAX_VALUES not in record:
        raise _bad("PAIMON-STATS-001", f"SimpleStats needs {MIN_VALUES} and {MAX_VALUES} (got {type(record).__name__})")
    types = list(types)
    lo, hi, counts = record[MIN_VALUES], record[MAX_VALUES], record.get(NULL_COUNTS)
    if counts is not None and not isinstance(counts, (list, tuple)):
        raise _bad("PAIMON-STATS-004", f"{NULL_COUNTS} must be an array, not {type(counts).__name__}")
    unknown = (None,) * len(types)
    # SimpleStats.fromRow: arity-0 rows with no null counts are EMPTY_STATS, "no stats" for any columns
    if serialized_arity(lo) == 0 and serialized_arity(hi) == 0 and not counts:
        return SimpleStats(unknown, unknown, unknown)
    try:
        mins = deserialize_with_arity(lo, types, strict=strict)[0]
        maxs = deserialize_with_arity(hi, types, strict=strict)[0]
    except InvalidTable as exc:
        if exc.rule == "PAIMON-ROW-035":
            raise _bad("PAIMON-STATS-002", f"stats rows: {exc.message}") from None
        raise
    if counts is None:
        return SimpleStats(mins, maxs, unknown)
    if len(counts) != len(types):
        raise _bad("PAIMON-STATS-003", f"{len(counts)} null counts for {len(types)} stats columns")
    for c in counts:
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 0):
            raise _bad("PAIMON-STATS-003", f"null count {c!r} is not a non-negative long")
    return SimpleStats(mins, maxs, tuple(counts))


def encode_stats(min_values: Sequence[Any], max_values: Sequence[Any], null_counts: Sequence[int | None],
                 types: Sequence[DataType]) -> dict[str, Any]:
    """The SimpleStats record Java writes (``SimpleStats.toRow``); no columns gives EMPTY_STATS."""
    if len(null_counts) != len(types):
        raise _bad("PAIMON-STATS-003", f"{len(null_counts)} null counts for {len(types)} stats columns")
    return {MIN_VALUES: serialize_with_arity(min_values, types), MAX_VALUES: serialize_with_arity(max_values, types),
            NULL_COUNTS: list(null_counts)}


__all__ = ["serialize", "deserialize", "serialize_with_arity", "deserialize_with_arity", "serialized_arity",
           "decode_stats", "encode_stats", "SimpleStats", "Timestamp", "to_timestamp", "unscaled", "date_days", "time_millis", "null_bits_size",
           "fixed_part_size", "is_compact", "EMPTY_ROW", "EMPTY_ROW_SERIALIZED", "ROW_KINDS", "MIN_VALUES", "MAX_VALUES",
           "NULL_COUNTS"]
