"""Daft ``read_deltalake`` (delta-rs for the log, Daft's own Parquet reader for the data).

Capabilities measured on daft 0.7.26: it maps column-mapping physical names itself and accepts
every reader feature delta-rs accepts, but raises "deletion vectors are not yet supported" when a
table enables them (unless told to ignore them, which would return deleted rows: never used
here). ``version`` takes a number or a datetime.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, missing_module, package_version, parse_timestamp, s3_config
from conformance.storage.s3_options import daft_io_config
from conformance.engines.base import Capabilities, Engine
from conformance.model import TableRef


class DaftEngine(Engine):
    """Daft read_deltalake."""

    name = "daft"

    def version(self) -> str:
        return package_version("daft")

    def available(self) -> str | None:
        return missing_module("daft") or missing_module("deltalake")

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta"}),
            read_features={"delta": None},
            unsupported_reasons={"deletionVectors": "daft 0.7 raises 'Delta Lake deletion vectors are not yet supported'"},
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
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        import logging

        import daft

        # Daft warns on every unfiltered scan of a partitioned table; that noise would break the
        # progress line, and a full scan is exactly what a conformance read wants.
        logging.getLogger("daft.io.delta_lake.delta_lake_scan").setLevel(logging.ERROR)
        version = parse_timestamp(timestamp) if timestamp is not None else at
        frame = daft.read_deltalake(engine_uri(table), version=version, io_config=self._io_config(table))
        if columns:
            frame = frame.select(*columns)
        return frame.to_arrow()
