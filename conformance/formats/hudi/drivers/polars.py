"""Polars and Hudi: no reader, and why.

Polars scans Parquet, Delta (through delta-rs) and Iceberg (through pyiceberg) but has no Hudi scan
(no ``scan_hudi`` in Polars 1.44): reading a Hudi table's base files as plain Parquet would
return rolled-back, replaced and unmerged records. The driver exists so that ``lakeconf engines`` says so.
"""

from __future__ import annotations

from typing import Any

REASON = "Polars has no Hudi scan (scan_hudi does not exist); reading the base files as plain Parquet would be wrong"


def available(engine: Any) -> str | None:
    return REASON
