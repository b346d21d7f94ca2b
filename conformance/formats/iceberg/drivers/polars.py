"""Polars ``scan_iceberg(<metadata file>, snapshot_id=..., storage_options=...)``.

PyIceberg plans the scan (metadata, manifests); Polars' native Parquet reader reads the data and
applies position deletes and deletion vectors itself, and hands the whole scan back to PyIceberg
("fallback") when it meets something else, such as equality deletes, which PyIceberg 0.12 then
refuses. ``scan_iceberg`` takes only a snapshot id: versions, timestamps and refs are resolved to
one by ``facts``. The storage options are PyIceberg's ``s3.*`` keys (Polars translates them to
object_store keys for its native reader) plus ``aws_allow_http`` for a plain-HTTP endpoint.
Found while measuring (see the findings): with ``snapshot_id`` of a snapshot older than a schema
change, the scan declares the current schema but reads with the snapshot's, and panics (added,
renamed or promoted column) or drops the column (dropped since); a promoted decimal or
date->timestamp column fails even at the latest version ("data type mismatch").
"""

from __future__ import annotations

from typing import Any

from conformance.engines._common import local_path, missing_module, s3_config
from conformance.engines.base import FormatSupport
from conformance.formats.iceberg import facts as F
from conformance.formats.iceberg.errors import PYICEBERG
from conformance.formats.iceberg.s3 import polars_iceberg_options

_REFUSES = {
    "equality-deletes": "polars 1.44 scan_iceberg falls back to PyIceberg for equality deletes, and pyiceberg 0.12 "
    "raises 'PyIceberg does not yet support equality deletes'",
}



# the library the engine reads this format through (its version is part of the engine's)
LIBRARIES = ("pyiceberg",)
# what this engine says when it refuses a table of this format (conformance.engines.errors)
ERRORS = PYICEBERG

def available(engine: Any) -> str | None:
    return missing_module("pyiceberg", "pyiceberg")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(gaps=_REFUSES)


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    import polars as pl

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


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through Polars' public API (``lakeconf findings export``)."""
    return ("def read():\n" + F.reproduction_prelude(table, at)
            + "    import polars as pl\n"
            "    return pl.scan_iceberg(META, snapshot_id=SNAPSHOT).collect().to_arrow()\n")
