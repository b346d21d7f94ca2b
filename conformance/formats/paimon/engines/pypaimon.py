"""pypaimon (the Python implementation of Paimon) as a reader and a writer of Paimon tables.

Opening: pypaimon opens tables through a catalog (a file-system catalog's table lives at
``<warehouse>/<db>.db/<table>``), but both the catalog and ``FileStoreTable.from_path`` come down to
the same thing: a ``FileIO`` for the location, the ``SchemaManager`` of the table directory and a
``FileStoreTable`` over its latest schema. So a table at any directory is opened with
``FileStoreTable.from_path(uri, file_io_options)`` (a branch with ``FileStoreTable`` over the branch's
``SchemaManager``), and created with ``SchemaManager(file_io, uri).create_table(schema)``, which is what
``FileSystemCatalog.create_table`` runs. On S3 the ``FileIO`` is pyarrow's ``S3FileSystem`` configured
by ``fs.s3.*`` options (endpoint, keys, region, path-style access).

Reading uses pypaimon's own time travel, so its reading is what gets checked: a version is
``scan.snapshot-id``, a timestamp ``scan.timestamp-millis`` (pypaimon's ``earlier_or_equal_time_mills``),
a ``ref`` ``scan.tag-name`` when a tag has that name, else the branch of that name; version 0 is the
table before its first commit (no rows, latest schema), as in the kit's numbering. The latest read
uses the table's latest schema (as pypaimon and Java do), a time-travel read the snapshot's schema;
``describe`` reports the facts of ``facts.py`` as pypaimon parses them (the snapshot's ``schemaId``
and that schema's keys and options; ``merge_engine`` only for primary-key tables). Where pypaimon
crashes instead of refusing, ``diagnose`` names the table's fault if the files show it.

Writing goes through pypaimon's batch write builder (``write_arrow`` + one ``commit`` per step) and its
schema manager (``commit_changes`` with ``SchemaChange``s). What a step maps to (measured on 2.1.0):

* Create: ``primary-key`` / ``partition`` options become the schema's keys (and are not kept), as
  Paimon's DDL does; ``partition_by`` takes plain columns only; ``features`` are refused (Paimon has
  none beyond options).
* Append: one writer per file (``files`` > 1 is refused for primary-key tables: pypaimon's writers
  each number sequences from the same base, and it rolls files by row count only for data-evolution
  and postpone tables); ``branch`` writes to ``branch/branch-<name>/``.
* Overwrite: ``overwrite()`` with ``dynamic-partition-overwrite=false``, so the whole table is replaced
  (pypaimon's default overwrites only the partitions written); a different schema is refused.
* Delete/Update/WriteChanges: pypaimon writes row kinds only from the table's ``rowkind.field``
  column (there is no other row-kind API), so -D / +U rows are written only into primary-key tables
  that declare one (and +I-only changes into any primary-key table). Its table delete/update APIs
  (``delete_by_predicate`` / ``update_by_predicate``) work on data-evolution append tables
  (``data-evolution.enabled`` + ``row-tracking.enabled``, and deletion vectors for deletes), and a
  delete whose predicate names only partition columns drops those partitions' files in any table.
  Everything else (copy-on-write rewrites, deletes in plain append tables, -D rows without a
  ``rowkind.field``) is ``Unsupported``. SQL predicates and SET expressions are evaluated by DuckDB
  over pypaimon's own read of the table (pypaimon's where-parser only for its partition/row-id APIs).
* CreateRef: tags with ``create_tag``; branches with ``create_branch(name, tag)`` (pypaimon branches
  only from a tag, or empty from the schema): from a tag of that snapshot if there is one, else from a
  temporary tag that is deleted again afterwards (from the table and from the branch's copy).
* Optimize (pypaimon writes level 0 only), ExpireSnapshots (no expiration in pypaimon),
  SetPartitioning (Paimon partitioning is fixed), AddConstraint and Raw are ``Unsupported``.
"""

from __future__ import annotations

import uuid
from typing import Any, Sequence

import pyarrow as pa

from conformance.engines._common import missing_module, package_version, s3_config
from conformance.engines.base import Capabilities, Engine
from conformance.engines.errors import ErrorPatterns, refusals
from conformance.formats.paimon.engines._common import invalid as _invalid
from conformance.formats.paimon.engines._common import location, timestamp_ms
from conformance.formats.paimon.engines._common import unsupported as _unsupported
from conformance.formats.paimon.steps import table_keys
from conformance.model import Step, TableRef

FORMAT = "paimon"
MAIN = "main"
# pypaimon's words when it refuses a table (on a read) or a feature.
PYPAIMON = ErrorPatterns(
    unsupported=("does not yet support", "does not yet implement", "not yet supported", "is not supported yet",
                 "not implemented in", "PyPaimon does not", "pypaimon supports", "Unsupported pyarrow type",
                 "NotImplementedError"),
    unsupported_types=("NotImplementedError",),
    invalid_on_read=("No schema found at path", "Failed to load schema from path", "Failed to read schema from",
                     "Schema file not found", "doesn't exist", "No snapshot found with timestamp",
                     "JSONDecodeError", "Expecting value", "Invalid Avro", "is not an avro file",
                     "Cannot find a time travel version",
                     # an enumerated option outside the spec's values: the table is refused as it stands
                     "to MergeEngine. Valid values"),
)

WRITE_STEPS = frozenset({
    "Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddColumn", "RenameColumn",
    "DropColumn", "ChangeColumnType", "MoveColumn", "CreateRef", "WriteChanges",
})
# Steps pypaimon cannot run at all, and why (the report shows these).
_WRITE_GAPS = {
    "Optimize": "pypaimon 2.1.0 writes level 0 only, no compaction (compact commits are rejected)",
    "ExpireSnapshots": "pypaimon 2.1.0 has no snapshot expiration",
    "SetPartitioning": "a Paimon table's partition keys are fixed at creation (pypaimon refuses to change them)",
    "AddConstraint": "Paimon has no CHECK constraints",
    "Raw": "only the reference writer runs raw steps",
}
_ROWKIND_GAP = ("pypaimon 2.1.0 writes row kinds only from the table's 'rowkind.field' column, and this table "
                "declares none, so it cannot write {kinds} rows")
_TMP_TAG = "lakeconf-branch-base-"




# ----------------------------------------------------------------------------------------------
# Opening tables
# ----------------------------------------------------------------------------------------------



def file_io_options(table: TableRef) -> dict[str, str]:
    """pypaimon ``FileIO`` options for the table's store (``fs.s3.*``; empty for local disk).

    ``warehouse`` names the store's scheme for Daft, which rebuilds file URIs from it."""
    cfg = s3_config(table)
    if cfg is None:
        return {}
    opts = {"fs.s3.region": cfg.region, "fs.s3.path-style-access": "true", "warehouse": location(table)}
    if cfg.endpoint_url:
        opts["fs.s3.endpoint"] = cfg.endpoint_url
    if cfg.access_key_id:
        opts["fs.s3.accessKeyId"] = cfg.access_key_id
    if cfg.secret_access_key:
        opts["fs.s3.accessKeySecret"] = cfg.secret_access_key
    return opts


def _file_io(table: TableRef):
    from pypaimon.common.file_io import FileIO
    from pypaimon.common.options import Options

    return FileIO.get(location(table), Options(file_io_options(table)))


def open_table(table: TableRef, branch: str | None = None):
    """pypaimon's ``FileStoreTable`` over the table directory (of ``branch`` if given), latest schema."""
    from pypaimon.table.file_store_table import FileStoreTable

    if branch is None or branch == MAIN:
        try:
            return FileStoreTable.from_path(location(table), file_io_options(table))
        except ValueError as exc:
            if "No schema found" in str(exc):
                raise _invalid(f"pypaimon: {exc}", "PAIMON-LAYOUT-001") from None
            raise
    from pypaimon.common.identifier import Identifier
    from pypaimon.schema.schema_manager import SchemaManager

    file_io = _file_io(table)
    schema = SchemaManager(file_io, location(table), branch).latest()
    if schema is None:
        raise _invalid(f"pypaimon finds no schema of a branch named {branch!r}")
    return FileStoreTable(file_io, Identifier.create("default", "table", branch=branch), location(table), schema)



def select(table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None):
    """(pypaimon table to scan, whether it has no snapshot to read) for a read at a version, a
    timestamp or a ref; the table carries pypaimon's own time-travel option."""
    if sum(v is not None for v in (at, timestamp, ref)) > 1:
        raise ValueError("give at most one of version, timestamp and ref")
    base = open_table(table)
    if at is not None:
        if at == 0:  # before the first commit: no rows, the latest schema
            return base, True
        return base.copy({"scan.snapshot-id": str(at)}), False
    if timestamp is not None:
        return base.copy({"scan.timestamp-millis": str(timestamp_ms(timestamp))}), False
    if ref is not None:
        if base.tag_manager().tag_exists(ref):
            return base.copy({"scan.tag-name": ref}), False
        if ref == MAIN:
            return base, base.snapshot_manager().get_latest_snapshot() is None
        if base.branch_manager().branch_exists(ref):
            branch = open_table(table, ref)
            return branch, branch.snapshot_manager().get_latest_snapshot() is None
        raise _invalid(f"pypaimon finds no tag or branch named {ref!r}", "PAIMON-LAYOUT-001")
    return base, base.snapshot_manager().get_latest_snapshot() is None


def _snapshot(tbl):
    """The snapshot a (possibly time-travelling) pypaimon table reads, by pypaimon's own resolution."""
    from pypaimon.snapshot.time_travel_util import TimeTravelUtil

    return TimeTravelUtil.resolve_snapshot(tbl)


def _arrow_schema(fields) -> pa.Schema:
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_schema(fields)


def scan(tbl, columns: Sequence[str] | None = None) -> pa.Table:
    """pypaimon's read of ``tbl`` (its read builder, scan plan and table read)."""
    rb = tbl.new_read_builder()
    if columns:
        rb = rb.with_projection(list(columns))
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    if out is None:  # no splits: pypaimon returns nothing rather than an empty table
        schema = _arrow_schema(tbl.fields)
        return (schema if not columns else pa.schema([schema.field(c) for c in columns])).empty_table()
    return out


def pypaimon_facts(tbl, snapshot) -> dict[str, Any]:
    """``describe`` facts as pypaimon reads them (``conformance/formats/paimon/facts.py``): the
    snapshot's, and the schema it names (``schemaId``; the latest schema before the first commit)."""
    from pypaimon.common.options import Options
    from pypaimon.common.options.core_options import CoreOptions

    manager = tbl.schema_manager
    schema = manager.latest() if snapshot is None else manager.get_schema(snapshot.schema_id)
    if schema is None:
        raise _invalid(f"pypaimon finds no schema {snapshot.schema_id} (named by snapshot {snapshot.id})",
                       "PAIMON-SCHEMA-015")
    core = CoreOptions(Options(dict(schema.options)))
    engine = core.merge_engine() if schema.primary_keys else None
    return {
        "snapshot_id": snapshot.id if snapshot is not None else None,
        "schema_id": schema.id,
        "primary_keys": list(schema.primary_keys),
        "partition_keys": list(schema.partition_keys),
        "bucket": int(core.bucket()),
        "merge_engine": getattr(engine, "value", engine),
        "options": dict(schema.options),
        "commit_kind": snapshot.commit_kind if snapshot is not None else None,
    }


def diagnose(exc: BaseException, tbl) -> BaseException:
    """What pypaimon's failure on ``tbl`` says about the table, where the table tells (else ``exc``).

    A deletion vector pypaimon cannot parse ("Invalid magic number") is a 64-bit
    (``deletion-vectors.bitmap64``) vector pypaimon 2.1.0 does not implement, or else a broken file.
    A crash (an AttributeError on a missing schema, say) stays a crash: no verdict on the table."""
    text = str(exc)
    said = f"pypaimon: {type(exc).__name__}: {text}"
    if tbl is None:
        return exc
    if "Invalid magic number" in text:
        if _truthy(tbl.table_schema.options.get("deletion-vectors.bitmap64")):
            return _unsupported(f"{said} (pypaimon 2.1.0 reads 32-bit Roaring deletion vectors only, not "
                                "deletion-vectors.bitmap64 ones)", "deletion-vectors")
        return _invalid(f"{said} (a deletion vector that is no 32-bit Roaring bitmap)", "PAIMON-INDEX-004")
    return exc


class PyPaimonEngine(Engine):
    """pypaimon: ``FileStoreTable`` reads with its time-travel options; batch writes and schema changes."""

    name = "pypaimon"

    def version(self) -> str:
        return package_version("pypaimon")

    def available(self) -> str | None:
        return missing_module("pypaimon", FORMAT)

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({FORMAT}),
            write=frozenset({FORMAT}),
            read_features={FORMAT: None},
            write_steps={FORMAT: WRITE_STEPS},
            unsupported={FORMAT: dict(_WRITE_GAPS)},
        )

    # -- read ----------------------------------------------------------------------------------

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        with refusals(PYPAIMON, table.uri):
            tbl, empty = select(table, at=at, timestamp=timestamp, ref=ref)
            if empty:
                schema = _arrow_schema(tbl.fields)
                return (pa.schema([schema.field(c) for c in columns]) if columns else schema).empty_table()
            try:
                return scan(tbl, columns)
            except Exception as exc:  # noqa: BLE001 - judged by diagnose, then by pypaimon's words
                raise diagnose(exc, tbl) from None

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        with refusals(PYPAIMON, table.uri):
            tbl, empty = select(table, at=at, timestamp=timestamp, ref=ref)
            return pypaimon_facts(tbl, None if empty else _snapshot(tbl))

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        if at == 0:  # the kit's "before the first commit" has no pypaimon spelling
            return None
        travel = f"    table = table.copy({{'scan.snapshot-id': '{int(at)}'}})\n" if at else ""
        return ("def read():\n"
                "    from pypaimon.table.file_store_table import FileStoreTable\n"
                "    table = FileStoreTable.from_path(TABLE)\n"
                + travel +
                "    rb = table.new_read_builder()\n"
                "    return rb.new_read().to_arrow(rb.new_scan().plan().splits())\n")

    # -- write ---------------------------------------------------------------------------------

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        for step in steps:
            kind = type(step).__name__
            if kind not in WRITE_STEPS:
                raise _unsupported(f"pypaimon cannot run a {kind} step: {_WRITE_GAPS.get(kind, 'no such API')}", kind)
        writer = _Writer(table)
        for step in steps:
            with refusals(PYPAIMON, table.uri, reading=False):
                getattr(writer, "_" + type(step).__name__)(step)


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def _commit(tbl, messages) -> None:
    wb = tbl.new_batch_write_builder()
    tc = wb.new_commit()
    try:
        tc.commit(messages)
    finally:
        tc.close()


def _write(tbl, chunks: Sequence[pa.Table], *, overwrite: bool = False) -> None:
    """One commit of ``chunks``, each written by its own writer (one data file per bucket each)."""
    wb = tbl.new_batch_write_builder()
    if overwrite:
        wb.overwrite()
    messages = []
    for chunk in chunks:
        tw = wb.new_write()
        try:
            if chunk.num_rows:
                tw.write_arrow(chunk)
            messages.extend(tw.prepare_commit())
        finally:
            tw.close()
    tc = wb.new_commit()
    try:
        tc.commit(messages)
    finally:
        tc.close()


def _conform(rows: pa.Table, tbl) -> pa.Table:
    """``rows`` in the table's column order and Arrow types (pypaimon checks the write schema)."""
    schema = _arrow_schema(tbl.fields)
    missing = [n for n in schema.names if n not in rows.column_names]
    if missing:
        raise _unsupported(f"the rows lack the table's columns {missing}", "schema")
    return pa.Table.from_arrays([rows.column(n).cast(schema.field(n).type) for n in schema.names], schema=schema)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duck(rows: pa.Table, sql: str) -> pa.Table:
    """Run ``sql`` over ``rows`` (registered as ``t``) in DuckDB, cast back to ``rows``' schema."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("t", rows)
        out = con.execute(sql).to_arrow_table()
    finally:
        con.close()
    return pa.Table.from_arrays([out.column(i).cast(f.type) for i, f in enumerate(rows.schema)], schema=rows.schema)


def _matching(rows: pa.Table, where: str) -> pa.Table:
    return _duck(rows, f"SELECT * FROM t WHERE ({where})")


def _updated(rows: pa.Table, assignments: dict[str, str]) -> pa.Table:
    cols = [f"({assignments[n]}) AS {_q(n)}" if n in assignments else _q(n) for n in rows.column_names]
    return _duck(rows, f"SELECT {', '.join(cols)} FROM t")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() == "true"


class _Writer:
    """Runs the kit's steps against one table directory through pypaimon's public write APIs."""

    def __init__(self, table: TableRef) -> None:
        self.table = table

    def _open(self, branch: str | None = None):
        return open_table(self.table, branch)

    # -- create ----------------------------------------------------------------------------------

    def _Create(self, step) -> None:
        from pypaimon import Schema
        from pypaimon.schema.schema_manager import SchemaManager

        options, primary, partition = table_keys(step)
        schema = Schema.from_pyarrow_schema(step.schema, partition_keys=partition or None,
                                            primary_keys=primary or None, options=options)
        SchemaManager(_file_io(self.table), location(self.table)).create_table(schema)

    # -- data ------------------------------------------------------------------------------------

    def _Append(self, step) -> None:
        tbl = self._open(step.branch)
        rows = _conform(step.rows, tbl)
        if step.files > 1 and tbl.is_primary_key_table:
            raise _unsupported(
                "pypaimon 2.1.0 cannot split one commit of a primary-key table over several files: it rolls files "
                "by row count only for data-evolution and postpone tables, and separate writers would number "
                "their sequences from the same base", "files")
        per = max(1, -(-rows.num_rows // max(step.files, 1)))
        chunks = [rows.slice(i, per) for i in range(0, rows.num_rows, per)] or [rows]
        _write(tbl, chunks)

    def _Overwrite(self, step) -> None:
        tbl = self._open()
        have = _arrow_schema(tbl.fields)
        if step.rows.column_names != have.names:
            raise _unsupported("pypaimon's overwrite keeps the table schema; it cannot replace it "
                               f"({have.names} -> {step.rows.column_names})", "overwrite-schema")
        tbl = tbl.copy({"dynamic-partition-overwrite": "false"})  # replace the whole table
        _write(tbl, [_conform(step.rows, tbl)], overwrite=True)

    def _rowkind_field(self, tbl) -> str | None:
        return tbl.table_schema.options.get("rowkind.field") if tbl.is_primary_key_table else None

    def _write_kinds(self, tbl, rows: pa.Table, kinds: Sequence[str]) -> None:
        """One commit of ``rows`` with row kinds ``kinds`` through the table's ``rowkind.field``."""
        if not tbl.is_primary_key_table:
            raise _unsupported("row kinds exist only in primary-key tables", "row-kinds")
        field = self._rowkind_field(tbl)
        if field is None:
            if set(kinds) <= {"+I"}:
                _write(tbl, [rows])
                return
            raise _unsupported(_ROWKIND_GAP.format(kinds="/".join(sorted(set(kinds) - {"+I"}))), "row-kinds")
        idx = rows.schema.get_field_index(field)
        rows = rows.set_column(idx, rows.schema.field(idx), pa.array(list(kinds), type=rows.schema.field(idx).type))
        _write(tbl, [rows])

    def _WriteChanges(self, step) -> None:
        tbl = self._open()
        rows = step.rows
        field = self._rowkind_field(tbl)
        if field is not None and field not in rows.column_names:
            rows = rows.append_column(field, pa.array(list(step.kinds), type=pa.string()))
        self._write_kinds(tbl, _conform(rows, tbl), step.kinds)

    def _partition_only(self, tbl, where: str):
        """pypaimon's predicate for ``where`` when it names partition columns only (else None)."""
        from pypaimon.common.where_parser import extract_fields_from_where, parse_where_clause

        if not tbl.partition_keys:
            return None
        names = extract_fields_from_where(where, set(tbl.field_names))
        if not names or not names <= set(tbl.partition_keys):
            return None
        try:
            return parse_where_clause(where, tbl.fields)
        except ValueError:
            return None

    def _data_evolution(self, tbl) -> bool:
        opts = tbl.table_schema.options
        return (not tbl.is_primary_key_table and _truthy(opts.get("data-evolution.enabled"))
                and _truthy(opts.get("row-tracking.enabled")))

    def _parse(self, tbl, where: str):
        from pypaimon.common.where_parser import parse_where_clause

        try:
            return parse_where_clause(where, tbl.fields)
        except ValueError as exc:
            raise _unsupported(f"pypaimon cannot parse the predicate {where!r}: {exc}", "predicate") from None

    def _Delete(self, step) -> None:
        tbl = self._open()
        if step.how in (None, "deletion-vectors") and self._data_evolution(tbl) and _truthy(
                tbl.table_schema.options.get("deletion-vectors.enabled")):
            self._update_api(tbl, lambda up: up.delete_by_predicate(self._parse(tbl, step.where)))
            return
        if step.how is not None:
            raise _unsupported(f"pypaimon 2.1.0 cannot delete with {step.how} in this table (it deletes with "
                               "deletion vectors only in data-evolution tables, and never rewrites files)", step.how)
        partitions = self._partition_only(tbl, step.where)
        if partitions is not None:
            self._update_api(tbl, lambda up: up.delete_by_predicate(partitions))
            return
        if tbl.is_primary_key_table:
            doomed = _matching(scan(tbl), step.where)
            if doomed.num_rows:
                self._write_kinds(tbl, doomed, ["-D"] * doomed.num_rows)
            return
        raise _unsupported(
            "pypaimon 2.1.0 deletes rows of an append table only with deletion vectors in data-evolution tables "
            "('data-evolution.enabled', 'row-tracking.enabled' and 'deletion-vectors.enabled'); it cannot "
            "rewrite data files", "delete")

    def _Update(self, step) -> None:
        tbl = self._open()
        assignments = {k: str(v) for k, v in step.set.items()}
        if self._data_evolution(tbl):
            names = list(tbl.field_names)

            def compute(column: str):
                return lambda matched: _updated(matched.select(names), assignments).column(column).combine_chunks()

            self._update_api(tbl, lambda up: up.update_by_predicate(
                self._parse(tbl, step.where), {c: compute(c) for c in assignments}, read_columns=names))
            return
        if tbl.is_primary_key_table:
            fixed = set(tbl.primary_keys) | set(tbl.partition_keys)
            if fixed & set(assignments):
                raise _unsupported(f"updating key or partition columns {sorted(fixed & set(assignments))} "
                                   "would move rows to other keys", "update-key")
            matched = _matching(scan(tbl), step.where)
            if matched.num_rows:
                self._write_kinds(tbl, _updated(matched, assignments), ["+U"] * matched.num_rows)
            return
        raise _unsupported(
            "pypaimon 2.1.0 updates rows of an append table only in data-evolution tables "
            "('data-evolution.enabled' and 'row-tracking.enabled'); it cannot rewrite data files", "update")

    def _update_api(self, tbl, fn) -> None:
        """Run one of pypaimon's table update APIs and commit its messages (nothing to commit: no commit)."""
        wb = tbl.new_batch_write_builder()
        messages = fn(wb.new_update())
        if messages:
            tc = wb.new_commit()
            try:
                tc.commit(messages)
            finally:
                tc.close()

    # -- metadata --------------------------------------------------------------------------------

    def _schema_change(self, *changes) -> None:
        from pypaimon.schema.schema_manager import SchemaManager

        SchemaManager(_file_io(self.table), location(self.table)).commit_changes(list(changes))

    def _SetProperties(self, step) -> None:
        from pypaimon.schema.schema_change import SchemaChange

        self._schema_change(*[SchemaChange.set_option(k, str(v)) for k, v in step.properties.items()])

    def _AddColumn(self, step) -> None:
        from pypaimon.schema.data_types import PyarrowFieldParser
        from pypaimon.schema.schema_change import SchemaChange

        self._schema_change(SchemaChange.add_column(step.field.name, PyarrowFieldParser.to_paimon_type(step.field.type, True)))

    def _RenameColumn(self, step) -> None:
        from pypaimon.schema.schema_change import SchemaChange

        self._schema_change(SchemaChange.rename_column(step.old, step.new))

    def _DropColumn(self, step) -> None:
        from pypaimon.schema.schema_change import SchemaChange

        self._schema_change(SchemaChange.drop_column(step.name))

    def _ChangeColumnType(self, step) -> None:
        from pypaimon.schema.data_types import PyarrowFieldParser
        from pypaimon.schema.schema_change import SchemaChange

        nullable = next((f.type.nullable for f in self._open().fields if f.name == step.name), True)
        self._schema_change(SchemaChange.update_column_type(step.name, PyarrowFieldParser.to_paimon_type(step.type, nullable)))

    def _MoveColumn(self, step) -> None:
        from pypaimon.schema.schema_change import Move, SchemaChange

        move = Move.first(step.name) if step.after is None else Move.after(step.name, step.after)
        self._schema_change(SchemaChange.update_column_position(move))

    def _CreateRef(self, step) -> None:
        tbl = self._open()
        if step.version is not None and step.version != 0 and tbl.snapshot_manager().get_snapshot_by_id(step.version) is None:
            raise _unsupported(f"pypaimon finds no snapshot {step.version} to name", "CreateRef")
        latest = tbl.snapshot_manager().get_latest_snapshot()
        sid = step.version if step.version is not None else (latest.id if latest is not None else None)
        if step.kind == "tag":
            if not sid:
                raise _unsupported("a tag needs a snapshot; the table has none there", "CreateRef")
            tbl.create_tag(step.name, snapshot_id=sid)
            return
        if not sid:  # no snapshot yet: an empty branch (the schema only), as pypaimon creates it
            tbl.branch_manager().create_branch(step.name)
            return
        tags = tbl.tag_manager()
        existing = sorted(n for n in tags.list_tags() if tags.get(n).trim_to_snapshot().id == sid)
        if existing:  # branch from a tag of that snapshot, as a pypaimon user would
            tbl.branch_manager().create_branch(step.name, existing[0])
            return
        base = f"{_TMP_TAG}{uuid.uuid4().hex[:8]}"
        tbl.create_tag(base, snapshot_id=sid)
        try:
            tbl.branch_manager().create_branch(step.name, base)
        finally:
            tbl.delete_tag(base)
            open_table(self.table, step.name).delete_tag(base)  # the branch's copy of the temporary tag
