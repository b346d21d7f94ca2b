"""DuckDB with its ``delta`` and ``iceberg`` extensions, loaded offline from the wheels.

DuckDB would download extensions on first use; the kit never reads the network except the store
under test, so the connection disables auto-install/auto-load and LOADs the binaries shipped by
the ``duckdb-extension-<name>`` wheels (``<package>/extensions/v<duckdb version>/<name>.duckdb_extension``).
A format is offered only when its extension wheels are installed.

Delta: ``delta_scan(path, version := N)`` (delta-kernel-rs inside) reads a version; it has no
timestamp parameter, so timestamp travel is declared unsupported. The kernel's protocol check
accepted every reader feature we probed except catalog-managed tables and unknown names.

Iceberg (``avro`` must be loaded before ``iceberg``): ``iceberg_scan(<metadata file>)`` with
``snapshot_from_id`` for a version or a ref (the snapshot id resolved by ``iceberg_facts``: the
scan takes no ref name) and DuckDB's own ``snapshot_from_timestamp`` for timestamps. Version 0
is a scan of the last metadata file before the first snapshot. UUID columns are handed back as
Arrow's ``arrow.uuid`` extension, not as DuckDB's text export. Measured on DuckDB
1.5.5: position deletes, deletion vectors, equality deletes, v1 and v3 tables are read; the v3
types ``timestamp_ns``/``timestamptz_ns`` and ``unknown`` are refused ("Unrecognized primitive
type", raised here as ``Unsupported``); a timestamp before the first snapshot returns no rows
instead of an error (see the findings). Metadata whose ``current-schema-id`` names no schema
crashes it (SIGSEGV); such a read runs in a child process, so an in-process caller survives it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import pyarrow as pa

from conformance.engines._common import engine_uri, is_s3, local_path, missing_module, package_version, s3_config
from conformance.storage.s3_options import duckdb_secret_sql
from conformance.engines.base import TIMESTAMP_TRAVEL, Capabilities, Engine
from conformance.model import TableRef

# The extensions each format needs, in load order.
FORMAT_EXTENSIONS: dict[str, tuple[str, ...]] = {"delta": ("delta",), "iceberg": ("avro", "iceberg")}


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


def _missing_extension(name: str) -> str | None:
    """Why the extension cannot be loaded here, or None."""
    reason = missing_module(f"duckdb_extension_{name}")
    if reason:
        return reason
    try:
        extension_path(name)
    except Exception as exc:
        return str(exc)
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class PerFormatCapabilities(Capabilities):
    """``Capabilities`` whose gaps may hold for one format only (``format_reasons[fmt][feature]``).

    ``Capabilities.unsupported_reasons`` applies to every format, but DuckDB travels by timestamp
    in Iceberg (``snapshot_from_timestamp``) and not in Delta (``delta_scan`` has no such
    parameter); a gap declared for all formats would hide the Iceberg cells.
    """

    format_reasons: dict[str, dict[str, str]] = field(default_factory=dict)

    def missing_read_features(self, fmt: str, needed) -> list[str]:
        own = self.format_reasons.get(fmt, {})
        return [f for f in needed if f in own or f in Capabilities.missing_read_features(self, fmt, [f])]

    def reason(self, feature: str) -> str:
        for reasons in self.format_reasons.values():
            if feature in reasons:
                return reasons[feature]
        return Capabilities.reason(self, feature)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBEngine(Engine):
    """DuckDB + delta extension (delta_scan) + iceberg extension (iceberg_scan)."""

    name = "duckdb"

    def __init__(self) -> None:
        self._con = None
        self._secrets: set[tuple] = set()
        self._loaded: set[str] = set()

    def version(self) -> str:
        exts = ", ".join(
            f"{n} {package_version('duckdb-extension-' + n)}" for n in ("delta", "iceberg", "avro")
            if package_version("duckdb-extension-" + n) != "not installed"
        )
        return f"{package_version('duckdb')} (extensions: {exts or 'none'})"

    def _formats(self) -> list[str]:
        return [f for f, exts in FORMAT_EXTENSIONS.items() if not any(_missing_extension(e) for e in exts)]

    def available(self) -> str | None:
        reason = missing_module("duckdb")
        if reason:
            return reason
        if not self._formats():
            return "; ".join(r for e in ("delta", "avro", "iceberg") if (r := _missing_extension(e)))
        return None

    def capabilities(self) -> Capabilities:
        from conformance.engines import iceberg_facts as F

        formats = frozenset(self._formats())
        return PerFormatCapabilities(
            read=formats,
            read_features={f: None for f in formats},
            format_reasons={
                "delta": {TIMESTAMP_TRAVEL: "delta_scan has a version parameter but no timestamp parameter"},
                "iceberg": {
                    F.TIMESTAMP_NS: "duckdb 1.5.5 iceberg_scan: 'Unrecognized primitive type: timestamptz_ns' (and timestamp_ns)",
                    F.UNKNOWN_TYPE: "duckdb 1.5.5 iceberg_scan: 'Unrecognized primitive type: unknown'",
                },
            },
        )

    def _connection(self):
        if self._con is None:
            import duckdb

            self._con = duckdb.connect(
                config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
            )

        return self._con

    def _load(self, *names: str) -> None:
        con = self._connection()
        for name in names:
            if name not in self._loaded:
                con.execute(f"LOAD {_quote(extension_path(name))}")
                self._loaded.add(name)

    def _s3_secret(self, table: TableRef) -> None:
        """Create (once per endpoint) an S3 secret for the table's store; never logged."""
        cfg = s3_config(table)
        if cfg is None:
            return
        key = (cfg.endpoint_url, cfg.access_key_id, cfg.secret_access_key, cfg.region)
        if key in self._secrets:
            return
        self._load("httpfs")
        # One store per run in practice; a later endpoint replaces the secret (DuckDB picks the
        # most specific scope, and all stores here share the s3:// scope).
        self._connection().execute(duckdb_secret_sql(cfg, name="lakeconf_s3"))
        self._secrets.add(key)

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from reference_impl.errors import Unsupported

        self._load(*FORMAT_EXTENSIONS.get(table.format, ()))
        if is_s3(table):
            self._s3_secret(table)
        select = ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"
        if table.format == "iceberg":
            source = self._iceberg_source(table, at, timestamp, ref)
        elif table.format == "delta":
            if timestamp is not None:
                raise Unsupported("duckdb delta_scan cannot read as of a timestamp", feature=TIMESTAMP_TRAVEL)
            if ref is not None:
                raise Unsupported("Delta tables have no branches or tags", feature="ref-travel")
            args = [_quote(engine_uri(table))]
            if at is not None:
                args.append(f"version := {int(at)}")
            source = f"delta_scan({', '.join(args)})"
        else:
            raise Unsupported(f"duckdb reads no {table.format} tables here")
        sql = f"SELECT {select} FROM {source}"
        if table.format == "iceberg" and _crashes_duckdb(table):
            return self._read_in_child(table, sql)
        try:
            rel = self._connection().sql(sql)
            return _uuids_as_arrow_uuid(rel.to_arrow_table(), [str(t) for t in rel.types])
        except Exception as exc:  # duckdb.Error subclasses; only a known refusal is translated
            if table.format == "iceberg":
                _raise_known_iceberg_gap(exc)
            raise

    def _read_in_child(self, table: TableRef, sql: str) -> pa.Table:
        """Run ``sql`` in a child process: for metadata that crashes DuckDB 1.5.5 (SIGSEGV), so that an
        in-process reader (the cross-engine suite, ``--in-process``) sees the crash as this cell's error
        instead of dying with it. The child runs the same query; whatever DuckDB does there is the answer."""
        import json
        import signal
        import subprocess
        import sys

        from reference_impl.errors import Internal

        cfg = s3_config(table)
        job = {
            "loads": [extension_path(n) for n in FORMAT_EXTENSIONS["iceberg"]] + ([extension_path("httpfs")] if cfg else []),
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
        return _uuids_as_arrow_uuid(result.replace_schema_metadata(None), types)

    def _iceberg_source(self, table: TableRef, at, timestamp, ref) -> str:
        from conformance.engines import iceberg_facts as F

        if timestamp is not None:
            if ref is not None or at is not None:
                raise ValueError("give at most one of version, timestamp and ref")
            ts = F.timestamp_ms(timestamp)
            location = _duck_location(F.metadata_location(table))
            # DuckDB's own time travel (TIMESTAMP literal in UTC, millisecond precision).
            return f"iceberg_scan({_quote(location)}, snapshot_from_timestamp := make_timestamp({ts * 1000}))"
        sel = F.selection(table, at=at, ref=ref)
        location = _duck_location(sel.metadata_location)
        if sel.snapshot_id is None or (at is None and ref is None):
            return f"iceberg_scan({_quote(location)})"
        return f"iceberg_scan({_quote(location)}, snapshot_from_id := {int(sel.snapshot_id)})"

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            self._loaded.clear()
            self._secrets.clear()


# The child of ``_read_in_child``: job JSON on stdin, the result as an Arrow IPC stream on stdout
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


def _crashes_duckdb(table: TableRef) -> bool:
    """Whether the current metadata is of a shape DuckDB 1.5.5's iceberg_scan dies on (SIGSEGV):
    a ``current-schema-id`` that names no schema (see the findings). Cheap: one JSON read."""
    from conformance.engines import iceberg_facts as F

    try:
        md = F.load_metadata(table)
    except Exception:  # noqa: BLE001 - an unreadable file is DuckDB's to judge, in process
        return False
    current = md.get("current-schema-id")
    schemas = md.get("schemas")
    if current is None or not isinstance(schemas, list):
        return False
    return not any(isinstance(x, dict) and x.get("schema-id") == current for x in schemas)


def _uuids_as_arrow_uuid(result: pa.Table, duck_types: list[str]) -> pa.Table:
    """Top-level UUID columns as Arrow's canonical ``arrow.uuid`` (16 bytes), as PyIceberg, Daft and
    iceberg-rust return them. DuckDB exports UUID as its 36-character text unless
    ``arrow_lossless_conversion`` is on, and that setting also turns booleans into ``arrow.bool8``."""
    import uuid as _uuid

    for i, t in enumerate(duck_types):
        if t != "UUID" or i >= result.num_columns:
            continue
        values = [None if v is None else _uuid.UUID(v).bytes for v in result.column(i).to_pylist()]
        storage = pa.array(values, pa.binary(16))
        result = result.set_column(i, result.field(i).name, pa.ExtensionArray.from_storage(pa.uuid(), storage))
    return result


def _raise_known_iceberg_gap(exc: Exception) -> None:
    """A type the iceberg extension does not know, as ``Unsupported`` naming the feature."""
    import re

    from conformance.engines import iceberg_facts as F
    from reference_impl.errors import Unsupported

    m = re.search(r"Unrecognized primitive type: (\w+)", str(exc))
    if m and m.group(1) in F.V3_TYPE_FEATURES:
        raise Unsupported(f"duckdb iceberg_scan: {str(exc).splitlines()[0]}", feature=F.V3_TYPE_FEATURES[m.group(1)]) from None


def _duck_location(uri: str) -> str:
    """DuckDB takes plain paths for local files and s3:// URIs as they are."""
    return local_path(uri) or uri
