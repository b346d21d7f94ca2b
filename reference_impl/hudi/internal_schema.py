"""Schema evolution on read: Hudi's InternalSchema, its history and the merge of file schema into query schema
(rules HUDI-EVOLR-*; Java ``InternalSchema``, ``SerDeHelper``, ``InternalSchemaMerger``, ``SchemaChangeUtils``,
``FileBasedInternalSchemaStorageManager``, ``AvroInternalSchemaConverter``).

A table written with ``hoodie.schema.on.read.enable=true`` gives every column (nested ones, array elements, map
keys and values too, and the five ``_hoodie_*`` meta columns, ids 0-4 with ``"doc":""``) a stable integer id.
Each schema version is a JSON object (Hudi 1.2 spelling, measured on Spark-written tables)::

    {"max_column_id":21,"version_id":20240101000000000,"type":"record","fields":[
      {"id":0,"name":"_hoodie_commit_time","optional":true,"type":"string","doc":""}, ...]}

Primitive types are their names (``boolean int long float double date time timestamp string uuid binary``, the
1.x logical spellings ``time_millis timestamp_millis local_timestamp_millis local_timestamp_micros``,
``fixed[16]``, ``decimal(10, 2)`` with one space: Java's parser wants it); a record is ``{"type":"record",
"fields":[...]}``, an array ``{"type":"array","element_id":..,"element":..,"element_optional":..}``, a map
``{"type":"map","key_id":..,"key":..,"value_id":..,"value":..,"value_optional":..}``. ``version_id`` is the
instant that made the version (0: the schema the table had when schema on read first changed it), and
``max_column_id`` the highest id ever given (ids of dropped columns are never reused). Ids are given a record's
own fields first, then inside each field in order (an array its element id, a map its key then value id).
Older Hudi (0.x ``SerDeHelper``) spelled ``version-id``, ``element-id``, ``key-id``, ``value-id``: read too.

Where it lives (both written by every commit of such a table):

* ``extraMetadata.latest_schema`` of a commit: the version current after that commit;
* ``.hoodie/.schema/<instant>.schemacommit`` (table version 8+: ``<requested>_<completed>.schemacommit``, with
  empty ``.requested`` / ``.inflight`` siblings, as timeline instants): ``{"schemas":[newest, ..., oldest]}``,
  the whole history, written by the commit of the same instant when it changed the schema; the file of the
  latest completed commit is the current one (files of instants not completed are leftovers).

Reading: the query schema is the version at the read point; each data file (base file or log block) was written
with the version that applied to its instant (the newest version at or before it). Its columns are matched to
the query's by id, never by name (HUDI-EVOLR-017): renamed columns keep their data, dropped ones vanish, a new
column that reuses an old name reads null in old files, moved ones take their new place, retyped primitives
convert as ``evolution.convert`` does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import evolution as EV

LATEST_SCHEMA = "latest_schema"  # commit extraMetadata key
SCHEMA_DIR = ".hoodie/.schema"
SCHEMA_COMMIT = "schemacommit"
ENABLE = "hoodie.schema.on.read.enable"
RULE = "HUDI-EVOLR-017"

PRIMITIVES = ("boolean", "int", "long", "float", "double", "date", "time", "timestamp", "string", "uuid", "binary",
              "time_millis", "timestamp_millis", "local_timestamp_millis", "local_timestamp_micros")
_FIXED = re.compile(r"^fixed\[(\d+)\]$")
_DECIMAL = re.compile(r"^decimal(?:_bytes|_fixed)?\((\d+),\s+(\d+)\)$")


# ---------------------------------------------------------------------------------------------
# The model


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    id: int
    name: str
    optional: bool
    type: Any  # str (primitive) | Record | Array | Map
    doc: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Array:
    element_id: int
    element: Any
    element_optional: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Map:
    key_id: int
    key: Any
    value_id: int
    value: Any
    value_optional: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class InternalSchema:
    """One schema version: the top-level record, the highest id given so far and the instant that made it."""

    record: Record
    max_column_id: int | None = None
    version_id: int | None = None

    @property
    def fields(self) -> tuple[Field, ...]:
        return self.record.fields

    def ids(self) -> dict[int, str]:
        """Every id -> its full dotted name (array elements ``element``, map parts ``key``/``value``)."""
        return {i: n for i, n, _ in walk(self.record)}

    def find(self, path: str) -> Field | None:
        """The field (or element/key/value pseudo-field) at a dotted path."""
        for _i, name, f in walk(self.record):
            if name == path:
                return f
        return None


def walk(t: Any, prefix: str = "") -> Iterator[tuple[int, str, Field]]:
    """(id, full name, field) of every field below ``t``, parents before children."""
    if isinstance(t, Record):
        for f in t.fields:
            name = prefix + f.name
            yield f.id, name, f
            yield from walk(f.type, name + ".")
    elif isinstance(t, Array):
        f = Field(id=t.element_id, name="element", optional=t.element_optional, type=t.element)
        yield f.id, prefix + "element", f
        yield from walk(t.element, prefix + "element.")
    elif isinstance(t, Map):
        k = Field(id=t.key_id, name="key", optional=False, type=t.key)
        v = Field(id=t.value_id, name="value", optional=t.value_optional, type=t.value)
        yield k.id, prefix + "key", k
        yield from walk(t.key, prefix + "key.")
        yield v.id, prefix + "value", v
        yield from walk(t.value, prefix + "value.")


# ---------------------------------------------------------------------------------------------
# JSON (SerDeHelper)


def _bad(message: str, path: str | None) -> InvalidTable:
    return InvalidTable(f"InternalSchema: {message}", path=path, rule=RULE)


def _type_from_json(node: Any, path: str | None) -> Any:
    if isinstance(node, str):
        text = node.lower()
        if text in PRIMITIVES:
            return text
        m = _DECIMAL.match(text)
        if m:
            p, s = int(m.group(1)), int(m.group(2))
            if not 0 < p or s > p:
                raise _bad(f"{node} is not a valid decimal", path)
            return f"decimal({p}, {s})"
        if _FIXED.match(text):
            return text
        raise _bad(f"unknown type {node!r}", path)
    if not isinstance(node, Mapping):
        raise _bad(f"a type is a name or an object, not {node!r}", path)
    kind = node.get("type")
    try:
        if kind == "record":
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise _bad("a record has no fields list", path)
            out = []
            for f in fields:
                if not isinstance(f, Mapping) or not isinstance(f.get("name"), str) or \
                        not isinstance(f.get("id"), int) or not isinstance(f.get("optional"), bool):
                    raise _bad(f"a field needs an int id, a name and an optional flag: {f!r}", path)
                out.append(Field(id=f["id"], name=f["name"], optional=f["optional"],
                                 type=_type_from_json(f.get("type"), path), doc=f.get("doc")))
            return Record(fields=tuple(out))
        if kind == "array":
            return Array(element_id=_int(node, "element_id", path), element=_type_from_json(node.get("element"), path),
                         element_optional=bool(node.get("element_optional", True)))
        if kind == "map":
            return Map(key_id=_int(node, "key_id", path), key=_type_from_json(node.get("key"), path),
                       value_id=_int(node, "value_id", path), value=_type_from_json(node.get("value"), path),
                       value_optional=bool(node.get("value_optional", True)))
    except (TypeError, AttributeError) as exc:
        raise _bad(f"malformed type {node!r}: {exc}", path) from None
    raise _bad(f"unknown nested type {kind!r}", path)


def _int(node: Mapping[str, Any], key: str, path: str | None) -> int:
    v = node.get(key, node.get(key.replace("_", "-")))
    if not isinstance(v, int) or isinstance(v, bool):
        raise _bad(f"{key} must be an integer, got {v!r}", path)
    return v


def from_json(node: Any, *, path: str | None = None) -> InternalSchema:
    """One schema version from its parsed JSON object (``SerDeHelper.fromJson``)."""
    if not isinstance(node, Mapping) or node.get("type") != "record":
        raise _bad("a schema version is a record object", path)
    record = _type_from_json(node, path)
    max_id = node.get("max_column_id")
    version = node.get("version_id", node.get("version-id"))
    for key, v in (("max_column_id", max_id), ("version_id", version)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise _bad(f"{key} must be an integer, got {v!r}", path)
    if max_id is None:  # Java derives it from the fields when absent
        max_id = max((i for i, _n, _f in walk(record)), default=-1)
    return InternalSchema(record=record, max_column_id=max_id, version_id=version)


def parse(text: str | bytes, *, path: str | None = None) -> InternalSchema:
    """A schema version from its JSON text (commit ``latest_schema``)."""
    return from_json(_load(text, path), path=path)


def parse_history(text: str | bytes, *, path: str | None = None) -> list[InternalSchema]:
    """The versions of a ``.schemacommit`` file, oldest first (``SerDeHelper.parseSchemas``)."""
    node = _load(text, path)
    if not isinstance(node, Mapping) or not isinstance(node.get("schemas"), list):
        raise _bad("a history file is {\"schemas\": [...]}", path)
    versions = [from_json(s, path=path) for s in node["schemas"]]
    if any(v.version_id is None for v in versions):
        raise _bad("a history entry has no version_id", path)
    return sorted(versions, key=lambda v: v.version_id)


def _load(text: str | bytes, path: str | None) -> Any:
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(f"not JSON: {exc}", path) from None


def _type_to_json(t: Any) -> Any:
    if isinstance(t, str):
        return t
    if isinstance(t, Record):
        return _record_json(t, None, None)
    if isinstance(t, Array):
        return {"type": "array", "element_id": t.element_id, "element": _type_to_json(t.element),
                "element_optional": t.element_optional}
    return {"type": "map", "key_id": t.key_id, "key": _type_to_json(t.key), "value_id": t.value_id,
            "value": _type_to_json(t.value), "value_optional": t.value_optional}


def _record_json(r: Record, max_id: int | None, version: int | None) -> dict:
    out: dict[str, Any] = {}
    # Java's generator writes these first, then type and fields; key order is part of the bytes.
    if max_id is not None:
        out["max_column_id"] = max_id
    if version is not None:
        out["version_id"] = version
    out["type"] = "record"
    fields = []
    for f in r.fields:
        node = {"id": f.id, "name": f.name, "optional": f.optional, "type": _type_to_json(f.type)}
        if f.doc is not None:
            node["doc"] = f.doc
        fields.append(node)
    out["fields"] = fields
    return out


def to_json(schema: InternalSchema) -> str:
    """A version as Java prints it (compact, keys in Java's order)."""
    return _dumps(_record_json(schema.record, schema.max_column_id, schema.version_id))


def history_json(versions: Sequence[InternalSchema]) -> str:
    """A ``.schemacommit`` file's text: newest version first (``SerDeHelper.inheritSchemas``)."""
    ordered = sorted(versions, key=lambda v: v.version_id or 0, reverse=True)
    return '{"schemas":[' + ",".join(to_json(v) for v in ordered) + "]}"


def _dumps(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Arrow <-> InternalSchema

_ARROW = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
          "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"), "time_millis": pa.time32("ms"),
          "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_millis": pa.timestamp("ms", tz="UTC"),
          "local_timestamp_micros": pa.timestamp("us"), "local_timestamp_millis": pa.timestamp("ms"),
          "string": pa.string(), "uuid": pa.string(), "binary": pa.binary()}


def arrow_type(t: Any) -> pa.DataType:
    """The Arrow type of an InternalSchema type (as ``avro_schema`` maps the Avro it stands for)."""
    if isinstance(t, str):
        if t in _ARROW:
            return _ARROW[t]
        m = _DECIMAL.match(t)
        if m:
            p, s = int(m.group(1)), int(m.group(2))
            return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)
        m = _FIXED.match(t)
        if m:
            return pa.binary(int(m.group(1)))
        raise Unsupported(f"InternalSchema type {t!r} has no Arrow mapping", feature="hudi-schema-on-read")
    if isinstance(t, Record):
        return pa.struct([pa.field(f.name, arrow_type(f.type), True) for f in t.fields])
    if isinstance(t, Array):
        return pa.list_(pa.field("element", arrow_type(t.element), True))
    return pa.map_(arrow_type(t.key), pa.field("value", arrow_type(t.value), True))


def arrow_schema(schema: InternalSchema) -> pa.Schema:
    return pa.schema([pa.field(f.name, arrow_type(f.type), True) for f in schema.fields])


def _primitive_of(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision}, {t.scale})"
    if pa.types.is_fixed_size_binary(t):
        return f"fixed[{t.byte_width}]"
    if pa.types.is_large_string(t):
        return "string"
    if pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_timestamp(t):
        if t.unit in ("s", "ns"):
            raise Unsupported(f"timestamp[{t.unit}] has no InternalSchema type", feature="hudi-schema-on-read")
        micros = t.unit == "us"
        if t.tz is None:
            return "local_timestamp_micros" if micros else "local_timestamp_millis"
        return "timestamp" if micros else "timestamp_millis"
    for name, at in _ARROW.items():
        if at == t and name != "uuid":
            return name
    raise Unsupported(f"Arrow type {t} has no InternalSchema type", feature="hudi-schema-on-read")


class _Ids:
    def __init__(self, start: int) -> None:
        self.next = start

    def take(self) -> int:
        i = self.next
        self.next += 1
        return i


def _from_arrow_type(t: pa.DataType, ids: _Ids) -> Any:
    # Java's AvroInternalSchemaConverter numbers a record's own fields first, then descends into them in order;
    # an array takes its element id, a map its key and value ids, before their contents.
    if pa.types.is_struct(t):
        own = [ids.take() for _ in range(t.num_fields)]
        return Record(fields=tuple(Field(id=i, name=t.field(k).name, optional=True,
                                         type=_from_arrow_type(t.field(k).type, ids)) for k, i in enumerate(own)))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        eid = ids.take()
        return Array(element_id=eid, element=_from_arrow_type(t.value_type, ids), element_optional=True)
    if pa.types.is_map(t):
        kid, vid = ids.take(), ids.take()
        return Map(key_id=kid, key=_from_arrow_type(t.key_type, ids), value_id=vid,
                   value=_from_arrow_type(t.item_type, ids), value_optional=True)
    return _primitive_of(t)


def from_arrow(schema: pa.Schema | pa.StructType, *, version_id: int | None = None, start: int = 0) -> InternalSchema:
    """Fresh ids for an Arrow schema (the first version of a table that turns schema on read on)."""
    ids = _Ids(start)
    t = pa.struct(list(schema)) if isinstance(schema, pa.Schema) else schema
    record = _from_arrow_type(t, ids)
    return InternalSchema(record=record, max_column_id=ids.next - 1, version_id=version_id)


def type_from_arrow(t: pa.DataType, start: int) -> tuple[Any, int]:
    """(InternalSchema type, next free id) for a column added with ids from ``start``."""
    ids = _Ids(start)
    out = _from_arrow_type(t, ids)
    return out, ids.next


# ---------------------------------------------------------------------------------------------
# Changes (ALTER TABLE under schema on read: TableChanges, SchemaChangeUtils)

META_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name")


def _refuse(message: str, rule: str, hint: str | None = None) -> Unsupported:
    return Unsupported(f"schema on read: {message}", feature="hudi-schema-on-read", rule=rule, hint=hint)


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition(".")
    return parent, name


def _container(schema: InternalSchema, parent: str) -> Record:
    """The record that holds the children of ``parent`` ("" = the top level)."""
    if not parent:
        return schema.record
    f = schema.find(parent)
    if f is None:
        raise InvalidTable(f"no column {parent!r}", rule="HUDI-EVOLR-004")
    if parent.endswith(".key") or parent == "key":
        if isinstance(_owner_type(schema, parent), Map):
            raise _refuse(f"fields cannot be added to or changed in map keys ({parent})", "HUDI-EVOLR-011")
    if not isinstance(f.type, Record):
        raise _refuse(f"{parent} is not a struct: its fields cannot change", "HUDI-EVOLR-004",
                      "address struct fields, <map>.value.<f> or <array>.element.<f>")
    return f.type


def _owner_type(schema: InternalSchema, path: str) -> Any:
    parent, _ = _split(path)
    return schema.record if not parent else (schema.find(parent).type if schema.find(parent) else None)


def _replace_record(t: Any, target: Record, new: Record) -> Any:
    """``t`` with the record ``target`` (by identity) swapped for ``new``."""
    if t is target:
        return new
    if isinstance(t, Record):
        return Record(fields=tuple(replace(f, type=_replace_record(f.type, target, new)) for f in t.fields))
    if isinstance(t, Array):
        return replace(t, element=_replace_record(t.element, target, new))
    if isinstance(t, Map):
        return replace(t, value=_replace_record(t.value, target, new))
    return t


def _with(schema: InternalSchema, target: Record, new: Record, max_id: int | None = None) -> InternalSchema:
    record = _replace_record(schema.record, target, new)
    return InternalSchema(record=record, max_column_id=schema.max_column_id if max_id is None else max_id,
                          version_id=schema.version_id)


def _field(schema: InternalSchema, path: str) -> Field:
    f = schema.find(path)
    if f is None:
        raise InvalidTable(f"no column {path!r}", rule="HUDI-EVOLR-004",
                           hint="nested columns are dotted paths: s.a, m.value.x, arr.element.y")
    return f


def _check_meta(path: str) -> None:
    if path.split(".")[0] in META_COLUMNS:
        raise _refuse(f"Hudi meta column {path} cannot change", "HUDI-EVOLR-004")


def _place(fields: list[Field], moved: Field, *, after: str | None, first: bool, parent: str) -> list[Field]:
    """``fields`` with ``moved`` put first, after the sibling ``after`` or (neither) at the end."""
    if first:
        if not parent:
            raise _refuse("FIRST is for nested columns only; a top-level column takes AFTER <col>", "HUDI-EVOLR-009")
        return [moved] + fields
    if after is None:
        return fields + [moved]
    a_parent, a_name = _split(after)
    if a_parent != parent:
        raise _refuse(f"{after} is not in the same struct as the column ({parent or 'top level'})", "HUDI-EVOLR-010")
    if a_name in META_COLUMNS[:3]:
        raise _refuse("a column cannot go between the meta columns", "HUDI-EVOLR-010")
    names = [f.name for f in fields]
    if a_name not in names:
        raise InvalidTable(f"no column {after!r} to put the column after", rule="HUDI-EVOLR-010")
    k = names.index(a_name) + 1
    return fields[:k] + [moved] + fields[k:]


def add_column(schema: InternalSchema, path: str, t: pa.DataType, *, after: str | None = None, first: bool = False,
               doc: str | None = None) -> InternalSchema:
    """``ADD COLUMNS(path type [FIRST | AFTER col])``: fresh ids above ``max_column_id`` (HUDI-EVOLR-007/008)."""
    parent, name = _split(path)
    if parent and (parent.endswith(".key") or parent == "key") and isinstance(_owner_type(schema, parent), Map):
        raise _refuse(f"fields cannot be added to map keys ({path})", "HUDI-EVOLR-011")
    holder = _container(schema, parent)
    if any(f.name.lower() == name.lower() for f in holder.fields):
        raise InvalidTable(f"column {path!r} already exists", rule="HUDI-EVOLR-007")
    start = (schema.max_column_id if schema.max_column_id is not None else -1) + 1
    new_t, nxt = type_from_arrow(t, start + 1)
    new = Field(id=start, name=name, optional=True, type=new_t, doc=doc)
    fields = _place(list(holder.fields), new, after=after, first=first, parent=parent)
    return _with(schema, holder, Record(fields=tuple(fields)), max_id=nxt - 1)


def rename_column(schema: InternalSchema, path: str, new_name: str) -> InternalSchema:
    """``RENAME COLUMN path TO new_name``: the same id under a new name (HUDI-EVOLR-016)."""
    _check_meta(path)
    parent, name = _split(path)
    holder = _container(schema, parent)
    if "." in new_name or not new_name:
        raise InvalidTable(f"a new column name is one plain name, not {new_name!r}", rule="HUDI-EVOLR-016")
    if any(f.name.lower() == new_name.lower() for f in holder.fields if f.name != name):
        raise InvalidTable(f"column {new_name!r} already exists next to {path!r}", rule="HUDI-EVOLR-016")
    _field(schema, path)
    fields = [replace(f, name=new_name) if f.name == name else f for f in holder.fields]
    return _with(schema, holder, Record(fields=tuple(fields)))


def drop_columns(schema: InternalSchema, paths: Sequence[str]) -> InternalSchema:
    """``DROP COLUMNS a, s.b``: ids gone for good (``max_column_id`` kept) (HUDI-EVOLR-014/015)."""
    out = schema
    for path in paths:
        _check_meta(path)
        _field(out, path)
        parent, name = _split(path)
        if name in ("element", "key", "value") and not isinstance(_owner_type(out, path), Record):
            raise _refuse(f"{path}: an array element or a map key/value cannot be dropped", "HUDI-EVOLR-015")
        holder = _container(out, parent)
        rest = tuple(f for f in holder.fields if f.name != name)
        if not rest:
            raise _refuse(f"dropping {path} would leave {parent or 'the table'} without fields", "HUDI-EVOLR-015",
                          "drop the struct itself instead")
        out = _with(out, holder, Record(fields=rest))
    return out


def move_column(schema: InternalSchema, path: str, *, after: str | None = None, first: bool = False) -> InternalSchema:
    """``ALTER COLUMN path FIRST | AFTER col`` (FIRST inside a struct only) (HUDI-EVOLR-012)."""
    _check_meta(path)
    parent, name = _split(path)
    holder = _container(schema, parent)
    moved = _field(schema, path)
    if not first and after is None:
        raise InvalidTable("a move needs FIRST or AFTER <col>", rule="HUDI-EVOLR-012")
    if after == path:
        raise InvalidTable(f"cannot move {path} after itself", rule="HUDI-EVOLR-012")
    rest = [f for f in holder.fields if f.name != name]
    fields = _place(rest, moved, after=after, first=first, parent=parent)
    return _with(schema, holder, Record(fields=tuple(fields)))


def update_type(schema: InternalSchema, path: str, t: pa.DataType) -> InternalSchema:
    """``ALTER COLUMN path TYPE t``: primitives only, along the change matrix (HUDI-EVOLR-012/013, HUDI-CHG)."""
    _check_meta(path)
    parent, name = _split(path)
    holder = _container(schema, parent)
    f = _field(schema, path)
    current = arrow_type(f.type)
    if not isinstance(f.type, str) or EV.is_nested(t):
        raise _refuse(f"only primitive columns change type; {path} is {current}", "HUDI-EVOLR-013")
    if not EV.alter_type_allowed(current, t):
        raise _refuse(f"{path} cannot change from {current} to {t}", EV.alter_rule(current, t),
                      "see the ALTER COLUMN TYPE matrix (evolution.py)")
    new_t, _ = type_from_arrow(t, 0)
    fields = [replace(x, type=new_t) if x.name == name else x for x in holder.fields]
    return _with(schema, holder, Record(fields=tuple(fields)))


# ---------------------------------------------------------------------------------------------
# History


@dataclass(frozen=True, slots=True, kw_only=True)
class History:
    """Every schema version of a table, oldest first (empty: the table is not schema-on-read)."""

    versions: tuple[InternalSchema, ...]
    file: str | None = None  # the .schemacommit file they came from

    def __bool__(self) -> bool:
        return bool(self.versions)

    @property
    def latest(self) -> InternalSchema | None:
        return self.versions[-1] if self.versions else None

    def at(self, instant: str | int) -> InternalSchema | None:
        """The version that applies to ``instant``: the newest one at or before it (``searchSchema``); files of
        instants before the first version were written with the first version's columns."""
        t = int(instant)
        found = None
        for v in self.versions:
            if v.version_id is not None and v.version_id <= t:
                found = v
        return found if found is not None else (self.versions[0] if self.versions else None)


def file_instant(name: str) -> str:
    """The requested instant of a ``.schemacommit`` file name (``<t>.`` or ``<t>_<completed>.``)."""
    return name.split(".")[0].split("_")[0]


def history_files(storage: Any) -> list[str]:
    """Names of the completed ``.schemacommit`` files, sorted by instant."""
    names = [f.path.rsplit("/", 1)[-1] for f in storage.list(SCHEMA_DIR)]
    return sorted(n for n in names if n.endswith("." + SCHEMA_COMMIT))


def read_history(storage: Any, completed: Iterable[str] | None = None, *,
                 before: str | None = None) -> History:
    """The history in the ``.schemacommit`` file of the latest completed instant (at or before ``before``).

    ``completed``: the requested times of the completed commits; a file of another instant is a leftover of a
    failed write and is skipped, as Java does."""
    valid = set(completed) if completed is not None else None
    names = [n for n in history_files(storage)
             if (valid is None or file_instant(n) in valid) and (before is None or file_instant(n) <= before)]
    if not names:
        return History(versions=())
    path = f"{SCHEMA_DIR}/{names[-1]}"
    versions = parse_history(storage.read(path), path=storage.uri(path))
    if before is not None:
        versions = [v for v in versions if v.version_id is not None and v.version_id <= int(before)] or versions[:1]
    return History(versions=tuple(versions), file=path)


# ---------------------------------------------------------------------------------------------
# Merge: file columns -> query columns by id (InternalSchemaMerger)


def _child_fields(t: Any) -> dict[int, Field]:
    return {f.id: f for f in t.fields} if isinstance(t, Record) else {}


def _adapt(col: pa.Array | None, file_t: Any, query_t: Any, target: pa.DataType, length: int) -> pa.Array:
    """``col`` (a file column of InternalSchema type ``file_t``) as the query's ``query_t`` / Arrow ``target``."""
    if col is None:
        return pa.nulls(length, target)
    if isinstance(col, pa.ChunkedArray):
        col = pa.concat_arrays(col.chunks) if col.num_chunks != 1 else col.chunk(0)
    if isinstance(query_t, Record):
        if not pa.types.is_struct(col.type) or not isinstance(file_t, Record):
            raise InvalidTable(f"a struct column reads as {col.type}", rule=RULE)
        by_id = _child_fields(file_t)
        names = {col.type.field(i).name: i for i in range(col.type.num_fields)}
        children = []
        for k, qf in enumerate(query_t.fields):
            ff = by_id.get(qf.id)
            child = col.field(names[ff.name]) if ff is not None and ff.name in names else None
            children.append(_adapt(child, ff.type if ff is not None else None, qf.type, target.field(k).type, len(col)))
        mask = col.is_null() if col.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if isinstance(query_t, Array):
        if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)) or not isinstance(file_t, Array):
            raise InvalidTable(f"an array column reads as {col.type}", rule=RULE)
        if pa.types.is_large_list(col.type):
            col = col.cast(pa.list_(col.type.value_field))
        values = _adapt(col.values, file_t.element, query_t.element, target.value_type, len(col.values))
        mask = col.is_null() if col.null_count else None
        return pa.ListArray.from_arrays(col.offsets, values, type=target, mask=mask)
    if isinstance(query_t, Map):
        if not pa.types.is_map(col.type) or not isinstance(file_t, Map):
            raise InvalidTable(f"a map column reads as {col.type}", rule=RULE)
        keys = _adapt(col.keys, file_t.key, query_t.key, target.key_type, len(col.keys))
        items = _adapt(col.items, file_t.value, query_t.value, target.item_type, len(col.items))
        mask = col.is_null() if col.null_count else None
        return pa.MapArray.from_arrays(col.offsets, keys, items, type=target, mask=mask)
    if col.type == target:
        return col
    return EV.convert(col, target)


def merge(table: pa.Table, file_schema: InternalSchema, query_schema: InternalSchema,
          target: pa.Schema, *, keep: Sequence[str] = ()) -> pa.Table:
    """A data file's rows (its own column names, types) as the query schema (``target``: Arrow, query names):
    every query column by id from the file, null where the file has no such id. Columns named in ``keep`` (the
    meta columns, which the InternalSchema does not number) pass by name."""
    by_id = {f.id: f for f in file_schema.fields}
    query = {f.name: f for f in query_schema.fields}
    cols, fields = [], []
    for tf in target:
        if tf.name in keep or tf.name not in query:  # by name, as without schema on read
            col = table.column(tf.name) if tf.name in table.column_names else None
            cols.append(pa.nulls(table.num_rows, tf.type) if col is None else EV.convert(col, tf.type))
        else:
            qf = query[tf.name]
            ff = by_id.get(qf.id)
            col = table.column(ff.name) if ff is not None and ff.name in table.column_names else None
            cols.append(_adapt(col, ff.type if ff is not None else None, qf.type, tf.type, table.num_rows))
        fields.append(tf.with_nullable(True))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


__all__ = ["InternalSchema", "Field", "Record", "Array", "Map", "History", "parse", "parse_history", "from_json",
           "to_json", "history_json", "arrow_schema", "arrow_type", "from_arrow", "type_from_arrow", "read_history",
           "history_files", "merge", "walk", "add_column", "rename_column", "drop_columns", "move_column",
           "update_type", "LATEST_SCHEMA", "SCHEMA_DIR", "ENABLE"]
