"""Column Projection, Default values and Row Lineage on read: one data file to Arrow, deletes applied.

Columns are matched to the requested schema by field id, never by name or position (EVOL-014).
A file without field ids gets them from the table's ``schema.name-mapping.default`` (names are
literal; a file with neither ids nor a mapping is refused: writers must store ids, FMT-009). A
field the file does not hold resolves, in the spec's order, to the data file's identity-partition
value, else the field's ``initial-default`` (a ``{}`` struct default expands to its children's
defaults), else null; a required field with none of these is an error. A struct present in the
file fills its missing children the same way (the spec's ``point{x, y}`` table).

Type promotion on read: int -> long, float -> double, decimal(P, S) -> decimal(P', S) for
P' >= P, date -> timestamp / timestamp_ns (a date beyond the nanosecond range fails, EVOL-005),
fixed[16] -> uuid; representation-only differences (string views, time or timestamp units that
lose nothing, Parquet's timestamp zone annotation) are cast. ``unknown`` columns always read as
null, whatever the file holds (FMT-008). Variants are read as the unshredded metadata/value pair;
a shredded variant (``typed_value``) is Unsupported.

Metadata columns by reserved id: ``_file``, ``_pos``, ``_spec_id``, ``_deleted`` (always false:
deleted rows are dropped), and row lineage: ``_row_id`` is the stored value, else
``first_row_id + _pos``; ``_last_updated_sequence_number`` is the stored value, else the file's
data sequence number; both are null when the file has no ``first_row_id``.

Deletes: a DV or position delete files remove rows by position; equality delete files remove
rows whose delete columns (by id, projected like data, taken from the newest schema that still
has them when the current one dropped them) equal a delete row, null matching null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import deletes as D
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import puffin as PF
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import types as T
from reference_impl.parquet_io import open_parquet, read_parquet
from reference_impl.storage import Storage

FILE_ID = T.METADATA_COLUMNS["_file"][0]
POS_ID = T.METADATA_COLUMNS["_pos"][0]
DELETED_ID = T.METADATA_COLUMNS["_deleted"][0]
SPEC_ID_ID = T.METADATA_COLUMNS["_spec_id"][0]
ROW_ID_ID = T.METADATA_COLUMNS["_row_id"][0]
LAST_UPDATED_ID = T.METADATA_COLUMNS["_last_updated_sequence_number"][0]

# The metadata columns a read may ask for, as schema fields.
METADATA_FIELDS = {
    "_file": T.NestedField(id=FILE_ID, name="_file", type=T.STRING, required=True),
    "_pos": T.NestedField(id=POS_ID, name="_pos", type=T.LONG, required=True),
    "_deleted": T.NestedField(id=DELETED_ID, name="_deleted", type=T.BOOLEAN, required=True),
    "_spec_id": T.NestedField(id=SPEC_ID_ID, name="_spec_id", type=T.INT, required=True),
    "_row_id": T.NestedField(id=ROW_ID_ID, name="_row_id", type=T.LONG),
    "_last_updated_sequence_number": T.NestedField(id=LAST_UPDATED_ID, name="_last_updated_sequence_number", type=T.LONG),
}


# ---------------------------------------------------------------------------------------------
# Reading files (with a cache for delete files shared by many data files)


@dataclass
class ReadCache:
    """Delete files already read during one table read: a position delete file or Puffin file is read once."""

    position_tables: dict[str, pa.Table] = field(default_factory=dict)
    puffins: dict[str, tuple[bytes, PF.FileMetadata]] = field(default_factory=dict)
    parquet: dict[str, tuple[pa.Schema, pa.Table]] = field(default_factory=dict)


def _read_bytes(storage: Storage, location: str, what: str) -> bytes:
    try:
        return storage.read(S.resolve_location(storage, location))
    except FileNotFoundError:
        raise InvalidTable(f"{what} {location} does not exist", path=location, rule="ICEBERG-META-031") from None


def _need_parquet(f: MF.DataFile, what: str) -> None:
    if f.file_format != "parquet":
        raise Unsupported(f"{what} {f.file_path} is {f.file_format.upper()}; the reference reads Parquet data and delete files",
                          feature=f"iceberg:{f.file_format}-files")


def _name_mapping(md: M.TableMetadata) -> tuple[T.MappedField, ...] | None:
    raw = md.properties.get(T.NAME_MAPPING_PROPERTY)
    return None if raw is None else T.parse_name_mapping(raw)


def file_schema(schema: pa.Schema, md: M.TableMetadata, *, path: str) -> pa.Schema:
    """A data file's Arrow schema with field ids: its own, or the table's name mapping for a file that has none."""
    if T.field_ids_of_arrow(schema):
        return schema
    mapping = _name_mapping(md)
    if mapping is None:
        raise InvalidTable(f"data file {path} has no field ids and the table has no {T.NAME_MAPPING_PROPERTY}",
                           path=path, rule="ICEBERG-FMT-009", hint="set a name mapping for files imported without ids")
    return T.apply_name_mapping(schema, mapping)


def _fid(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(T.PARQUET_FIELD_ID)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidTable(f"column {f.name!r} has a bad field id {raw!r}", rule="ICEBERG-FMT-009") from None


def _children_by_id(fields: Iterable[pa.Field]) -> dict[int, tuple[int, pa.Field]]:
    out: dict[int, tuple[int, pa.Field]] = {}
    for i, f in enumerate(fields):
        fid = _fid(f)
        if fid is not None and fid not in out:
            out[fid] = (i, f)
    return out


# ---------------------------------------------------------------------------------------------
# Values and constants


def _py(value: Any, t: T.IcebergType) -> Any:
    """An internal value (values.py) as the Python value pyarrow builds ``to_arrow_type(t)`` from."""
    if value is None:
        return None
    if isinstance(t, T.StructType):
        return {f.name: _py(value.get(f.id), f.type) for f in t.fields}
    if isinstance(t, T.ListType):
        return [_py(v, t.element) for v in value]
    if isinstance(t, T.MapType):
        items = value.items() if isinstance(value, dict) else value
        return [(_py(k, t.key), _py(v, t.value)) for k, v in items]
    if t == T.UUID:
        return value.bytes
    return value


def constant(value: Any, t: T.IcebergType, n: int) -> pa.Array:
    """An ``n``-row array repeating one internal value (or null) of type ``t``."""
    at = T.to_arrow_type(t)
    if value is None or t == T.UNKNOWN:
        return pa.nulls(n, at)
    try:
        one = pa.array([_py(value, t)], type=at)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError) as exc:
        raise InvalidTable(f"value {value!r} cannot be a {t}: {exc}", rule="ICEBERG-SCHEMA-024") from None
    return one.take(pa.array(np.zeros(n, dtype=np.int32)))


# ---------------------------------------------------------------------------------------------
# Type promotion (Schema Evolution) and representation casts


def _iceberg_type_of(at: pa.DataType, where: str) -> T.IcebergType:
    try:
        return T.from_arrow_type(at, where=where)
    except (Unsupported, InvalidTable):
        raise InvalidTable(f"{where} has Arrow type {at}, which maps to no Iceberg type", rule="ICEBERG-EVOL-014") from None


def _cast(arr: pa.Array, to: pa.DataType, where: str, rule: str = "ICEBERG-EVOL-002") -> pa.Array:
    if arr.type == to:
        return arr
    try:
        return arr.cast(to, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InvalidTable(f"{where}: {arr.type} values cannot be read as {to}: {exc}", rule=rule) from None


def _primitive(arr: pa.Array, t: T.IcebergType, where: str) -> pa.Array:
    """A file column read as primitive type ``t``: same type, or a promotion the spec allows."""
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    to = T.to_arrow_type(t)
    if t == T.VARIANT:
        return _variant(arr, to, where)
    src = _iceberg_type_of(arr.type, where)
    same = src == t
    if isinstance(t, T.DecimalType) and isinstance(src, T.DecimalType):
        same = src.scale == t.scale and src.precision <= t.precision
    elif t == T.LONG:
        same = src in (T.INT, T.LONG)
    elif t == T.DOUBLE:
        same = src in (T.FLOAT, T.DOUBLE)
    elif t in T.TIMESTAMP_TYPES and src in T.TIMESTAMP_TYPES:
        # Parquet's adjustToUtc flag is not the table type; the stored integers are. The unit must not lose digits.
        same = True
        if arr.type.tz != to.tz:
            arr = arr.view(pa.timestamp(arr.type.unit))
            if to.tz is not None:
                arr = arr.cast(pa.timestamp(arr.type.unit, tz=to.tz))
    elif t in (T.TIMESTAMP, T.TIMESTAMP_NS) and src == T.DATE:
        # date -> timestamp(_ns) (v3): midnight of the day; out of range is a failure, never a wrapped value.
        return _cast(arr, to, where, rule="ICEBERG-EVOL-005")
    elif t == T.UUID:
        same = src == T.UUID or src == T.FixedType(length=16)
    elif t == T.STRING:
        same = src in (T.STRING, T.BINARY)  # some writers store UTF-8 without the annotation
    elif isinstance(t, (T.GeometryType, T.GeographyType)):
        same = src == T.BINARY
    elif t == T.TIME:
        same = src == T.TIME
    if not same:
        raise InvalidTable(f"{where} is stored as {src}, which cannot be read as {t}", rule="ICEBERG-EVOL-002")
    return _cast(arr, to, where)


def _variant(arr: pa.Array, to: pa.DataType, where: str) -> pa.Array:
    if not pa.types.is_struct(arr.type):
        raise InvalidTable(f"{where} is a variant stored as {arr.type}, not a metadata/value group", rule="ICEBERG-TYPE-017")
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    if "typed_value" in names:
        raise Unsupported(f"{where} is a shredded variant; the reference reads unshredded variants only", feature="iceberg:variant-shredding")
    if T.VARIANT_METADATA not in names or T.VARIANT_VALUE not in names:
        raise InvalidTable(f"{where} is a variant without metadata and value fields", rule="ICEBERG-TYPE-017")
    kids = [_cast(arr.field(names.index(n)), pa.binary(), where) for n in (T.VARIANT_METADATA, T.VARIANT_VALUE)]
    return pa.StructArray.from_arrays(kids, fields=list(to), mask=arr.is_null())


# ---------------------------------------------------------------------------------------------
# Projection by field id


def _default(f: T.NestedField, where: str, n: int) -> pa.Array:
    value = T.effective_default(f)
    if value is None and f.required and f.initial_default is T.NO_DEFAULT:
        raise InvalidTable(f"{where}: required field {f.name} (id {f.id}) is not in the data file and has no initial-default",
                           rule="ICEBERG-SCHEMA-019")
    return constant(value, f.type, n)


def _normalised_offsets(arr: pa.Array) -> tuple[pa.Array, int, int]:
    offsets = arr.offsets
    start = offsets[0].as_py() if len(offsets) else 0
    end = offsets[-1].as_py() if len(offsets) else 0
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets.cast(pa.int32()), start, end - start


def project_field(tf: T.NestedField, ff: pa.Field | None, arr: pa.Array | None, n: int, *, where: str = "") -> pa.Array:
    """File column ``arr`` (described by ``ff``, None when absent) as table field ``tf``, matched by ids all the way down."""
    where = f"{where}.{tf.name}" if where else tf.name
    t = tf.type
    if t == T.UNKNOWN:
        return pa.nulls(n, pa.null())  # whatever the file holds (FMT-008)
    if arr is None:
        return _default(tf, where, n)
    if isinstance(t, T.StructType):
        if not pa.types.is_struct(arr.type):
            raise InvalidTable(f"{where} is a struct in the table but {arr.type} in the file", rule="ICEBERG-EVOL-013")
        # Ids come from the file's schema (``ff``: a name mapping may have supplied them); values from ``arr``.
        kids_by_id = _children_by_id(ff.type)
        kids = []
        for c in t.fields:
            hit = kids_by_id.get(c.id)
            kids.append(project_field(c, hit[1] if hit else None, arr.field(hit[0]) if hit else None, len(arr), where=where))
        if not t.fields:
            return pa.array([None if v is None else {} for v in arr.to_pylist()], type=pa.struct([]))
        return pa.StructArray.from_arrays(kids, fields=[T.to_arrow_field(c) for c in t.fields], mask=arr.is_null() if arr.null_count else None)
    if isinstance(t, T.ListType):
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type)):
            raise InvalidTable(f"{where} is a list in the table but {arr.type} in the file", rule="ICEBERG-EVOL-013")
        ef = ff.type.value_field
        if pa.types.is_fixed_size_list(arr.type):
            arr = arr.cast(pa.list_(arr.type.value_field))
        offsets, start, length = _normalised_offsets(arr)
        values = arr.values.slice(start, length)
        elem = t.element_field
        got = project_field(elem, ef, values if _fid(ef) == elem.id else None, length, where=where)
        return pa.ListArray.from_arrays(offsets, got, type=T.to_arrow_type(t), mask=arr.is_null() if arr.null_count else None)
    if isinstance(t, T.MapType):
        if not pa.types.is_map(arr.type):
            raise InvalidTable(f"{where} is a map in the table but {arr.type} in the file", rule="ICEBERG-EVOL-013")
        kf, vf = ff.type.key_field, ff.type.item_field
        offsets, start, length = _normalised_offsets(arr)
        keys, items = arr.keys.slice(start, length), arr.items.slice(start, length)
        got_k = project_field(t.key_field, kf, keys if _fid(kf) == t.key_id else None, length, where=where)
        got_v = project_field(t.value_field, vf, items if _fid(vf) == t.value_id else None, length, where=where)
        return pa.MapArray.from_arrays(offsets, got_k, got_v, type=T.to_arrow_type(t), mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_struct(arr.type) and t != T.VARIANT:
        raise InvalidTable(f"{where} is {t} in the table but a struct in the file", rule="ICEBERG-EVOL-013")
    return _primitive(arr, t, where)


def project(table: pa.Table, schema: pa.Schema, fields: Sequence[T.NestedField], n: int, *,
            constants: Mapping[int, pa.Array] | None = None, overrides: Mapping[int, pa.Array] | None = None,
            where: str = "") -> list[pa.Array]:
    """Top-level ``fields`` from a file table whose Arrow ``schema`` carries field ids.

    ``constants`` fill ids the file does not hold (identity partition values); ``overrides`` replace
    ids whatever the file holds (metadata columns).
    """
    by_id = _children_by_id(schema)
    constants = constants or {}
    overrides = overrides or {}
    out = []
    for tf in fields:
        hit = by_id.get(tf.id)
        if tf.id in overrides:
            out.append(overrides[tf.id])
        elif hit is not None and tf.type != T.UNKNOWN:
            col = table.column(schema.field(hit[0]).name)
            out.append(project_field(tf, hit[1], col.combine_chunks() if col.num_chunks != 1 else col.chunk(0), n, where=where))
        elif tf.id in constants:
            out.append(constants[tf.id])
        else:
            out.append(project_field(tf, None, None, n, where=where))
    return out


# ---------------------------------------------------------------------------------------------
# Deletes


def _position_table(storage: Storage, f: MF.DataFile, cache: ReadCache) -> pa.Table:
    t = cache.position_tables.get(f.file_path)
    if t is None:
        _need_parquet(f, "position delete file")
        t = D.read_position_deletes(_read_bytes(storage, f.file_path, "position delete file"), path=f.file_path)
        cache.position_tables[f.file_path] = t
    return t


def _dv_positions(storage: Storage, f: MF.DataFile, cache: ReadCache) -> np.ndarray:
    got = cache.puffins.get(f.file_path)
    if got is None:
        data = _read_bytes(storage, f.file_path, "deletion vector file")
        got = (data, PF.read_footer(data, path=f.file_path))
        cache.puffins[f.file_path] = got
    return D.read_dv(got[0], f, footer=got[1])


def _equality_field(md: M.TableMetadata, fid: int, where: str) -> tuple[T.NestedField, ...]:
    """The chain (top-level field .. leaf) of an equality id, from the current schema or the newest older one that has it."""
    for schema in (md.schema(),) + tuple(reversed(md.schemas)):
        for f, _path, anc in T.walk_with_context(schema):
            if f.id == fid:
                if any(not isinstance(a.type, T.StructType) for a in anc):
                    raise InvalidTable(f"{where}: equality id {fid} is inside a list or map", rule="ICEBERG-DELETE-013")
                return tuple(anc) + (f,)
    raise InvalidTable(f"{where}: equality id {fid} is in none of the table's schemas", rule="ICEBERG-DELETE-012")


def _leaf(top: pa.Array, chain: tuple[T.NestedField, ...]) -> pa.Array:
    arr = top
    for parent, child in zip(chain, chain[1:]):
        idx = [c.id for c in parent.type.fields].index(child.id)
        arr = pc.struct_field(arr, [idx])  # a null parent makes the leaf null (Equality Delete Files)
    return arr


def _key_table(table: pa.Table, schema: pa.Schema, chains: list[tuple[T.NestedField, ...]], n: int,
               constants: Mapping[int, pa.Array], where: str) -> pa.Table:
    tops = project(table, schema, [c[0] for c in chains], n, constants=constants, where=where)
    cols = [_leaf(top, chain) for top, chain in zip(tops, chains)]
    return pa.table({str(i): c for i, c in enumerate(cols)})


def _equality_table(storage: Storage, md: M.TableMetadata, f: MF.DataFile, chains: list[tuple[T.NestedField, ...]],
                    cache: ReadCache) -> pa.Table:
    got = cache.parquet.get(f.file_path)
    if got is None:
        _need_parquet(f, "equality delete file")
        pf = open_parquet(_read_bytes(storage, f.file_path, "equality delete file"))
        schema = file_schema(pf.schema_arrow, md, path=f.file_path)
        got = (schema, read_parquet(pf))
        cache.parquet[f.file_path] = got
    schema, table = got
    present = T.field_ids_of_arrow(schema)
    missing = [c[-1].id for c in chains if c[-1].id not in present]
    if missing:
        raise InvalidTable(f"equality delete file {f.file_path} lacks its delete columns {missing}", path=f.file_path,
                           rule="ICEBERG-MANIFEST-035")
    return _key_table(table, schema, chains, table.num_rows, {}, f"equality delete file {f.file_path}")


# ---------------------------------------------------------------------------------------------
# One data file


def check_unique_ids(fields: Sequence[T.NestedField]) -> None:
    """Refuse a read schema in which two fields share an id: projection by id would be ambiguous (SCHEMA-001)."""
    seen: dict[int, str] = {}
    for fid, f in T.walk_fields(T.StructType(fields=tuple(fields))):
        if fid in seen:
            raise InvalidTable(f"field id {fid} is used by both {seen[fid]!r} and {f.name!r}: columns are matched by id, so the "
                               "schema is ambiguous", rule="ICEBERG-SCHEMA-001")
        seen[fid] = f.name


def identity_constants(md: M.TableMetadata, spec_id: int, data_file: MF.DataFile, schema: T.Schema | Sequence[T.NestedField], n: int) -> dict[int, pa.Array]:
    """Columns a file may omit because an identity partition field holds their value (metadata-only Hive imports)."""
    spec = md.spec_by_id(spec_id)
    if spec is None:
        raise InvalidTable(f"data file {data_file.file_path} was written with spec {spec_id}, which the table does not list",
                           rule="ICEBERG-MLIST-005")
    fields = schema.fields if isinstance(schema, T.Schema) else schema
    top = {f.id: f for f in fields}
    out = {}
    for pf_ in spec.fields:
        if isinstance(pf_.transform, X.IdentityTransform) and len(pf_.source_ids) == 1 and pf_.field_id in data_file.partition:
            src = top.get(pf_.source_id)
            if src is not None and T.is_primitive(src.type) and src.type != T.UNKNOWN:
                out[src.id] = constant(data_file.partition[pf_.field_id], src.type, n)
    return out


def read_task(storage: Storage, md: M.TableMetadata, task: Any, schema: T.Schema | Sequence[T.NestedField], *,
              with_positions: bool = False, cache: ReadCache | None = None) -> pa.Table:
    """The live rows of one scan task's data file, deletes applied, projected to ``schema`` by field id.

    ``with_positions`` appends ``_file`` (string) and ``_pos`` (int64, the row's position in the file).
    A data or delete file that Parquet cannot decode makes the table invalid, named by the data file.
    """
    try:
        return _read_task(storage, md, task, schema, with_positions=with_positions, cache=cache)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        f = task.data_file
        raise InvalidTable(f"data file {f.file_path} or one of its delete files is not readable Parquet: "
                           f"{type(exc).__name__}: {exc}", path=f.file_path) from None


def _read_task(storage: Storage, md: M.TableMetadata, task: Any, schema: T.Schema | Sequence[T.NestedField], *,
               with_positions: bool, cache: ReadCache | None) -> pa.Table:
    cache = cache if cache is not None else ReadCache()
    f: MF.DataFile = task.data_file
    where = f"data file {f.file_path}"
    _need_parquet(f, "data file")
    pf = open_parquet(_read_bytes(storage, f.file_path, "data file"))
    fschema = file_schema(pf.schema_arrow, md, path=f.file_path)
    n = pf.metadata.num_rows
    fields = list(schema.fields if isinstance(schema, T.Schema) else schema)
    check_unique_ids(fields)

    deletes = list(task.deletes)
    eq_files = [d for d in deletes if d.content == MF.EQUALITY_DELETES]
    chains_by_file = {id(d): [_equality_field(md, fid, f"equality delete file {d.file_path}") for fid in d.equality_ids] for d in eq_files}

    # Read only the top-level columns something needs: the projection, equality keys and stored lineage.
    wanted = {tf.id for tf in fields} | {ROW_ID_ID, LAST_UPDATED_ID}
    for chains in chains_by_file.values():
        wanted |= {c[0].id for c in chains}
    names = [fschema.field(i).name for i, (fid) in enumerate(_fid(x) for x in fschema) if fid in wanted]
    table = read_parquet(pf, columns=names) if names else pa.table({})
    sub_schema = pa.schema([fschema.field(fschema.get_field_index(nm)) for nm in names]) if names else pa.schema([])
    if names and table.num_rows != n:  # pragma: no cover - pyarrow returns every row
        raise InvalidTable(f"{where}: read {table.num_rows} rows of {n}")

    keep = np.ones(n, dtype=bool)
    for d in deletes:
        if d.content == MF.POSITION_DELETES:
            pos = _dv_positions(storage, d, cache) if D.is_dv(d) else D.positions_for(_position_table(storage, d, cache), f.file_path)
            pos = pos[(pos >= 0) & (pos < n)]
            keep[pos] = False
    if eq_files:
        consts = identity_constants(md, task.spec_id, f, [c[0] for chains in chains_by_file.values() for c in chains], n)
        for d in eq_files:
            chains = chains_by_file[id(d)]
            data_keys = _key_table(table, sub_schema, chains, n, consts, where)
            deleted = D.equality_delete_mask(data_keys, _equality_table(storage, md, d, chains, cache))
            keep &= ~deleted

    positions = np.arange(n, dtype=np.int64)
    constants = identity_constants(md, task.spec_id, f, fields, n)
    overrides = _metadata_columns(fields, table, sub_schema, task, positions, n)
    cols = project(table, sub_schema, fields, n, constants=constants, overrides=overrides, where=where)
    out_fields = [T.to_arrow_field(tf) for tf in fields]
    result = pa.Table.from_arrays(cols, schema=pa.schema(out_fields))
    if with_positions:
        result = result.append_column(pa.field("_file", pa.string(), nullable=False), constant(f.file_path, T.STRING, n))
        result = result.append_column(pa.field("_pos", pa.int64(), nullable=False), pa.array(positions))
    if not keep.all():
        result = result.filter(pa.array(keep))
    return result


def _metadata_columns(fields: Sequence[T.NestedField], table: pa.Table, schema: pa.Schema, task: Any,
                      positions: np.ndarray, n: int) -> dict[int, pa.Array]:
    """Values of the reserved metadata columns a read asked for (row lineage inherited as Row Lineage says)."""
    ids = {tf.id for tf in fields}
    f: MF.DataFile = task.data_file
    out: dict[int, pa.Array] = {}
    if FILE_ID in ids:
        out[FILE_ID] = constant(f.file_path, T.STRING, n)
    if POS_ID in ids:
        out[POS_ID] = pa.array(positions)
    if SPEC_ID_ID in ids:
        out[SPEC_ID_ID] = constant(task.spec_id, T.INT, n)
    if DELETED_ID in ids:
        out[DELETED_ID] = constant(False, T.BOOLEAN, n)
    by_id = _children_by_id(schema)
    for fid, inherited in ((ROW_ID_ID, None if f.first_row_id is None else pa.array(positions + f.first_row_id)),
                           (LAST_UPDATED_ID, None if f.first_row_id is None else constant(task.data_sequence_number, T.LONG, n))):
        if fid not in ids:
            continue
        if inherited is None:
            out[fid] = pa.nulls(n, pa.int64())  # no first_row_id: no lineage, stored values or not (LINEAGE-007)
            continue
        hit = by_id.get(fid)
        if hit is None:
            out[fid] = inherited
        else:
            stored = _primitive(table.column(schema.field(hit[0]).name).combine_chunks(), T.LONG, f"{f.file_path} {hit[1].name}")
            out[fid] = pc.coalesce(stored, inherited)
    return out


def metadata_field(name: str) -> T.NestedField | None:
    """The reserved field for a metadata column name (``_file``, ``_pos``, ``_row_id``, ...), or None."""
    return METADATA_FIELDS.get(name)
