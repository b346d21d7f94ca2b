"""Writing data files (Writing data files; Appendix A, Parquet) and their metrics (Data File Fields).

Rows arrive as Arrow with column names; ``conform`` turns them into the table schema's Arrow form,
every field (nested ones too) carrying its Iceberg id as ``PARQUET:field_id`` (FMT-009), missing
columns filled with their ``write-default`` or null (SCHEMA-018/019), ``unknown`` columns left out
(FMT-008). ``write_data_files`` splits rows per partition tuple (computed with the spec's
transforms), writes one or more Parquet files per tuple through ``put_if_absent`` (files are never
replaced, GEN-009) and returns their ``DataFile`` entries with the metrics of the spec's metrics
maps: value, null and NaN counts, column sizes from the footer, and lower/upper bounds in the
binary single-value form (full values: no truncation, which is always a valid bound).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reference_impl.errors import Internal, InvalidTable, Unsupported
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.parquet_io import read_parquet_metadata
from reference_impl.storage import Storage, new_uuid

DATA_DIR = "data"
PARQUET = "parquet"
# Table properties (Java's names; the spec leaves write options to implementations).
COMPRESSION_PROPERTY = "write.parquet.compression-codec"
DEFAULT_COMPRESSION = "zstd"
_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "lz4": "lz4", "uncompressed": "none", "none": "none", "brotli": "brotli"}

# Row lineage columns a writer copies when it moves existing rows (Row Lineage; Reserved Field IDs).
ROW_ID = "_row_id"
LAST_UPDATED_SEQUENCE_NUMBER = "_last_updated_sequence_number"
ROW_ID_FIELD_ID = T.METADATA_COLUMNS[ROW_ID][0]
LAST_UPDATED_FIELD_ID = T.METADATA_COLUMNS[LAST_UPDATED_SEQUENCE_NUMBER][0]
LINEAGE_FIELDS = (
    pa.field(ROW_ID, pa.int64(), metadata={T.PARQUET_FIELD_ID: str(ROW_ID_FIELD_ID).encode()}),
    pa.field(LAST_UPDATED_SEQUENCE_NUMBER, pa.int64(), metadata={T.PARQUET_FIELD_ID: str(LAST_UPDATED_FIELD_ID).encode()}),
)
_NO_BOUNDS = (T.UNKNOWN, T.VARIANT)


# ---------------------------------------------------------------------------------------------
# Conforming rows to the table schema


def _cast(col: pa.Array | pa.ChunkedArray, f: T.NestedField, where: str) -> pa.Array:
    """One column as the Arrow form of ``f.type`` (structs matched by child name, recursively)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    target = T.to_arrow_type(f.type)
    if isinstance(f.type, T.StructType) and pa.types.is_struct(col.type) and f.type != T.VARIANT:
        names = [col.type.field(i).name for i in range(col.type.num_fields)]
        extra = [n for n in names if f.type.field_by_name(n) is None]
        if extra:
            raise InvalidTable(f"struct {where} has fields {extra} that the table schema does not know",
                               hint="add the fields to the schema first")
        children = []
        flat = col.flatten()
        for child in f.type.fields:
            sub = f"{where}.{child.name}"
            if child.name in names:
                children.append(_cast(flat[names.index(child.name)], child, sub))
            else:
                children.append(_fill(child, len(col), sub))
        mask = col.is_null() if col.null_count else None
        return pa.StructArray.from_arrays(children, fields=[T.to_arrow_field(c) for c in f.type.fields], mask=mask)
    if col.type.equals(target):
        return col
    if f.type == T.UUID and isinstance(col.type, pa.ExtensionType):
        col = col.storage
    try:
        return col.cast(target)
    except (pa.ArrowException, ValueError) as exc:
        raise InvalidTable(f"column {where}: values of Arrow type {col.type} cannot be written as {f.type}: {exc}") from None


def _fill(f: T.NestedField, n: int, where: str) -> pa.Array:
    """The column a write leaves out: its write-default (v3) or null; a required field without one fails (SCHEMA-018)."""
    default = T.effective_default(f, which="write")
    if default is None:
        if f.required:
            raise InvalidTable(f"required column {where} is missing and has no write-default", rule="ICEBERG-SCHEMA-018")
        return pa.nulls(n, T.to_arrow_type(f.type))
    if isinstance(f.type, T.StructType):
        children = [_fill(c, n, f"{where}.{c.name}") for c in f.type.fields]
        return pa.StructArray.from_arrays(children, fields=[T.to_arrow_field(c) for c in f.type.fields])
    return X.internal_to_arrow([default] * n, f.type)


def _check_required(arr: pa.Array, f: T.NestedField, where: str) -> None:
    if f.required and arr.null_count:
        raise InvalidTable(f"required column {where} holds {arr.null_count} null value(s)", rule="ICEBERG-SCHEMA-002")
    if isinstance(f.type, T.StructType) and pa.types.is_struct(arr.type) and f.type != T.VARIANT:
        for i, child in enumerate(arr.flatten()):
            c = f.type.fields[i]
            # A required child may be null where its optional parent struct is null.
            if c.required:
                bad = pc.sum(pc.and_(pc.is_valid(arr), pc.is_null(child))).as_py() or 0
                if bad:
                    raise InvalidTable(f"required column {where}.{c.name} holds {bad} null value(s)", rule="ICEBERG-SCHEMA-002")
            _check_required(child, c, f"{where}.{c.name}")


def data_arrow_schema(schema: T.Schema) -> pa.Schema:
    """The Arrow schema of a data file: every field with its id, ``unknown`` columns left out (FMT-008)."""
    return T.to_arrow_schema(schema, include_unknown=False)


def conform(rows: pa.Table, schema: T.Schema) -> pa.Table:
    """Rows (by column name) as the table schema's data-file Arrow table; InvalidTable on unknown or mistyped columns."""
    if not isinstance(rows, pa.Table):
        raise InvalidTable(f"rows must be a pyarrow.Table, not {type(rows).__name__}")
    names = [f.name for f in schema.fields]
    if len(set(rows.column_names)) != len(rows.column_names):
        raise InvalidTable(f"rows repeat a column name: {rows.column_names}")
    extra = [c for c in rows.column_names if c not in names and c not in (ROW_ID, LAST_UPDATED_SEQUENCE_NUMBER)]
    if extra:
        raise InvalidTable(f"columns {extra} are not in the table schema {names}",
                           hint="use overwrite() to replace the schema or add_column() to add one")
    n = rows.num_rows
    arrays, fields = [], []
    for f in schema.fields:
        if f.type == T.UNKNOWN:
            if f.name in rows.column_names and rows.column(f.name).null_count != n:
                raise InvalidTable(f"column {f.name} is of type unknown and can only hold null", rule="ICEBERG-TYPE-002")
            continue
        arr = _cast(rows.column(f.name), f, f.name) if f.name in rows.column_names else _fill(f, n, f.name)
        _check_required(arr, f, f.name)
        arrays.append(arr)
        fields.append(T.to_arrow_field(f))
    for lf in LINEAGE_FIELDS:
        if lf.name in rows.column_names:
            arrays.append(rows.column(lf.name).combine_chunks().cast(pa.int64()))
            fields.append(lf)
    if not fields and n:
        # A Parquet file without columns cannot carry its row count through pyarrow.
        raise Unsupported("writing rows of a table without a stored column (every column is unknown-typed)", feature="unknown-only-schema")
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


# ---------------------------------------------------------------------------------------------
# Partition tuples


def _column_by_id(table: pa.Table, schema: T.Schema, field_id: int) -> pa.Array:
    """The Arrow values of a (possibly struct-nested) source field, nulls of parents included."""
    parents = T.index_parents(schema)
    chain = [field_id]
    while parents.get(chain[-1]) is not None:
        chain.append(parents[chain[-1]])
    chain.reverse()
    top = schema.find_field(chain[0])
    col = table.column(top.name).combine_chunks()
    t = top.type
    for fid in chain[1:]:
        if not isinstance(t, T.StructType):
            raise InvalidTable(f"partition source {field_id} is inside a list or map", rule="ICEBERG-PART-004")
        idx = [c.id for c in t.fields].index(fid)
        col = col.flatten()[idx]
        t = t.fields[idx].type
    return col


def _key(v: Any) -> Any:
    # NaN != NaN: one group for every NaN of an identity-partitioned float column.
    return ("NaN",) if isinstance(v, float) and math.isnan(v) else v


def partition_groups(table: pa.Table, schema: T.Schema, spec: P.PartitionSpec) -> list[tuple[dict[int, Any], pa.Table]]:
    """Rows split by partition tuple: [({partition field id: internal value}, rows)], first-seen order."""
    P.check_writable(spec)
    if not spec.fields or table.num_rows == 0:
        return [({f.field_id: None for f in spec.fields}, table)] if table.num_rows else []
    columns = []
    for f in spec.fields:
        src = schema.find_type(f.source_id)
        if src is None:
            raise InvalidTable(f"partition field {f.name!r} refers to missing source id {f.source_id}", rule="ICEBERG-PART-002")
        if isinstance(f.transform, X.VoidTransform):
            columns.append([None] * table.num_rows)
            continue
        out = f.transform.apply_arrow(_column_by_id(table, schema, f.source_id), src)
        columns.append(X.arrow_to_internal(out, f.transform.result_type(src)))
    groups: dict[tuple, tuple[tuple, list[int]]] = {}
    for i, values in enumerate(zip(*columns)):
        k = tuple(_key(v) for v in values)
        groups.setdefault(k, (values, []))[1].append(i)
    return [({f.field_id: v for f, v in zip(spec.fields, values)}, table.take(pa.array(idx, pa.int64())))
            for values, idx in groups.values()]


# ---------------------------------------------------------------------------------------------
# Metrics (Data File Fields: the metrics maps)


@dataclass(frozen=True, slots=True, kw_only=True)
class Metrics:
    """The metrics maps of one data file, keyed by field id (bounds as single-value bytes)."""

    record_count: int
    column_sizes: Mapping[int, int]
    value_counts: Mapping[int, int]
    null_value_counts: Mapping[int, int]
    nan_value_counts: Mapping[int, int]
    lower_bounds: Mapping[int, bytes]
    upper_bounds: Mapping[int, bytes]
    split_offsets: tuple[int, ...] | None


def _physical_paths(arrow: pa.Schema) -> dict[str, int]:
    """Parquet leaf column paths ("s.a", "l.list.element", "m.key_value.key") -> field id."""
    out: dict[str, int] = {}

    def fid(f: pa.Field) -> int | None:
        raw = (f.metadata or {}).get(T.PARQUET_FIELD_ID)
        return int(raw) if raw is not None else None

    def rec(f: pa.Field, path: str, own: int | None) -> None:
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                c = t.field(i)
                rec(c, f"{path}.{c.name}", fid(c))
        elif pa.types.is_map(t):
            rec(t.key_field, f"{path}.key_value.key", fid(t.key_field))
            rec(t.item_field, f"{path}.key_value.value", fid(t.item_field))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            rec(t.value_field, f"{path}.list.element", fid(t.value_field))
        elif own is not None:
            out[path] = own

    for f in arrow:
        rec(f, f.name, fid(f))
    return out


def _float_bounds(values: list[float]) -> tuple[float | None, float | None, int]:
    nans = sum(1 for v in values if math.isnan(v))
    real = [v for v in values if not math.isnan(v)]
    if not real:
        return None, None, nans
    lo, hi = min(real), max(real)
    # IEEE totalOrder for the zeros (MANIFEST-032): -0.0 must lead, +0.0 must close.
    if lo == 0.0 and any(v == 0.0 and math.copysign(1.0, v) < 0 for v in real):
        lo = -0.0
    if hi == 0.0 and any(v == 0.0 and math.copysign(1.0, v) > 0 for v in real):
        hi = 0.0
    return lo, hi, nans


def _leaf_arrays(table: pa.Table, schema: T.Schema) -> Iterable[tuple[T.NestedField, pa.Array]]:
    """Primitive columns not inside a list or map, with parent nulls folded in (bounds and NaN counts)."""

    def rec(f: T.NestedField, arr: pa.Array) -> Iterable[tuple[T.NestedField, pa.Array]]:
        if isinstance(f.type, T.StructType):
            for c, sub in zip(f.type.fields, arr.flatten()):
                yield from rec(c, sub)
        elif T.is_primitive(f.type):
            yield f, arr

    for f in schema.fields:
        if f.name in table.column_names and f.type != T.UNKNOWN:
            yield from rec(f, table.column(f.name).combine_chunks())


def compute_metrics(data: bytes, table: pa.Table, schema: T.Schema) -> Metrics:
    """Metrics of a written Parquet file: sizes and counts from its footer, NaN counts and bounds from the rows."""
    meta = read_parquet_metadata(data)
    paths = _physical_paths(table.schema)
    sizes: dict[int, int] = {}
    values: dict[int, int] = {}
    nulls: dict[int, int] = {}
    offsets = []
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        if group.num_columns:
            first = group.column(0)
            start = first.data_page_offset
            if first.has_dictionary_page and first.dictionary_page_offset is not None and first.dictionary_page_offset > 0:
                start = min(start, first.dictionary_page_offset)
            offsets.append(start)
        for c in range(group.num_columns):
            col = group.column(c)
            fid = paths.get(col.path_in_schema)
            if fid is None:
                continue  # variant metadata/value: no field id of their own
            sizes[fid] = sizes.get(fid, 0) + col.total_compressed_size
            values[fid] = values.get(fid, 0) + col.num_values
            stats = col.statistics
            if stats is not None and stats.has_null_count:
                nulls[fid] = nulls.get(fid, 0) + stats.null_count
    nan_counts: dict[int, int] = {}
    lower: dict[int, Any] = {}
    upper: dict[int, Any] = {}
    for f, arr in _leaf_arrays(table, schema):
        nulls[f.id] = arr.null_count  # exact, parent nulls included
        if f.type in _NO_BOUNDS or isinstance(f.type, (T.GeometryType, T.GeographyType)):
            continue
        live = arr.drop_null()
        if f.type in (T.FLOAT, T.DOUBLE):
            lo, hi, nans = _float_bounds(live.to_pylist())
            nan_counts[f.id] = nans
        elif len(live):
            internal = X.arrow_to_internal(live, f.type)
            lo, hi = min(internal), max(internal)
        else:
            lo = hi = None
        if lo is not None:
            lower[f.id], upper[f.id] = lo, hi
    return Metrics(
        record_count=meta.num_rows,
        column_sizes=sizes,
        value_counts=values,
        null_value_counts=nulls,
        nan_value_counts=nan_counts,
        lower_bounds=MF.encode_bounds(lower, schema),
        upper_bounds=MF.encode_bounds(upper, schema),
        split_offsets=tuple(sorted(offsets)) or None,
    )


# ---------------------------------------------------------------------------------------------
# Writing


def compression_for(properties: Mapping[str, str]) -> str:
    """The pyarrow codec for the table's ``write.parquet.compression-codec`` (default zstd)."""
    name = str(properties.get(COMPRESSION_PROPERTY, DEFAULT_COMPRESSION)).strip().lower()
    if name not in _CODECS:
        raise Unsupported(f"{COMPRESSION_PROPERTY}={name!r} is not a codec this writer knows", feature=COMPRESSION_PROPERTY,
                          hint=f"use one of {sorted(_CODECS)}")
    return _CODECS[name]


def parquet_bytes(table: pa.Table, *, compression: str = DEFAULT_COMPRESSION) -> bytes:
    """A Parquet file of ``table`` (field ids from the Arrow metadata, 3-level lists and maps)."""
    buf = io.BytesIO()
    try:
        pq.write_table(table, buf, compression=compression, version="2.6", use_compliant_nested_type=True,
                       store_schema=False, write_statistics=True)
    except (pa.ArrowException, ValueError) as exc:
        raise Internal(f"cannot write a Parquet data file: {exc}") from None
    return buf.getvalue()


def write_data_file(
    storage: Storage,
    table: pa.Table,
    *,
    schema: T.Schema,
    spec: P.PartitionSpec,
    partition: Mapping[int, Any],
    relative_path: str,
    compression: str = DEFAULT_COMPRESSION,
    sort_order_id: int | None = P.UNSORTED_ORDER_ID,
) -> MF.DataFile:
    """Write one conformed table as a Parquet data file (put-if-absent) and return its DataFile."""
    data = parquet_bytes(table, compression=compression)
    storage.put_if_absent(relative_path, data)
    m = compute_metrics(data, table, schema)
    return MF.DataFile(
        content=MF.DATA,
        file_path=storage.uri(relative_path),
        file_format=PARQUET,
        partition=dict(partition),
        record_count=m.record_count,
        file_size_in_bytes=len(data),
        column_sizes=m.column_sizes,
        value_counts=m.value_counts,
        null_value_counts=m.null_value_counts,
        nan_value_counts=m.nan_value_counts,
        lower_bounds=m.lower_bounds,
        upper_bounds=m.upper_bounds,
        split_offsets=m.split_offsets,
        sort_order_id=sort_order_id,
    )


def data_file_path(spec: P.PartitionSpec, schema: T.Schema, partition: Mapping[int, Any], *, index: int = 0, prefix: str = DATA_DIR) -> str:
    """``data/<name=value/...>/<index>-<uuid>.parquet``, the directory as Java names partitions."""
    name = f"{index:05d}-{new_uuid()}.parquet"
    if not spec.fields:
        return f"{prefix}/{name}"
    directory = P.partition_path(spec, schema, tuple(partition.get(f.field_id) for f in spec.fields))
    return f"{prefix}/{directory}/{name}"


def write_data_files(
    storage: Storage,
    rows: pa.Table,
    *,
    schema: T.Schema,
    spec: P.PartitionSpec,
    properties: Mapping[str, str] | None = None,
    files: int = 1,
    conformed: bool = False,
) -> list[MF.DataFile]:
    """Conform rows, split them by partition tuple and into up to ``files`` files per tuple, write them."""
    if isinstance(files, bool) or not isinstance(files, int) or files < 1:
        raise InvalidTable(f"files must be an int >= 1, got {files!r}")
    table = rows if conformed else conform(rows, schema)
    compression = compression_for(properties or {})
    out = []
    for partition, group in partition_groups(table, schema, spec):
        n = group.num_rows
        chunks = min(files, n)
        bounds = [round(i * n / chunks) for i in range(chunks + 1)]
        for i in range(chunks):
            part = group.slice(bounds[i], bounds[i + 1] - bounds[i])
            rel = data_file_path(spec, schema, partition, index=i)
            out.append(write_data_file(storage, part, schema=schema, spec=spec, partition=partition,
                                       relative_path=rel, compression=compression))
    return out


def with_lineage(table: pa.Table, row_ids: Sequence[int | None] | pa.Array, last_updated: Sequence[int | None] | pa.Array) -> pa.Table:
    """``table`` plus the row-lineage columns ``_row_id`` and ``_last_updated_sequence_number`` (LINEAGE-008)."""
    out = table
    for lf, values in zip(LINEAGE_FIELDS, (row_ids, last_updated)):
        arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(list(values), pa.int64())
        if lf.name in out.column_names:
            out = out.drop_columns([lf.name])
        out = out.append_column(lf, arr)
    return out
