"""Table Metadata: the metadata JSON (Appendix C) per format version, snapshots, refs, logs, statistics, upgrades.

The model is version-agnostic; ``parse_metadata`` and ``metadata_to_dict`` are the only places
that know which fields each version requires, allows or omits (the Writer requirements tables of
"Table Metadata Fields", "Snapshots", "Snapshot References", "Table Statistics", "Partition
Statistics" and "Encryption Keys"). Defaults for older versions follow Appendix E: a v1 table
reads ``last-sequence-number`` and snapshot ``sequence-number`` as 0; an upgraded v3 table starts
``next-row-id`` at 0 and keeps its older snapshots without ``first-row-id``.

Metadata JSON is strict about the table's own version (the spec lets readers be: JSON files are
never reused across versions); snapshots inside it are not, because snapshots written before an
upgrade stay as they were (v1 snapshots in a v2 table have no ``sequence-number``; v2 snapshots
in a v3 table have no ``first-row-id``).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid as uuid_mod
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from reference_impl.common import bounded
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import SUPPORTED_FORMAT_VERSIONS
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import types as T

# Table metadata keys (Table Metadata Fields / Appendix C).
FORMAT_VERSION = "format-version"
TABLE_UUID = "table-uuid"
LOCATION = "location"
LAST_SEQUENCE_NUMBER = "last-sequence-number"
LAST_UPDATED_MS = "last-updated-ms"
LAST_COLUMN_ID = "last-column-id"
SCHEMA = "schema"
SCHEMAS = "schemas"
CURRENT_SCHEMA_ID = "current-schema-id"
PARTITION_SPEC = "partition-spec"
PARTITION_SPECS = "partition-specs"
DEFAULT_SPEC_ID = "default-spec-id"
LAST_PARTITION_ID = "last-partition-id"
PROPERTIES = "properties"
CURRENT_SNAPSHOT_ID = "current-snapshot-id"
SNAPSHOTS = "snapshots"
SNAPSHOT_LOG = "snapshot-log"
METADATA_LOG = "metadata-log"
SORT_ORDERS = "sort-orders"
DEFAULT_SORT_ORDER_ID = "default-sort-order-id"
REFS = "refs"
STATISTICS = "statistics"
PARTITION_STATISTICS = "partition-statistics"
NEXT_ROW_ID = "next-row-id"
ENCRYPTION_KEYS = "encryption-keys"
# Snapshot keys.
SNAPSHOT_ID = "snapshot-id"
PARENT_SNAPSHOT_ID = "parent-snapshot-id"
SEQUENCE_NUMBER = "sequence-number"
TIMESTAMP_MS = "timestamp-ms"
MANIFEST_LIST = "manifest-list"
MANIFESTS = "manifests"
SUMMARY = "summary"
SCHEMA_ID = "schema-id"
FIRST_ROW_ID = "first-row-id"
ADDED_ROWS = "added-rows"
KEY_ID = "key-id"
OPERATION = "operation"
OPERATIONS = ("append", "replace", "overwrite", "delete")
# Refs.
REF_TYPE = "type"
BRANCH = "branch"
TAG = "tag"
MIN_SNAPSHOTS_TO_KEEP = "min-snapshots-to-keep"
MAX_SNAPSHOT_AGE_MS = "max-snapshot-age-ms"
MAX_REF_AGE_MS = "max-ref-age-ms"
MAIN_BRANCH = "main"
# Logs.
METADATA_FILE = "metadata-file"
# Statistics.
STATISTICS_PATH = "statistics-path"
FILE_SIZE_IN_BYTES = "file-size-in-bytes"
FILE_FOOTER_SIZE_IN_BYTES = "file-footer-size-in-bytes"
KEY_METADATA = "key-metadata"
BLOB_METADATA = "blob-metadata"
BLOB_TYPE = "type"
BLOB_FIELDS = "fields"
BLOB_PROPERTIES = "properties"
# Encryption keys.
ENC_KEY_ID = "key-id"
ENCRYPTED_KEY_METADATA = "encrypted-key-metadata"
ENCRYPTED_BY_ID = "encrypted-by-id"
ENC_PROPERTIES = "properties"

# Java wrote -1 for "no current snapshot" in v1/v2 (Appendix F); it means null.
NO_SNAPSHOT_ID = -1
INITIAL_SEQUENCE_NUMBER = 0


def _frozen_map(m: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(m or {}))


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotRef:
    """A branch or tag: its snapshot and retention settings (None = table property default)."""

    snapshot_id: int
    type: str
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    @property
    def is_branch(self) -> bool:
        """Whether the reference is a branch (else a tag)."""
        return self.type == BRANCH


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """One snapshot; ``sequence_number`` is 0 for snapshots written without one (v1, Appendix E)."""

    snapshot_id: int
    timestamp_ms: int
    parent_snapshot_id: int | None = None
    sequence_number: int = INITIAL_SEQUENCE_NUMBER
    manifest_list: str | None = None
    manifests: tuple[str, ...] | None = None  # v1 only
    summary: Mapping[str, str] | None = field(default=None, hash=False)
    schema_id: int | None = None
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None

    @property
    def operation(self) -> str | None:
        """The summary's ``operation`` (None when there is no summary)."""
        return None if self.summary is None else self.summary.get(OPERATION)


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotLogEntry:
    """A change of the current snapshot: when, and to which snapshot."""

    snapshot_id: int
    timestamp_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataLogEntry:
    """A previous metadata file and when it was written."""

    metadata_file: str
    timestamp_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BlobMetadata:
    """A statistics blob in a Puffin statistics file."""

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: Mapping[str, str] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class StatisticsFile:
    """A table statistics file (Puffin) registered for a snapshot."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...]
    key_metadata: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionStatisticsFile:
    """A partition statistics file registered for a snapshot."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EncryptionKey:
    """A v3 table encryption key entry."""

    key_id: str
    encrypted_key_metadata: str
    encrypted_by_id: str | None = None
    properties: Mapping[str, str] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableMetadata:
    """A table metadata file, version-agnostic (v1 singular schema/spec are folded into the lists)."""

    format_version: int
    location: str
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[T.Schema, ...]
    current_schema_id: int
    partition_specs: tuple[P.PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    table_uuid: str | None = None
    last_sequence_number: int = INITIAL_SEQUENCE_NUMBER
    properties: Mapping[str, str] = field(default_factory=lambda: _frozen_map({}), hash=False)
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[SnapshotLogEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    sort_orders: tuple[P.SortOrder, ...] = (P.UNSORTED,)
    default_sort_order_id: int = P.UNSORTED_ORDER_ID
    refs: Mapping[str, SnapshotRef] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    next_row_id: int | None = None
    encryption_keys: tuple[EncryptionKey, ...] = ()

    def schema(self) -> T.Schema:
        """The current schema; InvalidTable when current-schema-id names no schema."""
        for s in self.schemas:
            if s.schema_id == self.current_schema_id:
                return s
        raise InvalidTable(f"current-schema-id {self.current_schema_id} is not in schemas", rule="ICEBERG-META-020")

    def schema_by_id(self, schema_id: int) -> T.Schema | None:
        """The schema with this id, or None."""
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    def spec(self) -> P.PartitionSpec:
        """The default partition spec; InvalidTable when default-spec-id names no spec."""
        found = self.spec_by_id(self.default_spec_id)
        if found is None:
            raise InvalidTable(f"default-spec-id {self.default_spec_id} is not in partition-specs", rule="ICEBERG-META-024")
        return found

    def spec_by_id(self, spec_id: int) -> P.PartitionSpec | None:
        """The partition spec with this id, or None."""
        return next((s for s in self.partition_specs if s.spec_id == spec_id), None)

    def sort_order(self) -> P.SortOrder:
        """The default sort order; InvalidTable when default-sort-order-id names no order."""
        found = next((o for o in self.sort_orders if o.order_id == self.default_sort_order_id), None)
        if found is None:
            raise InvalidTable(f"default-sort-order-id {self.default_sort_order_id} is not in sort-orders", rule="ICEBERG-META-038")
        return found

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        """The snapshot with this id, or None."""
        return next((s for s in self.snapshots if s.snapshot_id == snapshot_id), None)

    def effective_refs(self) -> dict[str, SnapshotRef]:
        """The refs with the implicit ``main`` branch added (it always exists when there is a current snapshot)."""
        out = dict(self.refs)
        if MAIN_BRANCH not in out and self.current_snapshot_id is not None:
            out[MAIN_BRANCH] = SnapshotRef(snapshot_id=self.current_snapshot_id, type=BRANCH)
        return out


# ---------------------------------------------------------------------------------------------
# JSON -> model


class _Ctx:
    """Where in the document we are and which version rules apply, for error messages."""

    def __init__(self, version: int | None, path: str | None) -> None:
        self.version = version
        self.path = path

    def bad(self, message: str, rule: str | None) -> InvalidTable:
        return InvalidTable(message, rule=rule, path=self.path, version=self.version)


def _int(ctx: _Ctx, obj: Mapping, key: str, where: str, rule: str, *, required: bool = True, default: Any = None) -> Any:
    if key not in obj or obj[key] is None:
        if required:
            raise ctx.bad(f"{where} lacks required field {key!r}", rule)
        return default
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise ctx.bad(f"{where} field {key!r} must be a JSON integer, got {v!r}", "ICEBERG-SERDE-025" if where == "table metadata" else rule)
    return v


def _str(ctx: _Ctx, obj: Mapping, key: str, where: str, rule: str, *, required: bool = True) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise ctx.bad(f"{where} lacks required field {key!r}", rule)
        return None
    v = obj[key]
    if not isinstance(v, str):
        raise ctx.bad(f"{where} field {key!r} must be a JSON string, got {v!r}", rule)
    return v


def _list(ctx: _Ctx, obj: Mapping, key: str, where: str, rule: str, *, required: bool = False) -> list:
    if key not in obj or obj[key] is None:
        if required:
            raise ctx.bad(f"{where} lacks required field {key!r}", rule)
        return []
    v = obj[key]
    if not isinstance(v, list):
        raise ctx.bad(f"{where} field {key!r} must be a JSON list", rule)
    return v


def _obj(ctx: _Ctx, v: Any, where: str, rule: str) -> dict:
    if not isinstance(v, dict):
        raise ctx.bad(f"{where} must be a JSON object, got {type(v).__name__}", rule)
    return v


def _str_map(ctx: _Ctx, v: Any, where: str, rule: str) -> dict[str, str]:
    m = _obj(ctx, v, where, rule)
    for k, x in m.items():
        if not isinstance(x, str):
            raise ctx.bad(f"{where}[{k!r}] must be a string (numbers are written as strings), got {x!r}", rule)
    return dict(m)


def _parse_snapshot(ctx: _Ctx, raw: Any, i: int, version: int) -> Snapshot:
    where = f"snapshots[{i}]"
    s = _obj(ctx, raw, where, "ICEBERG-SNAP-001")
    sid = _int(ctx, s, SNAPSHOT_ID, where, "ICEBERG-SNAP-001")
    where = f"snapshot {sid}"
    manifests = None
    if MANIFESTS in s and s[MANIFESTS] is not None:
        lst = _list(ctx, s, MANIFESTS, where, "ICEBERG-SNAP-005")
        if not all(isinstance(m, str) for m in lst):
            raise ctx.bad(f"{where} field 'manifests' must be a list of strings", "ICEBERG-SNAP-005")
        manifests = tuple(lst)
    manifest_list = _str(ctx, s, MANIFEST_LIST, where, "ICEBERG-SNAP-004", required=False)
    if manifest_list is None and manifests is None:
        raise ctx.bad(f"{where} has neither 'manifest-list' nor 'manifests'", "ICEBERG-SNAP-004")
    summary = None
    if SUMMARY in s and s[SUMMARY] is not None:
        summary = _str_map(ctx, s[SUMMARY], f"{where} summary", "ICEBERG-SNAP-012")
        if OPERATION not in summary:
            raise ctx.bad(f"{where} summary lacks 'operation'", "ICEBERG-SNAP-006")
    return Snapshot(
        snapshot_id=sid,
        timestamp_ms=_int(ctx, s, TIMESTAMP_MS, where, "ICEBERG-SNAP-003"),
        parent_snapshot_id=_int(ctx, s, PARENT_SNAPSHOT_ID, where, "ICEBERG-SNAP-002", required=False),
        # Snapshots written before an upgrade to v2 carry none (Appendix E: read as 0).
        sequence_number=_int(ctx, s, SEQUENCE_NUMBER, where, "ICEBERG-SEQ-001", required=False, default=INITIAL_SEQUENCE_NUMBER),
        manifest_list=manifest_list,
        manifests=manifests,
        summary=_frozen_map(summary) if summary is not None else None,
        schema_id=_int(ctx, s, SCHEMA_ID, where, "ICEBERG-SNAP-009", required=False),
        # Snapshots from before an upgrade to v3 keep first-row-id unset (Row Lineage for Upgraded Tables).
        first_row_id=_int(ctx, s, FIRST_ROW_ID, where, "ICEBERG-SNAP-010", required=False) if version >= 3 else None,
        added_rows=_int(ctx, s, ADDED_ROWS, where, "ICEBERG-SNAP-010", required=False) if version >= 3 else None,
        key_id=_str(ctx, s, KEY_ID, where, "ICEBERG-SNAP-011", required=False) if version >= 3 else None,
    )


def _parse_ref(ctx: _Ctx, name: str, raw: Any) -> SnapshotRef:
    where = f"ref {name!r}"
    r = _obj(ctx, raw, where, "ICEBERG-REF-001")
    kind = _str(ctx, r, REF_TYPE, where, "ICEBERG-REF-001")
    if kind not in (BRANCH, TAG):
        raise ctx.bad(f"{where} type must be 'branch' or 'tag', got {kind!r}", "ICEBERG-REF-001")
    return SnapshotRef(
        snapshot_id=_int(ctx, r, SNAPSHOT_ID, where, "ICEBERG-REF-001"),
        type=kind,
        min_snapshots_to_keep=_int(ctx, r, MIN_SNAPSHOTS_TO_KEEP, where, "ICEBERG-REF-002", required=False),
        max_snapshot_age_ms=_int(ctx, r, MAX_SNAPSHOT_AGE_MS, where, "ICEBERG-REF-003", required=False),
        max_ref_age_ms=_int(ctx, r, MAX_REF_AGE_MS, where, "ICEBERG-REF-004", required=False),
    )


def _parse_statistics(ctx: _Ctx, raw: Any, i: int) -> StatisticsFile:
    where = f"statistics[{i}]"
    s = _obj(ctx, raw, where, "ICEBERG-STATS-002")
    blobs = []
    for j, b in enumerate(_list(ctx, s, BLOB_METADATA, where, "ICEBERG-STATS-002", required=True)):
        bw = f"{where} blob-metadata[{j}]"
        b = _obj(ctx, b, bw, "ICEBERG-STATS-003")
        fields = _list(ctx, b, BLOB_FIELDS, bw, "ICEBERG-STATS-003", required=True)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in fields):
            raise ctx.bad(f"{bw} fields must be a list of field ids", "ICEBERG-STATS-003")
        props = b.get(BLOB_PROPERTIES)
        blobs.append(BlobMetadata(
            type=_str(ctx, b, BLOB_TYPE, bw, "ICEBERG-STATS-003"),
            snapshot_id=_int(ctx, b, SNAPSHOT_ID, bw, "ICEBERG-STATS-003"),
            sequence_number=_int(ctx, b, SEQUENCE_NUMBER, bw, "ICEBERG-STATS-003"),
            fields=tuple(fields),
            properties=_frozen_map(_str_map(ctx, props, f"{bw} properties", "ICEBERG-STATS-003")) if props is not None else None,
        ))
    return StatisticsFile(
        snapshot_id=_int(ctx, s, SNAPSHOT_ID, where, "ICEBERG-STATS-002"),
        statistics_path=_str(ctx, s, STATISTICS_PATH, where, "ICEBERG-STATS-002"),
        file_size_in_bytes=_int(ctx, s, FILE_SIZE_IN_BYTES, where, "ICEBERG-STATS-002"),
        file_footer_size_in_bytes=_int(ctx, s, FILE_FOOTER_SIZE_IN_BYTES, where, "ICEBERG-STATS-002"),
        blob_metadata=tuple(blobs),
        key_metadata=_str(ctx, s, KEY_METADATA, where, "ICEBERG-STATS-002", required=False),
    )


def _parse_partition_statistics(ctx: _Ctx, raw: Any, i: int) -> PartitionStatisticsFile:
    where = f"partition-statistics[{i}]"
    s = _obj(ctx, raw, where, "ICEBERG-STATS-004")
    return PartitionStatisticsFile(
        snapshot_id=_int(ctx, s, SNAPSHOT_ID, where, "ICEBERG-STATS-004"),
        statistics_path=_str(ctx, s, STATISTICS_PATH, where, "ICEBERG-STATS-004"),
        file_size_in_bytes=_int(ctx, s, FILE_SIZE_IN_BYTES, where, "ICEBERG-STATS-004"),
    )


def _parse_encryption_key(ctx: _Ctx, raw: Any, i: int) -> EncryptionKey:
    where = f"encryption-keys[{i}]"
    k = _obj(ctx, raw, where, "ICEBERG-ENC-001")
    props = k.get(ENC_PROPERTIES)
    return EncryptionKey(
        key_id=_str(ctx, k, ENC_KEY_ID, where, "ICEBERG-ENC-001"),
        encrypted_key_metadata=_str(ctx, k, ENCRYPTED_KEY_METADATA, where, "ICEBERG-ENC-001"),
        encrypted_by_id=_str(ctx, k, ENCRYPTED_BY_ID, where, "ICEBERG-ENC-001", required=False),
        properties=_frozen_map(_str_map(ctx, props, f"{where} properties", "ICEBERG-ENC-001")) if props is not None else None,
    )


def _wrap(fn, ctx: _Ctx, what: str):
    """Run a foundation parser and put our path/version on its InvalidTable."""
    try:
        return fn()
    except InvalidTable as exc:
        raise InvalidTable(f"{what}: {exc.message}", rule=exc.rule, path=ctx.path, version=ctx.version) from None


def _decode_json(data: bytes | str, path: str | None) -> Any:
    if isinstance(data, bytes) and data[:2] == b"\x1f\x8b":
        # GZIP metadata (Appendix C / F); the name is only a hint, the magic decides.
        data = bounded.inflate_json_text(data, what="GZIP metadata", path=path, rule="ICEBERG-META-044")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InvalidTable(f"metadata is not valid JSON: {exc}", path=path, rule="ICEBERG-META-001") from None


def parse_metadata(obj: Mapping | str | bytes, *, path: str | None = None) -> TableMetadata:
    """TableMetadata from its JSON (dict, text, or possibly GZIP bytes); InvalidTable naming the field and rule."""
    if isinstance(obj, (str, bytes)):
        obj = _decode_json(obj, path)
    ctx = _Ctx(None, path)
    d = _obj(ctx, obj, "table metadata", "ICEBERG-META-001")
    w = "table metadata"
    version = _int(ctx, d, FORMAT_VERSION, w, "ICEBERG-META-003")
    if version > max(SUPPORTED_FORMAT_VERSIONS):
        raise Unsupported(f"format-version {version} is newer than the supported versions {SUPPORTED_FORMAT_VERSIONS}",
                          feature=f"format-version {version}", rule="ICEBERG-META-004", path=path)
    if version < 1:
        raise ctx.bad(f"format-version must be 1, 2 or 3, got {version}", "ICEBERG-META-003")
    ctx.version = version
    v2 = version >= 2

    table_uuid = _str(ctx, d, TABLE_UUID, w, "ICEBERG-META-005", required=v2)
    if table_uuid is not None:
        try:
            uuid_mod.UUID(table_uuid)
        except ValueError:
            raise ctx.bad(f"table-uuid {table_uuid!r} is not a UUID", "ICEBERG-META-005") from None
    location = _str(ctx, d, LOCATION, w, "ICEBERG-META-008")
    last_seq = _int(ctx, d, LAST_SEQUENCE_NUMBER, w, "ICEBERG-META-010", required=v2, default=INITIAL_SEQUENCE_NUMBER)
    if not v2:
        last_seq = INITIAL_SEQUENCE_NUMBER  # Appendix E: v1 reads as 0 (a stray v1 value is not trusted)
    last_updated = _int(ctx, d, LAST_UPDATED_MS, w, "ICEBERG-META-013")
    last_column_id = _int(ctx, d, LAST_COLUMN_ID, w, "ICEBERG-META-015")

    # Schemas: v2 requires the list; v1 requires the singular one but may carry the list too (readers prefer the list).
    has_list = SCHEMAS in d and d[SCHEMAS] is not None
    if v2 or has_list:
        raw_schemas = _list(ctx, d, SCHEMAS, w, "ICEBERG-META-019", required=True)
        schemas = []
        for i, s in enumerate(raw_schemas):
            sch = _wrap(lambda s=s: T.parse_schema(s), ctx, f"schemas[{i}]")
            if sch.schema_id is None:
                if v2:
                    raise ctx.bad(f"schemas[{i}] lacks 'schema-id'", "ICEBERG-SERDE-001")
                sch = replace(sch, schema_id=0)
            schemas.append(sch)
        current_schema_id = _int(ctx, d, CURRENT_SCHEMA_ID, w, "ICEBERG-META-020", required=v2,
                                 default=schemas[0].schema_id if len(schemas) == 1 else None)
        if current_schema_id is None:
            raise ctx.bad("table metadata lists several schemas but no 'current-schema-id'", "ICEBERG-META-020")
    else:
        if SCHEMA not in d or d[SCHEMA] is None:
            raise ctx.bad("table metadata lacks required field 'schema' (v1)", "ICEBERG-META-017")
        sch = _wrap(lambda: T.parse_schema(d[SCHEMA]), ctx, "schema")
        if sch.schema_id is None:
            sch = replace(sch, schema_id=0)
        schemas = [sch]
        current_schema_id = sch.schema_id

    # Partition specs: same pattern; v1 'partition-spec' is the bare fields list with spec id 0.
    has_specs = PARTITION_SPECS in d and d[PARTITION_SPECS] is not None
    if v2 or has_specs:
        raw_specs = _list(ctx, d, PARTITION_SPECS, w, "ICEBERG-META-023", required=True)
        specs = [_wrap(lambda s=s: P.parse_partition_spec(s, format_version=version), ctx, f"partition-specs[{i}]") for i, s in enumerate(raw_specs)]
        default_spec_id = _int(ctx, d, DEFAULT_SPEC_ID, w, "ICEBERG-META-024", required=v2,
                               default=specs[0].spec_id if len(specs) == 1 else None)
        if default_spec_id is None:
            raise ctx.bad("table metadata lists several partition specs but no 'default-spec-id'", "ICEBERG-META-024")
    else:
        if PARTITION_SPEC not in d or d[PARTITION_SPEC] is None:
            raise ctx.bad("table metadata lacks required field 'partition-spec' (v1)", "ICEBERG-META-022")
        specs = [_wrap(lambda: P.parse_partition_fields(d[PARTITION_SPEC], format_version=1, spec_id=0), ctx, "partition-spec")]
        default_spec_id = 0
    derived_last_pid = max((s.last_assigned_field_id for s in specs), default=P.UNPARTITIONED_LAST_PARTITION_ID)
    last_partition_id = _int(ctx, d, LAST_PARTITION_ID, w, "ICEBERG-META-026", required=v2, default=derived_last_pid)

    props = d.get(PROPERTIES)
    properties = _str_map(ctx, props, "properties", "ICEBERG-META-028") if props is not None else {}

    current = _int(ctx, d, CURRENT_SNAPSHOT_ID, w, "ICEBERG-META-029", required=False)
    if current == NO_SNAPSHOT_ID:
        current = None  # Appendix F: Java's -1

    snapshots = tuple(_parse_snapshot(ctx, s, i, version) for i, s in enumerate(_list(ctx, d, SNAPSHOTS, w, "ICEBERG-META-031")))
    snapshot_log = []
    for i, e in enumerate(_list(ctx, d, SNAPSHOT_LOG, w, "ICEBERG-SERDE-007")):
        e = _obj(ctx, e, f"snapshot-log[{i}]", "ICEBERG-SERDE-007")
        snapshot_log.append(SnapshotLogEntry(snapshot_id=_int(ctx, e, SNAPSHOT_ID, f"snapshot-log[{i}]", "ICEBERG-SERDE-007"),
                                             timestamp_ms=_int(ctx, e, TIMESTAMP_MS, f"snapshot-log[{i}]", "ICEBERG-SERDE-007")))
    metadata_log = []
    for i, e in enumerate(_list(ctx, d, METADATA_LOG, w, "ICEBERG-SERDE-007")):
        e = _obj(ctx, e, f"metadata-log[{i}]", "ICEBERG-SERDE-007")
        metadata_log.append(MetadataLogEntry(metadata_file=_str(ctx, e, METADATA_FILE, f"metadata-log[{i}]", "ICEBERG-SERDE-007"),
                                             timestamp_ms=_int(ctx, e, TIMESTAMP_MS, f"metadata-log[{i}]", "ICEBERG-SERDE-007")))

    has_orders = SORT_ORDERS in d and d[SORT_ORDERS] is not None
    if v2 or has_orders:
        raw_orders = _list(ctx, d, SORT_ORDERS, w, "ICEBERG-META-037", required=True)
        orders = tuple(_wrap(lambda o=o: P.parse_sort_order(o, format_version=version), ctx, f"sort-orders[{i}]") for i, o in enumerate(raw_orders))
        default_order = _int(ctx, d, DEFAULT_SORT_ORDER_ID, w, "ICEBERG-META-038", required=v2,
                             default=orders[0].order_id if len(orders) == 1 else P.UNSORTED_ORDER_ID)
    else:
        orders = (P.UNSORTED,)
        default_order = P.UNSORTED_ORDER_ID

    refs: dict[str, SnapshotRef] = {}
    raw_refs = d.get(REFS)
    if raw_refs is not None:
        # Blank for v1 writers, but Java writes refs into v1 tables too; a reader keeps them.
        for name, r in _obj(ctx, raw_refs, "refs", "ICEBERG-META-039").items():
            refs[name] = _parse_ref(ctx, name, r)

    statistics = tuple(_parse_statistics(ctx, s, i) for i, s in enumerate(_list(ctx, d, STATISTICS, w, "ICEBERG-META-041")))
    pstats = tuple(_parse_partition_statistics(ctx, s, i) for i, s in enumerate(_list(ctx, d, PARTITION_STATISTICS, w, "ICEBERG-META-041")))
    next_row_id = None
    keys: tuple[EncryptionKey, ...] = ()
    if version >= 3:
        next_row_id = _int(ctx, d, NEXT_ROW_ID, w, "ICEBERG-META-042")
        keys = tuple(_parse_encryption_key(ctx, k, i) for i, k in enumerate(_list(ctx, d, ENCRYPTION_KEYS, w, "ICEBERG-META-043")))

    return TableMetadata(
        format_version=version, table_uuid=table_uuid, location=location, last_sequence_number=last_seq,
        last_updated_ms=last_updated, last_column_id=last_column_id, schemas=tuple(schemas),
        current_schema_id=current_schema_id, partition_specs=tuple(specs), default_spec_id=default_spec_id,
        last_partition_id=last_partition_id, properties=_frozen_map(properties), current_snapshot_id=current,
        snapshots=snapshots, snapshot_log=tuple(snapshot_log), metadata_log=tuple(metadata_log),
        sort_orders=orders, default_sort_order_id=default_order, refs=MappingProxyType(refs),
        statistics=statistics, partition_statistics=pstats, next_row_id=next_row_id, encryption_keys=keys,
    )


# ---------------------------------------------------------------------------------------------
# model -> JSON


def snapshot_to_dict(s: Snapshot, *, format_version: int) -> dict:
    """A snapshot's JSON for a table of ``format_version`` (v1 omits sequence-number; v3 adds row lineage)."""
    out: dict[str, Any] = {SNAPSHOT_ID: s.snapshot_id}
    if s.parent_snapshot_id is not None:
        out[PARENT_SNAPSHOT_ID] = s.parent_snapshot_id
    if format_version >= 2:
        out[SEQUENCE_NUMBER] = s.sequence_number
    out[TIMESTAMP_MS] = s.timestamp_ms
    if s.manifest_list is not None:
        out[MANIFEST_LIST] = s.manifest_list
    elif s.manifests is not None:
        # Only legal without a manifest list; a v2+ writer never produces this (kept for upgraded snapshots).
        out[MANIFESTS] = list(s.manifests)
    if s.summary is not None:
        out[SUMMARY] = dict(s.summary)
    if s.schema_id is not None:
        out[SCHEMA_ID] = s.schema_id
    if format_version >= 3:
        if s.first_row_id is not None:
            out[FIRST_ROW_ID] = s.first_row_id
        if s.added_rows is not None:
            out[ADDED_ROWS] = s.added_rows
        if s.key_id is not None:
            out[KEY_ID] = s.key_id
    return out


def ref_to_dict(r: SnapshotRef) -> dict:
    """A snapshot reference's JSON (unset retention fields omitted)."""
    out: dict[str, Any] = {SNAPSHOT_ID: r.snapshot_id, REF_TYPE: r.type}
    for key, v in ((MIN_SNAPSHOTS_TO_KEEP, r.min_snapshots_to_keep), (MAX_SNAPSHOT_AGE_MS, r.max_snapshot_age_ms), (MAX_REF_AGE_MS, r.max_ref_age_ms)):
        if v is not None:
            out[key] = v
    return out


def _stats_to_dict(s: StatisticsFile) -> dict:
    out: dict[str, Any] = {SNAPSHOT_ID: s.snapshot_id, STATISTICS_PATH: s.statistics_path,
                           FILE_SIZE_IN_BYTES: s.file_size_in_bytes, FILE_FOOTER_SIZE_IN_BYTES: s.file_footer_size_in_bytes}
    if s.key_metadata is not None:
        out[KEY_METADATA] = s.key_metadata
    blobs = []
    for b in s.blob_metadata:
        bd: dict[str, Any] = {BLOB_TYPE: b.type, SNAPSHOT_ID: b.snapshot_id, SEQUENCE_NUMBER: b.sequence_number, BLOB_FIELDS: list(b.fields)}
        if b.properties is not None:
            bd[BLOB_PROPERTIES] = dict(b.properties)
        blobs.append(bd)
    out[BLOB_METADATA] = blobs
    return out


def metadata_to_dict(md: TableMetadata, *, format_version: int | None = None) -> dict:
    """The metadata JSON object for ``md.format_version``: required fields always, blank-cell fields never."""
    v = md.format_version if format_version is None else format_version
    if v != md.format_version:
        raise InvalidTable(f"metadata of version {md.format_version} cannot be written as v{v}; use upgrade()",
                           rule="ICEBERG-GEN-001")
    if v >= 2 and md.table_uuid is None:
        raise InvalidTable("a v2+ table needs a table-uuid", rule="ICEBERG-META-005")
    if v >= 3 and md.next_row_id is None:
        raise InvalidTable("a v3 table needs next-row-id", rule="ICEBERG-META-042")
    out: dict[str, Any] = {FORMAT_VERSION: v}
    if md.table_uuid is not None:
        out[TABLE_UUID] = md.table_uuid
    out[LOCATION] = md.location
    if v >= 2:
        out[LAST_SEQUENCE_NUMBER] = md.last_sequence_number
    out[LAST_UPDATED_MS] = md.last_updated_ms
    out[LAST_COLUMN_ID] = md.last_column_id
    if v == 1:
        out[SCHEMA] = T.schema_to_dict(md.schema())
    out[SCHEMAS] = [T.schema_to_dict(s) for s in md.schemas]
    out[CURRENT_SCHEMA_ID] = md.current_schema_id
    if v == 1:
        out[PARTITION_SPEC] = P.partition_fields_to_list(md.spec(), format_version=1)
    out[PARTITION_SPECS] = [P.partition_spec_to_dict(s, format_version=v) for s in md.partition_specs]
    out[DEFAULT_SPEC_ID] = md.default_spec_id
    out[LAST_PARTITION_ID] = md.last_partition_id
    out[PROPERTIES] = dict(md.properties)
    if md.current_snapshot_id is not None:
        out[CURRENT_SNAPSHOT_ID] = md.current_snapshot_id
    out[SNAPSHOTS] = [snapshot_to_dict(s, format_version=v) for s in md.snapshots]
    out[SNAPSHOT_LOG] = [{SNAPSHOT_ID: e.snapshot_id, TIMESTAMP_MS: e.timestamp_ms} for e in md.snapshot_log]
    out[METADATA_LOG] = [{METADATA_FILE: e.metadata_file, TIMESTAMP_MS: e.timestamp_ms} for e in md.metadata_log]
    out[SORT_ORDERS] = [P.sort_order_to_dict(o, format_version=v) for o in md.sort_orders]
    out[DEFAULT_SORT_ORDER_ID] = md.default_sort_order_id
    if v >= 2:
        out[REFS] = {name: ref_to_dict(r) for name, r in md.refs.items()}
    if md.statistics:
        out[STATISTICS] = [_stats_to_dict(s) for s in md.statistics]
    if md.partition_statistics:
        out[PARTITION_STATISTICS] = [{SNAPSHOT_ID: s.snapshot_id, STATISTICS_PATH: s.statistics_path, FILE_SIZE_IN_BYTES: s.file_size_in_bytes}
                                     for s in md.partition_statistics]
    if v >= 3:
        out[NEXT_ROW_ID] = md.next_row_id
        if md.encryption_keys:
            keys = []
            for k in md.encryption_keys:
                kd: dict[str, Any] = {ENC_KEY_ID: k.key_id, ENCRYPTED_KEY_METADATA: k.encrypted_key_metadata}
                if k.encrypted_by_id is not None:
                    kd[ENCRYPTED_BY_ID] = k.encrypted_by_id
                if k.properties is not None:
                    kd[ENC_PROPERTIES] = dict(k.properties)
                keys.append(kd)
            out[ENCRYPTION_KEYS] = keys
    return out


def metadata_to_json(md: TableMetadata, *, indent: int | None = None) -> str:
    """The metadata JSON text (compact unless ``indent``)."""
    if indent is None:
        return json.dumps(metadata_to_dict(md), separators=(",", ":"), ensure_ascii=False)
    return json.dumps(metadata_to_dict(md), indent=indent, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Upgrades (Appendix E)


def upgrade(md: TableMetadata, target_version: int, *, table_uuid: str | None = None) -> TableMetadata:
    """The same table at ``target_version`` (1->2->3) without rewriting manifests; downgrades are refused."""
    if target_version not in SUPPORTED_FORMAT_VERSIONS:
        raise Unsupported(f"cannot upgrade to format-version {target_version}", feature=f"format-version {target_version}", rule="ICEBERG-META-004")
    if target_version < md.format_version:
        raise InvalidTable(f"cannot downgrade a v{md.format_version} table to v{target_version}", rule="ICEBERG-COMPAT-003")
    out = md
    if out.format_version < 2 <= target_version:
        refs = dict(out.refs)
        if MAIN_BRANCH not in refs and out.current_snapshot_id is not None:
            refs[MAIN_BRANCH] = SnapshotRef(snapshot_id=out.current_snapshot_id, type=BRANCH)
        out = replace(
            out,
            format_version=2,
            table_uuid=out.table_uuid or table_uuid or str(uuid_mod.uuid4()),
            last_sequence_number=INITIAL_SEQUENCE_NUMBER,  # v1 snapshots all read as sequence number 0
            refs=MappingProxyType(refs),
        )
    if out.format_version < 3 <= target_version:
        # Existing snapshots keep no first-row-id; row ids start at 0 (Row Lineage for Upgraded Tables).
        out = replace(out, format_version=3, next_row_id=0)
    return out


# ---------------------------------------------------------------------------------------------
# Validation (one pass, never raises)


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def validate_metadata(md: TableMetadata, *, strict_lineage: bool = False) -> list[T.Violation]:
    """Every broken table-metadata rule; ``strict_lineage`` also flags parents that are no longer listed."""
    V = T.Violation
    out: list[V] = []
    v = md.format_version

    # Schemas.
    seen_schema_ids: set[int] = set()
    for s in md.schemas:
        if s.schema_id in seen_schema_ids:
            out.append(V(rule="ICEBERG-META-021", message=f"schema-id {s.schema_id} is used twice", where=f"schemas[{s.schema_id}]"))
        seen_schema_ids.add(s.schema_id)
        for viol in T.validate_schema(s, v):
            out.append(replace(viol, where=f"schema {s.schema_id}: {viol.where}"))
        top = s.highest_field_id
        if top > md.last_column_id:
            out.append(V(rule="ICEBERG-META-016", message=f"schema {s.schema_id} uses field id {top} above last-column-id {md.last_column_id}", where=f"schema {s.schema_id}"))
    if md.current_schema_id not in seen_schema_ids:
        out.append(V(rule="ICEBERG-META-020", message=f"current-schema-id {md.current_schema_id} is not in schemas", where=CURRENT_SCHEMA_ID))

    # Partition specs.
    spec_ids: set[int] = set()
    current_schema = md.schema_by_id(md.current_schema_id)
    for sp in md.partition_specs:
        if sp.spec_id in spec_ids:
            out.append(V(rule="ICEBERG-PART-035", message=f"spec-id {sp.spec_id} is used twice", where=f"partition-specs[{sp.spec_id}]"))
        spec_ids.add(sp.spec_id)
        for f in sp.fields:
            if f.field_id > md.last_partition_id:
                out.append(V(rule="ICEBERG-META-027", message=f"partition field {f.name} id {f.field_id} is above last-partition-id {md.last_partition_id}", where=f"spec {sp.spec_id}"))
    if md.default_spec_id not in spec_ids:
        out.append(V(rule="ICEBERG-META-024", message=f"default-spec-id {md.default_spec_id} is not in partition-specs", where=DEFAULT_SPEC_ID))
    elif current_schema is not None:
        for viol in P.validate_partition_spec(md.spec(), current_schema, format_version=v):
            out.append(viol)

    # Sort orders.
    order_ids = [o.order_id for o in md.sort_orders]
    if md.default_sort_order_id not in order_ids:
        out.append(V(rule="ICEBERG-META-038", message=f"default-sort-order-id {md.default_sort_order_id} is not in sort-orders", where=DEFAULT_SORT_ORDER_ID))
    if len(set(order_ids)) != len(order_ids):
        out.append(V(rule="ICEBERG-SORT-007", message="an order-id is used twice in sort-orders", where=SORT_ORDERS))

    # Snapshots and lineage.
    by_id: dict[int, Snapshot] = {}
    for s in md.snapshots:
        if s.snapshot_id in by_id:
            out.append(V(rule="ICEBERG-SNAP-001", message=f"snapshot id {s.snapshot_id} is listed twice", where=f"snapshot {s.snapshot_id}"))
        by_id[s.snapshot_id] = s
    for s in md.snapshots:
        where = f"snapshot {s.snapshot_id}"
        if s.manifest_list is not None and s.manifests is not None:
            out.append(V(rule="ICEBERG-SNAP-005", message="snapshot has both manifest-list and manifests", where=where))
        if v >= 2 and s.manifest_list is None and s.sequence_number > 0:
            out.append(V(rule="ICEBERG-SNAP-004", message="a snapshot written as v2+ needs a manifest-list", where=where))
        if s.summary is not None and s.operation not in OPERATIONS:
            out.append(V(rule="ICEBERG-SNAP-007", message=f"unknown operation {s.operation!r}", where=where))
        if v >= 2 and s.summary is None and s.sequence_number > 0:
            out.append(V(rule="ICEBERG-SNAP-006", message="a snapshot written as v2+ needs a summary with an operation", where=where))
        if s.schema_id is not None and s.schema_id not in seen_schema_ids:
            out.append(V(rule="ICEBERG-SNAP-009", message=f"schema-id {s.schema_id} is not in schemas", where=where))
        if v >= 2 and s.sequence_number > md.last_sequence_number:
            out.append(V(rule="ICEBERG-META-011", message=f"sequence-number {s.sequence_number} exceeds last-sequence-number {md.last_sequence_number}", where=where))
        if s.parent_snapshot_id is not None:
            parent = by_id.get(s.parent_snapshot_id)
            if s.parent_snapshot_id == s.snapshot_id:
                out.append(V(rule="ICEBERG-SNAP-002", message="snapshot is its own parent", where=where))
            elif parent is None:
                if strict_lineage:
                    out.append(V(rule="ICEBERG-SNAP-002", message=f"parent {s.parent_snapshot_id} is not listed", where=where))
            elif v >= 2 and s.sequence_number > 0 and parent.sequence_number >= s.sequence_number:
                out.append(V(rule="ICEBERG-SEQ-002", message=f"sequence-number {s.sequence_number} is not above its parent's {parent.sequence_number}", where=where))
        if s.key_id is not None and s.key_id not in {k.key_id for k in md.encryption_keys}:
            out.append(V(rule="ICEBERG-ENC-002", message=f"key-id {s.key_id!r} is not in encryption-keys", where=where))
        if v >= 3 and s.first_row_id is not None:
            if s.added_rows is None:
                out.append(V(rule="ICEBERG-SNAP-010", message="first-row-id without added-rows", where=where))
            elif md.next_row_id is not None and s.first_row_id + s.added_rows > md.next_row_id:
                out.append(V(rule="ICEBERG-LINEAGE-012", message=f"rows {s.first_row_id}..{s.first_row_id + s.added_rows} reach past next-row-id {md.next_row_id}", where=where))
            if s.added_rows is not None and s.added_rows < 0 or s.first_row_id < 0:
                out.append(V(rule="ICEBERG-LINEAGE-011", message="first-row-id and added-rows must not be negative", where=where))
        elif v >= 3 and s.added_rows is not None:
            out.append(V(rule="ICEBERG-SNAP-010", message="added-rows without first-row-id", where=where))
    # Row-id ranges of committed snapshots must not overlap (each commit starts at the then next-row-id).
    ranged = sorted((s for s in md.snapshots if s.first_row_id is not None and s.added_rows is not None), key=lambda s: (s.sequence_number, s.first_row_id))
    for a, b in zip(ranged, ranged[1:]):
        if b.first_row_id < a.first_row_id + a.added_rows:
            out.append(V(rule="ICEBERG-LINEAGE-010", message=f"first-row-id {b.first_row_id} overlaps the rows of snapshot {a.snapshot_id}", where=f"snapshot {b.snapshot_id}"))
    if v >= 3 and ranged:
        # After the upgrade every new snapshot assigns row ids (Row Lineage for Upgraded Tables).
        since = min(s.sequence_number for s in ranged)
        for s in md.snapshots:
            if s.first_row_id is None and s.sequence_number > since:
                out.append(V(rule="ICEBERG-LINEAGE-020", message=f"snapshot committed after row lineage began (sequence {s.sequence_number}) has no first-row-id", where=f"snapshot {s.snapshot_id}"))
    seen_seq: dict[int, int] = {}
    for s in md.snapshots:
        if v >= 2 and s.sequence_number > 0:
            if s.sequence_number in seen_seq:
                out.append(V(rule="ICEBERG-SEQ-002", message=f"sequence-number {s.sequence_number} is shared with snapshot {seen_seq[s.sequence_number]}", where=f"snapshot {s.snapshot_id}"))
            seen_seq[s.sequence_number] = s.snapshot_id

    # Current snapshot and refs.
    if md.current_snapshot_id is not None and md.current_snapshot_id not in by_id:
        out.append(V(rule="ICEBERG-META-029", message=f"current-snapshot-id {md.current_snapshot_id} is not in snapshots", where=CURRENT_SNAPSHOT_ID))
    main = md.refs.get(MAIN_BRANCH)
    if main is not None and v >= 2 and main.snapshot_id != md.current_snapshot_id:
        out.append(V(rule="ICEBERG-META-030", message=f"refs.main points at {main.snapshot_id}, current-snapshot-id is {md.current_snapshot_id}", where="refs.main"))
    for name, r in md.refs.items():
        where = f"refs.{name}"
        if r.snapshot_id not in by_id:
            out.append(V(rule="ICEBERG-REF-006", message=f"ref points at missing snapshot {r.snapshot_id}", where=where))
        if name == MAIN_BRANCH and not r.is_branch:
            out.append(V(rule="ICEBERG-REF-005", message="main must be a branch", where=where))
        if name == MAIN_BRANCH and r.max_ref_age_ms is not None:
            out.append(V(rule="ICEBERG-REF-004", message="main never expires: max-ref-age-ms must not be set on it", where=where))
        if not r.is_branch and r.min_snapshots_to_keep is not None:
            out.append(V(rule="ICEBERG-REF-002", message="min-snapshots-to-keep applies to branches only", where=where))
        if not r.is_branch and r.max_snapshot_age_ms is not None:
            out.append(V(rule="ICEBERG-REF-003", message="max-snapshot-age-ms applies to branches only", where=where))
        for rule, key, value in (("ICEBERG-REF-002", MIN_SNAPSHOTS_TO_KEEP, r.min_snapshots_to_keep),
                                 ("ICEBERG-REF-003", MAX_SNAPSHOT_AGE_MS, r.max_snapshot_age_ms),
                                 ("ICEBERG-REF-004", MAX_REF_AGE_MS, r.max_ref_age_ms)):
            if value is not None and value <= 0:
                out.append(V(rule=rule, message=f"{key} must be positive, got {value}", where=where))

    # Logs.
    for a, b in zip(md.snapshot_log, md.snapshot_log[1:]):
        if b.timestamp_ms < a.timestamp_ms:
            out.append(V(rule="ICEBERG-META-033", message=f"snapshot-log goes back in time at snapshot {b.snapshot_id}", where=SNAPSHOT_LOG))
    for i, e in enumerate(md.snapshot_log):
        if e.snapshot_id not in by_id and any(later.snapshot_id in by_id for later in md.snapshot_log[i + 1 :]):
            out.append(V(rule="ICEBERG-META-034", message=f"snapshot-log keeps an entry for expired snapshot {e.snapshot_id} before live ones", where=f"{SNAPSHOT_LOG}[{i}]"))
    if md.snapshot_log and md.current_snapshot_id is not None and md.snapshot_log[-1].snapshot_id != md.current_snapshot_id:
        out.append(V(rule="ICEBERG-META-033", message=f"the last snapshot-log entry is {md.snapshot_log[-1].snapshot_id}, not the current snapshot {md.current_snapshot_id}", where=SNAPSHOT_LOG))
    if md.snapshot_log and md.snapshot_log[-1].timestamp_ms > md.last_updated_ms:
        out.append(V(rule="ICEBERG-META-014", message="a snapshot-log entry is newer than last-updated-ms", where=SNAPSHOT_LOG))
    for a, b in zip(md.metadata_log, md.metadata_log[1:]):
        if b.timestamp_ms < a.timestamp_ms:
            out.append(V(rule="ICEBERG-META-035", message=f"metadata-log goes back in time at {b.metadata_file}", where=METADATA_LOG))
    if md.metadata_log and md.metadata_log[-1].timestamp_ms > md.last_updated_ms:
        out.append(V(rule="ICEBERG-META-014", message="a metadata-log entry is newer than last-updated-ms", where=METADATA_LOG))

    # Statistics.
    ps_ids = [s.snapshot_id for s in md.partition_statistics]
    if len(set(ps_ids)) != len(ps_ids):
        out.append(V(rule="ICEBERG-STATS-005", message="a snapshot has more than one partition statistics file", where=PARTITION_STATISTICS))
    st_ids = [s.snapshot_id for s in md.statistics]
    if len(set(st_ids)) != len(st_ids):
        out.append(V(rule="ICEBERG-STATS-002", message="a snapshot has more than one statistics file", where=STATISTICS))

    for k in md.encryption_keys:
        if not _is_base64(k.encrypted_key_metadata):
            out.append(V(rule="ICEBERG-ENC-001", message=f"encrypted-key-metadata of key {k.key_id!r} is not base64", where=ENCRYPTION_KEYS))
    ids = [k.key_id for k in md.encryption_keys]
    if len(set(ids)) != len(ids):
        out.append(V(rule="ICEBERG-ENC-001", message="a key-id is listed twice in encryption-keys", where=ENCRYPTION_KEYS))
    for s in md.statistics:
        if s.key_metadata is not None and not _is_base64(s.key_metadata):
            out.append(V(rule="ICEBERG-STATS-002", message="key-metadata is not base64", where=s.statistics_path))

    # Version-gated content.
    if v < 3 and md.next_row_id is not None:
        out.append(V(rule="ICEBERG-GEN-002", message="next-row-id is a v3 field", where=NEXT_ROW_ID))
    if v >= 3 and md.next_row_id is not None and md.next_row_id < 0:
        out.append(V(rule="ICEBERG-LINEAGE-012", message="next-row-id must not be negative", where=NEXT_ROW_ID))
    if v >= 2 and md.last_sequence_number < 0:
        out.append(V(rule="ICEBERG-META-011", message="last-sequence-number must not be negative", where=LAST_SEQUENCE_NUMBER))
    return out


# The Writer requirements of "Table Metadata Fields" and "Snapshots", as data: which keys a writer
# of each version must write, and which it should leave out (blank cells).
REQUIRED_KEYS = {
    1: (FORMAT_VERSION, LOCATION, LAST_UPDATED_MS, LAST_COLUMN_ID, SCHEMA, PARTITION_SPEC),
    2: (FORMAT_VERSION, TABLE_UUID, LOCATION, LAST_SEQUENCE_NUMBER, LAST_UPDATED_MS, LAST_COLUMN_ID, SCHEMAS,
        CURRENT_SCHEMA_ID, PARTITION_SPECS, DEFAULT_SPEC_ID, LAST_PARTITION_ID, SORT_ORDERS, DEFAULT_SORT_ORDER_ID),
}
REQUIRED_KEYS[3] = REQUIRED_KEYS[2] + (NEXT_ROW_ID,)
OMITTED_KEYS = {
    1: (LAST_SEQUENCE_NUMBER, REFS, NEXT_ROW_ID, ENCRYPTION_KEYS),
    2: (SCHEMA, PARTITION_SPEC, NEXT_ROW_ID, ENCRYPTION_KEYS),
    3: (SCHEMA, PARTITION_SPEC),
}
SNAPSHOT_REQUIRED_KEYS = {
    1: (SNAPSHOT_ID, TIMESTAMP_MS),
    2: (SNAPSHOT_ID, SEQUENCE_NUMBER, TIMESTAMP_MS, MANIFEST_LIST, SUMMARY),
    3: (SNAPSHOT_ID, SEQUENCE_NUMBER, TIMESTAMP_MS, MANIFEST_LIST, SUMMARY, FIRST_ROW_ID, ADDED_ROWS),
}
SNAPSHOT_OMITTED_KEYS = {
    1: (SEQUENCE_NUMBER, FIRST_ROW_ID, ADDED_ROWS, KEY_ID),
    2: (MANIFESTS, FIRST_ROW_ID, ADDED_ROWS, KEY_ID),
    3: (MANIFESTS,),
}


def writer_violations(obj: Mapping | str | bytes) -> list[T.Violation]:
    """What a metadata JSON written for its version includes or leaves out against the Writer requirements (GEN-001/002)."""
    if isinstance(obj, (str, bytes)):
        obj = _decode_json(obj, None)
    out: list[T.Violation] = []
    if not isinstance(obj, dict) or obj.get(FORMAT_VERSION) not in SUPPORTED_FORMAT_VERSIONS:
        return [T.Violation(rule="ICEBERG-META-003", message="not a metadata object with a supported format-version", where=FORMAT_VERSION)]
    v = obj[FORMAT_VERSION]
    for key in REQUIRED_KEYS[v]:
        if obj.get(key) is None:
            out.append(T.Violation(rule="ICEBERG-GEN-001", message=f"v{v} metadata must write {key!r}", where=key))
    for key in OMITTED_KEYS[v]:
        if key in obj:
            out.append(T.Violation(rule="ICEBERG-GEN-002", message=f"v{v} metadata should not write {key!r}", where=key))
    snaps = [s for s in (obj.get(SNAPSHOTS) or []) if isinstance(s, dict)]
    # Snapshots written before an upgrade keep their old shape: a snapshot without sequence-number
    # predates v2; one without first-row-id predates v3 unless a snapshot with row ids came before it.
    lineage_seqs = [s.get(SEQUENCE_NUMBER) or 0 for s in snaps if s.get(FIRST_ROW_ID) is not None]
    v3_since = min(lineage_seqs) if lineage_seqs else None
    for i, s in enumerate(snaps):
        where = f"snapshots[{i}]"
        seq = s.get(SEQUENCE_NUMBER)
        written_as = 1
        if seq is not None:
            written_as = 2
            if v >= 3 and v3_since is not None and isinstance(seq, int) and seq >= v3_since:
                written_as = 3
        for key in SNAPSHOT_REQUIRED_KEYS[min(v, written_as)]:
            if s.get(key) is None:
                out.append(T.Violation(rule="ICEBERG-GEN-001", message=f"v{v} snapshot must write {key!r}", where=where))
        for key in SNAPSHOT_OMITTED_KEYS[v]:
            if key in s:
                out.append(T.Violation(rule="ICEBERG-GEN-002", message=f"v{v} snapshot should not write {key!r}", where=where))
    if v >= 3 and obj.get(CURRENT_SNAPSHOT_ID) == NO_SNAPSHOT_ID:
        out.append(T.Violation(rule="ICEBERG-META-045", message="v3 writers leave current-snapshot-id null or absent instead of -1", where=CURRENT_SNAPSHOT_ID))
    return out


def read_metadata_file(data: bytes, *, path: str | None = None) -> TableMetadata:
    """Parse the bytes of a metadata file (plain or GZIP JSON)."""
    return parse_metadata(data, path=path)

