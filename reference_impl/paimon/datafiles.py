"""Data files (spec: DataFile; Java KeyValue, SpecialFields, FormatReaderMapping, SchemaEvolutionUtil, CastExecutors,
ParquetSchemaConverter, OrcTypeUtil, AvroSchemaConverter, DataFilePathFactory).

A data file holds the rows of one bucket in the table's ``file.format`` (Parquet by default, ORC,
Avro), with the columns of the schema it was written with (the manifest entry's ``_SCHEMA_ID``).
An append table's file holds exactly those columns (PAIMON-DATA-005). A primary-key table's file
also holds system columns (PAIMON-DATA-001):

* ``_KEY_<k>`` per trimmed primary key (field id ``Integer.MAX_VALUE / 2 + id``), absent with
  ``data-file.thin-mode`` (PAIMON-DATA-002), when the key is read from the value column;
* ``_SEQUENCE_NUMBER`` BIGINT NOT NULL (id ``Integer.MAX_VALUE - 1``);
* ``_VALUE_KIND`` TINYINT NOT NULL (id ``Integer.MAX_VALUE - 2``): RowKind 0 +I, 1 -U, 2 +U, 3 -D.

Java writes ``_KEY_*, _SEQUENCE_NUMBER, _VALUE_KIND``, values; the spec page lists
``_VALUE_KIND`` before ``_SEQUENCE_NUMBER``. Nothing here depends on the order.

Columns are found by Paimon field id where the file records ids (Java's Parquet writer sets each
column's field id, nested ones too), else by the name they had in the file's schema: pypaimon's
Parquet files carry no ids, Avro data files never do, and pyarrow does not expose ORC's
``paimon.id`` type attributes. Reading then happens in two steps:

1. physical -> logical: each column becomes the Arrow type ``types.to_arrow`` gives its type in
   the *file's* schema (timestamps: p <= 3 INT64 millis, p <= 6 micros, p > 6 INT96; TIME as
   INT32 millis; nested ROW fields by id or name);
2. schema evolution by field id (PAIMON-SCHEMA-007): renamed and reordered columns follow their
   id, dropped ones are not read, added ones are null, and a changed type is cast the way Java's
   ``CastExecutors`` casts it (numeric narrowing wraps, DECIMAL rounds HALF_UP and overflows to
   null, CHAR/VARCHAR/BINARY truncate or pad, timestamps truncate). Casts whose result depends on
   the JVM's default time zone (TIMESTAMP <-> TIMESTAMP_LTZ) or on Java's text formatting
   (between character strings and other types) are ``Unsupported``.
"""

from __future__ import annotations

import decimal
import io
import posixpath
from typing import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon.layout import bare_name, bucket_dir
from reference_impl.paimon.types import DataField, DataType, arrow_field, to_arrow
from reference_impl.storage import Storage, normalize_relative

INT_MAX = (1 << 31) - 1
SYSTEM_FIELD_ID_START = INT_MAX // 2  # SpecialFields: every id from here on is a system field
KEY_FIELD_ID_START = SYSTEM_FIELD_ID_START
KEY_PREFIX = "_KEY_"
SEQUENCE_NUMBER = DataField(INT_MAX - 1, "_SEQUENCE_NUMBER", DataType("BIGINT", False))
VALUE_KIND = DataField(INT_MAX - 2, "_VALUE_KIND", DataType("TINYINT", False))
ROW_KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}  # RowKind.toByteValue (PAIMON-DATA-003)
FIELD_ID_KEY = b"PARQUET:field_id"

RULE_SYSTEM = "PAIMON-DATA-001"
RULE_THIN = "PAIMON-DATA-002"
RULE_KIND = "PAIMON-DATA-003"
RULE_EVOLUTION = "PAIMON-SCHEMA-007"
RULE_EXTERNAL = "PAIMON-LAYOUT-011"
RULE_PATH = "PAIMON-LAYOUT-010"


def key_field(f: DataField) -> DataField:
    """The ``_KEY_<name>`` system field of a primary-key field (PrimaryKeyTableUtils.addKeyNamePrefix)."""
    return DataField(f.id + KEY_FIELD_ID_START, KEY_PREFIX + f.name, f.type)


# ---------------------------------------------------------------------------------------------
# Paths


def data_file_path(file_name: str, *, bucket: int, partition_path: str = "", external_path: str | None = None,
                   storage: Storage | None = None, data_dir: str | None = None) -> str:
    """The root-relative path of a data file: ``[data_dir/][partition path/]bucket-N/<name>``, or its
    ``_EXTERNAL_PATH`` (PAIMON-LAYOUT-011), which must lie inside the table root (``storage``).

    ``partition_path`` is the partition directories (``dt=2024-05-14/hr=1``), ``data_dir`` the
    ``data-file.path-directory`` option (DataFilePathFactory / FileStorePathFactory.relativeBucketPath).
    """
    if external_path is not None:
        if storage is None:
            raise InvalidTable(f"data file {file_name} has an external path and no table storage to resolve it",
                               rule=RULE_EXTERNAL)
        try:
            return storage.resolve(external_path)
        except InvalidTable as exc:
            raise InvalidTable(f"external path of data file {file_name}: {exc.message}", path=external_path,
                               rule=RULE_EXTERNAL, hint="the kit reads files inside the table root only") from None
    name = bare_name(file_name, what="data file name", rule=RULE_PATH)
    parts = [p for p in (data_dir, partition_path) if p]
    for p in parts:
        if posixpath.isabs(p) or ".." in p.split("/"):
            raise InvalidTable(f"data directory {p!r} would leave the table root", rule=RULE_PATH)
    return normalize_relative("/".join(parts + [bucket_dir(bucket), name]))


def file_format_of(file_name: str) -> str:
    """The format a data file is read with: its extension, as Java's ``DataFilePathFactory.formatIdentifier``."""
    ext = file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    if not ext:
        raise InvalidTable(f"data file {file_name} has no format extension", rule="PAIMON-LAYOUT-008")
    return ext


# ---------------------------------------------------------------------------------------------
# Physical loading: the file's columns as its format's reader gives them


def _timestamp_precisions(t: DataType) -> Iterable[int]:
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        yield t.precision
    for child in (t.element, t.key, t.value):
        if child is not None:
            yield from _timestamp_precisions(child)
    for f in t.fields:
        yield from _timestamp_precisions(f.type)


def _load_parquet(data: bytes, fields: Sequence[DataField], path: str) -> pa.Table:
    import pyarrow.parquet as pq

    from reference_impl.parquet_io import read_parquet

    # Java writes TIMESTAMP(7..9) as INT96: read those in nanoseconds (the Arrow unit of p > 6); any other
    # INT96 in microseconds, as parquet_io does, since nanoseconds overflow outside 1677..2262.
    unit = "ns" if any(p > 6 for f in fields for p in _timestamp_precisions(f.type)) else "us"
    pf = pq.ParquetFile(io.BytesIO(data), pre_buffer=False, coerce_int96_timestamp_unit=unit)
    return read_parquet(pf)


def _load_orc(data: bytes, fields: Sequence[DataField], path: str) -> pa.Table:
    import pyarrow.orc as orc

    table = orc.ORCFile(io.BytesIO(data)).read()
    table.validate(full=True)
    return table


_DEC_CONTEXT = decimal.Context(prec=100)


def _avro_value(v, t: DataType):
    """A raw Avro value of Paimon type ``t`` as Python Arrow builds ``to_arrow(t)`` from (AvroSchemaConverter)."""
    if v is None:
        return None
    r = t.root
    if r == "ROW":
        return {f.name: _avro_value(v.get(f.name), f.type) for f in t.fields}
    if r == "ARRAY":
        return [_avro_value(x, t.element) for x in v]
    if r in ("MAP", "MULTISET"):
        kt, vt = (t.key, t.value) if r == "MAP" else (t.element, DataType("INT", False))
        # string keys: an Avro map; other keys: an array of {key, value} records
        pairs = v.items() if isinstance(v, dict) else ((e["key"], e["value"]) for e in v)
        return [(_avro_value(k, kt), _avro_value(x, vt)) for k, x in pairs]
    if r == "DECIMAL" and isinstance(v, bytes):  # fastavro converts the decimal logical type itself; raw bytes if not
        return decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-t.scale, _DEC_CONTEXT)
    # fastavro hands DATE, TIME and TIMESTAMP values over as date, time and (UTC) datetime objects, exact
    # at the millis and micros Avro stores (Java writes no TIMESTAMP above precision 6 to Avro)
    return v


def _load_avro(data: bytes, fields: Sequence[DataField], path: str) -> pa.Table:
    import fastavro

    from reference_impl.common.bounded import check_avro_container

    check_avro_container(data, what="Avro data file", path=path)
    reader = fastavro.reader(io.BytesIO(data))
    writer = reader.writer_schema
    if isinstance(writer, list):
        # Java's AvroSchemaConverter gives a nullable row type a ["null", record] union: paimon-spark
        # writes its data files so, and Java reads them; a row itself is never null
        records_ = [b for b in writer if b != "null"]
        writer = records_[0] if len(records_) == 1 and len(writer) <= 2 else None
    if not isinstance(writer, dict) or writer.get("type") != "record":
        raise InvalidTable("Avro data file does not hold records", path=path)
    records = list(reader)
    if any(rec is None for rec in records):
        raise InvalidTable("Avro data file holds a null row", path=path)
    by_name = {f.name: f for f in fields}
    columns, out_fields = [], []
    for af in writer["fields"]:
        f = by_name.get(af["name"])
        if f is None:
            continue  # a column this read does not know: never looked at
        columns.append(pa.array([_avro_value(rec.get(f.name), f.type) for rec in records], type=to_arrow(f.type)))
        out_fields.append(pa.field(f.name, columns[-1].type))
    if not columns:  # keep the row count: every column this read wants is then null
        return pa.table({"_": pa.nulls(len(records))}).select([])
    return pa.Table.from_arrays(columns, schema=pa.schema(out_fields))


LOADERS: dict[str, Callable[[bytes, Sequence[DataField], str], pa.Table]] = {
    "parquet": _load_parquet, "orc": _load_orc, "avro": _load_avro}


# ---------------------------------------------------------------------------------------------
# Step 1: physical column -> the Arrow type of its type in the file's schema


def _field_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _find(fields: Sequence[pa.Field], want: DataField) -> int | None:
    """Index of the physical field of Paimon field ``want``: by id, else (no id on it) by its name in the file's schema."""
    hits = [i for i, f in enumerate(fields) if _field_id(f) == want.id]
    if not hits:
        hits = [i for i, f in enumerate(fields) if _field_id(f) is None and f.name == want.name]
    if len(hits) > 1:
        raise InvalidTable(f"{len(hits)} columns of the data file stand for field {want.name!r} (id {want.id})",
                           rule=RULE_EVOLUTION)
    return hits[0] if hits else None


def _ints(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values with nulls as 0, null mask) of an integer-like array."""
    mask = arr.is_null().to_numpy(zero_copy_only=False)
    values = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return values, mask


def _from_ints(values: np.ndarray, mask: np.ndarray, target: pa.DataType) -> pa.Array:
    return pa.array(values, type=pa.int64(), mask=mask).cast(target)


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _rescale(values: np.ndarray, src: str, dst: str, where: str) -> np.ndarray:
    """Epoch values from unit ``src`` to ``dst`` (exact when finer; floor when coarser)."""
    a, b = _PER_SECOND[src], _PER_SECOND[dst]
    if b >= a:
        factor = b // a
        limit = np.iinfo(np.int64).max // factor
        if values.size and int(np.abs(values).max()) > limit:
            raise Unsupported(f"{where}: a timestamp falls outside what {dst} can hold in 64 bits",
                              feature="timestamp-range")
        return values * factor
    return np.floor_divide(values, a // b)


def _leaf(arr: pa.Array, t: DataType, where: str) -> pa.Array:
    target = to_arrow(t)
    if arr.type == target:
        return arr
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if pa.types.is_timestamp(arr.type):
            # the tz flag (Parquet isAdjustedToUTC) only labels: Paimon stores both kinds as epoch numbers
            values, mask = _ints(arr)
            return _from_ints(_rescale(values, arr.type.unit, target.unit, where), mask, target)
        if pa.types.is_integer(arr.type):
            raise InvalidTable(f"{where} is stored as bare integers, without a timestamp unit", rule=RULE_EVOLUTION)
    if t.root == "TIME" and pa.types.is_integer(arr.type):
        arr = arr.cast(pa.int32()).cast(pa.time32("ms"))  # ORC and Avro keep TIME as INT millis
    if pa.types.is_time(arr.type) and pa.types.is_time(target):
        return arr.cast(target, safe=False)  # Java keeps millis: nothing below is lost
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InvalidTable(f"{where} is stored as {arr.type}, which cannot hold {t}: {exc}",
                           rule=RULE_EVOLUTION) from None


def _logical(arr: pa.Array, t: DataType, where: str) -> pa.Array:
    """A physical column (or nested child) as ``to_arrow(t)``, nested ROW fields resolved by id or name."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    mask = arr.is_null() if arr.null_count else None
    if t.root == "ROW":
        if not pa.types.is_struct(arr.type):
            raise InvalidTable(f"{where} is stored as {arr.type}, not a struct", rule=RULE_EVOLUTION)
        phys = [arr.type.field(i) for i in range(arr.type.num_fields)]
        flat, children = arr.flatten(), []  # flatten: children with the struct's offset applied
        for f in t.fields:
            i = _find(phys, f)
            ct = f.type.nullable_copy() if t.nullable else f.type  # as types.to_arrow relaxes them
            children.append(pa.nulls(len(arr), to_arrow(ct)) if i is None else _logical(flat[i], ct, f"{where}.{f.name}"))
        st = to_arrow(t)  # its fields' nullability: a nullable row's fields are null with it
        return pa.StructArray.from_arrays(children, fields=[st.field(i) for i in range(st.num_fields)], mask=mask)
    if t.root == "ARRAY":
        if pa.types.is_large_list(arr.type):
            arr = arr.cast(pa.list_(arr.type.value_field))
        if not pa.types.is_list(arr.type):
            raise InvalidTable(f"{where} is stored as {arr.type}, not a list", rule=RULE_EVOLUTION)
        values = _logical(arr.values, t.element, f"{where}[]")
        return pa.ListArray.from_arrays(arr.offsets, values, type=to_arrow(t), mask=mask)
    if t.root in ("MAP", "MULTISET"):
        if not pa.types.is_map(arr.type):
            raise InvalidTable(f"{where} is stored as {arr.type}, not a map", rule=RULE_EVOLUTION)
        kt, vt = (t.key, t.value) if t.root == "MAP" else (t.element, DataType("INT", False))
        keys = _logical(arr.keys, kt, f"{where}.key")
        items = _logical(arr.items, vt, f"{where}.value")
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=to_arrow(t), mask=mask)
    return _leaf(arr, t, where)


# ---------------------------------------------------------------------------------------------
# Step 2: schema evolution (SchemaEvolutionUtil.createIndexCastMapping, CastExecutors)


def _same(a: DataType, b: DataType) -> bool:
    """Whether two types are equal but for nullability and descriptions (no cast, no renamed nested field)."""
    if a.root != b.root or a.params != b.params or len(a.fields) != len(b.fields):
        return False
    if any(x.id != y.id or x.name != y.name or not _same(x.type, y.type) for x, y in zip(a.fields, b.fields)):
        return False
    return all((x is None) == (y is None) and (x is None or _same(x, y))
               for x, y in ((a.element, b.element), (a.key, b.key), (a.value, b.value)))


_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_NP_INT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_FLOATS = {"FLOAT": np.float32, "DOUBLE": np.float64}


def _family(t: DataType) -> str:
    if t.root in _INT_BITS:
        return "int"
    if t.root in _FLOATS:
        return "float"
    return {"CHAR": "string", "VARCHAR": "string", "BINARY": "bytes", "VARBINARY": "bytes"}.get(t.root, t.root.lower())


def _numpy(arr: pa.Array, fill) -> tuple[np.ndarray, np.ndarray]:
    mask = arr.is_null().to_numpy(zero_copy_only=False)
    return pc.fill_null(arr, fill).to_numpy(zero_copy_only=False), mask


def _int_to_int(arr, src, dst):
    # Number.byteValue/shortValue/intValue/longValue: two's-complement wrap (numpy's astype does the same)
    values, mask = _numpy(arr, 0)
    return pa.array(values.astype(np.int64).astype(_NP_INT[_INT_BITS[dst.root]]), mask=mask)


def _to_float(arr, src, dst):
    # long -> float/double and double -> float round to nearest, as Java's widening/narrowing conversions
    values, mask = _numpy(arr, 0)
    return pa.array(values.astype(_FLOATS[dst.root]), mask=mask)


def _float_to_int(arr, src, dst):
    # JLS 5.1.3: NaN -> 0, saturate to int (to long for BIGINT), round toward zero; byte/short then wrap
    values, mask = _numpy(arr, 0)
    v = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
    bits = 64 if dst.root == "BIGINT" else 32
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    high, low = v >= 2.0 ** (bits - 1), v <= float(lo)
    out = np.trunc(np.where(high | low, 0.0, v)).astype(np.int64)
    out[high], out[low] = hi, lo  # set as integers: 2^63 - 1 has no float
    return pa.array(out.astype(_NP_INT[_INT_BITS[dst.root]]), mask=mask)


def _decimal_value(d: decimal.Decimal, p: int, s: int) -> decimal.Decimal | None:
    """Decimal.fromBigDecimal: scale set with HALF_UP, null when it then needs more than ``p`` digits."""
    q = d.quantize(decimal.Decimal(1).scaleb(-s), rounding=decimal.ROUND_HALF_UP, context=_DEC_CONTEXT)
    digits = len(q.as_tuple().digits) if q else 1
    return None if max(digits, 1) > p else q


def _per_value(arr: pa.Array, fn: Callable, target: pa.DataType) -> pa.Array:
    return pa.array([None if v is None else fn(v) for v in arr.to_pylist()], type=target)


def _to_decimal(arr, src, dst):
    p, s = dst.precision, dst.scale

    def one(v):
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise Unsupported(f"Java cannot cast {v} to {dst} (BigDecimal.valueOf fails)", feature="cast:nan")
            v = decimal.Decimal(repr(v))  # BigDecimal.valueOf(double) goes through Double.toString
        return _decimal_value(decimal.Decimal(v), p, s)

    if src.root == "FLOAT":
        arr = arr.cast(pa.float64())  # Float.doubleValue() first, as NumericPrimitiveToDecimalCastRule
    return _per_value(arr, one, to_arrow(dst))


def _decimal_to_int(arr, src, dst):
    # castToIntegral: round toward zero, BigDecimal.longValue keeps the low 64 bits; then (int)/(short)/(byte)
    bits = _INT_BITS[dst.root]
    return _per_value(arr, lambda v: ((int(v) + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1)), to_arrow(dst))


def _decimal_to_float(arr, src, dst):
    # DecimalUtils.doubleValue: compact decimals (p <= 18) as (double) unscaled / 10^scale, others correctly rounded
    def one(v: decimal.Decimal) -> float:
        if src.precision <= 18:
            return float(int(v.scaleb(src.scale, _DEC_CONTEXT))) / float(10 ** src.scale)
        return float(v)

    doubles = _per_value(arr, one, pa.float64())
    return doubles if dst.root == "DOUBLE" else _to_float(doubles, src, dst)


def _string_to_string(arr, src, dst):
    # BinaryStringUtils.toCharacterString: cut to the length in characters; CHAR pads with blanks
    n, pad = dst.params[0], dst.root == "CHAR"
    return _per_value(arr, lambda v: v[:n] if len(v) >= n else (v + " " * (n - len(v)) if pad else v), pa.string())


def _bytes_to_bytes(arr, src, dst):
    # BinaryStringUtils.toBinaryString: cut to the length; BINARY pads with zero bytes
    n, pad = dst.params[0], dst.root == "BINARY"
    return _per_value(arr, lambda v: v[:n] if len(v) >= n else (v + b"\x00" * (n - len(v)) if pad else v), pa.binary())


def _truncate_timestamp(values: np.ndarray, unit: str, precision: int) -> np.ndarray:
    """DateTimeUtils.truncate, in ``unit``: p <= 3 zeroes the low epoch-millis digits toward zero (Java ``/``,
    so before 1970 it rounds up) and drops the sub-millisecond part; p > 3 zeroes the low digits of the
    (non-negative) nano-of-millisecond."""
    per_ms = _PER_SECOND[unit] // 1000
    millis, sub = np.divmod(values, per_ms)
    if precision <= 3:
        step = 10 ** (3 - precision)
        toward_zero = np.where(millis < 0, -((-millis) // step), millis // step)
        return toward_zero * step * per_ms
    step = 10 ** (9 - precision)
    nanos = sub * (1_000_000 // per_ms)
    return millis * per_ms + (nanos // step) * step // (1_000_000 // per_ms)


def _timestamp_to_timestamp(arr, src, dst):
    if src.root != dst.root:
        raise Unsupported(f"casting {src} to {dst} depends on the reading JVM's default time zone "
                          "(TimestampToTimestampCastRule)", feature="cast:timestamp-ltz")
    target = to_arrow(dst)
    values, mask = _ints(arr)
    if dst.precision < src.precision:
        values = _truncate_timestamp(values, arr.type.unit, dst.precision)
    return _from_ints(_rescale(values, arr.type.unit, target.unit, "timestamp"), mask, target)


def _timestamp_to_date(arr, src, dst):
    if src.root != "TIMESTAMP":
        raise Unsupported(f"casting {src} to DATE depends on the reading JVM's default time zone",
                          feature="cast:timestamp-ltz")
    values, mask = _ints(arr)
    millis = _rescale(values, arr.type.unit, "ms", "timestamp")
    return pa.array(np.floor_divide(millis, 86_400_000).astype(np.int32), mask=mask).cast(pa.date32())


CASTS: dict[tuple[str, str], Callable[[pa.Array, DataType, DataType], pa.Array]] = {
    ("int", "int"): _int_to_int, ("int", "float"): _to_float, ("float", "float"): _to_float,
    ("float", "int"): _float_to_int, ("int", "decimal"): _to_decimal, ("float", "decimal"): _to_decimal,
    ("decimal", "decimal"): _to_decimal, ("decimal", "int"): _decimal_to_int, ("decimal", "float"): _decimal_to_float,
    ("string", "string"): _string_to_string, ("bytes", "bytes"): _bytes_to_bytes,
    ("timestamp", "timestamp"): _timestamp_to_timestamp, ("timestamp", "timestamp_ltz"): _timestamp_to_timestamp,
    ("timestamp_ltz", "timestamp"): _timestamp_to_timestamp, ("timestamp_ltz", "timestamp_ltz"): _timestamp_to_timestamp,
    ("timestamp", "date"): _timestamp_to_date, ("timestamp_ltz", "date"): _timestamp_to_date,
}


def evolve(arr: pa.Array, src: DataType, dst: DataType, where: str) -> pa.Array:
    """A column of file type ``src`` (as ``to_arrow(src)``) read as ``dst``; ROW fields follow their ids."""
    if _same(src, dst):
        return arr
    mask = arr.is_null() if arr.null_count else None
    if src.root == "ROW" and dst.root == "ROW":
        by_id = {f.id: (i, f) for i, f in enumerate(src.fields)}
        flat, children = arr.flatten(), []
        for f in dst.fields:
            hit = by_id.get(f.id)
            children.append(pa.nulls(len(arr), to_arrow(f.type)) if hit is None
                            else evolve(flat[hit[0]], hit[1].type, f.type, f"{where}.{f.name}"))
        return pa.StructArray.from_arrays(children, fields=[arrow_field(f.name, f.type) for f in dst.fields], mask=mask)
    if src.root == "ARRAY" and dst.root == "ARRAY":
        values = evolve(arr.values, src.element, dst.element, f"{where}[]")
        return pa.ListArray.from_arrays(arr.offsets, values, type=to_arrow(dst), mask=mask)
    if src.root == "MAP" and dst.root == "MAP":
        if not _same(src.key, dst.key):
            raise InvalidTable(f"{where}: map key type changed from {src.key} to {dst.key}, which Java cannot read",
                               rule=RULE_EVOLUTION)
        items = evolve(arr.items, src.value, dst.value, f"{where}.value")
        return pa.MapArray.from_arrays(arr.offsets, arr.keys, items, type=to_arrow(dst), mask=mask)
    cast = CASTS.get((_family(src), _family(dst)))
    if cast is None:
        raise Unsupported(f"{where}: reading {src} data as {dst} is not implemented (Java CastExecutors)",
                          feature=f"cast:{src.root}->{dst.root}")
    return cast(arr, src, dst)


# ---------------------------------------------------------------------------------------------
# Reading


def read_data_file(storage: Storage, path: str, file_schema_fields: Sequence[DataField],
                   read_fields: Sequence[DataField], *, primary_key: bool, key_fields: Sequence[DataField] = (),
                   file_format: str | None = None) -> pa.Table:
    """A data file's rows as Arrow: the ``read_fields`` columns (by field id from ``file_schema_fields``, the
    schema of the file's ``_SCHEMA_ID``), then ``_KEY_<k>`` per ``key_fields`` and ``_SEQUENCE_NUMBER``,
    ``_VALUE_KIND`` when ``primary_key``. ``path`` is root-relative (see ``data_file_path``)."""
    try:
        data = storage.read(path)
    except FileNotFoundError:
        raise InvalidTable(f"data file {path} does not exist", path=path, rule=RULE_PATH) from None
    return read_data_file_bytes(data, path, file_schema_fields, read_fields, primary_key=primary_key,
                                key_fields=key_fields, file_format=file_format)


def read_data_file_bytes(data: bytes, path: str, file_schema_fields: Sequence[DataField],
                         read_fields: Sequence[DataField], *, primary_key: bool,
                         key_fields: Sequence[DataField] = (), file_format: str | None = None) -> pa.Table:
    """``read_data_file`` over bytes already read."""
    fmt = (file_format or file_format_of(path.rsplit("/", 1)[-1])).lower()
    loader = LOADERS.get(fmt)
    if loader is None:
        raise Unsupported(f"data files in {fmt!r} format are not read by the reference (parquet, orc, avro)",
                          feature=f"file-format:{fmt}", path=path)
    by_id = {f.id: f for f in file_schema_fields}
    needed = {f.id for f in read_fields} | ({f.id for f in key_fields} if primary_key else set())
    value_fields = [f for f in file_schema_fields if f.id in needed]  # columns this read never looks at stay unread
    system = [key_field(by_id[f.id]) for f in key_fields if f.id in by_id] + [SEQUENCE_NUMBER, VALUE_KIND]
    try:  # the loaders that find columns by name (Avro) get the names of everything wanted
        table = loader(data, value_fields + (system if primary_key else []), path)
    except (OSError, ValueError, EOFError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InvalidTable(f"cannot read data file as {fmt}: {exc}", path=path) from None
    phys = list(table.schema)

    def column(f: DataField) -> pa.Array | None:
        i = _find(phys, f)
        return None if i is None else _logical(table.column(i), f.type, f"column {f.name!r} of {path}")

    values = {f.id: column(f) for f in value_fields}
    arrays, fields = [], []
    for f in read_fields:
        src = by_id.get(f.id)
        arr = values.get(f.id)
        if src is None or arr is None:  # added after the file was written (or not among its columns): null
            arrays.append(pa.nulls(table.num_rows, to_arrow(f.type)))
            fields.append(arrow_field(f.name, f.type).with_nullable(True))
            continue
        arr = evolve(arr, src.type, f.type, f"column {f.name!r} of {path}")
        if not f.type.nullable and arr.null_count:
            raise InvalidTable(f"column {f.name!r} is NOT NULL but holds {arr.null_count} nulls", path=path)
        arrays.append(arr)
        fields.append(arrow_field(f.name, f.type))
    if primary_key:
        for f in key_fields:
            src = by_id.get(f.id)
            if src is None:
                raise InvalidTable(f"primary key {f.name} (id {f.id}) is not a field of the file's schema", path=path,
                                   rule=RULE_SYSTEM)
            stored, value = column(key_field(src)), values.get(f.id)
            if stored is None and value is None:
                raise InvalidTable(f"primary-key file has neither {KEY_PREFIX}{src.name} nor the value column "
                                   f"{src.name}", path=path, rule=RULE_THIN)
            if stored is not None and value is not None and not stored.equals(value):
                raise InvalidTable(f"{KEY_PREFIX}{src.name} differs from the value column {src.name}", path=path,
                                   rule=RULE_SYSTEM)
            # thin mode (no _KEY_ column): the key is the value column
            arrays.append(evolve(stored if stored is not None else value, src.type, f.type, f"key {f.name}"))
            fields.append(arrow_field(KEY_PREFIX + f.name, f.type))
        for f in (SEQUENCE_NUMBER, VALUE_KIND):
            arr = column(f)
            if arr is None:
                raise InvalidTable(f"primary-key data file has no {f.name} column", path=path, rule=RULE_SYSTEM)
            if arr.null_count:
                raise InvalidTable(f"{f.name} holds nulls", path=path, rule=RULE_SYSTEM)
            arrays.append(arr)
            fields.append(arrow_field(f.name, f.type))
        kinds = arrays[-1].to_numpy(zero_copy_only=False)
        bad = kinds[(kinds < 0) | (kinds > 3)]
        if bad.size:
            raise InvalidTable(f"_VALUE_KIND holds {int(bad[0])}, not a RowKind byte (0..3)", path=path, rule=RULE_KIND)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)) if arrays else table.select([])


def apply_deletion_vector(table: pa.Table, positions: np.ndarray | Iterable[int]) -> pa.Table:
    """The rows of ``table`` (a whole data file, in file order) whose 0-based positions are not deleted (PAIMON-INDEX-008)."""
    pos = np.asarray(positions if isinstance(positions, np.ndarray) else list(positions), dtype=np.int64)
    if not pos.size:
        return table
    if int(pos.max()) >= table.num_rows or int(pos.min()) < 0:
        raise InvalidTable(f"deletion vector deletes row {int(pos.max())} of a data file of {table.num_rows} rows",
                           rule="PAIMON-INDEX-008")
    keep = np.ones(table.num_rows, dtype=bool)
    keep[pos] = False
    return table.filter(pa.array(keep))


__all__ = ["SEQUENCE_NUMBER", "VALUE_KIND", "KEY_PREFIX", "KEY_FIELD_ID_START", "ROW_KINDS", "key_field",
           "data_file_path", "file_format_of", "read_data_file", "read_data_file_bytes", "evolve",
           "apply_deletion_vector", "LOADERS", "CASTS"]
