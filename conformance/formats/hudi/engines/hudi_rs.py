"""hudi-rs (the PyPI package ``hudi``: apache/hudi-rs compiled with PyO3) as a reader of Hudi tables.

What it is (measured on 0.5.0): ``HudiTableBuilder.from_base_uri(uri).with_storage_options(...).build()``
opens a table; ``HudiTable.read(HudiReadOptions)`` returns a list of Arrow record batches with the five
``_hoodie_*`` meta columns first. It writes nothing. Read points are Hudi's own options:

* a version: ``with_as_of_timestamp(<instant>)``, the instant ``instants.point`` names for it (its
  completion time in v8+, its requested time in v6); version 0 is read as no rows;
* a timestamp: the Hudi instant time the ISO time names (UTC), as the as-of instant;
* ref ``read_optimized``: ``hoodie.read.use.read_optimized.mode=true`` (base files only), at a version too;
* ref ``incremental:A:B``: ``HudiQueryType.Incremental`` with start/end timestamps ``(A, B]``.

S3: object_store options (lower-case ``aws_*`` keys) through ``with_storage_options``.

``describe`` reports what hudi-rs exposes: the table config it parsed (``hudi_options()``: type, version,
key, partition and ordering fields, the merge mode when the table states one: hudi-rs does not expose the
mode it derives otherwise), the action of the instant read (its timeline), and the partitions and file
groups of the file slices it plans at the read point (``get_file_slices``).

Refusals: every hudi-rs error is a ``HudiCoreError`` (no subclasses), so the words decide (``HUDI_RS``);
a Rust panic is a ``PanicException`` (a ``BaseException``) and passes through as an error of the cell.
"""

from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa

from conformance.engines._common import local_path, missing_module, package_version, s3_config
from conformance.engines.base import Capabilities, Engine
from conformance.engines.errors import ErrorPatterns, refusals
from conformance.formats.hudi import facts as F
from conformance.formats.hudi.engines._common import ReadPoint, data_columns, read_point
from conformance.model import TableRef

FORMAT = "hudi"
PACKAGE = "hudi"

# hudi-rs 0.5.0's words (HudiCoreError's text; measured on tables the kit builds).
HUDI_RS = ErrorPatterns(
    unsupported=(
        "Only support table version",  # 5, 7 ("Only support table version 6, 8, and 9. Found: 7")
        "Only support when",  # hoodie.datasource.write.drop.partition.columns=true
        "is not supported",  # a config value it does not implement (base file format ORC), schema on read
        "not yet supported",
        "not yet implemented",
        "which the merge-on-read reader cannot reproduce",  # a custom payload / merger (merge mode CUSTOM)
    ),
    invalid_on_read=(
        "Failed to read base file",  # a base file that is not Parquet (corrupt footer)
        "Invalid Parquet file",
        "Commit metadata error",  # completed instant metadata that does not parse
        "Failed to create Avro reader",
        "Config error: Config '",  # hoodie.properties lacks a required key ("Config 'hoodie.table.name' not found")
        "Invalid table",
        "expects timeline layout version",  # "Table version 9 expects timeline layout version 2. Found: 1"
    ),
)

# What hudi-rs 0.5.0 reads (measured: unit/hudi/test_engine_hudi_rs.py): COW and MOR (Avro and Parquet
# log blocks, delete blocks, rollback command blocks, pending writes, compaction, insert overwrite), both
# merge modes, table versions 6, 8 and 9, time travel, read-optimized and incremental queries, and schema
# evolution on write (an added column, int -> long). It is not declared missing anything: where it reads
# wrongly (time travel across an added column returns the latest schema) the cell must show the difference,
# and what it refuses (custom mergers, table versions 5 and 7) it says itself. Schema on read is declared read
# because hudi-rs reads such tables without refusing them (measured on Spark- and reference-written tables: no
# "schema-on-read (InternalSchema) is not supported" error; it resolves columns by name): the cells show where that
# gives wrong rows (findings.py).
READ_FEATURES = frozenset({
    F.MERGE_ON_READ, F.LOG_PARQUET, F.DELETE_BLOCKS, F.EVENT_TIME, F.TABLE_VERSION_6, F.TABLE_VERSION_8,
    F.TABLE_VERSION_9, F.SCHEMA_EVOLUTION, F.SCHEMA_ON_READ, F.READ_OPTIMIZED_QUERY, F.INCREMENTAL_QUERY, "time-travel",
    "timestamp-travel", "ref-travel",
})
GAPS: dict[str, str] = {}


def storage_options(table: TableRef) -> dict[str, str]:
    """object_store options for the table's store (lower-case ``aws_*`` keys; empty for local disk)."""
    from conformance.storage.s3_options import polars_options

    cfg = s3_config(table)
    return polars_options(cfg) if cfg is not None else {}


def location(table: TableRef) -> str:
    """The table URI as hudi-rs takes it: an absolute path locally, ``s3://`` on an object store."""
    import os

    path = local_path(table.uri)
    if path is not None:
        return os.path.abspath(path)
    uri = table.uri.rstrip("/")
    return "s3://" + uri[len("s3a://"):] if uri.startswith("s3a://") else uri


def open_table(table: TableRef):
    """hudi-rs's ``HudiTable`` over the table's directory."""
    from hudi import HudiTableBuilder

    return HudiTableBuilder.from_base_uri(location(table)).with_storage_options(storage_options(table)).build()


def read_options(rp: ReadPoint, columns: Sequence[str] | None = None):
    """hudi-rs's ``HudiReadOptions`` of a read point."""
    from hudi import HudiQueryType, HudiReadOptions

    opts = HudiReadOptions()
    if rp.query == F.INCREMENTAL:
        opts = opts.with_query_type(HudiQueryType.Incremental)
        if rp.begin is not None:
            opts = opts.with_start_timestamp(rp.begin)
        if rp.end is not None:
            opts = opts.with_end_timestamp(rp.end)
    else:
        if rp.as_of is not None:
            opts = opts.with_as_of_timestamp(rp.as_of)
        if rp.query == F.READ_OPTIMIZED:
            opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if columns:
        opts = opts.with_projection(list(columns))
    return opts


def _empty(tbl, columns: Sequence[str] | None) -> pa.Table:
    """No rows, in the schema hudi-rs gives the table (its latest schema with meta fields)."""
    try:
        schema = tbl.get_schema_with_meta_fields()
    except Exception:  # noqa: BLE001 - a table without any commit has no schema to tell
        from reference_impl.hudi.avro_schema import META_COLUMNS

        schema = pa.schema([pa.field(m, pa.string()) for m in META_COLUMNS])
    if columns:
        schema = pa.schema([schema.field(c) for c in columns])
    return schema.empty_table()


def read_table(table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    """hudi-rs's rows of the table at the read point (no error translation: callers wrap it)."""
    rp = read_point(table, at=at, timestamp=timestamp, ref=ref)
    tbl = open_table(table)
    if rp.empty:
        return _empty(tbl, columns)
    batches = tbl.read(read_options(rp, columns))
    if not batches:
        return _empty(tbl, columns)
    return pa.Table.from_batches(batches)


def _props_list(value: str | None) -> list[str]:
    return [v.strip().split(":", 1)[0] for v in (value or "").split(",") if v.strip()]


def _action(tbl, requested: str | None) -> str | None:
    """The action hudi-rs's timeline gives the completed instant requested at ``requested``."""
    if requested is None:
        return None
    timeline = tbl.get_timeline()
    for listing in (timeline.get_completed_commits, timeline.get_completed_deltacommits,
                    timeline.get_completed_replacecommits):
        for inst in listing():
            if inst.timestamp == requested:
                return inst.action
    return None


def describe_table(table: TableRef, *, at=None, timestamp=None, ref=None) -> dict[str, Any]:
    """The facts hudi-rs exposes at the read point (module docstring)."""
    from conformance.formats.hudi import instants as I
    from conformance.formats.hudi.engines._common import storage_of

    rp = read_point(table, at=at, timestamp=timestamp, ref=ref)
    tbl = open_table(table)
    cfg = tbl.hudi_options()
    facts: dict[str, Any] = {
        "table_type": tbl.table_type,
        "table_version": int(cfg["hoodie.table.version"]) if "hoodie.table.version" in cfg else None,
        "record_key_fields": _props_list(cfg.get("hoodie.table.recordkey.fields")),
        "partition_fields": _props_list(cfg.get("hoodie.table.partition.fields")),
        "ordering_fields": _props_list(cfg.get("hoodie.table.ordering.fields")
                                       or cfg.get("hoodie.table.precombine.field")),
    }
    if cfg.get("hoodie.record.merge.mode"):
        facts["merge_mode"] = cfg["hoodie.record.merge.mode"]
    if rp.query == F.INCREMENTAL:  # an incremental read has no single state to describe
        return facts
    if rp.empty:
        facts.update(action=None, partitions=[], file_group_count=0)
        return facts
    point = rp.point
    if point is None and rp.as_of is None:
        point = I.point(storage_of(table), None)
    if point is not None:
        facts["action"] = _action(tbl, point.requested_time)
    slices = tbl.get_file_slices(read_options(ReadPoint(query=rp.query, as_of=rp.as_of)))
    facts["partitions"] = sorted({s.partition_path for s in slices})
    facts["file_group_count"] = len({(s.partition_path, s.file_id) for s in slices})
    return facts


class HudiRsEngine(Engine):
    """hudi-rs: ``HudiTable.read`` with Hudi's read options (a reader only)."""

    name = "hudi-rs"

    def version(self) -> str:
        return package_version(PACKAGE)

    def available(self) -> str | None:
        return missing_module("hudi", "hudi")

    def capabilities(self) -> Capabilities:
        return Capabilities(read=frozenset({FORMAT}), read_features={FORMAT: READ_FEATURES},
                            unsupported={FORMAT: dict(GAPS)})

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        with refusals(HUDI_RS, table.uri):
            return data_columns(read_table(table, at=at, timestamp=timestamp, ref=ref, columns=columns))

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        with refusals(HUDI_RS, table.uri):
            return describe_table(table, at=at, timestamp=timestamp, ref=ref)

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        if at == 0 or local_path(table.uri) is None:  # no spelling for "before the first commit"; local only
            return None
        travel = ""
        if at:
            from conformance.formats.hudi.engines._common import storage_of
            from conformance.formats.hudi.instants import point

            travel = f".with_as_of_timestamp({point(storage_of(table), at).as_of!r})"
        return ("def read():\n"
                "    import os\n"
                "    import pyarrow as pa\n"
                "    from hudi import HudiReadOptions, HudiTableBuilder\n"
                "    table = HudiTableBuilder.from_base_uri(os.path.abspath(TABLE)).build()\n"
                f"    batches = table.read(HudiReadOptions(){travel})\n"
                "    return pa.Table.from_batches(batches) if batches else pa.table({})\n")
