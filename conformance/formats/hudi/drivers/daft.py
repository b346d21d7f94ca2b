"""Daft ``read_hudi(uri, io_config=)``: Daft's own pure-Python Hudi reader (``daft.io.hudi.pyhudi``).

Measured on daft 0.7.26 (``unit/hudi/test_driver_daft.py``): it opens copy-on-write tables of table version 5
or 6 (timeline layout 1) only, and refuses the rest with ``UnsupportedException`` ("Only support
COPY_ON_WRITE table", "Only support table version 5 and 6"). It also requires
``hoodie.table.keygenerator.class`` and ``hoodie.datasource.write.drop.partition.columns`` in
``hoodie.properties`` ("Missing required table config", a ``KeyError`` for the key generator), which Spark
writers always write. It plans the latest snapshot from a file listing: per file group the base file with the
newest instant, whatever the timeline says, and takes the schema from the first base file the latest
``.commit`` wrote. It has no time travel, read-optimized (moot: COW only) or incremental query.
"""

from __future__ import annotations

from typing import Any

from conformance.engines._common import engine_uri, missing_module
from conformance.engines.base import TIME_TRAVEL, TIMESTAMP_TRAVEL, FormatSupport
from conformance.engines.errors import ErrorPatterns
from conformance.formats.hudi import facts as F
from conformance.formats.hudi.engines._common import data_columns

# Daft's Hudi reader is its own code (no library underneath).
LIBRARIES: tuple[str, ...] = ()

ERRORS = ErrorPatterns(
    unsupported=("Only support",),  # "Only support COPY_ON_WRITE table", "... table version 5 and 6", layout 1
    # daft.io.hudi.pyhudi.table.UnsupportedException, also for "Missing required table config" (a key Daft
    # needs in hoodie.properties that Hudi itself defaults): Daft's limit, not a broken table
    unsupported_types=("UnsupportedException",),
)

_NO_TRAVEL = "daft.read_hudi takes a table URI only: no as-of instant, query type or incremental range"
GAPS = {
    F.MERGE_ON_READ: "daft 0.7.26 reads copy-on-write tables only ('Only support COPY_ON_WRITE table')",
    F.LOG_PARQUET: "daft 0.7.26 reads copy-on-write tables only (no log files)",
    F.DELETE_BLOCKS: "daft 0.7.26 reads copy-on-write tables only (no log files)",
    F.EVENT_TIME: "daft 0.7.26 reads copy-on-write tables only (no merging)",
    F.READ_OPTIMIZED_QUERY: _NO_TRAVEL,
    F.INCREMENTAL_QUERY: _NO_TRAVEL,
    F.SCHEMA_EVOLUTION: "daft 0.7.26 takes the schema of one base file of the latest commit and reads every file "
                        "with it",
    F.SCHEMA_ON_READ: "daft 0.7.26 has no schema on read: it matches columns by name, not by InternalSchema field id "
                      "(measured on reference-written v6 copy-on-write tables: a renamed column reads null in files "
                      "written before the rename; RENAME then ADD of the old name fails with ArrowTypeError)",
    TIME_TRAVEL: _NO_TRAVEL,
    TIMESTAMP_TRAVEL: _NO_TRAVEL,
    "ref-travel": _NO_TRAVEL,
    "table-version-8": "daft 0.7.26 reads table versions 5 and 6 (timeline layout 1) only",
    "table-version-9": "daft 0.7.26 reads table versions 5 and 6 (timeline layout 1) only",
}


def available(engine: Any) -> str | None:
    # read_hudi imports sortedcontainers lazily (at the first read): missing, it is no Hudi here.
    return missing_module("daft.io.hudi.pyhudi.filegroup", "daft")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(read_features=frozenset({F.TABLE_VERSION_6}), gaps=dict(GAPS))


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    from reference_impl.errors import Unsupported

    if at is not None or timestamp is not None or ref is not None:
        feature = TIME_TRAVEL if at is not None else TIMESTAMP_TRAVEL if timestamp is not None else "ref-travel"
        raise Unsupported(_NO_TRAVEL, feature=feature)
    import logging

    import daft

    # "no partition filter was specified" on every unfiltered read: a full scan is what a conformance read wants.
    logging.getLogger("daft.io.hudi.hudi_scan").setLevel(logging.ERROR)
    try:
        frame = daft.read_hudi(engine_uri(table), io_config=engine.io_config(table))
    except KeyError as exc:  # HudiTableProps indexes hoodie.properties directly for the key generator
        raise Unsupported(f"daft.read_hudi needs {exc} in hoodie.properties (KeyError)",
                          feature="hudi-keygenerator-class") from None
    return data_columns(engine.collect(frame, columns))


def reproduce(engine: Any, table, at=None) -> str | None:
    """``read()`` through Daft's public API (``lakeconf findings export``)."""
    if at is not None:
        return None
    return ("def read():\n"
            "    import daft\n"
            "    return daft.read_hudi(TABLE).to_arrow()\n")
