"""Daft: ``read_deltalake`` for Delta, ``read_iceberg`` for Iceberg (Daft's own Parquet reader).

Delta (delta-rs for the log), measured on daft 0.7.26: it maps column-mapping physical names
itself and accepts every reader feature delta-rs accepts, but raises "deletion vectors are not
yet supported" when a table enables them (unless told to ignore them, which would return deleted
rows: never used here). ``version`` takes a number or a datetime.

Iceberg: ``read_iceberg(<PyIceberg StaticTable>, snapshot_id= | branch= | tag=, io_config=)``.
PyIceberg plans the scan (the table is opened here with the store's FileIO properties, since a
metadata path alone would be opened without them); Daft reads the Parquet files and applies the
delete files PyIceberg attaches to each task as *position* deletes. Refs go through Daft's own
``branch``/``tag`` parameters; versions and timestamps through ``iceberg_facts`` (Daft takes no
timestamp). Measured gaps, declared below: equality deletes (PyIceberg's planner refuses them)
and deletion vectors (Daft opens the Puffin file as Parquet; raised here as ``Unsupported``).
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, local_path, missing_module, package_version, parse_timestamp, s3_config
from conformance.storage.s3_options import daft_io_config
from conformance.engines.base import Capabilities, Engine
from conformance.model import TableRef

_ICEBERG_REFUSES = {
    "deletion-vectors": "daft 0.7.26 hands the Puffin file of a deletion vector to its Parquet reader as if it "
    "were a position delete file and fails ('Parquet error: Invalid Parquet file. Corrupt footer')",
    "equality-deletes": "daft 0.7.26 plans Iceberg scans with pyiceberg 0.12, which raises 'PyIceberg does not "
    "yet support equality deletes'",
}


class DaftEngine(Engine):
    """Daft read_deltalake / read_iceberg."""

    name = "daft"

    def version(self) -> str:
        return package_version("daft")

    def _formats(self) -> list[str]:
        out = []
        if not missing_module("deltalake"):
            out.append("delta")
        if not missing_module("pyiceberg"):
            out.append("iceberg")
        return out

    def available(self) -> str | None:
        reason = missing_module("daft")
        if reason:
            return reason
        if not self._formats():
            return "neither deltalake (read_deltalake) nor pyiceberg (read_iceberg) is importable"
        return None

    def capabilities(self) -> Capabilities:
        formats = frozenset(self._formats())
        return Capabilities(
            read=formats,
            read_features={f: None for f in formats},
            unsupported_reasons={
                "deletionVectors": "daft 0.7 raises 'Delta Lake deletion vectors are not yet supported'",
                **_ICEBERG_REFUSES,
            },
        )

    def _io_config(self, table: TableRef):
        cfg = s3_config(table)
        return daft_io_config(cfg) if cfg is not None else None

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        import logging

        import daft

        from reference_impl.errors import Unsupported

        if table.format == "iceberg":
            # The same "no partition filter: full table scan" warning as for Delta, from the Iceberg scan.
            logging.getLogger("daft.io.iceberg.iceberg_scan").setLevel(logging.ERROR)
            frame = self._iceberg_frame(table, at, timestamp, ref)
        elif table.format == "delta":
            if ref is not None:
                raise Unsupported("Delta tables have no branches or tags", feature="ref-travel")
            # Daft warns on every unfiltered scan of a partitioned table; that noise would break the
            # progress line, and a full scan is exactly what a conformance read wants.
            logging.getLogger("daft.io.delta_lake.delta_lake_scan").setLevel(logging.ERROR)
            version = parse_timestamp(timestamp) if timestamp is not None else at
            frame = daft.read_deltalake(engine_uri(table), version=version, io_config=self._io_config(table))
        else:
            raise Unsupported(f"daft reads no {table.format} tables here")
        if columns:
            frame = frame.select(*columns)
        try:
            return frame.to_arrow()
        except ValueError as exc:
            if "does not yet support equality deletes" in str(exc):
                raise Unsupported(f"daft (via pyiceberg): {exc}", feature="equality-deletes") from None
            raise
        except Exception as exc:  # daft.exceptions.DaftCoreException has no stable import path
            text = str(exc)
            if table.format == "iceberg" and ".puffin" in text and "Parquet" in text:
                raise Unsupported(
                    f"daft reads the deletion vector's Puffin file as Parquet: {text[:300]}", feature="deletion-vectors"
                ) from None
            raise

    def _iceberg_frame(self, table: TableRef, at, timestamp, ref):
        import daft
        from pyiceberg.table import StaticTable

        from conformance.engines import iceberg_facts as F
        from conformance.engines.pyiceberg_engine import io_properties
        from reference_impl.errors import InvalidTable

        if ref is not None and at is None and timestamp is None:
            tbl = StaticTable.from_metadata(F.metadata_location(table), properties=io_properties(table))
            found = tbl.metadata.refs.get(ref)
            if found is None:
                if ref == F.MAIN:  # main exists logically even when refs is absent
                    return daft.read_iceberg(tbl, io_config=self._io_config(table))
                raise InvalidTable(f"no branch or tag named {ref!r}", rule="ICEBERG-META-039")
            kind = found.snapshot_ref_type.value
            kw = {"branch": ref} if kind == "branch" else {"tag": ref}
            return daft.read_iceberg(tbl, io_config=self._io_config(table), **kw)
        sel = F.selection(table, at=at, timestamp=timestamp, ref=ref)
        location = local_path(sel.metadata_location) or sel.metadata_location
        tbl = StaticTable.from_metadata(location, properties=io_properties(table))
        latest = at is None and timestamp is None
        snapshot_id = None if latest or sel.snapshot_id is None else sel.snapshot_id
        return daft.read_iceberg(tbl, snapshot_id=snapshot_id, io_config=self._io_config(table))
