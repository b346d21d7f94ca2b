"""DuckDB and Hudi: no reader, and why.

DuckDB has no Hudi extension among its core extensions (``duckdb_extensions()`` of DuckDB 1.5 lists
delta and iceberg, no hudi), and community extensions are served only by DuckDB's own server, which the
kit does not reach: it cannot read a Hudi table's timeline, file slices or log files here. The driver exists
so that ``lakeconf engines`` says so instead of leaving Hudi out silently.
"""

from __future__ import annotations

from typing import Any

REASON = ("DuckDB has no Hudi extension among its core extensions (1.5 lists delta and iceberg only): it cannot "
          "read a Hudi timeline or log files")


def available(engine: Any) -> str | None:
    return REASON
