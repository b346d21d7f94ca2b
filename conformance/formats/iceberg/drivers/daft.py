"""Daft ``read_iceberg(<PyIceberg StaticTable>, snapshot_id= | branch= | tag=, io_config=)``.

PyIceberg plans the scan (the table is opened here with the store's FileIO properties, since a
metadata path alone would be opened without them); Daft reads the Parquet files and applies the
delete files PyIceberg attaches to each task as *position* deletes. Refs go through Daft's own
``branch``/``tag`` parameters; versions and timestamps through ``facts`` (Daft takes no
timestamp). Measured gaps, declared below: equality deletes (PyIceberg's planner refuses them)
and deletion vectors (Daft opens the Puffin file as Parquet; raised here as ``Unsupported``).
"""

from __future__ import annotations

import logging
from typing import Any

from conformance.engines._common import local_path, missing_module
from conformance.engines.base import FormatSupport
from conformance.formats.iceberg import facts as F
from conformance.formats.iceberg.errors import PYICEBERG

_REFUSES = {
    "deletion-vectors": "daft 0.7.26 hands the Puffin file of a deletion vector to its Parquet reader as if it "
    "were a position delete file and fails ('Parquet error: Invalid Parquet file. Corrupt footer')",
    "equality-deletes": "daft 0.7.26 plans Iceberg scans with pyiceberg 0.12, which raises 'PyIceberg does not "
    "yet support equality deletes'",
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
    from reference_impl.errors import Unsupported

    # The "no partition filter: full table scan" warning of every unfiltered scan would break the
    # progress line, and a full scan is exactly what a conformance read wants.
    logging.getLogger("daft.io.iceberg.iceberg_scan").setLevel(logging.ERROR)
    frame = _frame(engine, table, at, timestamp, ref)
    try:
        return engine.collect(frame, columns)
    except ValueError as exc:
        if "does not yet support equality deletes" in str(exc):
            raise Unsupported(f"daft (via pyiceberg): {exc}", feature="equality-deletes") from None
        raise
    except Exception as exc:  # daft.exceptions.DaftCoreException has no stable import path
        text = str(exc)
        if ".puffin" in text and "Parquet" in text:
            raise Unsupported(
                f"daft reads the deletion vector's Puffin file as Parquet: {text[:300]}", feature="deletion-vectors"
            ) from None
        raise


def _frame(engine: Any, table, at, timestamp, ref):
    import daft
    from pyiceberg.table import StaticTable

    from conformance.formats.iceberg.engines.pyiceberg import io_properties
    from reference_impl.errors import InvalidTable

    if ref is not None and at is None and timestamp is None:
        tbl = StaticTable.from_metadata(F.metadata_location(table), properties=io_properties(table))
        found = tbl.metadata.refs.get(ref)
        if found is None:
            if ref == F.MAIN:  # main exists logically even when refs is absent
                return daft.read_iceberg(tbl, io_config=engine.io_config(table))
            raise InvalidTable(f"no branch or tag named {ref!r}", rule="ICEBERG-META-039")
        kind = found.snapshot_ref_type.value
        kw = {"branch": ref} if kind == "branch" else {"tag": ref}
        return daft.read_iceberg(tbl, io_config=engine.io_config(table), **kw)
    sel = F.selection(table, at=at, timestamp=timestamp, ref=ref)
    location = local_path(sel.metadata_location) or sel.metadata_location
    tbl = StaticTable.from_metadata(location, properties=io_properties(table))
    latest = at is None and timestamp is None
    snapshot_id = None if latest or sel.snapshot_id is None else sel.snapshot_id
    return daft.read_iceberg(tbl, snapshot_id=snapshot_id, io_config=engine.io_config(table))


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through Daft's public API (``lakeconf findings export``)."""
    return ("def read():\n" + F.reproduction_prelude(table, at)
            + "    import daft\n"
            "    from pyiceberg.table import StaticTable\n"
            "    return daft.read_iceberg(StaticTable.from_metadata(META), snapshot_id=SNAPSHOT).to_arrow()\n")
