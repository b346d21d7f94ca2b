"""Table schema (spec: Schema; Java AvroSchemaConverter / Spark SchemaConverters, TableSchemaResolver): Avro to Arrow.

A Hudi table's schema is the Avro schema the writer records in each commit's ``extraMetadata["schema"]``
(HUDI-COMMIT-003), without the five meta columns; the reader prepends them (HUDI-META-001). This module maps
that schema to an Arrow schema, type by type, and turns the Python values fastavro decodes into what
``pyarrow`` takes for those types.

* primitives: boolean, int (int32), long (int64), float, double, bytes (binary), string (utf8), null;
* ``record`` -> struct (fields in order), ``array`` -> list, ``map`` -> map<string, V>, ``enum`` -> string,
  ``fixed`` -> fixed-size binary;
* a union of ``null`` and one type -> that type, nullable; any other union (two or more non-null branches)
  is Unsupported (Spark turns it into a struct of ``member0..n``; no Hudi writer makes one);
* logical types: ``decimal`` on bytes or fixed -> decimal128(p, s) (decimal256 above 38 digits), ``date`` ->
  date32, ``time-millis`` -> time32[ms], ``time-micros`` -> time64[us], ``timestamp-millis`` / ``-micros`` ->
  timestamp[ms|us, UTC] (an instant), ``local-timestamp-millis`` / ``-micros`` -> timestamp[ms|us] without
  zone (a wall-clock time), ``uuid`` -> string. An unknown logical type falls back to its underlying type,
  as the Avro specification asks.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Mapping

import pyarrow as pa

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.common.jsontext import loads as json_loads  # deep nesting: a ValueError, not a RecursionError

# Meta columns, in the order every Hudi file carries them (HUDI-META-001).
COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_COLUMNS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
IS_DELETED = "_hoodie_is_deleted"  # a data column that, when true, makes the record a delete

_PRIMITIVES: Mapping[str, pa.DataType] = {
    "null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
    "double": pa.float64(), "bytes": pa.binary(), "string": pa.string(),
}
MAX_DEPTH = 64


def parse_avro_schema(text: str, *, path: str | None = None) -> Any:
    """The JSON of an Avro schema text (InvalidTable when it is not JSON)."""
    try:
        return json_loads(text)
    except ValueError as exc:
        raise InvalidTable(f"table schema is not JSON: {exc}", path=path, rule="HUDI-COMMIT-003") from None


def _logical(node: Mapping[str, Any], base: str) -> pa.DataType | None:
    lt = node.get("logicalType")
    if lt == "decimal" and base in ("bytes", "fixed"):
        p, s = int(node.get("precision", 0)), int(node.get("scale", 0))
        if p < 1 or s < 0 or s > p:
            raise InvalidTable(f"decimal({p}, {s}) is not a valid decimal", rule="HUDI-COMMIT-003")
        return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)
    table = {("date", "int"): pa.date32(), ("time-millis", "int"): pa.time32("ms"),
             ("time-micros", "long"): pa.time64("us"),
             ("timestamp-millis", "long"): pa.timestamp("ms", tz="UTC"),
             ("timestamp-micros", "long"): pa.timestamp("us", tz="UTC"),
             ("local-timestamp-millis", "long"): pa.timestamp("ms"),
             ("local-timestamp-micros", "long"): pa.timestamp("us"),
             ("uuid", "string"): pa.string()}
    return table.get((lt, base))


def avro_to_arrow_type(node: Any, *, names: dict[str, Any] | None = None, namespace: str = "",
                       depth: int = 0) -> tuple[pa.DataType, bool]:
    """The Arrow type of an Avro schema node and whether it is nullable."""
    names = {} if names is None else names
    if depth > MAX_DEPTH:
        raise Unsupported(f"schema nests deeper than {MAX_DEPTH} levels", feature="avro-deep-schema")
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if len(branches) != 1:
            raise Unsupported(f"union of {len(branches)} non-null types is not mapped to Arrow",
                              feature="avro-complex-union")
        t, _ = avro_to_arrow_type(branches[0], names=names, namespace=namespace, depth=depth + 1)
        return t, len(branches) != len(node)
    if isinstance(node, str):
        if node in _PRIMITIVES:
            return _PRIMITIVES[node], node == "null"
        full = node if "." in node or not namespace else f"{namespace}.{node}"
        for key in (full, node):
            if key in names:
                return names[key], False
        raise InvalidTable(f"schema names type {node!r}, which is not defined before its use", rule="HUDI-COMMIT-003")
    if not isinstance(node, dict) or "type" not in node:
        raise InvalidTable(f"schema node {str(node)[:80]!r} is not an Avro type", rule="HUDI-COMMIT-003")
    kind = node["type"]
    if isinstance(kind, (list, dict)):
        return avro_to_arrow_type(kind, names=names, namespace=namespace, depth=depth + 1)
    ns = node.get("namespace", namespace)
    name = node.get("name")
    full = (name if "." in name or not ns else f"{ns}.{name}") if isinstance(name, str) else None
    logical = _logical(node, kind)
    if logical is not None:
        out: pa.DataType = logical
    elif kind in _PRIMITIVES:
        return _PRIMITIVES[kind], kind == "null"
    elif kind == "record":
        if full is not None and full in names:
            raise Unsupported(f"recursive record {full!r} has no Arrow type", feature="avro-recursive-record")
        fields = []
        for f in node.get("fields", []):
            t, nullable = avro_to_arrow_type(f["type"], names=names, namespace=ns, depth=depth + 1)
            fields.append(pa.field(f["name"], t, nullable=nullable))
        out = pa.struct(fields)
    elif kind == "enum":
        out = pa.string()
    elif kind == "fixed":
        out = pa.binary(int(node["size"]))
    elif kind == "array":
        t, nullable = avro_to_arrow_type(node["items"], names=names, namespace=ns, depth=depth + 1)
        out = pa.list_(pa.field("element", t, nullable=nullable))
    elif kind == "map":
        t, nullable = avro_to_arrow_type(node["values"], names=names, namespace=ns, depth=depth + 1)
        out = pa.map_(pa.string(), pa.field("value", t, nullable=nullable))
    else:
        if full is not None and full in names:
            return names[full], False
        if kind in names:
            return names[kind], False
        raise InvalidTable(f"unknown Avro type {kind!r}", rule="HUDI-COMMIT-003")
    if full is not None:
        names[full] = out
        names.setdefault(name, out)
    return out, False


def table_arrow_schema(avro_text: str, *, with_meta: bool = True, path: str | None = None) -> pa.Schema:
    """The Arrow schema of a table whose writer schema is ``avro_text``; meta columns first unless already there."""
    node = parse_avro_schema(avro_text, path=path)
    t, _ = avro_to_arrow_type(node)
    if not pa.types.is_struct(t):
        raise InvalidTable("the table schema is not an Avro record", path=path, rule="HUDI-COMMIT-003")
    fields = [t.field(i) for i in range(t.num_fields)]
    have = {f.name for f in fields}
    meta = [pa.field(m, pa.string()) for m in META_COLUMNS if with_meta and m not in have]
    if not with_meta:
        fields = [f for f in fields if f.name not in META_COLUMNS]
    return pa.schema(meta + fields)


def to_arrow_value(value: Any, t: pa.DataType) -> Any:
    """A value fastavro decoded, as pyarrow takes it for type ``t`` (maps as pairs, UUIDs as text, ...)."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        if not isinstance(value, Mapping):
            return value
        return {t.field(i).name: to_arrow_value(value.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        items = value.items() if isinstance(value, Mapping) else value
        return [(k, to_arrow_value(v, t.item_type)) for k, v in items]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [to_arrow_value(v, t.value_type) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if pa.types.is_timestamp(t) and isinstance(value, int):
        return value  # raw epoch units already in t's unit
    if pa.types.is_timestamp(t) and t.tz is None and isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.replace(tzinfo=None)
    return value


__all__ = ["META_COLUMNS", "COMMIT_TIME", "COMMIT_SEQNO", "RECORD_KEY", "PARTITION_PATH", "FILE_NAME", "IS_DELETED",
           "parse_avro_schema", "avro_to_arrow_type", "table_arrow_schema", "to_arrow_value"]
