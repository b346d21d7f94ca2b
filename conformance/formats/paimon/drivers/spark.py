"""Paimon through paimon-spark: reads by path, writes through a Paimon catalog with the table's own location.

* Reads load the table directory (``spark.read.format("paimon").load(path)``); the kit's version is
  Paimon's snapshot id (``scan.snapshot-id``; version 0 is the table before its first commit: no
  rows, the latest schema), a timestamp is ``scan.timestamp-millis``, a ref is ``scan.tag-name``
  when the table has such a tag, else the ``branch`` option (``facts.py``).
* Writes are what a Spark user types against a Paimon catalog (``CREATE TABLE ... TBLPROPERTIES
  ('primary-key' = ...)``, ``writeTo(...).append()`` / ``.overwrite(...)``, ``DELETE``/``UPDATE``,
  ``ALTER TABLE``, ``CALL <catalog>.sys.create_tag / create_branch / expire_snapshots / compact``).
  paimon-spark 0.9 creates tables only through a catalog (a DataFrame ``save(path)`` of a new path
  fails with "Schema file not found ... Please create table first"), and a filesystem catalog puts
  table ``db.t`` at ``<warehouse>/<db>.db/<t>``; ``CREATE TABLE ... LOCATION`` is silently ignored.
  So the table's *name* is its absolute location: the catalog resolves ``new Path(<db dir>, name)``
  and Hadoop's ``Path`` takes an absolute child as it is, so ``<catalog>.default.`s3a://b/x/t```
  lands exactly at ``TableRef.uri``. Paimon writes no table name or absolute path into a table, so
  the files are those a catalog whose warehouse held the table would write. A catalog's only other
  file is its ``default.db`` directory: in the session's ``paimon`` catalog (local tables) under the
  temporary directory; for S3 in one catalog per bucket and endpoint, at
  ``s3a://<bucket>/.lakeconf-spark-paimon/default.db/`` (a hidden prefix, outside every table).
* ``describe`` reads Paimon's system tables (``$snapshots``, ``$schemas``, ``$tags``, ``$branches``).

paimon-spark 0.9.0 is the newest release for Spark 3.5 on Maven Central, and no paimon-spark-4.0
resolves, so the driver pins a runtime for the 3.5 line only (the 4.0 line does not offer Paimon).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any, Mapping, Sequence
from urllib.parse import urlparse

import pyarrow as pa

from conformance.engines.base import FormatSupport
from conformance.engines.spark import errors, s3, session
from conformance.engines.spark.sql import (
    dataframe,
    ms_of,
    quote_ident,
    select_columns,
    spark_path,
    sql_string,
    sql_type,
    to_arrow,
)
from conformance.model import (
    AddColumn,
    Append,
    ChangeColumnType,
    Create,
    CreateRef,
    Delete,
    DropColumn,
    ExpireSnapshots,
    MoveColumn,
    Optimize,
    Overwrite,
    RenameColumn,
    SetPartitioning,
    SetProperties,
    Step,
    TableRef,
    Update,
    parse_partition_expr,
)
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported

# paimon-spark per Spark line (Maven Central, checked 2026-11): 0.9.0 is the newest for Spark 3.5
# (>= 1.0 is not served); there is no paimon-spark-4.0 to resolve.
RUNTIMES = {"3.5": "org.apache.paimon:paimon-spark-3.5:0.9.0"}
# Paimon's extension goes before Hudi's: with Hudi's first, Paimon's CALL parser never sees its
# procedures and Hudi's ``CALL run_compaction`` fails (measured with hudi-spark3.5-bundle 1.2.0).
EXTENSION_PRIORITY = 10

CATALOG = "paimon"
DATABASE = "default"  # SparkCatalog creates it when the catalog starts, so no CREATE DATABASE is needed
LOCAL_WAREHOUSE = "file://" + os.path.join(tempfile.gettempdir(), "lakeconf-spark-paimon")
S3_WAREHOUSE_DIR = ".lakeconf-spark-paimon"
CATALOG_CLASS = "org.apache.paimon.spark.SparkCatalog"
CATALOG_OPTIONS = {
    # Other writers change the same tables between Spark's steps: never serve a cached table.
    "cache-enabled": "false",
}
SESSION_CONF = {
    "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
    f"spark.sql.catalog.{CATALOG}": CATALOG_CLASS,
    f"spark.sql.catalog.{CATALOG}.warehouse": LOCAL_WAREHOUSE,
    **{f"spark.sql.catalog.{CATALOG}.{k}": v for k, v in CATALOG_OPTIONS.items()},
}

WRITE_STEPS = frozenset(
    {"Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddColumn", "RenameColumn", "DropColumn",
     "ChangeColumnType", "MoveColumn", "CreateRef", "ExpireSnapshots", "Optimize"}
)

# What paimon-spark 0.9 cannot write although Paimon tables can hold it (the steps raise
# ``Unsupported`` with these words).
WRITE_GAPS: Mapping[str, str] = {
    "WriteChanges": "Spark writes +I rows (INSERT), and -D/+U rows only through DELETE/UPDATE; a commit of rows with "
                    "explicit row kinds needs the table option rowkind.field naming a column of the table",
    "SetPartitioning": "Paimon's partition keys are fixed when the table is created (no ALTER for them)",
    "timestamp-ns": "Spark has no nanosecond timestamp type (Paimon TIMESTAMP(9))",
}

# Paimon-Java's words (paimon-spark 0.9.0 / paimon-bundle 0.9.0) for a table it cannot or will not read.
_UNSUPPORTED_TEXT = (
    "java.lang.UnsupportedOperationException",
    "Unsupported type",
    "Unsupported data type",
    "not supported yet",
    # Paimon 0.9 reads TIMESTAMP(7..9) from INT96 only; later Paimon (and the reference) write INT64 nanoseconds.
    "Unexpected type: INT64",
)
_INVALID_TEXT = (
    "Schema file not found in location",  # no table there (or no schema for the branch)
    "is out of available snapshotId range",  # scan.snapshot-id of a snapshot the table lacks
    "PATH_NOT_FOUND",
    "java.io.FileNotFoundException",
    "FileNotFoundException",
    "com.fasterxml.jackson.core.JsonParseException",
    "MismatchedInputException",
)
# On a read, a failed validation means the table is broken; on a write it is the writer refusing
# an operation (a plain engine error).
_READ_INVALID_TEXT = (
    "java.lang.IllegalArgumentException",
    "java.lang.IllegalStateException",
    "IllegalArgumentException",  # PySpark re-raises these under its own classes of the same names
    "IllegalStateException",
    "doesn't exist",  # "Tag 'x' doesn't exist."
    "java.io.EOFException",
    "Corrupt",
    "ParquetDecodingException",
    "is not a Parquet file",
    "Invalid magic number",  # a deletion vector whose bytes are not a bitmap
)

ERRORS = errors.ErrorPatterns(
    unsupported=_UNSUPPORTED_TEXT,
    unsupported_types=("UnsupportedOperationException",),
    invalid=_INVALID_TEXT,
    invalid_on_read=_READ_INVALID_TEXT,
)


def translate(exc: BaseException, where: str, *, reading: bool = False) -> BaseException:
    """A paimon-spark exception as the kit's error kinds."""
    return errors.translate(exc, where=where, patterns=ERRORS, reading=reading)


# ----------------------------------------------------------------------------------------------
# Where a table is for Spark: a path, and a catalog identifier whose name is that path
# ----------------------------------------------------------------------------------------------


def paimon_path(uri: str) -> str:
    """The table directory as Spark's Hadoop file systems want it (``s3a://`` on S3, ``file:`` on disk)."""
    return spark_path(uri).rstrip("/")


def _catalog(spark, table: TableRef) -> str:
    """The catalog that writes ``table``: the session's ``paimon`` catalog for local tables, one
    registered at run time per S3 bucket and endpoint (its warehouse in that bucket, since a
    catalog's file IO is chosen by its warehouse's scheme)."""
    parsed = urlparse(table.uri)
    if parsed.scheme not in ("s3", "s3a"):
        return CATALOG
    bucket = parsed.netloc
    endpoint = s3.configured_endpoint(bucket)  # endpoint, key id: no secret
    name = "lakeconf_paimon_" + hashlib.sha256(repr((bucket, endpoint)).encode()).hexdigest()[:12]
    catalogs = session.state("paimon-catalogs", set)
    with session.state_lock:
        if name not in catalogs:
            prefix = f"spark.sql.catalog.{name}"
            spark.conf.set(prefix, CATALOG_CLASS)
            spark.conf.set(prefix + ".warehouse", f"s3a://{bucket}/{S3_WAREHOUSE_DIR}")
            for key, value in CATALOG_OPTIONS.items():
                spark.conf.set(f"{prefix}.{key}", value)
            catalogs.add(name)
    return name


class _Names:
    """The SQL names of one table: its identifier, its system tables, and the procedures' ``table`` argument."""

    def __init__(self, spark, table: TableRef) -> None:
        self.spark = spark
        self.path = paimon_path(table.uri)
        self.catalog = _catalog(spark, table)
        self.inner = f"{quote_ident(DATABASE)}.{quote_ident(self.path)}"
        self.ident = f"{self.catalog}.{self.inner}"

    def of(self, suffix: str, branch: str | None = None) -> str:
        """A system table (``suffix`` like ``snapshots``) or the branch itself (``suffix`` None)."""
        name = self.path + (f"$branch_{branch}" if branch else "") + (f"${suffix}" if suffix else "")
        return f"{self.catalog}.{quote_ident(DATABASE)}.{quote_ident(name)}"

    def call(self, procedure: str, **args: Any) -> list:
        """``CALL <catalog>.sys.<procedure>(table => ..., ...)`` with named arguments."""
        parts = [f"table => {sql_string(self.inner)}"]
        for key, value in args.items():
            if value is not None:
                parts.append(f"{key} => {value if isinstance(value, int) else sql_string(str(value))}")
        return self.spark.sql(f"CALL {self.catalog}.sys.{procedure}({', '.join(parts)})").collect()


def _names(spark, table: TableRef) -> _Names:
    return _Names(spark, table)


# ----------------------------------------------------------------------------------------------
# What the table says about itself (system tables)
# ----------------------------------------------------------------------------------------------


def _tags(spark, names: _Names) -> dict[str, int]:
    return {r.tag_name: int(r.snapshot_id) for r in spark.sql(f"SELECT tag_name, snapshot_id FROM {names.of('tags')}").collect()}


def _branches(spark, names: _Names) -> set[str]:
    try:
        return {r.branch_name for r in spark.sql(f"SELECT branch_name FROM {names.of('branches')}").collect()}
    except Exception:  # noqa: BLE001 - a table without branch/ directory lists none
        return set()


def _ref_kind(spark, names: _Names, ref: str) -> str:
    """``tag`` when the table has a tag ``ref``, else ``branch`` when it has such a branch (facts.py)."""
    if ref in _tags(spark, names):
        return "tag"
    if ref in _branches(spark, names):
        return "branch"
    raise InvalidTable(f"spark: the table has no tag or branch named {ref!r}", path=names.path)


def _snapshots(spark, names: _Names, branch: str | None = None) -> list[Any]:
    """The live snapshots (``$snapshots``), commit time in epoch milliseconds (the session and JVM run in UTC,
    and Paimon shows ``timeMillis`` as a zone-less time of the JVM's zone)."""
    return spark.sql(
        "SELECT snapshot_id, schema_id, commit_kind, unix_millis(CAST(commit_time AS TIMESTAMP)) AS time_millis "
        f"FROM {names.of('snapshots', branch)} ORDER BY snapshot_id"
    ).collect()


def _schemas(spark, names: _Names, branch: str | None = None) -> dict[int, Any]:
    rows = spark.sql(f"SELECT schema_id, primary_keys, partition_keys, options FROM {names.of('schemas', branch)}").collect()
    return {int(r.schema_id): r for r in rows}


def _latest_schema(spark, names: _Names) -> tuple[list[str], list[str], dict[str, str]]:
    """(primary keys, partition keys, options) of the table's newest schema."""
    schemas = _schemas(spark, names)
    row = schemas[max(schemas)]
    return json.loads(row.primary_keys or "[]"), json.loads(row.partition_keys or "[]"), json.loads(row.options or "{}")


def _facts(snapshot: Any | None, schema: Any, *, commit_kind: bool = True) -> dict:
    primary = json.loads(schema.primary_keys or "[]")
    options = {str(k): str(v) for k, v in json.loads(schema.options or "{}").items()}
    try:
        bucket = int(options.get("bucket", "-1"))  # CoreOptions.BUCKET's default for v2+ schemas
    except ValueError:
        bucket = None
    out = {
        "snapshot_id": int(snapshot.snapshot_id) if snapshot is not None else None,
        "schema_id": int(schema.schema_id),
        "primary_keys": primary,
        "partition_keys": json.loads(schema.partition_keys or "[]"),
        "bucket": bucket,
        "merge_engine": options.get("merge-engine", "deduplicate") if primary else None,
        "options": options,
    }
    if commit_kind:
        out["commit_kind"] = str(snapshot.commit_kind) if snapshot is not None else None
    return out


def _describe(spark, table: TableRef, *, at, timestamp, ref) -> dict:
    names = _names(spark, table)
    branch = None
    if ref is not None:
        kind = _ref_kind(spark, names, ref)
        if kind == "tag":
            # A tag's snapshot may be expired from the main history; $tags tells its id and schema
            # but not its commit kind, which is then left out (not guessed).
            row = spark.sql(f"SELECT snapshot_id, schema_id FROM {names.of('tags')} WHERE tag_name = {sql_string(ref)}").first()
            live = {int(s.snapshot_id): s for s in _snapshots(spark, names)}
            snap = live.get(int(row.snapshot_id))
            return _facts(snap or row, _schemas(spark, names)[int(row.schema_id)], commit_kind=snap is not None)
        branch = ref
    snaps = _snapshots(spark, names, branch)
    schemas = _schemas(spark, names, branch)
    if at is not None:
        if at == 0:
            return _facts(None, schemas[max(schemas)])
        chosen = [s for s in snaps if int(s.snapshot_id) == at]
        if not chosen:
            raise InvalidTable(f"spark: the table has no snapshot {at} (live: {[int(s.snapshot_id) for s in snaps]})",
                               path=table.uri)
        snap = chosen[0]
    elif timestamp is not None:
        before = [s for s in snaps if int(s.time_millis) <= ms_of(timestamp)]
        if not before:
            raise InvalidTable(f"spark: no snapshot was committed at or before {timestamp}", path=table.uri)
        snap = before[-1]
    else:
        snap = snaps[-1] if snaps else None
    return _facts(snap, schemas[int(snap.schema_id)] if snap is not None else schemas[max(schemas)])


# ----------------------------------------------------------------------------------------------
# Reads
# ----------------------------------------------------------------------------------------------


def _read(spark, table: TableRef, *, at, timestamp, ref, columns) -> pa.Table:
    path = paimon_path(table.uri)
    reader = spark.read.format("paimon")
    empty = False
    if at is not None:
        if isinstance(at, bool) or not isinstance(at, int) or at < 0:
            raise InvalidTable(f"a Paimon version is a snapshot id >= 0, got {at!r}", path=table.uri)
        if at == 0:
            empty = True  # before the first commit: no rows, the latest schema
        else:
            reader = reader.option("scan.snapshot-id", str(at))
    elif timestamp is not None:
        reader = reader.option("scan.timestamp-millis", str(ms_of(timestamp)))
    elif ref is not None:
        kind = _ref_kind(spark, _names(spark, table), ref)
        reader = reader.option("scan.tag-name" if kind == "tag" else "branch", ref)
    df = reader.load(path)
    if empty:
        df = df.limit(0)
    return to_arrow(select_columns(df, columns))


# ----------------------------------------------------------------------------------------------
# Writes
# ----------------------------------------------------------------------------------------------


def _column_sql(f: pa.Field) -> str:
    t = f.type
    if pa.types.is_timestamp(t) and t.unit == "ns":
        raise Unsupported(f"column {f.name!r}: {WRITE_GAPS['timestamp-ns']}", feature="timestamp-ns")
    return f"{quote_ident(f.name)} {sql_type(t)}{'' if f.nullable else ' NOT NULL'}"


def paimon_create_sql(ident: str, step: Create) -> str:
    """The CREATE TABLE a Spark user types for a Paimon ``Create``: primary key and options as
    TBLPROPERTIES, partition keys (``partition_by`` or the ``partition`` option) as PARTITIONED BY."""
    if step.features:
        raise Unsupported(f"Paimon has no table features to enable ({', '.join(step.features)}); options decide",
                          feature=step.features[0])
    props = {str(k): str(v) for k, v in step.properties.items()}
    partition = list(step.partition_by)
    for expr in partition:
        transform, _column, _param = parse_partition_expr(expr)
        if transform != "identity":
            raise Unsupported(f"Paimon partitions by column values only, not by {expr!r}", feature=f"{transform}-transform")
    option = props.pop("partition", None)
    if option is not None:
        keys = [k.strip() for k in option.split(",") if k.strip()]
        if partition and keys != partition:
            raise Unsupported("partition keys given both as partition_by and as the 'partition' option", feature="partition")
        partition = keys
    cols = ", ".join(_column_sql(f) for f in step.schema)
    sql = f"CREATE TABLE {ident} ({cols})"
    if partition:
        sql += f" PARTITIONED BY ({', '.join(quote_ident(c) for c in partition)})"
    if props:
        sql += " TBLPROPERTIES (" + ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in props.items()) + ")"
    return sql


def _aligned(spark, rows: pa.Table, target: str):
    """``rows`` as a DataFrame in the table's column order and types; columns the rows lack are null,
    columns the table lacks are kept (so that Spark refuses them)."""
    from pyspark.sql import functions as SF

    df = dataframe(spark, rows)
    schema = spark.table(target).schema
    have = set(df.columns)
    cols = [(df[quote_ident(f.name)] if f.name in have else SF.lit(None)).cast(f.dataType).alias(f.name)
            for f in schema.fields]
    known = {f.name for f in schema.fields}
    cols += [df[quote_ident(c)] for c in df.columns if c not in known]
    return df.select(*cols)


def _delete(spark, names: _Names, step: Delete) -> None:
    """DELETE FROM; ``how`` only where paimon-spark does what it asks (no silent other mechanism)."""
    if step.how is not None:
        primary, _parts, options = _latest_schema(spark, names)
        dv = options.get("deletion-vectors.enabled", "false").strip().lower() == "true"
        if step.how == "deletion-vectors" and not dv:
            raise Unsupported("Paimon writes deletion vectors only for tables with deletion-vectors.enabled = true",
                              feature="deletion-vectors")
        if step.how == "copy-on-write" and (primary or dv):
            raise Unsupported("Spark's DELETE on a primary-key or deletion-vector table writes -D rows or deletion "
                              "vectors, not rewritten files", feature="copy-on-write")
        if step.how in ("position-deletes", "equality-deletes"):
            raise Unsupported(f"Paimon has no {step.how} (it writes -D rows, deletion vectors or rewritten files)",
                              feature=step.how)
    spark.sql(f"DELETE FROM {names.ident} WHERE {step.where}")


def _overwrite(spark, names: _Names, step: Overwrite) -> None:
    """Replace every row (an OVERWRITE snapshot). A new schema is reached first by ALTER TABLE, as a
    Spark user keeps a table's history: dropped columns go, new ones are added, changed types altered."""
    from pyspark.sql import functions as SF

    current = {f.name: f for f in spark.table(names.ident).schema.fields}
    wanted = {f.name: f for f in dataframe(spark, step.rows.slice(0, 0)).schema.fields}
    for name in current:
        if name not in wanted:
            spark.sql(f"ALTER TABLE {names.ident} DROP COLUMN {quote_ident(name)}")
    for field in step.rows.schema:
        if field.name not in current:
            spark.sql(f"ALTER TABLE {names.ident} ADD COLUMNS ({_column_sql(pa.field(field.name, field.type))})")
        elif current[field.name].dataType != wanted[field.name].dataType:
            new_type = _column_sql(pa.field(field.name, field.type)).split(" ", 1)[1]
            spark.sql(f"ALTER TABLE {names.ident} ALTER COLUMN {quote_ident(field.name)} TYPE {new_type}")
    _aligned(spark, step.rows, names.ident).coalesce(1).writeTo(names.ident).overwrite(SF.lit(True))


# iceberg-spark-runtime 1.12.0 (Spark 3.5) adds an analyzer rule that assumes every UPDATE target is an
# Iceberg table: with its extension in the session, Paimon's UPDATE fails in Spark's analyzer before
# Paimon's own rule sees it ("scala.MatchError: SparkTable(org.apache.paimon...)" in
# RewriteOperationForRowLineage.shouldUpdatePlan), whatever the extension order (measured).
_FOREIGN_UPDATE_RULE = "RewriteUpdateTableForRowLineage"


def _update(spark, names: _Names, step: Update) -> None:
    """UPDATE ... SET ... WHERE; Unsupported (naming the culprit) when another runtime's analyzer rule
    in the shared session refuses Paimon tables: the step cannot run here, the table is untouched."""
    sets = ", ".join(f"{quote_ident(c)} = {e}" for c, e in step.set.items())
    try:
        spark.sql(f"UPDATE {names.ident} SET {sets} WHERE {step.where}")
    except Exception as exc:  # noqa: BLE001 - judged by its words below
        text = str(exc)
        if _FOREIGN_UPDATE_RULE in text and "MatchError" in text:
            raise Unsupported(
                "UPDATE on a Paimon table fails in this Spark session: another runtime's analyzer rule "
                f"({_FOREIGN_UPDATE_RULE}, iceberg-spark-runtime 1.12 on Spark 3.5) raises scala.MatchError on "
                "Paimon's SparkTable before paimon-spark sees the statement; a session without that runtime "
                "(LAKECONF_SPARK_FORMATS) runs it", feature="Update") from None
        raise


def _create_ref(spark, names: _Names, step: CreateRef) -> None:
    """A tag: ``CALL sys.create_tag`` at the snapshot. A branch: paimon-spark 0.9's ``create_branch``
    starts a branch only from a tag (without one it makes an empty branch), so a branch at a snapshot
    no tag names is made as a Spark user would: a tag there, the branch from it, the tag deleted
    again (the branch keeps its own copy of that tag, as Paimon copies a branch's base tag)."""
    if step.kind not in ("branch", "tag"):
        raise Unsupported(f"unknown ref kind {step.kind!r}", feature=str(step.kind))
    if step.version is not None and (isinstance(step.version, bool) or step.version < 1):
        raise Unsupported(f"version {step.version} has no snapshot for a {step.kind} to point at",
                          feature=f"{step.kind}-on-empty-table")
    snapshot = step.version
    if snapshot is None:
        snaps = _snapshots(spark, names)
        if not snaps:
            raise Unsupported(f"the table has no snapshot yet for a {step.kind} to point at",
                              feature=f"{step.kind}-on-empty-table")
        snapshot = int(snaps[-1].snapshot_id)
    if step.kind == "tag":
        names.call("create_tag", tag=step.name, snapshot=int(snapshot))
        return
    existing = [t for t, sid in sorted(_tags(spark, names).items()) if sid == snapshot]
    if existing:
        names.call("create_branch", branch=step.name, tag=existing[0])
        return
    base = f"{step.name}-base-{snapshot}"
    names.call("create_tag", tag=base, snapshot=int(snapshot))
    try:
        names.call("create_branch", branch=step.name, tag=base)
    finally:
        names.call("delete_tag", tag=base)


def _optimize(spark, names: _Names) -> None:
    """``CALL sys.compact``: primary-key and fixed-bucket tables compact fully (a COMPACT snapshot).
    On a bucket-unaware append table paimon-spark 0.9's compact returns true and commits nothing,
    even with compaction.min.file-num lowered (procedure options, ``spark.paimon.*`` or a table
    option; measured): that is ``Unsupported`` here, never a silent no-op, when there was anything
    to compact."""
    before = len(_snapshots(spark, names))
    names.call("compact", options="compaction.min.file-num=2")
    if len(_snapshots(spark, names)) > before:
        return
    most = spark.sql(f"SELECT max(n) AS n FROM (SELECT count(*) AS n FROM {names.of('files')} "
                     "GROUP BY `partition`, bucket)").first().n
    if most and most > 1:
        raise Unsupported(f"paimon-spark 0.9's compact procedure made no commit for this table ({most} data files "
                          "in one bucket left as they were; it does not compact bucket-unaware append tables)",
                          feature="Optimize")


def _run_step(spark, names: _Names, step: Step) -> None:
    ident = names.ident
    if isinstance(step, Create):
        spark.sql(paimon_create_sql(ident, step))
    elif isinstance(step, Append):
        target = ident if step.branch is None else names.of(None, step.branch)
        df = _aligned(spark, step.rows, target)
        df = df.repartition(step.files) if step.files > 1 else df.coalesce(1)
        df.writeTo(target).append()
    elif isinstance(step, Overwrite):
        _overwrite(spark, names, step)
    elif isinstance(step, Delete):
        _delete(spark, names, step)
    elif isinstance(step, Update):
        _update(spark, names, step)
    elif isinstance(step, SetProperties):
        props = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in step.properties.items())
        spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({props})")
    elif isinstance(step, AddColumn):
        spark.sql(f"ALTER TABLE {ident} ADD COLUMNS ({_column_sql(step.field.with_nullable(True))})")
    elif isinstance(step, RenameColumn):
        spark.sql(f"ALTER TABLE {ident} RENAME COLUMN {quote_ident(step.old)} TO {quote_ident(step.new)}")
    elif isinstance(step, DropColumn):
        spark.sql(f"ALTER TABLE {ident} DROP COLUMN {quote_ident(step.name)}")
    elif isinstance(step, ChangeColumnType):
        new_type = _column_sql(pa.field(step.name, step.type)).split(" ", 1)[1]
        spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {quote_ident(step.name)} TYPE {new_type}")
    elif isinstance(step, MoveColumn):
        where = "FIRST" if step.after is None else f"AFTER {quote_ident(step.after)}"
        spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {quote_ident(step.name)} {where}")
    elif isinstance(step, CreateRef):
        _create_ref(spark, names, step)
    elif isinstance(step, ExpireSnapshots):
        if step.retain_last < 1:
            raise Unsupported("Paimon keeps at least the latest snapshot (retain_last >= 1)", feature="retain_last")
        # retain_min = retain_max: exactly the newest N stay, whatever snapshot.time-retained says.
        names.call("expire_snapshots", retain_max=int(step.retain_last), retain_min=int(step.retain_last))
    elif isinstance(step, Optimize):
        _optimize(spark, names)
    elif isinstance(step, SetPartitioning):
        raise Unsupported(WRITE_GAPS["SetPartitioning"], feature="SetPartitioning")
    else:  # pragma: no cover - write() filtered these
        raise Unsupported(f"spark cannot run a {type(step).__name__} step on paimon tables")


# ----------------------------------------------------------------------------------------------
# The driver interface
# ----------------------------------------------------------------------------------------------


def support(engine: Any) -> FormatSupport:
    """Every read feature (paimon-spark says itself what it cannot read); the write steps above."""
    return FormatSupport(write_steps=WRITE_STEPS)


def read(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    spark = engine.session(table)
    try:
        return _read(spark, table, at=at, timestamp=timestamp, ref=ref, columns=columns)
    except LakeconfError:
        raise
    except Exception as exc:
        raise translate(exc, table.uri, reading=True) from None


def describe(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None) -> dict:
    spark = engine.session(table)
    try:
        return _describe(spark, table, at=at, timestamp=timestamp, ref=ref)
    except LakeconfError:
        raise
    except Exception as exc:
        raise translate(exc, table.uri, reading=True) from None


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    for step in steps:
        name = type(step).__name__
        if name not in WRITE_STEPS:
            reason = WRITE_GAPS.get(name, f"spark cannot run a {name} step on paimon tables")
            raise Unsupported(reason + (f" ({step.description})" if hasattr(step, "description") else ""), feature=name)
    spark = engine.session(table)
    names = _names(spark, table)
    for step in steps:
        try:
            _run_step(spark, names, step)
        except LakeconfError:
            raise
        except Exception as exc:
            raise translate(exc, f"{table.uri} ({type(step).__name__})") from None


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through PySpark with paimon-spark (``lakeconf findings export``)."""
    option = f"\n    reader = reader.option('scan.snapshot-id', '{int(at)}')" if at else ""
    limit = ".limit(0)" if at == 0 else ""
    return (
        "def read():\n"
        "    import pyarrow as pa\n"
        "    from pyspark.sql import SparkSession\n"
        "    spark = (SparkSession.builder.master('local[1]')\n"
        f"             .config('spark.jars.packages', {RUNTIMES[engine.line.name]!r})\n"
        + "".join(f"             .config({k!r}, {v!r})\n" for k, v in SESSION_CONF.items())
        + "             .getOrCreate())\n"
        "    reader = spark.read.format('paimon')" + option + "\n"
        f"    df = reader.load(TABLE){limit}\n"
        "    return pa.Table.from_pandas(df.toPandas())\n"
    )
