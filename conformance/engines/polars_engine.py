"""Polars ``read_delta`` (delta-rs for the log, Polars' own Parquet reader for the data).

Capabilities measured on polars 1.44.2: its scanner applies deletion vectors (through delta-rs'
DV export) but refuses ``columnMapping``, ``v2Checkpoint``, ``typeWidening``,
``vacuumProtocolCheck`` and ``variantShredding-preview``. ``version`` takes a number or a
datetime, so version and timestamp travel both work.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, missing_module, package_version, parse_timestamp, s3_config
from conformance.storage.s3_options import polars_options
from conformance.engines.base import Capabilities, Engine
from conformance.model import TableRef

_REFUSES = {
    f: "polars 1.44 delta scanner refuses tables with this reader feature (not in SUPPORTED_READER_FEATURES)"
    for f in ("columnMapping", "v2Checkpoint", "typeWidening", "typeWidening-preview", "vacuumProtocolCheck",
              "variantShredding-preview")
}


class PolarsEngine(Engine):
    """Polars read_delta."""

    name = "polars"

    def version(self) -> str:
        return package_version("polars")

    def available(self) -> str | None:
        return missing_module("polars") or missing_module("deltalake")

    def capabilities(self) -> Capabilities:
        return Capabilities(read=frozenset({"delta"}), read_features={"delta": None}, unsupported_reasons=dict(_REFUSES))

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        import polars as pl

        version = parse_timestamp(timestamp) if timestamp is not None else at
        cfg = s3_config(table)
        opts = polars_options(cfg) if cfg is not None else None
        frame = pl.read_delta(
            engine_uri(table), version=version, columns=list(columns) if columns else None, storage_options=opts
        )
        return frame.to_arrow()
