"""Daft: each format's reader (``conformance/formats/<format>/drivers/daft.py``) collected to Arrow."""

from __future__ import annotations

from conformance.engines._common import missing_module, package_version, s3_config
from conformance.engines.base import MultiFormatEngine
from conformance.model import TableRef
from conformance.storage.s3_options import daft_io_config


class DaftEngine(MultiFormatEngine):
    """Daft, through the readers of every format whose driver is usable here."""

    name = "daft"

    def version(self) -> str:
        return package_version("daft") + self.library_versions()

    def available(self) -> str | None:
        return missing_module("daft", "daft") or super().available()

    def io_config(self, table: TableRef):
        """Daft's ``IOConfig`` for the table's store (``None`` for local tables)."""
        cfg = s3_config(table)
        return daft_io_config(cfg) if cfg is not None else None

    @staticmethod
    def collect(frame, columns):
        """The frame's rows as Arrow (only ``columns`` when given)."""
        if columns:
            frame = frame.select(*columns)
        return frame.to_arrow()
