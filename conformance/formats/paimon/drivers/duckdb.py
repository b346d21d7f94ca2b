"""DuckDB and Paimon: not available here, and why.

DuckDB reads Paimon only through the community extension ``paimon`` (polardb/duckdb-paimon, on
paimon-cpp; ``paimon_scan`` and ATTACH, append-only writes). Community extensions are served by
DuckDB's extension server alone (no wheel on PyPI, unlike the core extensions this kit loads
offline), and the kit reaches no network but the package registries and the object store under
test. The driver exists so that ``lakeconf engines`` says so instead of leaving Paimon out silently.
"""

from __future__ import annotations

from typing import Any

REASON = ("DuckDB reads Paimon only through its community extension 'paimon' (paimon-cpp), which is served by "
          "DuckDB's extension server and not from PyPI; the kit does not reach that server")


def available(engine: Any) -> str | None:
    return REASON
