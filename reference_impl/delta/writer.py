"""Creation of New Log Entries and the Additional Requirements for Writers.

The reference writer: a ``Transaction`` reads a snapshot, writes data files (complete before any
commit is attempted, so a writer that dies leaves the previous version intact), stages actions and
commits them as ONE NDJSON object through ``Storage.put_if_absent`` (a log entry is never
overwritten). When another writer wins the version, the winning commits are read and checked for
logical conflicts (protocol or metadata changed, a file we remove was removed, same ``txn`` appId,
same domain, and under ``isolation="serializable"`` new data where we read); if there is none the
transaction is rebased and retried at the next version, with bounded attempts and jittered backoff.

Operations (``create_table``, ``append``, ``overwrite``, ``delete``, ``update``, ...) are thin
layers over ``Transaction`` that enforce the writer-side rules of the spec: table features
(``protocol.check_writable`` first; new tables get a protocol from the features they use), append-only
tables, invariants / CHECK constraints / generated / identity / default columns (see
``constraints``), column mapping (physical names and field ids in Parquet, partition values and
stats keyed by physical name, ``maxColumnId``), deletion vectors (old ``(path, dv)`` removed and
new one added in the same commit), change data files for row-rewriting operations, and
in-commit timestamps (``commitInfo`` first, strictly increasing).
"""

from __future__ import annotations

import dataclasses
import io
import random
import re
import time
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote, unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reference_impl.delta import column_mapping as cm
from reference_impl.delta import constraints as cons
from reference_impl.delta.actions import (
    AddCDCFile,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Format,
    Metadata,
    Protocol,
    RemoveFile,
    Txn,
    parse_commit,
    serialize_commit,
)
from reference_impl.delta.log import LOG_DIR, commit_path
from reference_impl.delta.partition import partition_directory, parse_partition_value, serialize_partition_value
from reference_impl.delta.schema import (
    ArrayType,
    DecimalType,
    MapType,
    PrimitiveType,
    StructField,
    StructType,
    from_arrow_schema,
    schema_to_json,
    to_arrow_schema,
    to_arrow_type,
)
from reference_impl.delta.stats import compute_stats, parse_stats, stats_to_json
from reference_impl.errors import CommitConflict, Internal, InvalidTable, Unsupported
from reference_impl.storage import Storage, new_uuid, open_storage
from reference_impl.parquet_io import read_parquet, read_parquet_metadata

ENGINE_INFO = "lakeconf-reference/0.1.0"

# Table properties (Table Properties, feature sections), spelled once.
APPEND_ONLY_KEY = "delta.appendOnly"
ENABLE_DV_KEY = "delta.enableDeletionVectors"
ENABLE_CDF_KEY = "delta.enableChangeDataFeed"
ENABLE_ICT_KEY = "delta.enableInCommitTimestamps"
ICT_ENABLEMENT_VERSION_KEY = "delta.inCommitTimestampEnablementVersion"
ICT_ENABLEMENT_TIMESTAMP_KEY = "delta.inCommitTimestampEnablementTimestamp"
ENABLE_ROW_TRACKING_KEY = "delta.enableRowTracking"
ROW_TRACKING_SUSPENDED_KEY = "delta.rowTrackingSuspended"
MATERIALIZED_ROW_ID_KEY = "delta.rowTracking.materializedRowIdColumnName"
MATERIALIZED_ROW_COMMIT_VERSION_KEY = "delta.rowTracking.materializedRowCommitVersionColumnName"
CHECKPOINT_POLICY_KEY = "delta.checkpointPolicy"
COMPRESSION_KEY = "delta.parquet.compression.codec"
FORMAT_VERSION_KEY = "delta.parquet.format.version"
NUM_INDEXED_COLS_KEY = "delta.dataSkippingNumIndexedCols"
STATS_COLUMNS_KEY = "delta.dataSkippingStatsColumns"

# Commit provenance keys.
IN_COMMIT_TIMESTAMP = "inCommitTimestamp"

# Change data files.
CHANGE_DATA_DIR = "_change_data"
CHANGE_TYPE_COLUMN = "_change_type"
CHANGE_INSERT = "insert"
CHANGE_DELETE = "delete"
CHANGE_UPDATE_PREIMAGE = "update_preimage"
CHANGE_UPDATE_POSTIMAGE = "update_postimage"

# System domain for row tracking (Row Tracking).
ROW_TRACKING_DOMAIN = "delta.rowTracking"
ROW_ID_HIGH_WATER_MARK = "rowIdHighWaterMark"

# Feature names (Valid Feature Names in Table Features).
F_APPEND_ONLY = "appendOnly"
F_INVARIANTS = "invariants"
F_CHECK_CONSTRAINTS = "checkConstraints"
F_GENERATED_COLUMNS = "generatedColumns"
F_COLUMN_DEFAULTS = "allowColumnDefaults"
F_CDF = "changeDataFeed"
F_COLUMN_MAPPING = "columnMapping"
F_IDENTITY = "identityColumns"
F_DV = "deletionVectors"
F_ROW_TRACKING = "rowTracking"
F_TIMESTAMP_NTZ = "timestampNtz"
F_DOMAIN_METADATA = "domainMetadata"
F_V2_CHECKPOINT = "v2Checkpoint"
F_ICT = "inCommitTimestamp"
F_VARIANT = "variantType"

READER_WRITER_FEATURES = frozenset(
    {
        F_COLUMN_MAPPING,
        F_DV,
        F_TIMESTAMP_NTZ,
        F_V2_CHECKPOINT,
        "vacuumProtocolCheck",
        "catalogManaged",
        "typeWidening",
        "typeWidening-preview",
        F_VARIANT,
        "variantShredding",
        "variantType-preview",
    }
)

# Legacy protocol versions and the features they imply (Writer/Reader Version Requirements).
LEGACY_WRITER_FEATURES = {
    2: (F_APPEND_ONLY, F_INVARIANTS),
    3: (F_CHECK_CONSTRAINTS,),
    4: (F_CDF, F_GENERATED_COLUMNS),
    5: (F_COLUMN_MAPPING,),
    6: (F_IDENTITY,),
}
LEGACY_READER_FEATURES = {2: (F_COLUMN_MAPPING,)}

_CODECS = {  # property value -> (pyarrow codec, file-name infix)
    "uncompressed": ("none", ""),
    "none": ("none", ""),
    "snappy": ("snappy", ".snappy"),
    "gzip": ("gzip", ".gz"),
    # pyarrow cannot write Hadoop-framed LZ4; the spec allows falling back, LZ4_RAW is the closest.
    "lz4": ("lz4", ".lz4"),
    "lz4_raw": ("lz4", ".lz4raw"),
    "zstd": ("zstd", ".zstd"),
}
_FORMAT_VERSION_RE = re.compile(r"^2\.\d+\.\d+$")
# Characters kept as-is when percent-encoding a relative path for the log (RFC 2396 pchar minus ':',
# so a first segment never looks like a URI scheme).
_PATH_SAFE = "/=-_.~!$&'()*+,;@"

DEFAULT_MAX_ATTEMPTS = 200
_PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class TableExists(CommitConflict):
    """``create_table`` on a location whose log already has version 0."""


# --------------------------------------------------------------------------------------------
# small helpers


def _now_ms() -> int:
    return int(time.time() * 1000)


def _storage(location: str | Storage) -> Storage:
    if isinstance(location, Storage):
        return location
    return open_storage(str(location))


def encode_path(relative: str) -> str:
    """Percent-encode a root-relative file path for ``add.path`` (RFC 2396)."""
    return quote(relative, safe=_PATH_SAFE)


def decode_path(storage: Storage, path: str) -> str:
    """Root-relative path of a file named in the log (percent-decoded, checked to stay in the root)."""
    return storage.resolve(unquote(path))


def legacy_features(reader: int, writer: int) -> set[str]:
    """Features implied by legacy (pre table-features) protocol versions."""
    out: set[str] = set()
    for v, feats in LEGACY_WRITER_FEATURES.items():
        if writer >= v and writer < 7:
            out.update(feats)
    for v, feats in LEGACY_READER_FEATURES.items():
        if reader >= v and reader < 3:
            out.update(feats)
    return out


def supported_features(protocol: Protocol) -> set[str]:
    """Every feature a protocol supports (listed, or implied by legacy versions)."""
    out = set(protocol.writer_features or ()) | set(protocol.reader_features or ())
    if protocol.min_writer_version < 7:
        out |= legacy_features(protocol.min_reader_version, protocol.min_writer_version)
    elif protocol.min_reader_version == 2:
        out.add(F_COLUMN_MAPPING)
    return out


def _features_protocol(features: Iterable[str], reader_version: int | None = None) -> Protocol:
    features = set(features)
    reader = features & READER_WRITER_FEATURES
    if reader_version is None:
        reader_version = 3 if reader else 1
    if reader_version >= 3:
        return Protocol(min_reader_version=3, min_writer_version=7, reader_features=frozenset(reader), writer_features=frozenset(features))
    return Protocol(min_reader_version=reader_version, min_writer_version=7, reader_features=None, writer_features=frozenset(features))


def _legacy_writer_version_for(features: set[str]) -> int | None:
    needed = 2
    for f in features:
        for v, feats in LEGACY_WRITER_FEATURES.items():
            if f in feats:
                needed = max(needed, v)
                break
        else:
            return None
    return needed


def protocol_supporting(current: Protocol | None, needed: Iterable[str]) -> Protocol | None:
    """The protocol to commit so that ``needed`` features are supported; None if ``current`` does.

    Legacy tables stay legacy when a version bump is enough (as Spark does); otherwise they move
    to table features listing every feature the old versions implied (DELTA-FEATURE-007).
    """
    needed = set(needed)
    if current is None:
        legacy_w = _legacy_writer_version_for(needed)
        if legacy_w is not None:
            return Protocol(min_reader_version=2 if F_COLUMN_MAPPING in needed else 1, min_writer_version=legacy_w, reader_features=None, writer_features=None)
        return _features_protocol(needed)
    have = supported_features(current)
    if needed <= have:
        return None
    if current.min_writer_version < 7:
        legacy_w = _legacy_writer_version_for(needed | have)
        if legacy_w is not None:
            reader = max(current.min_reader_version, 2 if F_COLUMN_MAPPING in needed else 1)
            return Protocol(min_reader_version=reader, min_writer_version=max(legacy_w, current.min_writer_version), reader_features=None, writer_features=None)
    union = have | needed
    reader_version = None
    if current.min_reader_version >= 3 or (union & READER_WRITER_FEATURES) - {F_COLUMN_MAPPING}:
        reader_version = 3
    elif F_COLUMN_MAPPING in union:
        reader_version = 2
    return _features_protocol(union, reader_version)


def _walk_types(t) -> Iterable[Any]:
    yield t
    if isinstance(t, StructType):
        for f in t.fields:
            yield from _walk_types(f.type)
    elif isinstance(t, ArrayType):
        yield from _walk_types(t.element_type)
    elif isinstance(t, MapType):
        yield from _walk_types(t.key_type)
        yield from _walk_types(t.value_type)


def _walk_fields(schema: StructType) -> Iterable[StructField]:
    for t in _walk_types(schema):
        if isinstance(t, StructType):
            yield from t.fields


def _is_true(configuration: Mapping[str, str], key: str) -> bool:
    return str(configuration.get(key, "false")).strip().lower() == "true"


def required_features(schema: StructType, configuration: Mapping[str, str]) -> set[str]:
    """Features the protocol must support for a table with this schema and configuration."""
    out: set[str] = set()
    if _is_true(configuration, APPEND_ONLY_KEY):
        out.add(F_APPEND_ONLY)
    if _is_true(configuration, ENABLE_DV_KEY):
        out.add(F_DV)
    if _is_true(configuration, ENABLE_CDF_KEY):
        out.add(F_CDF)
    if _is_true(configuration, ENABLE_ICT_KEY):
        out.add(F_ICT)
    if _is_true(configuration, ENABLE_ROW_TRACKING_KEY):
        out |= {F_ROW_TRACKING, F_DOMAIN_METADATA}
    if str(configuration.get(CHECKPOINT_POLICY_KEY, "")).lower() == "v2":
        out.add(F_V2_CHECKPOINT)
    if cm.mapping_mode(configuration) != "none":
        out.add(F_COLUMN_MAPPING)
    if cons.check_constraints(configuration):
        out.add(F_CHECK_CONSTRAINTS)
    for field in _walk_fields(schema):
        md = field.metadata or {}
        if cons.INVARIANTS_KEY in md:
            out.add(F_INVARIANTS)
        if cons.GENERATION_EXPRESSION_KEY in md:
            out.add(F_GENERATED_COLUMNS)
        if cons.IDENTITY_START_KEY in md or cons.IDENTITY_STEP_KEY in md:
            out.add(F_IDENTITY)
        if cons.DEFAULT_KEY in md:
            out.add(F_COLUMN_DEFAULTS)
    for t in _walk_types(schema):
        if isinstance(t, PrimitiveType) and t.name == "timestamp_ntz":
            out.add(F_TIMESTAMP_NTZ)
        if isinstance(t, PrimitiveType) and t.name == "variant":
            out.add(F_VARIANT)
    return out


def feature_active(protocol: Protocol, configuration: Mapping[str, str], feature: str, key: str) -> bool:
    """Supported by the protocol and switched on by its table property (Active Features)."""
    return feature in supported_features(protocol) and _is_true(configuration, key)


def _type_signature(t) -> Any:
    if isinstance(t, StructType):
        return ("struct", tuple((f.name, _type_signature(f.type)) for f in t.fields))
    if isinstance(t, ArrayType):
        return ("array", _type_signature(t.element_type))
    if isinstance(t, MapType):
        return ("map", _type_signature(t.key_type), _type_signature(t.value_type))
    return repr(t)


def _with_metadata(field: StructField, metadata: Mapping[str, Any]) -> StructField:
    return dataclasses.replace(field, metadata=dict(metadata))


def _field_metadata(field: pa.Field) -> dict[str, Any]:
    md: dict[str, Any] = {}
    for k, v in (field.metadata or {}).items():
        key = k.decode() if isinstance(k, bytes) else k
        if key.startswith("PARQUET:") or key.startswith("ARROW:"):
            continue
        value: Any = v.decode() if isinstance(v, bytes) else v
        if key in (cons.IDENTITY_START_KEY, cons.IDENTITY_STEP_KEY, cons.IDENTITY_HIGH_WATER_MARK_KEY) and re.fullmatch(r"-?\d+", value):
            value = int(value)
        elif key == cons.IDENTITY_ALLOW_EXPLICIT_INSERT_KEY and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        md[key] = value
    return md


def _with_arrow_metadata(dtype, atype: pa.DataType):
    """Copy Arrow field metadata (e.g. ``delta.invariants``) onto the Delta fields, at every level."""
    if isinstance(dtype, StructType) and pa.types.is_struct(atype):
        fields = []
        for f, i in zip(dtype.fields, range(atype.num_fields)):
            af = atype.field(i)
            fields.append(dataclasses.replace(f, type=_with_arrow_metadata(f.type, af.type), metadata=_field_metadata(af)))
        return StructType(fields=tuple(fields))
    if isinstance(dtype, ArrayType) and hasattr(atype, "value_type"):
        return dataclasses.replace(dtype, element_type=_with_arrow_metadata(dtype.element_type, atype.value_type))
    if isinstance(dtype, MapType) and pa.types.is_map(atype):
        return dataclasses.replace(dtype, key_type=_with_arrow_metadata(dtype.key_type, atype.key_type), value_type=_with_arrow_metadata(dtype.value_type, atype.item_type))
    return dtype


def _arrow_field_to_delta(field: pa.Field) -> StructField:
    """A Delta field for an Arrow field, keeping string metadata (e.g. ``delta.invariants``) at every level."""
    delta_field = from_arrow_schema(pa.schema([field.remove_metadata()])).fields[0]
    return dataclasses.replace(delta_field, type=_with_arrow_metadata(delta_field.type, field.type), nullable=field.nullable, metadata=_field_metadata(field))


def _schema_from_input(schema: pa.Schema | StructType) -> StructType:
    if isinstance(schema, StructType):
        return schema
    if isinstance(schema, pa.Schema):
        return StructType(fields=tuple(_arrow_field_to_delta(f) for f in schema))
    raise InvalidTable(f"schema must be a pyarrow.Schema or a StructType, not {type(schema).__name__}")


def _check_schema(schema: StructType, partition_columns: Sequence[str]) -> None:
    def unique(struct: StructType, where: str) -> None:
        seen: dict[str, str] = {}
        for f in struct.fields:
            low = f.name.lower()
            if low in seen:
                raise InvalidTable(f"duplicate column name {f.name!r} (case-insensitive) in {where}", rule="DELTA-SCHEMA-005")
            seen[low] = f.name
        for f in struct.fields:
            for t in _walk_types(f.type):
                if isinstance(t, StructType):
                    unique(t, f"{where}.{f.name}")

    if not schema.fields:
        raise InvalidTable("a table needs at least one column")
    unique(schema, "schema")
    names = [f.name for f in schema.fields]
    for p in partition_columns:
        if p not in names:
            raise InvalidTable(f"partition column {p!r} is not a top-level column of the schema", hint=f"columns: {names}")
        t = schema.fields[names.index(p)].type
        if not (isinstance(t, DecimalType) or (isinstance(t, PrimitiveType) and t.name not in ("variant", "void"))):
            raise InvalidTable(f"partition column {p!r} must have a primitive type, not {_type_signature(t)}")
    if len(set(partition_columns)) != len(partition_columns):
        raise InvalidTable(f"partition columns repeat a name: {list(partition_columns)}")
    if len(partition_columns) == len(names):
        raise InvalidTable("every column is a partition column: a data file would have no columns")


# --------------------------------------------------------------------------------------------
# reading the files of a snapshot (delete, update, optimize, constraints, change data)


def _partition_value_arrays(schema: StructType, partition_columns: Sequence[str], values: Mapping[str, str | None], mode: str, n: int) -> dict[str, pa.Array]:
    by_name = {f.name: f for f in schema.fields}
    out = {}
    for col in partition_columns:
        field = by_name[col]
        key = cm.physical_name(field, mode)
        text = values.get(key, values.get(col)) if values is not None else None
        value = parse_partition_value(text, field.type)
        out[col] = pa.array([value] * n, to_arrow_type(field.type))
    return out


def read_logical_file(storage: Storage, metadata: Metadata, file: AddFile | RemoveFile, *, apply_dv: bool = True, extra_columns: Sequence[str] = ()) -> tuple[pa.Table, np.ndarray]:
    """One logical file's rows with logical names (partition columns included, schema order) and
    their physical row positions; rows deleted by the file's DV are dropped when ``apply_dv``."""
    schema = metadata.schema
    mode = cm.mapping_mode(metadata.configuration)
    partition_columns = list(metadata.partition_columns)
    rel = decode_path(storage, file.path)
    try:
        raw = read_parquet(storage.read(rel))
    except FileNotFoundError:
        raise InvalidTable(f"data file {file.path!r} named in the log does not exist", path=rel) from None
    except (pa.ArrowException, OSError) as exc:
        raise InvalidTable(f"cannot read data file {file.path!r}: {exc}", path=rel) from None
    data_schema = StructType(fields=tuple(f for f in schema.fields if f.name not in partition_columns))
    logical = cm.read_file_columns(raw, data_schema, mode)
    n = raw.num_rows
    parts = _partition_value_arrays(schema, partition_columns, file.partition_values or {}, mode, n)
    columns, fields = [], []
    arrow = to_arrow_schema(schema)
    for field in arrow:
        if field.name in parts:
            columns.append(parts[field.name])
        else:
            columns.append(logical.column(field.name))
        fields.append(pa.field(field.name, field.type))
    for extra in extra_columns:
        if extra in raw.column_names:
            columns.append(raw.column(extra))
            fields.append(pa.field(extra, raw.schema.field(extra).type))
    table = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    positions = np.arange(n, dtype=np.int64)
    if apply_dv and file.deletion_vector is not None:
        from reference_impl.delta.deletion_vector import load_deleted_rows

        deleted = np.asarray(load_deleted_rows(storage, file.deletion_vector), dtype=np.int64)
        if len(deleted) and (deleted.max() >= n):
            raise InvalidTable(f"deletion vector of {file.path!r} names row {int(deleted.max())} but the file has {n} rows", rule="DELTA-DV-015")
        keep = np.ones(n, dtype=bool)
        keep[deleted] = False
        positions = positions[keep]
        table = table.filter(pa.array(keep))
    return table, positions


def read_all_rows(storage: Storage, snapshot) -> pa.Table:
    """Every live row of a snapshot (logical names), for whole-table checks."""
    arrow = to_arrow_schema(snapshot.metadata.schema)
    tables = [read_logical_file(storage, snapshot.metadata, f)[0] for f in snapshot.files]
    if not tables:
        return pa.Table.from_batches([], schema=pa.schema([pa.field(f.name, f.type) for f in arrow]))
    return pa.concat_tables(tables)


def _load_snapshot(storage: Storage, *, version: int | None = None):
    from reference_impl.delta.table import Snapshot

    # LocalStorage.list can trip over a concurrent committer's temp file vanishing between the
    # directory scan and its stat(); that is a race in listing, not a missing table: list again.
    for attempt in range(8):
        try:
            return Snapshot.load(storage, version=version)
        except FileNotFoundError:
            if attempt == 7:
                raise
            time.sleep(0.005 * (attempt + 1))
    raise Internal("unreachable")


# --------------------------------------------------------------------------------------------
# the transaction


def _dv_id(dv) -> str | None:
    return None if dv is None else dv.unique_id


class Transaction:
    """Read a snapshot, stage actions, commit with put-if-absent; rebase on a non-conflicting race."""

    def __init__(
        self,
        location: str | Storage,
        *,
        operation: str,
        parameters: Mapping[str, Any] | None = None,
        isolation: str = "write_serializable",
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        create: bool = False,
    ) -> None:
        if isolation not in ("serializable", "write_serializable"):
            raise InvalidTable(f"unknown isolation level {isolation!r}", hint="serializable or write_serializable")
        self.storage = _storage(location)
        self.operation = operation
        self.parameters = dict(parameters or {})
        self.isolation = isolation
        self.max_attempts = max_attempts
        self.create = create
        self.snapshot = None if create else _load_snapshot(self.storage)
        self.read_version = -1 if create else self.snapshot.version
        self._protocol: Protocol | None = None if create else self.snapshot.protocol
        self._metadata: Metadata | None = None if create else self.snapshot.metadata
        self._protocol_changed = False
        self._metadata_changed = False
        self._adds: list[AddFile] = []
        self._removes: list[RemoveFile] = []
        self._cdcs: list[AddCDCFile] = []
        self._txns: dict[str, Txn] = {}
        self._domains: dict[str, DomainMetadata] = {}
        self._read_whole_table = False
        self._read_partitions: list[dict[str, str | None]] = []
        self._reads_data = False
        self._enabling_ict = False
        self._identity_marks: dict[str, int] = {}
        self.committed_version: int | None = None
        self.attempts = 0
        if not create:
            self._check_writable()

    # -- state ---------------------------------------------------------------------------------
    @property
    def protocol(self) -> Protocol:
        """The protocol this commit writes under (staged or read)."""
        if self._protocol is None:
            raise Internal("transaction has no protocol yet")
        return self._protocol

    @property
    def metadata(self) -> Metadata:
        """The metadata this commit writes under (staged or read)."""
        if self._metadata is None:
            raise Internal("transaction has no metadata yet")
        return self._metadata

    @property
    def schema(self) -> StructType:
        """The logical schema in effect."""
        return self.metadata.schema

    @property
    def configuration(self) -> Mapping[str, str]:
        """The table properties in effect."""
        return self.metadata.configuration

    @property
    def mapping_mode(self) -> str:
        """Column mapping mode in effect ("none" when the protocol does not support it)."""
        if F_COLUMN_MAPPING not in supported_features(self.protocol):
            return "none"
        return cm.mapping_mode(self.configuration)

    @property
    def files(self) -> list[AddFile]:
        """Live files of the read snapshot."""
        return [] if self.snapshot is None else list(self.snapshot.files)

    def is_active(self, feature: str, key: str) -> bool:
        """Whether a property-switched feature is active under the staged protocol and metadata."""
        return feature_active(self.protocol, self.configuration, feature, key)

    def _check_writable(self) -> None:
        from reference_impl.delta.protocol import check_writable

        check_writable(self.protocol, self.metadata)

    # -- staging -------------------------------------------------------------------------------
    def update_protocol(self, protocol: Protocol) -> None:
        """Stage a protocol action (features are never removed: DELTA-FEATURE-008)."""
        if self._protocol is not None and not self.create:
            lost = supported_features(self._protocol) - supported_features(protocol)
            if lost:
                raise InvalidTable(f"a protocol change must not drop supported features: {sorted(lost)}", rule="DELTA-FEATURE-008")
        self._protocol = protocol
        self._protocol_changed = True

    def update_metadata(self, metadata: Metadata) -> None:
        """Stage a metaData action; upgrades the protocol when the new metadata needs features."""
        self._metadata = metadata
        self._metadata_changed = True
        needed = required_features(metadata.schema, metadata.configuration)
        upgraded = protocol_supporting(self._protocol, needed)
        if upgraded is not None:
            self.update_protocol(upgraded)
        if (
            not self.create
            and _is_true(metadata.configuration, ENABLE_ICT_KEY)
            and not _is_true(self.snapshot.metadata.configuration, ENABLE_ICT_KEY)
        ):
            self._enabling_ict = True

    def add_file(self, add: AddFile) -> None:
        """Stage an ``add``."""
        self._adds.append(add)

    def remove_file(self, add: AddFile, *, data_change: bool = True) -> RemoveFile:
        """Stage a ``remove`` of a live logical file, carrying its metadata (extendedFileMetadata)."""
        remove = RemoveFile(
            path=add.path,
            deletion_timestamp=_now_ms(),
            data_change=data_change,
            extended_file_metadata=True,
            partition_values=dict(add.partition_values),
            size=add.size,
            stats=add.stats,
            tags=add.tags,
            deletion_vector=add.deletion_vector,
            base_row_id=add.base_row_id,
            default_row_commit_version=add.default_row_commit_version,
        )
        self._removes.append(remove)
        return remove

    def add_cdc(self, cdc: AddCDCFile) -> None:
        """Stage a ``cdc``."""
        self._cdcs.append(cdc)

    def set_txn(self, app_id: str, version: int) -> None:
        """Stage a ``txn`` (one per appId per commit)."""
        if app_id in self._txns:
            raise InvalidTable(f"txn appId {app_id!r} twice in one commit", rule="DELTA-LOG-008")
        self._txns[app_id] = Txn(app_id=app_id, version=int(version), last_updated=_now_ms())

    def set_domain(self, domain: str, configuration: str, *, removed: bool = False, system: bool = False) -> None:
        """Stage a ``domainMetadata`` (user domains only unless ``system``)."""
        if domain.startswith("delta.") and not system:
            raise InvalidTable(f"domain {domain!r} is reserved for the Delta spec; users must not change it", rule="DELTA-DOMAIN-003")
        if F_DOMAIN_METADATA not in supported_features(self.protocol):
            self.update_protocol(protocol_supporting(self.protocol, {F_DOMAIN_METADATA}))
        self._domains[domain] = DomainMetadata(domain=domain, configuration=configuration, removed=removed)

    def read_files(self, files: Iterable[AddFile]) -> None:
        """Record that the operation read these files (their partitions, for serializable checks)."""
        self._reads_data = True
        for f in files:
            self._read_partitions.append(dict(f.partition_values or {}))

    def read_whole_table(self) -> None:
        """Record that the operation depends on every row of the table."""
        self._reads_data = True
        self._read_whole_table = True

    # -- data files ----------------------------------------------------------------------------
    def _parquet_options(self) -> tuple[str, str, str]:
        codec_name = str(self.configuration.get(COMPRESSION_KEY, "zstd")).strip().lower()
        if codec_name not in _CODECS:
            raise Unsupported(
                f"{COMPRESSION_KEY}={codec_name!r} is not a codec this writer knows",
                feature=COMPRESSION_KEY,
                rule="DELTA-PROPS-001",
                hint=f"use one of {sorted(_CODECS)}",
            )
        codec, infix = _CODECS[codec_name]
        fmt = str(self.configuration.get(FORMAT_VERSION_KEY, "1.0.0")).strip()
        if fmt == "1.0.0":
            page = "1.0"
        elif _FORMAT_VERSION_RE.match(fmt):
            page = "2.0"
        else:
            raise InvalidTable(f"{FORMAT_VERSION_KEY}={fmt!r} is neither 1.0.0 nor 2.MINOR.PATCH", rule="DELTA-PROPS-003")
        return codec, infix, page

    def _write_parquet(self, relative: str, table: pa.Table) -> int:
        codec, _infix, page = self._parquet_options()
        buf = io.BytesIO()
        try:
            pq.write_table(
                table,
                buf,
                compression=codec,
                data_page_version=page,
                version="2.6",
                coerce_timestamps="us",
                use_deprecated_int96_timestamps=False,
                store_schema=False,
            )
        except (pa.ArrowException, ValueError) as exc:
            raise Internal(f"cannot write parquet file {relative}: {exc}", path=relative) from None
        data = buf.getvalue()
        # put_if_absent: a data file is never overwritten (DELTA-WRITER-001), even on a name clash.
        self.storage.put_if_absent(relative, data)
        return len(data)

    def _physical_table(self, logical: pa.Table, data_schema: StructType) -> pa.Table:
        # Physical names and field ids (DELTA-COLMAP-006/007); void columns are left out (DELTA-SCHEMA-010/011).
        return cm.to_physical_table(logical, data_schema, self.mapping_mode)

    def _directory(self, dirs: list[tuple[str, str | None]]) -> str:
        if self.mapping_mode != "none":
            # Display names change under column mapping and physical names mean nothing to a person:
            # like Spark, spread files over short random prefixes instead of col=value directories.
            return "".join(random.choice(_PREFIX_ALPHABET) for _ in range(2))
        return partition_directory(dirs) if dirs else ""

    def _data_schema(self) -> StructType:
        parts = set(self.metadata.partition_columns)
        return StructType(fields=tuple(f for f in self.schema.fields if f.name not in parts))

    def _partition_groups(self, rows: pa.Table) -> list[tuple[dict[str, str | None], list[tuple[str, str | None]], pa.Table]]:
        parts = list(self.metadata.partition_columns)
        if not parts:
            return [({}, [], rows)]
        by_name = {f.name: f for f in self.schema.fields}
        mode = self.mapping_mode
        keys: dict[tuple, list[int]] = {}
        columns = [rows.column(p).to_pylist() for p in parts]
        for i, key in enumerate(zip(*columns)):
            keys.setdefault(key, []).append(i)
        out = []
        for key, idx in keys.items():
            values: dict[str, str | None] = {}
            dirs = []
            for p, v in zip(parts, key):
                field = by_name[p]
                text = serialize_partition_value(v, field.type)
                physical = cm.physical_name(field, mode)
                values[physical] = text
                dirs.append((physical, text))
            out.append((values, dirs, rows.take(pa.array(idx, pa.int64()))))
        return out

    def conform(self, rows: pa.Table, *, rewrite: bool = False) -> tuple[pa.Table, set[str]]:
        """Rows cast to the table's logical Arrow schema; returns them and the supplied columns.

        ``rewrite`` marks rows already in the table (kept by DELETE, UPDATE, OPTIMIZE): their
        identity values are kept rather than refused as explicit inserts.
        """
        if not isinstance(rows, pa.Table):
            raise InvalidTable(f"rows must be a pyarrow.Table, not {type(rows).__name__}")
        arrow = to_arrow_schema(self.schema)
        names = [f.name for f in arrow]
        extra = [c for c in rows.column_names if c not in names]
        if extra:
            raise InvalidTable(
                f"columns {extra} are not in the table schema {names}",
                rule="DELTA-WRITER-002",
                hint="use overwrite() to replace the schema or add_column() to add one",
            )
        if len(set(rows.column_names)) != len(rows.column_names):
            raise InvalidTable(f"rows repeat a column name: {rows.column_names}")
        supplied = set(rows.column_names)
        # A placeholder column carries the row count while every real column may still be missing.
        placeholder = "__lakeconf_rows__"
        generated = {g.column for g in cons.generated_columns(self.schema)}
        identity = {i.column for i in cons.identity_columns(self.schema)}
        defaults = set(cons.default_columns(self.schema))
        columns: list = [pa.nulls(len(rows), pa.null())]
        fields = [pa.field(placeholder, pa.null())]
        for field in arrow:
            if field.name in supplied:
                col = rows.column(field.name)
                if not col.type.equals(field.type):
                    try:
                        col = col.cast(field.type)
                    except (pa.ArrowException, ValueError) as exc:
                        raise InvalidTable(
                            f"column {field.name!r}: values of type {col.type} cannot be written as {field.type}: {exc}",
                            rule="DELTA-WRITER-002",
                        ) from None
            elif field.name in generated or field.name in identity or field.name in defaults:
                continue  # filled in below
            else:
                col = pa.nulls(len(rows), field.type)
            columns.append(col)
            fields.append(pa.field(field.name, field.type))
        conformed = pa.Table.from_arrays(columns, schema=pa.schema(fields))
        types = {f.name: f.type for f in arrow}
        conformed = cons.apply_defaults(conformed, self.schema, supplied, types)
        if not rewrite:
            conformed, marks = cons.apply_identity_columns(conformed, self.schema, supplied, types)
            if marks:
                self._identity_marks.update(marks)
        conformed = cons.apply_generated_columns(conformed, self.schema, supplied, types)
        conformed = conformed.select(names)
        return conformed, supplied

    def write_rows(self, rows: pa.Table, *, data_change: bool = True, files: int = 1, enforce: bool = True) -> list[AddFile]:
        """Conform, check and write rows as data files (split per partition, ``files`` per group); stages the adds.

        ``enforce=False`` is for rows already in the table (rewritten, not inserted): constraints
        and identity rules are not re-applied to them.
        """
        if files < 1:
            raise InvalidTable(f"files must be >= 1, got {files}")
        rows, _ = self.conform(rows, rewrite=not enforce)
        if enforce:
            cons.enforce_all(rows, self.schema, self.configuration)
        if rows.num_rows == 0:
            return []
        _codec, infix, _page = self._parquet_options()
        data_schema = self._data_schema()
        data_names = [f.name for f in data_schema.fields]
        adds = []
        num_indexed = int(self.configuration.get(NUM_INDEXED_COLS_KEY, 32))
        stats_columns = self.configuration.get(STATS_COLUMNS_KEY)
        stats_columns = [c.strip() for c in stats_columns.split(",") if c.strip()] if stats_columns else None
        for values, dirs, group in self._partition_groups(rows):
            n = group.num_rows
            chunks = min(files, n)
            bounds = [round(i * n / chunks) for i in range(chunks + 1)]
            for i in range(chunks):
                part = group.slice(bounds[i], bounds[i + 1] - bounds[i]).select(data_names)
                directory = self._directory(dirs)
                name = f"part-{i:05d}-{new_uuid()}-c000{infix}.parquet"
                relative = f"{directory}/{name}" if directory else name
                size = self._write_parquet(relative, self._physical_table(part, data_schema))
                stats = compute_stats(part, data_schema, self.mapping_mode, num_indexed, stats_columns)
                add = AddFile(
                    path=encode_path(relative),
                    partition_values=dict(values),
                    size=size,
                    modification_time=_now_ms(),
                    data_change=data_change,
                    stats=stats_to_json(stats),
                )
                self.add_file(add)
                adds.append(add)
        return adds

    def write_changes(self, changes: pa.Table) -> list[AddCDCFile]:
        """Write change rows (logical columns + ``_change_type``) under ``_change_data`` and stage cdc actions."""
        if changes.num_rows == 0:
            return []
        kinds = set(changes.column(CHANGE_TYPE_COLUMN).to_pylist())
        bad = kinds - {CHANGE_INSERT, CHANGE_DELETE, CHANGE_UPDATE_PREIMAGE, CHANGE_UPDATE_POSTIMAGE}
        if bad:
            raise Internal(f"unknown _change_type values {sorted(map(str, bad))}", rule="DELTA-CDF-002")
        _codec, infix, _page = self._parquet_options()
        data_schema = self._data_schema()
        data_names = [f.name for f in data_schema.fields]
        out = []
        for values, dirs, group in self._partition_groups(changes):
            directory = partition_directory(dirs) if dirs and self.mapping_mode == "none" else ""
            name = f"cdc-00000-{new_uuid()}.c000{infix}.parquet"
            relative = "/".join(x for x in (CHANGE_DATA_DIR, directory, name) if x)
            physical = self._physical_table(group.select(data_names), data_schema)
            physical = physical.append_column(pa.field(CHANGE_TYPE_COLUMN, pa.string()), group.column(CHANGE_TYPE_COLUMN).cast(pa.string()))
            size = self._write_parquet(relative, physical)
            cdc = AddCDCFile(path=encode_path(relative), partition_values=dict(values), size=size, data_change=False)
            self.add_cdc(cdc)
            out.append(cdc)
        return out

    # -- commit --------------------------------------------------------------------------------
    def _validate_own_actions(self) -> None:
        add_keys, remove_keys = set(), set()
        add_paths, remove_paths = set(), set()
        for a in self._adds:
            if a.path in add_paths:
                raise InvalidTable(f"path {a.path!r} added twice in one commit", rule="DELTA-ACTION-008")
            add_paths.add(a.path)
            add_keys.add((a.path, _dv_id(a.deletion_vector)))
        for r in self._removes:
            if r.path in remove_paths:
                raise InvalidTable(f"path {r.path!r} removed twice in one commit", rule="DELTA-ACTION-008")
            remove_paths.add(r.path)
            remove_keys.add((r.path, _dv_id(r.deletion_vector)))
        both = add_keys & remove_keys
        if both:
            raise InvalidTable(f"add and remove of the same logical file in one commit: {sorted(both, key=str)[:3]}", rule="DELTA-LOG-009")
        # An add for a path already live with another DV must come with that file's remove (DELTA-ACTION-011).
        live = {} if self.snapshot is None else {f.path: _dv_id(f.deletion_vector) for f in self.snapshot.files}
        for a in self._adds:
            if a.path in live and live[a.path] != _dv_id(a.deletion_vector) and (a.path, live[a.path]) not in remove_keys:
                raise InvalidTable(f"add of {a.path!r} with a new DV must remove the live one in the same commit", rule="DELTA-ACTION-011")
        if self._metadata is None or self._protocol is None:
            raise Internal("a commit needs a protocol and metadata")

    def _check_append_only(self) -> None:
        # The restriction in force is the one the table had when this transaction read it.
        base_protocol = self.protocol if self.snapshot is None else self.snapshot.protocol
        base_config = self.configuration if self.snapshot is None else self.snapshot.metadata.configuration
        if feature_active(base_protocol, base_config, F_APPEND_ONLY, APPEND_ONLY_KEY):
            changing = [r.path for r in self._removes if r.data_change]
            if changing:
                raise InvalidTable(
                    f"table is append-only (delta.appendOnly=true): cannot remove data ({len(changing)} file(s))",
                    rule="DELTA-WRITER-005",
                    hint="set delta.appendOnly=false first",
                )

    def _ict_enabled(self) -> bool:
        return self.is_active(F_ICT, ENABLE_ICT_KEY)

    def _previous_ict(self) -> int | None:
        if self.snapshot is None:
            return None
        state = getattr(self.snapshot, "state", None)
        ict = getattr(state, "in_commit_timestamp", None)
        if ict is None and _is_true(self.snapshot.metadata.configuration, ENABLE_ICT_KEY):
            ict = _commit_ict(self.storage, self.snapshot.version)
        return ict

    def _row_tracking_active(self) -> bool:
        return F_ROW_TRACKING in supported_features(self.protocol) and not _is_true(self.configuration, ROW_TRACKING_SUSPENDED_KEY)

    def _row_id_high_water_mark(self) -> int:
        if self.snapshot is None:
            return -1
        state = getattr(self.snapshot, "state", None)
        domains = getattr(state, "domains", {}) or {}
        dm = domains.get(ROW_TRACKING_DOMAIN)
        if dm is None or dm.removed:
            return -1
        import json

        try:
            return int(json.loads(dm.configuration)[ROW_ID_HIGH_WATER_MARK])
        except (ValueError, KeyError, TypeError):
            raise InvalidTable(f"domain {ROW_TRACKING_DOMAIN} has no valid {ROW_ID_HIGH_WATER_MARK}", rule="DELTA-ROWTRACK-005") from None

    def _assign_row_ids(self, version: int, high_water_mark: int) -> tuple[list[AddFile], DomainMetadata | None]:
        previous = {f.path: f for f in self.files}
        next_id = high_water_mark + 1
        out = []
        for a in self._adds:
            old = previous.get(a.path)
            if old is not None and old.base_row_id is not None:
                # A re-added file keeps its row ids and commit version (DELTA-ROWTRACK-007).
                out.append(dataclasses.replace(a, base_row_id=old.base_row_id, default_row_commit_version=old.default_row_commit_version))
                continue
            stats = parse_stats(a.stats) or {}
            n = int(stats.get("numRecords", 0))
            out.append(dataclasses.replace(a, base_row_id=next_id, default_row_commit_version=version))
            next_id += n
        domain = None
        if next_id - 1 != high_water_mark:
            import json

            domain = DomainMetadata(domain=ROW_TRACKING_DOMAIN, configuration=json.dumps({ROW_ID_HIGH_WATER_MARK: next_id - 1}, separators=(",", ":")), removed=False)
        return out, domain

    def _metadata_for_attempt(self, version: int, ict: int | None) -> Metadata | None:
        if not self._metadata_changed and not self._identity_marks:
            return None
        md = self.metadata
        if self._identity_marks:
            fields = []
            for f in md.schema.fields:
                if f.name in self._identity_marks:
                    f = _with_metadata(f, {**(f.metadata or {}), cons.IDENTITY_HIGH_WATER_MARK_KEY: self._identity_marks[f.name]})
                fields.append(f)
            md = dataclasses.replace(md, schema_string=schema_to_json(StructType(fields=tuple(fields))))
        if self._enabling_ict and ict is not None:
            config = dict(md.configuration)
            config[ICT_ENABLEMENT_VERSION_KEY] = str(version)
            config[ICT_ENABLEMENT_TIMESTAMP_KEY] = str(ict)
            md = dataclasses.replace(md, configuration=config)
        return md

    def _build(self, version: int, previous_ict: int | None, row_id_hwm: int | None) -> tuple[list, int | None]:
        now = _now_ms()
        ict = None
        if self._ict_enabled():
            ict = now if previous_ict is None else max(now, previous_ict + 1)
            if self._enabling_ict and version > 0:
                previous = commit_path(version - 1)
                prev_mtime = next((f.modification_time for f in self.storage.list(LOG_DIR) if f.path == previous), None)
                if prev_mtime is not None:
                    ict = max(ict, prev_mtime + 1)  # DELTA-ICT-005
        info: dict[str, Any] = {}
        if ict is not None:
            info[IN_COMMIT_TIMESTAMP] = ict
        info.update(
            {
                "timestamp": now,
                "operation": self.operation,
                "operationParameters": {k: (v if isinstance(v, str) else _json_text(v)) for k, v in self.parameters.items()},
                "readVersion": self.read_version if self.read_version >= 0 else None,
                "isolationLevel": "Serializable" if self.isolation == "serializable" else "WriteSerializable",
                "isBlindAppend": not self._reads_data and not self._removes and (self.create or not self._metadata_changed),
                "engineInfo": ENGINE_INFO,
                "txnId": new_uuid(),
            }
        )
        if info["readVersion"] is None:
            del info["readVersion"]
        actions: list = [CommitInfo(info=info)]
        if self._protocol_changed or self.create:
            actions.append(self.protocol)
        md = self._metadata_for_attempt(version, ict)
        if md is not None or self.create:
            actions.append(md if md is not None else self.metadata)
        actions.extend(self._txns.values())
        adds = self._adds
        domains = dict(self._domains)
        if self._row_tracking_active() and row_id_hwm is not None:
            adds, rt_domain = self._assign_row_ids(version, row_id_hwm)
            if rt_domain is not None:
                domains[ROW_TRACKING_DOMAIN] = rt_domain
        actions.extend(domains.values())
        actions.extend(self._removes)
        actions.extend(adds)
        actions.extend(self._cdcs)
        return actions, ict

    def _conflict(self, winner_version: int, winner: list) -> str | None:
        """Why a winning commit makes this transaction impossible to rebase, or None."""
        our_removed = {(r.path, _dv_id(r.deletion_vector)) for r in self._removes}
        our_removed_paths = {r.path for r in self._removes}
        for action in winner:
            kind = type(action).__name__
            if kind == "Protocol":
                return f"version {winner_version} changed the protocol"
            if kind == "Metadata":
                return f"version {winner_version} changed the table metadata"
            if kind == "Txn" and action.app_id in self._txns:
                return f"version {winner_version} committed txn appId {action.app_id!r} too"
            if kind == "DomainMetadata" and action.domain in self._domains:
                return f"version {winner_version} changed domain {action.domain!r} too"
            if kind == "RemoveFile":
                key = (action.path, _dv_id(action.deletion_vector))
                if key in our_removed or action.path in our_removed_paths:
                    return f"version {winner_version} removed {action.path!r}, which this transaction also removes or rewrites"
            if kind == "AddFile":
                if action.path in our_removed_paths:
                    return f"version {winner_version} changed {action.path!r} (a new deletion vector), which this transaction also rewrites"
                if self.isolation == "serializable" and action.data_change and self._reads_data:
                    if self._read_whole_table:
                        return f"version {winner_version} added data this transaction read (serializable)"
                    pv = dict(action.partition_values or {})
                    if any(pv == p for p in self._read_partitions):
                        return f"version {winner_version} added data to a partition this transaction read (serializable)"
        return None

    def commit(self) -> int:
        """Commit the staged actions; returns the version written."""
        if self.committed_version is not None:
            raise Internal("transaction already committed")
        self._validate_own_actions()
        if not self.create:
            self._check_writable()
        else:
            from reference_impl.delta.protocol import check_writable

            check_writable(self.protocol, self.metadata)
        self._check_append_only()
        version = self.read_version + 1
        previous_ict = self._previous_ict()
        row_id_hwm = self._row_id_high_water_mark() if self._row_tracking_active() else None
        for attempt in range(self.max_attempts):
            self.attempts = attempt + 1
            actions, ict = self._build(version, previous_ict, row_id_hwm)
            data = serialize_commit(actions)
            try:
                self.storage.put_if_absent(commit_path(version), data)
            except CommitConflict:
                if self.create:
                    raise TableExists(f"a table already exists at {self.storage.root} (version 0 is taken)", path=commit_path(0), rule="DELTA-LOG-010") from None
                # Read every commit that beat us and decide whether we can go after them.
                while True:
                    try:
                        raw = self.storage.read(commit_path(version))
                    except FileNotFoundError:
                        break
                    winner = parse_commit(raw, version=version)
                    reason = self._conflict(version, winner)
                    if reason is not None:
                        raise CommitConflict(
                            f"concurrent commit conflict: {reason}",
                            version=version,
                            rule="DELTA-LOG-010",
                            hint="re-read the table and retry the operation",
                        ) from None
                    for action in winner:
                        if type(action).__name__ == "CommitInfo" and action.in_commit_timestamp is not None:
                            previous_ict = action.in_commit_timestamp
                        if type(action).__name__ == "DomainMetadata" and action.domain == ROW_TRACKING_DOMAIN and row_id_hwm is not None:
                            import json

                            row_id_hwm = int(json.loads(action.configuration)[ROW_ID_HIGH_WATER_MARK])
                    version += 1
                time.sleep(random.uniform(0, min(0.05, 0.001 * (2 ** min(attempt, 6)))))
                continue
            self.committed_version = version
            return version
        raise CommitConflict(
            f"gave up after {self.max_attempts} attempts: other writers kept winning",
            version=version,
            hint="retry later or raise max_attempts",
        )


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"), default=str)


def _commit_ict(storage: Storage, version: int) -> int | None:
    try:
        actions = parse_commit(storage.read(commit_path(version)), version=version)
    except FileNotFoundError:
        return None
    for a in actions:
        if type(a).__name__ == "CommitInfo":
            return a.in_commit_timestamp
    return None


# --------------------------------------------------------------------------------------------
# operations


def create_table(
    location: str | Storage,
    schema: pa.Schema | StructType,
    *,
    partition_by: Sequence[str] = (),
    properties: Mapping[str, str] = {},
    features: Iterable[str] = (),
    protocol: tuple[int, int] | None = None,
) -> int:
    """Create a table (version 0: commitInfo, protocol, metaData); returns 0."""
    storage = _storage(location)
    struct = _schema_from_input(schema)
    partition_by = tuple(partition_by)
    _check_schema(struct, partition_by)
    config = {str(k): _prop_text(v) for k, v in dict(properties).items() if v is not None}
    for key in (cm.MAX_ID_KEY, ICT_ENABLEMENT_VERSION_KEY, ICT_ENABLEMENT_TIMESTAMP_KEY):
        if key in config:
            raise InvalidTable(f"{key} is maintained by the writer and cannot be set by users", rule="DELTA-COLMAP-009" if key == cm.MAX_ID_KEY else None)
    mode = cm.mapping_mode(config)
    if mode != "none":
        struct, max_id = cm.assign_column_mapping(struct, 0)
        config[cm.MAX_ID_KEY] = str(max_id)
    needed = required_features(struct, config) | set(features)
    if protocol is None:
        proto = protocol_supporting(None, needed) if not features else _features_protocol(needed)
    else:
        reader, writer_v = int(protocol[0]), int(protocol[1])
        if reader == 3 and writer_v != 7:
            raise InvalidTable(f"protocol ({reader},{writer_v}): reader version 3 needs writer version 7", rule="DELTA-FEATURE-003")
        if writer_v >= 7:
            if reader < 3 and (needed & READER_WRITER_FEATURES) - ({F_COLUMN_MAPPING} if reader == 2 else set()):
                raise InvalidTable(
                    f"protocol ({reader},7) cannot support reader features {sorted(needed & READER_WRITER_FEATURES)}",
                    rule="DELTA-FEATURE-006",
                    hint="use reader version 3",
                )
            proto = _features_protocol(needed, reader)
        else:
            missing = needed - legacy_features(reader, writer_v)
            if missing:
                raise InvalidTable(f"protocol ({reader},{writer_v}) does not support {sorted(missing)}", hint="use a higher version or protocol=(3,7)")
            proto = Protocol(min_reader_version=reader, min_writer_version=writer_v, reader_features=None, writer_features=None)
    for gen in cons.generated_columns(struct):
        names = [f for f in to_arrow_schema(struct) if f.name != gen.column]
        cons.check_expression_binds(pa.schema(names), gen.expression, what=f"generated column {gen.column!r}")
    for c in cons.check_constraints(config):
        cons.check_expression_binds(to_arrow_schema(struct), c.expression, what=f"CHECK constraint {c.name!r}")
    for inv in cons.invariants(struct):
        cons.check_expression_binds(to_arrow_schema(struct), inv.expression, what=f"invariant on {inv.name!r}")
    cons.identity_columns(struct)  # validates step != 0
    if _is_true(config, ENABLE_ROW_TRACKING_KEY):
        _name_materialized_columns(config)
    md = Metadata(
        id=new_uuid(),
        name=None,
        description=None,
        format=Format(),
        schema_string=schema_to_json(struct),
        partition_columns=partition_by,
        configuration=config,
        created_time=_now_ms(),
    )
    txn = Transaction(storage, operation="CREATE TABLE", parameters={"partitionBy": list(partition_by), "properties": config}, create=True)
    txn._protocol = proto
    txn._metadata = md
    txn._protocol_changed = True
    txn._metadata_changed = True
    # Refuse early (and without writing anything) when a log already exists.
    if storage.exists(commit_path(0)):
        raise TableExists(f"a table already exists at {storage.root}", path=commit_path(0))
    return txn.commit()


def _name_materialized_columns(config: dict[str, str]) -> None:
    """Hidden column names for materialized row ids / commit versions (DELTA-ROWTRACK-009/010)."""
    config.setdefault(MATERIALIZED_ROW_ID_KEY, f"_row-id-col-{new_uuid()}")
    config.setdefault(MATERIALIZED_ROW_COMMIT_VERSION_KEY, f"_row-commit-version-col-{new_uuid()}")


def _prop_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def append(location: str | Storage, rows: pa.Table, *, files: int = 1, txn: tuple[str, int] | None = None) -> int:
    """Append rows as new data files; returns the committed version."""
    t = Transaction(location, operation="WRITE", parameters={"mode": "Append"})
    if txn is not None:
        t.set_txn(txn[0], txn[1])
    t.write_rows(rows, files=files)
    return t.commit()


def _merged_schema(current: StructType, incoming: StructType, config: Mapping[str, str]) -> tuple[StructType, dict[str, str]]:
    """The new schema for an overwrite: keep the metadata of columns whose name and type stay."""
    old = {f.name: f for f in current.fields}
    fields = []
    for f in incoming.fields:
        prev = old.get(f.name)
        if prev is not None and _type_signature(prev.type) == _type_signature(f.type):
            fields.append(dataclasses.replace(prev, nullable=f.nullable and prev.nullable or f.nullable))
        else:
            md = {k: v for k, v in (f.metadata or {}).items() if not str(k).startswith("delta.columnMapping")}
            fields.append(dataclasses.replace(f, metadata=md))
    struct = StructType(fields=tuple(fields))
    config = dict(config)
    mode = cm.mapping_mode(config)
    if mode != "none":
        max_id = int(config.get(cm.MAX_ID_KEY, 0))
        struct, new_max = cm.assign_column_mapping(struct, max_id)
        config[cm.MAX_ID_KEY] = str(max(max_id, new_max))
    return struct, config


def overwrite(location: str | Storage, rows: pa.Table) -> int:
    """Replace every live file with ``rows``; the schema changes when the rows' schema differs."""
    t = Transaction(location, operation="WRITE", parameters={"mode": "Overwrite"})
    if not isinstance(rows, pa.Table):
        raise InvalidTable(f"rows must be a pyarrow.Table, not {type(rows).__name__}")
    incoming = _schema_from_input(rows.schema)
    current = t.schema
    current_sig = [(f.name, _type_signature(f.type)) for f in current.fields]
    incoming_sig = [(f.name, _type_signature(f.type)) for f in incoming.fields]
    generated = {g.column for g in cons.generated_columns(current)} | {i.column for i in cons.identity_columns(current)}
    same = incoming_sig == current_sig or (
        set(incoming_sig) <= set(current_sig) and {n for n, _ in current_sig} - {n for n, _ in incoming_sig} <= generated
    )
    if not same:
        new_schema, config = _merged_schema(current, incoming, t.configuration)
        parts = tuple(p for p in t.metadata.partition_columns if p in new_schema.names)
        _check_schema(new_schema, parts)
        t.update_metadata(dataclasses.replace(t.metadata, schema_string=schema_to_json(new_schema), partition_columns=parts, configuration=config))
    for f in t.files:
        t.remove_file(f, data_change=True)
    t.read_whole_table()
    t.write_rows(rows)
    return t.commit()


def _dv_enabled(t: Transaction) -> bool:
    return t.is_active(F_DV, ENABLE_DV_KEY)


def _cdf_enabled(t: Transaction) -> bool:
    return t.is_active(F_CDF, ENABLE_CDF_KEY)


def _with_change_type(table: pa.Table, kind: str) -> pa.Table:
    return table.append_column(pa.field(CHANGE_TYPE_COLUMN, pa.string()), pa.array([kind] * table.num_rows, pa.string()))


def _dv_stats(add: AddFile, physical_rows: int) -> str:
    stats = parse_stats(add.stats) or {}
    stats["numRecords"] = physical_rows  # the physical count, not the survivors (DELTA-DV-016)
    if any(k in stats for k in ("minValues", "maxValues", "nullCount")):
        stats["tightBounds"] = False
    return stats_to_json(stats)


def _file_rows(storage: Storage, add: AddFile) -> int:
    stats = parse_stats(add.stats) or {}
    if "numRecords" in stats:
        return int(stats["numRecords"])
    rel = decode_path(storage, add.path)
    return read_parquet_metadata(storage.read(rel)).num_rows


def _rewrite_with_deletes(t: Transaction, hits: list[tuple[AddFile, pa.Table, np.ndarray, np.ndarray]], replacement_rows: list[pa.Table]) -> None:
    """Apply per-file deleted positions: DVs when enabled, else copy-on-write; replacement rows are written too."""
    from reference_impl.delta.deletion_vector import load_deleted_rows, write_deletion_vectors

    use_dv = _dv_enabled(t)
    dv_targets = []
    for add, live, positions, deleted in hits:
        if len(deleted) == len(positions):
            t.remove_file(add, data_change=True)
            continue
        if use_dv:
            dv_targets.append((add, deleted))
        else:
            keep = ~np.isin(positions, deleted)
            t.remove_file(add, data_change=True)
            survivors = live.filter(pa.array(keep))
            replacement_rows.append(survivors)
    if dv_targets:
        row_sets = []
        for add, deleted in dv_targets:
            old = np.asarray(load_deleted_rows(t.storage, add.deletion_vector), dtype=np.int64) if add.deletion_vector is not None else np.zeros(0, np.int64)
            row_sets.append(sorted(set(old.tolist()) | set(int(x) for x in deleted)))
        descriptors = write_deletion_vectors(t.storage, row_sets)
        for (add, _deleted), dv in zip(dv_targets, descriptors):
            t.remove_file(add, data_change=True)
            t.add_file(
                dataclasses.replace(
                    add,
                    deletion_vector=dv,
                    data_change=True,
                    modification_time=_now_ms(),
                    stats=_dv_stats(add, _file_rows(t.storage, add)),
                )
            )


def delete(location: str | Storage, where: str, *, isolation: str = "write_serializable") -> int:
    """Delete the rows where the SQL predicate is TRUE (deletion vectors when enabled, else copy-on-write)."""
    t = Transaction(location, operation="DELETE", parameters={"predicate": where}, isolation=isolation)
    if feature_active(t.protocol, t.configuration, F_APPEND_ONLY, APPEND_ONLY_KEY):
        raise InvalidTable("table is append-only (delta.appendOnly=true): DELETE is refused", rule="DELTA-WRITER-005", hint="set delta.appendOnly=false first")
    cons.check_expression_binds(to_arrow_schema(t.schema), where, what="DELETE predicate")
    hits = []
    deleted_rows = []
    files = t.files
    t.read_files(files)
    for add in files:
        live, positions = read_logical_file(t.storage, t.metadata, add)
        idx = np.nonzero(cons.evaluate_predicate(live, where, what="DELETE predicate"))[0]
        if len(idx) == 0:
            continue
        hits.append((add, live, positions, positions[idx]))
        deleted_rows.append(live.take(pa.array(idx)))
    replacement: list[pa.Table] = []
    _rewrite_with_deletes(t, hits, replacement)
    for rows in replacement:
        t.write_rows(rows, enforce=False)
    if _cdf_enabled(t) and deleted_rows:
        t.write_changes(_with_change_type(pa.concat_tables(deleted_rows), CHANGE_DELETE))
    t.parameters["numDeletedRows"] = str(sum(r.num_rows for r in deleted_rows))
    return t.commit()


def update(location: str | Storage, set: Mapping[str, str], where: str = "true", *, isolation: str = "write_serializable") -> int:
    """Set columns to SQL expressions on the rows where ``where`` is TRUE."""
    t = Transaction(location, operation="UPDATE", parameters={"predicate": where}, isolation=isolation)
    if not set:
        raise InvalidTable("UPDATE needs at least one column to set")
    arrow = to_arrow_schema(t.schema)
    names = [f.name for f in arrow]
    for col in set:
        if col not in names:
            raise InvalidTable(f"UPDATE sets unknown column {col!r}", hint=f"columns: {names}")
    if feature_active(t.protocol, t.configuration, F_APPEND_ONLY, APPEND_ONLY_KEY):
        raise InvalidTable("table is append-only (delta.appendOnly=true): UPDATE is refused", rule="DELTA-WRITER-005", hint="set delta.appendOnly=false first")
    cons.check_expression_binds(arrow, where, what="UPDATE predicate")
    for col, expr in set.items():
        cons.check_expression_binds(arrow, expr, what=f"UPDATE value of {col!r}")
    recomputed = {g.column for g in cons.generated_columns(t.schema)} - builtins_set(set)
    types = {f.name: f.type for f in arrow}
    files = t.files
    t.read_files(files)
    hits, pre, post, new_rows = [], [], [], []
    use_dv = _dv_enabled(t)
    for add in files:
        live, positions = read_logical_file(t.storage, t.metadata, add)
        mask = cons.evaluate_predicate(live, where, what="UPDATE predicate")
        idx = np.nonzero(mask)[0]
        if len(idx) == 0:
            continue
        updated = live
        for col, expr in set.items():
            values = cons.evaluate(live, expr, what=f"UPDATE value of {col!r}")
            try:
                values = values.cast(types[col])
            except (pa.ArrowException, ValueError) as exc:
                raise InvalidTable(f"UPDATE value of {col!r} ({values.type}) cannot be stored as {types[col]}: {exc}") from None
            merged = pc.if_else(pa.array(mask), values, live.column(col))
            updated = updated.set_column(names.index(col), pa.field(col, types[col]), merged)
        if recomputed:
            updated = updated.drop_columns(sorted(recomputed))
        changed = updated.filter(pa.array(mask))
        pre.append(live.filter(pa.array(mask)))
        if use_dv:
            hits.append((add, live, positions, positions[idx]))
            new_rows.append(changed)
        else:
            t.remove_file(add, data_change=True)
            new_rows.append(updated)
        post.append(changed)
    if use_dv:
        _rewrite_with_deletes(t, hits, [])
    written_post = []
    for rows in new_rows:
        conformed, _ = t.conform(rows, rewrite=True)
        cons.enforce_all(conformed, t.schema, t.configuration)
        written_post.append(conformed)
        t.write_rows(conformed, enforce=False)
    if _cdf_enabled(t) and pre:
        # Post-images carry recomputed generated columns: take them from what was written.
        post_images = [t.conform(p, rewrite=True)[0] for p in post]
        changes = pa.concat_tables([_with_change_type(pa.concat_tables(pre), CHANGE_UPDATE_PREIMAGE), _with_change_type(pa.concat_tables(post_images), CHANGE_UPDATE_POSTIMAGE)])
        t.write_changes(changes)
    t.parameters["numUpdatedRows"] = str(sum(p.num_rows for p in pre))
    return t.commit()


builtins_set = set  # ``update`` takes a parameter named ``set`` (the contract's name)


def _validate_new_constraints(t: Transaction, config: Mapping[str, str]) -> None:
    old = {c.name.lower() for c in cons.check_constraints(t.snapshot.metadata.configuration)}
    new = [c for c in cons.check_constraints(config) if c.name.lower() not in old]
    if not new:
        return
    arrow = to_arrow_schema(t.schema)
    for c in new:
        cons.check_expression_binds(arrow, c.expression, what=f"CHECK constraint {c.name!r}")
    t.read_whole_table()
    rows = read_all_rows(t.storage, t.snapshot)
    try:
        cons.enforce_constraints(rows, new)
    except cons.ConstraintViolation as exc:
        raise cons.ConstraintViolation(
            f"cannot add: existing rows break it: {exc.message}",
            constraint=exc.constraint,
            kind=exc.constraint_kind,
            rule="DELTA-WRITER-013",
        ) from None


def _enable_name_mapping(schema: StructType) -> StructType:
    """Existing columns keep their current names as physical names, so old files still resolve."""

    def walk_type(t):
        if isinstance(t, StructType):
            return StructType(fields=tuple(walk_field(f) for f in t.fields))
        if isinstance(t, ArrayType):
            return dataclasses.replace(t, element_type=walk_type(t.element_type))
        if isinstance(t, MapType):
            return dataclasses.replace(t, key_type=walk_type(t.key_type), value_type=walk_type(t.value_type))
        return t

    def walk_field(f: StructField) -> StructField:
        md = dict(f.metadata or {})
        md.setdefault(cm.PHYSICAL_NAME_KEY, f.name)
        return dataclasses.replace(f, type=walk_type(f.type), metadata=md)

    return walk_type(schema)


def set_properties(location: str | Storage, properties: Mapping[str, str | None]) -> int:
    """Set (or, with value None, unset) table properties; upgrades the protocol as features need."""
    t = Transaction(location, operation="SET TBLPROPERTIES", parameters={"properties": {k: v for k, v in properties.items()}})
    config = dict(t.configuration)
    for key, value in properties.items():
        if key in (cm.MAX_ID_KEY, ICT_ENABLEMENT_VERSION_KEY, ICT_ENABLEMENT_TIMESTAMP_KEY):
            raise InvalidTable(f"{key} is maintained by the writer and cannot be set by users", rule="DELTA-COLMAP-009" if key == cm.MAX_ID_KEY else "DELTA-ICT-004")
        if value is None:
            config.pop(key, None)
        else:
            config[key] = _prop_text(value)
    schema = t.schema
    old_mode = cm.mapping_mode(t.configuration) if F_COLUMN_MAPPING in supported_features(t.protocol) else "none"
    new_mode = cm.mapping_mode(config)
    if new_mode != old_mode:
        if old_mode == "none" and new_mode == "name":
            schema, max_id = cm.assign_column_mapping(_enable_name_mapping(schema), int(config.get(cm.MAX_ID_KEY, 0)))
            config[cm.MAX_ID_KEY] = str(max_id)
        elif old_mode == "none" and new_mode == "id" and not t.files:
            schema, max_id = cm.assign_column_mapping(schema, 0)
            config[cm.MAX_ID_KEY] = str(max_id)
        else:
            raise Unsupported(
                f"changing column mapping mode from {old_mode!r} to {new_mode!r} on a table with data is not supported",
                feature=F_COLUMN_MAPPING,
                hint="only none -> name is possible without rewriting the files",
            )
    _validate_new_constraints(t, config)
    if _is_true(config, ENABLE_ROW_TRACKING_KEY) and not _is_true(t.configuration, ENABLE_ROW_TRACKING_KEY):
        if any(f.base_row_id is None for f in t.files):
            raise Unsupported(
                "enabling row tracking on a table whose files have no baseRowId needs a backfill, which the reference does not do",
                feature=F_ROW_TRACKING,
                rule="DELTA-ROWTRACK-009",
            )
        _name_materialized_columns(config)
    t.update_metadata(dataclasses.replace(t.metadata, schema_string=schema_to_json(schema), configuration=config))
    return t.commit()


def add_constraint(location: str | Storage, name: str, expression: str) -> int:
    """Add a CHECK constraint after checking every existing row; the table is unchanged on failure."""
    if not name or not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$", name):
        raise InvalidTable(f"invalid constraint name {name!r}")
    t = Transaction(location, operation="ADD CONSTRAINT", parameters={"name": name, "expr": expression})
    if any(c.name.lower() == name.lower() for c in cons.check_constraints(t.configuration)):
        raise InvalidTable(f"constraint {name!r} already exists")
    config = dict(t.configuration)
    config[cons.CONSTRAINT_PREFIX + name] = expression
    _validate_new_constraints(t, config)
    t.update_metadata(dataclasses.replace(t.metadata, configuration=config))
    return t.commit()


def drop_constraint(location: str | Storage, name: str) -> int:
    """Remove a CHECK constraint."""
    t = Transaction(location, operation="DROP CONSTRAINT", parameters={"name": name})
    config = {k: v for k, v in t.configuration.items() if k.lower() != (cons.CONSTRAINT_PREFIX + name).lower()}
    if len(config) == len(t.configuration):
        raise InvalidTable(f"no constraint named {name!r}")
    t.update_metadata(dataclasses.replace(t.metadata, configuration=config))
    return t.commit()


def _check_expressions_still_bind(schema: StructType, configuration: Mapping[str, str], action: str) -> None:
    arrow = to_arrow_schema(schema)
    for c in cons.check_constraints(configuration):
        try:
            cons.check_expression_binds(arrow, c.expression, what=f"CHECK constraint {c.name!r}")
        except InvalidTable:
            raise InvalidTable(f"cannot {action}: CHECK constraint {c.name!r} ({c.expression}) depends on it", rule="DELTA-WRITER-012") from None
    for g in cons.generated_columns(schema):
        try:
            cons.check_expression_binds(arrow, g.expression, what=f"generated column {g.column!r}")
        except InvalidTable:
            raise InvalidTable(f"cannot {action}: generated column {g.column!r} ({g.expression}) depends on it") from None


def add_column(location: str | Storage, field: pa.Field) -> int:
    """Add a nullable top-level column (new id and physical name under column mapping)."""
    t = Transaction(location, operation="ADD COLUMNS", parameters={"columns": [field.name]})
    new = _arrow_field_to_delta(field)
    md = dict(new.metadata or {})
    if cons.DEFAULT_KEY in md:
        raise InvalidTable("a column default cannot be set in the operation that adds the column", rule="DELTA-WRITER-019", hint="add the column, then set its default")
    if cons.GENERATION_EXPRESSION_KEY in md or cons.IDENTITY_START_KEY in md:
        raise Unsupported("adding a generated or identity column to an existing table", feature=F_GENERATED_COLUMNS)
    if any(str(k).startswith("delta.columnMapping") for k in md):
        raise InvalidTable("column mapping metadata is assigned by the writer", rule="DELTA-COLMAP-009")
    if not new.nullable and t.files:
        raise InvalidTable(f"cannot add NOT NULL column {new.name!r} to a table with rows")
    schema = StructType(fields=tuple(t.schema.fields) + (new,))
    _check_schema(schema, t.metadata.partition_columns)
    config = dict(t.configuration)
    if t.mapping_mode != "none":
        max_id = int(config.get(cm.MAX_ID_KEY, 0))
        schema, new_max = cm.assign_column_mapping(schema, max_id)
        config[cm.MAX_ID_KEY] = str(max(max_id, new_max))
    for inv in cons.invariants(StructType(fields=(new,))):
        cons.check_expression_binds(to_arrow_schema(schema), inv.expression, what=f"invariant on {inv.name!r}")
    t.update_metadata(dataclasses.replace(t.metadata, schema_string=schema_to_json(schema), configuration=config))
    return t.commit()


def _require_mapping(t: Transaction, action: str) -> None:
    if t.mapping_mode == "none":
        raise InvalidTable(
            f"{action} needs column mapping: data files name columns by their display names",
            rule="DELTA-COLMAP-005",
            hint="set_properties(location, {'delta.columnMapping.mode': 'name'}) first",
        )


def rename_column(location: str | Storage, old: str, new: str) -> int:
    """Rename a top-level column (metadata only; needs column mapping)."""
    t = Transaction(location, operation="RENAME COLUMN", parameters={"oldColumnPath": old, "newColumnPath": new})
    _require_mapping(t, "renaming a column")
    names = t.schema.names
    if old not in names:
        raise InvalidTable(f"no column named {old!r}", hint=f"columns: {names}")
    if new.lower() in {n.lower() for n in names if n != old}:
        raise InvalidTable(f"a column named {new!r} already exists", rule="DELTA-SCHEMA-005")
    fields = tuple(dataclasses.replace(f, name=new) if f.name == old else f for f in t.schema.fields)
    schema = StructType(fields=fields)
    _check_expressions_still_bind(schema, t.configuration, f"rename column {old!r}")
    for inv in cons.invariants(schema):
        if inv.name.split(".")[0] == new:
            raise InvalidTable(f"cannot rename column {old!r}: its invariant ({inv.expression}) names it")
    parts = tuple(new if p == old else p for p in t.metadata.partition_columns)
    t.update_metadata(dataclasses.replace(t.metadata, schema_string=schema_to_json(schema), partition_columns=parts))
    return t.commit()


def drop_column(location: str | Storage, name: str) -> int:
    """Drop a top-level column (metadata only; needs column mapping)."""
    t = Transaction(location, operation="DROP COLUMNS", parameters={"columns": [name]})
    _require_mapping(t, "dropping a column")
    names = t.schema.names
    if name not in names:
        raise InvalidTable(f"no column named {name!r}", hint=f"columns: {names}")
    if name in t.metadata.partition_columns:
        raise InvalidTable(f"cannot drop partition column {name!r}")
    schema = StructType(fields=tuple(f for f in t.schema.fields if f.name != name))
    _check_schema(schema, t.metadata.partition_columns)
    _check_expressions_still_bind(schema, t.configuration, f"drop column {name!r}")
    t.update_metadata(dataclasses.replace(t.metadata, schema_string=schema_to_json(schema)))
    return t.commit()


def optimize(location: str | Storage) -> int:
    """Compact each partition's files (and purge DVs) into one file; dataChange=false throughout.

    Returns the committed version, or the current version when there is nothing to compact.
    """
    t = Transaction(location, operation="OPTIMIZE", parameters={"predicate": "[]"})
    groups: dict[tuple, list[AddFile]] = {}
    for f in t.files:
        groups.setdefault(tuple(sorted((f.partition_values or {}).items(), key=lambda kv: kv[0])), []).append(f)
    work = {k: v for k, v in groups.items() if len(v) > 1 or any(f.deletion_vector is not None for f in v)}
    if not work:
        return t.read_version
    for files in work.values():
        tables = [read_logical_file(t.storage, t.metadata, f)[0] for f in files]
        for f in files:
            t.remove_file(f, data_change=False)
        t.write_rows(pa.concat_tables(tables), data_change=False, enforce=False)
    return t.commit()


def set_domain(location: str | Storage, domain: str, configuration: str | None) -> int:
    """Set a user metadata domain (None removes it, keeping the last configuration in the tombstone)."""
    t = Transaction(location, operation="SET DOMAIN", parameters={"domain": domain})
    if configuration is None:
        state = getattr(t.snapshot, "state", None)
        current = (getattr(state, "domains", {}) or {}).get(domain)
        if current is None:
            raise InvalidTable(f"no domain named {domain!r}")
        t.set_domain(domain, current.configuration, removed=True)
    else:
        t.set_domain(domain, configuration)
    return t.commit()


def checkpoint(location: str | Storage, *, kind: str = "classic", parts: int = 1, sidecars: int = 0, stats: Sequence[str] = ("json",)) -> int:
    """Write a checkpoint of the latest version; returns that version."""
    from reference_impl.delta.checkpoint import write_checkpoint

    storage = _storage(location)
    snapshot = _load_snapshot(storage)
    if kind == "v2" and F_V2_CHECKPOINT not in supported_features(snapshot.protocol):
        raise InvalidTable(
            "v2 checkpoints need the v2Checkpoint feature",
            hint="set_properties(location, {'delta.checkpointPolicy': 'v2'}) first",
        )
    write_checkpoint(storage, snapshot.state, kind=kind, parts=parts, sidecars=sidecars, stats=tuple(stats))
    return snapshot.version


__all__ = [
    "Transaction",
    "TableExists",
    "create_table",
    "append",
    "overwrite",
    "delete",
    "update",
    "set_properties",
    "add_constraint",
    "drop_constraint",
    "add_column",
    "rename_column",
    "drop_column",
    "optimize",
    "checkpoint",
    "set_domain",
    "read_logical_file",
    "read_all_rows",
    "required_features",
    "protocol_supporting",
    "supported_features",
    "encode_path",
    "decode_path",
]
