"""Commit metadata (spec: Timeline / Actions; Java HoodieCommitMetadata, CommitMetadataSerDeV1/V2, HoodieWriteStat).

The completed file of an instant says what it did:

* ``commit``, ``deltacommit`` (and a completed compaction or log compaction): ``HoodieCommitMetadata``
  — ``partitionToWriteStats`` (partition path -> the write stats of the file groups written),
  ``compacted``, ``extraMetadata`` (the writer's Avro schema under ``schema``), ``operationType``;
* ``replacecommit`` (insert_overwrite, delete_partition, clustering): the same plus
  ``partitionToReplaceFileIds``, the file groups it retires (HUDI-COMMIT-004);
* ``clean``: ``HoodieCleanMetadata``, the files each partition's cleaning deleted;
* ``rollback``: ``HoodieRollbackMetadata``, the instants rolled back and the files deleted.

Pending files (``parse_pending``) hold the action's Avro plan when requested (cleaner, compaction,
clustering/replace, rollback, restore and index plans; commit and delta commit requests are empty)
and, for the commit kinds, in-progress commit metadata when inflight.

Table version 6 writes the commit kinds as JSON (Jackson, camelCase keys) and version 8+ as an
Avro object container with one record (HUDI-TIMELINE-018); clean, rollback, savepoint, restore and
indexing metadata are Avro in every version. The first bytes decide (``Obj\\x01`` or ``{``), not the
table version, since an upgraded table keeps its old files. Avro is decoded by the file's own
writer schema (fastavro) after ``check_avro_container`` has bounded every declared size; the field
names are the same in both encodings, and a JSON write stat carries many more counters, which are
kept in ``WriteStat.fields``. An empty completed commit file reads as empty metadata, as in Java
(``HoodieCommitMetadata.fromBytes``); an empty Avro-only file is invalid.

Partition paths are relative to the table root; a non-partitioned table uses "" (HUDI-COMMIT-005).
A write stat's ``path`` must stay inside the table.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from reference_impl.common import bounded
from reference_impl.common.jsontext import loads
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import timeline as T
from reference_impl.storage import Storage, normalize_relative

AVRO_MAGIC = b"Obj\x01"
# Keys (HoodieCommitMetadata, HoodieReplaceCommitMetadata, HoodieWriteStat), spelled once.
PARTITION_TO_WRITE_STATS = "partitionToWriteStats"
PARTITION_TO_REPLACE_FILE_IDS = "partitionToReplaceFileIds"
COMPACTED = "compacted"
EXTRA_METADATA = "extraMetadata"
OPERATION_TYPE = "operationType"
VERSION = "version"
SCHEMA_KEY = "schema"  # extraMetadata key of the writer's Avro schema (HUDI-COMMIT-003)
FILE_ID = "fileId"
PATH = "path"
PREV_COMMIT = "prevCommit"
NUM_WRITES = "numWrites"
NUM_DELETES = "numDeletes"
NUM_UPDATE_WRITES = "numUpdateWrites"
NUM_INSERTS = "numInserts"
TOTAL_WRITE_BYTES = "totalWriteBytes"
TOTAL_WRITE_ERRORS = "totalWriteErrors"
PARTITION_PATH = "partitionPath"
FILE_SIZE = "fileSizeInBytes"
BASE_FILE = "baseFile"
LOG_FILES = "logFiles"
LOG_VERSION = "logVersion"
PREV_BASE_FILE = "prevBaseFile"
NULL_COMMIT = "null"  # prevCommit of a new file group (Java writes the string "null")
OPERATION_TYPES = ("INSERT", "INSERT_PREPPED", "UPSERT", "UPSERT_PREPPED", "BULK_INSERT", "BULK_INSERT_PREPPED",
                   "DELETE", "DELETE_PREPPED", "BOOTSTRAP", "INSERT_OVERWRITE", "CLUSTER", "DELETE_PARTITION",
                   "INSERT_OVERWRITE_TABLE", "COMPACT", "INDEX", "ALTER_SCHEMA", "LOG_COMPACT", "UNKNOWN")


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteStat:
    """What one write did to one file group (HoodieWriteStat); ``fields`` keeps every key as written."""

    file_id: str
    path: str | None  # relative to the table root
    prev_commit: str | None  # None for a new file group ("null" on the wire)
    partition_path: str | None
    num_writes: int
    num_deletes: int
    num_update_writes: int
    num_inserts: int
    total_write_bytes: int
    total_write_errors: int
    file_size_in_bytes: int | None
    base_file: str | None
    log_files: tuple[str, ...]
    log_version: int | None
    prev_base_file: str | None
    fields: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitMetadata:
    """The metadata of a completed commit, delta commit or replace commit."""

    encoding: str  # "json", "avro", or "empty" (a zero-byte file)
    partition_to_write_stats: Mapping[str, tuple[WriteStat, ...]]
    partition_to_replace_file_ids: Mapping[str, tuple[str, ...]]
    compacted: bool
    extra_metadata: Mapping[str, str]
    operation_type: str | None
    version: int | None

    @property
    def schema(self) -> str | None:
        """The writer's Avro schema (JSON text), when recorded (HUDI-COMMIT-003)."""
        value = self.extra_metadata.get(SCHEMA_KEY)
        return value or None

    def write_stats(self) -> tuple[WriteStat, ...]:
        """Every write stat, partition by partition."""
        return tuple(s for stats in self.partition_to_write_stats.values() for s in stats)

    def replaced_file_ids(self) -> frozenset[tuple[str, str]]:
        """``(partition, fileId)`` of every file group this replace commit retires."""
        return frozenset((p, f) for p, ids in self.partition_to_replace_file_ids.items() for f in ids)


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanPartition:
    """What cleaning did in one partition (HoodieCleanPartitionMetadata)."""

    partition_path: str
    policy: str | None
    delete_path_patterns: tuple[str, ...]
    success_delete_files: tuple[str, ...]
    failed_delete_files: tuple[str, ...]
    is_partition_deleted: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanMetadata:
    """The metadata of a completed clean (HoodieCleanMetadata)."""

    start_clean_time: str
    earliest_commit_to_retain: str | None
    last_completed_commit_timestamp: str | None
    total_files_deleted: int
    partition_metadata: Mapping[str, CleanPartition]
    version: int | None

    def deleted_files(self) -> tuple[tuple[str, str], ...]:
        """``(partition, file name)`` of every file the clean deleted."""
        return tuple((p.partition_path, f) for p in self.partition_metadata.values() for f in p.success_delete_files)


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackPartition:
    """What a rollback did in one partition (HoodieRollbackPartitionMetadata)."""

    partition_path: str
    success_delete_files: tuple[str, ...]
    failed_delete_files: tuple[str, ...]
    rollback_log_files: Mapping[str, int]  # log file -> size, where a rollback command block was appended
    log_files_from_failed_commit: Mapping[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackMetadata:
    """The metadata of a completed rollback (HoodieRollbackMetadata)."""

    start_rollback_time: str
    commits_rollback: tuple[str, ...]
    instants_rollback: tuple[tuple[str, str], ...]  # (requested time, action), version >= 2 writers
    total_files_deleted: int
    partition_metadata: Mapping[str, RollbackPartition]
    version: int | None

    @property
    def rolled_back(self) -> tuple[str, ...]:
        """The requested times of the instants this rollback undid (HUDI-TIMELINE-020)."""
        return tuple(t for t, _ in self.instants_rollback) or self.commits_rollback


@dataclass(frozen=True, slots=True, kw_only=True)
class OtherMetadata:
    """A completed savepoint, restore, indexing or schema commit: the decoded record, not interpreted yet."""

    action: str
    encoding: str
    record: Mapping[str, Any]


# ----------------------------------------------------------------------------------------------
# Decoding
# ----------------------------------------------------------------------------------------------


def decode_avro_record(data: bytes, *, what: str, path: str | None = None, rule: str = "HUDI-TIMELINE-018") -> dict[str, Any]:
    """The one record of an Avro object container, decoded by its writer schema, every size bounded first."""
    import fastavro

    bounded.check_avro_container(data, what=what, path=path, rule=rule)
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # fastavro raises many kinds for damaged input; all mean the same here
        raise InvalidTable(f"{what} is not readable Avro: {type(exc).__name__}: {exc}", path=path, rule=rule) from None
    if len(records) != 1 or not isinstance(records[0], dict):
        raise InvalidTable(f"{what} must hold exactly one record, found {len(records)}", path=path, rule=rule)
    return records[0]


def _decode(data: bytes, *, what: str, path: str | None, json_allowed: bool) -> tuple[str, dict[str, Any]]:
    """(encoding, object) of a metadata file, sniffed by its first bytes."""
    if data.startswith(AVRO_MAGIC):
        return "avro", decode_avro_record(data, what=what, path=path)
    if not json_allowed:
        raise InvalidTable(f"{what} must be an Avro object container (starts {data[:8]!r})", path=path,
                           rule="HUDI-TIMELINE-017")
    limit = bounded.max_inflate()
    if len(data) > limit:
        raise InvalidTable(f"{what} is {len(data):,} bytes, over the {limit:,} allowed", path=path, rule="HUDI-TIMELINE-018",
                           hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")
    try:
        node = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidTable(f"{what} is neither Avro nor JSON: {exc}", path=path, rule="HUDI-TIMELINE-018") from None
    if not isinstance(node, dict):
        raise InvalidTable(f"{what} must be a JSON object", path=path, rule="HUDI-COMMIT-001")
    return "json", node


class _Fields:
    """Typed access to one decoded record, with errors naming the key, the file and the rule."""

    def __init__(self, node: Mapping[str, Any], what: str, path: str | None, rule: str) -> None:
        self.node, self.what, self.path, self.rule = node, what, path, rule

    def bad(self, key: str, want: str) -> InvalidTable:
        return InvalidTable(f"{self.what} {key!r} must be {want}, got {str(self.node.get(key))[:100]}", path=self.path,
                            rule=self.rule)

    def text(self, key: str, *, required: bool = False) -> str | None:
        v = self.node.get(key)
        if v is None:
            if required:
                raise InvalidTable(f"{self.what} lacks {key!r}", path=self.path, rule=self.rule)
            return None
        if not isinstance(v, str):
            raise self.bad(key, "a string")
        return v

    def long(self, key: str, default: int | None = 0) -> int | None:
        v = self.node.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int) or not -(1 << 63) <= v < (1 << 63):
            raise self.bad(key, "an integer")
        return v

    def flag(self, key: str) -> bool:
        v = self.node.get(key)
        if v is None:
            return False
        if not isinstance(v, bool):
            raise self.bad(key, "a boolean")
        return v

    def texts(self, key: str) -> tuple[str, ...]:
        v = self.node.get(key)
        if v is None:
            return ()
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.bad(key, "a list of strings")
        return tuple(v)

    def mapping(self, key: str) -> Mapping[str, Any]:
        v = self.node.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
            raise self.bad(key, "a map")
        return v

    def sizes(self, key: str) -> Mapping[str, int]:
        v = self.mapping(key)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in v.values()):
            raise self.bad(key, "a map of file names to sizes")
        return MappingProxyType(dict(v))


def _write_stat(node: Any, partition: str, what: str, path: str | None) -> WriteStat:
    if not isinstance(node, dict):
        raise InvalidTable(f"{what}: a write stat of partition {partition!r} is not an object", path=path,
                           rule="HUDI-COMMIT-002")
    f = _Fields(node, f"{what} write stat", path, "HUDI-COMMIT-002")
    stat_path = f.text(PATH)
    if stat_path:
        try:
            normalize_relative(stat_path)
        except InvalidTable:
            raise InvalidTable(f"{what}: write stat path {stat_path[:200]!r} is not inside the table", path=path,
                               rule="HUDI-COMMIT-002", hint="write stat paths are relative to the table root") from None
    prev = f.text(PREV_COMMIT)
    return WriteStat(
        file_id=f.text(FILE_ID, required=True) or "",
        path=stat_path,
        prev_commit=None if prev in (None, NULL_COMMIT) else prev,
        partition_path=f.text(PARTITION_PATH),
        num_writes=f.long(NUM_WRITES) or 0,
        num_deletes=f.long(NUM_DELETES) or 0,
        num_update_writes=f.long(NUM_UPDATE_WRITES) or 0,
        num_inserts=f.long(NUM_INSERTS) or 0,
        total_write_bytes=f.long(TOTAL_WRITE_BYTES) or 0,
        total_write_errors=f.long(TOTAL_WRITE_ERRORS) or 0,
        file_size_in_bytes=f.long(FILE_SIZE, None),
        base_file=f.text(BASE_FILE) or None,
        log_files=f.texts(LOG_FILES),
        log_version=f.long(LOG_VERSION, None),
        prev_base_file=f.text(PREV_BASE_FILE) or None,
        fields=MappingProxyType(dict(node)),
    )


def commit_metadata_from_record(node: Mapping[str, Any], encoding: str, *, what: str = "commit metadata",
                                path: str | None = None) -> CommitMetadata:
    """CommitMetadata of a decoded JSON object or Avro record (the keys are the same in both)."""
    f = _Fields(node, what, path, "HUDI-COMMIT-001")
    stats: dict[str, tuple[WriteStat, ...]] = {}
    for partition, items in f.mapping(PARTITION_TO_WRITE_STATS).items():
        if not isinstance(items, list):
            raise f.bad(PARTITION_TO_WRITE_STATS, "a map of partition paths to lists of write stats")
        stats[partition] = tuple(_write_stat(i, partition, what, path) for i in items)
    replaced: dict[str, tuple[str, ...]] = {}
    for partition, ids in f.mapping(PARTITION_TO_REPLACE_FILE_IDS).items():
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise f.bad(PARTITION_TO_REPLACE_FILE_IDS, "a map of partition paths to lists of file ids")
        replaced[partition] = tuple(ids)
    extra = f.mapping(EXTRA_METADATA)
    if not all(isinstance(v, str) or v is None for v in extra.values()):
        raise f.bad(EXTRA_METADATA, "a map of strings")
    version = node.get(VERSION)
    return CommitMetadata(
        encoding=encoding,
        partition_to_write_stats=MappingProxyType(stats),
        partition_to_replace_file_ids=MappingProxyType(replaced),
        compacted=f.flag(COMPACTED),
        extra_metadata=MappingProxyType({k: v for k, v in extra.items() if v is not None}),
        operation_type=f.text(OPERATION_TYPE),
        version=version if isinstance(version, int) and not isinstance(version, bool) else None,
    )


def parse_commit_metadata(data: bytes, *, path: str | None = None, what: str = "commit metadata") -> CommitMetadata:
    """The metadata of a completed commit, delta commit or replace commit, JSON (v6) or Avro (v8+)."""
    if not data.strip():
        return CommitMetadata(encoding="empty", partition_to_write_stats=MappingProxyType({}),
                              partition_to_replace_file_ids=MappingProxyType({}), compacted=False,
                              extra_metadata=MappingProxyType({}), operation_type=None, version=None)
    encoding, node = _decode(data, what=what, path=path, json_allowed=True)
    return commit_metadata_from_record(node, encoding, what=what, path=path)


def parse_clean_metadata(data: bytes, *, path: str | None = None) -> CleanMetadata:
    """The metadata of a completed clean (Avro in every table version)."""
    _, node = _decode(data, what="clean metadata", path=path, json_allowed=False)
    return clean_metadata_from_record(node, path=path)


def clean_metadata_from_record(node: Mapping[str, Any], *, path: str | None = None) -> CleanMetadata:
    """CleanMetadata of a decoded HoodieCleanMetadata record."""
    f = _Fields(node, "clean metadata", path, "HUDI-TIMELINE-017")
    parts: dict[str, CleanPartition] = {}
    for key, value in f.mapping("partitionMetadata").items():
        if not isinstance(value, dict):
            raise f.bad("partitionMetadata", "a map of partition records")
        p = _Fields(value, "clean partition metadata", path, "HUDI-TIMELINE-017")
        parts[key] = CleanPartition(partition_path=p.text("partitionPath") or key, policy=p.text("policy"),
                                    delete_path_patterns=p.texts("deletePathPatterns"),
                                    success_delete_files=p.texts("successDeleteFiles"),
                                    failed_delete_files=p.texts("failedDeleteFiles"),
                                    is_partition_deleted=p.flag("isPartitionDeleted"))
    version = node.get(VERSION)
    return CleanMetadata(start_clean_time=f.text("startCleanTime", required=True) or "",
                         earliest_commit_to_retain=f.text("earliestCommitToRetain") or None,
                         last_completed_commit_timestamp=f.text("lastCompletedCommitTimestamp") or None,
                         total_files_deleted=f.long("totalFilesDeleted") or 0,
                         partition_metadata=MappingProxyType(parts),
                         version=version if isinstance(version, int) and not isinstance(version, bool) else None)


def parse_rollback_metadata(data: bytes, *, path: str | None = None) -> RollbackMetadata:
    """The metadata of a completed rollback (Avro in every table version)."""
    _, node = _decode(data, what="rollback metadata", path=path, json_allowed=False)
    return rollback_metadata_from_record(node, path=path)


def rollback_metadata_from_record(node: Mapping[str, Any], *, path: str | None = None) -> RollbackMetadata:
    """RollbackMetadata of a decoded HoodieRollbackMetadata record."""
    f = _Fields(node, "rollback metadata", path, "HUDI-TIMELINE-017")
    parts: dict[str, RollbackPartition] = {}
    for key, value in f.mapping("partitionMetadata").items():
        if not isinstance(value, dict):
            raise f.bad("partitionMetadata", "a map of partition records")
        p = _Fields(value, "rollback partition metadata", path, "HUDI-TIMELINE-017")
        parts[key] = RollbackPartition(partition_path=p.text("partitionPath") or key,
                                       success_delete_files=p.texts("successDeleteFiles"),
                                       failed_delete_files=p.texts("failedDeleteFiles"),
                                       rollback_log_files=p.sizes("rollbackLogFiles"),
                                       log_files_from_failed_commit=p.sizes("logFilesFromFailedCommit"))
    infos = node.get("instantsRollback") or []
    if not isinstance(infos, list):
        raise f.bad("instantsRollback", "a list of instant records")
    instants = []
    for info in infos:
        i = _Fields(info if isinstance(info, dict) else {}, "rolled-back instant", path, "HUDI-TIMELINE-017")
        instants.append((i.text("commitTime", required=True) or "", i.text("action", required=True) or ""))
    version = node.get(VERSION)
    return RollbackMetadata(start_rollback_time=f.text("startRollbackTime", required=True) or "",
                            commits_rollback=f.texts("commitsRollback"), instants_rollback=tuple(instants),
                            total_files_deleted=f.long("totalFilesDeleted") or 0,
                            partition_metadata=MappingProxyType(parts),
                            version=version if isinstance(version, int) and not isinstance(version, bool) else None)


def parse_other_metadata(data: bytes, action: str, *, path: str | None = None) -> OtherMetadata:
    """The decoded record of a completed savepoint, restore, indexing or schema commit."""
    encoding, node = _decode(data, what=f"{action} metadata", path=path, json_allowed=action == T.SCHEMA_COMMIT)
    return OtherMetadata(action=action, encoding=encoding, record=MappingProxyType(node))


Metadata = CommitMetadata | CleanMetadata | RollbackMetadata | OtherMetadata

# The Avro record a requested file carries (HUDI-TIMELINE-016); commit and delta commit requests may be empty.
PLAN_RECORDS: Mapping[str, str] = MappingProxyType({
    T.CLEAN: "HoodieCleanerPlan", T.COMPACTION: "HoodieCompactionPlan", T.LOG_COMPACTION: "HoodieCompactionPlan",
    T.REPLACE_COMMIT: "HoodieRequestedReplaceMetadata", T.CLUSTERING: "HoodieRequestedReplaceMetadata",
    T.ROLLBACK: "HoodieRollbackPlan", T.RESTORE: "HoodieRestorePlan", T.INDEXING: "HoodieIndexPlan",
})


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What a requested or inflight file holds: a decoded plan, in-progress commit metadata, or nothing."""

    action: str
    state: str
    record: Mapping[str, Any] | None = None  # an Avro plan (requested) or other Avro record
    commit: CommitMetadata | None = None  # the inflight commit metadata of commit kinds


def parse_pending(data: bytes, action: str, state: str, *, path: str | None = None) -> Plan:
    """The content of a requested or inflight file (HUDI-TIMELINE-016).

    Empty files are common (every ``.commit.requested`` and ``.deltacommit.requested``, and most
    inflight files of clean, rollback, compaction and clustering). An inflight commit, delta commit
    or replace commit holds commit metadata (JSON in v6, Avro from v8); a non-empty requested file
    holds the action's Avro plan, and a plan for a commit kind other than replacecommit is invalid.
    """
    if state not in (T.REQUESTED, T.INFLIGHT):
        raise ValueError(f"{state} is not a pending state")
    if not data:
        return Plan(action=action, state=state)
    commit_kinds = (T.COMMIT, T.DELTA_COMMIT, T.REPLACE_COMMIT)
    if state == T.INFLIGHT and action in commit_kinds and not data.startswith(AVRO_MAGIC):
        return Plan(action=action, state=state, commit=parse_commit_metadata(data, path=path, what="inflight commit metadata"))
    if not data.startswith(AVRO_MAGIC):
        raise InvalidTable(f"{state.lower()} {action} file must be empty or an Avro object container (starts {data[:8]!r})",
                           path=path, rule="HUDI-TIMELINE-016")
    record = decode_avro_record(data, what=f"{state.lower()} {action} file", path=path, rule="HUDI-TIMELINE-016")
    if state == T.INFLIGHT and action in commit_kinds:
        return Plan(action=action, state=state, commit=commit_metadata_from_record(record, "avro", path=path))
    if state == T.REQUESTED and action not in PLAN_RECORDS:
        raise InvalidTable(f"a requested {action} carries no plan, yet this file holds an Avro record", path=path,
                           rule="HUDI-TIMELINE-016")
    return Plan(action=action, state=state, record=MappingProxyType(record))


def read_pending(storage: Storage, timeline: T.Timeline, instant: T.Instant) -> Plan:
    """The content of one requested or inflight file of the active timeline."""
    if instant.is_completed or instant.file_name is None:
        raise ValueError(f"instant {instant.requested_time} is not a pending file of the active timeline")
    rel = f"{timeline.directory}/{instant.file_name}" if timeline.directory else instant.file_name
    return parse_pending(storage.read(rel), instant.action, instant.state, path=storage.uri(rel))

# Completed action -> parser (a completed compaction is named "commit", so it lands on the first row).
PARSERS: Mapping[str, Callable[..., Metadata]] = MappingProxyType({
    T.COMMIT: parse_commit_metadata,
    T.DELTA_COMMIT: parse_commit_metadata,
    T.REPLACE_COMMIT: lambda data, path=None: parse_commit_metadata(data, path=path, what="replace commit metadata"),
    T.CLEAN: parse_clean_metadata,
    T.ROLLBACK: parse_rollback_metadata,
    T.SAVEPOINT: lambda data, path=None: parse_other_metadata(data, T.SAVEPOINT, path=path),
    T.RESTORE: lambda data, path=None: parse_other_metadata(data, T.RESTORE, path=path),
    T.INDEXING: lambda data, path=None: parse_other_metadata(data, T.INDEXING, path=path),
    T.SCHEMA_COMMIT: lambda data, path=None: parse_other_metadata(data, T.SCHEMA_COMMIT, path=path),
})


def parse_instant_metadata(data: bytes, action: str, *, path: str | None = None) -> Metadata:
    """The metadata of a completed instant of ``action``, by the dispatch table ``PARSERS``."""
    parser = PARSERS.get(action)
    if parser is None:
        raise Unsupported(f"no metadata parser for completed action {action!r}", feature=f"hudi-action:{action}",
                          path=path, rule="HUDI-TIMELINE-017")
    return parser(data, path=path)


def read_instant_metadata(storage: Storage, timeline: T.Timeline, instant: T.Instant) -> Metadata:
    """The metadata of a completed instant of the active timeline."""
    if not instant.is_completed or instant.file_name is None:
        raise ValueError(f"instant {instant.requested_time} is not a completed file of the active timeline")
    rel = f"{timeline.directory}/{instant.file_name}" if timeline.directory else instant.file_name
    return parse_instant_metadata(storage.read(rel), instant.action, path=storage.uri(rel))


def read_archived_metadata(row: T.ArchivedInstant) -> Metadata | None:
    """The metadata an LSM history row carries (its ``metadata`` bytes), None when it has none."""
    if row.metadata is None:
        return None
    return parse_instant_metadata(row.metadata, row.action)


def archived_v1_metadata(entry: T.ArchivedEntryV1) -> Metadata | None:
    """The metadata a completed v6 archive entry carries (already decoded Avro), None for other entries."""
    node = entry.metadata_record
    if node is None:
        return None
    where = f"{entry.source} ({entry.requested_time} {entry.action})"
    if entry.action in (T.COMMIT, T.DELTA_COMMIT, T.REPLACE_COMMIT):
        return commit_metadata_from_record(node, "avro", what="archived commit metadata", path=where)
    if entry.action == T.CLEAN:
        return clean_metadata_from_record(node, path=where)
    if entry.action == T.ROLLBACK:
        return rollback_metadata_from_record(node, path=where)
    return OtherMetadata(action=entry.action, encoding="avro", record=MappingProxyType(dict(node)))


def latest_schema(storage: Storage, timeline: T.Timeline) -> str | None:
    """The Avro schema recorded by the latest completed write that recorded one (HUDI-COMMIT-003)."""
    for inst in reversed(timeline.completed_in_commit_order()):
        if inst.action not in (T.COMMIT, T.DELTA_COMMIT, T.REPLACE_COMMIT):
            continue
        meta = read_instant_metadata(storage, timeline, inst)
        if isinstance(meta, CommitMetadata) and meta.schema:
            return meta.schema
    return None


__all__ = ["WriteStat", "CommitMetadata", "CleanPartition", "CleanMetadata", "RollbackPartition", "RollbackMetadata",
           "OtherMetadata", "decode_avro_record", "commit_metadata_from_record", "parse_commit_metadata",
           "parse_clean_metadata", "parse_rollback_metadata", "parse_other_metadata", "parse_instant_metadata",
           "read_instant_metadata", "read_archived_metadata", "archived_v1_metadata",
           "clean_metadata_from_record", "rollback_metadata_from_record", "Plan", "parse_pending", "read_pending", "latest_schema", "PARSERS", "OPERATION_TYPES"]
