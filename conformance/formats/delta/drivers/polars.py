"""Polars ``read_delta`` (delta-rs for the log, Polars' own Parquet reader for the data).

Measured on polars 1.44.2: its scanner applies deletion vectors (through delta-rs' DV export) but
refuses ``columnMapping``, ``v2Checkpoint``, ``typeWidening``, ``vacuumProtocolCheck`` and
``variantShredding-preview``. ``version`` takes a number or a datetime, so version and timestamp
travel both work.
"""

from __future__ import annotations

from typing import Any

from conformance.engines._common import engine_uri, missing_module, parse_timestamp, s3_config
from conformance.engines.base import FormatSupport
from conformance.formats.delta.errors import KERNEL
from conformance.storage.s3_options import polars_options

_REFUSES = {
    f: "polars 1.44 delta scanner refuses tables with this reader feature (not in SUPPORTED_READER_FEATURES)"
    for f in ("columnMapping", "v2Checkpoint", "typeWidening", "typeWidening-preview", "vacuumProtocolCheck",
              "variantShredding-preview")
}



# the library the engine reads this format through (its version is part of the engine's)
LIBRARIES = ("deltalake",)
# what this engine says when it refuses a table of this format (conformance.engines.errors)
ERRORS = KERNEL

def available(engine: Any) -> str | None:
    return missing_module("deltalake", "deltalake")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(gaps=_REFUSES)


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    import polars as pl

    from reference_impl.errors import Unsupported

    if ref is not None:
        raise Unsupported("Delta tables have no branches or tags", feature="ref-travel")
    version = parse_timestamp(timestamp) if timestamp is not None else at
    cfg = s3_config(table)
    opts = polars_options(cfg) if cfg is not None else None
    frame = pl.read_delta(engine_uri(table), version=version, columns=list(columns) if columns else None,
                          storage_options=opts)
    return frame.to_arrow()


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through Polars' public API (``lakeconf findings export``)."""
    return (
        "def read():\n"
        "    import polars as pl\n"
        f"    return pl.read_delta(TABLE, version={at!r}).to_arrow()\n"
    )
