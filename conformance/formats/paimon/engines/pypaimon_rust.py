"""pypaimon-rust (the Python binding of apache/paimon-rust) as a reader of Paimon tables.

What it is (measured on 0.4.0): a native module ``pypaimon_rust`` (paimon-rust compiled with PyO3, its
own DataFusion inside) whose ``pypaimon_rust.datafusion`` offers a ``SQLContext`` (catalogs, DDL, DML,
SQL), a ``PaimonCatalog`` (also a DataFusion catalog provider) and a ``Table`` with pypaimon's shape
of API: read builder -> scan -> plan -> splits -> ``TableRead.read`` -> a list of Arrow record batches.
It writes too (batch/stream write builders, commits, updates by row id, upserts by key, SQL DDL and
DML), but it creates a table only through a catalog, which places it at ``<warehouse>/<db>.db/<name>``
(``CREATE TABLE ... LOCATION`` and a ``path`` option are ignored, measured), so it cannot create the
kit's tables at their given locations: it is a reader here.

Opening: a file-system catalog finds a table only at ``<warehouse>/<db>.db/<table>`` (string-joined),
and the kit's tables live at arbitrary paths (on S3 too), so the adapter plays the catalog's part, as
``Table.from_resolved_schema`` intends: it hands the engine the bytes of the highest-numbered
``schema/schema-N`` file (what the file-system catalog's ``SchemaManager.latest`` picks), unparsed,
and paimon-rust parses and judges them. Everything else is the engine's: a time-travel read passes
Paimon's own options to ``new_read_builder`` (``scan.snapshot-id``, ``scan.tag-name``,
``scan.timestamp-millis``), and paimon-rust resolves the snapshot and reads it with that snapshot's
schema (measured: a read of snapshot 1 after a rename yields the old column name). The binding's
README says time travel is not supported in Python; on 0.4.0 these options work. A ``ref`` is a tag
when the engine lists one of that name (``list_tags``), else a branch (``branch=`` with the branch's
own latest schema). S3 is opendal configured by Paimon's ``s3.*`` options (endpoint, keys, region,
path-style access).

Version 0 (before the first commit) and plans without splits give no batches, hence no Arrow schema:
the empty answer then takes the reference's Arrow mapping of the latest schema.

``describe`` reports what the engine tells: the snapshot its plan selected, that snapshot's commit kind
(``list_snapshots``), and the keys and options of the schema it was opened with (on latest reads
only: a time-travel read uses the snapshot's schema, which the binding does not expose).

Refusals: paimon-rust's ``Unsupported`` error is a ``NotImplementedError`` (the binding maps it so);
every other error is a ``ValueError`` whose words decide.
"""

from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa

from conformance.engines._common import local_path, missing_module, package_version, s3_config
from conformance.engines.base import Capabilities, Engine
from conformance.engines.errors import ErrorPatterns, refusals
from conformance.formats.paimon.engines._common import invalid as _invalid
from conformance.formats.paimon.engines._common import location, timestamp_ms
from conformance.model import TableRef

FORMAT = "paimon"
PACKAGE = "pypaimon-rust"
MAIN = "main"

# paimon-rust's words. Its ``Error::Unsupported`` reaches Python as NotImplementedError; the rest are
# ValueErrors, which name a broken table only with the words below.
PAIMON_RUST = ErrorPatterns(
    unsupported=("Paimon hitting unsupported error",),
    unsupported_types=("NotImplementedError",),
    invalid_on_read=(
        "Invalid table schema JSON",  # the schema file does not parse
        "did not resolve to any snapshot",  # time travel to a snapshot, tag or time the table lacks
        "Paimon data invalid for",  # paimon-rust's own DataInvalid: a file it judged malformed
        "does not exist",  # a snapshot (or table) the metadata names is not there
        "Paimon hitting invalid config",  # options the table may not carry (paimon-rust's ConfigInvalid)
    ),
)



# ----------------------------------------------------------------------------------------------
# Opening tables
# ----------------------------------------------------------------------------------------------



def file_io_options(table: TableRef) -> dict[str, str]:
    """paimon-rust ``FileIO`` options (Paimon's ``s3.*`` keys; empty for local disk)."""
    cfg = s3_config(table)
    if cfg is None:
        return {}
    opts = {"s3.region": cfg.region, "s3.path-style-access": "true"}
    if cfg.endpoint_url:
        opts["s3.endpoint"] = cfg.endpoint_url
    if cfg.access_key_id:
        opts["s3.access-key"] = cfg.access_key_id
    if cfg.secret_access_key:
        opts["s3.secret-key"] = cfg.secret_access_key
    return opts


def _storage(table: TableRef):
    from reference_impl.storage import open_storage

    return open_storage(table.uri, s3=s3_config(table))


def latest_schema_text(table: TableRef, branch: str = MAIN) -> str | None:
    """The bytes of the branch's highest-numbered ``schema-N`` file, as a file-system catalog picks it
    (``None`` when there is none); left unparsed so that paimon-rust judges them."""
    from reference_impl.paimon import layout as L

    storage = _storage(table)
    lay = L.Layout(branch)
    ids = L.list_ids(storage, lay.schema_dir, L.SCHEMA_PREFIX)
    if not ids:
        return None
    return storage.read(lay.schema_path(ids[-1])).decode("utf-8", errors="replace")


def open_table(table: TableRef, branch: str = MAIN):
    """paimon-rust's ``Table`` over the table directory (of ``branch``), opened with its latest schema."""
    from pypaimon_rust.datafusion import Table

    text = latest_schema_text(table, branch)
    if text is None:
        # paimon-rust's file-system catalog answers TableNotExist for a directory without a schema.
        where = "the table" if branch == MAIN else f"a branch named {branch!r}"
        raise _invalid(f"pypaimon-rust: no schema file for {where} (its file-system catalog: table does not exist)",
                       "PAIMON-LAYOUT-001")
    return Table.from_resolved_schema(location(table), text, branch=branch, options=file_io_options(table))



def select(table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None):
    """(paimon-rust table, its time-travel read options, whether the read is "before the first
    commit") for a read at a version, a timestamp or a ref."""
    if sum(v is not None for v in (at, timestamp, ref)) > 1:
        raise ValueError("give at most one of version, timestamp and ref")
    tbl = open_table(table)
    if at is not None:
        if at == 0:  # the kit's "before the first commit": no rows, the latest schema
            return tbl, {}, True
        return tbl, {"scan.snapshot-id": str(at)}, False
    if timestamp is not None:
        return tbl, {"scan.timestamp-millis": str(timestamp_ms(timestamp))}, False
    if ref is not None and ref != MAIN:
        if ref in {t.name() for t in tbl.list_tags()}:
            return tbl, {"scan.tag-name": ref}, False
        if latest_schema_text(table, ref) is None:
            raise _invalid(f"pypaimon-rust finds no tag or branch named {ref!r}", "PAIMON-LAYOUT-001")
        return open_table(table, ref), {}, False
    return tbl, {}, False


def _arrow_schema(schema_text: str, columns: Sequence[str] | None) -> pa.Schema:
    """The reference's Arrow schema of a schema file (only for answers without any batch)."""
    from reference_impl.paimon.schema import parse_schema
    from reference_impl.paimon.types import arrow_schema

    schema = arrow_schema(parse_schema(schema_text).fields)
    return pa.schema([schema.field(c) for c in columns]) if columns else schema


def _builder(tbl, options: dict[str, str], columns: Sequence[str] | None = None):
    rb = tbl.new_read_builder(options or None)
    return rb.with_projection(list(columns)) if columns else rb


def scan(tbl, options: dict[str, str], columns: Sequence[str] | None = None) -> list[pa.RecordBatch]:
    """paimon-rust's batches of ``tbl`` read with ``options`` (its read builder, scan plan and table read)."""
    rb = _builder(tbl, options, columns)
    return rb.new_read().read(rb.new_scan().plan().splits())


def planned_snapshot(tbl, options: dict[str, str]) -> int | None:
    """The snapshot id paimon-rust's plan selects with ``options`` (``None``: no snapshot)."""
    return _builder(tbl, options).new_scan().plan().snapshot_id()


class PyPaimonRustEngine(Engine):
    """pypaimon-rust: paimon-rust's ``Table`` read with Paimon's time-travel options (a reader only)."""

    name = PACKAGE

    def version(self) -> str:
        return package_version(PACKAGE)

    def available(self) -> str | None:
        return missing_module("pypaimon_rust", "paimon")

    def capabilities(self) -> Capabilities:
        # Every read feature the corpus names (deletion vectors 32/64-bit, every merge engine and its
        # options, orc/avro, branches, manifests of 0.8+) read on 0.4.0, so none is declared missing:
        # the engine's own NotImplementedError speaks for anything else.
        return Capabilities(read=frozenset({FORMAT}), read_features={FORMAT: None})

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        with refusals(PAIMON_RUST, table.uri):
            tbl, options, before_first = select(table, at=at, timestamp=timestamp, ref=ref)
            batches = [] if before_first else scan(tbl, options, columns)
            if not batches:
                return _arrow_schema(latest_schema_text(table, tbl.branch()), columns).empty_table()
            return pa.Table.from_batches(batches)

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        with refusals(PAIMON_RUST, table.uri):
            tbl, options, before_first = select(table, at=at, timestamp=timestamp, ref=ref)
            schema = tbl.schema()
            facts: dict[str, Any] = {
                "primary_keys": list(schema.primary_keys()),
                "partition_keys": list(schema.partition_keys()),
            }
            if before_first:
                facts["snapshot_id"] = None
                return facts
            sid = planned_snapshot(tbl, options)
            facts["snapshot_id"] = sid
            kinds = {s.id(): s.commit_kind() for s in tbl.list_snapshots()}
            if sid is not None and sid in kinds:
                facts["commit_kind"] = kinds[sid]
            if not options:  # the schema it was opened with is the one it read with
                facts["options"] = dict(schema.options())
            return facts

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        if at == 0 or local_path(table.uri) is None:  # no spelling for "before the first commit"; local only
            return None
        travel = f"{{'scan.snapshot-id': '{int(at)}'}}" if at else "None"
        return ("def read():\n"
                "    import os\n"
                "    import pyarrow as pa\n"
                "    from pypaimon_rust.datafusion import Table\n"
                "    # a file-system catalog opens a table with its highest-numbered schema file\n"
                "    names = [n for n in os.listdir(os.path.join(TABLE, 'schema')) if n.startswith('schema-')]\n"
                "    latest = max(names, key=lambda n: int(n.split('-', 1)[1]))\n"
                "    with open(os.path.join(TABLE, 'schema', latest)) as f:\n"
                "        table = Table.from_resolved_schema(os.path.abspath(TABLE), f.read())\n"
                f"    rb = table.new_read_builder({travel})\n"
                "    batches = rb.new_read().read(rb.new_scan().plan().splits())\n"
                "    return pa.Table.from_batches(batches) if batches else pa.table({})\n")
