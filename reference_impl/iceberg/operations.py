"""The writer's operations beyond appends: Row-level Deletes (DELETE, UPDATE, compaction), Schema Evolution,
Partition Evolution, table properties and format upgrades, Snapshot References and snapshot expiry.

All of them run in ``writer``'s retry loop: row-level changes through ``writer.SnapshotProducer``,
the others as metadata-only commits (``writer._metadata_commit``), where schema and spec changes
fail instead of re-applying when the schema changed meanwhile (COMMIT-006).

Each row-level operation plans on the branch head it is handed: scan the live files (``scan.plan_files``),
read each file's live rows with their positions (``read.read_task(..., with_positions=True)``),
evaluate the SQL predicate (DuckDB on Arrow, as the Delta writer does), then change the table by
one of the spec's mechanisms:

* copy-on-write: the touched data files leave, their surviving (or updated) rows are written anew;
* position delete files (v2 only: DELETE-001 forbids row-level deletes in v1, DELETE-002 new
  position delete files in v3), one per touched data file with ``referenced_data_file`` set;
* equality delete files (v2+), on the schema's identifier fields or else every column that may be
  a delete column (DELETE-013), one per touched partition; refused (``Unsupported``) when the
  delete keys would also match rows the predicate keeps;
* deletion vectors (v3), one per touched data file, merged with the file's existing DV and its
  single-file position deletes, which leave in the same commit (DV-009/010, DELETE-017).

A file whose every live row goes is removed instead. The plan is redone when the branch head,
schema or spec changed before the commit (an expression-based change "can always be applied" to
the new base, Commit Conflict Resolution). Rows moved to new files keep their ``_row_id``; their
``_last_updated_sequence_number`` is kept when unchanged and cleared when updated (LINEAGE-008).
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.common import sql as SQL
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import datafiles as D
from reference_impl.iceberg import deletes as DEL
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import read as R
from reference_impl.iceberg import scan as SC
from reference_impl.iceberg import types as T
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import writer as W
from reference_impl.iceberg.catalog import Catalog
from reference_impl.iceberg.writer import (
    FORMAT_VERSION_PROPERTY, MAIN, CommitResult, _format_version, _metadata_commit, _read_manifest, _schema_guard,
    _schema_violations, _with_schema, build_spec,
)
from reference_impl.storage import Storage, new_uuid

COPY_ON_WRITE = "copy-on-write"
POSITION_DELETES = "position-deletes"
EQUALITY_DELETES = "equality-deletes"
DELETION_VECTORS = "deletion-vectors"
MECHANISMS = (COPY_ON_WRITE, POSITION_DELETES, EQUALITY_DELETES, DELETION_VECTORS)
_FILE, _POS = "_file", "_pos"


# ---------------------------------------------------------------------------------------------
# Row-level changes: choosing the mechanism


def mechanism(md: M.TableMetadata, how: str | None, *, mode_property: str = W.DELETE_MODE) -> str:
    """The delete mechanism for a request: ``how`` if the format version allows it, else the table's default
    (v1 copy-on-write; v2 ``write.delete.mode``, default copy-on-write; v3 merge-on-read with DVs unless the
    property says copy-on-write)."""
    v = md.format_version
    if how is not None:
        if how not in MECHANISMS:
            raise InvalidTable(f"unknown delete mechanism {how!r}: one of {', '.join(MECHANISMS)}")
        if how != COPY_ON_WRITE and v == 1:
            raise Unsupported(f"{how} need format version 2: v1 tables have no row-level deletes", feature=how, rule="ICEBERG-DELETE-001")
        if how == POSITION_DELETES and v >= 3:
            raise Unsupported("position delete files must not be added to v3 tables (deletion vectors replace them)",
                              feature=how, rule="ICEBERG-DELETE-002")
        if how == DELETION_VECTORS and v < 3:
            raise Unsupported("deletion vectors need format version 3", feature=how, rule="ICEBERG-DV-001")
        return how
    if v == 1:
        return COPY_ON_WRITE
    mode = str(md.properties.get(mode_property, COPY_ON_WRITE if v == 2 else W.MERGE_ON_READ)).strip().lower()
    if mode not in (COPY_ON_WRITE, W.MERGE_ON_READ):
        raise InvalidTable(f"{mode_property}={mode!r} is neither copy-on-write nor merge-on-read")
    if mode == COPY_ON_WRITE:
        return COPY_ON_WRITE
    return DELETION_VECTORS if v >= 3 else POSITION_DELETES


# ---------------------------------------------------------------------------------------------
# Reading what a plan touches


def _lineage_fields(md: M.TableMetadata) -> list[T.NestedField]:
    if md.format_version < 3:
        return []
    return [R.metadata_field(D.ROW_ID), R.metadata_field(D.LAST_UPDATED_SEQUENCE_NUMBER)]


def _data_columns(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in (_FILE, _POS, D.ROW_ID, D.LAST_UPDATED_SEQUENCE_NUMBER) if c in table.column_names])


def _mask(table: pa.Table, where: str, what: str) -> np.ndarray:
    try:
        return SQL.evaluate_predicate(_data_columns(table), where, what=what)
    except InvalidTable as exc:
        raise InvalidTable(exc.message) from None  # the Delta rule id on it does not apply here


def _split(reads: list["_Read"], values: np.ndarray | pa.ChunkedArray) -> dict[int, Any]:
    """Per-read slices of values computed over all reads' rows at once (one DuckDB call, not one per file)."""
    out, at = {}, 0
    for i, r in enumerate(reads):
        n = r.rows.num_rows
        if n:
            out[i] = values[at : at + n]
            at += n
    return out


def _all_rows(reads: list["_Read"]) -> pa.Table | None:
    tables = [_data_columns(r.rows) for r in reads if r.rows.num_rows]
    return pa.concat_tables(tables) if tables else None


def _bind(md: M.TableMetadata, expression: str, what: str) -> None:
    try:
        SQL.check_expression_binds(T.to_arrow_schema(md.schema(), include_unknown=False), expression, what=what)
    except InvalidTable as exc:
        raise InvalidTable(exc.message) from None


class _Read:
    """One scan task and its live rows (table columns, lineage columns in v3, ``_file`` and ``_pos``)."""

    def __init__(self, task: SC.FileScanTask, rows: pa.Table) -> None:
        self.task = task
        self.rows = rows

    @property
    def positions(self) -> np.ndarray:
        return np.asarray(self.rows.column(_POS).to_numpy(), dtype=np.int64)


def _read_all(storage: Storage, md: M.TableMetadata, head: M.Snapshot | None) -> list[_Read]:
    fields = list(md.schema().fields) + _lineage_fields(md)
    cache = R.ReadCache()
    return [_Read(task, R.read_task(storage, md, task, fields, with_positions=True, cache=cache))
            for task in SC.plan_files(storage, md, head)]


def _delete_path(spec: P.PartitionSpec, schema: T.Schema, partition: Mapping[int, Any], suffix: str) -> str:
    """A delete file next to its partition's data (flat when an old spec's source is no longer in the schema)."""
    try:
        base = D.data_file_path(spec, schema, partition)
    except InvalidTable:
        base = D.data_file_path(P.UNPARTITIONED, schema, {})
    return base[: -len(".parquet")] + suffix


# ---------------------------------------------------------------------------------------------
# Building plans


def _rewrite(storage: Storage, md: M.TableMetadata, rows: pa.Table, written: list[str]) -> list[tuple[int, MF.DataFile]]:
    """Write rows (table columns plus lineage columns) as new data files under the current spec."""
    if rows.num_rows == 0:
        return []
    spec = md.spec()
    keep = [c for c in rows.column_names if c not in (_FILE, _POS)]
    dfs = D.write_data_files(storage, rows.select(keep), schema=md.schema(), spec=spec, properties=md.properties)
    written.extend(W._written_paths(storage, dfs))
    return [(spec.spec_id, df) for df in dfs]


def _cleared_updates(rows: pa.Table, changed: np.ndarray) -> pa.Table:
    """Updated rows get a null ``_last_updated_sequence_number`` so the commit's sequence number is inherited (LINEAGE-008)."""
    if D.LAST_UPDATED_SEQUENCE_NUMBER not in rows.column_names:
        return rows
    i = rows.column_names.index(D.LAST_UPDATED_SEQUENCE_NUMBER)
    col = pc.if_else(pa.array(changed), pa.nulls(rows.num_rows, pa.int64()), rows.column(i))
    return rows.set_column(i, rows.schema.field(i), col)


def _existing_deleted_positions(storage: Storage, task: SC.FileScanTask) -> tuple[np.ndarray, list[MF.DataFile]]:
    """Positions already deleted from the task's file by its DV and single-file position deletes (to merge into a new DV)."""
    found: list[np.ndarray] = []
    merged: list[MF.DataFile] = []
    path = task.data_file.file_path
    for d in task.deletes:
        if DEL.is_dv(d):
            found.append(DEL.read_dv(storage.read(storage.resolve(d.file_path)), d))
            merged.append(d)
        elif d.content == MF.POSITION_DELETES:
            table = DEL.read_position_deletes(storage.read(storage.resolve(d.file_path)), path=d.file_path)
            found.append(DEL.positions_for(table, path))
            if d.referenced_data_file == path:
                merged.append(d)  # only this file's deletes: the DV replaces it (DELETE-017)
    return (np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)), merged


def _row_level_plan(storage: Storage, md: M.TableMetadata, how: str, reads: list[_Read], hits: dict[int, np.ndarray],
                    replacements: dict[int, pa.Table], *, operation_if_rewrite: str, operation: str,
                    extra_rows: list[pa.Table] = (), summary: Mapping[str, str] | None = None) -> W.Plan:
    """The plan for deleting ``hits`` (read index -> row mask over that read's live rows) by ``how``.

    ``replacements`` (read index -> rows) are copy-on-write rewrites of touched files; ``extra_rows``
    are new rows (an update's new versions under merge-on-read).
    """
    written: list[str] = []
    added: list[tuple[int, MF.DataFile]] = []
    remove_data: set[str] = set()
    remove_delete_keys: set[str] = set()
    schema = md.schema()
    dvs: dict[str, np.ndarray] = {}
    dv_parts: dict[str, tuple[int, Mapping[int, Any]]] = {}
    eq_groups: dict[tuple, tuple[int, Mapping[int, Any], list[pa.Table]]] = {}
    for i, mask in hits.items():
        r = reads[i]
        f, spec_id = r.task.data_file, r.task.spec_id
        spec = md.spec_by_id(spec_id)
        every_row = bool(mask.all())
        if how == COPY_ON_WRITE or every_row:
            remove_data.add(f.file_path)
            if i in replacements:
                added += _rewrite(storage, md, replacements[i], written)
            elif not every_row:
                added += _rewrite(storage, md, r.rows.filter(pa.array(~mask)), written)
            continue
        positions = r.positions[mask]
        if how == POSITION_DELETES:
            rel = _delete_path(spec, schema, f.partition, "-deletes.parquet")
            added.append((spec_id, DEL.write_position_deletes(storage, rel, {f.file_path: positions}, partition=f.partition)))
            written.append(rel)
        elif how == DELETION_VECTORS:
            old, merged = _existing_deleted_positions(storage, r.task)
            dvs[f.file_path] = np.union1d(old, positions)
            dv_parts[f.file_path] = (spec_id, f.partition)
            remove_delete_keys.update(W.file_key(d) for d in merged)
        elif how == EQUALITY_DELETES:
            k = W._partition_key(spec_id, f.partition)
            eq_groups.setdefault(k, (spec_id, f.partition, []))[2].append(r.rows.filter(pa.array(mask)))
        else:  # pragma: no cover - mechanism() validated it
            raise InvalidTable(f"unknown mechanism {how!r}")
    if dvs:
        rel = f"data/{new_uuid()}-deletes.puffin"
        for df in DEL.write_dvs(storage, rel, dvs, partitions={p: part for p, (_s, part) in dv_parts.items()}):
            added.append((dv_parts[df.referenced_data_file][0], df))
        written.append(rel)
    if eq_groups:
        added += _equality_deletes(storage, md, reads, hits, eq_groups, written)
    for rows in extra_rows:
        added += _rewrite(storage, md, rows, written)
    rewrote = any(df.content == MF.DATA for _, df in added)
    return W.Plan(
        operation=operation_if_rewrite if rewrote else operation,
        added=added,
        remove_data=(lambda e, s: e.data_file.file_path in remove_data) if remove_data else None,
        remove_deletes=(lambda e, s: W.file_key(e.data_file) in remove_delete_keys) if remove_delete_keys else None,
        must_remove=frozenset(remove_data | remove_delete_keys),
        written=written,
        summary=dict(summary or {}),
    )


def equality_ids_for(schema: T.Schema) -> list[int]:
    """Delete columns: the identifier fields if the schema has them, else every top-level column allowed as one (DELETE-013)."""
    if schema.identifier_field_ids:
        return list(schema.identifier_field_ids)
    return [f.id for f in schema.fields if T.is_primitive(f.type) and f.type not in (T.FLOAT, T.DOUBLE, T.UNKNOWN)
            and not isinstance(f.type, (T.GeometryType, T.GeographyType))]


def _equality_deletes(storage: Storage, md: M.TableMetadata, reads: list[_Read], hits: dict[int, np.ndarray],
                      groups: dict[tuple, tuple[int, Mapping[int, Any], list[pa.Table]]], written: list[str]) -> list[tuple[int, MF.DataFile]]:
    """One equality delete file per touched partition; refused when its keys would also delete rows the predicate keeps."""
    schema = md.schema()
    ids = equality_ids_for(schema)
    if not ids:
        raise Unsupported("no column of this schema can be an equality delete column (DELETE-013)", feature=EQUALITY_DELETES)
    names = [schema.find_field(i).name for i in ids if schema.field_by_name(schema.find_field(i).name) is not None]
    if len(names) != len(ids):
        raise Unsupported("equality deletes on nested identifier fields are not written by this writer", feature=EQUALITY_DELETES)
    out = []
    for key, (spec_id, partition, parts) in groups.items():
        deleted = pa.concat_tables(parts).select(names)
        deleted = deleted.group_by(names, use_threads=False).aggregate([]) if deleted.num_rows > 1 else deleted
        # Equality deletes reach every older row of the partition: none the predicate keeps may match a key.
        for i, r in enumerate(reads):
            if W._partition_key(r.task.spec_id, r.task.data_file.partition) != key and not md.spec_by_id(spec_id).is_unpartitioned:
                continue
            keep = ~hits[i] if i in hits else np.ones(r.rows.num_rows, dtype=bool)
            if not keep.any():
                continue
            matched = DEL.equality_delete_mask(r.rows.select(names), deleted) & keep
            if matched.any():
                raise Unsupported(f"equality deletes on {names} would also delete {int(matched.sum())} row(s) the predicate keeps "
                                  f"(in {r.task.data_file.file_path})", feature=EQUALITY_DELETES,
                                  hint="delete with position deletes, deletion vectors or copy-on-write, or set identifier fields")
        spec = md.spec_by_id(spec_id)
        rel = _delete_path(spec, schema, partition, "-eq-deletes.parquet")
        out.append((spec_id, DEL.write_equality_deletes(storage, rel, deleted, ids, schema, partition=partition)))
        written.append(rel)
    return out


# ---------------------------------------------------------------------------------------------
# The row-level operations


def _head_key(md: M.TableMetadata, head: M.Snapshot | None) -> Any:
    return (head.snapshot_id if head else None, md.current_schema_id, md.default_spec_id, md.format_version)


def delete(location: str | Storage, where: str, *, how: str | None = None, branch: str | None = None,
           catalog: Catalog | None = None, max_attempts: int = W.DEFAULT_MAX_ATTEMPTS) -> W.CommitResult:
    """Delete the rows where the SQL predicate is TRUE, by ``how`` (see ``mechanism``); a ``delete`` snapshot
    (``overwrite`` when copy-on-write had to rewrite surviving rows)."""
    storage = W._storage(location)
    if not isinstance(where, str) or not where.strip():
        raise InvalidTable("DELETE needs a predicate (use 'true' to delete every row)")

    def plan(md: M.TableMetadata, head: M.Snapshot | None) -> W.Plan:
        how_now = mechanism(md, how)
        _bind(md, where, "DELETE predicate")
        reads = _read_all(storage, md, head)
        everything = _all_rows(reads)
        masks = _split(reads, _mask(everything, where, "DELETE predicate")) if everything is not None else {}
        hits = {i: m for i, m in masks.items() if m.any()}
        return _row_level_plan(storage, md, how_now, reads, hits, {}, operation_if_rewrite=W.OVERWRITE, operation=W.DELETE)

    return W.SnapshotProducer(storage, plan, branch=branch or W.MAIN, replan_on=_head_key).commit(catalog, max_attempts=max_attempts)


def update(location: str | Storage, set: Mapping[str, str], where: str = "true", *, branch: str | None = None,  # noqa: A002
           catalog: Catalog | None = None, max_attempts: int = W.DEFAULT_MAX_ATTEMPTS) -> W.CommitResult:
    """Set columns to SQL expressions on the rows where ``where`` is TRUE: copy-on-write, or merge-on-read
    (``write.update.mode``: old rows deleted by position deletes (v2) or DVs (v3), new rows appended)."""
    storage = W._storage(location)
    if not set:
        raise InvalidTable("UPDATE needs at least one column to set")

    def plan(md: M.TableMetadata, head: M.Snapshot | None) -> W.Plan:
        schema = md.schema()
        arrow = T.to_arrow_schema(schema, include_unknown=False)
        types = {f.name: f.type for f in arrow}
        for col in set:
            if col not in types:
                raise InvalidTable(f"UPDATE sets unknown column {col!r}", hint=f"columns: {list(types)}")
        _bind(md, where, "UPDATE predicate")
        for col, expr in set.items():
            _bind(md, expr, f"UPDATE value of {col!r}")
        how_now = mechanism(md, None, mode_property=W.UPDATE_MODE)
        reads = _read_all(storage, md, head)
        hits, replacements, new_rows = {}, {}, []
        everything = _all_rows(reads)
        if everything is None:
            masks, values = {}, {}
        else:
            masks = _split(reads, _mask(everything, where, "UPDATE predicate"))
            values = {}
            for col, expr in set.items():
                try:
                    computed = SQL.evaluate(everything, expr, what=f"UPDATE value of {col!r}").cast(types[col])
                except InvalidTable as exc:
                    raise InvalidTable(exc.message) from None
                except (pa.ArrowException, ValueError) as exc:
                    raise InvalidTable(f"UPDATE value of {col!r} cannot be stored as {types[col]}: {exc}") from None
                values[col] = _split(reads, computed)
        for i, r in enumerate(reads):
            mask = masks.get(i)
            if mask is None or not mask.any():
                continue
            updated = r.rows
            for col in set:
                j = updated.column_names.index(col)
                updated = updated.set_column(j, updated.schema.field(j), pc.if_else(pa.array(mask), values[col][i], updated.column(j)))
            updated = _cleared_updates(updated, mask)
            hits[i] = mask
            if how_now == COPY_ON_WRITE:
                replacements[i] = updated
            else:
                # Merge-on-read: the old versions are deleted by position, the new ones appended (a file
                # updated in every row is removed whole instead; its new rows are appended all the same).
                new_rows.append(updated.filter(pa.array(mask)))
        return _row_level_plan(storage, md, how_now, reads, hits, replacements, operation_if_rewrite=W.OVERWRITE,
                               operation=W.OVERWRITE, extra_rows=new_rows)

    return W.SnapshotProducer(storage, plan, branch=branch or W.MAIN, replan_on=_head_key).commit(catalog, max_attempts=max_attempts)


def optimize(location: str | Storage, *, branch: str | None = None, catalog: Catalog | None = None,
             max_attempts: int = W.DEFAULT_MAX_ATTEMPTS) -> W.CommitResult:
    """Rewrite each (spec, partition) group holding several files or any deletes as new files of the current spec,
    deletes applied: a ``replace`` snapshot (same rows, SNAP-008); nothing to do commits nothing."""
    storage = W._storage(location)

    def plan(md: M.TableMetadata, head: M.Snapshot | None) -> W.Plan | None:
        tasks = SC.plan_files(storage, md, head)
        groups: dict[tuple, list[SC.FileScanTask]] = {}
        for t in tasks:
            groups.setdefault(W._partition_key(t.spec_id, t.data_file.partition), []).append(t)
        work = [g for g in groups.values() if len(g) > 1 or any(t.deletes for t in g)]
        if not work:
            return None
        fields = list(md.schema().fields) + _lineage_fields(md)
        cache = R.ReadCache()
        written: list[str] = []
        added: list[tuple[int, MF.DataFile]] = []
        removing: set[str] = set()
        for group in work:
            parts = [R.read_task(storage, md, t, fields, cache=cache) for t in group]
            removing.update(t.data_file.file_path for t in group)
            added += _rewrite(storage, md, pa.concat_tables(parts), written)
        return W.Plan(operation=W.REPLACE, added=added, remove_data=lambda e, s: e.data_file.file_path in removing,
                      must_remove=frozenset(removing), written=written)

    return W.SnapshotProducer(storage, plan, branch=branch or W.MAIN, replan_on=_head_key).commit(catalog, max_attempts=max_attempts)


# ---------------------------------------------------------------------------------------------
# Metadata changes: properties and upgrades, schema evolution, partition evolution, refs, expiry


def set_properties(location: str | Storage, properties: Mapping[str, Any], *, catalog: Catalog | None = None) -> CommitResult:
    """Set (value) or remove (None) table properties; ``format-version`` upgrades the table instead (Appendix E)."""
    storage = W._storage(location)
    props = dict(properties)

    def fn(md: M.TableMetadata) -> M.TableMetadata:
        out = md
        if FORMAT_VERSION_PROPERTY in props:
            target = _format_version(props[FORMAT_VERSION_PROPERTY])
            if target < md.format_version:
                raise InvalidTable(f"cannot downgrade a v{md.format_version} table to v{target}", rule="ICEBERG-COMPAT-003")
            if target > md.format_version:
                for s in out.schemas:
                    _schema_violations(s, target)
                out = M.upgrade(out, target)
        merged = dict(out.properties)
        for k, v in props.items():
            if k == FORMAT_VERSION_PROPERTY:
                continue
            if v is None:
                merged.pop(str(k), None)
            else:
                merged[str(k)] = str(v)
        return replace(out, properties=MappingProxyType(merged))

    return _metadata_commit(storage, catalog, fn)


def _field_at(schema: T.Schema, name: str) -> T.NestedField:
    fid = T.index_by_path(schema).get(name)
    if fid is None:
        raise InvalidTable(f"no column named {name!r}", hint=f"columns: {[f.name for f in schema.fields]}")
    return schema.find_field(fid)


def _map_fields(fields: Sequence[T.NestedField], target: int, fn: Callable[[T.NestedField], T.NestedField | None]) -> tuple[T.NestedField, ...]:
    """``fields`` with the field of id ``target`` (at any struct depth) replaced by ``fn(field)`` (None drops it)."""
    out = []
    for f in fields:
        if f.id == target:
            g = fn(f)
            if g is not None:
                out.append(g)
            continue
        if isinstance(f.type, T.StructType):
            f = replace(f, type=T.StructType(fields=_map_fields(f.type.fields, target, fn)))
        elif isinstance(f.type, T.ListType) and isinstance(f.type.element, T.StructType):
            f = replace(f, type=replace(f.type, element=T.StructType(fields=_map_fields(f.type.element.fields, target, fn))))
        elif isinstance(f.type, T.MapType) and isinstance(f.type.value, T.StructType):
            f = replace(f, type=replace(f.type, value=T.StructType(fields=_map_fields(f.type.value.fields, target, fn))))
        out.append(f)
    return tuple(out)


def add_column(location: str | Storage, field: pa.Field, *, catalog: Catalog | None = None) -> CommitResult:
    """Add a top-level column with fresh ids above last-column-id (EVOL-009).

    Defaults (v3 only, SCHEMA-013) come from the Arrow field metadata ``iceberg.initial-default`` /
    ``iceberg.write-default`` (JSON single values, Appendix D); without them a v3 column gets explicit
    null defaults (SCHEMA-023). A required column can be added only with non-null defaults of both
    kinds (SCHEMA-022): the initial-default fills the rows already written."""
    storage = W._storage(location)
    if not isinstance(field, pa.Field):
        raise InvalidTable(f"field must be a pyarrow.Field, not {type(field).__name__}")

    def fn(md: M.TableMetadata) -> M.TableMetadata:
        schema = md.schema()
        if schema.field_by_name(field.name) is not None:
            raise InvalidTable(f"a column named {field.name!r} already exists")
        placeholder, _ = T.arrow_to_schema_with_fresh_ids(pa.schema([field]))
        fresh, _ = T.assign_fresh_ids(placeholder, last_column_id=md.last_column_id)
        new = W.with_arrow_defaults(fresh.fields[0], field, md.format_version)
        if md.format_version >= 3:
            new = replace(
                new,
                initial_default=None if new.initial_default is T.NO_DEFAULT else new.initial_default,
                write_default=None if new.write_default is T.NO_DEFAULT else new.write_default,
            )
        if not field.nullable and (md.format_version < 3 or new.initial_default is None or new.write_default is None):
            raise InvalidTable(f"cannot add required column {field.name!r}: rows already written have no value for it",
                               rule="ICEBERG-SCHEMA-022",
                               hint="add it as nullable, or (v3) give it non-null iceberg.initial-default and iceberg.write-default")
        return _with_schema(md, schema.fields + (replace(new, required=not field.nullable),))

    return _metadata_commit(storage, catalog, fn, guard=_schema_guard)


def rename_column(location: str | Storage, old: str, new: str, *, catalog: Catalog | None = None) -> CommitResult:
    """Rename a column (a dotted path reaches into structs); its id stays (EVOL-010)."""
    storage = W._storage(location)

    def fn(md: M.TableMetadata) -> M.TableMetadata | None:
        schema = md.schema()
        f = _field_at(schema, old)
        if not new or "." in new and "." not in old:
            raise InvalidTable(f"bad new column name {new!r}")
        parent = old.rsplit(".", 1)[0] + "." if "." in old else ""
        if new != f.name and (parent + new) in T.index_by_path(schema):
            raise InvalidTable(f"a column named {new!r} already exists next to {old!r}")
        if new == f.name:
            return None
        return _with_schema(md, _map_fields(schema.fields, f.id, lambda g: replace(g, name=new)))

    return _metadata_commit(storage, catalog, fn, guard=_schema_guard)


def drop_column(location: str | Storage, name: str, *, catalog: Catalog | None = None) -> CommitResult:
    """Drop a column from the current schema (older schemas keep it, EVOL-012); partition sources and identifier fields stay."""
    storage = W._storage(location)

    def fn(md: M.TableMetadata) -> M.TableMetadata:
        schema = md.schema()
        f = _field_at(schema, name)
        dropped = {i for i, _ in T.walk_fields(T.StructType(fields=(f,)))}
        if any(set(pf.source_ids) & dropped for pf in md.spec().fields if not isinstance(pf.transform, X.VoidTransform)):
            raise InvalidTable(f"cannot drop column {name!r}: the current partition spec uses it", rule="ICEBERG-PART-002",
                               hint="change the partitioning first (set_partitioning)")
        if set(schema.identifier_field_ids or ()) & dropped:
            raise InvalidTable(f"cannot drop column {name!r}: it is an identifier field", rule="ICEBERG-SCHEMA-006")
        fields = _map_fields(schema.fields, f.id, lambda g: None)
        if not fields:
            raise InvalidTable("cannot drop the last column")
        return _with_schema(md, fields)

    return _metadata_commit(storage, catalog, fn, guard=_schema_guard)


def _iceberg_type(t: pa.DataType | str | T.IcebergType) -> T.IcebergType:
    if isinstance(t, str):
        return T.parse_type(t)
    if isinstance(t, pa.DataType):
        if pa.types.is_nested(t):
            raise Unsupported("changing a column to a nested type", feature="nested-type-change", rule="ICEBERG-EVOL-013")
        return T.from_arrow_type(t)
    return t


def change_column_type(location: str | Storage, name: str, type: pa.DataType | str | T.IcebergType, *,  # noqa: A002 - the contract's name
                       catalog: Catalog | None = None) -> CommitResult:
    """Promote a primitive column (int->long, float->double, wider decimal; v3: date->timestamp(_ns), unknown->any);
    anything else, or a promotion that changes a partition transform's output, is refused (EVOL-002..008)."""
    storage = W._storage(location)
    new_type = _iceberg_type(type)

    def fn(md: M.TableMetadata) -> M.TableMetadata | None:
        schema = md.schema()
        f = _field_at(schema, name)
        if f.type == new_type:
            return None
        if not T.is_primitive(f.type) and f.type != T.UNKNOWN:
            raise InvalidTable(f"column {name!r} is {f.type}: only primitive columns can change type", rule="ICEBERG-EVOL-013")
        return _with_schema(md, _map_fields(schema.fields, f.id, lambda g: replace(g, type=new_type)))

    return _metadata_commit(storage, catalog, fn, guard=_schema_guard)


def move_column(location: str | Storage, name: str, after: str | None = None, *, catalog: Catalog | None = None) -> CommitResult:
    """Move a top-level column after ``after`` (None: first); ids never change (EVOL-011)."""
    storage = W._storage(location)

    def fn(md: M.TableMetadata) -> M.TableMetadata | None:
        schema = md.schema()
        f = schema.field_by_name(name)
        if f is None:
            raise InvalidTable(f"no top-level column named {name!r}", hint=f"columns: {[g.name for g in schema.fields]}")
        if after == name:
            raise InvalidTable(f"cannot move column {name!r} after itself")
        rest = [g for g in schema.fields if g.id != f.id]
        if after is None:
            fields = [f] + rest
        else:
            idx = next((i for i, g in enumerate(rest) if g.name == after), None)
            if idx is None:
                raise InvalidTable(f"no top-level column named {after!r}")
            fields = rest[: idx + 1] + [f] + rest[idx + 1 :]
        if tuple(fields) == schema.fields:
            return None
        return _with_schema(md, fields)

    return _metadata_commit(storage, catalog, fn, guard=_schema_guard)


def set_partitioning(location: str | Storage, partition_by: Sequence[str], *, catalog: Catalog | None = None) -> CommitResult:
    """Make a spec of these partition expressions the default for new writes (PART-029): an equivalent listed
    spec is reused (PART-008), surviving fields keep their ids (PART-009/030), new ones follow last-partition-id."""
    storage = W._storage(location)
    exprs = tuple(partition_by)

    def fn(md: M.TableMetadata) -> M.TableMetadata | None:
        new_id = max(s.spec_id for s in md.partition_specs) + 1
        spec, last = build_spec(exprs, md.schema(), spec_id=new_id, existing=md.partition_specs, last_partition_id=md.last_partition_id,
                                format_version=md.format_version, previous=md.spec())
        eq = P.find_equivalent_spec(spec, md.partition_specs)
        if eq is not None:
            return None if eq.spec_id == md.default_spec_id else replace(md, default_spec_id=eq.spec_id)
        return replace(md, partition_specs=md.partition_specs + (spec,), default_spec_id=new_id,
                       last_partition_id=max(last, md.last_partition_id))

    guard = lambda md: (_schema_guard(md), md.default_spec_id, len(md.partition_specs))  # noqa: E731
    return _metadata_commit(storage, catalog, fn, guard=guard)


def snapshot_at_version(md: M.TableMetadata, version: int) -> M.Snapshot | None:
    """The kit's version numbering (``snapshots.snapshot_for_version``): 0 = before the first snapshot; N = the
    main-history snapshot with sequence number N (v1: the N-th from the root); InvalidTable when there is none."""
    return S.snapshot_for_version(md, version)


def create_ref(location: str | Storage, name: str, kind: str = M.BRANCH, version: int | None = None, *,
               snapshot_id: int | None = None, catalog: Catalog | None = None) -> CommitResult:
    """Create a branch or tag at ``version`` (the kit's numbering) or ``snapshot_id`` (default: the current snapshot)."""
    storage = W._storage(location)
    if kind not in (M.BRANCH, M.TAG):
        raise InvalidTable(f"ref kind must be 'branch' or 'tag', got {kind!r}", rule="ICEBERG-REF-001")
    if not isinstance(name, str) or not name:
        raise InvalidTable(f"bad ref name {name!r}")

    def fn(md: M.TableMetadata) -> M.TableMetadata:
        if md.format_version == 1:
            raise Unsupported("branches and tags need format version 2 (v1 metadata has no refs)", feature="refs", rule="ICEBERG-META-039")
        if name == MAIN or name in md.refs:
            raise InvalidTable(f"a ref named {name!r} already exists", rule="ICEBERG-REF-005" if name == MAIN else None)
        if snapshot_id is not None:
            snap = S.snapshot_by_id(md, snapshot_id)
        elif version is not None:
            snap = snapshot_at_version(md, version)
        else:
            snap = S.current_snapshot(md)
        if snap is None:
            raise InvalidTable(f"cannot create {kind} {name!r}: there is no snapshot at that version", rule="ICEBERG-REF-006")
        refs = dict(md.refs)
        refs[name] = M.SnapshotRef(snapshot_id=snap.snapshot_id, type=kind)
        return replace(md, refs=MappingProxyType(refs))

    return _metadata_commit(storage, catalog, fn)


def _files_of(storage: Storage, md: M.TableMetadata, snap: M.Snapshot, *, live_only: bool) -> set[str]:
    """Root-relative paths a snapshot references: its manifest list, manifests and (live, or all) entries' files."""
    out: set[str] = set()
    if snap.manifest_list:
        out.add(storage.resolve(snap.manifest_list))
    for mf in S.snapshot_manifests(storage, snap):
        out.add(storage.resolve(mf.manifest_path))
        try:
            entries = _read_manifest(storage, md, mf).entries
        except InvalidTable:
            continue
        out.update(storage.resolve(e.data_file.file_path) for e in entries if e.is_live or not live_only)
    return out


def expire_snapshots(location: str | Storage, retain_last: int = 1, *, delete_files: bool = True,
                     catalog: Catalog | None = None) -> CommitResult:
    """Expire every main-history snapshot but the newest ``retain_last`` and those a ref points at (REF-008, simplified);
    trims snapshot-log before the last expired entry (META-034) and drops their statistics; then deletes files only
    the expired snapshots used (META-032: never a file a listed snapshot still needs)."""
    storage = W._storage(location)
    if isinstance(retain_last, bool) or not isinstance(retain_last, int) or retain_last < 1:
        raise InvalidTable(f"retain_last must be an int >= 1, got {retain_last!r}")
    doomed: dict[str, Any] = {}

    def fn(md: M.TableMetadata) -> M.TableMetadata | None:
        doomed.clear()
        if md.current_snapshot_id is None:
            return None
        chain = list(S.ancestors(md, md.current_snapshot_id))
        protected = {r.snapshot_id for r in md.effective_refs().values()}
        expired = {s.snapshot_id for s in chain[retain_last:] if s.snapshot_id not in protected}
        if not expired:
            return None
        snapshots = tuple(s for s in md.snapshots if s.snapshot_id not in expired)
        keep_ids = {s.snapshot_id for s in snapshots}
        log = md.snapshot_log
        last_gone = max((i for i, e in enumerate(log) if e.snapshot_id not in keep_ids), default=-1)
        out = replace(md, snapshots=snapshots, snapshot_log=log[last_gone + 1 :],
                      statistics=tuple(s for s in md.statistics if s.snapshot_id in keep_ids),
                      partition_statistics=tuple(s for s in md.partition_statistics if s.snapshot_id in keep_ids))
        doomed["before"] = md
        doomed["after"] = out
        return out

    def on_success(final: M.TableMetadata) -> None:
        if not delete_files or "after" not in doomed:
            return  # nothing expired (doomed is what the committed attempt built)
        before, after = doomed["before"], doomed["after"]
        kept_ids = {s.snapshot_id for s in after.snapshots}
        needed: set[str] = set()
        for s in after.snapshots:
            needed |= _files_of(storage, after, s, live_only=True)
        for st in after.statistics:
            needed.add(storage.resolve(st.statistics_path))
        for st in after.partition_statistics:
            needed.add(storage.resolve(st.statistics_path))
        candidates: set[str] = set()
        for s in before.snapshots:
            if s.snapshot_id not in kept_ids:
                candidates |= _files_of(storage, before, s, live_only=False)
        for st in before.statistics + tuple(before.partition_statistics):
            if st.snapshot_id not in kept_ids:
                candidates.add(storage.resolve(st.statistics_path))
        for path in sorted(candidates - needed):
            try:
                storage.delete(path)
            except OSError:
                pass

    return _metadata_commit(storage, catalog, fn, on_success=on_success)
