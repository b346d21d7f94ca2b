"""Manifests and Manifest Lists: the Avro files of a snapshot, per format version, with inheritance on read.

Both files are Iceberg Avro files: every field carries its spec field id in the Avro schema
(``field-id``, ``element-id``, ``key-id``/``value-id``), so the schemas are built as Iceberg structs
and mapped through ``avro.to_avro_schema``. Readers project by field id, never by name (Java's
v1 manifest lists name field 504 ``added_data_files_count``; the id is what is stable).

Per version (Writer requirements): v1 writes ``block_size_in_bytes`` and a required
``snapshot_id``, and no content or sequence numbers; v2 adds ``content``, sequence numbers and
``equality_ids``/``referenced_data_file``; v3 adds ``first_row_id``, ``content_offset`` and
``content_size_in_bytes`` and drops ``distinct_counts``. Reading is permissive the way the
spec's read-behaviour table says: a field that a v1 file may lack is read as optional (with the
Appendix E defaults), a field required in every version must be there.

Inheritance on read (``read_manifest(..., manifest_file=...)``): a null ``snapshot_id`` takes
the manifest's ``added_snapshot_id``; a null data/file sequence number of an ADDED entry takes
the manifest's ``sequence_number`` (everything in a v1 manifest is 0); a null ``first_row_id``
of a live data file takes the manifest's ``first_row_id`` plus the record counts of the earlier
live data files that also had none; a manifest listed without ``first_row_id`` (a snapshot from
before the v3 upgrade) yields no row ids at all.
"""

from __future__ import annotations

import functools
import io
import json
import math
import struct
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

import fastavro

from reference_impl.common import bounded
from reference_impl.common.numbers import ascii_int
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import avro as A
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V

# Avro key-value metadata keys of a manifest (Manifests).
KV_SCHEMA = "schema"
KV_SCHEMA_ID = "schema-id"
KV_PARTITION_SPEC = "partition-spec"
KV_PARTITION_SPEC_ID = "partition-spec-id"
KV_FORMAT_VERSION = "format-version"
KV_CONTENT = "content"
CONTENT_DATA_NAME = "data"
CONTENT_DELETES_NAME = "deletes"
# What Java also writes into a manifest list's key-value metadata (not required by the spec).
KV_SNAPSHOT_ID = "snapshot-id"
KV_PARENT_SNAPSHOT_ID = "parent-snapshot-id"
KV_SEQUENCE_NUMBER = "sequence-number"
KV_FIRST_ROW_ID = "first-row-id"

# manifest_entry.status
EXISTING, ADDED, DELETED = 0, 1, 2
STATUSES = (EXISTING, ADDED, DELETED)
# data_file.content
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2
# manifest_file.content
MANIFEST_DATA, MANIFEST_DELETES = 0, 1
FILE_FORMATS = ("avro", "orc", "parquet", "puffin")
# Java's default for the deprecated v1 block_size_in_bytes ("always write a default in v1").
V1_DEFAULT_BLOCK_SIZE = 64 * 1024 * 1024

# Field ids (Manifest Entry Fields, Data File Fields, Manifest Lists).
ID_STATUS, ID_SNAPSHOT_ID, ID_DATA_FILE, ID_SEQUENCE_NUMBER, ID_FILE_SEQUENCE_NUMBER = 0, 1, 2, 3, 4
ID_CONTENT = 134
ID_FILE_PATH = 100
ID_FILE_FORMAT = 101
ID_PARTITION = 102
ID_RECORD_COUNT = 103
ID_FILE_SIZE = 104
ID_BLOCK_SIZE = 105
ID_COLUMN_SIZES = 108
ID_VALUE_COUNTS = 109
ID_NULL_VALUE_COUNTS = 110
ID_NAN_VALUE_COUNTS = 137
ID_DISTINCT_COUNTS = 111
ID_LOWER_BOUNDS = 125
ID_UPPER_BOUNDS = 128
ID_KEY_METADATA = 131
ID_SPLIT_OFFSETS = 132
ID_EQUALITY_IDS = 135
ID_SORT_ORDER_ID = 140
ID_FIRST_ROW_ID = 142
ID_REFERENCED_DATA_FILE = 143
ID_CONTENT_OFFSET = 144
ID_CONTENT_SIZE = 145
RESERVED_DATA_FILE_IDS = (141,)

ML_MANIFEST_PATH = 500
ML_MANIFEST_LENGTH = 501
ML_PARTITION_SPEC_ID = 502
ML_CONTENT = 517
ML_SEQUENCE_NUMBER = 515
ML_MIN_SEQUENCE_NUMBER = 516
ML_ADDED_SNAPSHOT_ID = 503
ML_ADDED_FILES = 504
ML_EXISTING_FILES = 505
ML_DELETED_FILES = 506
ML_ADDED_ROWS = 512
ML_EXISTING_ROWS = 513
ML_DELETED_ROWS = 514
ML_PARTITIONS = 507
ML_PARTITIONS_ELEMENT = 508
ML_KEY_METADATA = 519
ML_FIRST_ROW_ID = 520
FS_CONTAINS_NULL = 509
FS_CONTAINS_NAN = 518
FS_LOWER_BOUND = 510
FS_UPPER_BOUND = 511

MANIFEST_ENTRY_RECORD = "manifest_entry"
MANIFEST_FILE_RECORD = "manifest_file"


def _F(fid: int, name: str, t: T.IcebergType, required: bool = False) -> T.NestedField:
    return T.NestedField(id=fid, name=name, type=t, required=required)


def _int_map(fid: int, kid: int, vid: int, name: str, value: T.IcebergType) -> T.NestedField:
    return _F(fid, name, T.MapType(key_id=kid, key=T.INT, value_id=vid, value=value, value_required=True))


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFile:
    """The ``data_file`` struct; ``partition`` is {partition field id: internal value}; bounds are single-value bytes."""

    file_path: str
    file_format: str
    record_count: int
    file_size_in_bytes: int
    partition: Mapping[int, Any] = field(default_factory=dict, hash=False)
    content: int = DATA
    column_sizes: Mapping[int, int] | None = field(default=None, hash=False)
    value_counts: Mapping[int, int] | None = field(default=None, hash=False)
    null_value_counts: Mapping[int, int] | None = field(default=None, hash=False)
    nan_value_counts: Mapping[int, int] | None = field(default=None, hash=False)
    lower_bounds: Mapping[int, bytes] | None = field(default=None, hash=False)
    upper_bounds: Mapping[int, bytes] | None = field(default=None, hash=False)
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestEntry:
    """A ``manifest_entry``: status, snapshot id, data and file sequence numbers (None = inherit), data file."""

    status: int
    data_file: DataFile
    snapshot_id: int | None = None
    sequence_number: int | None = None
    file_sequence_number: int | None = None

    @property
    def is_live(self) -> bool:
        """ADDED or EXISTING (DELETED entries are not used in scans)."""
        return self.status != DELETED


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldSummary:
    """A partition field summary of a manifest list entry (bounds as single-value bytes)."""

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestFile:
    """A ``manifest_file`` (manifest list entry); counts may be None only in v1 files (assume non-zero)."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    added_snapshot_id: int
    content: int = MANIFEST_DATA
    sequence_number: int = 0
    min_sequence_number: int = 0
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: tuple[FieldSummary, ...] | None = None
    key_metadata: bytes | None = None
    first_row_id: int | None = None

    def may_have(self, status: int) -> bool:
        """Whether entries of ``status`` may be present (a null count means maybe, MLIST-012)."""
        count = {ADDED: self.added_files_count, EXISTING: self.existing_files_count, DELETED: self.deleted_files_count}[status]
        return count is None or count > 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestMetadata:
    """A manifest's key-value metadata, parsed: schema, spec, version, content."""

    schema: T.Schema
    spec: P.PartitionSpec
    format_version: int
    content: int = MANIFEST_DATA  # 0 data, 1 deletes (wire "data"/"deletes")
    schema_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """A manifest read back: its metadata, the entries, and the partition type found in the file."""

    metadata: ManifestMetadata
    entries: tuple[ManifestEntry, ...]
    partition_type: T.StructType


# ---------------------------------------------------------------------------------------------
# Schemas per version (Iceberg structs with the spec's ids, mapped to Avro by avro.py)


def data_file_type(partition_type: T.StructType, format_version: int) -> T.StructType:
    """The ``data_file`` struct for a version: the spec's fields, ids and required flags, in Java's order."""
    v = format_version
    fs: list[T.NestedField] = []
    if v >= 2:
        fs.append(_F(ID_CONTENT, "content", T.INT, True))
    fs += [
        _F(ID_FILE_PATH, "file_path", T.STRING, True),
        _F(ID_FILE_FORMAT, "file_format", T.STRING, True),
        _F(ID_PARTITION, "partition", partition_type, True),
        _F(ID_RECORD_COUNT, "record_count", T.LONG, True),
        _F(ID_FILE_SIZE, "file_size_in_bytes", T.LONG, True),
    ]
    if v == 1:
        fs.append(_F(ID_BLOCK_SIZE, "block_size_in_bytes", T.LONG, True))
    fs += [
        _int_map(ID_COLUMN_SIZES, 117, 118, "column_sizes", T.LONG),
        _int_map(ID_VALUE_COUNTS, 119, 120, "value_counts", T.LONG),
        _int_map(ID_NULL_VALUE_COUNTS, 121, 122, "null_value_counts", T.LONG),
        _int_map(ID_NAN_VALUE_COUNTS, 138, 139, "nan_value_counts", T.LONG),
        _int_map(ID_LOWER_BOUNDS, 126, 127, "lower_bounds", T.BINARY),
        _int_map(ID_UPPER_BOUNDS, 129, 130, "upper_bounds", T.BINARY),
        _F(ID_KEY_METADATA, "key_metadata", T.BINARY),
        _F(ID_SPLIT_OFFSETS, "split_offsets", T.ListType(element_id=133, element=T.LONG, element_required=True)),
    ]
    if v >= 2:
        fs.append(_F(ID_EQUALITY_IDS, "equality_ids", T.ListType(element_id=136, element=T.INT, element_required=True)))
    fs.append(_F(ID_SORT_ORDER_ID, "sort_order_id", T.INT))
    if v >= 3:
        fs.append(_F(ID_FIRST_ROW_ID, "first_row_id", T.LONG))
    if v >= 2:
        fs.append(_F(ID_REFERENCED_DATA_FILE, "referenced_data_file", T.STRING))
    if v >= 3:
        fs.append(_F(ID_CONTENT_OFFSET, "content_offset", T.LONG))
        fs.append(_F(ID_CONTENT_SIZE, "content_size_in_bytes", T.LONG))
    return T.StructType(fields=tuple(fs))


def manifest_entry_type(partition_type: T.StructType, format_version: int) -> T.StructType:
    """The ``manifest_entry`` struct for a version (v1: required snapshot_id, no sequence numbers)."""
    fs = [_F(ID_STATUS, "status", T.INT, True), _F(ID_SNAPSHOT_ID, "snapshot_id", T.LONG, format_version == 1)]
    if format_version >= 2:
        fs += [_F(ID_SEQUENCE_NUMBER, "sequence_number", T.LONG), _F(ID_FILE_SEQUENCE_NUMBER, "file_sequence_number", T.LONG)]
    fs.append(_F(ID_DATA_FILE, "data_file", data_file_type(partition_type, format_version), True))
    return T.StructType(fields=tuple(fs))


FIELD_SUMMARY_TYPE = T.StructType(fields=(
    _F(FS_CONTAINS_NULL, "contains_null", T.BOOLEAN, True),
    _F(FS_CONTAINS_NAN, "contains_nan", T.BOOLEAN),
    _F(FS_LOWER_BOUND, "lower_bound", T.BINARY),
    _F(FS_UPPER_BOUND, "upper_bound", T.BINARY),
))


def manifest_file_type(format_version: int) -> T.StructType:
    """The ``manifest_file`` struct for a version (v2 makes content, sequence numbers and counts required)."""
    v2 = format_version >= 2
    fs = [
        _F(ML_MANIFEST_PATH, "manifest_path", T.STRING, True),
        _F(ML_MANIFEST_LENGTH, "manifest_length", T.LONG, True),
        _F(ML_PARTITION_SPEC_ID, "partition_spec_id", T.INT, True),
    ]
    if v2:
        fs += [_F(ML_CONTENT, "content", T.INT, True), _F(ML_SEQUENCE_NUMBER, "sequence_number", T.LONG, True),
               _F(ML_MIN_SEQUENCE_NUMBER, "min_sequence_number", T.LONG, True)]
    fs += [
        _F(ML_ADDED_SNAPSHOT_ID, "added_snapshot_id", T.LONG, True),
        _F(ML_ADDED_FILES, "added_files_count", T.INT, v2),
        _F(ML_EXISTING_FILES, "existing_files_count", T.INT, v2),
        _F(ML_DELETED_FILES, "deleted_files_count", T.INT, v2),
        _F(ML_ADDED_ROWS, "added_rows_count", T.LONG, v2),
        _F(ML_EXISTING_ROWS, "existing_rows_count", T.LONG, v2),
        _F(ML_DELETED_ROWS, "deleted_rows_count", T.LONG, v2),
        _F(ML_PARTITIONS, "partitions", T.ListType(element_id=ML_PARTITIONS_ELEMENT, element=FIELD_SUMMARY_TYPE, element_required=True)),
        _F(ML_KEY_METADATA, "key_metadata", T.BINARY),
    ]
    if format_version >= 3:
        fs.append(_F(ML_FIRST_ROW_ID, "first_row_id", T.LONG))
    return T.StructType(fields=tuple(fs))


def avro_safe_name(name: str) -> str:
    """An Avro-legal record field name for ``name`` (Java's convention: bad characters become ``_x<HEX>``)."""
    def ok(ch: str, first: bool) -> bool:
        return ch == "_" or ("a" <= ch.lower() <= "z") or (not first and ch.isdigit())
    if name and all(ok(ch, i == 0) for i, ch in enumerate(name)):
        return name
    out = []
    for i, ch in enumerate(name):
        if ok(ch, i == 0):
            out.append(ch)
        elif i == 0 and ch.isdigit():
            out.append("_" + ch)
        else:
            out.append("_x" + format(ord(ch), "X"))
    return "".join(out) or "_"


def avro_partition_type(spec: P.PartitionSpec, schema: T.Schema) -> T.StructType:
    """The partition struct of a spec with Avro-legal names (names are not part of the spec; ids are)."""
    ptype = P.partition_type(spec, schema)
    return T.StructType(fields=tuple(replace(f, name=avro_safe_name(f.name)) for f in ptype.fields))


# ---------------------------------------------------------------------------------------------
# Writing


def _map_out(m: Mapping[int, Any] | None) -> list | None:
    return None if m is None else [{"key": k, "value": v} for k, v in sorted(m.items())]


def _data_file_record(df: DataFile, ptype: T.StructType, version: int) -> dict:
    where = f"data file {df.file_path}"
    if df.file_format.lower() not in FILE_FORMATS:
        raise InvalidTable(f"file_format {df.file_format!r} is not one of {FILE_FORMATS} at {where}", rule="ICEBERG-MANIFEST-019")
    if version == 1 and df.content != DATA:
        raise InvalidTable(f"a v1 manifest holds data files only (content {df.content}) at {where}", rule="ICEBERG-COMPAT-002")
    if df.split_offsets is not None and list(df.split_offsets) != sorted(df.split_offsets):
        raise InvalidTable(f"split_offsets must be ascending at {where}", rule="ICEBERG-MANIFEST-034")
    if df.content_offset is not None and df.content_size_in_bytes is None:
        raise InvalidTable(f"content_offset needs content_size_in_bytes at {where}", rule="ICEBERG-MANIFEST-040")
    if version < 3 and (df.first_row_id is not None or df.content_offset is not None or df.content_size_in_bytes is not None):
        raise InvalidTable(f"first_row_id/content_offset/content_size_in_bytes are v3 fields at {where}", rule="ICEBERG-GEN-002")
    if version < 2 and (df.equality_ids is not None or df.referenced_data_file is not None):
        raise InvalidTable(f"equality_ids/referenced_data_file are v2 fields at {where}", rule="ICEBERG-GEN-002")
    if df.content != DATA and df.first_row_id is not None:
        raise InvalidTable(f"delete files have a null first_row_id at {where}", rule="ICEBERG-LINEAGE-017")
    rec: dict[str, Any] = {
        "content": df.content,
        "file_path": df.file_path,
        "file_format": df.file_format.upper(),  # Java writes the enum name; readers compare case-insensitively
        "partition": A.to_avro_value({f.id: df.partition.get(f.id) for f in ptype.fields}, ptype),
        "record_count": df.record_count,
        "file_size_in_bytes": df.file_size_in_bytes,
        "block_size_in_bytes": V1_DEFAULT_BLOCK_SIZE,
        "column_sizes": _map_out(df.column_sizes),
        "value_counts": _map_out(df.value_counts),
        "null_value_counts": _map_out(df.null_value_counts),
        "nan_value_counts": _map_out(df.nan_value_counts),
        "lower_bounds": _map_out(df.lower_bounds),
        "upper_bounds": _map_out(df.upper_bounds),
        "key_metadata": df.key_metadata,
        "split_offsets": None if df.split_offsets is None else list(df.split_offsets),
        "equality_ids": None if df.equality_ids is None else list(df.equality_ids),
        "sort_order_id": df.sort_order_id,
        "first_row_id": df.first_row_id,
        "referenced_data_file": df.referenced_data_file,
        "content_offset": df.content_offset,
        "content_size_in_bytes": df.content_size_in_bytes,
    }
    return rec


def _avro_bytes(struct_type: T.StructType, record_name: str, records: list[dict], metadata: dict[str, str], codec: str) -> bytes:
    schema = A.to_avro_schema(struct_type, record_name=record_name)
    buf = io.BytesIO()
    try:
        fastavro.writer(buf, fastavro.parse_schema(schema), records, metadata=metadata, codec=codec)
    except (ValueError, TypeError, OverflowError, struct.error, fastavro.schema.SchemaParseException) as exc:
        raise InvalidTable(f"cannot write {record_name}: {exc}", rule="ICEBERG-GEN-001") from None
    return buf.getvalue()


def write_manifest(
    entries: Iterable[ManifestEntry],
    *,
    schema: T.Schema,
    spec: P.PartitionSpec,
    format_version: int,
    content: int = MANIFEST_DATA,
    codec: str = "deflate",
) -> bytes:
    """The Avro bytes of a manifest: spec-id'd schema, per-version fields, and the required key-value metadata."""
    v = format_version
    ptype = avro_partition_type(spec, schema)
    etype = manifest_entry_type(ptype, v)
    records = []
    for i, e in enumerate(entries):
        where = f"entry {i} ({e.data_file.file_path})"
        if e.status not in STATUSES:
            raise InvalidTable(f"status {e.status} is not 0, 1 or 2 at {where}", rule="ICEBERG-MANIFEST-010")
        is_delete = e.data_file.content != DATA
        if v >= 2 and is_delete != (content == MANIFEST_DELETES):
            raise InvalidTable(f"a {'delete' if content else 'data'} manifest cannot hold content {e.data_file.content} at {where}", rule="ICEBERG-MANIFEST-001")
        if v == 1 and e.snapshot_id is None:
            raise InvalidTable(f"v1 entries need an explicit snapshot_id at {where}", rule="ICEBERG-MANIFEST-011")
        if v >= 2 and e.status != ADDED and (e.sequence_number is None or e.file_sequence_number is None):
            raise InvalidTable(f"EXISTING and DELETED entries must carry both sequence numbers at {where}", rule="ICEBERG-SEQ-006")
        if v == 1 and (e.sequence_number or e.file_sequence_number):
            raise InvalidTable(f"v1 entries have no sequence numbers at {where}", rule="ICEBERG-COMPAT-001")
        records.append({
            "status": e.status,
            "snapshot_id": e.snapshot_id,
            "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number,
            "data_file": _data_file_record(e.data_file, ptype, v),
        })
    if v == 1 and content != MANIFEST_DATA:
        raise InvalidTable("v1 has no delete manifests", rule="ICEBERG-COMPAT-002")
    meta = {
        KV_SCHEMA: T.schema_to_json(schema),
        KV_PARTITION_SPEC: json.dumps(P.partition_fields_to_list(spec, format_version=max(v, 2)), separators=(",", ":")),
        KV_PARTITION_SPEC_ID: str(spec.spec_id),
        KV_FORMAT_VERSION: str(v),
    }
    if schema.schema_id is not None:
        meta[KV_SCHEMA_ID] = str(schema.schema_id)
    elif v >= 2:
        raise InvalidTable("a v2+ manifest needs the schema's id (schema-id key)", rule="ICEBERG-MANIFEST-005")
    if v >= 2:
        meta[KV_CONTENT] = CONTENT_DELETES_NAME if content == MANIFEST_DELETES else CONTENT_DATA_NAME
    return _avro_bytes(etype, MANIFEST_ENTRY_RECORD, records, meta, codec)


def write_manifest_list(
    manifests: Iterable[ManifestFile],
    *,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None = None,
    sequence_number: int | None = None,
    first_row_id: int | None = None,
    codec: str = "deflate",
) -> bytes:
    """The Avro bytes of a manifest list for a version (v1 omits content/sequence numbers; v3 adds first_row_id)."""
    v = format_version
    mtype = manifest_file_type(v)
    records = []
    for m in manifests:
        where = f"manifest {m.manifest_path}"
        if v == 1 and m.content != MANIFEST_DATA:
            raise InvalidTable(f"v1 manifest lists hold data manifests only at {where}", rule="ICEBERG-COMPAT-002")
        if v >= 2:
            for name in ("added_files_count", "existing_files_count", "deleted_files_count", "added_rows_count", "existing_rows_count", "deleted_rows_count"):
                if getattr(m, name) is None:
                    raise InvalidTable(f"{name} is required from v2 at {where}", rule="ICEBERG-MLIST-010" if "files" in name else "ICEBERG-MLIST-011")
        if m.content == MANIFEST_DELETES and m.first_row_id is not None:
            raise InvalidTable(f"delete manifests have a null first_row_id at {where}", rule="ICEBERG-LINEAGE-013")
        if v < 3 and m.first_row_id is not None:
            raise InvalidTable(f"first_row_id is a v3 field at {where}", rule="ICEBERG-GEN-002")
        records.append({
            "manifest_path": m.manifest_path,
            "manifest_length": m.manifest_length,
            "partition_spec_id": m.partition_spec_id,
            "content": m.content,
            "sequence_number": m.sequence_number,
            "min_sequence_number": m.min_sequence_number,
            "added_snapshot_id": m.added_snapshot_id,
            "added_files_count": m.added_files_count,
            "existing_files_count": m.existing_files_count,
            "deleted_files_count": m.deleted_files_count,
            "added_rows_count": m.added_rows_count,
            "existing_rows_count": m.existing_rows_count,
            "deleted_rows_count": m.deleted_rows_count,
            "partitions": None if m.partitions is None else [
                {"contains_null": s.contains_null, "contains_nan": s.contains_nan, "lower_bound": s.lower_bound, "upper_bound": s.upper_bound}
                for s in m.partitions
            ],
            "key_metadata": m.key_metadata,
            "first_row_id": m.first_row_id,
        })
    meta = {KV_SNAPSHOT_ID: str(snapshot_id), KV_PARENT_SNAPSHOT_ID: "null" if parent_snapshot_id is None else str(parent_snapshot_id),
            KV_FORMAT_VERSION: str(v)}
    if v >= 2 and sequence_number is not None:
        meta[KV_SEQUENCE_NUMBER] = str(sequence_number)
    if v >= 3 and first_row_id is not None:
        meta[KV_FIRST_ROW_ID] = str(first_row_id)
    return _avro_bytes(mtype, MANIFEST_FILE_RECORD, records, meta, codec)


# ---------------------------------------------------------------------------------------------
# Reading


class _Damaged(Exception):
    """Avro data that does not decode to exactly the records its block declares."""


@functools.lru_cache(maxsize=64)
def _writer_schema(text: str | bytes) -> Any:
    """A file's Avro schema (raw JSON, ids intact), parsed once per distinct text (a table's
    manifests mostly share a few). Shared between callers: read-only."""
    return json.loads(text)


def _open_avro(data: bytes, what: str, path: str | None) -> tuple[dict, dict[str, str], list[dict]]:
    """Header schema (raw JSON, ids intact), key-value metadata and records; InvalidTable on any Avro damage."""
    rule = "ICEBERG-MLIST-002" if what == "manifest list" else "ICEBERG-MANIFEST-002"
    try:
        bounded.check_avro_container(data, what=what, path=path, rule=rule)
    except InvalidTable as exc:
        raise InvalidTable(f"{what} is not a readable Avro file: {exc.message}", path=path, rule=rule, hint=exc.hint) from None
    try:
        # Block by block, so that each block is seen to decode to exactly its declared records:
        # a count too low would silently drop records, one too high runs out of bytes.
        blocks = fastavro.block_reader(io.BytesIO(data))
        records: list[dict] = []
        for block in blocks:
            records.extend(block)
            left = len(block.bytes_.getbuffer()) - block.bytes_.tell()
            if left:
                raise _Damaged(f"a block of {block.num_records} records has {left} bytes left over")
        raw_meta = blocks.metadata
        schema = _writer_schema(raw_meta["avro.schema"])
    except Exception as exc:  # noqa: BLE001 - fastavro raises many kinds on damaged input; all mean "not a valid file"
        raise InvalidTable(f"{what} is not a readable Avro file: {type(exc).__name__}: {exc}", path=path, rule=rule) from None
    meta = {k: (v.decode("utf-8", "replace") if isinstance(v, bytes) else v) for k, v in raw_meta.items()}
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise InvalidTable(f"{what} schema is not a record", path=path, rule="ICEBERG-MANIFEST-002")
    return schema, meta, records


class _Fields:
    """Field-id -> (name, Avro field) of one Avro record schema: reading by id, not by name."""

    def __init__(self, record: dict, what: str, path: str | None, rule: str) -> None:
        self.by_id: dict[int, dict] = {}
        fields = record.get("fields")
        if not isinstance(fields, list):
            raise InvalidTable(f"{what} record has no fields", path=path, rule=rule)
        for f in fields:
            fid = f.get(A.FIELD_ID) if isinstance(f, dict) else None
            if isinstance(fid, bool) or not isinstance(fid, int):
                raise InvalidTable(f"{what} field {f.get('name') if isinstance(f, dict) else f!r} has no integer field-id", path=path, rule="ICEBERG-FMT-006")
            self.by_id[fid] = f
        self.what, self.path = what, path

    def has(self, fid: int) -> bool:
        return fid in self.by_id

    def get(self, rec: dict, fid: int, *, required: bool, rule: str, default: Any = None) -> Any:
        f = self.by_id.get(fid)
        if f is None:
            if required:
                raise InvalidTable(f"{self.what} lacks required field {fid}", path=self.path, rule=rule)
            return default
        v = rec.get(f["name"])
        if v is None and required:
            raise InvalidTable(f"{self.what} field {fid} ({f['name']}) is null", path=self.path, rule=rule)
        return default if v is None else v

    def sub(self, fid: int) -> dict:
        t = self.by_id[fid]["type"]
        if isinstance(t, list):
            t = next(b for b in t if b != "null")
        return t


def _check_int(v: Any, what: str, path: str | None, rule: str) -> Any:
    if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
        raise InvalidTable(f"{what} must be an integer, got {v!r}", path=path, rule=rule)
    return v


def _map_in(v: Any, what: str, path: str | None) -> dict | None:
    if v is None:
        return None
    try:
        if isinstance(v, dict):
            return {int(k): x for k, x in v.items()}
        return {int(e["key"]): e["value"] for e in v}
    except (TypeError, KeyError, ValueError):
        raise InvalidTable(f"{what} is not a map of field id to value", path=path, rule="ICEBERG-FMT-003") from None


def parse_manifest_metadata(meta: Mapping[str, str], *, path: str | None = None, table_version: int | None = None) -> ManifestMetadata:
    """The manifest key-value metadata; v1 files may lack schema-id/partition-spec-id/format-version/content.

    ``table_version``, when given, refuses a manifest newer than its table (older ones are fine: upgrades keep them).
    """
    def need(key: str, rule: str) -> str:
        if key not in meta:
            raise InvalidTable(f"manifest metadata lacks {key!r}", path=path, rule=rule)
        return meta[key]

    def as_int(key: str, rule: str) -> int | None:
        if key not in meta:
            return None
        n = ascii_int(meta[key], signed=True)
        if n is None:
            raise InvalidTable(f"manifest metadata {key!r} must be an integer string, got {meta[key]!r}", path=path, rule=rule)
        return n

    version = as_int(KV_FORMAT_VERSION, "ICEBERG-MANIFEST-008") or 1
    if version not in (1, 2, 3):
        raise Unsupported(f"manifest format-version {version} is not supported", feature=f"format-version {version}", path=path, rule="ICEBERG-META-004")
    if table_version is not None and version > table_version:
        raise InvalidTable(f"a v{version} manifest cannot belong to a v{table_version} table", path=path, version=table_version)
    if version >= 2:
        for key, rule in ((KV_SCHEMA_ID, "ICEBERG-MANIFEST-005"), (KV_PARTITION_SPEC_ID, "ICEBERG-MANIFEST-007"), (KV_CONTENT, "ICEBERG-MANIFEST-009")):
            # Java omits schema-id (apache/iceberg#8745): tolerated on read, required on write.
            if key != KV_SCHEMA_ID:
                need(key, rule)
    try:
        schema = T.parse_schema(need(KV_SCHEMA, "ICEBERG-MANIFEST-004"))
    except InvalidTable as exc:
        raise InvalidTable(f"manifest schema: {exc.message}", path=path, rule="ICEBERG-MANIFEST-004") from None
    schema_id = as_int(KV_SCHEMA_ID, "ICEBERG-MANIFEST-005")
    if schema_id is not None and schema.schema_id is None:
        schema = replace(schema, schema_id=schema_id)
    spec_id = as_int(KV_PARTITION_SPEC_ID, "ICEBERG-MANIFEST-007") or 0
    raw_spec = need(KV_PARTITION_SPEC, "ICEBERG-MANIFEST-006")
    try:
        parsed = json.loads(raw_spec)
    except ValueError:  # incl. numbers past Python's 4,300-digit conversion limit
        raise InvalidTable("manifest partition-spec is not JSON", path=path, rule="ICEBERG-MANIFEST-006") from None
    if not isinstance(parsed, list):
        raise InvalidTable("manifest partition-spec must be the bare fields list", path=path, rule="ICEBERG-MANIFEST-006")
    try:
        # The manifest's own version decides: a v1 manifest in an upgraded table may lack field ids.
        spec = P.parse_partition_fields(parsed, format_version=version, spec_id=spec_id)
    except InvalidTable as exc:
        raise InvalidTable(f"manifest partition-spec: {exc.message}", path=path, rule="ICEBERG-MANIFEST-006") from None
    content = MANIFEST_DATA
    if KV_CONTENT in meta:
        if meta[KV_CONTENT] not in (CONTENT_DATA_NAME, CONTENT_DELETES_NAME):
            raise InvalidTable(f"manifest content must be 'data' or 'deletes', got {meta[KV_CONTENT]!r}", path=path, rule="ICEBERG-MANIFEST-009")
        content = MANIFEST_DELETES if meta[KV_CONTENT] == CONTENT_DELETES_NAME else MANIFEST_DATA
    return ManifestMetadata(schema=schema, spec=spec, format_version=version, content=content, schema_id=schema_id)


def read_manifest(
    data: bytes,
    *,
    manifest_file: ManifestFile | None = None,
    path: str | None = None,
    table_version: int | None = None,
    inherit: bool = True,
    opened: tuple[dict, dict[str, str], list[dict]] | None = None,
) -> Manifest:
    """Entries of a manifest; with ``manifest_file`` (its list entry) snapshot ids, sequence numbers and first_row_ids are inherited.

    ``opened``: what ``_open_avro`` already returned for ``data`` (the validator opens each file once).
    """
    schema, meta, records = opened or _open_avro(data, "manifest", path)
    mmeta = parse_manifest_metadata(meta, path=path, table_version=table_version)
    ef = _Fields(schema, "manifest_entry", path, "ICEBERG-GEN-005")
    for fid in (ID_STATUS, ID_DATA_FILE):
        if not ef.has(fid):
            raise InvalidTable(f"manifest_entry lacks required field {fid}", path=path, rule="ICEBERG-GEN-005")
    dschema = ef.sub(ID_DATA_FILE)
    if not isinstance(dschema, dict):
        raise InvalidTable("data_file is not a record", path=path, rule="ICEBERG-MANIFEST-013")
    df = _Fields(dschema, "data_file", path, "ICEBERG-GEN-005")
    if df.has(ID_PARTITION):
        pschema = df.sub(ID_PARTITION)
        try:
            # The partition type is taken from the file itself (read by id), then checked against its spec.
            ptype = A.from_avro_schema(pschema) if isinstance(pschema, dict) else T.StructType()
        except InvalidTable as exc:
            raise InvalidTable(f"partition struct: {exc.message}", path=path, rule=exc.rule) from None
    else:
        raise InvalidTable("data_file lacks required field 102 (partition)", path=path, rule="ICEBERG-MANIFEST-020")
    spec_ids = [f.field_id for f in mmeta.spec.fields]
    if [f.id for f in ptype.fields] != spec_ids:
        raise InvalidTable(f"partition struct ids {[f.id for f in ptype.fields]} do not match the manifest's spec {spec_ids}", path=path, rule="ICEBERG-MANIFEST-020")
    file_names = {f.id: f.name for f in ptype.fields}
    try:
        # Values are typed by the spec's result types over the manifest's schema (the file's Avro types may be plainer).
        ptype = P.partition_type(mmeta.spec, mmeta.schema)
    except InvalidTable:
        pass  # e.g. a source column the manifest schema lacks: fall back to the types the file declares

    v1_file = mmeta.format_version == 1
    entries = []
    for i, rec in enumerate(records):
        where = f"manifest entry {i}"
        status = _check_int(ef.get(rec, ID_STATUS, required=True, rule="ICEBERG-MANIFEST-010"), f"{where} status", path, "ICEBERG-MANIFEST-010")
        if status not in STATUSES:
            raise InvalidTable(f"{where} status {status} is not 0, 1 or 2", path=path, rule="ICEBERG-MANIFEST-010")
        d = ef.get(rec, ID_DATA_FILE, required=True, rule="ICEBERG-MANIFEST-013")
        if not isinstance(d, dict):
            raise InvalidTable(f"{where} data_file is not a record", path=path, rule="ICEBERG-MANIFEST-013")
        fmt = df.get(d, ID_FILE_FORMAT, required=True, rule="ICEBERG-MANIFEST-019")
        if not isinstance(fmt, str) or fmt.lower() not in FILE_FORMATS:
            raise InvalidTable(f"{where} file_format {fmt!r} is not one of {FILE_FORMATS}", path=path, rule="ICEBERG-MANIFEST-019")
        try:
            raw_part = df.get(d, ID_PARTITION, required=True, rule="ICEBERG-MANIFEST-020")
            by_name = {f.name: raw_part.get(file_names[f.id]) for f in ptype.fields}
            partition = A.from_avro_value(by_name, ptype)
        except (InvalidTable, Unsupported):
            raise
        except Exception as exc:  # noqa: BLE001 - a malformed partition value, reported with context
            raise InvalidTable(f"{where} partition value is malformed: {exc}", path=path, rule="ICEBERG-MANIFEST-020") from None
        lst = lambda fid, name: (None if (x := df.get(d, fid, required=False, rule="")) is None else tuple(_check_int(y, f"{where} {name}", path, "ICEBERG-MANIFEST-034") for y in x))  # noqa: E731
        def opt_int(fid: int, name: str) -> Any:
            return _check_int(df.get(d, fid, required=False, rule=""), f"{where} {name}", path, "ICEBERG-GEN-005")
        file_path = df.get(d, ID_FILE_PATH, required=True, rule="ICEBERG-MANIFEST-018")
        if not isinstance(file_path, str):
            raise InvalidTable(f"{where} file_path must be a string", path=path, rule="ICEBERG-MANIFEST-018")
        data_file = DataFile(
            content=opt_int(ID_CONTENT, "content") or DATA,  # Appendix E: absent in v1 -> data
            file_path=file_path,
            file_format=fmt.lower(),
            partition=partition,
            record_count=_check_int(df.get(d, ID_RECORD_COUNT, required=True, rule="ICEBERG-MANIFEST-021"), f"{where} record_count", path, "ICEBERG-MANIFEST-021"),
            file_size_in_bytes=_check_int(df.get(d, ID_FILE_SIZE, required=True, rule="ICEBERG-MANIFEST-022"), f"{where} file_size_in_bytes", path, "ICEBERG-MANIFEST-022"),
            column_sizes=_map_in(df.get(d, ID_COLUMN_SIZES, required=False, rule=""), f"{where} column_sizes", path),
            value_counts=_map_in(df.get(d, ID_VALUE_COUNTS, required=False, rule=""), f"{where} value_counts", path),
            null_value_counts=_map_in(df.get(d, ID_NULL_VALUE_COUNTS, required=False, rule=""), f"{where} null_value_counts", path),
            nan_value_counts=_map_in(df.get(d, ID_NAN_VALUE_COUNTS, required=False, rule=""), f"{where} nan_value_counts", path),
            lower_bounds=_map_in(df.get(d, ID_LOWER_BOUNDS, required=False, rule=""), f"{where} lower_bounds", path),
            upper_bounds=_map_in(df.get(d, ID_UPPER_BOUNDS, required=False, rule=""), f"{where} upper_bounds", path),
            key_metadata=df.get(d, ID_KEY_METADATA, required=False, rule=""),
            split_offsets=lst(ID_SPLIT_OFFSETS, "split_offsets"),
            equality_ids=lst(ID_EQUALITY_IDS, "equality_ids"),
            sort_order_id=opt_int(ID_SORT_ORDER_ID, "sort_order_id"),
            first_row_id=opt_int(ID_FIRST_ROW_ID, "first_row_id"),
            referenced_data_file=df.get(d, ID_REFERENCED_DATA_FILE, required=False, rule=""),
            content_offset=opt_int(ID_CONTENT_OFFSET, "content_offset"),
            content_size_in_bytes=opt_int(ID_CONTENT_SIZE, "content_size_in_bytes"),
        )
        if data_file.content not in (DATA, POSITION_DELETES, EQUALITY_DELETES):
            raise InvalidTable(f"{where} content {data_file.content} is not 0, 1 or 2", path=path, rule="ICEBERG-MANIFEST-017")
        if (data_file.content != DATA) != (mmeta.content == MANIFEST_DELETES):
            raise InvalidTable(f"{where} content {data_file.content} does not belong in a {'delete' if mmeta.content else 'data'} manifest", path=path, rule="ICEBERG-MANIFEST-001")
        entries.append(ManifestEntry(
            status=status,
            # v1 files require snapshot_id; a reader of a v1 file with a null one cannot guess it.
            snapshot_id=_check_int(ef.get(rec, ID_SNAPSHOT_ID, required=v1_file, rule="ICEBERG-MANIFEST-011"), f"{where} snapshot_id", path, "ICEBERG-MANIFEST-011"),
            sequence_number=_check_int(ef.get(rec, ID_SEQUENCE_NUMBER, required=False, rule=""), f"{where} sequence_number", path, "ICEBERG-SEQ-006"),
            file_sequence_number=_check_int(ef.get(rec, ID_FILE_SEQUENCE_NUMBER, required=False, rule=""), f"{where} file_sequence_number", path, "ICEBERG-SEQ-006"),
            data_file=data_file,
        ))
    out = tuple(entries)
    if inherit and manifest_file is not None:
        out = inherit_entries(out, manifest_file, v1_manifest=v1_file, path=path)
    return Manifest(metadata=mmeta, entries=out, partition_type=ptype)


def inherit_entries(entries: Iterable[ManifestEntry], mf: ManifestFile, *, v1_manifest: bool = False, path: str | None = None) -> tuple[ManifestEntry, ...]:
    """Apply snapshot-id, sequence-number and first_row_id inheritance from the manifest's list entry."""
    out = []
    next_row_id = mf.first_row_id
    # A v1 manifest (or one listed with sequence number 0, i.e. from a v1 list) has sequence number 0 everywhere.
    v1_like = v1_manifest or mf.sequence_number == 0
    for i, e in enumerate(entries):
        snap = e.snapshot_id if e.snapshot_id is not None else mf.added_snapshot_id
        seq, fseq = e.sequence_number, e.file_sequence_number
        if v1_like:
            seq = 0 if seq is None else seq
            fseq = 0 if fseq is None else fseq
        elif e.status == ADDED:
            seq = mf.sequence_number if seq is None else seq
            fseq = mf.sequence_number if fseq is None else fseq
        elif seq is None or fseq is None:
            raise InvalidTable(f"manifest entry {i} ({e.data_file.file_path}) has status {e.status} but no explicit sequence numbers",
                               path=path or mf.manifest_path, rule="ICEBERG-SEQ-006")
        dfile = e.data_file
        if next_row_id is None:
            if dfile.first_row_id is not None:
                # A manifest listed without first_row_id (a snapshot from before v3) has no row ids at all.
                dfile = replace(dfile, first_row_id=None)
        elif dfile.content == DATA and dfile.first_row_id is None and e.status != DELETED:
            # DELETED entries neither take nor consume ids (they carry theirs explicitly); Java does the same.
            dfile = replace(dfile, first_row_id=next_row_id)
            next_row_id += dfile.record_count
        out.append(replace(e, snapshot_id=snap, sequence_number=seq, file_sequence_number=fseq, data_file=dfile))
    return tuple(out)


def read_manifest_list(data: bytes, *, path: str | None = None,
                       opened: tuple[dict, dict[str, str], list[dict]] | None = None) -> tuple[ManifestFile, ...]:
    """The manifest_file entries of a manifest list; v1 defaults (content 0, sequence numbers 0) applied."""
    schema, meta, records = opened or _open_avro(data, "manifest list", path)
    mf = _Fields(schema, "manifest_file", path, "ICEBERG-GEN-005")
    summary_fields = None
    if mf.has(ML_PARTITIONS):
        arr = mf.sub(ML_PARTITIONS)
        if not isinstance(arr, dict) or arr.get("type") != "array" or not isinstance(arr.get(A.ELEMENT_ID), int):
            raise InvalidTable("partitions must be an array with an element-id", path=path, rule="ICEBERG-FMT-006")
        item = arr.get("items")
        if isinstance(item, list):
            item = next((b for b in item if b != "null"), None)
        if not isinstance(item, dict):
            raise InvalidTable("field_summary is not a record", path=path, rule="ICEBERG-MLIST-013")
        summary_fields = _Fields(item, "field_summary", path, "ICEBERG-MLIST-014")
    out = []
    for i, rec in enumerate(records):
        where = f"manifest list entry {i}"

        def num(fid: int, rule: str, *, required: bool = False, default: Any = None) -> Any:
            return _check_int(mf.get(rec, fid, required=required, rule=rule, default=default), f"{where} field {fid}", path, rule)

        mpath = mf.get(rec, ML_MANIFEST_PATH, required=True, rule="ICEBERG-MLIST-003")
        if not isinstance(mpath, str):
            raise InvalidTable(f"{where} manifest_path must be a string", path=path, rule="ICEBERG-MLIST-003")
        parts = None
        raw_parts = mf.get(rec, ML_PARTITIONS, required=False, rule="")
        if raw_parts is not None and summary_fields is not None:
            parts = []
            for s in raw_parts:
                cn = summary_fields.get(s, FS_CONTAINS_NULL, required=True, rule="ICEBERG-MLIST-014")
                parts.append(FieldSummary(
                    contains_null=bool(cn),
                    contains_nan=summary_fields.get(s, FS_CONTAINS_NAN, required=False, rule=""),
                    lower_bound=summary_fields.get(s, FS_LOWER_BOUND, required=False, rule=""),
                    upper_bound=summary_fields.get(s, FS_UPPER_BOUND, required=False, rule=""),
                ))
            parts = tuple(parts)
        content = num(ML_CONTENT, "ICEBERG-MLIST-006", default=MANIFEST_DATA)
        if content not in (MANIFEST_DATA, MANIFEST_DELETES):
            raise InvalidTable(f"{where} content {content} is not 0 or 1", path=path, rule="ICEBERG-MLIST-006")
        out.append(ManifestFile(
            manifest_path=mpath,
            manifest_length=num(ML_MANIFEST_LENGTH, "ICEBERG-MLIST-004", required=True),
            partition_spec_id=num(ML_PARTITION_SPEC_ID, "ICEBERG-MLIST-005", required=True),
            content=content,
            sequence_number=num(ML_SEQUENCE_NUMBER, "ICEBERG-MLIST-007", default=0),
            min_sequence_number=num(ML_MIN_SEQUENCE_NUMBER, "ICEBERG-MLIST-008", default=0),
            added_snapshot_id=num(ML_ADDED_SNAPSHOT_ID, "ICEBERG-MLIST-009", required=True),
            added_files_count=num(ML_ADDED_FILES, "ICEBERG-MLIST-010"),
            existing_files_count=num(ML_EXISTING_FILES, "ICEBERG-MLIST-010"),
            deleted_files_count=num(ML_DELETED_FILES, "ICEBERG-MLIST-010"),
            added_rows_count=num(ML_ADDED_ROWS, "ICEBERG-MLIST-011"),
            existing_rows_count=num(ML_EXISTING_ROWS, "ICEBERG-MLIST-011"),
            deleted_rows_count=num(ML_DELETED_ROWS, "ICEBERG-MLIST-011"),
            partitions=parts,
            key_metadata=mf.get(rec, ML_KEY_METADATA, required=False, rule=""),
            first_row_id=num(ML_FIRST_ROW_ID, "ICEBERG-MLIST-019"),
        ))
    return tuple(out)


def manifest_list_metadata(data: bytes, *, path: str | None = None) -> dict[str, str]:
    """The key-value metadata of a manifest list (or manifest) file, decoded."""
    return _open_avro(data, "manifest list", path)[1]


# ---------------------------------------------------------------------------------------------
# Helpers for writers and checks


def _single_value(v: Any, t: T.IcebergType, where: str) -> bytes:
    try:
        return V.to_bytes(v, t)
    except (OverflowError, struct.error, ValueError, TypeError) as exc:
        # values.to_bytes lets struct's OverflowError out for a float beyond float32; keep the kit's error contract.
        raise InvalidTable(f"{v!r} has no {t} single value ({exc}) at {where}", rule="ICEBERG-SERDE-011") from None


def encode_bounds(values: Mapping[int, Any], schema: T.Schema) -> dict[int, bytes]:
    """{field id: internal value} -> {field id: Appendix D single-value bytes} (nulls skipped, NaN refused)."""
    out = {}
    for fid, v in values.items():
        if v is None:
            continue
        if isinstance(v, float) and math.isnan(v):
            raise InvalidTable(f"NaN is never a bound (field {fid})", rule="ICEBERG-MANIFEST-032")
        t = schema.find_type(fid)
        if t is None:
            raise InvalidTable(f"bound for unknown field id {fid}", rule="ICEBERG-MANIFEST-031")
        out[fid] = _single_value(v, t, f"bound of field {fid}")
    return out


def decode_bounds(bounds: Mapping[int, bytes] | None, schema: T.Schema) -> dict[int, Any]:
    """{field id: bytes} -> {field id: internal value} for the ids the schema still has (promotions honoured)."""
    out: dict[int, Any] = {}
    for fid, raw in (bounds or {}).items():
        t = schema.find_type(fid)
        if t is None or not T.is_primitive(t):
            continue  # dropped column, or a type without a comparable single value
        out[fid] = V.bound_from_bytes(raw, t, where=f"bound of field {fid}")
    return out


def _float_key(x: float) -> tuple[float, float]:
    # IEEE totalOrder for the two zeros: -0.0 sorts before +0.0 (MLIST-017 / MANIFEST-032).
    return (x, math.copysign(1.0, x))


def summarize_partitions(spec: P.PartitionSpec, schema: T.Schema, partitions: Iterable[Mapping[int, Any]]) -> tuple[FieldSummary, ...]:
    """Field summaries of a manifest's partition tuples: null/NaN flags and single-value bounds."""
    ptype = P.partition_type(spec, schema)
    parts = list(partitions)
    out = []
    for f in ptype.fields:
        vals = [p.get(f.id) for p in parts]
        has_null = any(v is None for v in vals)
        is_float = f.type in (T.FLOAT, T.DOUBLE)
        has_nan = any(isinstance(v, float) and math.isnan(v) for v in vals) if is_float else None
        real = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
        lo = hi = None
        if real and T.is_primitive(f.type) and f.type != T.UNKNOWN:
            key = _float_key if is_float else None
            lo = _single_value(min(real, key=key), f.type, f"partition field {f.name}")
            hi = _single_value(max(real, key=key), f.type, f"partition field {f.name}")
        out.append(FieldSummary(contains_null=has_null, contains_nan=has_nan, lower_bound=lo, upper_bound=hi))
    return tuple(out)


def manifest_file_for(
    entries: Iterable[ManifestEntry],
    *,
    manifest_path: str,
    manifest_length: int,
    spec: P.PartitionSpec,
    schema: T.Schema,
    added_snapshot_id: int,
    sequence_number: int,
    content: int = MANIFEST_DATA,
    first_row_id: int | None = None,
) -> ManifestFile:
    """The manifest list entry of a manifest: counts by status, min live data sequence number, partition summaries."""
    es = list(entries)
    def count(st: int) -> int:
        return sum(1 for e in es if e.status == st)
    def rows(st: int) -> int:
        return sum(e.data_file.record_count for e in es if e.status == st)
    live_seqs = [sequence_number if e.sequence_number is None else e.sequence_number for e in es if e.is_live]
    return ManifestFile(
        manifest_path=manifest_path, manifest_length=manifest_length, partition_spec_id=spec.spec_id,
        content=content, sequence_number=sequence_number,
        min_sequence_number=min(live_seqs, default=sequence_number),
        added_snapshot_id=added_snapshot_id,
        added_files_count=count(ADDED), existing_files_count=count(EXISTING), deleted_files_count=count(DELETED),
        added_rows_count=rows(ADDED), existing_rows_count=rows(EXISTING), deleted_rows_count=rows(DELETED),
        partitions=summarize_partitions(spec, schema, (e.data_file.partition for e in es)),
        first_row_id=first_row_id if content == MANIFEST_DATA else None,
    )


def validate_manifest(manifest: Manifest, mf: ManifestFile | None = None) -> list[T.Violation]:
    """Rules one manifest (and its list entry, if given) can break, beyond what reading already refuses."""
    Vn = T.Violation
    out: list[Vn] = []
    v = manifest.metadata.format_version
    if v >= 2 and manifest.metadata.schema_id is None:
        # Read leniently (Java and PyIceberg omit it, apache/iceberg#8745) but still a broken MUST for writers.
        out.append(Vn(rule="ICEBERG-MANIFEST-005", message="v2+ manifest metadata lacks 'schema-id'", where="schema-id"))
    for i, e in enumerate(manifest.entries):
        d = e.data_file
        where = f"entry {i} ({d.file_path})"
        if d.split_offsets is not None and list(d.split_offsets) != sorted(d.split_offsets):
            out.append(Vn(rule="ICEBERG-MANIFEST-034", message="split_offsets are not ascending", where=where))
        if d.content == EQUALITY_DELETES and not d.equality_ids:
            out.append(Vn(rule="ICEBERG-MANIFEST-035", message="an equality delete file needs equality_ids", where=where))
        if d.content != EQUALITY_DELETES and d.equality_ids is not None:
            out.append(Vn(rule="ICEBERG-MANIFEST-035", message="equality_ids should be null unless content is 2", where=where))
        if d.content_offset is not None and d.content_size_in_bytes is None:
            out.append(Vn(rule="ICEBERG-MANIFEST-040", message="content_offset without content_size_in_bytes", where=where))
        if d.file_format == "puffin" and d.content == POSITION_DELETES and (d.referenced_data_file is None or d.content_offset is None):
            out.append(Vn(rule="ICEBERG-DV-008", message="a deletion vector needs referenced_data_file, content_offset and content_size_in_bytes", where=where))
        if d.content != DATA and d.first_row_id is not None:
            out.append(Vn(rule="ICEBERG-LINEAGE-017", message="a delete file has a first_row_id", where=where))
        if d.file_format == "puffin" and v < 3:
            out.append(Vn(rule="ICEBERG-DV-001", message="deletion vectors (puffin) need format version 3", where=where))
        if d.content == POSITION_DELETES and d.sort_order_id is not None:
            out.append(Vn(rule="ICEBERG-MANIFEST-037", message="position delete files should leave sort_order_id null", where=where))
        if v >= 2 and e.status != ADDED and (e.sequence_number is None or e.file_sequence_number is None) and (mf is None or mf.sequence_number > 0):
            out.append(Vn(rule="ICEBERG-SEQ-006", message="EXISTING/DELETED entry without explicit sequence numbers", where=where))
    if mf is not None:
        counts = {st: sum(1 for e in manifest.entries if e.status == st) for st in STATUSES}
        rows = {st: sum(e.data_file.record_count for e in manifest.entries if e.status == st) for st in STATUSES}
        for st, fc, rc, name in ((ADDED, mf.added_files_count, mf.added_rows_count, "added"),
                                 (EXISTING, mf.existing_files_count, mf.existing_rows_count, "existing"),
                                 (DELETED, mf.deleted_files_count, mf.deleted_rows_count, "deleted")):
            if fc is not None and fc != counts[st]:
                out.append(Vn(rule="ICEBERG-MLIST-010", message=f"{name}_files_count {fc} but {counts[st]} entries", where=mf.manifest_path))
            if rc is not None and rc != rows[st]:
                out.append(Vn(rule="ICEBERG-MLIST-011", message=f"{name}_rows_count {rc} but {rows[st]} rows", where=mf.manifest_path))
        live = [e.sequence_number for e in manifest.entries if e.is_live and e.sequence_number is not None]
        if live and mf.sequence_number > 0 and mf.min_sequence_number != min(live):
            out.append(Vn(rule="ICEBERG-SEQ-013", message=f"min_sequence_number {mf.min_sequence_number} but the live minimum is {min(live)}", where=mf.manifest_path))
        if mf.partitions is not None and len(mf.partitions) != len(manifest.metadata.spec.fields):
            out.append(Vn(rule="ICEBERG-MLIST-013", message="partitions has not one summary per spec field", where=mf.manifest_path))
        if mf.partition_spec_id != manifest.metadata.spec.spec_id:
            out.append(Vn(rule="ICEBERG-MANIFEST-003", message=f"list says spec {mf.partition_spec_id}, manifest says {manifest.metadata.spec.spec_id}", where=mf.manifest_path))
        if mf.content != manifest.metadata.content:
            out.append(Vn(rule="ICEBERG-MLIST-006", message="list content and manifest content disagree", where=mf.manifest_path))
    return out
