"""Daft ``read_paimon(<pypaimon FileStoreTable>, io_config=)`` over the table pypaimon opens.

The table is opened as the pypaimon engine opens it (``FileStoreTable.from_path``, the branch's
schema for a branch), and time travel is pypaimon's: ``table.copy({"scan.snapshot-id" |
"scan.timestamp-millis" | "scan.tag-name": ...})``, which Daft honours because it plans the scan with
the table's own read builder. pypaimon plans the splits; Daft reads raw-convertible splits with its
own Parquet reader and hands the others (LSM merges, non-Parquet files) back to pypaimon's reader.

Measured on daft 0.7.26 with pypaimon 2.1.0: ``daft.read_paimon`` cannot open any table, because it
was written against the pypaimon API of before 2.0 (it calls ``file_io.properties.get("warehouse")``
and ``table.options.get("file.format")``, which are ``Options`` / ``CoreOptions`` objects in 2.x:
"AttributeError: 'str' object has no attribute 'key'"). pypaimon 2.1 ships the Daft integration
itself (``pypaimon.daft``: the same ``PaimonDataSource`` design, kept in step with pypaimon), so when
Daft's own entry point raises that error the driver reads through ``pypaimon.daft``'s data source for
the same table object; the reproduction snippet still calls ``daft.read_paimon`` (what a Daft user
runs, and what fails).

Also measured: ``pypaimon.daft`` reads the splits that need pypaimon's reader (primary-key merges,
ORC/Avro files) in a task that reopens the table by catalog identifier (when the FileIO has options)
or by bare path (without the store options); on S3 a table outside a catalog cannot be reopened
("TableNotExistException: Table default.table does not exist"), raised here as ``Unsupported``.
Raw-convertible splits (append tables, single-run Parquet primary-key buckets) read fine on S3.
"""

from __future__ import annotations

import logging
from typing import Any

from conformance.engines._common import missing_module
from conformance.engines.base import FormatSupport
from conformance.formats.paimon.engines.pypaimon import PYPAIMON, diagnose, file_io_options, select

# the library the engine reads this format through (its version is part of the engine's)
LIBRARIES = ("pypaimon",)
# what this engine says when it refuses a table of this format (conformance.engines.errors)
ERRORS = PYPAIMON
# The words of daft.read_paimon's incompatibility with pypaimon >= 2 (see the module docstring).
_RELOAD_GAP = ("pypaimon.daft reads splits that need a merge (primary-key LSM runs, ORC/Avro files) in a task that "
               "reopens the table from a catalog built of the FileIO options, or from the bare path without them: "
               "a table outside a catalog on an object store cannot be reopened")
_INCOMPATIBLE = ("'str' object has no attribute 'key'", "'CoreOptions' object has no attribute 'get'")


def available(engine: Any) -> str | None:
    return missing_module("pypaimon", "paimon")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(read_features=None, gaps={})


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    import pyarrow as pa
    from pypaimon.schema.data_types import PyarrowFieldParser

    # "no partition filter: full table scan" on every unfiltered read would break the progress line,
    # and a full scan is exactly what a conformance read wants.
    for name in ("daft.io.paimon.paimon_scan", "pypaimon.daft.daft_datasource"):
        logging.getLogger(name).setLevel(logging.ERROR)
    tbl, empty = select(table, at=at, timestamp=timestamp, ref=ref)
    if empty:
        schema = PyarrowFieldParser.from_paimon_schema(tbl.fields)
        return (pa.schema([schema.field(c) for c in columns]) if columns else schema).empty_table()
    try:
        return engine.collect(_frame(engine, table, tbl), columns)
    except Exception as exc:  # daft.exceptions.DaftCoreException has no stable import path
        if "TableNotExistException" in str(exc) and "default.table" in str(exc):
            from reference_impl.errors import Unsupported

            raise Unsupported(_RELOAD_GAP + f" ({str(exc)[:200]})", feature="primary-key") from None
        raise diagnose(exc, tbl) from None


def _frame(engine: Any, table, tbl):
    import daft

    io_config = engine.io_config(table)
    try:
        return daft.read_paimon(tbl, io_config=io_config)
    except AttributeError as exc:
        if not any(f in str(exc) for f in _INCOMPATIBLE):
            raise
    from pypaimon.daft.daft_paimon import _source_for_table

    return _source_for_table(tbl, catalog_options=file_io_options(table), io_config=io_config).read()


def reproduce(engine: Any, table, at=None) -> str | None:
    """``read()`` through Daft's public API (``lakeconf findings export``)."""
    if at == 0:  # the kit's "before the first commit" has no pypaimon spelling
        return None
    travel = f"    table = table.copy({{'scan.snapshot-id': '{int(at)}'}})\n" if at else ""
    return ("def read():\n"
            "    import daft\n"
            "    from pypaimon.table.file_store_table import FileStoreTable\n"
            "    table = FileStoreTable.from_path(TABLE)\n"
            + travel +
            "    return daft.read_paimon(table).to_arrow()\n")

