"""Commit Conflict Resolution and Retry, Snapshots, Sequence Numbers, Row Lineage: the reference writer.

Every operation is a function ``build(base) -> new metadata`` run in one retry loop
(``_commit``): load the current metadata through the table's catalog (``catalog``: the
file-system layout by default, or a SQL catalog), build the new metadata on it, ask the catalog
for the atomic swap; when another writer won, load again and re-apply on the new base, as the
spec's retry rules allow (appends always; expression-based deletes and overwrites by re-planning
on the new base; schema and partition-spec changes only if the schema did not change meanwhile;
refs and properties by re-applying). Data files, delete files and the manifests of new files are
written once and reused across attempts: their sequence numbers, snapshot ids (v2+) and first row
ids are inherited (Sequence Number Inheritance, First Row ID Inheritance), so only the manifest
list and the metadata file are written again, with a fresh sequence number, first-row-id and
timestamp on every attempt (SEQ-003, LINEAGE-010).

A snapshot (``_produce``) lists the new manifests first, then the branch head's manifests: kept
as they are, or rewritten when entries leave (removed entries DELETED, the others EXISTING, both
with their sequence numbers and first row ids written out: SEQ-006, LINEAGE-016). Deletion
vectors and single-file position deletes of removed data files leave with them (DV-011). Summary
metrics follow Appendix F; totals are carried from the parent's summary.

The operations other than creating, appending and overwriting (metadata changes, and the row-level
``delete``, ``update``, ``optimize``) live in ``operations`` on the same machinery; this module
forwards them, so ``writer.<operation>`` is the whole interface.
"""

from __future__ import annotations

import math
import random
import re
import time
import uuid as uuid_mod
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence

import pyarrow as pa

from reference_impl.errors import CommitConflict, Internal, InvalidTable, Unsupported
from reference_impl.iceberg import SUPPORTED_FORMAT_VERSIONS
from reference_impl.iceberg import datafiles as D
from reference_impl.iceberg import evolution as E
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg.catalog import Catalog, FileSystemCatalog, Loaded, TableExists
from reference_impl.storage import Storage, new_uuid, open_storage

__all__ = [
    "CommitResult", "TableExists", "create_table", "append", "overwrite", "delete", "update", "set_properties",
    "add_column", "rename_column", "drop_column", "change_column_type", "move_column", "set_partitioning",
    "create_ref", "expire_snapshots", "optimize", "parse_partition_expr", "load",
]

ENGINE_NAME = "lakeconf-reference"
DEFAULT_MAX_ATTEMPTS = 100
MAIN = M.MAIN_BRANCH
# Table properties (Java's names).
FORMAT_VERSION_PROPERTY = "format-version"  # reserved: a request to upgrade, never stored
DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
DEFAULT_PREVIOUS_VERSIONS_MAX = 100
DEFAULT_FORMAT_VERSION = 2

# Snapshot summary keys (Appendix F, Optional Snapshot Summary Fields).
OPERATION = M.OPERATION
APPEND, REPLACE, OVERWRITE, DELETE = "append", "replace", "overwrite", "delete"
TOTALS = ("total-records", "total-data-files", "total-delete-files", "total-files-size", "total-position-deletes", "total-equality-deletes")

PARTITION_TRANSFORMS = ("identity", "bucket", "truncate", "year", "month", "day", "hour", "void")
_PARTITION_EXPR = re.compile(r"^\s*(?:(\w+)\s*\(\s*(?:(-?\d{1,40})\s*,\s*)?([^(),\s]+)\s*\)|([^(),\s]+))\s*$", re.ASCII)
# Java's default partition field names (PartitionSpec.Builder): source name plus a suffix.
_NAME_SUFFIX = {"identity": "", "bucket": "_bucket", "truncate": "_trunc", "year": "_year", "month": "_month",
                "day": "_day", "hour": "_hour", "void": "_null"}


# ---------------------------------------------------------------------------------------------
# Small helpers


def _now_ms() -> int:
    return int(time.time() * 1000)


def _storage(location: str | Storage) -> Storage:
    return location if isinstance(location, Storage) else open_storage(str(location))


def new_snapshot_id(existing: Iterable[int] = ()) -> int:
    """A positive random id, Java's way (UUID halves XORed, sign bit cleared), distinct from ``existing`` (SNAP-014)."""
    taken = set(existing)
    while True:
        u = uuid_mod.uuid4().int
        sid = ((u >> 64) ^ (u & (2**64 - 1))) & (2**63 - 1)
        if sid > 0 and sid not in taken:
            return sid


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitResult:
    """What a commit produced: the metadata and its file, the metadata version V, and the snapshot (if any)."""

    metadata: M.TableMetadata
    metadata_location: str
    metadata_version: int
    snapshot_id: int | None = None
    sequence_number: int | None = None
    attempts: int = 1
    committed: bool = True  # False when there was nothing to do (no new metadata)


def load(location: str | Storage, *, catalog: Catalog | None = None) -> M.TableMetadata:
    """The table's current metadata (file-system layout unless ``catalog`` says otherwise)."""
    return (catalog or FileSystemCatalog()).load(_storage(location)).metadata


# ---------------------------------------------------------------------------------------------
# Partition expressions (the kit's contract grammar) -> partition specs


def parse_partition_expr(text: str) -> tuple[str, str, int | None]:
    """``"bucket(16, id)"`` -> ``("bucket", "id", 16)``; ``"id"`` -> ``("identity", "id", None)``; InvalidTable when malformed."""
    m = _PARTITION_EXPR.match(text) if isinstance(text, str) else None
    if not m:
        raise InvalidTable(f"malformed partition expression {text!r}: use 'col' or 'transform([N, ]col)'")
    if m.group(4):
        return "identity", m.group(4), None
    name, param, column = m.group(1).lower(), m.group(2), m.group(3)
    if name not in PARTITION_TRANSFORMS:
        raise InvalidTable(f"unknown partition transform {name!r} in {text!r}: one of {', '.join(PARTITION_TRANSFORMS)}", rule="ICEBERG-PART-037")
    takes = name in ("bucket", "truncate")
    if takes != (param is not None):
        raise InvalidTable(f"partition transform {name!r} {'needs a parameter' if takes else 'takes no parameter'} ({text!r})", rule="ICEBERG-PART-037")
    return name, column, int(param) if param is not None else None


def _transform(name: str, param: int | None) -> X.Transform:
    return X.parse_transform(f"{name}[{param}]" if param is not None else name)


def _source(schema: T.Schema, column: str) -> T.NestedField:
    """A partition source by name: a top-level column, or a dotted path into structs."""
    by_path = T.index_by_path(schema)
    fid = by_path.get(column)
    if fid is None:
        raise InvalidTable(f"partition source column {column!r} is not in the schema", rule="ICEBERG-PART-002",
                           hint=f"columns: {[f.name for f in schema.fields]}")
    return schema.find_field(fid)


def build_spec(
    exprs: Sequence[str],
    schema: T.Schema,
    *,
    spec_id: int,
    existing: Sequence[P.PartitionSpec] = (),
    last_partition_id: int = P.UNPARTITIONED_LAST_PARTITION_ID,
    format_version: int = DEFAULT_FORMAT_VERSION,
    previous: P.PartitionSpec | None = None,
) -> tuple[P.PartitionSpec, int]:
    """A spec for partition expressions: fields of equal source and transform keep their ids (PART-009), new ones
    take last-partition-id + 1 (PART-031); in v1 a dropped field becomes ``void`` in place (PART-033)."""
    wanted: list[tuple[tuple[int, ...], str, X.Transform]] = []
    names: set[str] = set()
    for text in exprs:
        tname, column, param = parse_partition_expr(text)
        src = _source(schema, column)
        transform = _transform(tname, param)
        if not transform.can_transform(src.type):
            raise InvalidTable(f"partition transform {transform} cannot apply to {column} ({src.type})", rule=X._SOURCE_RULE.get(type(transform).__name__, "ICEBERG-PART-010"))
        name = column.replace(".", "_") + _NAME_SUFFIX[tname]
        if name in names:
            name = f"{name}_{param}" if param is not None else f"{name}_{len(names)}"
        if name in names:
            raise InvalidTable(f"partition expression {text!r} repeats another one", rule="ICEBERG-PART-002")
        names.add(name)
        wanted.append(((src.id,), name, transform))
    if format_version == 1 and previous is not None and previous.fields:
        return _v1_evolved_spec(wanted, previous, schema, spec_id=spec_id, last_partition_id=last_partition_id)
    spec, last = P.assign_partition_field_ids(wanted, existing=existing, last_partition_id=last_partition_id, spec_id=spec_id)
    violations = P.validate_partition_spec(spec, schema, format_version=format_version)
    if violations:
        raise InvalidTable(f"bad partition spec: {violations[0].message}", rule=violations[0].rule)
    return spec, last


def _v1_evolved_spec(wanted, previous: P.PartitionSpec, schema: T.Schema, *, spec_id: int, last_partition_id: int) -> tuple[P.PartitionSpec, int]:
    """v1 partition evolution (PART-033): old fields stay in place with their ids, a dropped one becomes ``void``,
    new fields only at the end; so v1's positional ids (1000, 1001, ...) keep meaning the same field."""
    remaining = list(wanted)
    fields = []
    for f in previous.fields:
        match = next((w for w in remaining if w[0] == f.source_ids and str(w[2]) == str(f.transform)), None)
        if match is not None:
            remaining.remove(match)
            fields.append(replace(f, name=match[1]))
        elif isinstance(f.transform, X.VoidTransform):
            fields.append(f)
        else:
            fields.append(replace(f, transform=X.VoidTransform(), name=f"{f.name}_{f.field_id}"))
    last = max(last_partition_id, previous.last_assigned_field_id)
    taken = {f.name for f in fields}
    for source_ids, name, transform in remaining:
        last += 1
        if name in taken:
            name = f"{name}_{last}"
        taken.add(name)
        fields.append(P.PartitionField(source_ids=source_ids, field_id=last, name=name, transform=transform))
    spec = P.PartitionSpec(spec_id=spec_id, fields=tuple(fields))
    violations = P.validate_partition_spec(spec, schema, format_version=1)
    if violations:
        raise InvalidTable(f"bad partition spec: {violations[0].message}", rule=violations[0].rule)
    return spec, last


# ---------------------------------------------------------------------------------------------
# The retry loop (Optimistic Concurrency; Commit Conflict Resolution and Retry)


def _previous_versions_max(md: M.TableMetadata) -> int:
    raw = md.properties.get(METADATA_PREVIOUS_VERSIONS_MAX)
    try:
        return max(0, int(raw)) if raw is not None else DEFAULT_PREVIOUS_VERSIONS_MAX
    except ValueError:
        return DEFAULT_PREVIOUS_VERSIONS_MAX


def _finish(base: Loaded, md: M.TableMetadata) -> M.TableMetadata:
    """Add the base file to metadata-log (META-035, trimmed per META-036) and keep last-updated-ms moving forward."""
    log = base.metadata.metadata_log + (M.MetadataLogEntry(metadata_file=base.uri, timestamp_ms=base.metadata.last_updated_ms),)
    keep = _previous_versions_max(md)
    log = log[-keep:] if keep else ()
    last = max(md.last_updated_ms, base.metadata.last_updated_ms + 1)
    return replace(md, metadata_log=log, last_updated_ms=last)


class _Attempt:
    """What ``build`` returns: the new metadata, or None for nothing to commit; plus the snapshot made."""

    def __init__(self, metadata: M.TableMetadata | None, snapshot: M.Snapshot | None = None) -> None:
        self.metadata = metadata
        self.snapshot = snapshot


def _commit(
    storage: Storage,
    catalog: Catalog | None,
    build: Callable[[Loaded], _Attempt],
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    on_failure: Callable[[], None] | None = None,
    on_success: Callable[[M.TableMetadata], None] | None = None,
) -> CommitResult:
    """Load, build, swap; on a lost swap load again and rebuild (a failed validation inside ``build`` is final)."""
    cat = catalog or FileSystemCatalog()
    try:
        for attempt in range(1, max_attempts + 1):
            base = cat.load(storage)
            out = build(base)
            if out.metadata is None:
                if on_success:
                    on_success(base.metadata)
                return CommitResult(metadata=base.metadata, metadata_location=base.uri, metadata_version=base.version,
                                    attempts=attempt, committed=False)
            md = _finish(base, out.metadata)
            _check_written(md)
            try:
                loaded = cat.commit(storage, base, md)
            except TableExists:
                raise
            except CommitConflict:
                time.sleep(random.uniform(0, min(0.05, 0.002 * (2 ** min(attempt, 5)))))
                continue
            if on_success:
                on_success(md)
            snap = out.snapshot
            return CommitResult(metadata=md, metadata_location=loaded.uri, metadata_version=loaded.version,
                                snapshot_id=snap.snapshot_id if snap else None,
                                sequence_number=snap.sequence_number if snap else None, attempts=attempt)
        raise CommitConflict(f"gave up after {max_attempts} attempts: other writers kept winning",
                             rule="ICEBERG-COMMIT-002", hint="retry later or raise max_attempts")
    except CommitConflict:
        if on_failure:
            on_failure()
        raise
    except (InvalidTable, Unsupported):
        if on_failure:
            on_failure()
        raise


def _check_written(md: M.TableMetadata) -> None:
    """Refuse to commit metadata the validator would flag (the writer's own bug, or an invalid request)."""
    bad = [v for v in M.validate_metadata(md) if v.rule not in _TOLERATED]
    if bad:
        raise Internal(f"the writer built invalid metadata: {bad[0].message} [{bad[0].rule}]", rule=bad[0].rule)


# Violations the writer may carry over from tables it did not write (a reader's leniency).
_TOLERATED = frozenset({"ICEBERG-META-034"})


# ---------------------------------------------------------------------------------------------
# Snapshots: producing one commit's snapshot, manifests and manifest list


@dataclass(slots=True, kw_only=True)
class Plan:
    """One operation's change on one base: files to add (with their spec ids) and which live files leave.

    ``remove_data(entry, spec_id)`` / ``remove_deletes(entry, spec_id)`` pick live entries to remove (entries
    as read, sequence numbers inherited);
    ``must_remove`` holds the keys (``file_key``) that must still be live when the plan is applied
    (Commit Conflict Resolution: replaces and file deletes check their files are still there).
    ``metadata_update`` changes schema or specs in the same commit (overwrite with a new schema).
    """

    operation: str
    added: list[tuple[int, MF.DataFile]] = field(default_factory=list)
    remove_data: Callable[[MF.ManifestEntry, int], bool] | None = None
    remove_deletes: Callable[[MF.ManifestEntry, int], bool] | None = None
    must_remove: frozenset[str] = frozenset()
    metadata_update: Callable[[M.TableMetadata], M.TableMetadata] | None = None
    summary: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)  # root-relative files the plan wrote
    allow_empty: bool = True  # commit a snapshot even when nothing changes (appends of no rows do)


def file_key(df: MF.DataFile) -> str:
    """Identity of a live file: its path, plus the blob offset for deletion vectors sharing a Puffin file."""
    return df.file_path if df.content_offset is None else f"{df.file_path}#{df.content_offset}"


def _partition_key(spec_id: int, partition: Mapping[int, Any]) -> tuple:
    def norm(v: Any) -> Any:
        return ("NaN",) if isinstance(v, float) and math.isnan(v) else v

    return (spec_id, tuple(sorted((k, norm(v)) for k, v in partition.items())))


def branch_head(md: M.TableMetadata, branch: str) -> M.Snapshot | None:
    """The snapshot a commit to ``branch`` builds on: the branch head, or main's head for a new branch (as Java does)."""
    if branch == MAIN:
        return S.current_snapshot(md)
    ref = md.refs.get(branch)
    if ref is None:
        return S.current_snapshot(md)
    if not ref.is_branch:
        raise InvalidTable(f"{branch!r} is a tag: only branches take commits", rule="ICEBERG-REF-007")
    return S.snapshot_by_id(md, ref.snapshot_id)


def _read_manifest(storage: Storage, md: M.TableMetadata, mf: MF.ManifestFile) -> MF.Manifest:
    rel = storage.resolve(mf.manifest_path)
    try:
        raw = storage.read(rel)
    except FileNotFoundError:
        raise InvalidTable(f"manifest {mf.manifest_path} does not exist", path=mf.manifest_path, rule="ICEBERG-META-031") from None
    return MF.read_manifest(raw, manifest_file=mf, path=mf.manifest_path, table_version=md.format_version)


def _complete(storage: Storage, md: M.TableMetadata, mf: MF.ManifestFile) -> MF.ManifestFile:
    """A manifest list entry with every count (a v1 list may omit them; a v2+ list must not)."""
    if None not in (mf.added_files_count, mf.existing_files_count, mf.deleted_files_count,
                    mf.added_rows_count, mf.existing_rows_count, mf.deleted_rows_count):
        return mf
    entries = _read_manifest(storage, md, mf).entries

    def count(st: int) -> int:
        return sum(1 for e in entries if e.status == st)

    def rows(st: int) -> int:
        return sum(e.data_file.record_count for e in entries if e.status == st)

    return replace(mf, added_files_count=count(MF.ADDED), existing_files_count=count(MF.EXISTING), deleted_files_count=count(MF.DELETED),
                   added_rows_count=rows(MF.ADDED), existing_rows_count=rows(MF.EXISTING), deleted_rows_count=rows(MF.DELETED))


@dataclass(slots=True)
class _Written:
    """A manifest file written by this operation: where, how long, its entries and spec (for the list entry)."""

    path: str
    uri: str
    length: int
    entries: tuple[MF.ManifestEntry, ...]
    spec: P.PartitionSpec
    schema: T.Schema
    content: int


class SnapshotProducer:
    """Builds the snapshot of one operation on whichever base the retry loop hands it."""

    def __init__(self, storage: Storage, plan_fn: Callable[[M.TableMetadata, M.Snapshot | None], Plan | None], *,
                 branch: str = MAIN, replan_on: Callable[[M.TableMetadata, M.Snapshot | None], Any] | None = None) -> None:
        self.storage = storage
        self.plan_fn = plan_fn
        self.branch = branch
        # The plan is kept while replan_on(base) stays equal; data-dependent operations key it on the branch head.
        self.replan_on = replan_on or (lambda md, head: None)
        self._plan_key: Any = object()
        self._plan: Plan | None = None
        self._snapshot_id: int | None = None
        self._manifests: dict[Any, list[_Written]] = {}
        self.written: set[str] = set()  # every file this producer wrote (data, deletes, manifests, lists)
        self.kept: set[str] = set()

    # --- plan and ids, stable across attempts where they can be

    def plan(self, md: M.TableMetadata, head: M.Snapshot | None) -> Plan | None:
        key = self.replan_on(md, head)
        if key != self._plan_key:
            if self._plan is not None:
                self._discard(self._plan.written)
            self._plan = self.plan_fn(md, head)
            self._plan_key = key
            if self._plan is not None:
                self.written.update(self._plan.written)
        return self._plan

    def snapshot_id(self, md: M.TableMetadata) -> int:
        existing = {s.snapshot_id for s in md.snapshots}
        if self._snapshot_id is None or self._snapshot_id in existing:
            self._snapshot_id = new_snapshot_id(existing)
        return self._snapshot_id

    def _discard(self, paths: Iterable[str]) -> None:
        for p in paths:
            try:
                self.storage.delete(p)
            except OSError:
                pass
            self.written.discard(p)

    def after_success(self, md: M.TableMetadata | None = None) -> None:
        """Delete what failed attempts wrote and the committed snapshot does not use."""
        self._discard([p for p in list(self.written) if p not in self.kept])

    def after_failure(self) -> None:
        """Nothing was committed: every file this operation wrote is garbage."""
        self.kept = set()
        self._discard(list(self.written))

    def commit(self, catalog: Catalog | None, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> CommitResult:
        """Run the retry loop with this producer's ``build``."""
        return _commit(self.storage, catalog, self.build, max_attempts=max_attempts,
                       on_failure=self.after_failure, on_success=self.after_success)

    # --- manifests

    def _write_manifest(self, entries: list[MF.ManifestEntry], *, md: M.TableMetadata, spec: P.PartitionSpec,
                        schema: T.Schema, content: int) -> _Written:
        data = MF.write_manifest(entries, schema=schema, spec=spec, format_version=md.format_version, content=content)
        rel = f"{S.METADATA_DIR}/{new_uuid()}-m{len(self.written)}.avro"
        self.storage.put_if_absent(rel, data)
        self.written.add(rel)
        return _Written(path=rel, uri=self.storage.uri(rel), length=len(data), entries=tuple(entries), spec=spec, schema=schema, content=content)

    def _new_manifests(self, md: M.TableMetadata, plan: Plan, snapshot_id: int) -> list[_Written]:
        """Manifests of the plan's new files: per (content, spec), ADDED entries that inherit what they can."""
        key = (id(plan), snapshot_id if md.format_version == 1 else None, md.current_schema_id)
        if key in self._manifests:
            return self._manifests[key]
        groups: dict[tuple[int, int], list[MF.DataFile]] = {}
        for spec_id, df in plan.added:
            content = MF.MANIFEST_DATA if df.content == MF.DATA else MF.MANIFEST_DELETES
            groups.setdefault((content, spec_id), []).append(df)
        out = []
        schema = md.schema()
        for (content, spec_id), files in groups.items():
            spec = md.spec_by_id(spec_id)
            if spec is None:
                raise Internal(f"new file written with spec {spec_id}, which the table does not list")
            # v1 entries need an explicit snapshot id; v2+ inherit it with the sequence number (SEQ-004).
            sid = snapshot_id if md.format_version == 1 else None
            entries = [MF.ManifestEntry(status=MF.ADDED, snapshot_id=sid, data_file=df) for df in files]
            out.append(self._write_manifest(entries, md=md, spec=spec, schema=schema, content=content))
        self._manifests[key] = out
        return out

    def _manifest_file(self, w: _Written, *, snapshot_id: int, seq: int) -> MF.ManifestFile:
        return MF.manifest_file_for(w.entries, manifest_path=w.uri, manifest_length=w.length, spec=w.spec, schema=w.schema,
                                    added_snapshot_id=snapshot_id, sequence_number=seq, content=w.content)

    # --- the snapshot

    def build(self, base: Loaded) -> _Attempt:
        md0 = base.metadata
        head = branch_head(md0, self.branch)
        plan = self.plan(md0, head)
        if plan is None:
            return _Attempt(None)
        md = plan.metadata_update(md0) if plan.metadata_update else md0
        v = md.format_version
        if v == 1 and self.branch != MAIN:
            raise Unsupported("branches need format version 2 (v1 metadata has no refs)", feature="refs", rule="ICEBERG-META-039")
        P.check_writable(md.spec())
        snapshot_id = self.snapshot_id(md)
        seq = md.last_sequence_number + 1 if v >= 2 else M.INITIAL_SEQUENCE_NUMBER

        new = self._new_manifests(md, plan, snapshot_id)
        kept: list[MF.ManifestFile] = []
        rewritten: list[_Written] = []
        removed: list[tuple[int, MF.DataFile]] = []
        found: set[str] = set()
        carried = S.snapshot_manifests(self.storage, head) if head is not None else ()
        data_mfs = [m for m in carried if m.content == MF.MANIFEST_DATA]
        delete_mfs = [m for m in carried if m.content == MF.MANIFEST_DELETES]

        def rewrite(mf: MF.ManifestFile, remove: Callable[[MF.ManifestEntry, int], bool]) -> None:
            manifest = _read_manifest(self.storage, md, mf)
            out, changed = [], False
            for e in manifest.entries:
                if not e.is_live:
                    continue  # DELETED entries only matter to the snapshot that made them
                if remove(e, mf.partition_spec_id):
                    found.add(file_key(e.data_file))
                    removed.append((mf.partition_spec_id, e.data_file))
                    out.append(replace(e, status=MF.DELETED, snapshot_id=snapshot_id))
                    changed = True
                else:
                    out.append(replace(e, status=MF.EXISTING))
            if not changed:
                kept.append(mf)
                return
            spec = md.spec_by_id(mf.partition_spec_id)
            schema = manifest.metadata.schema if manifest.metadata.schema.schema_id is not None else md.schema()
            rewritten.append(self._write_manifest(out, md=md, spec=spec, schema=schema, content=mf.content))

        def carry(mfs: Sequence[MF.ManifestFile], remove: Callable[[MF.ManifestEntry, int], bool] | None) -> None:
            for mf in mfs:
                live = (mf.added_files_count, mf.existing_files_count)
                if mf.added_snapshot_id != snapshot_id and live == (0, 0):
                    continue  # nothing live left in it (Java drops such manifests too)
                if remove is None:
                    kept.append(mf)
                else:
                    rewrite(mf, remove)

        carry(data_mfs, plan.remove_data)
        removed_data = {df.file_path for _, df in removed if df.content == MF.DATA}
        remove_deletes = plan.remove_deletes
        if removed_data and delete_mfs:
            remove_deletes = self._dangling(md, plan, kept, rewritten, removed_data, plan.remove_deletes)
        carry(delete_mfs, remove_deletes)
        missing = set(plan.must_remove) - found
        if missing:
            raise CommitConflict(f"{len(missing)} file(s) this operation replaces are no longer in the table "
                                 f"(e.g. {sorted(missing)[0]}): a concurrent commit removed them", rule="ICEBERG-COMMIT-004")
        added_files = [df for _, df in plan.added]
        if not added_files and not removed and not plan.allow_empty and plan.metadata_update is None:
            return _Attempt(None)

        mfs = [self._manifest_file(w, snapshot_id=snapshot_id, seq=seq) for w in new + rewritten]
        mfs += [_complete(self.storage, md, m) if v >= 2 else m for m in kept]
        first_row_id = added_rows = None
        next_row_id = md.next_row_id
        if v >= 3:
            # First Row ID Assignment: new data manifests (and old ones without ids) take consecutive ranges.
            first_row_id = md.next_row_id or 0
            running = first_row_id
            assigned = []
            for m in mfs:
                if m.content == MF.MANIFEST_DATA and m.first_row_id is None:
                    m = replace(m, first_row_id=running)
                    running += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
                assigned.append(m)
            mfs = assigned
            added_rows = running - first_row_id
            next_row_id = running  # LINEAGE-011/012: advances on every branch

        ts = max(_now_ms(), md.last_updated_ms + 1, max((s.timestamp_ms for s in md.snapshots), default=0) + 1)
        list_rel = f"{S.METADATA_DIR}/snap-{snapshot_id}-{len(self.written)}-{new_uuid()}.avro"
        data = MF.write_manifest_list(mfs, format_version=v, snapshot_id=snapshot_id,
                                      parent_snapshot_id=head.snapshot_id if head else None,
                                      sequence_number=seq if v >= 2 else None, first_row_id=first_row_id)
        self.storage.put_if_absent(list_rel, data)
        self.written.add(list_rel)
        summary = self._summary(plan, head, added_files, removed, md)
        snap = M.Snapshot(
            snapshot_id=snapshot_id, timestamp_ms=ts, parent_snapshot_id=head.snapshot_id if head else None,
            sequence_number=seq, manifest_list=self.storage.uri(list_rel), summary=MappingProxyType(summary),
            schema_id=md.current_schema_id, first_row_id=first_row_id, added_rows=added_rows,
        )
        refs = dict(md.refs)
        snapshot_log = md.snapshot_log
        current = md.current_snapshot_id
        if v >= 2:
            old = refs.get(self.branch)
            refs[self.branch] = replace(old, snapshot_id=snapshot_id) if old is not None else M.SnapshotRef(snapshot_id=snapshot_id, type=M.BRANCH)
        if self.branch == MAIN:
            current = snapshot_id
            snapshot_log = snapshot_log + (M.SnapshotLogEntry(snapshot_id=snapshot_id, timestamp_ms=ts),)
        new_md = replace(
            md, snapshots=md.snapshots + (snap,), current_snapshot_id=current, snapshot_log=snapshot_log,
            refs=MappingProxyType(refs), last_sequence_number=seq if v >= 2 else md.last_sequence_number,
            next_row_id=next_row_id, last_updated_ms=ts,
        )
        self.kept = {list_rel} | {w.path for w in new + rewritten} | set(plan.written)
        return _Attempt(new_md, snap)

    def _dangling(self, md: M.TableMetadata, plan: Plan, kept: list[MF.ManifestFile], rewritten: list[_Written],
                  removed_data: set[str], remove_deletes: Callable[[MF.ManifestEntry, int], bool] | None) -> Callable[[MF.ManifestEntry, int], bool]:
        """The delete predicate, extended to deletes no live data file can take any more (DV-011): deletion
        vectors and single-file position deletes of removed data files, and deletes whose partition has no
        older live data file left (Scan Planning's sequence-number and partition rules)."""
        live_paths: set[str] = set()
        min_seq: dict[tuple, int] = {}
        newest = 1 << 62  # files added by this commit are newer than every delete already there
        floor = newest

        def note(spec_id: int, df: MF.DataFile, seq: int | None) -> None:
            nonlocal floor
            live_paths.add(df.file_path)
            k = _partition_key(spec_id, df.partition)
            s = newest if seq is None else seq
            min_seq[k] = min(min_seq.get(k, s), s)
            floor = min(floor, s)

        for spec_id, df in plan.added:
            if df.content == MF.DATA:
                note(spec_id, df, None)
        for w in rewritten:
            if w.content == MF.MANIFEST_DATA:
                for e in w.entries:
                    if e.status != MF.DELETED:
                        note(w.spec.spec_id, e.data_file, e.sequence_number)
        for mf in kept:
            if mf.content == MF.MANIFEST_DATA:
                for e in _read_manifest(self.storage, md, mf).entries:
                    if e.is_live:
                        note(mf.partition_spec_id, e.data_file, e.sequence_number)

        def remove(e: MF.ManifestEntry, spec_id: int) -> bool:
            df, seq = e.data_file, e.sequence_number
            if remove_deletes is not None and remove_deletes(e, spec_id):
                return True
            if df.referenced_data_file is not None:
                return df.referenced_data_file not in live_paths
            spec = md.spec_by_id(spec_id)
            if df.content == MF.EQUALITY_DELETES and spec is not None and spec.is_unpartitioned:
                low = floor if live_paths else None
            else:
                low = min_seq.get(_partition_key(spec_id, df.partition))
            if low is None or seq is None:
                return low is None
            # Position deletes reach data of their own sequence number; equality deletes only older data.
            return low > seq if df.content == MF.POSITION_DELETES else low >= seq

        return remove

    def _summary(self, plan: Plan, head: M.Snapshot | None, added: list[MF.DataFile], removed: list[tuple[int, MF.DataFile]],
                 md: M.TableMetadata) -> dict[str, str]:
        """Appendix F metrics: what this snapshot added and removed, and totals carried from the parent."""
        s: dict[str, int] = {}

        def bump(key: str, n: int) -> None:
            if n:
                s[key] = s.get(key, 0) + n

        gone = [df for _, df in removed]
        for sign, files in ((1, added), (-1, gone)):
            for df in files:
                dv = df.file_format == "puffin"
                if df.content == MF.DATA:
                    bump("added-data-files" if sign > 0 else "deleted-data-files", 1)
                    bump("added-records" if sign > 0 else "deleted-records", df.record_count)
                else:
                    bump("added-delete-files" if sign > 0 else "removed-delete-files", 1)
                    if dv:
                        bump("added-dvs" if sign > 0 else "removed-dvs", 1)
                    elif df.content == MF.POSITION_DELETES:
                        bump("added-position-delete-files" if sign > 0 else "removed-position-delete-files", 1)
                    else:
                        bump("added-equality-delete-files" if sign > 0 else "removed-equality-delete-files", 1)
                    kind = "position" if df.content == MF.POSITION_DELETES else "equality"
                    bump(f"{'added' if sign > 0 else 'removed'}-{kind}-deletes", df.record_count)
                bump("added-files-size" if sign > 0 else "removed-files-size", df.file_size_in_bytes)
        parts = {_partition_key(sid, df.partition) for sid, df in plan.added} | {_partition_key(sid, df.partition) for sid, df in removed}
        bump("changed-partition-count", len(parts))
        totals = _parent_totals(self.storage, md, head)
        totals["total-records"] += s.get("added-records", 0) - s.get("deleted-records", 0)
        totals["total-data-files"] += s.get("added-data-files", 0) - s.get("deleted-data-files", 0)
        totals["total-delete-files"] += s.get("added-delete-files", 0) - s.get("removed-delete-files", 0)
        totals["total-files-size"] += s.get("added-files-size", 0) - s.get("removed-files-size", 0)
        totals["total-position-deletes"] += s.get("added-position-deletes", 0) - s.get("removed-position-deletes", 0)
        totals["total-equality-deletes"] += s.get("added-equality-deletes", 0) - s.get("removed-equality-deletes", 0)
        out = {OPERATION: plan.operation}
        out.update({k: str(v) for k, v in s.items()})
        out.update({k: str(v) for k, v in totals.items()})
        out.update(plan.summary)
        out["engine-name"] = ENGINE_NAME
        return out


def _parent_totals(storage: Storage, md: M.TableMetadata, head: M.Snapshot | None) -> dict[str, int]:
    """The parent's totals from its summary; computed from its live files when the summary lacks them."""
    out = {k: 0 for k in TOTALS}
    if head is None:
        return out
    summary = head.summary or {}
    try:
        return {k: int(summary[k]) for k in TOTALS}
    except (KeyError, ValueError):
        pass
    for mf in S.snapshot_manifests(storage, head):
        for e in _read_manifest(storage, md, mf).entries:
            if not e.is_live:
                continue
            df = e.data_file
            out["total-files-size"] += df.file_size_in_bytes
            if df.content == MF.DATA:
                out["total-records"] += df.record_count
                out["total-data-files"] += 1
            else:
                out["total-delete-files"] += 1
                out["total-position-deletes" if df.content == MF.POSITION_DELETES else "total-equality-deletes"] += df.record_count
    return out


# ---------------------------------------------------------------------------------------------
# Creating a table


def _format_version(value: Any) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise InvalidTable(f"format-version must be 1, 2 or 3, got {value!r}", rule="ICEBERG-META-003") from None
    if v not in SUPPORTED_FORMAT_VERSIONS:
        raise Unsupported(f"format-version {v} is not supported (only {SUPPORTED_FORMAT_VERSIONS})", feature=f"format-version {v}", rule="ICEBERG-META-004")
    return v


# Arrow field-metadata keys carrying a field's v3 default values: the JSON single-value text of
# Appendix D (``7``, ``"text"``, ``{}`` for a struct). Arrow has no slot for defaults, so the kit's
# steps (Create, AddColumn) put them here and the writer records them in the Iceberg schema.
ARROW_INITIAL_DEFAULT = "iceberg.initial-default"
ARROW_WRITE_DEFAULT = "iceberg.write-default"
_ARROW_DEFAULT_KEYS = ((ARROW_INITIAL_DEFAULT, "initial_default"), (ARROW_WRITE_DEFAULT, "write_default"))


def _arrow_children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    return []


def has_arrow_defaults(field: pa.Field) -> bool:
    """Whether ``field`` or a struct child of it carries a default in its Arrow metadata."""
    meta = field.metadata or {}
    if any(k.encode() in meta for k, _ in _ARROW_DEFAULT_KEYS):
        return True
    return any(has_arrow_defaults(c) for c in _arrow_children(field.type))


def with_arrow_defaults(ice: T.NestedField, field: pa.Field, format_version: int, where: str = "") -> T.NestedField:
    """``ice`` (converted from ``field``) with the defaults the Arrow metadata declares, struct children too.

    Defaults exist from format version 3 on (SCHEMA-013): asking for one on an older table is
    ``Unsupported``, never silently dropped. A value that is not a JSON single value of the field's
    type is ``InvalidTable`` (Appendix D)."""
    import json

    from reference_impl.iceberg import values

    where = where or ice.name
    meta = field.metadata or {}
    updates: dict[str, Any] = {}
    for key, attr in _ARROW_DEFAULT_KEYS:
        raw = meta.get(key.encode())
        if raw is None:
            continue
        if format_version < 3:
            raise Unsupported(f"column {where}: default values ({key}) need format version 3, the table is v{format_version}",
                              feature="default-values", rule="ICEBERG-SCHEMA-013")
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidTable(f"column {where}: {key} is not JSON ({exc}): {raw!r}", rule="ICEBERG-SERDE-018") from None
        updates[attr] = values.default_from_json(obj, ice.type, where=f"{where} {key}")
    if isinstance(ice.type, T.StructType) and pa.types.is_struct(field.type):
        by_name = {c.name: c for c in _arrow_children(field.type)}
        children = tuple(
            with_arrow_defaults(c, by_name[c.name], format_version, f"{where}.{c.name}") if c.name in by_name else c
            for c in ice.type.fields
        )
        if children != ice.type.fields:  # NestedField equality includes the defaults
            updates["type"] = T.StructType(fields=children)
    return replace(ice, **updates) if updates else ice


def _schema_violations(schema: T.Schema, format_version: int) -> None:
    bad = T.validate_schema(schema, format_version)
    if bad:
        raise InvalidTable(f"bad schema: {bad[0].message} ({bad[0].where})", rule=bad[0].rule)


def create_table(
    location: str | Storage,
    schema: pa.Schema | T.Schema,
    *,
    partition_by: Sequence[str] = (),
    properties: Mapping[str, Any] | None = None,
    format_version: int | None = None,
    identifier_fields: Sequence[str] = (),
    catalog: Catalog | None = None,
) -> CommitResult:
    """Create an empty table: fresh field ids (1, 2, ...), partition expressions, properties; TableExists if taken.

    ``format_version`` defaults to ``properties["format-version"]``, else 2; that property is a
    request, not a stored property (as in Java).
    """
    storage = _storage(location)
    props = {str(k): str(v) for k, v in (properties or {}).items()}
    requested = props.pop(FORMAT_VERSION_PROPERTY, None)
    fv = _format_version(format_version if format_version is not None else requested if requested is not None else DEFAULT_FORMAT_VERSION)
    if isinstance(schema, pa.Schema):
        ice, last_column_id = T.arrow_to_schema_with_fresh_ids(schema, schema_id=0)
        ice = replace(ice, fields=tuple(with_arrow_defaults(f, a, fv) for f, a in zip(ice.fields, schema)))
    elif isinstance(schema, T.Schema):
        ice, last_column_id = T.assign_fresh_ids(replace(schema, schema_id=0))
    else:
        raise InvalidTable(f"schema must be a pyarrow.Schema or an Iceberg Schema, not {type(schema).__name__}")
    if identifier_fields:
        paths = T.index_by_path(ice)
        missing = [n for n in identifier_fields if n not in paths]
        if missing:
            raise InvalidTable(f"identifier fields {missing} are not in the schema", rule="ICEBERG-SCHEMA-006")
        ice = replace(ice, identifier_field_ids=tuple(paths[n] for n in identifier_fields))
    _schema_violations(ice, fv)
    spec, last_pid = build_spec(tuple(partition_by), ice, spec_id=0, format_version=fv)
    md = M.TableMetadata(
        format_version=fv, table_uuid=str(uuid_mod.uuid4()), location=storage.root, last_updated_ms=_now_ms(),
        last_column_id=last_column_id, schemas=(ice,), current_schema_id=0, partition_specs=(spec,), default_spec_id=0,
        last_partition_id=last_pid, properties=MappingProxyType(props), next_row_id=0 if fv >= 3 else None,
    )
    _check_written(md)
    loaded = (catalog or FileSystemCatalog()).create(storage, md)
    return CommitResult(metadata=md, metadata_location=loaded.uri, metadata_version=loaded.version)


# ---------------------------------------------------------------------------------------------
# Appending and overwriting


def _written_paths(storage: Storage, files: Iterable[MF.DataFile]) -> list[str]:
    return sorted({storage.resolve(df.file_path) for df in files})


def append(location: str | Storage, rows: pa.Table, *, files: int = 1, branch: str | None = None,
           catalog: Catalog | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> CommitResult:
    """Append rows as new data files in one ``append`` snapshot (to ``branch`` when given); always re-applicable (COMMIT-003)."""
    storage = _storage(location)

    def plan(md: M.TableMetadata, head: M.Snapshot | None) -> Plan:
        spec = md.spec()
        dfs = D.write_data_files(storage, rows, schema=md.schema(), spec=spec, properties=md.properties, files=files)
        return Plan(operation=APPEND, added=[(spec.spec_id, df) for df in dfs], written=_written_paths(storage, dfs))

    return SnapshotProducer(storage, plan, branch=branch or MAIN).commit(catalog, max_attempts=max_attempts)


def _shape(t: T.IcebergType) -> Any:
    """A type without its field ids (to tell "same column" from "new column" by name and type)."""
    if isinstance(t, T.StructType):
        return ("struct", tuple((f.name, f.required, _shape(f.type)) for f in t.fields))
    if isinstance(t, T.ListType):
        return ("list", t.element_required, _shape(t.element))
    if isinstance(t, T.MapType):
        return ("map", _shape(t.key), t.value_required, _shape(t.value))
    return t


def _with_schema(md: M.TableMetadata, fields: Sequence[T.NestedField], *, identifier_field_ids: tuple[int, ...] | None = ...,
                 check: bool = True) -> M.TableMetadata:
    """``md`` with a schema of ``fields`` made current: an identical listed schema is reused, else a new id (EVOL-001)."""
    old = md.schema()
    idents = old.identifier_field_ids if identifier_field_ids is ... else identifier_field_ids
    cand = T.Schema(fields=tuple(fields), schema_id=None, identifier_field_ids=idents)
    if check:
        bad = E.check_schema_evolution(old, cand, format_version=md.format_version, last_column_id=md.last_column_id,
                                       partition_specs=md.partition_specs)
        if bad:
            raise InvalidTable(f"schema change not allowed: {bad[0].message}", rule=bad[0].rule)
    else:
        _schema_violations(cand, md.format_version)
    same = next((s for s in md.schemas if s.fields == cand.fields and s.identifier_field_ids == cand.identifier_field_ids), None)
    last = max(md.last_column_id, cand.highest_field_id)
    if same is not None:
        return replace(md, current_schema_id=same.schema_id, last_column_id=last)
    sid = max(s.schema_id for s in md.schemas) + 1
    return replace(md, schemas=md.schemas + (replace(cand, schema_id=sid),), current_schema_id=sid, last_column_id=last)


def _respec(md: M.TableMetadata) -> M.TableMetadata:
    """After the schema changed under it, a default spec whose sources are gone is replaced by one without them."""
    schema = md.schema()
    spec = md.spec()
    alive = [f for f in spec.fields if all(schema.find_field(i) is not None for i in f.source_ids)
             and (not f.transform.is_known or f.transform.can_transform(schema.find_type(f.source_id)))]
    if len(alive) == len(spec.fields):
        return md
    wanted = [(f.source_ids, f.name, f.transform) for f in alive]
    new_id = max(s.spec_id for s in md.partition_specs) + 1
    if md.format_version == 1:
        fields = [f if f in alive else replace(f, transform=X.VoidTransform(), source_ids=f.source_ids) for f in spec.fields]
        # v1 keeps positions; a void field whose source is gone still needs a source id, so keep the old one.
        new = P.PartitionSpec(spec_id=new_id, fields=tuple(fields))
        last = md.last_partition_id
    else:
        new, last = P.assign_partition_field_ids(wanted, existing=md.partition_specs, last_partition_id=md.last_partition_id, spec_id=new_id)
    eq = P.find_equivalent_spec(new, md.partition_specs)
    if eq is not None:
        return replace(md, default_spec_id=eq.spec_id)
    return replace(md, partition_specs=md.partition_specs + (new,), default_spec_id=new_id, last_partition_id=max(last, md.last_partition_id))


def schema_for_rows(md: M.TableMetadata, incoming: pa.Schema) -> M.TableMetadata | None:
    """The metadata an overwrite with rows of ``incoming`` needs: None when the schema stays; else a schema where
    columns of the same name and type keep their ids and the others get fresh ones, and a spec without lost sources."""
    current = md.schema()
    by_name = {f.name: f for f in current.fields}
    placeholder, _ = T.arrow_to_schema_with_fresh_ids(incoming)
    kept: dict[int, T.NestedField] = {}
    new: list[T.NestedField] = []
    for i, f in enumerate(placeholder.fields):
        old = by_name.get(f.name)
        if old is not None and _shape(replace(old, required=False).type) == _shape(replace(f, required=False).type):
            # Same column: keep its id; an incoming nullable column relaxes a required one (allowed), never the reverse.
            kept[i] = old if old.required == f.required or not old.required else replace(old, required=False)
        else:
            new.append(f)
    # Only the new columns take ids, above last-column-id (EVOL-009).
    renumbered = list(T.assign_fresh_ids(T.StructType(fields=tuple(new)), last_column_id=md.last_column_id)[0].fields)
    fields = []
    for i in range(len(placeholder.fields)):
        if i in kept:
            fields.append(kept[i])
        else:
            f = renumbered.pop(0)
            fields.append(replace(f, required=False) if md.format_version < 3 or f.required else f)
    if [(f.id, f.name, f.required) for f in fields] == [(f.id, f.name, f.required) for f in current.fields] and tuple(fields) == current.fields:
        return None
    idents = tuple(i for i in (current.identifier_field_ids or ()) if any(i == g.id for _, g in T.walk_fields(T.Schema(fields=tuple(fields)))))
    out = _with_schema(md, fields, identifier_field_ids=idents or None, check=False)
    return _respec(out)


def overwrite(location: str | Storage, rows: pa.Table, *, branch: str | None = None, catalog: Catalog | None = None,
              max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> CommitResult:
    """Replace every live file with ``rows`` in one ``overwrite`` snapshot; rows of another schema replace the schema too."""
    storage = _storage(location)
    if not isinstance(rows, pa.Table):
        raise InvalidTable(f"rows must be a pyarrow.Table, not {type(rows).__name__}")

    def plan(md: M.TableMetadata, head: M.Snapshot | None) -> Plan:
        changed = schema_for_rows(md, rows.schema)
        target = changed if changed is not None else md
        spec = target.spec()
        dfs = D.write_data_files(storage, rows, schema=target.schema(), spec=spec, properties=target.properties)
        # Deleting "everything" is an expression delete: re-applicable to any newer base (Commit Conflict Resolution).
        return Plan(operation=OVERWRITE, added=[(spec.spec_id, df) for df in dfs], remove_data=lambda e, s: True,
                    remove_deletes=lambda e, s: True, written=_written_paths(storage, dfs),
                    metadata_update=(lambda m: changed) if changed is not None else None)

    key = lambda md, head: (md.current_schema_id, md.default_spec_id, md.last_column_id, md.last_partition_id, len(md.schemas), len(md.partition_specs))  # noqa: E731
    return SnapshotProducer(storage, plan, branch=branch or MAIN, replan_on=key).commit(catalog, max_attempts=max_attempts)


# ---------------------------------------------------------------------------------------------
# Metadata-only commits (the operations themselves are in ``operations``)


def _metadata_commit(storage: Storage, catalog: Catalog | None, fn: Callable[[M.TableMetadata], M.TableMetadata | None], *,
                     guard: Callable[[M.TableMetadata], Any] | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                     on_success: Callable[[M.TableMetadata], None] | None = None) -> CommitResult:
    """Commit ``fn(base)`` (None: nothing to do). ``guard(base)`` must stay equal across retries (COMMIT-006)."""
    first: list[Any] = []

    def build(base: Loaded) -> _Attempt:
        md = base.metadata
        if guard is not None:
            g = guard(md)
            if not first:
                first.append(g)
            elif g != first[0]:
                raise CommitConflict("the schema or partition spec changed since this change was made; re-read the table and try again",
                                     rule="ICEBERG-COMMIT-006")
        new = fn(md)
        if new is None or new == md:
            return _Attempt(None)
        return _Attempt(replace(new, last_updated_ms=max(_now_ms(), md.last_updated_ms + 1)))

    return _commit(storage, catalog, build, max_attempts=max_attempts, on_success=on_success)


def _schema_guard(md: M.TableMetadata) -> Any:
    return (md.current_schema_id, md.last_column_id)


# ---------------------------------------------------------------------------------------------
# The other operations live in ``operations`` (metadata changes and row-level changes); they are
# part of this module's interface: ``writer.delete(...)`` and ``from ...writer import delete`` work.

_FORWARDED = frozenset({
    "set_properties", "add_column", "rename_column", "drop_column", "change_column_type", "move_column", "set_partitioning",
    "create_ref", "expire_snapshots", "snapshot_at_version", "delete", "update", "optimize",
})


def __getattr__(name: str) -> Any:
    if name in _FORWARDED:
        from reference_impl.iceberg import operations

        return getattr(operations, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
