"""DuckDB with its ``delta`` extension (delta-kernel-rs inside), loaded offline from the wheel.

DuckDB would download extensions on first use; the kit never reads the network except the store
under test, so the connection disables auto-install/auto-load and LOADs the binary shipped by
the ``duckdb-extension-delta`` wheel (``<package>/extensions/v<duckdb version>/delta.duckdb_extension``).
``delta_scan(path, version := N)`` reads a version; it has no timestamp parameter, so
timestamp travel is declared unsupported. The kernel's protocol check accepted every reader
feature we probed except catalog-managed tables (which need a catalog) and unknown names.
"""

from __future__ import annotations

import os
from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, is_s3, missing_module, package_version, s3_config
from conformance.storage.s3_options import duckdb_secret_sql
from conformance.engines.base import TIMESTAMP_TRAVEL, Capabilities, Engine
from conformance.model import TableRef


def extension_path(name: str) -> str:
    """Path of the ``<name>.duckdb_extension`` binary shipped by the duckdb-extension-<name> wheel."""
    import duckdb

    module = __import__(f"duckdb_extension_{name}")
    base = os.path.dirname(module.__file__)
    path = os.path.join(base, "extensions", f"v{duckdb.__version__}", f"{name}.duckdb_extension")
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{path} missing: install duckdb-extension-{name}=={duckdb.__version__} (same version as duckdb)"
        )
    return path


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBEngine(Engine):
    """DuckDB + delta extension (delta_scan)."""

    name = "duckdb"

    def __init__(self) -> None:
        self._con = None
        self._secrets: set[tuple] = set()

    def version(self) -> str:
        return f"{package_version('duckdb')} (delta extension {package_version('duckdb-extension-delta')})"

    def available(self) -> str | None:
        reason = missing_module("duckdb") or missing_module("duckdb_extension_delta")
        if reason:
            return reason
        try:
            extension_path("delta")
        except Exception as exc:
            return str(exc)
        return None

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta"}),
            read_features={"delta": None},
            unsupported_reasons={TIMESTAMP_TRAVEL: "delta_scan has a version parameter but no timestamp parameter"},
        )

    def _connection(self):
        if self._con is None:
            import duckdb

            con = duckdb.connect(
                config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
            )
            con.execute(f"LOAD {_quote(extension_path('delta'))}")
            self._con = con
        return self._con

    def _s3_secret(self, table: TableRef) -> None:
        """Create (once per endpoint) an S3 secret for the table's store; never logged."""
        cfg = s3_config(table)
        if cfg is None:
            return
        key = (cfg.endpoint_url, cfg.access_key_id, cfg.secret_access_key, cfg.region)
        if key in self._secrets:
            return
        con = self._connection()
        con.execute(f"LOAD {_quote(extension_path('httpfs'))}")
        # One store per run in practice; a later endpoint replaces the secret (DuckDB picks the
        # most specific scope, and all stores here share the s3:// scope).
        con.execute(duckdb_secret_sql(cfg, name="lakeconf_s3"))
        self._secrets.add(key)

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        if timestamp is not None:
            from reference_impl.errors import Unsupported

            raise Unsupported("duckdb delta_scan cannot read as of a timestamp", feature=TIMESTAMP_TRAVEL)
        if is_s3(table):
            self._s3_secret(table)
        args = [_quote(engine_uri(table))]
        if at is not None:
            args.append(f"version := {int(at)}")
        select = ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"
        result = self._connection().execute(f"SELECT {select} FROM delta_scan({', '.join(args)})")
        return result.to_arrow_table()

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
