"""Reading a Hudi table (spec: Query Types, Reader Expectations, Record Merging; Java HoodieFileGroupReader,
FileGroupRecordBuffer, BufferedRecordMergerFactory, HoodieMergedLogRecordScanner, DefaultHoodieRecordPayload,
OverwriteWithLatestAvroPayload; hudi-rs table, file_group/reader, merge).

Queries (HUDI-TABLE-003/004/005):

* snapshot: per visible file group the latest (merged) slice of ``fileslices``; a copy-on-write slice is its base
  file, a merge-on-read slice its base file merged with its log blocks;
* read-optimized: the latest base files only (a MOR table's state as of its last compactions);
* time travel: a snapshot at a requested time (``as_of``: instants requested at or before it), or, for v8+,
  at a completion time (``as_of_completion``);
* incremental over ``(begin, end]``: the write instants whose commit time lies in the range (completion time in
  v8+, requested time in v6, as Java's incremental relations pick them), and of the snapshot at the end of the
  range the records whose ``_hoodie_commit_time`` is one of those instants: the latest state of each record
  written in the range.

Log blocks of a slice are read as one sequence across its log files, in slice order; corrupt blocks, blocks of
instants not visible at the read point and blocks a rollback command block retracts are dropped
(``logfile.valid_blocks``; HUDI-LOG-007/009/011). Records merge by ``_hoodie_record_key``, older to newer (base
file, then blocks in order), under the table's merge mode (``TableConfig.merge_mode``, HUDI-LAYOUT-009):

* COMMIT_TIME_ORDERING (also v6 ``OverwriteWithLatestAvroPayload``): the later write wins, deletes included;
* EVENT_TIME_ORDERING (also ``DefaultHoodieRecordPayload``, ``EventTimeAvroPayload``): the newer record wins when
  its ordering value is at least the older one's (ties: the later write); a record with a null ordering value
  counts as lowest. A delete carries an ordering value: a delete whose value is the natural-order default
  (the int 0 Java writes for a plain DELETE, or null) always wins; otherwise it loses only to a record of the
  same ordering type with a strictly greater value (``BufferedRecordMergerFactory.EventTimeRecordMerger``).
* A data record with ``_hoodie_is_deleted`` true is a delete carrying the record's own ordering value.
* CUSTOM merge modes and other payload classes are Unsupported.

The schema is the Avro schema of the latest write visible at the read point that recorded one (HUDI-COMMIT-003),
mapped to Arrow (``avro_schema``) after the five meta columns. Base files are Parquet, read by column name; a
column missing from a file reads as null. A schema-on-read table (an InternalSchema history in ``.hoodie/.schema``,
``internal_schema``) is read by field id instead: each base file and log block with the schema version of its
instant, merged into the version at the read point (HUDI-EVOLR-017).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import avro_schema as AS
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import evolution as EV
from reference_impl.hudi import fileslices as FS
from reference_impl.hudi import internal_schema as IS
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import naming as N
from reference_impl.hudi import properties as P
from reference_impl.hudi import timeline as T
from reference_impl.parquet_io import read_parquet
from reference_impl.storage import Storage, open_storage

SNAPSHOT = "snapshot"
READ_OPTIMIZED = "read_optimized"
INCREMENTAL = "incremental"
QUERY_TYPES = (SNAPSHOT, READ_OPTIMIZED, INCREMENTAL)
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
_DATA_ACTIONS = (T.COMMIT, T.DELTA_COMMIT, T.REPLACE_COMMIT)


def _storage(location: str | Storage) -> Storage:
    return location if isinstance(location, Storage) else open_storage(location)


# ---------------------------------------------------------------------------------------------
# Table state


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadState:
    """What a read works from: config, view at the read point, the instant read and the Arrow schema."""

    storage: Storage
    config: P.TableConfig
    view: FS.FileSystemView
    instant: T.Instant | None  # the latest write visible at the read point (None: nothing committed)
    schema: pa.Schema | None  # meta columns first; None when no commit recorded a schema
    evolution: "SchemaOnRead | None" = None  # set for schema-on-read tables


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaOnRead:
    """A schema-on-read table's history and the version a read resolves every file into."""

    history: IS.History
    query: IS.InternalSchema

    def file_schema(self, instant: str | None) -> IS.InternalSchema:
        """The version a file (base file or log block) of ``instant`` was written with."""
        if not instant or not instant.isdigit():
            return self.query
        return self.history.at(instant) or self.query


def schema_on_read(storage: Storage, timeline: T.Timeline, instant: T.Instant | None) -> SchemaOnRead | None:
    """The InternalSchema history as of the read instant, None when the table keeps none (not schema-on-read)."""
    if instant is None:
        return None
    completed = [i.requested_time for i in timeline.completed()]
    history = IS.read_history(storage, completed, before=instant.requested_time)
    if not history:
        return None
    meta = CM.read_instant_metadata(storage, timeline, instant)
    text = meta.extra_metadata.get(IS.LATEST_SCHEMA) if isinstance(meta, CM.CommitMetadata) else None
    # The commit's own latest_schema is the version its readers resolve into; the history's is the fallback.
    query = IS.parse(text, path=storage.uri(f"{timeline.directory}/{instant.file_name}")) if text \
        else history.at(instant.requested_time)
    return SchemaOnRead(history=history, query=query)


def _visible_writes(view: FS.FileSystemView) -> list[T.Instant]:
    """Completed data-writing instants visible at the view's read point, in commit order."""
    return [i for i in view.timeline.completed_in_commit_order()
            if i.action in _DATA_ACTIONS and view.visible(i.requested_time)]


def _schema_at(storage: Storage, view: FS.FileSystemView, writes: Sequence[T.Instant],
               config: P.TableConfig | None = None) -> pa.Schema | None:
    """The schema of the latest visible write that recorded one; else the schema the table was created with
    (``hoodie.table.create.schema``, as Java's TableSchemaResolver falls back to it); else None."""
    for inst in reversed(writes):
        meta = CM.read_instant_metadata(storage, view.timeline, inst)
        if isinstance(meta, CM.CommitMetadata) and meta.schema:
            return AS.table_arrow_schema(meta.schema, path=storage.uri(f"{view.timeline.directory}/{inst.file_name}"))
    return create_schema(config) if config is not None else None


def create_schema(config: P.TableConfig) -> pa.Schema | None:
    """``hoodie.table.create.schema`` as Arrow (meta columns first), None when the table does not record one."""
    text = config.properties.get(P.CREATE_SCHEMA)
    return AS.table_arrow_schema(text, path=f".hoodie/{P.PROPERTIES_FILE}") if text else None


def open_state(location: str | Storage, *, as_of: str | None = None, as_of_completion: str | None = None,
               check: bool = True, listing: Sequence[Any] | None = None) -> ReadState:
    """The table at a read point: the latest state, a requested time (``as_of``) or a completion time (v8+).

    A time-travel point is checked (``check_time_travel``) unless ``check`` is false.
    """
    storage = _storage(location)
    config = P.read_table_config(storage)
    if config.drop_partition_columns:
        raise Unsupported("tables written with hoodie.datasource.write.drop.partition.columns=true are not read: "
                          "their partition values live only in the paths", feature="hudi-drop-partition-columns",
                          rule="HUDI-LAYOUT-014")
    if config.base_file_format.upper() != "PARQUET":
        raise Unsupported(f"base file format {config.base_file_format} is not read; Parquet is",
                          feature=f"base-file-format:{config.base_file_format.lower()}", rule="HUDI-LAYOUT-010")
    if not config.populate_meta_fields:
        raise Unsupported("tables without meta fields (hoodie.populate.meta.fields=false, virtual keys) are not read",
                          feature="hudi-virtual-keys", rule="HUDI-META-006")
    timeline = T.load_active_timeline(storage, config)
    if check and (as_of is not None or as_of_completion is not None):
        check_time_travel(storage, timeline, as_of or as_of_completion)
    view = FS.build_view(storage, config, timeline, point=FS.ReadPoint(as_of=as_of, as_of_completion=as_of_completion),
                         listing=listing)
    writes = _visible_writes(view)
    instant = writes[-1] if writes else None
    return ReadState(storage=storage, config=config, view=view, instant=instant,
                     schema=_schema_at(storage, view, writes, config),
                     evolution=schema_on_read(storage, timeline, instant))


def check_time_travel(storage: Storage, timeline: T.Timeline, instant: str) -> None:
    """Refuse a time-travel read that would return partial data (``TimelineUtils.validateTimestampAsOf``).

    The read point must precede the first pending write (other than a compaction): the state at or after it is
    not settled. And it must not precede the latest clean's ``earliestCommitToRetain``: the slices it needs
    may be deleted (HUDI-FILE-016).
    """
    T.check_instant_time(instant, "read instant")
    pending = [i for i in timeline.pending() if i.action in (T.COMMIT, T.DELTA_COMMIT, T.REPLACE_COMMIT, T.CLUSTERING,
                                                             T.LOG_COMPACTION)]
    if pending and instant >= pending[0].requested_time:
        raise InvalidTable(f"time travel to {instant} must precede the first incomplete write "
                           f"{pending[0].requested_time}", rule="HUDI-TIMELINE-019")
    cleans = [i for i in timeline.completed() if i.action == T.CLEAN]
    if cleans:
        meta = CM.read_instant_metadata(storage, timeline, cleans[-1])
        retain = meta.earliest_commit_to_retain if isinstance(meta, CM.CleanMetadata) else None
        if retain and instant < retain:
            raise InvalidTable(f"time travel to {instant}: the cleaner removed the files of instants before {retain}",
                               rule="HUDI-FILE-016", hint="only instants at or after the latest clean's "
                               "earliestCommitToRetain can be read")


# ---------------------------------------------------------------------------------------------
# Base files and log blocks


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table``'s columns by name in ``schema``'s order and types; absent columns as nulls."""
    cols = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            if col.type != f.type:
                # A column written before a promotion / ALTER TYPE: Hudi's conversions (Java's spellings for
                # float/double -> string, float -> double via Float.toString, string -> date/decimal with nulls
                # for unparseable text), which Arrow's cast does not all reproduce.
                try:
                    col = EV.convert(col, f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, InvalidTable) as exc:
                    raise InvalidTable(f"column {f.name} of type {col.type} does not read as {f.type}: {exc}",
                                       rule="HUDI-COMMIT-003") from None
            cols.append(col)
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    loose = pa.schema([f.with_nullable(True) for f in schema])
    return pa.Table.from_arrays(cols, schema=loose)


def _by_id(table: pa.Table, schema: pa.Schema, evolution: SchemaOnRead | None, instant: str | None) -> pa.Table:
    """A schema-on-read file's columns resolved into the read's schema by field id (unchanged otherwise)."""
    if evolution is None:
        return table
    return IS.merge(table, evolution.file_schema(instant), evolution.query, schema, keep=AS.META_COLUMNS)


def read_base_file(storage: Storage, base: FS.BaseFile, schema: pa.Schema,
                   evolution: SchemaOnRead | None = None) -> pa.Table:
    """The rows of a Parquet base file, conformed to ``schema`` (by field id for a schema-on-read table)."""
    try:
        data = storage.read(base.path)
    except FileNotFoundError:
        raise InvalidTable(f"base file {base.path} is listed but gone", path=storage.uri(base.path),
                           rule="HUDI-FILE-016") from None
    try:
        table = read_parquet(data)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidTable(f"base file is not readable Parquet: {exc}", path=storage.uri(base.path),
                           rule="HUDI-FILE-004") from None
    return _conform(_by_id(table, schema, evolution, base.instant), schema)


def slice_blocks(state: ReadState, piece: FS.FileSlice) -> list[LF.LogBlock]:
    """The blocks a reader merges for one slice: its logs' blocks in order, invalid and retracted ones dropped."""
    blocks: list[LF.LogBlock] = []
    for lg in piece.log_files:
        blocks.extend(LF.load_log_file(state.storage, lg.path))
    return LF.valid_blocks(blocks, committed=state.view.visible)


# ---------------------------------------------------------------------------------------------
# Merging


@dataclass(slots=True)
class _Version:
    """One version of a record while merging: its row (None for a delete) and ordering."""

    row: dict | None
    ordering: Any  # tuple of ordering values, None when null
    ordering_type: str | None = None  # Avro type name of a delete's ordering value
    natural: bool = False  # a delete in natural (commit) order: the int 0 / null ordering of a plain DELETE


def _ordering_of(row: Mapping[str, Any], fields: Sequence[str]) -> Any:
    values = tuple(row.get(f) for f in fields)
    return None if any(v is None for v in values) else values


def _less(a: Any, b: Any) -> bool:
    """``a < b`` for ordering tuples, a null lowest; values that do not compare do not order (False)."""
    if a is None:
        return b is not None
    if b is None:
        return False
    try:
        return a < b
    except TypeError:
        return False


def _avro_type_name(avro_type: Any) -> str | None:
    """The primitive (or logical) name of an Avro field type, nulls stripped from a union."""
    if isinstance(avro_type, list):
        rest = [t for t in avro_type if t != "null"]
        return _avro_type_name(rest[0]) if len(rest) == 1 else None
    if isinstance(avro_type, dict):
        return avro_type.get("logicalType") or _avro_type_name(avro_type.get("type"))
    return avro_type if isinstance(avro_type, str) else None


class Merger:
    """Merges versions of records, older to newer, by record key under one merge mode."""

    def __init__(self, mode: str, ordering_fields: Sequence[str], ordering_type: str | None = None) -> None:
        if mode not in (COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING):
            raise Unsupported(f"record merge mode {mode} (a custom payload or merger) is not read by the reference",
                              feature=f"hudi-merge-mode:{mode}", rule="HUDI-LAYOUT-009")
        if mode == EVENT_TIME_ORDERING and not ordering_fields:
            mode = COMMIT_TIME_ORDERING  # Java: event time without an ordering field orders by commit
        self.mode, self.fields, self.ordering_type = mode, tuple(ordering_fields), ordering_type
        self.records: dict[str, _Version] = {}

    def _newer_wins(self, old: _Version, new: _Version) -> bool:
        if self.mode == COMMIT_TIME_ORDERING or new.natural or old.natural:
            return True
        if new.row is None and new.ordering_type is not None and self.ordering_type is not None \
                and new.ordering_type != self.ordering_type:
            return True  # Java compares ordering values of the same class only; otherwise the delete wins
        return not _less(new.ordering, old.ordering)

    def _put(self, key: str, new: _Version) -> None:
        old = self.records.get(key)
        if old is None or self._newer_wins(old, new):
            self.records[key] = new

    def add_row(self, row: dict) -> None:
        """A data record (a delete when ``_hoodie_is_deleted`` is true)."""
        key = row.get(AS.RECORD_KEY)
        if key is None:
            raise InvalidTable("a record has no _hoodie_record_key", rule="HUDI-META-004")
        deleted = row.get(AS.IS_DELETED) is True
        self._put(key, _Version(row=None if deleted else row, ordering=_ordering_of(row, self.fields)))

    def add_delete(self, rec: LF.DeleteRecord) -> None:
        """A tombstone of a delete block (HUDI-LOG-010)."""
        if rec.record_key is None:
            raise InvalidTable("a delete record has no record key", rule="HUDI-LOG-010")
        value = rec.ordering_value
        natural = value is None or (rec.ordering_type == "int" and value == 0)
        self._put(rec.record_key, _Version(row=None, ordering=None if value is None else (value,),
                                           ordering_type=rec.ordering_type, natural=natural))

    def rows(self) -> list[dict]:
        return [v.row for v in self.records.values() if v.row is not None]


def _block_rows(block: LF.LogBlock, schema: pa.Schema, evolution: SchemaOnRead | None = None) -> list[dict]:
    instant = block.header.get(LF.HeaderKey.INSTANT_TIME)
    if block.block_type is LF.BlockType.PARQUET_DATA:
        table = block.records
        if table is None:
            return []
        out = _conform(_by_id(table, schema, evolution, instant), schema).to_pylist()
        if AS.IS_DELETED in table.column_names and AS.IS_DELETED not in schema.names:
            for row, deleted in zip(out, table.column(AS.IS_DELETED).to_pylist()):
                if deleted is True:
                    row[AS.IS_DELETED] = True
        return out
    if block.block_type is LF.BlockType.AVRO_DATA:
        records = block.records or []
        # Values as the block's own writer schema types them, then conformed to the table's schema like a Parquet
        # block (a column promoted since, e.g. int -> string, reads converted, not as the old type).
        source = _block_schema(block, schema)
        typed = {f.name: f.type for f in source}
        # A schema-on-read block is taken in its own writer schema's names, then resolved by id.
        names = source if evolution is not None else schema
        cols = {f.name: [AS.to_arrow_value(rec.get(f.name), typed.get(f.name, f.type)) for rec in records]
                for f in names}
        table = pa.table({n: pa.array(v, typed.get(n, names.field(n).type)) for n, v in cols.items()})
        out = _conform(_by_id(table, schema, evolution, instant), schema).to_pylist()
        for row, rec in zip(out, records):
            if rec.get(AS.IS_DELETED) is True:
                row[AS.IS_DELETED] = True  # a delete even when the table schema lacks the column
        return out
    raise Unsupported(f"{block.block_type.name} data blocks are not read by the reference",
                      feature=f"hudi-log-block:{block.block_type.name.lower()}", rule="HUDI-LOG-004")


def _block_schema(block: LF.LogBlock, schema: pa.Schema) -> pa.Schema:
    """The Arrow schema of a data block's writer schema (its SCHEMA header), the table's when it has none."""
    if not block.schema:
        return schema
    return AS.table_arrow_schema(block.schema)


def _ordering_type(state: ReadState) -> str | None:
    fields = state.config.ordering_fields
    if len(fields) != 1:
        return None
    writes = _visible_writes(state.view)
    for inst in reversed(writes):
        meta = CM.read_instant_metadata(state.storage, state.view.timeline, inst)
        if isinstance(meta, CM.CommitMetadata) and meta.schema:
            node = AS.parse_avro_schema(meta.schema)
            for f in node.get("fields", []) if isinstance(node, dict) else []:
                if f.get("name") == fields[0]:
                    return _avro_type_name(f.get("type"))
            return None
    return None


def read_slice(state: ReadState, piece: FS.FileSlice, schema: pa.Schema, *, base_only: bool = False,
               ordering_type: str | None = None) -> pa.Table:
    """The records of one file slice: its base file, merged with its log blocks unless ``base_only``."""
    base = read_base_file(state.storage, piece.base_file, schema, state.evolution) \
        if piece.base_file is not None else None
    blocks = [] if base_only else slice_blocks(state, piece)
    if not blocks:
        return base if base is not None else pa.schema([f.with_nullable(True) for f in schema]).empty_table()
    merger = Merger(state.config.merge_mode, state.config.ordering_fields, ordering_type)
    if base is not None:
        for row in base.to_pylist():
            merger.add_row(row)
    for block in blocks:
        if block.header.get(LF.HeaderKey.IS_PARTIAL, "").lower() == "true":
            raise Unsupported("partial-update log blocks are not read by the reference", feature="hudi-partial-update")
        if block.block_type is LF.BlockType.DELETE:
            for rec in block.records or []:
                merger.add_delete(rec)
        elif block.block_type in LF.DATA_BLOCK_TYPES:
            for row in _block_rows(block, schema, state.evolution):
                merger.add_row(row)
    loose = pa.schema([f.with_nullable(True) for f in schema])
    return pa.Table.from_pylist(merger.rows(), schema=loose)


def _finish(pieces: list[pa.Table], schema: pa.Schema, *, meta_columns: bool,
            columns: Sequence[str] | None) -> pa.Table:
    loose = pa.schema([f.with_nullable(True) for f in schema])
    table = pa.concat_tables(pieces) if pieces else loose.empty_table()
    names = [n for n in table.column_names if meta_columns or n not in AS.META_COLUMNS]
    if columns is not None:
        unknown = [c for c in columns if c not in table.column_names]
        if unknown:
            raise InvalidTable(f"unknown column(s) {', '.join(map(repr, unknown))}; the table has "
                               f"{', '.join(table.column_names)}")
        names = [n for n in table.column_names if n in set(columns)]
    return table.select(names)


def _empty(meta_columns: bool) -> pa.Table:
    return pa.schema([pa.field(m, pa.string()) for m in AS.META_COLUMNS] if meta_columns else []).empty_table()


# ---------------------------------------------------------------------------------------------
# Queries


def read_table(location: str | Storage, *, query: str = SNAPSHOT, as_of: str | None = None,
               as_of_completion: str | None = None, begin: str | None = None, end: str | None = None,
               columns: Sequence[str] | None = None, meta_columns: bool = True) -> pa.Table:
    """The rows of a table by query type (module docstring); meta columns kept unless ``meta_columns=False``."""
    if query not in QUERY_TYPES:
        raise InvalidTable(f"query type must be one of {', '.join(QUERY_TYPES)}, got {query!r}")
    if query == INCREMENTAL:
        if as_of is not None or as_of_completion is not None:
            raise InvalidTable("an incremental read takes begin/end, not as_of")
        return read_incremental(location, begin=begin, end=end, columns=columns, meta_columns=meta_columns)
    if begin is not None or end is not None:
        raise InvalidTable("begin/end belong to incremental reads")
    state = open_state(location, as_of=as_of, as_of_completion=as_of_completion)
    return _read(state, base_only=query == READ_OPTIMIZED, columns=columns, meta_columns=meta_columns)


def _read(state: ReadState, *, base_only: bool, columns: Sequence[str] | None, meta_columns: bool,
          commit_times: frozenset[str] | None = None, groups: frozenset[tuple[str, str]] | None = None) -> pa.Table:
    if state.schema is None:
        return _empty(meta_columns)
    schema = state.schema
    pieces = []
    if base_only:
        for base in state.view.latest_base_files():
            pieces.append(read_base_file(state.storage, base, schema, state.evolution))
    else:
        ordering_type = _ordering_type(state) if state.config.is_mor else None
        for piece in state.view.latest_slices():
            if groups is not None and (piece.partition, piece.file_id) not in groups:
                continue
            pieces.append(read_slice(state, piece, schema, ordering_type=ordering_type))
    if commit_times is not None:
        wanted = pa.array(sorted(commit_times), pa.string())
        pieces = [p.filter(pc.is_in(p.column(AS.COMMIT_TIME), value_set=wanted)) for p in pieces]
    return _finish([p for p in pieces if p.num_rows], schema, meta_columns=meta_columns, columns=columns)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Commit:
    requested_time: str
    ordering_time: str  # completion time (v8+) or requested time (v6)
    archived: bool
    metadata: CM.CommitMetadata | None


def _all_commits(storage: Storage, config: P.TableConfig, timeline: T.Timeline) -> list[_Commit]:
    """Completed data writes, archived and active, in commit order."""
    out: dict[str, _Commit] = {}
    if config.timeline_layout_version >= 2:
        for row in T.read_lsm_timeline(storage, config):
            if row.action in _DATA_ACTIONS:
                meta = CM.read_archived_metadata(row)
                out[row.requested_time] = _Commit(requested_time=row.requested_time,
                                                  ordering_time=row.completion_time or row.requested_time,
                                                  archived=True, metadata=meta if isinstance(meta, CM.CommitMetadata)
                                                  else None)
    else:
        for entry in T.read_archive_v1(storage, config):
            if entry.action in _DATA_ACTIONS and entry.state == T.COMPLETED:
                meta = CM.archived_v1_metadata(entry)
                out[entry.requested_time] = _Commit(requested_time=entry.requested_time,
                                                    ordering_time=entry.requested_time, archived=True,
                                                    metadata=meta if isinstance(meta, CM.CommitMetadata) else None)
    for inst in timeline.completed():
        if inst.action in _DATA_ACTIONS:
            meta = CM.read_instant_metadata(storage, timeline, inst)
            out[inst.requested_time] = _Commit(requested_time=inst.requested_time, ordering_time=inst.ordering_time,
                                               archived=False,
                                               metadata=meta if isinstance(meta, CM.CommitMetadata) else None)
    return sorted(out.values(), key=lambda c: (c.ordering_time, c.requested_time))


def incremental_instants(storage: Storage, config: P.TableConfig, timeline: T.Timeline, begin: str | None,
                         end: str | None) -> list[_Commit]:
    """Completed data writes with commit time in ``(begin, end]`` (completion time v8+, requested time v6)."""
    return [c for c in _all_commits(storage, config, timeline)
            if (begin is None or c.ordering_time > begin) and (end is None or c.ordering_time <= end)]


def read_incremental(location: str | Storage, *, begin: str | None, end: str | None = None,
                     columns: Sequence[str] | None = None, meta_columns: bool = True) -> pa.Table:
    """Records written in ``(begin, end]``, each in its latest state (HUDI-TABLE-005).

    As Java's incremental relations do: the files the range's commits wrote, in the file slices of the table once
    the range's last commit completed, merged among themselves, their records whose ``_hoodie_commit_time`` is one
    of the range's commits. When a
    commit of the range is archived or a file it wrote is gone (cleaned), the state at the last commit cannot
    be rebuilt and the read falls back to the latest snapshot of the whole table, filtered the same way
    (``hoodie.datasource.read.incr.fallback.fulltablescan.enable``, on by default).
    """
    storage = _storage(location)
    for t in (begin, end):
        if t is not None:
            T.check_instant_time(t, "incremental bound")
    config = P.read_table_config(storage)
    timeline = T.load_active_timeline(storage, config)
    commits = incremental_instants(storage, config, timeline, begin, end)
    if not commits:
        state = open_state(storage)
        return _finish([], state.schema, meta_columns=meta_columns, columns=columns) if state.schema is not None \
            else _empty(meta_columns)
    written: set[tuple[str, str]] = set()
    paths: set[str] = set()
    for c in commits:
        for stat in (c.metadata.write_stats() if c.metadata is not None else ()):
            written.add((stat.partition_path if stat.partition_path is not None else "", stat.file_id))
            if stat.path:
                paths.add(stat.path)
    full_scan = any(c.archived or c.metadata is None for c in commits) or \
        any(not storage.exists(p) for p in paths)
    times = frozenset(c.requested_time for c in commits)
    if full_scan:
        return _read(open_state(storage), base_only=False, columns=columns, meta_columns=meta_columns,
                     commit_times=times)
    # File slices built from the files the range's commits wrote and nothing else, as Java's incremental relations
    # build their view (affectedFilesInCommits): a log record of the range is returned even where a base record
    # written before the range would win a snapshot merge. Seen once the range's last commit completed (a commit
    # requested before another of the range but completed after it is in).
    last = commits[-1]
    point = {"as_of_completion": last.ordering_time} if config.timeline_layout_version >= 2 \
        else {"as_of": last.requested_time}
    listing = [f for f in storage.walk("")
               if f.path in paths or f.path.rsplit("/", 1)[-1].startswith(N.PARTITION_METAFILE)]
    state = open_state(storage, check=False, listing=listing, **point)
    return _read(state, base_only=False, columns=columns, meta_columns=meta_columns, commit_times=times,
                 groups=frozenset(written))


def describe(location: str | Storage, *, as_of: str | None = None, as_of_completion: str | None = None) -> dict[str, Any]:
    """The Hudi facts of a table at a read point: type, version, keys, partition and ordering fields, instant, groups."""
    state = open_state(location, as_of=as_of, as_of_completion=as_of_completion)
    cfg = state.config
    view = state.view
    groups = [g for g in view.visible_groups() if view.latest_slice(g) is not None]
    return {
        "table_type": cfg.table_type,
        "table_version": cfg.version,
        "record_key_fields": list(cfg.record_key_fields or ()),
        "partition_fields": list(cfg.partition_fields),
        "ordering_fields": list(cfg.ordering_fields),
        "merge_mode": cfg.merge_mode,
        "instant": state.instant.requested_time if state.instant is not None else None,
        "completion_time": (state.instant.completion_time if state.instant is not None else None),
        # the partitions a read sees: those holding a visible file group (an overwritten or older-than-the-read-
        # point partition directory is on storage but holds nothing at this read point)
        "partitions": sorted({g.partition for g in groups}),
        "file_group_count": len(groups),
    }


__all__ = ["read_table", "read_incremental", "describe", "open_state", "ReadState", "read_slice", "read_base_file",
           "slice_blocks", "Merger", "incremental_instants", "SNAPSHOT", "READ_OPTIMIZED", "INCREMENTAL",
           "QUERY_TYPES"]
