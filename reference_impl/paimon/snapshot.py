"""Snapshot (spec: Snapshot; Java Snapshot, HintFileUtils, SnapshotManager, Tag, TagManager, TimeTravelUtil).

A snapshot is ``snapshot/snapshot-N``, a JSON object with the camelCase keys of ``Snapshot.java``
(``version`` 3, ``uuid``, ``id``, ``schemaId``, the base/delta/changelog manifest lists and their
sizes, ``indexManifest``, ``commitUser``, ``writerVersion``, ``commitIdentifier``, ``commitKind``,
``timeMillis``, the record counts, ``watermark``, ``statistics``, ``properties``, ``nextRowId``,
``operation``). Nulls are omitted by writers and unknown keys ignored by readers (Java:
``@JsonInclude(NON_NULL)``, ``ignoreUnknown``), so the legacy ``logOffsets`` that the spec page
still lists is read as any unknown key. Snapshots of Paimon <= 0.3 lack the record counts and
those of the Table Store era (<= 0.2) lack ``version``: both read, as None.

``EARLIEST`` and ``LATEST`` are hints: missing, stale or garbage, they only save a listing. The
latest id is the hint N only when ``snapshot-N`` exists and ``snapshot-(N+1)`` does not (Java's
``findLatest`` checks only the second, and returns a hint that points past the last snapshot);
the earliest is the hint N only when ``snapshot-N`` exists and ``snapshot-(N-1)`` does not.
Otherwise the ``snapshot-*`` listing decides (PAIMON-SNAP-004).

A tag ``tag/tag-<name>`` is a snapshot plus ``tagCreateTime`` (Jackson's LocalDateTime array) and
``tagTimeRetained`` (Jackson's Duration, decimal seconds). A branch ``branch/branch-<name>/`` has
its own snapshots, schemas and tags (see ``layout``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any, Mapping

from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon.schema import id_ranges, load_json
from reference_impl.storage import Storage

# Snapshot keys (Snapshot.java FIELD_*), spelled once.
VERSION = "version"
UUID = "uuid"
ID = "id"
SCHEMA_ID = "schemaId"
BASE_MANIFEST_LIST = "baseManifestList"
BASE_MANIFEST_LIST_SIZE = "baseManifestListSize"
DELTA_MANIFEST_LIST = "deltaManifestList"
DELTA_MANIFEST_LIST_SIZE = "deltaManifestListSize"
CHANGELOG_MANIFEST_LIST = "changelogManifestList"
CHANGELOG_MANIFEST_LIST_SIZE = "changelogManifestListSize"
INDEX_MANIFEST = "indexManifest"
COMMIT_USER = "commitUser"
WRITER_VERSION = "writerVersion"
COMMIT_IDENTIFIER = "commitIdentifier"
COMMIT_KIND = "commitKind"
TIME_MILLIS = "timeMillis"
TOTAL_RECORD_COUNT = "totalRecordCount"
DELTA_RECORD_COUNT = "deltaRecordCount"
CHANGELOG_RECORD_COUNT = "changelogRecordCount"
WATERMARK = "watermark"
STATISTICS = "statistics"
PROPERTIES = "properties"
NEXT_ROW_ID = "nextRowId"
OPERATION = "operation"
KEYS = (VERSION, UUID, ID, SCHEMA_ID, BASE_MANIFEST_LIST, BASE_MANIFEST_LIST_SIZE, DELTA_MANIFEST_LIST,
        DELTA_MANIFEST_LIST_SIZE, CHANGELOG_MANIFEST_LIST, CHANGELOG_MANIFEST_LIST_SIZE, INDEX_MANIFEST, COMMIT_USER,
        WRITER_VERSION, COMMIT_IDENTIFIER, COMMIT_KIND, TIME_MILLIS, TOTAL_RECORD_COUNT, DELTA_RECORD_COUNT,
        CHANGELOG_RECORD_COUNT, WATERMARK, STATISTICS, PROPERTIES, NEXT_ROW_ID, OPERATION)
# Tag keys (Tag.java).
TAG_CREATE_TIME = "tagCreateTime"
TAG_TIME_RETAINED = "tagTimeRetained"

CURRENT_VERSION = 3
FIRST_SNAPSHOT_ID = 1
COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE", "ANALYZE")
OPERATIONS = ("WRITE", "OVERWRITE", "DELETE", "TRUNCATE", "UPDATE", "MERGE", "CREATE_TABLE_AS_SELECT",
              "REPLACE_TABLE_AS_SELECT", "CREATE_OR_REPLACE_TABLE_AS_SELECT")
MIN_LONG, MAX_LONG = -(1 << 63), (1 << 63) - 1
NO_WATERMARK = MIN_LONG  # the spec's "no watermark" (Flink's Long.MIN_VALUE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """One snapshot file. Optional keys a writer omitted are None."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: str
    time_millis: int
    version: int | None = CURRENT_VERSION  # None: Table Store <= 0.2
    uuid: str | None = None
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    writer_version: str | None = None
    total_record_count: int | None = None
    delta_record_count: int | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: Mapping[str, str] | None = field(default=None, hash=False)
    next_row_id: int | None = None
    operation: str | None = None  # kept as written; an unknown value is a validation finding, not a read error

    @property
    def effective_watermark(self) -> int | None:
        """The watermark, None when absent or Long.MIN_VALUE (PAIMON-SNAP-014)."""
        return None if self.watermark in (None, NO_WATERMARK) else self.watermark


@dataclass(frozen=True, slots=True, kw_only=True)
class Tag(Snapshot):
    """A tag file: the tagged snapshot plus when it was tagged and how long it is kept."""

    name: str = ""
    tag_create_time: dt.datetime | None = None  # a LocalDateTime: wall clock, no zone
    tag_time_retained: dt.timedelta | None = None


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------


class _Reader:
    """Typed access to the keys of one JSON object, with errors naming key, file and rule."""

    def __init__(self, node: Mapping[str, Any], what: str, path: str | None, rule: str) -> None:
        self.node, self.what, self.path, self.rule = node, what, path, rule

    def bad(self, key: str, want: str, rule: str | None = None) -> InvalidTable:
        return InvalidTable(f"{self.what} {key!r} must be {want}, got {self.node.get(key)!r:.100}", path=self.path, rule=rule or self.rule)

    def long(self, key: str, *, required: bool, low: int = MIN_LONG, rule: str | None = None) -> int | None:
        v = self.node.get(key)
        if v is None:
            if required:
                raise InvalidTable(f"{self.what} lacks {key!r}", path=self.path, rule=rule or self.rule)
            return None
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_LONG:
            raise self.bad(key, f"an integer in [{low}, {MAX_LONG}]", rule)
        return v

    def text(self, key: str, *, required: bool, rule: str | None = None) -> str | None:
        v = self.node.get(key)
        if v is None:
            if required:
                raise InvalidTable(f"{self.what} lacks {key!r}", path=self.path, rule=rule or self.rule)
            return None
        if not isinstance(v, str):
            raise self.bad(key, "a string", rule)
        return v


def _snapshot_fields(node: Mapping[str, Any], what: str, path: str | None) -> dict[str, Any]:
    r = _Reader(node, what, path, "PAIMON-SNAP-005")
    version = r.long(VERSION, required=False, low=1, rule="PAIMON-SNAP-006")
    if version is not None and version > CURRENT_VERSION:
        raise Unsupported(f"{what} version {version} is newer than {CURRENT_VERSION}", feature=f"snapshot version {version}",
                          path=path, rule="PAIMON-SNAP-006")
    kind = r.text(COMMIT_KIND, required=True, rule="PAIMON-SNAP-012")
    if kind not in COMMIT_KINDS:
        raise InvalidTable(f"{what} commitKind {kind!r} is not one of {', '.join(COMMIT_KINDS)}", path=path, rule="PAIMON-SNAP-012")
    props = node.get(PROPERTIES)
    if props is not None and not (isinstance(props, Mapping) and all(isinstance(v, str) for v in props.values())):
        raise r.bad(PROPERTIES, "an object of strings")
    return dict(
        version=version, uuid=r.text(UUID, required=False, rule="PAIMON-SNAP-020"),
        id=r.long(ID, required=True, low=0, rule="PAIMON-SNAP-007"),
        schema_id=r.long(SCHEMA_ID, required=True, low=0, rule="PAIMON-SNAP-008"),
        base_manifest_list=r.text(BASE_MANIFEST_LIST, required=True, rule="PAIMON-SNAP-009"),
        base_manifest_list_size=r.long(BASE_MANIFEST_LIST_SIZE, required=False, low=0, rule="PAIMON-SNAP-019"),
        delta_manifest_list=r.text(DELTA_MANIFEST_LIST, required=True, rule="PAIMON-SNAP-009"),
        delta_manifest_list_size=r.long(DELTA_MANIFEST_LIST_SIZE, required=False, low=0, rule="PAIMON-SNAP-019"),
        changelog_manifest_list=r.text(CHANGELOG_MANIFEST_LIST, required=False, rule="PAIMON-SNAP-010"),
        changelog_manifest_list_size=r.long(CHANGELOG_MANIFEST_LIST_SIZE, required=False, low=0, rule="PAIMON-SNAP-019"),
        index_manifest=r.text(INDEX_MANIFEST, required=False, rule="PAIMON-SNAP-011"),
        commit_user=r.text(COMMIT_USER, required=True, rule="PAIMON-SNAP-017"),
        writer_version=r.text(WRITER_VERSION, required=False),
        commit_identifier=r.long(COMMIT_IDENTIFIER, required=True, rule="PAIMON-SNAP-016"),
        commit_kind=kind, time_millis=r.long(TIME_MILLIS, required=True),
        total_record_count=r.long(TOTAL_RECORD_COUNT, required=False, rule="PAIMON-SNAP-015"),
        delta_record_count=r.long(DELTA_RECORD_COUNT, required=False, rule="PAIMON-SNAP-015"),
        changelog_record_count=r.long(CHANGELOG_RECORD_COUNT, required=False),
        watermark=r.long(WATERMARK, required=False, rule="PAIMON-SNAP-014"),
        statistics=r.text(STATISTICS, required=False),
        properties=None if props is None else MappingProxyType(dict(props)),
        next_row_id=r.long(NEXT_ROW_ID, required=False, low=0, rule="PAIMON-SNAP-021"),
        operation=r.text(OPERATION, required=False, rule="PAIMON-SNAP-018"),
    )


def _object(data: bytes | str | Mapping[str, Any], what: str, path: str | None, rule: str) -> Mapping[str, Any]:
    node = data if isinstance(data, Mapping) else load_json(data, what, path, rule)
    if not isinstance(node, Mapping):
        raise InvalidTable(f"{what} must be a JSON object", path=path, rule=rule)
    return node


def parse_snapshot(data: bytes | str | Mapping[str, Any], *, path: str | None = None) -> Snapshot:
    """A snapshot file's content; InvalidTable naming the key and rule when it cannot be read."""
    return Snapshot(**_snapshot_fields(_object(data, "snapshot", path, "PAIMON-SNAP-005"), "snapshot", path))


def _local_datetime(v: Any, path: str | None) -> dt.datetime | None:
    """Jackson's LocalDateTime: ``[y, m, d, h, min(, s(, nanos))]`` (trailing zeros dropped) or ISO text."""
    if v is None:
        return None
    try:
        if isinstance(v, list) and 5 <= len(v) <= 7 and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            y, mo, d, h, mi, s, nanos = (list(v) + [0, 0])[:7]
            return dt.datetime(y, mo, d, h, mi, s, nanos // 1000)
        if isinstance(v, str):
            return dt.datetime.fromisoformat(v)
    except (ValueError, OverflowError):
        pass
    raise InvalidTable(f"tag tagCreateTime {v!r:.100} is not a LocalDateTime", path=path, rule="PAIMON-SNAP-005")


def _duration(v: Any, path: str | None) -> dt.timedelta | None:
    """Jackson's Duration: decimal seconds (``86400.000000000``)."""
    if v is None:
        return None
    try:
        if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
            return dt.timedelta(microseconds=int(Decimal(str(v) if isinstance(v, float) else v) * 1_000_000))
    except (InvalidOperation, OverflowError, ValueError):
        pass
    raise InvalidTable(f"tag tagTimeRetained {v!r:.100} is not a duration in seconds", path=path, rule="PAIMON-SNAP-005")


def parse_tag(data: bytes | str | Mapping[str, Any], *, name: str = "", path: str | None = None) -> Tag:
    """A tag file's content: a snapshot plus ``tagCreateTime`` and ``tagTimeRetained``."""
    # Durations are decimal seconds: JSON numbers read exactly, as Decimal.
    node = data if isinstance(data, Mapping) else load_json(data, "tag", path, "PAIMON-SNAP-005", parse_float=Decimal)
    if not isinstance(node, Mapping):
        raise InvalidTable("tag must be a JSON object", path=path, rule="PAIMON-SNAP-005")
    return Tag(**_snapshot_fields(node, f"tag {name!r}", path), name=name,
               tag_create_time=_local_datetime(node.get(TAG_CREATE_TIME), path),
               tag_time_retained=_duration(node.get(TAG_TIME_RETAINED), path))


def snapshot_to_dict(s: Snapshot) -> dict[str, Any]:
    """The JSON object Java writes: every key of ``KEYS`` whose value is not None."""
    values = {VERSION: s.version, UUID: s.uuid, ID: s.id, SCHEMA_ID: s.schema_id, BASE_MANIFEST_LIST: s.base_manifest_list,
              BASE_MANIFEST_LIST_SIZE: s.base_manifest_list_size, DELTA_MANIFEST_LIST: s.delta_manifest_list,
              DELTA_MANIFEST_LIST_SIZE: s.delta_manifest_list_size, CHANGELOG_MANIFEST_LIST: s.changelog_manifest_list,
              CHANGELOG_MANIFEST_LIST_SIZE: s.changelog_manifest_list_size, INDEX_MANIFEST: s.index_manifest,
              COMMIT_USER: s.commit_user, WRITER_VERSION: s.writer_version, COMMIT_IDENTIFIER: s.commit_identifier,
              COMMIT_KIND: s.commit_kind, TIME_MILLIS: s.time_millis, TOTAL_RECORD_COUNT: s.total_record_count,
              DELTA_RECORD_COUNT: s.delta_record_count, CHANGELOG_RECORD_COUNT: s.changelog_record_count,
              WATERMARK: s.watermark, STATISTICS: s.statistics,
              PROPERTIES: None if s.properties is None else dict(s.properties), NEXT_ROW_ID: s.next_row_id,
              OPERATION: s.operation}
    return {k: values[k] for k in KEYS if values[k] is not None}


# ----------------------------------------------------------------------------------------------
# Snapshot files: hints, listing, loading
# ----------------------------------------------------------------------------------------------


def snapshot_ids(storage: Storage, layout: L.Layout = L.MAIN) -> list[int]:
    """Ids of the ``snapshot-N`` files of a branch, ascending: the truth the hints stand in for."""
    return L.list_ids(storage, layout.snapshot_dir, L.SNAPSHOT_PREFIX)


def read_hint(storage: Storage, hint: str, layout: L.Layout = L.MAIN) -> int | None:
    """The id an EARLIEST/LATEST hint holds, None when it is missing or not a canonical positive id."""
    try:
        raw = storage.read(layout.hint_path(hint))
    except FileNotFoundError:
        return None
    if len(raw) > 64:
        return None
    n = L.parse_id(raw.decode("ascii", "replace").strip())
    return n if n is not None and n > 0 else None


def latest_snapshot_id(storage: Storage, layout: L.Layout = L.MAIN) -> int | None:
    """The latest snapshot id: the LATEST hint if ``snapshot-N`` exists and ``snapshot-(N+1)`` does not, else the listing."""
    n = read_hint(storage, L.LATEST, layout)
    if n is not None and n < L.MAX_LONG and storage.exists(layout.snapshot_path(n)) \
            and not storage.exists(layout.snapshot_path(n + 1)):
        return n
    ids = snapshot_ids(storage, layout)
    return ids[-1] if ids else None


def earliest_snapshot_id(storage: Storage, layout: L.Layout = L.MAIN) -> int | None:
    """The earliest snapshot id: the EARLIEST hint if ``snapshot-N`` exists and ``snapshot-(N-1)`` does not, else the listing."""
    n = read_hint(storage, L.EARLIEST, layout)
    if n is not None and storage.exists(layout.snapshot_path(n)) and not storage.exists(layout.snapshot_path(n - 1)):
        return n
    ids = snapshot_ids(storage, layout)
    return ids[0] if ids else None


def load_snapshot(storage: Storage, snapshot_id: int, layout: L.Layout = L.MAIN) -> Snapshot:
    """``snapshot-<id>`` of a branch; InvalidTable saying which ids exist when it does not."""
    rel = layout.snapshot_path(snapshot_id)
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        ids = snapshot_ids(storage, layout)
        where = f" on branch {layout.branch!r}" if not layout.is_main else ""
        if not ids:
            raise InvalidTable(f"snapshot {snapshot_id} does not exist: the table has no snapshots{where}", rule="PAIMON-SNAP-001") from None
        raise InvalidTable(f"snapshot {snapshot_id} does not exist{where}: the earliest available is {ids[0]}, the latest {ids[-1]}"
                           + (f" (snapshots: {id_ranges(ids)})" if ids[-1] - ids[0] + 1 != len(ids) else ""),
                           path=storage.uri(rel), rule="PAIMON-SNAP-001", hint="it was expired or never committed") from None
    s = parse_snapshot(data, path=storage.uri(rel))
    if s.id != snapshot_id:
        raise InvalidTable(f"snapshot file snapshot-{snapshot_id} holds snapshot id {s.id}", path=storage.uri(rel), rule="PAIMON-SNAP-007")
    return s


def latest_snapshot(storage: Storage, layout: L.Layout = L.MAIN) -> Snapshot | None:
    """The latest snapshot of a branch, None for a table without one."""
    n = latest_snapshot_id(storage, layout)
    return None if n is None else load_snapshot(storage, n, layout)


def earliest_snapshot(storage: Storage, layout: L.Layout = L.MAIN) -> Snapshot | None:
    """The earliest snapshot still kept, None for a table without one."""
    n = earliest_snapshot_id(storage, layout)
    return None if n is None else load_snapshot(storage, n, layout)


def list_snapshots(storage: Storage, layout: L.Layout = L.MAIN) -> list[Snapshot]:
    """Every snapshot of a branch, by ascending id."""
    return [load_snapshot(storage, i, layout) for i in snapshot_ids(storage, layout)]


def tag_names(storage: Storage, layout: L.Layout = L.MAIN) -> list[str]:
    """Names of a branch's tags (files ``tag/tag-<name>``), sorted."""
    return L.list_suffixes(storage, layout.tag_dir, L.TAG_PREFIX)


def load_tag(storage: Storage, name: str, layout: L.Layout = L.MAIN) -> Tag:
    """``tag/tag-<name>``; InvalidTable naming the tags that exist when it does not."""
    rel = layout.tag_path(name)
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        known = tag_names(storage, layout)
        raise InvalidTable(f"no tag named {name!r} (tags: {', '.join(known) if known else 'none'})", path=storage.uri(rel)) from None
    return parse_tag(data, name=name, path=storage.uri(rel))


def snapshot_at(storage: Storage, timestamp_ms: int, layout: L.Layout = L.MAIN) -> Snapshot:
    """The latest snapshot committed at or before ``timestamp_ms`` (Java earlierOrEqualTimeMills); InvalidTable if none."""
    ids = snapshot_ids(storage, layout)
    if not ids:
        raise InvalidTable(f"no snapshot at {timestamp_ms} ms: the table has no snapshots")
    # Commit times grow with ids (each commit follows the previous one), so a binary search reads
    # log2(n) snapshots rather than all of them, as Java does.
    lo, hi, found = 0, len(ids) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        s = load_snapshot(storage, ids[mid], layout)
        if s.time_millis <= timestamp_ms:
            found, lo = s, mid + 1
        else:
            hi = mid - 1
    if found is None:
        first = load_snapshot(storage, ids[0], layout)
        raise InvalidTable(f"no snapshot at or before {timestamp_ms} ms: the earliest, snapshot {first.id}, "
                           f"was committed at {first.time_millis} ms")
    return found


def select_snapshot(storage: Storage, *, snapshot_id: int | None = None, tag: str | None = None,
                    timestamp_ms: int | None = None, branch: str | None = None) -> Snapshot | None:
    """Time travel: at most one of id, tag, timestamp, on a branch (default main); else the latest (None if empty)."""
    if sum(x is not None for x in (snapshot_id, tag, timestamp_ms)) > 1:
        raise InvalidTable("choose a snapshot by at most one of snapshot_id, tag, timestamp_ms")
    layout = L.layout_for(storage, branch)
    if snapshot_id is not None:
        return load_snapshot(storage, snapshot_id, layout)
    if tag is not None:
        return load_tag(storage, tag, layout)
    if timestamp_ms is not None:
        return snapshot_at(storage, timestamp_ms, layout)
    return latest_snapshot(storage, layout)


# ----------------------------------------------------------------------------------------------
# Validation helpers
# ----------------------------------------------------------------------------------------------


def validate_snapshot(s: Snapshot, where: str = "") -> list[Violation]:
    """What a reader tolerates but a writer must not do: an old version, an unknown operation (PAIMON-SNAP-006/018)."""
    out = []
    if s.version != CURRENT_VERSION:
        out.append(Violation("PAIMON-SNAP-006", f"snapshot version is {s.version}, not {CURRENT_VERSION}", where))
    if s.operation is not None and s.operation not in OPERATIONS:
        out.append(Violation("PAIMON-SNAP-018", f"operation {s.operation!r} is not one of {', '.join(OPERATIONS)}", where))
    return out


def check_snapshot_ids(ids: list[int], where: str = "") -> list[Violation]:
    """Kept snapshot ids form one contiguous range starting at 1 or later (PAIMON-SNAP-001)."""
    if ids and ids[0] < FIRST_SNAPSHOT_ID:
        return [Violation("PAIMON-SNAP-001", f"snapshot id {ids[0]} is below {FIRST_SNAPSHOT_ID}", where)]
    gaps = [f"{a}..{b}" for a, b in zip(ids, ids[1:]) if b != a + 1]
    return [Violation("PAIMON-SNAP-001", f"snapshot ids are not contiguous (gaps between {', '.join(gaps[:5])})", where)] if gaps else []


__all__ = ["Snapshot", "Tag", "parse_snapshot", "parse_tag", "snapshot_to_dict", "snapshot_ids", "read_hint",
           "latest_snapshot_id", "earliest_snapshot_id", "load_snapshot", "latest_snapshot", "earliest_snapshot",
           "list_snapshots", "tag_names", "load_tag", "snapshot_at", "select_snapshot", "validate_snapshot",
           "check_snapshot_ids", "COMMIT_KINDS", "OPERATIONS", "KEYS"]
