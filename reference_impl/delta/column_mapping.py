"""Column Mapping: logical (display) names vs physical names and field ids, at every nesting level.

In ``name`` and ``id`` modes every struct field, nested or not, carries
``delta.columnMapping.id`` and ``delta.columnMapping.physicalName`` in its metadata. Data files
name their columns by physical name and carry the id as the Parquet ``field_id`` (pyarrow shows it
as the field metadata ``PARQUET:field_id``). Readers resolve file columns by display name
(``none``), physical name (``name``) or field id (``id``), at every level, and return null for
columns a file lacks.

Arrays' ``element`` and maps' ``key``/``value`` have no struct field of their own; IcebergCompatV2
gives them ids through ``delta.columnMapping.nested.ids`` on the nearest struct field, keyed by
the physical path (``col-x.element``, ``col-x.value.element``). We write those ids to Parquet when
present and match list/map children by position when reading (there is only one child).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Literal, Mapping

import pyarrow as pa

from reference_impl.delta.schema import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    PrimitiveType,
    StructField,
    StructType,
    VARIANT_METADATA,
    VARIANT_VALUE,
    to_arrow_field,
    to_arrow_type,
    walk_fields,
)
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.storage import new_uuid

MODE_KEY = "delta.columnMapping.mode"
MAX_ID_KEY = "delta.columnMapping.maxColumnId"
ID_KEY = "delta.columnMapping.id"
PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName"
NESTED_IDS_KEY = "delta.columnMapping.nested.ids"
FIELD_ID_KEY = b"PARQUET:field_id"
FEATURE = "columnMapping"
MODES = ("none", "id", "name")

RULE_MODE = "DELTA-COLMAP-001"
RULE_ANNOTATED = "DELTA-COLMAP-003"
RULE_MAX_ID = "DELTA-COLMAP-009"
RULE_ID_MISSING = "DELTA-COLMAP-012"
RULE_VOID_WRITE = "DELTA-SCHEMA-011"

Mode = Literal["none", "id", "name"]


def mapping_mode(configuration: Mapping[str, str], protocol: Any = None) -> Mode:
    """The table's mapping mode from its configuration; InvalidTable on an unknown mode.

    With ``protocol`` (anything with min_reader_version / reader_features), a protocol that does
    not support column mapping makes the property void: the mode is ``none`` (DELTA-COLMAP-002).
    """
    raw = (configuration or {}).get(MODE_KEY)
    if raw is None:
        mode = "none"
    else:
        if not isinstance(raw, str) or raw.lower() not in MODES:
            raise InvalidTable(
                f"{MODE_KEY} must be one of none, id, name; got {raw!r}", rule=RULE_MODE
            )
        mode = raw.lower()
    if protocol is not None and mode != "none" and not protocol_supports_column_mapping(protocol):
        return "none"
    return mode  # type: ignore[return-value]


def protocol_supports_column_mapping(protocol: Any) -> bool:
    """Reader version 2, or 3+ with columnMapping among readerFeatures (DELTA-COLMAP-002)."""
    version = getattr(protocol, "min_reader_version", None)
    if version == 2:
        return True
    if isinstance(version, int) and version >= 3:
        return FEATURE in (getattr(protocol, "reader_features", None) or ())
    return False


def _check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise InvalidTable(f"unknown column mapping mode {mode!r}", rule=RULE_MODE)
    return mode  # type: ignore[return-value]


def column_id(f: StructField) -> int | None:
    """The field's delta.columnMapping.id, or None; InvalidTable if it is not an integer."""
    value = f.metadata.get(ID_KEY)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTable(f"column {f.name!r}: {ID_KEY} must be an integer, got {value!r}", rule=RULE_ANNOTATED)
    return value


def physical_name(field: StructField, mode: str) -> str:
    """The name a data file uses for ``field``: its display name in none mode, else physicalName."""
    if _check_mode(mode) == "none":
        return field.name
    value = field.metadata.get(PHYSICAL_NAME_KEY)
    if not isinstance(value, str) or not value:
        raise InvalidTable(
            f"column {field.name!r} has no {PHYSICAL_NAME_KEY} although the table uses column mapping mode {mode!r}",
            rule=RULE_ANNOTATED,
        )
    return value


def _required_id(field: StructField, mode: str) -> int:
    value = column_id(field)
    if value is None:
        raise InvalidTable(
            f"column {field.name!r} has no {ID_KEY} although the table uses column mapping mode {mode!r}",
            rule=RULE_ANNOTATED,
        )
    return value


# ---------------------------------------------------------------------------------------------
# writer side: assigning ids and names


def assign_column_mapping(
    schema: StructType, max_column_id: int, *, nested_ids: bool = False
) -> tuple[StructType, int]:
    """Give every field at every level an id and a ``col-<uuid>`` physical name unless it has them.

    Returns the new schema and the new maxColumnId (never below the old one or any id present).
    ``nested_ids`` also assigns IcebergCompatV2 ids to array elements and map keys/values.
    """
    highest = max_column_id
    for _path, f in walk_fields(schema):
        existing = column_id(f)
        if existing is not None:
            highest = max(highest, existing)
        for v in (f.metadata.get(NESTED_IDS_KEY) or {}).values():
            if isinstance(v, int) and not isinstance(v, bool):
                highest = max(highest, v)
    counter = [highest]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    def do_type(t: DataType) -> DataType:
        if isinstance(t, StructType):
            return StructType(fields=tuple(do_field(f) for f in t.fields))
        if isinstance(t, ArrayType):
            return replace(t, element_type=do_type(t.element_type))
        if isinstance(t, MapType):
            return replace(t, key_type=do_type(t.key_type), value_type=do_type(t.value_type))
        return t

    def do_field(f: StructField) -> StructField:
        md = dict(f.metadata)
        if md.get(ID_KEY) is None:
            md[ID_KEY] = next_id()
        if not md.get(PHYSICAL_NAME_KEY):
            md[PHYSICAL_NAME_KEY] = f"col-{new_uuid()}"
        if nested_ids:
            keys = _nested_keys(f.type, md[PHYSICAL_NAME_KEY])
            if keys:
                ids = dict(md.get(NESTED_IDS_KEY) or {})
                for k in keys:
                    if k not in ids:
                        ids[k] = next_id()
                md[NESTED_IDS_KEY] = ids
        return replace(f, type=do_type(f.type), metadata=md)

    new_schema = do_type(schema)
    assert isinstance(new_schema, StructType)
    return new_schema, counter[0]


def _nested_keys(t: DataType, prefix: str) -> list[str]:
    """IcebergCompatV2 nested-id keys below one struct field (stops at nested structs)."""
    if isinstance(t, ArrayType):
        key = f"{prefix}.element"
        return [key] + _nested_keys(t.element_type, key)
    if isinstance(t, MapType):
        k, v = f"{prefix}.key", f"{prefix}.value"
        return [k] + _nested_keys(t.key_type, k) + [v] + _nested_keys(t.value_type, v)
    return []


def column_mapping_problems(schema: StructType, mode: str, max_column_id: int | None = None) -> list[str]:
    """Every DELTA-COLMAP-003/009 problem of a mapped schema, as messages (empty when fine)."""
    if _check_mode(mode) == "none":
        return []
    problems: list[str] = []
    seen_ids: dict[int, str] = {}
    for path, f in walk_fields(schema):
        where = ".".join(path)
        raw_id = f.metadata.get(ID_KEY)
        if raw_id is None:
            problems.append(f"{where}: missing {ID_KEY}")
        elif isinstance(raw_id, bool) or not isinstance(raw_id, int) or not -(2**31) <= raw_id < 2**31:
            problems.append(f"{where}: {ID_KEY} {raw_id!r} is not a 32-bit integer")
        else:
            if raw_id in seen_ids:
                problems.append(f"{where}: {ID_KEY} {raw_id} is also used by {seen_ids[raw_id]}")
            seen_ids[raw_id] = where
            if max_column_id is not None and raw_id > max_column_id:
                problems.append(f"{where}: {ID_KEY} {raw_id} exceeds {MAX_ID_KEY}={max_column_id}")
        name = f.metadata.get(PHYSICAL_NAME_KEY)
        if not isinstance(name, str) or not name:
            problems.append(f"{where}: missing {PHYSICAL_NAME_KEY}")
    for parent, struct in _all_structs(schema, "schema"):
        names: dict[str, str] = {}
        for f in struct.fields:
            p = f.metadata.get(PHYSICAL_NAME_KEY)
            if isinstance(p, str):
                if p in names:
                    problems.append(f"{parent}: physical name {p!r} used by both {names[p]!r} and {f.name!r}")
                names[p] = f.name
    return problems


def validate_column_mapping(schema: StructType, mode: str, max_column_id: int | None = None) -> None:
    """InvalidTable naming the first problem ``column_mapping_problems`` finds."""
    problems = column_mapping_problems(schema, mode, max_column_id)
    if problems:
        rule = RULE_MAX_ID if "exceeds" in problems[0] else RULE_ANNOTATED
        raise InvalidTable(f"column mapping metadata is invalid: {problems[0]}", rule=rule)


def _all_structs(t: DataType, path: str):
    if isinstance(t, StructType):
        yield path, t
        for f in t.fields:
            yield from _all_structs(f.type, f"{path}.{f.name}")
    elif isinstance(t, ArrayType):
        yield from _all_structs(t.element_type, f"{path}.element")
    elif isinstance(t, MapType):
        yield from _all_structs(t.key_type, f"{path}.key")
        yield from _all_structs(t.value_type, f"{path}.value")


# ---------------------------------------------------------------------------------------------
# physical schemas


def logical_to_physical_top(schema: StructType, mode: str) -> dict[str, str]:
    """Top-level display name -> physical name (the keys of partitionValues and stats)."""
    return {f.name: physical_name(f, mode) for f in schema.fields}


def physical_schema(schema: StructType, mode: str) -> StructType:
    """The same schema with every struct field renamed to its physical name (metadata kept)."""
    if _check_mode(mode) == "none":
        return schema

    def do_type(t: DataType) -> DataType:
        if isinstance(t, StructType):
            return StructType(fields=tuple(replace(f, name=physical_name(f, mode), type=do_type(f.type)) for f in t.fields))
        if isinstance(t, ArrayType):
            return replace(t, element_type=do_type(t.element_type))
        if isinstance(t, MapType):
            return replace(t, key_type=do_type(t.key_type), value_type=do_type(t.value_type))
        return t

    result = do_type(schema)
    assert isinstance(result, StructType)
    return result


def void_write_blockers(schema: StructType) -> list[str]:
    """Why data files may not be written for this schema (DELTA-SCHEMA-011); empty when they may."""
    problems: list[str] = []

    def is_void(t: DataType) -> bool:
        return isinstance(t, PrimitiveType) and t.name == "void"

    def visit(t: DataType, path: str, in_collection: bool) -> None:
        if is_void(t) and in_collection:
            problems.append(f"{path}: void inside an array or map")
        elif isinstance(t, StructType):
            if t.fields and all(is_void(f.type) for f in t.fields) and path != "schema":
                problems.append(f"{path}: struct whose fields are all void")
            for f in t.fields:
                visit(f.type, f.name if path == "schema" else f"{path}.{f.name}", in_collection)
        elif isinstance(t, ArrayType):
            visit(t.element_type, f"{path}.element", True)
        elif isinstance(t, MapType):
            visit(t.key_type, f"{path}.key", True)
            visit(t.value_type, f"{path}.value", True)

    if schema.fields and all(is_void(f.type) for f in schema.fields):
        problems.append("every column of the table is void")
    visit(schema, "schema", False)
    return problems


def physical_arrow_schema(schema: StructType, mode: str) -> pa.Schema:
    """The Parquet write schema: physical names, field ids as PARQUET:field_id, void columns left out."""
    _check_mode(mode)
    blockers = void_write_blockers(schema)
    if blockers:
        raise InvalidTable(f"data files cannot be written for this schema: {blockers[0]}", rule=RULE_VOID_WRITE)
    return pa.schema([f for f in (_physical_field(f, mode) for f in schema.fields) if f is not None])


def _physical_field(f: StructField, mode: str) -> pa.Field | None:
    if isinstance(f.type, PrimitiveType) and f.type.name == "void":
        return None
    name = physical_name(f, mode)
    metadata = None
    nested: Mapping[str, Any] = {}
    if mode != "none":
        metadata = {FIELD_ID_KEY: str(_required_id(f, mode)).encode()}
        nested = f.metadata.get(NESTED_IDS_KEY) or {}
    return pa.field(name, _physical_type(f.type, mode, name, nested), nullable=f.nullable, metadata=metadata)


def _nested_meta(nested: Mapping[str, Any], key: str) -> dict[bytes, bytes] | None:
    value = nested.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTable(f"{NESTED_IDS_KEY}[{key!r}] must be an integer, got {value!r}", rule=RULE_ANNOTATED)
    return {FIELD_ID_KEY: str(value).encode()}


def _physical_type(t: DataType, mode: str, prefix: str, nested: Mapping[str, Any]) -> pa.DataType:
    if isinstance(t, StructType):
        return pa.struct([p for p in (_physical_field(f, mode) for f in t.fields) if p is not None])
    if isinstance(t, ArrayType):
        key = f"{prefix}.element"
        element = pa.field(
            "element",
            _physical_type(t.element_type, mode, key, nested),
            nullable=t.contains_null,
            metadata=_nested_meta(nested, key),
        )
        return pa.list_(element)
    if isinstance(t, MapType):
        k, v = f"{prefix}.key", f"{prefix}.value"
        return pa.map_(
            pa.field("key", _physical_type(t.key_type, mode, k, nested), nullable=False, metadata=_nested_meta(nested, k)),
            pa.field(
                "value",
                _physical_type(t.value_type, mode, v, nested),
                nullable=t.value_contains_null,
                metadata=_nested_meta(nested, v),
            ),
        )
    return to_arrow_type(t)


# ---------------------------------------------------------------------------------------------
# reader side: projecting a data file onto the logical schema


def _file_field_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidTable(f"data file column {f.name!r} has a malformed field_id {raw!r}") from None


def _any_field_id(fields: Iterable[pa.Field]) -> bool:
    for f in fields:
        if _file_field_id(f) is not None:
            return True
        if _any_field_id(_children(f.type)):
            return True
    return False


def _children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [t.value_field]
    return []


def _file_index(fields: list[pa.Field], mode: str) -> dict[Any, int]:
    index: dict[Any, int] = {}
    for i, f in enumerate(fields):
        key = _file_field_id(f) if mode == "id" else f.name
        if key is not None and key not in index:
            index[key] = i
    return index


def _logical_key(f: StructField, mode: str) -> Any:
    if mode == "id":
        return _required_id(f, mode)
    return physical_name(f, mode)


def read_file_columns(
    file_table: pa.Table, schema: StructType, mode: str, columns: list[str] | None = None
) -> pa.Table:
    """Project a data file onto the logical schema (match by name / physical name / field id).

    Columns absent from the file come back all-null; values are cast to the logical Arrow types;
    the result has display names in schema order (only ``columns`` when given).
    """
    mode = _check_mode(mode)
    n = file_table.num_rows
    if columns is None:
        wanted = list(schema.fields)
    else:
        requested = set(columns)
        unknown = [c for c in columns if schema.get(c) is None]
        if unknown:
            raise InvalidTable(f"unknown column(s) {', '.join(map(repr, unknown))}; schema has {', '.join(schema.names)}")
        wanted = [f for f in schema.fields if f.name in requested]
    file_fields = list(file_table.schema)
    if mode == "id" and file_fields and not _any_field_id(file_fields):
        raise InvalidTable(
            "data file has no Parquet field ids but the table uses column mapping mode 'id'",
            rule=RULE_ID_MISSING,
            hint="id mode resolves columns by field_id only; name-based fallback is not allowed",
        )
    index = _file_index(file_fields, mode)
    arrays = []
    for f in wanted:
        pos = None if _is_void(f.type) else index.get(_logical_key(f, mode))
        if pos is None:
            arrays.append(pa.nulls(n, type=to_arrow_type(f.type)))
        else:
            arrays.append(_project(file_table.column(pos).combine_chunks(), f.type, mode, f.name))
    return pa.Table.from_arrays(arrays, schema=pa.schema([to_arrow_field(f) for f in wanted]))


def _is_void(t: DataType) -> bool:
    return isinstance(t, PrimitiveType) and t.name == "void"


def _project(arr: pa.Array, t: DataType, mode: str, path: str) -> pa.Array:
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if _is_void(t):
        return pa.nulls(len(arr))
    if isinstance(t, StructType):
        return _project_struct(arr, t, mode, path)
    if isinstance(t, PrimitiveType) and t.name == "variant":
        return _project_variant(arr, path)
    if isinstance(t, ArrayType):
        return _project_list(arr, t, mode, path)
    if isinstance(t, MapType):
        return _project_map(arr, t, mode, path)
    return _cast(arr, t, path)


def _mask(arr: pa.Array) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def _project_struct(arr: pa.Array, t: StructType, mode: str, path: str) -> pa.Array:
    if not pa.types.is_struct(arr.type):
        raise InvalidTable(f"column {path}: data file has {arr.type} where the schema has a struct")
    file_fields = [arr.type.field(i) for i in range(arr.type.num_fields)]
    index = _file_index(file_fields, mode)
    # field(i) honours the slice offset of arr without pushing parent nulls into the children
    # (a required child of a nullable struct must stay null-free); parent nulls go in the mask.
    kids = [arr.field(i) for i in range(arr.type.num_fields)]
    children = []
    for f in t.fields:
        pos = None if _is_void(f.type) else index.get(_logical_key(f, mode))
        if pos is None:
            children.append(pa.nulls(len(arr), type=to_arrow_type(f.type)))
        else:
            children.append(_project(kids[pos], f.type, mode, f"{path}.{f.name}"))
    if not t.fields:
        return pa.array([None if m else {} for m in arr.is_null().to_pylist()], type=pa.struct([]))
    return pa.StructArray.from_arrays(children, fields=[to_arrow_field(f) for f in t.fields], mask=_mask(arr))


def _project_variant(arr: pa.Array, path: str) -> pa.Array:
    if not pa.types.is_struct(arr.type):
        raise InvalidTable(f"column {path}: a variant must be stored as struct<value, metadata>, found {arr.type}")
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    if VARIANT_VALUE not in names or VARIANT_METADATA not in names:
        raise Unsupported(
            f"column {path}: variant without plain value/metadata fields (shredded?) is not supported",
            feature="variantShredding",
        )
    kids = [arr.field(i) for i in range(arr.type.num_fields)]
    target = to_arrow_type(PrimitiveType(name="variant"))
    children = [
        _cast_arrow(kids[names.index(VARIANT_VALUE)], pa.binary(), path),
        _cast_arrow(kids[names.index(VARIANT_METADATA)], pa.binary(), path),
    ]
    return pa.StructArray.from_arrays(children, fields=list(target), mask=_mask(arr))


def _project_list(arr: pa.Array, t: ArrayType, mode: str, path: str) -> pa.Array:
    if pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type):
        arr = arr.cast(pa.list_(arr.type.value_field))
    if not pa.types.is_list(arr.type):
        raise InvalidTable(f"column {path}: data file has {arr.type} where the schema has an array")
    values = _project(arr.values, t.element_type, mode, f"{path}.element")
    return pa.ListArray.from_arrays(arr.offsets, values, type=to_arrow_type(t), mask=_mask(arr))


def _project_map(arr: pa.Array, t: MapType, mode: str, path: str) -> pa.Array:
    if not pa.types.is_map(arr.type):
        raise InvalidTable(f"column {path}: data file has {arr.type} where the schema has a map")
    # .values ignores the slice offset, matching the absolute .offsets.
    raw_keys, raw_items = arr.values.field(0), arr.values.field(1)
    keys = _project(raw_keys, t.key_type, mode, f"{path}.key")
    items = _project(raw_items, t.value_type, mode, f"{path}.value")
    return pa.MapArray.from_arrays(arr.offsets, keys, items, type=to_arrow_type(t), mask=_mask(arr))


def _cast(arr: pa.Array, t: DataType, path: str) -> pa.Array:
    if not isinstance(t, (PrimitiveType, DecimalType)):
        raise InvalidTable(f"column {path}: unexpected type {t}")
    return _cast_arrow(arr, to_arrow_type(t), path)


def _cast_arrow(arr: pa.Array, target: pa.DataType, path: str) -> pa.Array:
    if arr.type == target:
        return arr
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(target):
            # INT96 / nanosecond files: drop sub-microsecond digits, as the type has microseconds.
            return arr.cast(target, safe=False)
        raise InvalidTable(f"column {path}: data file type {arr.type} cannot be read as {target}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# writer side: logical rows -> the physical table written to Parquet


def to_physical_table(table: pa.Table, schema: StructType, mode: str) -> pa.Table:
    """Rows with display names -> the Parquet write table (physical names, field ids, no void).

    ``table`` columns (and struct children) are found by display name at every level, so their
    order does not matter; missing nullable columns are written as nulls.
    """
    target = physical_arrow_schema(schema, mode)
    present = set(table.column_names)
    for f in schema.fields:
        if f.name not in present and not f.nullable and not _is_void(f.type):
            raise InvalidTable(f"column {f.name!r} is not nullable but the rows do not have it")
    # Name-based projection first: every level is then in schema order with the logical types.
    logical = read_file_columns(table, schema, "none")
    arrays = []
    kept = [(i, f) for i, f in enumerate(schema.fields) if not _is_void(f.type)]
    for (i, f), pf in zip(kept, target):
        arrays.append(_rebuild(logical.column(i).combine_chunks(), f.type, pf.type))
    return pa.Table.from_arrays(arrays, schema=target)


def _rebuild(arr: pa.Array, t: DataType, target: pa.DataType) -> pa.Array:
    """A logical array (schema order, logical types) re-typed as its physical ``target``."""
    if isinstance(t, StructType):
        kids = [arr.field(i) for i in range(arr.type.num_fields)]
        kept = [(kid, f) for kid, f in zip(kids, t.fields) if not _is_void(f.type)]
        children = [_rebuild(kid, f.type, target.field(j).type) for j, (kid, f) in enumerate(kept)]
        if not children:
            return pa.array([None if m else {} for m in arr.is_null().to_pylist()], type=target)
        return pa.StructArray.from_arrays(children, fields=list(target), mask=_mask(arr))
    if isinstance(t, MapType):
        keys = _rebuild(arr.values.field(0), t.key_type, target.key_type)
        items = _rebuild(arr.values.field(1), t.value_type, target.item_type)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=_mask(arr))
    if isinstance(t, ArrayType):
        values = _rebuild(arr.values, t.element_type, target.value_type)
        return pa.ListArray.from_arrays(arr.offsets, values, type=target, mask=_mask(arr))
    return arr if arr.type == target else _cast_arrow(arr, target, str(t))
