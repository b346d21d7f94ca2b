"""PyIceberg (the Python implementation of Iceberg) as a reader and a writer of Iceberg tables.

Reading opens the metadata file with ``StaticTable.from_metadata`` and scans a snapshot:
versions resolve through ``iceberg_facts`` (the kit's numbering), while timestamps and refs use
PyIceberg's own ``snapshot_as_of_timestamp`` and ``scan().use_ref`` so its reading of the spec is
what gets checked. Measured on pyiceberg 0.12.0: it applies position delete files and deletion
vectors, reads v1/v2/v3 metadata, and refuses equality deletes ("PyIceberg does not yet support
equality deletes"), reported here as ``Unsupported``. Found while measuring (see the findings): it
fails on a v1 partition spec without ``field-id`` (which the spec says v1 omits), and reads a null
``list<struct>`` / ``map<_, struct>`` as empty.

Writing goes through PyIceberg's SQL catalog on SQLite, as a PyIceberg user would. The table
state lives only in the metadata files (readers list ``metadata/``), so each ``write`` call uses a
throw-away SQLite catalog in a temporary directory: ``create_table`` at exactly the table's
location for ``Create``, ``register_table`` of the current metadata file otherwise; commits write
``<NNNNN>-<uuid>.metadata.json`` (catalog naming). What a step maps to:

* one step = one metadata commit with at most one snapshot, because the kit numbers versions by
  sequence number (``iceberg_facts``). PyIceberg's ``Table.overwrite`` commits a DELETE and an
  APPEND snapshot (two versions), and ``Table.delete`` a DELETE plus an OVERWRITE snapshot when it
  drops some files whole and rewrites others; so Overwrite, Delete and Update run PyIceberg's own
  copy-on-write machinery (``ArrowScan``, ``_dataframe_to_data_files``) inside one
  ``update_snapshot().overwrite()`` (or ``delete()`` when whole files go and nothing is rewritten:
  the spec's ``delete`` operation); an Append with ``files > 1`` uses one ``fast_append`` with one
  write per chunk; a Delete that matches nothing commits nothing (as PyIceberg's own delete);
* Delete/Update are copy-on-write only (PyIceberg 0.12 writes no delete files: with
  ``write.delete.mode=merge-on-read`` it warns and falls back to copy-on-write), so any other
  ``Delete.how``, or a merge-on-read table, is ``Unsupported``; predicates are parsed by PyIceberg's
  row-filter parser (a predicate it cannot parse is ``Unsupported``); Update's SET expressions are
  SQL, which PyIceberg cannot evaluate: DuckDB computes the new values of the matched rows;
* format v3 cannot be written ("Writing V3 is not yet supported"), nor v3 default values (Arrow field
  metadata ``iceberg.initial-default`` / ``iceberg.write-default``); Optimize (no rewrite-files
  action in 0.12), AddConstraint, Checkpoint and Raw are ``Unsupported``; so is writing into a spec
  with two fields of one source column ("Cannot have redundant partitions", e.g. a v1 void field
  and its replacement);
* SetPartitioning keeps the fields that stay, removes the others (void in v1) and appends the
  new ones; ExpireSnapshots expires the main-history snapshots past ``retain_last`` that no ref
  holds (``maintenance.expire_snapshots().by_ids``; files are not deleted, and PyIceberg keeps the
  snapshot-log entries before an expired snapshot: see the findings). The location written into
  the metadata is the table's URI, ``file://``-qualified on local disk. The throw-away catalog
  means two concurrent PyIceberg writers are not serialised: not for the concurrency suites.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import uuid
import warnings
from typing import Sequence

import pyarrow as pa

from conformance.formats.iceberg import facts as F
from conformance.engines._common import local_path, missing_module, package_version, s3_config
from conformance.engines.base import Capabilities, Engine
from conformance.engines.errors import refusals
from conformance.formats.iceberg.errors import PYICEBERG
from conformance.model import Step, TableRef, parse_partition_expr

WRITE_STEPS = frozenset(
    {"Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddColumn", "RenameColumn",
     "DropColumn", "ChangeColumnType", "MoveColumn", "SetPartitioning", "CreateRef", "ExpireSnapshots"}
)
WRITE_FORMAT_VERSIONS = ("1", "2")
NAMESPACE = "lakeconf"
_REFUSES = {
    F.EQUALITY_DELETES: "pyiceberg 0.12 raises 'PyIceberg does not yet support equality deletes' when planning a scan",
}


def io_properties(table: TableRef) -> dict[str, str]:
    """PyIceberg FileIO properties for the table's store (empty for local disk)."""
    from conformance.formats.iceberg.s3 import pyiceberg_properties

    cfg = s3_config(table)
    return pyiceberg_properties(cfg) if cfg is not None else {}


def table_location(table: TableRef) -> str:
    """The location written into metadata: the table's URI, with ``file://`` for local paths
    (the spec wants every stored location to carry a scheme, ICEBERG-GEN-010)."""
    path = local_path(table.uri)
    if path is None:
        return table.uri.rstrip("/")
    return "file://" + os.path.abspath(path)


def _unsupported(message: str, feature: str | None = None):
    from reference_impl.errors import Unsupported

    return Unsupported(message, feature=feature)


def _translate(exc: Exception) -> Exception:
    """PyIceberg's refusals as the kit's error kinds (other errors pass through unchanged)."""
    text = str(exc)
    if "does not yet support equality deletes" in text:
        return _unsupported(f"pyiceberg: {text}", F.EQUALITY_DELETES)
    return exc


class PyIcebergEngine(Engine):
    """pyiceberg: StaticTable scans; writes through a SQLite SqlCatalog."""

    name = "pyiceberg"

    def version(self) -> str:
        return package_version("pyiceberg")

    def available(self) -> str | None:
        return missing_module("pyiceberg", "pyiceberg") or missing_module("sqlalchemy", "pyiceberg")

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"iceberg"}),
            write=frozenset({"iceberg"}),
            read_features={"iceberg": None},
            write_steps={"iceberg": WRITE_STEPS},
            unsupported={"iceberg": dict(_REFUSES)},
        )

    # -- read ----------------------------------------------------------------------------------

    def _static(self, table: TableRef, location: str):
        from pyiceberg.table import StaticTable

        return StaticTable.from_metadata(location, properties=io_properties(table))

    def _snapshot(self, table: TableRef, at, timestamp, ref):
        """(pyiceberg table, snapshot or None) to read; None = the table has no rows there."""
        from reference_impl.errors import InvalidTable

        if timestamp is not None or ref is not None:
            if timestamp is not None and ref is not None:
                raise ValueError("give at most one of version, timestamp and ref")
            tbl = self._static(table, F.metadata_location(table))
            if timestamp is not None:
                snap = tbl.snapshot_as_of_timestamp(F.timestamp_ms(timestamp))
                if snap is None:
                    raise InvalidTable(f"pyiceberg finds no snapshot as of {timestamp}", rule="ICEBERG-SNAP-015")
                return tbl, snap
            snap = tbl.snapshot_by_name(ref)
            if snap is None:
                if ref == F.MAIN and tbl.metadata.current_snapshot_id is None:
                    return tbl, None
                raise InvalidTable(f"pyiceberg finds no branch or tag named {ref!r}", rule="ICEBERG-META-039")
            return tbl, snap
        sel = F.selection(table, at=at)
        tbl = self._static(table, sel.metadata_location)
        if sel.snapshot_id is None:
            return tbl, None
        snap = tbl.snapshot_by_id(sel.snapshot_id)
        if snap is None:  # iceberg_facts found it in the same file: pyiceberg dropped it
            raise InvalidTable(f"pyiceberg does not list snapshot {sel.snapshot_id}")
        return tbl, snap

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from pyiceberg.io.pyarrow import schema_to_pyarrow

        with refusals(PYICEBERG, table.uri):
            tbl, snap = self._snapshot(table, at, timestamp, ref)
            fields = tuple(columns) if columns else ("*",)
            if snap is None:
                schema = tbl.schema() if fields == ("*",) else tbl.schema().select(*fields)
                return schema_to_pyarrow(schema, include_field_ids=False).empty_table()
            # The latest read scans with the table's current schema; an explicit version, timestamp or
            # ref scans with the schema of its snapshot (what PyIceberg does for a snapshot id).
            latest = at is None and timestamp is None and ref is None
            try:
                if latest:
                    return tbl.scan(selected_fields=fields).to_arrow()
                return tbl.scan(snapshot_id=snap.snapshot_id, selected_fields=fields).to_arrow()
            except ValueError as exc:
                raise _translate(exc) from None

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        return ("def read():\n" + F.reproduction_prelude(table, at)
                + "    from pyiceberg.table import StaticTable\n"
                "    return StaticTable.from_metadata(META).scan(snapshot_id=SNAPSHOT).to_arrow()\n")

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        with refusals(PYICEBERG, table.uri):
            tbl, snap = self._snapshot(table, at, timestamp, ref)
            if snap is None and at is not None:
                # Version 0 was read from the last metadata file before the first snapshot: its
                # schema is v0's, every other fact is the table's current one (as at any version).
                out = pyiceberg_facts(self._static(table, F.metadata_location(table)), None)
                out["schema_id"] = tbl.schema().schema_id
                return out
            return pyiceberg_facts(tbl, snap, latest=at is None and timestamp is None and ref is None)

    # -- write ---------------------------------------------------------------------------------

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        for step in steps:
            if type(step).__name__ not in WRITE_STEPS:
                raise _unsupported(f"pyiceberg cannot run a {type(step).__name__} step", type(step).__name__)
        with tempfile.TemporaryDirectory(prefix="lakeconf-pyiceberg-") as tmp:
            catalog = self._catalog(table, tmp)
            for step in steps:
                _Writer(catalog, table).run(step)

    def _catalog(self, table: TableRef, tmp: str):
        from pyiceberg.catalog.sql import SqlCatalog

        props = {"uri": f"sqlite:///{os.path.join(tmp, 'catalog.db')}", "warehouse": "file://" + tmp, **io_properties(table)}
        catalog = SqlCatalog("lakeconf", **props)
        catalog.create_namespace_if_not_exists(NAMESPACE)
        return catalog


def pyiceberg_facts(tbl, snap, *, latest: bool = False) -> dict:
    """``describe`` facts from PyIceberg's own metadata model (``snap`` None: no snapshot).

    ``schema_id`` is the table's current schema for the latest version (as the latest read), the
    snapshot's at an explicit version, timestamp or ref."""
    schema = tbl.schema()
    # A source column dropped since keeps its name in the schema that still has it.
    schemas = [schema] + [s for s in tbl.schemas().values() if s.schema_id != schema.schema_id]
    spec = []
    for field in tbl.spec().fields:
        name = next((n for s in schemas if (n := s.find_column_name(field.source_id))), str(field.source_id))
        spec.append(F.partition_expression(str(field.transform), name))
    schema_id = snap.schema_id if not latest and snap is not None and snap.schema_id is not None else schema.schema_id
    operation = snap.summary.operation.value if snap is not None and snap.summary is not None else None
    return F.facts(
        format_version=int(tbl.format_version),
        partition_spec=spec,
        schema_id=schema_id,
        properties=dict(tbl.properties),
        refs={name: r.snapshot_ref_type.value for name, r in tbl.refs().items()},
        operation=operation,
    )


class _Writer:
    """Runs one step against a table through the catalog (one transaction, one metadata file)."""

    def __init__(self, catalog, table: TableRef) -> None:
        self.catalog = catalog
        self.table = table
        self.identifier = (NAMESPACE, "t")

    def _load(self):
        from pyiceberg.exceptions import NoSuchTableError

        try:
            tbl = self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            tbl = self.catalog.register_table(self.identifier, F.metadata_location(self.table))
        return tbl

    def run(self, step: Step) -> None:
        handler = getattr(self, "_" + type(step).__name__)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Delete operation did not match any records" and the like
            try:
                handler(step)
            except ValueError as exc:
                if "Cannot have redundant partitions" in str(exc):
                    # A valid spec (two fields from one source column, e.g. a v1 void field and its
                    # replacement) that PyIceberg 0.12 cannot write data files for.
                    raise _unsupported(
                        f"pyiceberg 0.12 cannot write into a partition spec with two fields from one source column: {exc}",
                        "partition-spec",
                    ) from None
                raise

    # -- create ----------------------------------------------------------------------------------

    def _Create(self, step) -> None:
        props = {k: str(v) for k, v in step.properties.items()}
        fv = props.setdefault("format-version", "2")
        if fv not in WRITE_FORMAT_VERSIONS:
            raise _unsupported(f"pyiceberg 0.12 cannot write format version {fv} ('Writing V3 is not yet supported')", F.FORMAT_V3 if fv == "3" else f"format-version-{fv}")
        if step.features:
            raise _unsupported(f"pyiceberg has no table features to enable ({', '.join(step.features)})", step.features[0])
        _refuse_defaults(step.schema)
        schema, spec = _schema_and_spec(step.schema, step.partition_by, int(fv))
        self.catalog.create_table(
            self.identifier, schema=schema, location=table_location(self.table), partition_spec=spec, properties=props
        )

    # -- data ----------------------------------------------------------------------------------

    def _Append(self, step) -> None:
        from pyiceberg.io.pyarrow import _dataframe_to_data_files

        tbl = self._load()
        branch = step.branch or F.MAIN
        if step.files <= 1:
            tbl.append(step.rows, branch=branch)
            return
        # One snapshot holding one write per chunk (PyIceberg sizes files itself otherwise).
        per = max(1, -(-step.rows.num_rows // step.files))
        with tbl.transaction() as tx:
            with tx.update_snapshot(branch=branch).fast_append() as app:
                counter = itertools.count(0)
                for batch in step.rows.to_batches(max_chunksize=per):
                    chunk = pa.Table.from_batches([batch], schema=step.rows.schema)
                    for data_file in _dataframe_to_data_files(
                        table_metadata=tx.table_metadata, df=chunk, io=tbl.io, write_uuid=app.commit_uuid, counter=counter
                    ):
                        app.append_data_file(data_file)

    def _Overwrite(self, step) -> None:
        from pyiceberg.expressions import AlwaysTrue

        tbl = self._load()
        with tbl.transaction() as tx:
            current = tx.table_metadata.schema()
            if [f.name for f in current.fields] != step.rows.column_names:
                with tx.update_schema(allow_incompatible_changes=True) as us:
                    us.union_by_name(step.rows.schema)
                    for name in [f.name for f in current.fields if f.name not in step.rows.column_names]:
                        us.delete_column(name)
            _rewrite(tx, tbl, AlwaysTrue(), new_rows=step.rows)

    def _check_cow(self, tbl, what: str, how: str | None) -> None:
        mode_key = "write.delete.mode" if what == "Delete" else "write.update.mode"
        if how not in (None, "copy-on-write"):
            raise _unsupported(f"pyiceberg 0.12 writes no delete files: it cannot {what.lower()} with {how}", how)
        if how is None and tbl.properties.get(mode_key, "copy-on-write") == "merge-on-read":
            raise _unsupported(
                f"the table asks for {mode_key}=merge-on-read, which pyiceberg 0.12 ignores ('Merge on read is not "
                "yet supported, falling back to copy-on-write')", F.POSITION_DELETES,
            )
        if int(tbl.format_version) >= 3:
            raise _unsupported("pyiceberg 0.12 cannot write format version 3 tables", F.FORMAT_V3)

    def _Delete(self, step) -> None:
        tbl = self._load()
        self._check_cow(tbl, "Delete", step.how)
        pred = _parse_predicate(step.where)
        with tbl.transaction() as tx:
            _rewrite(tx, tbl, pred)

    def _Update(self, step) -> None:
        tbl = self._load()
        self._check_cow(tbl, "Update", None)
        pred = _parse_predicate(step.where)
        with tbl.transaction() as tx:
            _rewrite(tx, tbl, pred, update=dict(step.set))

    # -- metadata ------------------------------------------------------------------------------

    def _SetProperties(self, step) -> None:
        tbl = self._load()
        props = {k: str(v) for k, v in step.properties.items()}
        with tbl.transaction() as tx:
            fv = props.pop("format-version", None)
            if fv is not None and int(fv) != int(tbl.format_version):
                if fv not in WRITE_FORMAT_VERSIONS:
                    raise _unsupported(f"pyiceberg 0.12 cannot upgrade to format version {fv}", F.FORMAT_V3)
                tx.upgrade_table_version(int(fv))
            if props:
                tx.set_properties(props)

    def _schema_change(self, fn) -> None:
        tbl = self._load()
        with tbl.update_schema() as us:
            fn(us)

    def _AddColumn(self, step) -> None:
        _refuse_defaults([step.field])
        field = step.field.with_nullable(True)  # Iceberg adds optional columns (required needs defaults, v3)
        self._schema_change(lambda us: us.union_by_name(pa.schema([field])))

    def _RenameColumn(self, step) -> None:
        self._schema_change(lambda us: us.rename_column(step.old, step.new))

    def _DropColumn(self, step) -> None:
        self._schema_change(lambda us: us.delete_column(step.name))

    def _ChangeColumnType(self, step) -> None:
        new_type = _iceberg_type(step.type)
        self._schema_change(lambda us: us.update_column(step.name, field_type=new_type))

    def _MoveColumn(self, step) -> None:
        if step.after is None:
            self._schema_change(lambda us: us.move_first(step.name))
        else:
            self._schema_change(lambda us: us.move_after(step.name, step.after))

    def _SetPartitioning(self, step) -> None:
        tbl = self._load()
        schema = tbl.schema()
        wanted = []
        for expr in step.partition_by:
            transform, column, param = parse_partition_expr(expr)
            wanted.append((schema.find_field(column).field_id, str(_transform(transform, param)), expr))
        have = {(f.source_id, str(f.transform)) for f in tbl.spec().fields}
        with tbl.update_spec() as spec:
            # Fields that stay keep their ids (and, in v1, their place); the rest are removed
            # (PyIceberg turns them into void fields in v1) and the new ones appended.
            for field in tbl.spec().fields:
                if str(field.transform) != "void" and (field.source_id, str(field.transform)) not in {w[:2] for w in wanted}:
                    spec.remove_field(field.name)
            for source_id, transform, expr in wanted:
                if (source_id, transform) not in have:
                    _add_partition_field(spec, expr)

    def _CreateRef(self, step) -> None:
        tbl = self._load()
        sid = F.snapshot_id_for(self.table, at=step.version) if step.version is not None else tbl.metadata.current_snapshot_id
        if sid is None:
            raise _unsupported(f"a {step.kind} needs a snapshot; the table has none at version {step.version}", "CreateRef")
        ms = tbl.manage_snapshots()
        (ms.create_tag(sid, step.name) if step.kind == "tag" else ms.create_branch(sid, step.name)).commit()

    def _ExpireSnapshots(self, step) -> None:
        tbl = self._load()
        meta = tbl.metadata
        chain = []
        sid = meta.current_snapshot_id
        while sid is not None:
            snap = meta.snapshot_by_id(sid)
            if snap is None:
                break
            chain.append(snap.snapshot_id)
            sid = snap.parent_snapshot_id
        protected = {r.snapshot_id for r in meta.refs.values()}
        doomed = [s for s in chain[max(step.retain_last, 0):] if s not in protected]
        if doomed:
            tbl.maintenance.expire_snapshots().by_ids(doomed).commit()


# ----------------------------------------------------------------------------------------------
# Helpers around PyIceberg's API
# ----------------------------------------------------------------------------------------------


_DEFAULT_KEYS = (b"iceberg.initial-default", b"iceberg.write-default")


def _refuse_defaults(fields) -> None:
    """Default values (v3, carried in Arrow field metadata) cannot be written by PyIceberg 0.12, which
    writes no v3 tables; dropping them silently would build a different table than the case's."""
    for f in fields:
        if any(k in (f.metadata or {}) for k in _DEFAULT_KEYS):
            raise _unsupported(f"pyiceberg 0.12 writes no default values (column {f.name!r}; they need format v3)", F.FORMAT_V3)
        if pa.types.is_struct(f.type):
            _refuse_defaults([f.type.field(i) for i in range(f.type.num_fields)])


def _transform(transform: str, param: int | None):
    from pyiceberg.transforms import parse_transform

    return parse_transform(f"{transform}[{param}]" if param is not None else transform)


def _add_partition_field(spec, expr: str) -> None:
    """Add one kit partition expression (``"bucket(16, id)"``) to a PyIceberg UpdateSpec."""
    transform, column, param = parse_partition_expr(expr)
    spec.add_field(column, _transform(transform, param))


def _schema_and_spec(arrow_schema: pa.Schema, partition_by: Sequence[str], format_version: int):
    """PyIceberg's Iceberg schema for an Arrow schema (fresh ids, as ``create_table`` assigns them)
    and the partition spec of the kit's partition expressions over it, so the table is created
    with its spec as spec 0 (an ``update_spec`` in the create transaction would add a spec 1)."""
    from pyiceberg.catalog import Catalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import assign_fresh_schema_ids

    schema = assign_fresh_schema_ids(Catalog._convert_schema_if_needed(arrow_schema, format_version))
    fields = []
    for i, expr in enumerate(partition_by):
        transform, column, param = parse_partition_expr(expr)
        source = schema.find_field(column)
        t = _transform(transform, param)
        name = column if transform == "identity" else f"{column}_{transform}" + (f"_{param}" if param is not None else "")
        fields.append(PartitionField(source_id=source.field_id, field_id=1000 + i, transform=t, name=name))
    return schema, PartitionSpec(*fields)


def _parse_predicate(where: str):
    """A SQL predicate through PyIceberg's row-filter parser (``Unsupported`` if it cannot parse it)."""
    from pyiceberg.expressions.parser import parse

    try:
        return parse(where)
    except Exception as exc:  # pyparsing errors and ValueError alike
        raise _unsupported(f"pyiceberg cannot parse the predicate {where!r}: {exc}", "predicate") from None


def _iceberg_type(t: pa.DataType):
    """The Iceberg type PyIceberg maps an Arrow type to."""
    from pyiceberg.io.pyarrow import _ConvertToIcebergWithoutIDs, visit_pyarrow

    return visit_pyarrow(t, _ConvertToIcebergWithoutIDs())


def _apply_set(rows: pa.Table, assignments: dict[str, str]) -> pa.Table:
    """``rows`` with the SET expressions applied (SQL, evaluated by DuckDB), same schema."""
    import duckdb

    def q(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    con = duckdb.connect()
    try:
        con.register("matched", rows)
        cols = [
            f"CAST(({assignments[name]}) AS {_duck_type(con, rows, name)}) AS {q(name)}" if name in assignments else q(name)
            for name in rows.column_names
        ]
        out = con.execute(f"SELECT {', '.join(cols)} FROM matched").to_arrow_table()
    finally:
        con.close()
    return out.cast(rows.schema)


def _duck_type(con, rows: pa.Table, name: str) -> str:
    """DuckDB's name for the column's type (so a SET expression keeps the column type)."""
    desc = con.execute(f'DESCRIBE SELECT "{name}" FROM matched').fetchall()
    return desc[0][1]


def _rewrite(tx, tbl, pred, *, update: dict[str, str] | None = None, new_rows: pa.Table | None = None) -> None:
    """Copy-on-write in ONE snapshot: every live data file with rows matching ``pred`` is removed and
    rewritten with the rows that do not match (plus, for an update, the matched rows with the SET
    applied), and ``new_rows`` are added. This is PyIceberg's ``Transaction.delete`` rewrite
    (``ArrowScan`` + ``_dataframe_to_data_files`` + ``update_snapshot().overwrite()``) without its
    separate DELETE snapshot for wholly deleted files."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.expressions.visitors import bind
    from pyiceberg.io.pyarrow import (
        ArrowScan,
        _dataframe_to_data_files,
        _expression_to_complementary_pyarrow,
        expression_to_pyarrow,
    )

    md = tx.table_metadata
    schema = md.schema()
    bound = bind(schema, pred, case_sensitive=True)
    keep_filter = _expression_to_complementary_pyarrow(bound, schema)
    match_filter = expression_to_pyarrow(bound, schema)
    commit_uuid = uuid.uuid4()
    counter = itertools.count(0)
    removed, added = [], []
    if md.current_snapshot_id is not None:
        for task in tbl.scan(row_filter=pred).plan_files():
            if isinstance(pred, AlwaysTrue):  # a full overwrite: every file goes, nothing to read
                removed.append(task.file)
                continue
            rows = ArrowScan(table_metadata=md, io=tbl.io, projected_schema=schema, row_filter=AlwaysTrue()).to_table(tasks=[task])
            kept = rows.filter(keep_filter)
            if len(kept) == len(rows):
                continue
            if update:
                kept = pa.concat_tables([kept, _apply_set(rows.filter(match_filter), update).cast(kept.schema)])
            removed.append(task.file)
            if len(kept):
                added.extend(_dataframe_to_data_files(table_metadata=md, df=kept, io=tbl.io, write_uuid=commit_uuid, counter=counter))
    if new_rows is not None and new_rows.num_rows:
        added.extend(_dataframe_to_data_files(table_metadata=md, df=new_rows, io=tbl.io, write_uuid=commit_uuid, counter=counter))
    if not removed and not added:
        return  # nothing matched: PyIceberg commits no snapshot either
    if not added:
        # Whole files dropped, nothing rewritten: a DELETE snapshot, as PyIceberg's own delete
        # commits it (the spec's "delete" operation). The planned set pins exactly these files,
        # which is how PyIceberg replans a delete on retry.
        with tx.update_snapshot().delete() as delete:
            delete.delete_by_predicate(pred)
            delete._planned_delete_files = set(removed)
        return
    with tx.update_snapshot().overwrite(commit_uuid=commit_uuid) as overwrite:
        overwrite.delete_by_predicate(pred)
        for data_file in removed:
            overwrite.delete_data_file(data_file)
        for data_file in added:
            overwrite.append_data_file(data_file)

