"""delta-rs through its Python package ``deltalake``: ``DeltaTable(...).to_pyarrow_table()``.

Capabilities measured on deltalake 1.6.6 (a table whose protocol names one reader feature):
the pyarrow path refuses ``deletionVectors``, ``columnMapping``, ``v2Checkpoint``,
``typeWidening``, ``vacuumProtocolCheck`` and ``variantShredding-preview`` ("not yet supported"),
while the DataFusion path (``QueryBuilder``) reads them; so delta-rs appears twice: ``deltalake``
(pyarrow) and ``deltalake-datafusion`` (SQL). Version and timestamp travel work on both. Features not named here are claimed: delta-rs' own
protocol check refuses what it cannot read, and the harness reports that as an error.

``deltalake`` is also a *writer* (``write``): the steps map to what a deltalake user calls, see
``DeltalakeEngine._run_step`` and ``WRITE_STEPS``. What it cannot do raises ``Unsupported``
naming the step or feature: RenameColumn/DropColumn (no API in 1.6.6), multi-part and V2
checkpoints, Raw steps, and the table features delta-rs cannot enable at creation.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, missing_module, package_version, parse_timestamp, s3_options
from conformance.engines.base import Capabilities, Engine
from conformance.engines.errors import refusals
from conformance.formats.delta.errors import KERNEL
from conformance.formats.delta.steps import MIN_READER_VERSION, MIN_WRITER_VERSION, Checkpoint
from conformance.model import (
    AddColumn,
    AddConstraint,
    Append,
    Create,
    Delete,
    Optimize,
    Overwrite,
    SetProperties,
    Step,
    TableRef,
    Update,
)

# The step classes delta-rs 1.6.6 runs through its Python API (RenameColumn, DropColumn and Raw
# have no deltalake API: the runner reports those cases as not built without calling write()).
WRITE_STEPS = frozenset(
    {"Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddConstraint", "AddColumn",
     "Optimize", "Checkpoint"}
)

# Table features a Create can ask for, and the table property that makes delta-rs 1.6.6 enable it
# (measured: each of these yields a protocol supporting the feature). An empty mapping: delta-rs
# enables the feature by itself when the schema needs it (timestamp_ntz columns, generation
# expressions) or implies it from its default (1,2) protocol (appendOnly/invariants). Features
# not named here are refused with ``Unsupported``: ``delta.enableRowTracking`` and
# ``delta.enableInCommitTimestamps`` do not parse in 1.6.6 ("Error parsing property"),
# ``delta.feature.<name>=supported`` is refused likewise, and ``delta.checkpointPolicy=v2`` is
# stored without adding the v2Checkpoint feature.
FEATURE_PROPERTIES: Mapping[str, Mapping[str, str]] = {
    "deletionVectors": {"delta.enableDeletionVectors": "true"},
    "columnMapping": {"delta.columnMapping.mode": "name"},
    "changeDataFeed": {"delta.enableChangeDataFeed": "true"},
    "appendOnly": {"delta.appendOnly": "true"},
    "invariants": {},
    "timestampNtz": {},
    "generatedColumns": {},
    "checkConstraints": {},
}
# Properties delta-rs 1.6.6 cannot set (its kernel fails to parse them).
_UNSETTABLE_PROPERTIES = {
    "delta.enableRowTracking": "rowTracking",
    "delta.enableInCommitTimestamps": "inCommitTimestamp",
}

_PYARROW_REFUSES = {
    f: "deltalake 1.6.6 to_pyarrow_table() refuses tables with this reader feature (not yet supported)"
    for f in ("deletionVectors", "columnMapping", "v2Checkpoint", "typeWidening", "typeWidening-preview",
              "vacuumProtocolCheck", "variantShredding-preview")
}


class DeltalakeEngine(Engine):
    """delta-rs (deltalake), pyarrow read path."""

    name = "deltalake"

    def version(self) -> str:
        return package_version("deltalake")

    def available(self) -> str | None:
        return missing_module("deltalake", "deltalake")

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta"}),
            write=frozenset({"delta"}),
            read_features={"delta": None},
            write_steps={"delta": WRITE_STEPS},
            unsupported={"delta": dict(_PYARROW_REFUSES)},
        )

    def _table(self, table: TableRef, at: int | None, timestamp: str | None):
        from deltalake import DeltaTable

        opts = s3_options(table.storage_options) or None
        dt = DeltaTable(engine_uri(table), version=at, storage_options=opts)
        if timestamp is not None:
            dt.load_as_version(parse_timestamp(timestamp))
        return dt

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        _no_refs(ref)
        with refusals(KERNEL, table.uri):
            dt = self._table(table, at, timestamp)
            return dt.to_pyarrow_table(columns=list(columns) if columns else None)

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        return ("def read():\n"
                "    from deltalake import DeltaTable\n"
                f"    return DeltaTable(TABLE, version={at!r}).to_pyarrow_table()\n")

    def describe(self, table: TableRef, *, at: int | None = None, timestamp: str | None = None,
                 ref: str | None = None) -> dict | None:
        from conformance.formats.delta.facts import facts

        _no_refs(ref)
        with refusals(KERNEL, table.uri):
            dt = self._table(table, at, timestamp)
            p = dt.protocol()
            m = dt.metadata()
        return facts(
            version=dt.version(),
            min_reader=p.min_reader_version,
            min_writer=p.min_writer_version,
            reader_features=p.reader_features,
            writer_features=p.writer_features,
            partition_columns=m.partition_columns,
            configuration=m.configuration,
        )


    # -- write ---------------------------------------------------------------------------------

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        from reference_impl.errors import Unsupported

        for step in steps:
            if type(step).__name__ not in WRITE_STEPS:
                raise Unsupported(
                    f"deltalake cannot run a {type(step).__name__} step"
                    + (f" ({step.description})" if hasattr(step, "description") else ""),
                    feature=type(step).__name__,
                )
        uri = engine_uri(table)
        opts = s3_options(table.storage_options) or None
        for step in steps:
            self._run_step(uri, opts, step)

    def _run_step(self, uri: str, opts: dict | None, step: Step) -> None:
        from deltalake import DeltaTable, write_deltalake
        from reference_impl.errors import Unsupported

        if isinstance(step, Create):
            self._create(uri, opts, step)
            return
        dt = DeltaTable(uri, storage_options=opts)
        if isinstance(step, Append):
            before = dt.version()
            if step.files > 1:
                # delta-rs has no "N files" option: one write_deltalake call with the rows as
                # ``files`` record batches and target_file_size=1, so its writer rolls a new file
                # as often as it can; it still decides the split itself (DataFusion repartitions
                # the batches), so the commit is checked to hold more than one file.
                per = max(1, -(-step.rows.num_rows // step.files))
                write_deltalake(dt, step.rows.to_batches(max_chunksize=per), mode="append", target_file_size=1)
                adds = _commit_adds(DeltaTable(uri, storage_options=opts), before + 1)
                if adds < 2 <= step.rows.num_rows:
                    raise Unsupported(
                        f"delta-rs wrote {adds} file(s) for an append asked to span {step.files} files "
                        "(its writer chooses the file split)",
                        feature="Append(files>1)",
                    )
            else:
                write_deltalake(dt, step.rows, mode="append")
        elif isinstance(step, Overwrite):
            current = dt.schema().to_arrow()
            same = [f.name for f in current] == step.rows.column_names
            if same:
                write_deltalake(dt, step.rows, mode="overwrite")
            else:
                write_deltalake(dt, step.rows, mode="overwrite", schema_mode="overwrite")
        elif isinstance(step, Delete):
            dt.delete(step.where)
        elif isinstance(step, Update):
            dt.update(updates=dict(step.set), predicate=step.where)
        elif isinstance(step, SetProperties):
            for key, feature in _UNSETTABLE_PROPERTIES.items():
                if key in step.properties:
                    raise Unsupported(f"deltalake 1.6.6 cannot set {key} (its kernel fails to parse it)", feature=feature)
            dt.alter.set_table_properties(dict(step.properties))
        elif isinstance(step, AddConstraint):
            dt.alter.add_constraint({step.name: step.expression})
        elif isinstance(step, AddColumn):
            from deltalake.schema import Field

            dt.alter.add_columns(Field.from_arrow(step.field))
        elif isinstance(step, Optimize):
            dt.optimize.compact()
        elif isinstance(step, Checkpoint):
            if step.kind != "classic":
                raise Unsupported(
                    f"deltalake 1.6.6 writes only classic single-file checkpoints (create_checkpoint()), not {step.kind}",
                    feature="v2Checkpoint" if step.kind == "v2" else "checkpoint-multipart",
                )
            config = dt.metadata().configuration
            has_struct = config.get("delta.checkpoint.writeStatsAsStruct", "false") == "true"
            has_json = config.get("delta.checkpoint.writeStatsAsJson", "true") == "true"
            if ("struct" in step.stats) != has_struct or ("json" in step.stats) != has_json:
                raise Unsupported(
                    "deltalake chooses checkpoint stats columns from the table properties "
                    "delta.checkpoint.writeStatsAsJson / writeStatsAsStruct; set them at creation",
                    feature="checkpoint-stats",
                )
            dt.create_checkpoint()
        else:  # pragma: no cover - write() filtered these
            raise Unsupported(f"deltalake cannot run a {type(step).__name__} step")

    def _create(self, uri: str, opts: dict | None, step: Create) -> None:
        """``DeltaTable.create`` with the schema, partition columns and configuration (one commit)."""
        from deltalake import DeltaTable
        from reference_impl.errors import Unsupported

        from conformance.formats.delta.facts import supported_features

        config: dict[str, str] = {}
        for feature in step.features:
            if feature not in FEATURE_PROPERTIES:
                raise Unsupported(
                    f"deltalake 1.6.6 cannot enable the table feature {feature} at creation", feature=feature
                )
            for key, value in FEATURE_PROPERTIES[feature].items():
                config.setdefault(key, value)
        for key, feature in _UNSETTABLE_PROPERTIES.items():
            if key in step.properties:
                raise Unsupported(f"deltalake 1.6.6 cannot set {key} (its kernel fails to parse it)", feature=feature)
        # delta.minReaderVersion / delta.minWriterVersion pass through: delta-rs pins the protocol from them.
        config.update(step.properties)
        pinned = None
        if MIN_READER_VERSION in step.properties or MIN_WRITER_VERSION in step.properties:
            pinned = (int(step.properties.get(MIN_READER_VERSION, 1)), int(step.properties.get(MIN_WRITER_VERSION, 2)))
        dt = DeltaTable.create(
            uri, step.schema, partition_by=list(step.partition_by) or None, configuration=config or None,
            storage_options=opts,
        )
        p = dt.protocol()
        if pinned is not None and (p.min_reader_version, p.min_writer_version) != pinned:
            raise Unsupported(
                f"deltalake created protocol ({p.min_reader_version},{p.min_writer_version}), not the pinned "
                f"{pinned}",
                feature="protocol",
            )
        have = supported_features(p.min_reader_version, p.min_writer_version, p.reader_features, p.writer_features)
        missing = [f for f in step.features if f not in have]
        if missing:
            raise Unsupported(
                f"deltalake 1.6.6 did not enable the table feature(s) {', '.join(missing)} "
                f"(protocol ({p.min_reader_version},{p.min_writer_version}))",
                feature=missing[0],
            )


def _no_refs(ref: str | None) -> None:
    from reference_impl.errors import Unsupported

    if ref is not None:
        raise Unsupported("Delta tables have no named branches or tags", feature="ref-travel")


def _commit_adds(dt, version: int) -> int:
    """How many add actions commit ``version`` holds (from the table's history metrics)."""
    for entry in dt.history():
        if entry.get("version") == version:
            metrics = entry.get("operationMetrics") or {}
            if "num_added_files" in metrics:
                return int(metrics["num_added_files"])
    return 0


class DeltalakeDataFusionEngine(DeltalakeEngine):
    """delta-rs (deltalake), DataFusion SQL read path (``QueryBuilder``)."""

    name = "deltalake-datafusion"

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta"}),
            read_features={"delta": None},
        )

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        return ("def read():\n"
                "    import pyarrow as pa\n"
                "    from deltalake import DeltaTable, QueryBuilder\n"
                f"    dt = DeltaTable(TABLE, version={at!r})\n"
                "    stream = QueryBuilder().register('t', dt).execute('SELECT * FROM t')\n"
                "    return pa.RecordBatchReader.from_stream(stream).read_all()\n")

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from deltalake import QueryBuilder

        _no_refs(ref)
        with refusals(KERNEL, table.uri):
            dt = self._table(table, at, timestamp)
            select = ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"
            reader = QueryBuilder().register("t", dt).execute(f"SELECT {select} FROM t")
            # The result is an arro3 reader; the Arrow C stream interface hands it to pyarrow.
            return pa.RecordBatchReader.from_stream(reader).read_all()
