"""Polars: ``read_delta`` for Delta, ``scan_iceberg`` for Iceberg.

Delta (delta-rs for the log, Polars' own Parquet reader for the data), measured on polars
1.44.2: its scanner applies deletion vectors (through delta-rs' DV export) but refuses
``columnMapping``, ``v2Checkpoint``, ``typeWidening``, ``vacuumProtocolCheck`` and
``variantShredding-preview``. ``version`` takes a number or a datetime, so version and timestamp
travel both work.

Iceberg: ``scan_iceberg(<metadata file>, snapshot_id=..., storage_options=...)``. PyIceberg plans
the scan (metadata, manifests); Polars' native Parquet reader reads the data and applies position
deletes and deletion vectors itself, and hands the whole scan back to PyIceberg ("fallback")
when it meets something else, such as equality deletes, which PyIceberg 0.12 then refuses.
``scan_iceberg`` takes only a snapshot id: versions, timestamps and refs are resolved to one by
``iceberg_facts``. The storage options are PyIceberg's ``s3.*`` keys (Polars translates them to
object_store keys for its native reader) plus ``aws_allow_http`` for a plain-HTTP endpoint.
Found while measuring (see the findings): with ``snapshot_id`` of a snapshot older than a schema
change, the scan declares the current schema but reads with the snapshot's, and panics (added,
renamed or promoted column) or drops the column (dropped since); a promoted decimal or
date->timestamp column fails even at the latest version ("data type mismatch").
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, local_path, missing_module, package_version, parse_timestamp, s3_config
from conformance.storage.s3_options import polars_iceberg_options, polars_options
from conformance.engines.base import Capabilities, Engine
from conformance.model import TableRef

_REFUSES = {
    f: "polars 1.44 delta scanner refuses tables with this reader feature (not in SUPPORTED_READER_FEATURES)"
    for f in ("columnMapping", "v2Checkpoint", "typeWidening", "typeWidening-preview", "vacuumProtocolCheck",
              "variantShredding-preview")
}
_ICEBERG_REFUSES = {
    "equality-deletes": "polars 1.44 scan_iceberg falls back to PyIceberg for equality deletes, and pyiceberg 0.12 "
    "raises 'PyIceberg does not yet support equality deletes'",
}


class PolarsEngine(Engine):
    """Polars read_delta / scan_iceberg."""

    name = "polars"

    def version(self) -> str:
        return package_version("polars")

    def _formats(self) -> list[str]:
        out = []
        if not missing_module("deltalake"):
            out.append("delta")
        if not missing_module("pyiceberg"):
            out.append("iceberg")
        return out

    def available(self) -> str | None:
        reason = missing_module("polars")
        if reason:
            return reason
        if not self._formats():
            return "neither deltalake (read_delta) nor pyiceberg (scan_iceberg) is importable"
        return None

    def capabilities(self) -> Capabilities:
        formats = frozenset(self._formats())
        return Capabilities(
            read=formats,
            read_features={f: None for f in formats},
            unsupported_reasons={**_REFUSES, **_ICEBERG_REFUSES},
        )

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        if table.format == "iceberg":
            return self._read_iceberg(table, at, timestamp, ref, columns)
        import polars as pl

        from reference_impl.errors import Unsupported

        if table.format != "delta":
            raise Unsupported(f"polars reads no {table.format} tables here")
        if ref is not None:
            raise Unsupported("Delta tables have no branches or tags", feature="ref-travel")
        version = parse_timestamp(timestamp) if timestamp is not None else at
        cfg = s3_config(table)
        opts = polars_options(cfg) if cfg is not None else None
        frame = pl.read_delta(
            engine_uri(table), version=version, columns=list(columns) if columns else None, storage_options=opts
        )
        return frame.to_arrow()

    def _read_iceberg(self, table: TableRef, at, timestamp, ref, columns) -> pa.Table:
        import polars as pl

        from conformance.engines import iceberg_facts as F
        from reference_impl.errors import Unsupported

        sel = F.selection(table, at=at, timestamp=timestamp, ref=ref)
        cfg = s3_config(table)
        opts = polars_iceberg_options(cfg) if cfg is not None else None
        latest = at is None and timestamp is None and ref is None
        snapshot_id = None if latest or sel.snapshot_id is None else sel.snapshot_id
        location = local_path(sel.metadata_location) or sel.metadata_location
        frame = pl.scan_iceberg(location, snapshot_id=snapshot_id, storage_options=opts)
        if columns:
            frame = frame.select(list(columns))
        try:
            return frame.collect().to_arrow()
        except ValueError as exc:
            if "does not yet support equality deletes" in str(exc):
                raise Unsupported(f"polars (via pyiceberg): {exc}", feature="equality-deletes") from None
            raise
