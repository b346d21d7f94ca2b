"""Manifest (spec: Manifest; Java ManifestFileMeta, ManifestEntry, DataFileMeta, IndexManifestEntry, FileEntry).

Three Avro files live in ``manifest/``: manifest lists (``ManifestFileMeta`` records,
``_VERSION`` 2), data and changelog manifests (``ManifestEntry`` with a nested ``DataFileMeta``
``_FILE``, ``_VERSION`` 2) and index manifests (``IndexManifestEntry``, ``_VERSION`` 1). Each file
is decoded with its own writer schema, so files of every release read: fields were only ever
appended, nullable, to the records (manifest list ``_MIN/_MAX_BUCKET``/``_LEVEL`` 1.1,
``_MIN/_MAX_ROW_ID`` 1.4, ``_TOTAL_BUCKETS`` and ``_EXTRA_FILES`` after 1.4; ``_FILE``
``_DELETE_ROW_COUNT``/``_EMBEDDED_FILE_INDEX`` 0.8, ``_FILE_SOURCE`` 0.9, ``_VALUE_STATS_COLS``/
``_EXTERNAL_PATH`` 1.0, ``_FIRST_ROW_ID``/``_WRITE_COLS`` 1.3, ``_WRITE_COLS_SEQUENCES`` 2.1;
index ``_CARDINALITY`` 1.0, ``_GLOBAL_INDEX`` 1.4), and a field a file lacks reads as null. The
``_VERSION`` is a permanent format identifier, not a counter: any other value is a format this
reader does not know (``Unsupported``; 1 in a data manifest or list is the pre-0.5 format Java
also refuses). Data manifests keep Java's fixed top level ``_VERSION, _KIND, _PARTITION, _BUCKET,
_TOTAL_BUCKETS, _FILE`` (``ManifestAvroReader.validateTopLevelFields``).

BinaryRow-encoded values (partitions, min/max keys, stats rows) stay raw bytes here; decoding
them needs the schema and is ``binary_row``'s job. Timestamps stay the long Avro wrote (the
writer's wall clock in milliseconds), not a datetime a time zone would shift.

Replay (``live_files``): base then delta manifest lists, each manifest in list order, entries in
file order, merged by file identity (``FileEntry.Identifier``: partition, bucket, level, file
name, extra files, embedded index, external path). A second ADD of a live identity is invalid
(PAIMON-MANIFEST-012); a DELETE whose ADD is in no manifest of the snapshot is invalid too, since
base + delta is the table's whole history (PAIMON-MANIFEST-011). An identity deleted and added
again is live, as the spec says ("the last version should be read"); Java's planner
(``AbstractFileStoreScan.readAndMergeFileEntries``) and pypaimon drop any ADD whose identity is
deleted anywhere, assuming names are never reused (the tests pin that). Index manifests are complete
lists, not deltas (PAIMON-SNAP-011), replayed the same way per (partition, bucket, type, name).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import fastavro

from reference_impl.common import bounded
from reference_impl.common.gcpause import gc_paused
from reference_impl.common.jsontext import loads
from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon.snapshot import Snapshot
from reference_impl.storage import Storage

VERSION_FIELD = "_VERSION"
MANIFEST_LIST_VERSION = 2
MANIFEST_VERSION = 2
INDEX_MANIFEST_VERSION = 1
ADD, DELETE = 0, 1  # FileKind
KINDS = {ADD: "ADD", DELETE: "DELETE"}
FILE_SOURCE_APPEND, FILE_SOURCE_COMPACT = 0, 1  # FileSource
HASH_INDEX = "HASH"
DELETION_VECTORS_INDEX = "DELETION_VECTORS"
MANIFEST_TOP_LEVEL = ("_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")
_TOP_LEVEL_TYPES = ("int", "int", "bytes", "int", "int", "record")
MIN_INT, MAX_INT = -(1 << 31), (1 << 31) - 1
MIN_LONG, MAX_LONG = -(1 << 63), (1 << 63) - 1


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleStats:
    """Min/max rows (BinaryRow bytes) and per-column null counts (None: unknown; the list may be absent)."""

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestFileMeta:
    """One manifest-list record: a manifest file and what it holds."""

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None
    total_buckets: int | None = None
    extra_files: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFileMeta:
    """The ``_FILE`` record: a data or changelog file."""

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...]
    creation_time: int | None = None  # milliseconds, the writer's wall clock (TIMESTAMP(3))
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None  # FILE_SOURCE_APPEND / FILE_SOURCE_COMPACT
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None
    write_cols_sequences: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestEntry:
    """An ADD or DELETE of a file in a partition (BinaryRow bytes) and bucket."""

    kind: int
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    @property
    def identifier(self) -> tuple:
        """Java ``FileEntry.Identifier``: what makes two entries name the same file."""
        f = self.file
        return (self.partition, self.bucket, f.level, f.file_name, f.extra_files, f.embedded_index, f.external_path)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletionVectorMeta:
    """Where one data file's deletion vector sits in a DV index file (``f0``, ``f1``, ``f2``, ``_CARDINALITY``)."""

    data_file_name: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobalIndexMeta:
    """A global index file's row range and indexed field."""

    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFileMeta:
    """A table-index file: HASH, DELETION_VECTORS or a global index type."""

    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: Mapping[str, DeletionVectorMeta] | None = None  # data file name -> range, in file order
    external_path: str | None = None
    global_index: GlobalIndexMeta | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexManifestEntry:
    """An ADD or DELETE of an index file for a partition and bucket."""

    kind: int
    partition: bytes
    bucket: int
    index_file: IndexFileMeta

    @property
    def identifier(self) -> tuple:
        return (self.partition, self.bucket, self.index_file.index_type, self.index_file.file_name)


# ---------------------------------------------------------------------------------------------
# Avro


def _strip_logical(node: Any) -> Any:
    """The schema without logical types: a timestamp-millis stays the long it is on disk."""
    if isinstance(node, dict):
        return {k: _strip_logical(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [_strip_logical(v) for v in node]
    return node


def decode_avro(data: bytes, *, what: str, path: str | None, rule: str) -> tuple[dict, list[dict]]:
    """A Paimon Avro file's writer schema and records, decoded by that schema; InvalidTable on any damage.

    Every declared size is bounded before decoding (``bounded.check_avro_container``), and each
    block must decode to exactly its declared records: a count too low would drop entries.
    """
    if len(data) > bounded.max_inflate():
        raise InvalidTable(f"{what} is {len(data):,} bytes, more than the {bounded.max_inflate():,} allowed", path=path, rule=rule,
                           hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")
    try:
        bounded.check_avro_container(data, what=what, path=path, rule=rule, min_record_size=4)
        meta, _sync, _start = bounded.read_avro_header(data, what=what, path=path, rule=rule)
    except InvalidTable as exc:
        raise InvalidTable(f"{what} is not a readable Avro file: {exc.message}", path=path, rule=rule, hint=exc.hint) from None
    try:
        schema = loads(meta[b"avro.schema"].decode("utf-8"))
        # Decoded by the writer schema minus its logical types, record by record from each raw
        # block: fastavro applies the writer's logical types even under a reader schema.
        plain = fastavro.parse_schema(_strip_logical(schema))
        records: list[dict] = []
        for block in fastavro.block_reader(io.BytesIO(data)):
            raw = block.bytes_
            for _ in range(block.num_records):
                records.append(fastavro.schemaless_reader(raw, plain, None))
            left = len(raw.getbuffer()) - raw.tell()
            if left:
                raise ValueError(f"a block of {block.num_records} records has {left} bytes left over")
    except Exception as exc:  # noqa: BLE001 - fastavro raises many kinds on damaged input; all mean "not a valid file"
        raise InvalidTable(f"{what} is not a readable Avro file: {type(exc).__name__}: {str(exc)[:200]}", path=path, rule=rule) from None
    if not isinstance(schema, dict) or schema.get("type") != "record" or not isinstance(schema.get("fields"), list):
        raise InvalidTable(f"{what} schema is not an Avro record", path=path, rule=rule)
    return schema, records


class _Rec:
    """Typed access to one decoded Avro record; a value of the wrong type is the table's error, with its rule."""

    def __init__(self, rec: Any, what: str, path: str | None, rule: str) -> None:
        if not isinstance(rec, dict):
            raise InvalidTable(f"{what} is not a record", path=path, rule=rule)
        self.rec, self.what, self.path, self.rule = rec, what, path, rule

    def _get(self, name: str, required: bool, rule: str | None) -> Any:
        v = self.rec.get(name)
        if v is None and required:
            raise InvalidTable(f"{self.what} lacks {name}" if name not in self.rec else f"{self.what} {name} is null",
                               path=self.path, rule=rule or self.rule)
        return v

    def bad(self, name: str, want: str, rule: str | None) -> InvalidTable:
        return InvalidTable(f"{self.what} {name} must be {want}, got {self.rec.get(name)!r:.80}", path=self.path, rule=rule or self.rule)

    def int(self, name: str, *, required: bool = True, long: bool = False, rule: str | None = None) -> Any:
        v = self._get(name, required, rule)
        low, high = (MIN_LONG, MAX_LONG) if long else (MIN_INT, MAX_INT)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high):
            raise self.bad(name, "a long" if long else "an int", rule)
        return v

    def str(self, name: str, *, required: bool = True, rule: str | None = None) -> Any:
        v = self._get(name, required, rule)
        if v is not None and not isinstance(v, str):
            raise self.bad(name, "a string", rule)
        return v

    def bytes(self, name: str, *, required: bool = True, rule: str | None = None) -> Any:
        v = self._get(name, required, rule)
        if v is not None and not isinstance(v, bytes):
            raise self.bad(name, "bytes", rule)
        return v

    def strs(self, name: str, *, required: bool = True, rule: str | None = None) -> tuple[str, ...] | None:
        v = self._get(name, required, rule)
        if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise self.bad(name, "an array of strings", rule)
        return None if v is None else tuple(v)

    def ints(self, name: str, *, required: bool = True, long: bool = True, nullable_items: bool = False,
             rule: str | None = None) -> tuple | None:
        v = self._get(name, required, rule)
        low, high = (MIN_LONG, MAX_LONG) if long else (MIN_INT, MAX_INT)
        if v is not None and not (isinstance(v, list) and all(
                (x is None and nullable_items) or (isinstance(x, int) and not isinstance(x, bool) and low <= x <= high) for x in v)):
            raise self.bad(name, "an array of integers", rule)
        return None if v is None else tuple(v)

    def sub(self, name: str, *, required: bool = True, rule: str | None = None) -> "_Rec | None":
        v = self._get(name, required, rule)
        return None if v is None else _Rec(v, f"{self.what} {name}", self.path, rule or self.rule)


def _check_version(r: _Rec, expected: int, what: str, rule: str) -> None:
    v = r.int(VERSION_FIELD, rule=rule)
    if v != expected:
        legacy = " (the pre-0.5 format: Java asks to recreate the table)" if v == 1 and expected == 2 else ""
        raise Unsupported(f"{what} _VERSION {v} is not the format identifier {expected}{legacy}", feature=f"{what} version {v}",
                          path=r.path, rule=rule)


def _kind(r: _Rec, rule: str) -> int:
    k = r.int("_KIND", rule=rule)
    if k not in KINDS:
        raise InvalidTable(f"{r.what} _KIND {k} is neither ADD (0) nor DELETE (1)", path=r.path, rule=rule)
    return k


def _stats(r: _Rec, name: str, rule: str) -> SimpleStats:
    s = r.sub(name, rule=rule)
    return SimpleStats(min_values=s.bytes("_MIN_VALUES"), max_values=s.bytes("_MAX_VALUES"),
                       null_counts=s.ints("_NULL_COUNTS", required=False, nullable_items=True, rule="PAIMON-STATS-004"))


def _names(r: _Rec, name: str, what: str, rule: str, *, required: bool) -> tuple[str, ...] | None:
    """An array of bare file names (extra files live beside their owner)."""
    names = r.strs(name, required=required, rule=rule)
    for n in names or ():
        L.bare_name(n, what=what, rule=rule, path=r.path)
    return names


# ---------------------------------------------------------------------------------------------
# Decoding the three files


def read_manifest_list(data: bytes, *, path: str | None = None) -> list[ManifestFileMeta]:
    """The records of a manifest list, in order (the order is the replay order, PAIMON-MLIST-011)."""
    _schema, records = decode_avro(data, what="manifest list", path=path, rule="PAIMON-MLIST-001")
    out = []
    for i, rec in enumerate(records):
        r = _Rec(rec, f"manifest list record {i}", path, "PAIMON-MLIST-002")
        _check_version(r, MANIFEST_LIST_VERSION, "manifest list", "PAIMON-MLIST-003")
        out.append(ManifestFileMeta(
            file_name=L.bare_name(r.str("_FILE_NAME"), what="manifest file name", rule="PAIMON-MLIST-005", path=path),
            file_size=r.int("_FILE_SIZE", long=True), num_added_files=r.int("_NUM_ADDED_FILES", long=True),
            num_deleted_files=r.int("_NUM_DELETED_FILES", long=True),
            partition_stats=_stats(r, "_PARTITION_STATS", "PAIMON-MLIST-008"), schema_id=r.int("_SCHEMA_ID", long=True),
            min_bucket=r.int("_MIN_BUCKET", required=False, rule="PAIMON-MLIST-004"),
            max_bucket=r.int("_MAX_BUCKET", required=False, rule="PAIMON-MLIST-004"),
            min_level=r.int("_MIN_LEVEL", required=False, rule="PAIMON-MLIST-004"),
            max_level=r.int("_MAX_LEVEL", required=False, rule="PAIMON-MLIST-004"),
            min_row_id=r.int("_MIN_ROW_ID", required=False, long=True, rule="PAIMON-MLIST-004"),
            max_row_id=r.int("_MAX_ROW_ID", required=False, long=True, rule="PAIMON-MLIST-004"),
            total_buckets=r.int("_TOTAL_BUCKETS", required=False, rule="PAIMON-MLIST-013"),
            extra_files=_names(r, "_EXTRA_FILES", "manifest extra file", "PAIMON-MLIST-013", required=False)))
    return out


def _check_top_level(schema: dict, path: str | None) -> None:
    """Java's ManifestAvroReader.validateTopLevelFields: six fields, this order, these types, ``_FILE`` a plain record."""
    fields = schema["fields"]
    names = tuple(f.get("name") if isinstance(f, dict) else None for f in fields)
    if names != MANIFEST_TOP_LEVEL:
        raise InvalidTable(f"manifest top-level fields are {list(names)}, expected {list(MANIFEST_TOP_LEVEL)} in that order",
                           path=path, rule="PAIMON-MANIFEST-002")
    for f, want in zip(fields, _TOP_LEVEL_TYPES):
        t = f.get("type")
        got = t.get("type") if isinstance(t, dict) else t
        if got != want:
            rule = "PAIMON-MANIFEST-009" if f["name"] == "_FILE" and isinstance(t, list) else "PAIMON-MANIFEST-002"
            raise InvalidTable(f"manifest field {f['name']} has Avro type {json.dumps(t)[:80]}, expected {want}", path=path, rule=rule)


def _data_file(r: _Rec) -> DataFileMeta:
    source = r.int("_FILE_SOURCE", required=False, rule="PAIMON-MANIFEST-028")
    if source not in (None, FILE_SOURCE_APPEND, FILE_SOURCE_COMPACT):
        raise InvalidTable(f"{r.what} _FILE_SOURCE {source} is neither APPEND (0) nor COMPACT (1)", path=r.path, rule="PAIMON-MANIFEST-028")
    return DataFileMeta(
        file_name=L.bare_name(r.str("_FILE_NAME", rule="PAIMON-MANIFEST-014"), what="data file name", rule="PAIMON-MANIFEST-014", path=r.path),
        file_size=r.int("_FILE_SIZE", long=True, rule="PAIMON-MANIFEST-015"),
        row_count=r.int("_ROW_COUNT", long=True, rule="PAIMON-MANIFEST-016"),
        min_key=r.bytes("_MIN_KEY", rule="PAIMON-MANIFEST-017"), max_key=r.bytes("_MAX_KEY", rule="PAIMON-MANIFEST-017"),
        key_stats=_stats(r, "_KEY_STATS", "PAIMON-MANIFEST-018"), value_stats=_stats(r, "_VALUE_STATS", "PAIMON-MANIFEST-019"),
        min_sequence_number=r.int("_MIN_SEQUENCE_NUMBER", long=True, rule="PAIMON-MANIFEST-020"),
        max_sequence_number=r.int("_MAX_SEQUENCE_NUMBER", long=True, rule="PAIMON-MANIFEST-020"),
        schema_id=r.int("_SCHEMA_ID", long=True, rule="PAIMON-MANIFEST-021"),
        level=r.int("_LEVEL", rule="PAIMON-MANIFEST-022"),
        extra_files=_names(r, "_EXTRA_FILES", "extra file", "PAIMON-MANIFEST-023", required=True),
        creation_time=r.int("_CREATION_TIME", required=False, long=True, rule="PAIMON-MANIFEST-024"),
        delete_row_count=r.int("_DELETE_ROW_COUNT", required=False, long=True, rule="PAIMON-MANIFEST-025"),
        embedded_index=r.bytes("_EMBEDDED_FILE_INDEX", required=False, rule="PAIMON-MANIFEST-026"),
        file_source=source,
        value_stats_cols=r.strs("_VALUE_STATS_COLS", required=False, rule="PAIMON-MANIFEST-029"),
        external_path=r.str("_EXTERNAL_PATH", required=False, rule="PAIMON-MANIFEST-030"),
        first_row_id=r.int("_FIRST_ROW_ID", required=False, long=True, rule="PAIMON-MANIFEST-031"),
        write_cols=r.strs("_WRITE_COLS", required=False, rule="PAIMON-MANIFEST-032"),
        write_cols_sequences=r.ints("_WRITE_COLS_SEQUENCES", required=False, rule="PAIMON-MANIFEST-033"))


def read_manifest(data: bytes, *, path: str | None = None) -> list[ManifestEntry]:
    """The entries of a data or changelog manifest, in file order."""
    schema, records = decode_avro(data, what="manifest", path=path, rule="PAIMON-MANIFEST-001")
    _check_top_level(schema, path)
    out = []
    for i, rec in enumerate(records):
        r = _Rec(rec, f"manifest entry {i}", path, "PAIMON-MANIFEST-001")
        _check_version(r, MANIFEST_VERSION, "manifest", "PAIMON-MANIFEST-003")
        out.append(ManifestEntry(kind=_kind(r, "PAIMON-MANIFEST-005"), partition=r.bytes("_PARTITION", rule="PAIMON-MANIFEST-006"),
                                 bucket=r.int("_BUCKET", rule="PAIMON-MANIFEST-007"),
                                 total_buckets=r.int("_TOTAL_BUCKETS", rule="PAIMON-MANIFEST-008"),
                                 file=_data_file(r.sub("_FILE", rule="PAIMON-MANIFEST-009"))))
    return out


def _dv_ranges(r: _Rec) -> dict[str, DeletionVectorMeta] | None:
    raw = r._get("_DELETIONS_VECTORS_RANGES", False, "PAIMON-IDXMAN-004")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise r.bad("_DELETIONS_VECTORS_RANGES", "an array of records", "PAIMON-IDXMAN-004")
    out: dict[str, DeletionVectorMeta] = {}
    for i, item in enumerate(raw):
        d = _Rec(item, f"{r.what} deletion vector {i}", r.path, "PAIMON-IDXMAN-004")
        meta = DeletionVectorMeta(data_file_name=d.str("f0"), offset=d.int("f1"), length=d.int("f2"),
                                  cardinality=d.int("_CARDINALITY", required=False, long=True))
        if meta.offset < 0 or meta.length < 0:
            raise InvalidTable(f"{d.what} has a negative offset or length", path=r.path, rule="PAIMON-IDXMAN-004")
        if meta.data_file_name in out:
            raise InvalidTable(f"{r.what} lists two deletion vectors for {meta.data_file_name!r}", path=r.path, rule="PAIMON-IDXMAN-004")
        out[meta.data_file_name] = meta
    return out


def _global_index(r: _Rec) -> GlobalIndexMeta | None:
    g = r.sub("_GLOBAL_INDEX", required=False, rule="PAIMON-IDXMAN-006")
    if g is None:
        return None
    return GlobalIndexMeta(row_range_start=g.int("_ROW_RANGE_START", long=True), row_range_end=g.int("_ROW_RANGE_END", long=True),
                           index_field_id=g.int("_INDEX_FIELD_ID"),
                           extra_field_ids=g.ints("_EXTRA_FIELD_IDS", required=False, long=False),
                           index_meta=g.bytes("_INDEX_META", required=False), source_meta=g.bytes("_SOURCE_META", required=False))


def read_index_manifest(data: bytes, *, path: str | None = None) -> list[IndexManifestEntry]:
    """The entries of an index manifest, in file order."""
    _schema, records = decode_avro(data, what="index manifest", path=path, rule="PAIMON-IDXMAN-001")
    out = []
    for i, rec in enumerate(records):
        r = _Rec(rec, f"index manifest entry {i}", path, "PAIMON-IDXMAN-001")
        _check_version(r, INDEX_MANIFEST_VERSION, "index manifest", "PAIMON-IDXMAN-002")
        kind, partition, bucket = _kind(r, "PAIMON-IDXMAN-001"), r.bytes("_PARTITION"), r.int("_BUCKET")
        index_type = r.str("_INDEX_TYPE", rule="PAIMON-IDXMAN-003")
        ranges = _dv_ranges(r)
        if ranges is not None and index_type != DELETION_VECTORS_INDEX:
            raise InvalidTable(f"{r.what} of type {index_type} has deletion vector ranges", path=path, rule="PAIMON-IDXMAN-004")
        out.append(IndexManifestEntry(kind=kind, partition=partition, bucket=bucket, index_file=IndexFileMeta(
            index_type=index_type,
            file_name=L.bare_name(r.str("_FILE_NAME"), what="index file name", rule="PAIMON-LAYOUT-007", path=path),
            file_size=r.int("_FILE_SIZE", long=True), row_count=r.int("_ROW_COUNT", long=True, rule="PAIMON-IDXMAN-005"),
            dv_ranges=ranges, external_path=r.str("_EXTERNAL_PATH", required=False, rule="PAIMON-IDXMAN-002"),
            global_index=_global_index(r))))
    return out


# ---------------------------------------------------------------------------------------------
# Files of a table and replay


def _read_file(storage: Storage, name: str, *, what: str, rule: str) -> tuple[bytes, str]:
    rel = L.MAIN.manifest_path(name, what=what, rule=rule)
    try:
        return storage.read(rel), storage.uri(rel)
    except FileNotFoundError:
        raise InvalidTable(f"{what} {name} does not exist", path=storage.uri(rel), rule=rule) from None


def load_manifest_list(storage: Storage, name: str) -> list[ManifestFileMeta]:
    """``manifest/<name>`` as a manifest list."""
    data, uri = _read_file(storage, name, what="manifest list", rule="PAIMON-LAYOUT-004")
    return read_manifest_list(data, path=uri)


def load_manifest(storage: Storage, name: str) -> list[ManifestEntry]:
    """``manifest/<name>`` as a data or changelog manifest."""
    data, uri = _read_file(storage, name, what="manifest", rule="PAIMON-MLIST-005")
    return read_manifest(data, path=uri)


def load_index_manifest(storage: Storage, name: str) -> list[IndexManifestEntry]:
    """``manifest/<name>`` as an index manifest."""
    data, uri = _read_file(storage, name, what="index manifest", rule="PAIMON-LAYOUT-006")
    return read_index_manifest(data, path=uri)


def data_manifests(storage: Storage, snapshot: Snapshot) -> list[ManifestFileMeta]:
    """The manifests of a snapshot's base list, then its delta list: the replay order (PAIMON-SNAP-009)."""
    return load_manifest_list(storage, snapshot.base_manifest_list) + load_manifest_list(storage, snapshot.delta_manifest_list)


def merge_entries(entries: Iterable[ManifestEntry], state: dict | None = None) -> dict[tuple, ManifestEntry]:
    """Java ``FileEntry.mergeEntries``: apply entries in order by identity; a DELETE not yet matched is kept.

    A second ADD of a live identity raises (PAIMON-MANIFEST-012). The result maps identity to the
    surviving entry: ADDs still live, and DELETEs whose ADD this range did not contain.
    """
    state = {} if state is None else state
    for e in entries:
        ident = e.identifier
        if e.kind == ADD:
            if ident in state:
                raise InvalidTable(f"file {e.file.file_name} (bucket {e.bucket}, level {e.file.level}) is added while "
                                   f"already {'live' if state[ident].kind == ADD else 'deleted earlier in the range'}",
                                   rule="PAIMON-MANIFEST-012")
            state[ident] = e
        elif ident in state:
            del state[ident]
        else:
            state[ident] = e
    return state


def live_files(storage: Storage, snapshot: Snapshot) -> list[ManifestEntry]:
    """The ADD entries live in a snapshot, in the order they were added; InvalidTable for an inconsistent history."""
    state: dict[tuple, ManifestEntry] = {}
    with gc_paused():
        for meta in data_manifests(storage, snapshot):
            merge_entries(load_manifest(storage, meta.file_name), state)
    orphans = [e for e in state.values() if e.kind == DELETE]
    if orphans:
        names = ", ".join(e.file.file_name for e in orphans[:3])
        raise InvalidTable(f"snapshot {snapshot.id} deletes {len(orphans)} file(s) no manifest of it adds: {names}",
                           rule="PAIMON-MANIFEST-011", hint="base + delta manifest lists are the table's whole history")
    return list(state.values())


def delta_entries(storage: Storage, snapshot: Snapshot) -> list[ManifestEntry]:
    """The entries of the snapshot's delta manifest list only: what this commit changed."""
    return [e for meta in load_manifest_list(storage, snapshot.delta_manifest_list) for e in load_manifest(storage, meta.file_name)]


def changelog_files(storage: Storage, snapshot: Snapshot) -> list[ManifestEntry]:
    """The changelog files of a snapshot (same entry layout as data manifests, PAIMON-MANIFEST-013); empty without a changelog list."""
    if snapshot.changelog_manifest_list is None:
        return []
    return [e for meta in load_manifest_list(storage, snapshot.changelog_manifest_list) for e in load_manifest(storage, meta.file_name)]


def live_index_files(storage: Storage, snapshot: Snapshot) -> list[IndexManifestEntry]:
    """The index files live in a snapshot: its index manifest replayed by identity (PAIMON-IDXMAN-007)."""
    if snapshot.index_manifest is None:
        return []
    state: dict[tuple, IndexManifestEntry] = {}
    for e in load_index_manifest(storage, snapshot.index_manifest):
        ident = e.identifier
        if e.kind == ADD:
            if ident in state:
                raise InvalidTable(f"index file {e.index_file.file_name} is added twice", rule="PAIMON-IDXMAN-007")
            state[ident] = e
        elif ident in state:
            del state[ident]
        else:
            # The index manifest is the complete list, not a delta: nothing earlier can hold the ADD.
            raise InvalidTable(f"index manifest deletes index file {e.index_file.file_name}, which it does not add",
                               rule="PAIMON-IDXMAN-007")
    return list(state.values())


def deletion_vectors(index_entries: Iterable[IndexManifestEntry]) -> dict[tuple[bytes, int, str], tuple[IndexFileMeta, DeletionVectorMeta]]:
    """(partition, bucket, data file name) -> its DV index file and range; InvalidTable if two live DVs cover one file."""
    out: dict[tuple[bytes, int, str], tuple[IndexFileMeta, DeletionVectorMeta]] = {}
    for e in index_entries:
        if e.kind != ADD or e.index_file.index_type != DELETION_VECTORS_INDEX:
            continue
        for name, dv in (e.index_file.dv_ranges or {}).items():
            key = (e.partition, e.bucket, name)
            if key in out:
                raise InvalidTable(f"data file {name} has deletion vectors in both {out[key][0].file_name} and "
                                   f"{e.index_file.file_name}", rule="PAIMON-INDEX-008")
            out[key] = (e.index_file, dv)
    return out


# ---------------------------------------------------------------------------------------------
# Validation helpers


def check_manifest_counts(meta: ManifestFileMeta, entries: list[ManifestEntry], where: str = "") -> list[Violation]:
    """``_NUM_ADDED_FILES`` / ``_NUM_DELETED_FILES`` equal the ADD / DELETE entries of the manifest (PAIMON-MLIST-007)."""
    added = sum(1 for e in entries if e.kind == ADD)
    deleted = len(entries) - added
    if (added, deleted) != (meta.num_added_files, meta.num_deleted_files):
        return [Violation("PAIMON-MLIST-007", f"{meta.file_name} lists {meta.num_added_files} added / {meta.num_deleted_files} "
                          f"deleted files but holds {added} ADD / {deleted} DELETE entries", where)]
    return []


def check_index_manifest_kinds(entries: list[IndexManifestEntry], where: str = "") -> list[Violation]:
    """A snapshot's index manifest is the complete current list: Java writes only ADD entries and refuses
    to build on a file holding a DELETE (IndexManifestFileHandler.write) (PAIMON-SNAP-011)."""
    deletes = [e.index_file.file_name for e in entries if e.kind == DELETE]
    if deletes:
        return [Violation("PAIMON-SNAP-011", f"index manifest holds {len(deletes)} DELETE entries ({', '.join(deletes[:3])}); "
                          "it must list only the live index files", where)]
    return []


# ---------------------------------------------------------------------------------------------
# Writer schemas (Appendix A: what current Java and pypaimon write); older files lack trailing fields


def _opt(t: Any) -> Any:
    return ["null", t]


def _stats_schema(name: str) -> dict:
    return {"type": "record", "name": name, "fields": [
        {"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"},
        {"name": "_NULL_COUNTS", "type": _opt({"type": "array", "items": ["null", "long"]}), "default": None}]}


def _nullable(name: str, t: Any) -> dict:
    return {"name": name, "type": _opt(t), "default": None}


_STRINGS = {"type": "array", "items": "string"}
DATA_FILE_META_SCHEMA = {"type": "record", "name": "record__FILE", "fields": [
    {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"},
    {"name": "_MIN_KEY", "type": "bytes"}, {"name": "_MAX_KEY", "type": "bytes"},
    {"name": "_KEY_STATS", "type": _stats_schema("record__FILE__KEY_STATS")},
    {"name": "_VALUE_STATS", "type": _stats_schema("record__FILE__VALUE_STATS")},
    {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"}, {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
    {"name": "_SCHEMA_ID", "type": "long"}, {"name": "_LEVEL", "type": "int"}, {"name": "_EXTRA_FILES", "type": _STRINGS},
    _nullable("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}), _nullable("_DELETE_ROW_COUNT", "long"),
    _nullable("_EMBEDDED_FILE_INDEX", "bytes"), _nullable("_FILE_SOURCE", "int"), _nullable("_VALUE_STATS_COLS", _STRINGS),
    _nullable("_EXTERNAL_PATH", "string"), _nullable("_FIRST_ROW_ID", "long"), _nullable("_WRITE_COLS", _STRINGS),
    _nullable("_WRITE_COLS_SEQUENCES", {"type": "array", "items": "long"})]}
MANIFEST_ENTRY_SCHEMA = {"type": "record", "name": "record", "namespace": "org.apache.paimon.avro.generated", "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"}, {"name": "_TOTAL_BUCKETS", "type": "int"}, {"name": "_FILE", "type": DATA_FILE_META_SCHEMA}]}
MANIFEST_FILE_META_SCHEMA = {"type": "record", "name": "record", "namespace": "org.apache.paimon.avro.generated", "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_NUM_ADDED_FILES", "type": "long"}, {"name": "_NUM_DELETED_FILES", "type": "long"},
    {"name": "_PARTITION_STATS", "type": _stats_schema("record__PARTITION_STATS")}, {"name": "_SCHEMA_ID", "type": "long"},
    _nullable("_MIN_BUCKET", "int"), _nullable("_MAX_BUCKET", "int"), _nullable("_MIN_LEVEL", "int"), _nullable("_MAX_LEVEL", "int"),
    _nullable("_MIN_ROW_ID", "long"), _nullable("_MAX_ROW_ID", "long"), _nullable("_TOTAL_BUCKETS", "int"),
    _nullable("_EXTRA_FILES", _STRINGS)]}
INDEX_MANIFEST_ENTRY_SCHEMA = {"type": "record", "name": "record", "namespace": "org.apache.paimon.avro.generated", "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"}, {"name": "_INDEX_TYPE", "type": "string"}, {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"},
    _nullable("_DELETIONS_VECTORS_RANGES", {"type": "array", "items": {"type": "record", "name": "record__DELETIONS_VECTORS_RANGES", "fields": [
        {"name": "f0", "type": "string"}, {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"}, _nullable("_CARDINALITY", "long")]}}),
    _nullable("_EXTERNAL_PATH", "string"),
    _nullable("_GLOBAL_INDEX", {"type": "record", "name": "record__GLOBAL_INDEX", "fields": [
        {"name": "_ROW_RANGE_START", "type": "long"}, {"name": "_ROW_RANGE_END", "type": "long"},
        {"name": "_INDEX_FIELD_ID", "type": "int"}, _nullable("_EXTRA_FIELD_IDS", {"type": "array", "items": "int"}),
        _nullable("_INDEX_META", "bytes"), _nullable("_SOURCE_META", "bytes")]})]}


def encode_avro(schema: Mapping[str, Any], records: list[Mapping[str, Any]], *, codec: str = "null") -> bytes:
    """An Avro object container of ``records`` under ``schema`` (fixtures, and the writer later)."""
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(dict(schema)), list(records), codec=codec)
    return buf.getvalue()


__all__ = ["SimpleStats", "ManifestFileMeta", "DataFileMeta", "ManifestEntry", "DeletionVectorMeta", "GlobalIndexMeta",
           "IndexFileMeta", "IndexManifestEntry", "decode_avro", "read_manifest_list", "read_manifest", "read_index_manifest",
           "load_manifest_list", "load_manifest", "load_index_manifest", "data_manifests", "merge_entries", "live_files",
           "delta_entries", "changelog_files", "live_index_files", "deletion_vectors", "check_manifest_counts",
           "check_index_manifest_kinds", "encode_avro",
           "DATA_FILE_META_SCHEMA", "MANIFEST_ENTRY_SCHEMA", "MANIFEST_FILE_META_SCHEMA", "INDEX_MANIFEST_ENTRY_SCHEMA",
           "ADD", "DELETE", "HASH_INDEX", "DELETION_VECTORS_INDEX"]
