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
from urllib.parse import urlparse

import pyarrow as pa

from conformance.engines._common import engine_uri, is_s3, missing_module, package_version, s3_options
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
        self._secrets: set[str] = set()

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
        opts = s3_options(table.storage_options)
        endpoint = opts.get("AWS_ENDPOINT_URL", "")
        if endpoint in self._secrets:
            return
        con = self._connection()
        con.execute(f"LOAD {_quote(extension_path('httpfs'))}")
        parsed = urlparse(endpoint) if endpoint else None
        parts = [
            "TYPE s3",
            f"KEY_ID {_quote(opts.get('AWS_ACCESS_KEY_ID', ''))}",
            f"SECRET {_quote(opts.get('AWS_SECRET_ACCESS_KEY', ''))}",
            f"REGION {_quote(opts.get('AWS_REGION', 'us-east-1'))}",
        ]
        if parsed is not None and parsed.netloc:
            parts += [f"ENDPOINT {_quote(parsed.netloc)}", "URL_STYLE 'path'",
                      f"USE_SSL {'true' if parsed.scheme == 'https' else 'false'}"]
        con.execute(f"CREATE OR REPLACE SECRET lakeconf_s3_{len(self._secrets)} ({', '.join(parts)})")
        self._secrets.add(endpoint)

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
