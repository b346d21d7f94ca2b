"""Snapshots, Snapshot References and Point in Time Reads: choosing a snapshot and listing its live files.

A snapshot is chosen as current, by id, by reference name (``main`` always exists and follows
``current-snapshot-id``, even without ``refs``) or by timestamp through ``snapshot-log`` (Appendix
F: the log, not the parent chain, says what was current when). Its live files are the entries of
its manifests (manifest list -> manifests, or the v1 ``manifests`` list) whose status is not
DELETED, with snapshot ids, sequence numbers and first row ids inherited as the spec says.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from dataclasses import dataclass
from typing import Callable, Iterator

from reference_impl.common.timestamps import to_epoch_ms
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import types as T
from reference_impl.storage import Storage

METADATA_DIR = "metadata"
METADATA_SUFFIXES = (".metadata.json", ".gz.metadata.json", ".metadata.json.gz")


def current_snapshot(md: M.TableMetadata) -> M.Snapshot | None:
    """The current snapshot, or None for a table without one; InvalidTable if it is not listed."""
    if md.current_snapshot_id is None:
        return None
    return snapshot_by_id(md, md.current_snapshot_id)


def snapshot_by_id(md: M.TableMetadata, snapshot_id: int) -> M.Snapshot:
    """The snapshot with this id; InvalidTable naming the id when it is not (or no longer) listed."""
    s = md.snapshot_by_id(snapshot_id)
    if s is None:
        raise InvalidTable(f"snapshot {snapshot_id} is not in the table's snapshots (expired or never committed)", rule="ICEBERG-META-029")
    return s


def snapshot_by_ref(md: M.TableMetadata, name: str) -> M.Snapshot | None:
    """The snapshot a branch or tag points at (``main`` is implicit); None only for an empty ``main``."""
    refs = md.effective_refs()
    if name not in refs:
        if name == M.MAIN_BRANCH:
            return None  # a table with no snapshot yet: main exists logically but points nowhere
        raise InvalidTable(f"no branch or tag named {name!r} (known: {sorted(refs)})", rule="ICEBERG-META-039")
    ref = refs[name]
    s = md.snapshot_by_id(ref.snapshot_id)
    if s is None:
        raise InvalidTable(f"ref {name!r} points at missing snapshot {ref.snapshot_id}", rule="ICEBERG-REF-006")
    return s


def snapshot_as_of(md: M.TableMetadata, timestamp: int | float | dt.datetime | str) -> M.Snapshot:
    """The snapshot that was current at ``timestamp`` (ms or datetime), from the snapshot-log; informative error otherwise."""
    ms = to_epoch_ms(timestamp)
    if not md.snapshot_log:
        raise InvalidTable("the table has no snapshot-log, so it cannot be read as of a time", rule="ICEBERG-SNAP-015",
                           hint="read by snapshot id or ref instead")
    chosen = None
    for e in md.snapshot_log:
        if e.timestamp_ms <= ms:
            chosen = e
        else:
            break
    if chosen is None:
        first = md.snapshot_log[0].timestamp_ms
        raise InvalidTable(f"no snapshot was current at {ms} ms: the snapshot-log starts at {first} ms", rule="ICEBERG-SNAP-015")
    s = md.snapshot_by_id(chosen.snapshot_id)
    if s is None:
        raise InvalidTable(f"snapshot {chosen.snapshot_id}, current at {ms} ms, has expired", rule="ICEBERG-META-034")
    return s


def ancestors(md: M.TableMetadata, snapshot_id: int) -> Iterator[M.Snapshot]:
    """The snapshot and its listed ancestors, newest first (stops where a parent has expired)."""
    seen: set[int] = set()
    s = md.snapshot_by_id(snapshot_id)
    while s is not None and s.snapshot_id not in seen:
        seen.add(s.snapshot_id)
        yield s
        s = md.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None


def select_snapshot(md: M.TableMetadata, *, snapshot_id: int | None = None, ref: str | None = None,
                    as_of: int | float | dt.datetime | str | None = None) -> M.Snapshot | None:
    """One selector at most: by id, by ref, by time, else the current snapshot."""
    given = [x is not None for x in (snapshot_id, ref, as_of)]
    if sum(given) > 1:
        raise InvalidTable("choose a snapshot by at most one of snapshot_id, ref, as_of")
    if snapshot_id is not None:
        return snapshot_by_id(md, snapshot_id)
    if ref is not None:
        return snapshot_by_ref(md, ref)
    if as_of is not None:
        return snapshot_as_of(md, as_of)
    return current_snapshot(md)


# ---------------------------------------------------------------------------------------------
# Files of a snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveFiles:
    """The live (ADDED or EXISTING) entries of a snapshot, data and deletes apart, with their manifests."""

    snapshot: M.Snapshot
    manifests: tuple[MF.ManifestFile, ...]
    data_files: tuple[MF.ManifestEntry, ...]
    delete_files: tuple[MF.ManifestEntry, ...]
    spec_ids: tuple[int, ...]  # per data file, the spec its manifest was written with (same order)
    delete_spec_ids: tuple[int, ...]


def resolve_location(storage: Storage, location: str) -> str:
    """Root-relative path of a location stored in metadata, accepting Java's spellings of the same place.

    Java (Hadoop paths) writes local files as ``file:/abs/path`` and Spark on S3 may write
    ``s3a://``; both name the same object as ``file:///abs/path`` and ``s3://``. Locations are
    taken literally: a ``%3A`` in one is three characters of the file name (Java escapes partition
    values into names that way), never an escape to decode.
    """
    if location.startswith("file:") and not location.startswith("file://"):
        return storage.resolve(location[len("file:"):])
    for scheme in ("s3a://", "s3n://"):
        if location.startswith(scheme):
            location = "s3://" + location[len(scheme):]
    return storage.resolve(location)


def _read(storage: Storage, location: str, what: str) -> tuple[str, bytes]:
    rel = resolve_location(storage, location)
    try:
        return rel, storage.read(rel)
    except FileNotFoundError:
        raise InvalidTable(f"{what} {location} does not exist", path=location, rule="ICEBERG-META-031") from None


def snapshot_manifests(storage: Storage, snapshot: M.Snapshot) -> tuple[MF.ManifestFile, ...]:
    """The manifest list entries of a snapshot (a v1 ``manifests`` list becomes entries with sequence number 0)."""
    if snapshot.manifest_list is not None:
        _rel, data = _read(storage, snapshot.manifest_list, "manifest list")
        return MF.read_manifest_list(data, path=snapshot.manifest_list)
    out = []
    for loc in snapshot.manifests or ():
        rel, data = _read(storage, loc, "manifest")
        meta = MF.parse_manifest_metadata(MF.manifest_list_metadata(data, path=loc), path=loc)
        out.append(MF.ManifestFile(manifest_path=loc, manifest_length=len(data), partition_spec_id=meta.spec.spec_id,
                                   added_snapshot_id=snapshot.snapshot_id, content=meta.content))
    return tuple(out)


def live_files(storage: Storage, md: M.TableMetadata, snapshot: M.Snapshot | None = None) -> LiveFiles | None:
    """Data and delete files of a snapshot (default: current): manifest list -> manifests -> entries not DELETED."""
    snapshot = snapshot if snapshot is not None else current_snapshot(md)
    if snapshot is None:
        return None
    mfs = snapshot_manifests(storage, snapshot)
    data, deletes, dspec, xspec = [], [], [], []
    seen_paths: dict[str, str] = {}
    for mf in mfs:
        if md.spec_by_id(mf.partition_spec_id) is None:
            raise InvalidTable(f"manifest {mf.manifest_path} uses spec {mf.partition_spec_id}, which the table does not list",
                               path=mf.manifest_path, rule="ICEBERG-MLIST-005")
        _rel, raw = _read(storage, mf.manifest_path, "manifest")
        manifest = MF.read_manifest(raw, manifest_file=mf, path=mf.manifest_path, table_version=md.format_version)
        for e in manifest.entries:
            if not e.is_live:
                continue
            p = e.data_file.file_path
            key = ("D:" if e.data_file.content == MF.DATA else "X:") + p
            # Deletes may legitimately repeat a path (several DVs in one Puffin file); data files may not.
            if e.data_file.content == MF.DATA:
                if key in seen_paths:
                    raise InvalidTable(f"data file {p} is live twice in snapshot {snapshot.snapshot_id} ({seen_paths[key]} and {mf.manifest_path})",
                                       path=mf.manifest_path, rule="ICEBERG-SNAP-013")
                seen_paths[key] = mf.manifest_path
                data.append(e)
                dspec.append(mf.partition_spec_id)
            else:
                deletes.append(e)
                xspec.append(mf.partition_spec_id)
    return LiveFiles(snapshot=snapshot, manifests=mfs, data_files=tuple(data), delete_files=tuple(deletes),
                     spec_ids=tuple(dspec), delete_spec_ids=tuple(xspec))


def validate_snapshot(storage: Storage, md: M.TableMetadata, snapshot: M.Snapshot, *,
                      manifest_files: tuple[MF.ManifestFile, ...] | None = None,
                      opened: Callable[[str], tuple | None] | None = None) -> list[T.Violation]:
    """Rules a snapshot's manifest list and manifests break (one pass; unreadable files become violations).

    A caller that already decoded the files (the validator) hands them in, so that a long history
    is decoded once: ``manifest_files`` (the snapshot's list entries) and ``opened(uri)`` (a
    manifest's Avro schema, metadata and records, or None to decode it here).
    """
    out: list[T.Violation] = []
    where = f"snapshot {snapshot.snapshot_id}"
    try:
        mfs = manifest_files if manifest_files is not None else snapshot_manifests(storage, snapshot)
    except InvalidTable as exc:
        return [T.Violation(rule=exc.rule or "ICEBERG-MLIST-002", message=exc.message, where=where)]
    v3_rows = md.format_version >= 3 and snapshot.first_row_id is not None
    live_paths: dict[str, str] = {}
    for mf in mfs:
        mw = mf.manifest_path
        if md.spec_by_id(mf.partition_spec_id) is None:
            out.append(T.Violation(rule="ICEBERG-MLIST-005", message=f"spec {mf.partition_spec_id} is not in partition-specs", where=mw))
        if mf.added_snapshot_id == snapshot.snapshot_id and md.format_version >= 2 and mf.sequence_number != snapshot.sequence_number:
            out.append(T.Violation(rule="ICEBERG-SEQ-012", message=f"manifest added by this snapshot has sequence number {mf.sequence_number}, not {snapshot.sequence_number}", where=mw))
        if mf.content == MF.MANIFEST_DELETES and mf.first_row_id is not None:
            out.append(T.Violation(rule="ICEBERG-LINEAGE-013", message="a delete manifest has a first_row_id", where=mw))
        if v3_rows and mf.content == MF.MANIFEST_DATA and mf.first_row_id is None:
            out.append(T.Violation(rule="ICEBERG-LINEAGE-020", message="a data manifest of a snapshot with row lineage has no first_row_id", where=mw))
        if v3_rows and mf.first_row_id is not None and mf.added_snapshot_id == snapshot.snapshot_id and snapshot.added_rows is not None:
            rows = (mf.added_rows_count or 0) + (mf.existing_rows_count or 0)
            if mf.first_row_id < snapshot.first_row_id or mf.first_row_id + rows > snapshot.first_row_id + snapshot.added_rows:
                out.append(T.Violation(rule="ICEBERG-LINEAGE-011", message="manifest row ids fall outside the snapshot's first-row-id/added-rows range", where=mw))
        try:
            rel = resolve_location(storage, mw)
            raw = storage.read(rel)
        except (InvalidTable, FileNotFoundError) as exc:
            out.append(T.Violation(rule="ICEBERG-META-031", message=f"manifest cannot be read: {exc}", where=mw))
            continue
        if len(raw) != mf.manifest_length:
            out.append(T.Violation(rule="ICEBERG-MLIST-004", message=f"manifest_length {mf.manifest_length} but the file has {len(raw)} bytes", where=mw))
        try:
            manifest = MF.read_manifest(raw, path=mw, table_version=md.format_version,
                                        opened=opened(mw) if opened is not None else None)
        except (InvalidTable, Unsupported) as exc:
            out.append(T.Violation(rule=exc.rule or "ICEBERG-MANIFEST-002", message=exc.message, where=mw))
            continue
        out.extend(MF.validate_manifest(manifest, mf))
        for e in manifest.entries:
            if e.is_live and e.data_file.content == MF.DATA:
                p = e.data_file.file_path
                if p in live_paths:
                    out.append(T.Violation(rule="ICEBERG-SNAP-013", message=f"data file {p} is live in {live_paths[p]} and {mw}", where=where))
                live_paths[p] = mw
    return out


# ---------------------------------------------------------------------------------------------
# Finding and loading metadata files


def _metadata_version(name: str) -> int | None:
    base = posixpath.basename(name)
    for suffix in METADATA_SUFFIXES:
        if base.endswith(suffix):
            stem = base[: -len(suffix)]
            head = stem.split("-", 1)[0]
            if head.startswith("v"):
                head = head[1:]
            return int(head) if head.isdigit() else None
    return None


def latest_metadata_path(storage: Storage) -> str:
    """The highest-numbered ``metadata/v<N>.metadata.json`` or ``<N>-<uuid>.metadata.json`` (no catalog at hand)."""
    best: tuple[int, str] | None = None
    for f in storage.list(METADATA_DIR):
        n = _metadata_version(f.path)
        if n is not None and (best is None or (n, f.path) > best):
            best = (n, f.path)
    if best is None:
        raise InvalidTable(f"no metadata file under {storage.uri(METADATA_DIR)}", rule="ICEBERG-META-001")
    return best[1]


def load_metadata(storage: Storage, path: str | None = None) -> M.TableMetadata:
    """Parse a metadata file (default: the latest one found under metadata/)."""
    rel = resolve_location(storage, path) if path is not None else latest_metadata_path(storage)
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        raise InvalidTable(f"metadata file {path or rel} does not exist", path=path or rel, rule="ICEBERG-META-001") from None
    return M.parse_metadata(data, path=storage.uri(rel))


# ---------------------------------------------------------------------------------------------
# The kit's version numbers (contracts: "Iceberg version numbering")


def main_ancestry(md: M.TableMetadata) -> list[M.Snapshot]:
    """The main branch's snapshots, newest first, as far back as parents are still listed."""
    head = md.effective_refs().get(M.MAIN_BRANCH)
    return [] if head is None else list(ancestors(md, head.snapshot_id))


def snapshot_for_version(md: M.TableMetadata, n: int) -> M.Snapshot | None:
    """The snapshot the kit calls version ``n``: None for 0 (before the first snapshot); InvalidTable when there is none.

    Version N >= 1 is the snapshot of the main ancestry whose sequence number is N (v2, v3), or
    for v1 tables (no sequence numbers) the N-th snapshot counting from the main ancestry's root.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise InvalidTable(f"a version is an integer, got {n!r}")
    if n < 0:
        raise InvalidTable(f"version {n} does not exist (versions count from 0)", version=n)
    if n == 0:
        return None
    chain = main_ancestry(md)
    if md.format_version >= 2:
        for s in chain:
            if s.sequence_number == n:
                return s
        raise InvalidTable(f"version {n} does not exist: no snapshot of the main history has sequence number {n} "
                           "(never written, committed to another branch, or expired)", version=n)
    if chain and chain[-1].parent_snapshot_id is not None:
        raise InvalidTable(f"version {n} of this v1 table cannot be located: the oldest snapshots of its main history were "
                           "expired, so snapshots can no longer be counted from the root", version=n)
    if n > len(chain):
        raise InvalidTable(f"version {n} does not exist: the main history has {len(chain)} snapshot(s)", version=n)
    return chain[len(chain) - n]


def version_of(md: M.TableMetadata, snapshot: M.Snapshot) -> int | None:
    """The kit's version number of a snapshot of the main history (None when it has none)."""
    chain = main_ancestry(md)
    ids = [s.snapshot_id for s in chain]
    if snapshot.snapshot_id not in ids:
        return None
    if md.format_version >= 2:
        return snapshot.sequence_number or None
    if chain and chain[-1].parent_snapshot_id is not None:
        return None
    return len(chain) - ids.index(snapshot.snapshot_id)
