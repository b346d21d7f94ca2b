"""DuckDB's delta extension (delta-kernel-rs inside): ``delta_scan(path, version := N)``.

It has no timestamp parameter, so timestamp travel is declared unsupported. The kernel's protocol
check accepted every reader feature we probed except catalog-managed tables and unknown names.
"""

from __future__ import annotations

from typing import Any

from conformance.engines._common import engine_uri
from conformance.engines.base import TIMESTAMP_TRAVEL, FormatSupport
from conformance.engines.duckdb import missing_extension, quote, select_list
from conformance.formats.delta.errors import KERNEL

EXTENSIONS = ("delta",)



# what this engine says when it refuses a table of this format (conformance.engines.errors)
ERRORS = KERNEL

def available(engine: Any) -> str | None:
    return missing_extension("delta")


def support(engine: Any) -> FormatSupport:
    return FormatSupport(gaps={TIMESTAMP_TRAVEL: "delta_scan has a version parameter but no timestamp parameter"})


def read(engine: Any, table, *, at=None, timestamp=None, ref=None, columns=None):
    from reference_impl.errors import Unsupported

    if timestamp is not None:
        raise Unsupported("duckdb delta_scan cannot read as of a timestamp", feature=TIMESTAMP_TRAVEL)
    if ref is not None:
        raise Unsupported("Delta tables have no branches or tags", feature="ref-travel")
    args = [quote(engine_uri(table))]
    if at is not None:
        args.append(f"version := {int(at)}")
    result, _types = engine.query(table, f"SELECT {select_list(columns)} FROM delta_scan({', '.join(args)})", EXTENSIONS)
    return result


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through DuckDB's delta extension (``lakeconf findings export``)."""
    version = f" + ', version := {int(at)}'" if at is not None else ""
    return (
        "def read():\n"
        "    import duckdb\n"
        "    con = duckdb.connect()\n"
        "    con.install_extension('delta')\n"
        "    con.load_extension('delta')\n"
        "    path = \"'\" + TABLE.replace(\"'\", \"''\") + \"'\"\n"
        f"    return con.sql('SELECT * FROM delta_scan(' + path{version} + ')').to_arrow_table()\n"
    )
