"""delta-rs through its Python package ``deltalake``: ``DeltaTable(...).to_pyarrow_table()``.

Capabilities measured on deltalake 1.6.6 (a table whose protocol names one reader feature):
the pyarrow path refuses ``deletionVectors``, ``columnMapping``, ``v2Checkpoint``,
``typeWidening``, ``vacuumProtocolCheck`` and ``variantShredding-preview`` ("not yet supported"),
while the DataFusion path (``QueryBuilder``) reads them; so delta-rs appears twice: ``deltalake``
(pyarrow) and ``deltalake-datafusion`` (SQL). Version and timestamp travel work on both. Features not named here are claimed: delta-rs' own
protocol check refuses what it cannot read, and the harness reports that as an error.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, missing_module, package_version, parse_timestamp, s3_options
from conformance.engines.base import Capabilities, Engine
from conformance.model import TableRef

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
        return missing_module("deltalake")

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta"}),
            read_features={"delta": None},
            unsupported_reasons=dict(_PYARROW_REFUSES),
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
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        dt = self._table(table, at, timestamp)
        return dt.to_pyarrow_table(columns=list(columns) if columns else None)

    def describe(self, table: TableRef, *, at: int | None = None, timestamp: str | None = None) -> dict | None:
        from conformance.engines.delta_facts import facts

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


class DeltalakeDataFusionEngine(DeltalakeEngine):
    """delta-rs (deltalake), DataFusion SQL read path (``QueryBuilder``)."""

    name = "deltalake-datafusion"

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta"}),
            read_features={"delta": None},
        )

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from deltalake import QueryBuilder

        dt = self._table(table, at, timestamp)
        select = ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"
        reader = QueryBuilder().register("t", dt).execute(f"SELECT {select} FROM t")
        # The result is an arro3 reader; the Arrow C stream interface hands it to pyarrow.
        return pa.RecordBatchReader.from_stream(reader).read_all()
