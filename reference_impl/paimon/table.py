"""Reading a Paimon table: the snapshot to read, its live data files, and the rows (Java ``DataTableBatchScan``,
``SnapshotReaderImpl``, ``MergeFileSplitRead``, ``RawFileSplitRead``, ``FormatReaderMapping``, ``PartitionUtils``).

Which snapshot: the latest of the main branch (or of ``branch``); or one chosen by snapshot id (the kit's
version number for Paimon is the snapshot id; version 0 is before the first commit: no rows, latest
schema), tag or time (the latest snapshot committed at or before it). Which schema: for a chosen
snapshot, its ``schemaId`` (PAIMON-SCHEMA-015); for the latest state (and a table with no snapshot
yet), the highest-numbered schema, so a schema change shows before the next commit (Java, pypaimon).

Which files: the snapshot's live data files (base + delta manifest replay), never a directory listing
(PAIMON-LAYOUT-009). A batch read drops what Java's batch scan drops:

* entries of the postpone bucket (-2) when the table's ``bucket`` is -2 (``onlyReadRealBuckets``): they
  become visible once a compaction assigns real buckets;
* for primary-key tables, level-0 files when ``CoreOptions.batchScanSkipLevel0`` holds: deletion vectors
  enabled without ``deletion-vectors.merge-on-read``, or (without deletion vectors) the first-row merge
  engine. Those files are invisible until a compaction moves them up.

Each file is read with its own schema (its ``_SCHEMA_ID``) projected by field id onto the read schema
(PAIMON-SCHEMA-007, PAIMON-MANIFEST-021), then its deletion vector applied (PAIMON-INDEX-008). Partition
columns always take the value of the entry's ``_PARTITION`` BinaryRow, as Java's ``PartitionUtils``
mapping does (it never reads them from the file; PAIMON-PART-005). An append table's rows are the
concatenation of its files; a primary-key table's records are merged per (partition, bucket) with the
table's merge engine (``merge.merge``).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, Sequence

import pyarrow as pa

from reference_impl.common.timestamps import to_epoch_ms
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import binary_row as BR
from reference_impl.paimon import datafiles as DF
from reference_impl.paimon import deletion_vectors as DV
from reference_impl.paimon import layout as L
from reference_impl.paimon import manifests as M
from reference_impl.paimon import merge as MG
from reference_impl.paimon import schema as SC
from reference_impl.paimon import snapshot as SN
from reference_impl.paimon.types import DataField, DataType, arrow_schema
from reference_impl.storage import Storage, open_storage

_PATH_ESCAPE = frozenset([chr(c) for c in range(0x00, 0x20)] + list('"#%\'*/:=?\\\x7f{[]^'))


def _storage(location: str | Storage) -> Storage:
    return location if isinstance(location, Storage) else open_storage(location)


def select(storage: Storage, *, version: int | None = None, snapshot_id: int | None = None, tag: str | None = None,
           timestamp: int | str | dt.datetime | None = None,
           branch: str | None = None) -> tuple[L.Layout, SN.Snapshot | None, SC.TableSchema]:
    """The branch layout, the snapshot a read asks for (None: before the first commit) and its schema."""
    given = [n for n, v in (("version", version), ("snapshot_id", snapshot_id), ("tag", tag), ("timestamp", timestamp))
             if v is not None]
    if len(given) > 1:
        raise InvalidTable(f"choose the snapshot by at most one of version, snapshot_id, tag and timestamp "
                           f"(got {', '.join(given)})")
    layout = L.layout_for(storage, branch)
    for name, v in (("version", version), ("snapshot_id", snapshot_id)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise InvalidTable(f"{name} must be a snapshot id (an integer >= 0), got {v!r}")
    snapshot: SN.Snapshot | None
    if version == 0:
        snapshot = None
    else:
        sid = version if version is not None else snapshot_id
        ts = to_epoch_ms(timestamp) if timestamp is not None else None
        snapshot = SN.select_snapshot(storage, snapshot_id=sid, tag=tag, timestamp_ms=ts,
                                      branch=None if layout.is_main else layout.branch)
    # A read of the latest state projects the table's latest schema (a column dropped or moved after the
    # last commit is already gone or moved), as Java and pypaimon do; a read of a chosen snapshot (time
    # travel) projects that snapshot's schemaId (PAIMON-SCHEMA-015). Files evolve by their own _SCHEMA_ID.
    if snapshot is None or not given:
        schema = SC.latest_schema(storage, layout)
        if schema is None:
            raise InvalidTable(f"no Paimon schema file under {storage.uri(layout.schema_dir)}", rule="PAIMON-LAYOUT-001")
    else:
        schema = SC.load_schema(storage, snapshot.schema_id, layout)
    return layout, snapshot, schema


def _fields(schema: SC.TableSchema, columns: Sequence[str] | None) -> list[DataField]:
    if columns is None:
        return list(schema.fields)
    unknown = [c for c in columns if schema.get_field(c) is None]
    if unknown:
        raise InvalidTable(f"unknown column(s) {', '.join(map(repr, unknown))}; the schema has "
                           f"{', '.join(schema.field_names)}")
    wanted = set(columns)
    return [f for f in schema.fields if f.name in wanted]


# ---------------------------------------------------------------------------------------------
# Partition directories (Java InternalRowPartitionComputer, PartitionPathUtils)


def _local_datetime_text(v: Any) -> str:
    """Java ``LocalDateTime.toString``: seconds only when non-zero (or with a fraction), fraction in 3/6/9 digits."""
    if isinstance(v, BR.Timestamp):
        raise Unsupported("a partition timestamp outside what Python's datetime holds", feature="partition-type")
    nanos = v.microsecond * 1000
    text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}"
    if v.second or nanos:
        text += f":{v.second:02d}"
        if nanos % 1_000_000 == 0 and nanos:
            text += f".{nanos // 1_000_000:03d}"
        elif nanos % 1000 == 0 and nanos:
            text += f".{nanos // 1000:06d}"
        elif nanos:
            text += f".{nanos:09d}"
    return text


def partition_value_text(value: Any, t: DataType, *, legacy: bool) -> str | None:
    """A partition value as its directory text (None for a null), as Java's partition computer spells it.

    ``partition.legacy-name=true`` (default) uses the internal value's ``toString`` (DATE as the day
    count); false the SQL cast to string. Types whose Java text the reference does not reproduce
    (FLOAT, DOUBLE, binary, nested) are Unsupported.
    """
    if value is None:
        return None
    r = t.root
    if r in ("CHAR", "VARCHAR"):
        return value
    if r == "BOOLEAN":
        return "true" if value else "false"
    if r in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        return str(value)
    if r == "DECIMAL":
        return format(decimal.Decimal(value), "f")
    if r == "DATE":
        return str((value - dt.date(1970, 1, 1)).days) if legacy else value.isoformat()
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ") and legacy:
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return _local_datetime_text(value)
    raise Unsupported(f"partition directories of {r} values (partition.legacy-name={str(legacy).lower()}) are not "
                      "computed by the reference", feature="partition-type")


def escape_path_name(text: str) -> str:
    """Java ``PartitionPathUtils.escapePathName`` (Hive's): %XX for the reserved characters."""
    return "".join(f"%{ord(c):02X}" if c in _PATH_ESCAPE else c for c in text)


def partition_path(values: Sequence[Any], fields: Sequence[DataField], schema: SC.TableSchema) -> str:
    """``k1=v1/k2=v2`` for a partition (PAIMON-PART-001/002/004); "" for an unpartitioned table."""
    legacy = schema.bool_option(SC.PARTITION_LEGACY_NAME)
    default = schema.option(SC.PARTITION_DEFAULT_NAME) or "__DEFAULT_PARTITION__"
    parts = []
    for v, f in zip(values, fields):
        text = partition_value_text(v, f.type, legacy=legacy)
        if text is None or not text.strip():
            text = default
        parts.append(f"{escape_path_name(f.name)}={escape_path_name(text)}")
    return "/".join(parts)


# ---------------------------------------------------------------------------------------------
# Reading


def visible(entries: Sequence[M.ManifestEntry], schema: SC.TableSchema) -> list[M.ManifestEntry]:
    """The entries a batch read takes (module docstring: postpone bucket, level-0 under DVs or first-row)."""
    out = list(entries)
    if schema.bucket == L.POSTPONE_BUCKET:
        out = [e for e in out if e.bucket >= 0]
    if schema.is_primary_key_table and skip_level0(schema):
        out = [e for e in out if e.file.level > 0]
    return out


def skip_level0(schema: SC.TableSchema) -> bool:
    """Java ``CoreOptions.batchScanSkipLevel0``."""
    if schema.deletion_vectors_enabled:
        return (schema.options.get("deletion-vectors.merge-on-read") or "false").strip().lower() != "true"
    return schema.merge_engine == "first-row"


class _Reader:
    """Per-read caches: schemas by id, decoded partitions, deletion vectors."""

    def __init__(self, storage: Storage, layout: L.Layout, snapshot: SN.Snapshot, schema: SC.TableSchema) -> None:
        self.storage, self.layout, self.snapshot, self.schema = storage, layout, snapshot, schema
        self.schemas: dict[int, SC.TableSchema] = {schema.id: schema}
        self.part_fields = [self._field(k) for k in schema.partition_keys]
        self.partitions: dict[bytes, tuple] = {}
        self.dvs = M.deletion_vectors(M.live_index_files(storage, snapshot)) if snapshot.index_manifest else {}
        self.data_dir = schema.options.get(SC.DATA_FILE_PATH_DIRECTORY)
        if (schema.options.get("index-file-in-data-file-dir") or "false").strip().lower() == "true" and self.dvs:
            raise Unsupported("index files in data file directories (index-file-in-data-file-dir) are not read by "
                              "the reference", feature="index-file-in-data-file-dir")

    def _field(self, name: str) -> DataField:
        f = self.schema.get_field(name)
        if f is None:
            raise InvalidTable(f"partition or key column {name!r} is not a field of schema {self.schema.id}",
                               rule="PAIMON-SCHEMA-002")
        return f

    def file_schema(self, schema_id: int) -> SC.TableSchema:
        if schema_id not in self.schemas:
            self.schemas[schema_id] = SC.load_schema(self.storage, schema_id, self.layout)
        return self.schemas[schema_id]

    def partition(self, raw: bytes) -> tuple:
        if raw not in self.partitions:
            values, _kind = BR.deserialize_with_arity(raw, [f.type for f in self.part_fields])
            self.partitions[raw] = tuple(values)
        return self.partitions[raw]

    def read(self, e: M.ManifestEntry, read_fields: Sequence[DataField], *, primary_key: bool,
             key_fields: Sequence[DataField] = ()) -> pa.Table:
        """One data file's rows: read fields (partition columns from ``_PARTITION``), system columns, DV applied."""
        values = self.partition(e.partition)
        path = DF.data_file_path(e.file.file_name, bucket=e.bucket,
                                 partition_path=partition_path(values, self.part_fields, self.schema),
                                 external_path=e.file.external_path, storage=self.storage, data_dir=self.data_dir)
        fschema = self.file_schema(e.file.schema_id)
        t = DF.read_data_file(self.storage, path, fschema.fields, read_fields, primary_key=primary_key,
                              key_fields=key_fields)
        if t.num_rows != e.file.row_count:
            raise InvalidTable(f"data file {e.file.file_name} holds {t.num_rows} rows, its manifest entry says "
                               f"{e.file.row_count}", path=path, rule="PAIMON-MANIFEST-016")
        dv = self.dvs.get((e.partition, e.bucket, e.file.file_name))
        if dv is not None:
            index_file, rng = dv
            ipath = (self.storage.resolve(index_file.external_path) if index_file.external_path
                     else self.layout.index_path(index_file.file_name))
            positions = DV.load_vector(self.storage, ipath, rng.offset, rng.length, rng.cardinality,
                                       data_file=e.file.file_name, row_count=e.file.row_count)
            t = DF.apply_deletion_vector(t, positions)
        # Partition columns come from the partition row, never from the file (Java PartitionUtils).
        by_name = {f.name: v for f, v in zip(self.part_fields, values)}
        for i, name in enumerate(t.column_names):
            if name in by_name:
                f = t.schema.field(i)
                t = t.set_column(i, f, pa.array([by_name[name]] * t.num_rows, type=f.type))
        return t


def _conform(pieces: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """The pieces as one table of ``schema`` (columns by name; nullability relaxed while concatenating)."""
    loose = pa.schema([f.with_nullable(True) for f in schema])
    tables = [p.select(schema.names).cast(loose) for p in pieces]
    out = pa.concat_tables(tables) if tables else loose.empty_table()
    return out.cast(schema)


def read_table(location: str | Storage, *, version: int | None = None, snapshot_id: int | None = None,
               tag: str | None = None, timestamp: int | str | dt.datetime | None = None, branch: str | None = None,
               columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of a table at a snapshot (latest by default), ``columns`` in schema order (see the module docstring)."""
    storage = _storage(location)
    layout, snapshot, schema = select(storage, version=version, snapshot_id=snapshot_id, tag=tag,
                                      timestamp=timestamp, branch=branch)
    fields = _fields(schema, columns)
    out_schema = arrow_schema(fields)
    if snapshot is None:
        return out_schema.empty_table()
    if (schema.option(SC.DATA_EVOLUTION_ENABLED) or "false").strip().lower() == "true":
        raise Unsupported("data-evolution tables (files holding some columns of a row range) are not read by the "
                          "reference yet", feature="data-evolution")
    entries = visible(M.live_files(storage, snapshot), schema)
    reader = _Reader(storage, layout, snapshot, schema)
    if not schema.is_primary_key_table:
        pieces = [reader.read(e, fields, primary_key=False) for e in entries]
        return _conform([p for p in pieces if p.num_rows], out_schema)
    return _read_primary_key(reader, entries, fields, out_schema)


def _read_primary_key(reader: _Reader, entries: list[M.ManifestEntry], fields: list[DataField],
                      out_schema: pa.Schema) -> pa.Table:
    schema = reader.schema
    key_names = schema.trimmed_primary_keys
    key_fields = [reader._field(k) for k in key_names]
    # Every primary-key column is part of a record's key, partition columns included (they are constant in
    # a partition's buckets, so the groups are the trimmed key's): no merge engine treats them as values.
    spec = MG.MergeSpec.from_options(schema.options, schema.field_names, schema.primary_keys)
    full = arrow_schema(schema.fields)
    records_schema = pa.schema(list(full) + [pa.field(DF.SEQUENCE_NUMBER.name, pa.int64(), nullable=False),
                                             pa.field(DF.VALUE_KIND.name, pa.int8(), nullable=False)])
    groups: dict[tuple[bytes, int], list[pa.Table]] = {}
    for e in entries:
        t = reader.read(e, schema.fields, primary_key=True, key_fields=key_fields)
        groups.setdefault((e.partition, e.bucket), []).append(t)
    merged = []
    for pieces in groups.values():
        records = _conform(pieces, records_schema)
        rows = MG.merge(records, spec, full)
        if rows.num_rows:
            merged.append(rows.select(out_schema.names))
    return _conform(merged, out_schema)


def describe(location: str | Storage, *, version: int | None = None, snapshot_id: int | None = None,
             tag: str | None = None, timestamp: int | str | dt.datetime | None = None,
             branch: str | None = None) -> dict[str, Any]:
    """The Paimon facts of a table at a snapshot: snapshot_id, schema_id, keys, bucket, merge engine, options, commit kind."""
    storage = _storage(location)
    _layout, snapshot, schema = select(storage, version=version, snapshot_id=snapshot_id, tag=tag,
                                       timestamp=timestamp, branch=branch)
    return {
        "snapshot_id": snapshot.id if snapshot is not None else None,
        "schema_id": snapshot.schema_id if snapshot is not None else schema.id,  # what the commit was written with
        "primary_keys": list(schema.primary_keys),
        "partition_keys": list(schema.partition_keys),
        "bucket": schema.bucket,
        "merge_engine": schema.merge_engine if schema.is_primary_key_table else None,  # append tables merge nothing
        "options": dict(schema.options),
        "commit_kind": snapshot.commit_kind if snapshot is not None else None,
    }


__all__ = ["read_table", "describe", "select", "visible", "skip_level0", "partition_path", "partition_value_text",
           "escape_path_name"]
