"""DuckDB, with each format's extension loaded offline from its wheel.

DuckDB would download extensions on first use; the kit never reads the network except the store
under test, so the connection disables auto-install/auto-load and LOADs the binaries shipped by
the ``duckdb-extension-<name>`` wheels (``<package>/extensions/v<duckdb version>/<name>.duckdb_extension``).
A format is offered when its driver (``conformance/formats/<format>/drivers/duckdb.py``) finds its
extensions installed; the driver builds the scan, this adapter runs it. A scan a driver knows to
crash DuckDB runs in a child process (``query(..., in_child=True)``), so an in-process caller
sees the crash as that cell's error instead of dying with it.
"""

from __future__ import annotations

import os
from typing import Sequence

import pyarrow as pa

from conformance.engines._common import is_s3, missing_module, package_version, s3_config
from conformance.engines.base import MultiFormatEngine
from conformance.model import TableRef
from conformance.storage.s3_options import duckdb_secret_sql


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


def missing_extension(name: str) -> str | None:
    """Why the extension cannot be loaded here, or None."""
    reason = missing_module(f"duckdb_extension_{name}", "duckdb")
    if reason:
        return reason
    try:
        extension_path(name)
    except Exception as exc:  # noqa: BLE001
        return str(exc)
    return None


def quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def select_list(columns: Sequence[str] | None) -> str:
    """``*`` or the quoted column names."""
    return ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"


class DuckDBEngine(MultiFormatEngine):
    """DuckDB with the extensions of every format whose driver finds them installed."""

    name = "duckdb"

    def __init__(self) -> None:
        super().__init__()
        self._con = None
        self._secrets: set[tuple] = set()
        self._loaded: set[str] = set()

    def version(self) -> str:
        exts = sorted({e for d in self.drivers().values() for e in getattr(d, "EXTENSIONS", ())} | {"httpfs"})
        shown = ", ".join(f"{n} {package_version('duckdb-extension-' + n)}" for n in exts
                          if package_version("duckdb-extension-" + n) != "not installed")
        return f"{package_version('duckdb')} (extensions: {shown or 'none'})"

    def available(self) -> str | None:
        return missing_module("duckdb", "duckdb") or super().available()

    # -- what the drivers use ------------------------------------------------------------------

    def connection(self):
        """The engine's connection (no extension ever downloaded or auto-loaded)."""
        if self._con is None:
            import duckdb

            self._con = duckdb.connect(
                config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
            )
        return self._con

    def load(self, *names: str) -> None:
        """LOAD the extensions, in order, once per connection."""
        con = self.connection()
        for name in names:
            if name not in self._loaded:
                con.execute(f"LOAD {quote(extension_path(name))}")
                self._loaded.add(name)

    def prepare(self, table: TableRef, extensions: Sequence[str]) -> None:
        """Load ``extensions`` and, for an S3 table, httpfs with a secret for its endpoint."""
        self.load(*extensions)
        cfg = s3_config(table) if is_s3(table) else None
        if cfg is None:
            return
        key = (cfg.endpoint_url, cfg.access_key_id, cfg.secret_access_key, cfg.region)
        if key in self._secrets:
            return
        self.load("httpfs")
        # One store per run in practice; a later endpoint replaces the secret (DuckDB picks the
        # most specific scope, and all stores here share the s3:// scope). Never logged.
        self.connection().execute(duckdb_secret_sql(cfg, name="lakeconf_s3"))
        self._secrets.add(key)

    def query(self, table: TableRef, sql: str, extensions: Sequence[str], *, in_child: bool = False):
        """Run ``sql`` with ``extensions`` loaded: ``(arrow table, DuckDB type names)``."""
        if in_child:
            return self._query_in_child(table, sql, extensions)
        self.prepare(table, extensions)
        rel = self.connection().sql(sql)
        return rel.to_arrow_table(), [str(t) for t in rel.types]

    def _query_in_child(self, table: TableRef, sql: str, extensions: Sequence[str]):
        import json
        import signal
        import subprocess
        import sys

        from reference_impl.errors import Internal

        cfg = s3_config(table) if is_s3(table) else None
        job = {
            "loads": [extension_path(n) for n in extensions] + ([extension_path("httpfs")] if cfg else []),
            "pre": [duckdb_secret_sql(cfg, name="lakeconf_s3")] if cfg else [],
            "sql": sql,
        }
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(job).encode(), capture_output=True, timeout=300)
        if proc.returncode < 0:
            try:
                name = signal.Signals(-proc.returncode).name
            except ValueError:
                name = f"signal {-proc.returncode}"
            raise Internal(f"{self.name} crashed (signal {name}) while reading")
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1] if proc.stderr else "duckdb child failed")
        with pa.ipc.open_stream(proc.stdout) as reader:
            result = reader.read_all()
        types = json.loads(result.schema.metadata.get(b"duckdb_types", b"[]")) if result.schema.metadata else []
        return result.replace_schema_metadata(None), types

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            self._loaded.clear()
            self._secrets.clear()


# The child of ``_query_in_child``: job JSON on stdin, the result as an Arrow IPC stream on stdout
# (DuckDB's column types in the schema metadata), an exception as its message on stderr.
_CHILD = """
import json, sys
import duckdb, pyarrow as pa
job = json.load(sys.stdin)
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
for path in job["loads"]:
    con.execute("LOAD '" + path.replace("'", "''") + "'")
for stmt in job["pre"]:
    con.execute(stmt)
rel = con.sql(job["sql"])
types = [str(t) for t in rel.types]
table = rel.to_arrow_table()
table = table.replace_schema_metadata({"duckdb_types": json.dumps(types)})
with pa.ipc.new_stream(sys.stdout.buffer, table.schema) as writer:
    writer.write_table(table)
"""


def uuids_as_arrow_uuid(result: pa.Table, duck_types: list[str]) -> pa.Table:
    """Top-level UUID columns as Arrow's canonical ``arrow.uuid`` (16 bytes), as other engines return
    them. DuckDB exports UUID as its 36-character text unless ``arrow_lossless_conversion`` is on,
    and that setting also turns booleans into ``arrow.bool8``."""
    import uuid as _uuid

    for i, t in enumerate(duck_types):
        if t != "UUID" or i >= result.num_columns:
            continue
        values = [None if v is None else _uuid.UUID(v).bytes for v in result.column(i).to_pylist()]
        storage = pa.array(values, pa.binary(16))
        result = result.set_column(i, result.field(i).name, pa.ExtensionArray.from_storage(pa.uuid(), storage))
    return result
