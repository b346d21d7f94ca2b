"""Snapshots and reads: the reference reader of a Delta table at one version.

A ``Snapshot`` is the reconciled state of one version after its protocol has been checked. Its
``read`` returns the logical rows: each live data file read from storage with pyarrow, columns
resolved through column mapping, rows in deletion vectors dropped, partition columns filled from
``add.partitionValues`` (never from directory names, DELTA-LOG-003), void columns as null.
Time travel by timestamp uses in-commit timestamps where the table enables them and commit-file
modification times elsewhere (In-Commit Timestamps, reader recommendations).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from reference_impl.delta.actions import AddFile, CommitInfo, Metadata, Protocol, parse_commit
from reference_impl.delta.log import LOG_DIR, LogSegment, build_segment, list_log
from reference_impl.delta.protocol import (
    IN_COMMIT_TIMESTAMP,
    PROP_ENABLE_ICT,
    PROP_ICT_ENABLEMENT_TIMESTAMP,
    PROP_ICT_ENABLEMENT_VERSION,
    TYPE_WIDENING,
    TYPE_WIDENING_PREVIEW,
    check_readable,
    check_type_changes,
    is_feature_supported,
)
from reference_impl.common.gcpause import gc_paused
from reference_impl.delta.replay import SnapshotState, replay
from reference_impl.common.timestamps import to_epoch_ms
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported
from reference_impl.storage import Storage, open_storage
from reference_impl.parquet_io import open_parquet, read_parquet


def _rewrap(exc: LakeconfError, message: str, **context) -> LakeconfError:
    """The same kind of error with more context (keeps Unsupported.feature)."""
    context.setdefault("rule", exc.rule)
    if isinstance(exc, Unsupported):
        return Unsupported(message, feature=exc.feature, **context)
    return type(exc)(message, **context)


def _storage(location: str | Storage) -> Storage:
    return location if isinstance(location, Storage) else open_storage(location)


def _ict_enabled(protocol: Protocol, metadata: Metadata) -> bool:
    value = metadata.configuration.get(PROP_ENABLE_ICT, "")
    return is_feature_supported(protocol, IN_COMMIT_TIMESTAMP) and value.strip().lower() == "true"


def _int_prop(metadata: Metadata, key: str) -> int | None:
    raw = metadata.configuration.get(key)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidTable(f"table property {key} must be an integer, got {raw!r}", rule="DELTA-ICT-004") from None


def _first_commit_info(storage: Storage, version: int, path: str) -> CommitInfo | None:
    data = storage.read(path)
    # With ICT on, commitInfo is the first action (DELTA-ICT-002): parse only the first line.
    first = data.split(b"\n", 1)[0]
    for a in parse_commit(first, version=version, path=path):
        if isinstance(a, CommitInfo):
            return a
    return None


def _ict_of(storage: Storage, version: int, path: str) -> int:
    ci = _first_commit_info(storage, version, path)
    ict = None if ci is None else ci.in_commit_timestamp
    if ict is None:
        raise InvalidTable(f"commit {version} has no inCommitTimestamp in a leading commitInfo although in-commit "
                           f"timestamps are enabled from this version", path=path, version=version,
                           rule="DELTA-ICT-002")
    return ict


def _ict_window(snapshot_state: SnapshotState) -> tuple[int, int | None] | None:
    """(enablement version, enablement timestamp) when ICT is enabled, else None."""
    if not _ict_enabled(snapshot_state.protocol, snapshot_state.metadata):
        return None
    md = snapshot_state.metadata
    version = _int_prop(md, PROP_ICT_ENABLEMENT_VERSION)
    ts = _int_prop(md, PROP_ICT_ENABLEMENT_TIMESTAMP)
    return (0 if version is None else version), ts


def _latest_state(storage: Storage, listing) -> SnapshotState:
    # Only the newest metadata matters here (ICT enablement); the reader check happens when the
    # chosen version is loaded, so an unreadable newest version does not block older ones.
    return replay(storage, build_segment(storage, listing=listing))


def commit_timestamps(storage: Storage | str) -> dict[int, int]:
    """version -> commit timestamp in ms: ICT from the enablement version on, file mtime before."""
    storage = _storage(storage)
    listing = list_log(storage)
    window = _ict_window(_latest_state(storage, listing))
    out: dict[int, int] = {}
    for v in sorted(listing.commits):
        info = listing.commits[v]
        if window is not None and v >= window[0]:
            out[v] = _ict_of(storage, v, info.path)
        else:
            out[v] = info.modification_time
    return out


def version_at_timestamp(storage: Storage | str, timestamp: int | str | dt.datetime) -> int:
    """The newest version whose commit timestamp is <= ``timestamp`` (DELTA-ICT-006/007)."""
    storage = _storage(storage)
    target = to_epoch_ms(timestamp)
    listing = list_log(storage)
    window = _ict_window(_latest_state(storage, listing))
    versions = sorted(listing.commits)
    if window is not None:
        enable_version, enable_ts = window
        if enable_ts is None or target >= enable_ts:
            candidates = [v for v in versions if v >= enable_version]
            use_ict = True
        else:
            candidates = [v for v in versions if v < enable_version]
            use_ict = False
    else:
        candidates, use_ict = versions, False
    best = None
    for v in candidates:
        path = listing.commits[v].path
        ts = _ict_of(storage, v, path) if use_ict else listing.commits[v].modification_time
        if ts <= target:
            best = v
        elif use_ict:
            break  # in-commit timestamps strictly increase (DELTA-ICT-003)
    if best is None:
        raise InvalidTable(f"no version of the table was committed at or before timestamp {target} ms",
                           path=storage.uri(LOG_DIR), hint="the earliest retained commit is newer")
    return best


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """A frozen view of one version of a table."""

    storage: Storage
    state: SnapshotState
    segment: LogSegment | None = None
    _files: list | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, location: str | Storage, *, version: int | None = None,
             timestamp: int | str | dt.datetime | None = None) -> "Snapshot":
        """Load the latest version, a version number, or the version current at ``timestamp``."""
        storage = _storage(location)
        if version is not None and timestamp is not None:
            raise InvalidTable("give a version or a timestamp, not both")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            raise InvalidTable(f"version must be an integer, got {version!r}")
        if timestamp is not None:
            version = version_at_timestamp(storage, timestamp)
        segment = build_segment(storage, version)
        state = replay(storage, segment)
        check_readable(state.protocol)
        md = state.metadata
        if md.format.provider.lower() != "parquet":
            raise Unsupported(f"data files in format {md.format.provider!r}; the reference reads parquet only",
                              feature=f"format:{md.format.provider}", version=state.version)
        try:
            md.schema  # parse now, so a bad schemaString fails the load, not a later read
        except LakeconfError as exc:
            raise _rewrap(exc, f"metaData.schemaString: {exc.message}", version=state.version,
                          path=exc.path) from None
        if is_feature_supported(state.protocol, TYPE_WIDENING) or \
                is_feature_supported(state.protocol, TYPE_WIDENING_PREVIEW):
            check_type_changes(md)
        snapshot = cls(storage=storage, state=state, segment=segment)
        # A remove that points outside the root cannot match the add it was meant to cancel, so
        # that file would come back to life: refuse the table instead (only paths that could
        # escape, a dot-dot, an absolute path, a URI or an escape, are worth resolving).
        for path, _dv in state.tombstones:
            if ".." in path or ":" in path or "%" in path or path.startswith("/"):
                snapshot.resolve_path(path)
        return snapshot

    @property
    def version(self) -> int:
        """The snapshot's table version."""
        return self.state.version

    @property
    def protocol(self) -> Protocol:
        """The protocol in effect."""
        return self.state.protocol

    @property
    def metadata(self) -> Metadata:
        """The metadata in effect."""
        return self.state.metadata

    @property
    def schema(self):
        """The logical schema (``schema.StructType``)."""
        return self.state.metadata.schema

    @property
    def files(self) -> list[AddFile]:
        """Live logical files, sorted by (path, dvId)."""
        cached = self._files
        if cached is None:
            with gc_paused():
                files = self.state.files
                keys = list(files.keys())
                values = list(files.values())  # same order as keys (dict and FileMap alike)
                try:
                    # keys are unique, so tuples only compare their dvIds when paths are equal
                    order = sorted(range(len(keys)), key=keys.__getitem__)
                except TypeError:  # one path with and without a DV (invalid, but readable)
                    order = sorted(range(len(keys)), key=lambda i: (keys[i][0], keys[i][1] or ""))
                cached = [values[i] for i in order]
            object.__setattr__(self, "_files", cached)
        return list(cached)

    def file_paths(self) -> list[str]:
        """The paths of the live files as the log gives them, sorted, without building their AddFile
        objects (a checkpoint's adds stay columnar: ``replay.FileMap``)."""
        return sorted(path for path, _dv in self.state.files.keys())

    @property
    def column_mapping_mode(self) -> str:
        """none / id / name, honouring the property only when the protocol supports it."""
        from reference_impl.delta.column_mapping import mapping_mode

        return mapping_mode(self.metadata.configuration, self.protocol)

    def resolve_path(self, path: str) -> str:
        """An add/remove path (RFC 2396 URI) -> root-relative storage path (DELTA-ACTION-017)."""
        try:
            return self.storage.resolve(unquote(path))
        except InvalidTable as exc:
            raise InvalidTable(f"data file path {path!r}: {exc.message}", path=path, version=self.version,
                               rule="DELTA-ACTION-017") from None

    def _read_file(self, add: AddFile, only: set[str] | None = None) -> pa.Table:
        """The raw data file; with ``only`` (top-level physical names) just those columns."""
        rel = self.resolve_path(add.path)
        try:
            data = self.storage.read(rel)
        except (FileNotFoundError, IsADirectoryError):
            raise InvalidTable("data file referenced by the log is missing", path=self.storage.uri(rel),
                               version=self.version, rule="DELTA-ACTION-018") from None
        try:
            pf = open_parquet(data)
            if only is None:
                return read_parquet(pf)
            return read_parquet(pf, [n for n in pf.schema_arrow.names if n in only])
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InvalidTable(f"data file is not readable parquet: {exc}", path=self.storage.uri(rel),
                               version=self.version) from None

    def _drop_deleted(self, add: AddFile, table: pa.Table) -> pa.Table:
        if add.deletion_vector is None:
            return table
        from reference_impl.delta.deletion_vector import load_deleted_rows

        try:
            deleted = np.asarray(load_deleted_rows(self.storage, add.deletion_vector), dtype=np.uint64)
        except FileNotFoundError:
            raise InvalidTable("deletion vector file is missing", path=add.path, version=self.version,
                               rule="DELTA-DV-006") from None
        except LakeconfError as exc:
            raise _rewrap(exc, f"deletion vector of {add.path!r}: {exc.message}", path=exc.path or add.path,
                          version=self.version) from None
        n = table.num_rows
        if deleted.size and int(deleted.max()) >= n:
            raise InvalidTable(f"deletion vector of {add.path!r} deletes row {int(deleted.max())} but the file has "
                               f"{n} rows", path=add.path, version=self.version, rule="DELTA-DV-015")
        keep = np.ones(n, dtype=bool)
        keep[deleted.astype(np.int64)] = False
        return table.filter(pa.array(keep))

    def read(self, columns: list[str] | None = None) -> pa.Table:
        """The logical rows of this version (selected ``columns`` in schema order)."""
        from reference_impl.delta.column_mapping import physical_name, read_file_columns
        from reference_impl.delta.partition import parse_partition_value
        from reference_impl.delta.schema import StructType, to_arrow_schema, to_arrow_type

        schema = self.schema
        mode = self.column_mapping_mode
        if columns is not None:
            unknown = [c for c in columns if schema.get(c) is None]
            if unknown:
                raise InvalidTable(f"unknown column(s) {', '.join(map(repr, unknown))}; the schema has "
                                   f"{', '.join(schema.names)}", version=self.version)
            wanted = set(columns)
            fields = [f for f in schema.fields if f.name in wanted]
        else:
            fields = list(schema.fields)
        out_schema = to_arrow_schema(StructType(fields=tuple(fields)))
        part_cols = set(self.metadata.partition_columns)
        for name in part_cols:
            if schema.get(name) is None:
                raise InvalidTable(f"partition column {name!r} is not in the schema", version=self.version)
        data_names = [f.name for f in fields if f.name not in part_cols]
        part_fields = [(f, physical_name(f, mode), to_arrow_type(f.type)) for f in fields if f.name in part_cols]
        # Read only the needed columns when names identify them (not in id mode, where the
        # file's field ids decide and a column may sit under any name).
        only = None
        if columns is not None and mode != "id":
            only = {physical_name(f, mode) for f in fields if f.name not in part_cols}
        pieces = []
        for add in self.files:
            raw = self._drop_deleted(add, self._read_file(add, only))
            n = raw.num_rows
            try:
                projected = read_file_columns(raw, schema, mode, data_names)
            except LakeconfError as exc:
                raise _rewrap(exc, f"data file {add.path!r}: {exc.message}", path=add.path,
                              version=self.version) from None
            cols = {name: projected.column(name) for name in data_names}
            for f, pname, atype in part_fields:
                if pname not in add.partition_values:
                    raise InvalidTable(f"file {add.path!r} has no partition value for column {f.name!r}",
                                       path=add.path, version=self.version, rule="DELTA-WRITER-003")
                try:
                    value = parse_partition_value(add.partition_values[pname], f.type)
                except LakeconfError as exc:
                    raise _rewrap(exc, f"partition value of {f.name!r} in {add.path!r}: {exc.message}",
                                  path=add.path, version=self.version) from None
                cols[f.name] = pa.nulls(n, atype) if value is None else pa.repeat(pa.scalar(value, atype), n)
            try:
                arrays = [c if c.type == t else c.cast(t) for c, t in
                          zip((cols[f.name] for f in fields), out_schema.types)]
                pieces.append(pa.Table.from_arrays(arrays, schema=out_schema))
            except (pa.ArrowException, ValueError, TypeError) as exc:
                raise InvalidTable(f"data file {add.path!r} does not match the table schema: {exc}",
                                   path=add.path, version=self.version, rule="DELTA-WRITER-002") from None
        if not pieces:
            return out_schema.empty_table()
        return pa.concat_tables(pieces)


def read_table(location: str | Storage, *, version: int | None = None,
               timestamp: int | str | dt.datetime | None = None, columns: list[str] | None = None) -> pa.Table:
    """The logical rows of a table version (latest by default)."""
    return Snapshot.load(location, version=version, timestamp=timestamp).read(columns)
