"""Daft ``read_deltalake`` (delta-rs for the log, Daft's own Parquet reader).

Measured on daft 0.7.26: it maps column-mapping physical names itself and accepts every reader
feature delta-rs accepts, but raises "deletion vectors are not yet supported" when a table
enables them (unless told to ignore them, which would return deleted rows: never used here).
``version`` takes a number or a datetime.
"""

from __future__ import annotations

import logging
from typing import Any

from conformance.engines._common import engine_uri, missing_module, parse_timestamp
from conformance.engines.base import FormatSupport
from conformance.formats.delta.errors import KERNEL



# the library the engine reads this format through (its version is part of the engine's)
LIBRARIES = ("deltalake",)
# what this engine says when it refuses a table of this format (conformance.engines.errors)
ERRORS = KERNEL

def available(engine: Any) -> str | None:
    return missing_module("deltalake", "deltalake")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(gaps={"deletionVectors": "daft 0.7 raises 'Delta Lake deletion vectors are not yet supported'"})


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    import daft

    from reference_impl.errors import Unsupported

    if ref is not None:
        raise Unsupported("Delta tables have no branches or tags", feature="ref-travel")
    # Daft warns on every unfiltered scan of a partitioned table; that noise would break the
    # progress line, and a full scan is exactly what a conformance read wants.
    logging.getLogger("daft.io.delta_lake.delta_lake_scan").setLevel(logging.ERROR)
    version = parse_timestamp(timestamp) if timestamp is not None else at
    frame = daft.read_deltalake(engine_uri(table), version=version, io_config=engine.io_config(table))
    return engine.collect(frame, columns)


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through Daft's public API (``lakeconf findings export``)."""
    return (
        "def read():\n"
        "    import daft\n"
        f"    return daft.read_deltalake(TABLE, version={at!r}).to_arrow()\n"
    )
