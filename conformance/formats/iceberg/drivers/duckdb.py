"""DuckDB's iceberg extension (``avro`` loaded first): ``iceberg_scan(<metadata file>)``.

``snapshot_from_id`` reads a version or a ref (the snapshot id resolved by ``facts``: the scan
takes no ref name) and DuckDB's own ``snapshot_from_timestamp`` a timestamp. Version 0 is a scan
of the last metadata file before the first snapshot. UUID columns are handed back as Arrow's
``arrow.uuid`` extension, not as DuckDB's text export. Measured on DuckDB 1.5.5: position
deletes, deletion vectors, equality deletes, v1 and v3 tables are read; the v3 types
``timestamp_ns``/``timestamptz_ns`` and ``unknown`` are refused ("Unrecognized primitive type",
raised here as ``Unsupported``); a timestamp before the first snapshot returns no rows instead of
an error (see the findings). Metadata whose ``current-schema-id`` names no schema crashes it
(SIGSEGV); such a read runs in a child process.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.engines._common import local_path
from conformance.engines.base import FormatSupport
from conformance.engines.duckdb import missing_extension, quote, select_list, uuids_as_arrow_uuid
from conformance.formats.iceberg import facts as F
from conformance.formats.iceberg.errors import DUCKDB_ICEBERG

EXTENSIONS = ("avro", "iceberg")



# what this engine says when it refuses a table of this format (conformance.engines.errors)
ERRORS = DUCKDB_ICEBERG

def available(engine: Any) -> str | None:
    return missing_extension("avro") or missing_extension("iceberg")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(gaps={
        F.TIMESTAMP_NS: "duckdb 1.5.5 iceberg_scan: 'Unrecognized primitive type: timestamptz_ns' (and timestamp_ns)",
        F.UNKNOWN_TYPE: "duckdb 1.5.5 iceberg_scan: 'Unrecognized primitive type: unknown'",
    })


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    sql = f"SELECT {select_list(columns)} FROM {_source(table, at, timestamp, ref)}"
    try:
        result, types = engine.query(table, sql, EXTENSIONS, in_child=_crashes_duckdb(table))
    except Exception as exc:  # duckdb.Error subclasses; only a known refusal is translated
        _raise_known_gap(exc)
        raise
    return uuids_as_arrow_uuid(result, types)


def _source(table, at, timestamp, ref) -> str:
    if timestamp is not None:
        if ref is not None or at is not None:
            raise ValueError("give at most one of version, timestamp and ref")
        ts = F.timestamp_ms(timestamp)
        location = _location(F.metadata_location(table))
        # DuckDB's own time travel (TIMESTAMP literal in UTC, millisecond precision).
        return f"iceberg_scan({quote(location)}, snapshot_from_timestamp := make_timestamp({ts * 1000}))"
    sel = F.selection(table, at=at, ref=ref)
    location = _location(sel.metadata_location)
    if sel.snapshot_id is None or (at is None and ref is None):
        return f"iceberg_scan({quote(location)})"
    return f"iceberg_scan({quote(location)}, snapshot_from_id := {int(sel.snapshot_id)})"


def _crashes_duckdb(table) -> bool:
    """Whether the current metadata is of a shape DuckDB 1.5.5's iceberg_scan dies on (SIGSEGV):
    a ``current-schema-id`` that names no schema (see the findings). Cheap: one JSON read."""
    try:
        md = F.load_metadata(table)
    except Exception:  # noqa: BLE001 - an unreadable file is DuckDB's to judge, in process
        return False
    current = md.get("current-schema-id")
    schemas = md.get("schemas")
    if current is None or not isinstance(schemas, list):
        return False
    return not any(isinstance(x, dict) and x.get("schema-id") == current for x in schemas)


def _raise_known_gap(exc: Exception) -> None:
    """A type the iceberg extension does not know, as ``Unsupported`` naming the feature."""
    from reference_impl.errors import Unsupported

    m = re.search(r"Unrecognized primitive type: (\w+)", str(exc))
    if m and m.group(1) in F.V3_TYPE_FEATURES:
        raise Unsupported(f"duckdb iceberg_scan: {str(exc).splitlines()[0]}", feature=F.V3_TYPE_FEATURES[m.group(1)]) from None


def _location(uri: str) -> str:
    """DuckDB takes plain paths for local files and s3:// URIs as they are."""
    return local_path(uri) or uri


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through DuckDB's iceberg extension (``lakeconf findings export``)."""
    return ("def read():\n" + F.reproduction_prelude(table, at)
            + "    import duckdb\n"
            "    con = duckdb.connect()\n"
            "    for ext in ('avro', 'iceberg'):\n"
            "        con.install_extension(ext)\n"
            "        con.load_extension(ext)\n"
            "    args = \"'\" + META.replace(\"'\", \"''\") + \"'\"\n"
            "    if SNAPSHOT is not None:\n"
            "        args += f', snapshot_from_id := {SNAPSHOT}'\n"
            "    return con.sql(f'SELECT * FROM iceberg_scan({args})').to_arrow_table()\n")
