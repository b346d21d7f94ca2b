"""Polars: each format's scan (``conformance/formats/<format>/drivers/polars.py``) collected to Arrow."""

from __future__ import annotations

from conformance.engines._common import missing_module, package_version
from conformance.engines.base import MultiFormatEngine


class PolarsEngine(MultiFormatEngine):
    """Polars, through the scan functions of every format whose driver is usable here."""

    name = "polars"

    def version(self) -> str:
        return package_version("polars") + self.library_versions()

    def available(self) -> str | None:
        return missing_module("polars", "polars") or super().available()
