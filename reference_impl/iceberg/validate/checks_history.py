"""Table Metadata across versions: what each new metadata file must keep, advance or record about the one before it.

The history is the chain of metadata files that still exist (the current file's metadata-log,
then the current file). Each consecutive pair is one or more commits: the table-uuid never
changes; last-sequence-number, last-column-id, last-partition-id and next-row-id never go back;
snapshots added since take sequence numbers and row-id ranges above what the older file had
handed out; a new current snapshot is logged; and the newest earlier file is in the metadata-log.
"""

from __future__ import annotations

from typing import Iterator

from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import types as T
from reference_impl.iceberg.validate.context import Context, MetaFile, metadata_number
from reference_impl.iceberg.validate.registry import V, Violation, at, check


def _pairs(ctx: Context) -> Iterator[tuple[MetaFile, MetaFile]]:
    models = [mf for mf in ctx.chain if mf.md is not None]
    yield from zip(models, models[1:])


def _field_ids(md: M.TableMetadata) -> set[int]:
    return {f.id for s in md.schemas for f, _p, _a in T.walk_with_context(s)}


def _partition_ids(md: M.TableMetadata) -> set[int]:
    return {f.field_id for s in md.partition_specs for f in s.fields}


@check("META-006")
def table_uuid_unchanged(ctx: Context) -> Iterator[Violation]:
    """table-uuid is assigned at creation and every later metadata file carries it unchanged."""
    for a, b in _pairs(ctx):
        if a.md.table_uuid is not None and b.md.table_uuid != a.md.table_uuid:
            yield V("META-006", f"table-uuid changed from {a.md.table_uuid} ({a.where}) to {b.md.table_uuid}", at(b.where, M.TABLE_UUID))


@check("META-011", "META-014", "EVOL-009", "PART-031", "LINEAGE-012")
def counters_never_go_back(ctx: Context) -> Iterator[Violation]:
    """last-sequence-number, last-updated-ms, last-column-id, last-partition-id and next-row-id never decrease; new ids are above the old highest."""
    for a, b in _pairs(ctx):
        x, y = a.md, b.md
        if x.format_version >= 2 and y.last_sequence_number < x.last_sequence_number:
            yield V("META-011", f"last-sequence-number went back from {x.last_sequence_number} to {y.last_sequence_number}", at(b.where, M.LAST_SEQUENCE_NUMBER))
        if y.last_updated_ms < x.last_updated_ms:
            yield V("META-014", f"last-updated-ms {y.last_updated_ms} is older than the previous file's {x.last_updated_ms}", at(b.where, M.LAST_UPDATED_MS))
        if y.last_column_id < x.last_column_id:
            yield V("EVOL-009", f"last-column-id went back from {x.last_column_id} to {y.last_column_id} (ids would be reused)", at(b.where, M.LAST_COLUMN_ID))
        else:
            for fid in sorted(_field_ids(y) - _field_ids(x)):
                if fid <= x.last_column_id:
                    yield V("EVOL-009", f"new field id {fid} is not above the previous last-column-id {x.last_column_id}", at(b.where, f"field {fid}"))
        if y.format_version >= 2:
            if y.last_partition_id < x.last_partition_id:
                yield V("PART-031", f"last-partition-id went back from {x.last_partition_id} to {y.last_partition_id}", at(b.where, M.LAST_PARTITION_ID))
            else:
                for pid in sorted(_partition_ids(y) - _partition_ids(x)):
                    if pid <= x.last_partition_id:
                        yield V("PART-031", f"new partition field id {pid} is not above the previous last-partition-id {x.last_partition_id}", at(b.where, f"partition field {pid}"))
        if x.next_row_id is not None and y.next_row_id is not None and y.next_row_id < x.next_row_id:
            yield V("LINEAGE-012", f"next-row-id went back from {x.next_row_id} to {y.next_row_id}", at(b.where, M.NEXT_ROW_ID))


@check("SEQ-002", "LINEAGE-010", "LINEAGE-011")
def new_snapshots_advance(ctx: Context) -> Iterator[Violation]:
    """Snapshots committed since the older file take sequence numbers above its last-sequence-number and row ids from its next-row-id on."""
    for a, b in _pairs(ctx):
        x, y = a.md, b.md
        old = {s.snapshot_id for s in x.snapshots}
        new = [s for s in y.snapshots if s.snapshot_id not in old]
        for s in new:
            w = at(b.where, f"snapshot {s.snapshot_id}")
            if y.format_version >= 2 and s.sequence_number > 0 and s.sequence_number <= x.last_sequence_number:
                yield V("SEQ-002", f"new snapshot has sequence-number {s.sequence_number}, not above the previous last-sequence-number {x.last_sequence_number}", w)
            if x.next_row_id is not None and s.first_row_id is not None and s.first_row_id < x.next_row_id:
                yield V("LINEAGE-010", f"first-row-id {s.first_row_id} is below the previous next-row-id {x.next_row_id}", w)
        added = sum(s.added_rows or 0 for s in new if s.first_row_id is not None)
        if x.next_row_id is not None and y.next_row_id is not None and y.next_row_id >= x.next_row_id and y.next_row_id < x.next_row_id + added:
            yield V("LINEAGE-011", f"next-row-id advanced by {y.next_row_id - x.next_row_id}, less than the {added} rows the new snapshots added", at(b.where, M.NEXT_ROW_ID))


@check("META-033")
def current_snapshot_change_logged(ctx: Context) -> Iterator[Violation]:
    """When current-snapshot-id changes, the snapshot-log gets an entry for the new current snapshot."""
    for a, b in _pairs(ctx):
        x, y = a.md, b.md
        if y.current_snapshot_id is not None and y.current_snapshot_id != x.current_snapshot_id:
            if not y.snapshot_log or y.snapshot_log[-1].snapshot_id != y.current_snapshot_id:
                yield V("META-033", f"current-snapshot-id changed to {y.current_snapshot_id} without a snapshot-log entry", at(b.where, M.SNAPSHOT_LOG))


@check("META-035")
def previous_metadata_logged(ctx: Context) -> Iterator[Violation]:
    """The newest earlier metadata file that still exists is the metadata-log's last entry."""
    cur = ctx.current
    n = metadata_number(cur.blob.rel or "")
    if cur.md is None or n is None:
        return
    earlier = [(m, p) for m, p in ctx.metadata_files() if m < n]
    if not earlier:
        return
    top = max(m for m, _p in earlier)
    # Metastore naming can leave several files of one number (losing commits); any of them may be the base.
    candidates = sorted(p for m, p in earlier if m == top)
    log = cur.md.metadata_log
    logged = None
    if log:
        try:
            logged = ctx.rel(log[-1].metadata_file)
        except Exception:  # noqa: BLE001 - an unresolvable location is simply not the previous file
            logged = log[-1].metadata_file
    if logged not in candidates:
        yield V("META-035", f"the previous metadata file {candidates[-1]} is not the last metadata-log entry ({logged})", at(cur.where, M.METADATA_LOG))
