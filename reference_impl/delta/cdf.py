"""Reader Requirements for AddCDCFile: the change data feed of a range of versions.

For each version: if it has ``cdc`` actions, its changes are exactly the rows of those change
data files (their ``_change_type`` column says what each row is); otherwise rows of added files
(``dataChange=true``) are inserts and rows of removed files are deletes (DELTA-CDF-004/005). When
one commit removes ``(path, dvA)`` and adds ``(path, dvB)`` (a deletion vector replaced without
change data files), only the rows whose deletion state differs are reported, which is what the
pair means logically. Every row gets ``_commit_version`` (from the commit file name) and
``_commit_timestamp`` (in-commit timestamp when enabled, else the commit file's modification time,
DELTA-CDF-006). Rows are read and projected through the schema of the last version of the range.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa

from reference_impl.delta.actions import AddCDCFile, AddFile, RemoveFile, parse_commit
from reference_impl.delta.log import commit_path
from reference_impl.delta.schema import to_arrow_schema
from reference_impl.delta.writer import (
    CHANGE_DELETE,
    CHANGE_INSERT,
    CHANGE_TYPE_COLUMN,
    CHANGE_UPDATE_POSTIMAGE,
    CHANGE_UPDATE_PREIMAGE,
    read_logical_file,
)
from reference_impl.errors import InvalidTable
from reference_impl.storage import Storage, open_storage

COMMIT_VERSION_COLUMN = "_commit_version"
COMMIT_TIMESTAMP_COLUMN = "_commit_timestamp"
CHANGE_TYPES = frozenset({CHANGE_INSERT, CHANGE_DELETE, CHANGE_UPDATE_PREIMAGE, CHANGE_UPDATE_POSTIMAGE})


def _storage(location: str | Storage) -> Storage:
    return location if isinstance(location, Storage) else open_storage(str(location))


def _deleted(storage: Storage, file) -> set[int]:
    if file.deletion_vector is None:
        return set()
    from reference_impl.delta.deletion_vector import load_deleted_rows

    return {int(x) for x in np.asarray(load_deleted_rows(storage, file.deletion_vector))}


def _tag(table: pa.Table, kind: str) -> pa.Table:
    return table.append_column(pa.field(CHANGE_TYPE_COLUMN, pa.string()), pa.array([kind] * table.num_rows, pa.string()))


def _version_changes(storage: Storage, version: int, actions: list, metadata, previous_files) -> list[pa.Table]:
    cdcs = [a for a in actions if isinstance(a, AddCDCFile)]
    if cdcs:
        out = []
        for cdc in cdcs:
            rows, _ = read_logical_file(storage, metadata, cdc, apply_dv=False, extra_columns=[CHANGE_TYPE_COLUMN])
            if CHANGE_TYPE_COLUMN not in rows.column_names:
                raise InvalidTable(f"change data file {cdc.path!r} has no {CHANGE_TYPE_COLUMN} column", version=version, rule="DELTA-CDF-002")
            kinds = set(rows.column(CHANGE_TYPE_COLUMN).to_pylist())
            bad = kinds - CHANGE_TYPES
            if bad:
                raise InvalidTable(
                    f"change data file {cdc.path!r} has {CHANGE_TYPE_COLUMN} values {sorted(map(str, bad))}",
                    version=version,
                    rule="DELTA-CDF-002",
                )
            out.append(rows)
        return out
    adds = {a.path: a for a in actions if isinstance(a, AddFile) and a.data_change}
    removes = {r.path: r for r in actions if isinstance(r, RemoveFile) and r.data_change}
    out = []
    for path, remove in removes.items():
        if remove.partition_values is None:
            # Not extended file metadata: the partition values are those of the live add it removes.
            known = previous_files().get(path)
            if known is None:
                raise InvalidTable(f"remove of {path!r} has no partitionValues and no earlier add names it", version=version)
            remove = dataclasses.replace(remove, partition_values=known.partition_values)
        if path in adds:
            # A deletion vector replaced: report only rows whose deleted state changed.
            add = adds.pop(path)
            rows, positions = read_logical_file(storage, metadata, add, apply_dv=False)
            before, after = _deleted(storage, remove), _deleted(storage, add)
            newly = np.array([p in after and p not in before for p in positions.tolist()], dtype=bool)
            restored = np.array([p in before and p not in after for p in positions.tolist()], dtype=bool)
            if newly.any():
                out.append(_tag(rows.filter(pa.array(newly)), CHANGE_DELETE))
            if restored.any():
                out.append(_tag(rows.filter(pa.array(restored)), CHANGE_INSERT))
            continue
        rows, _ = read_logical_file(storage, metadata, remove)
        out.append(_tag(rows, CHANGE_DELETE))
    for add in adds.values():
        rows, _ = read_logical_file(storage, metadata, add)
        out.append(_tag(rows, CHANGE_INSERT))
    return out


def _project(table: pa.Table, schema: pa.Schema) -> pa.Table:
    columns = []
    for field in schema:
        if field.name in table.column_names:
            col = table.column(field.name)
            if not col.type.equals(field.type):
                try:
                    col = col.cast(field.type)
                except (pa.ArrowException, ValueError) as exc:
                    raise InvalidTable(f"change rows of column {field.name!r} ({col.type}) do not fit {field.type}: {exc}") from None
            columns.append(col)
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def table_changes(location: str | Storage, start_version: int = 0, end_version: int | None = None) -> pa.Table:
    """Row-level changes of versions ``start_version..end_version`` (inclusive; latest by default)."""
    from reference_impl.delta.table import Snapshot, commit_timestamps

    storage = _storage(location)
    last = Snapshot.load(storage, version=end_version)
    end = last.version
    if not isinstance(start_version, int) or start_version < 0 or start_version > end:
        raise InvalidTable(f"start version {start_version!r} is not within 0..{end}")
    data_schema = pa.schema([pa.field(f.name, f.type) for f in to_arrow_schema(last.schema)])
    out_schema = pa.schema(
        list(data_schema)
        + [
            pa.field(CHANGE_TYPE_COLUMN, pa.string()),
            pa.field(COMMIT_VERSION_COLUMN, pa.int64()),
            pa.field(COMMIT_TIMESTAMP_COLUMN, pa.timestamp("us", tz="UTC")),
        ]
    )
    timestamps = commit_timestamps(storage)
    pieces = []
    for version in range(start_version, end + 1):
        try:
            raw = storage.read(commit_path(version))
        except FileNotFoundError:
            raise InvalidTable(f"commit {version} is missing: its changes cannot be read", version=version, rule="DELTA-LOG-001") from None
        actions = parse_commit(raw, version=version, path=commit_path(version))

        def previous_files(v: int = version) -> dict:
            return {} if v == 0 else {f.path: f for f in Snapshot.load(storage, version=v - 1).files}

        # Files are read through the last version's metadata: under column mapping physical names
        # survive renames, so old rows land in the renamed columns; otherwise columns match by name.
        for rows in _version_changes(storage, version, actions, last.metadata, previous_files):
            n = rows.num_rows
            kinds = rows.column(CHANGE_TYPE_COLUMN)
            body = _project(rows.drop_columns([CHANGE_TYPE_COLUMN]), data_schema)
            ts = timestamps.get(version)
            body = body.append_column(out_schema.field(CHANGE_TYPE_COLUMN), kinds.cast(pa.string()))
            body = body.append_column(out_schema.field(COMMIT_VERSION_COLUMN), pa.array([version] * n, pa.int64()))
            body = body.append_column(
                out_schema.field(COMMIT_TIMESTAMP_COLUMN),
                pa.array([None if ts is None else ts * 1000] * n, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            )
            pieces.append(body)
    if not pieces:
        return out_schema.empty_table()
    return pa.concat_tables(pieces)


__all__ = ["table_changes", "COMMIT_VERSION_COLUMN", "COMMIT_TIMESTAMP_COLUMN", "CHANGE_TYPES"]
