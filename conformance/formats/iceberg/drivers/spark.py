"""Iceberg through iceberg-spark-runtime: reads by metadata file, writes through a Hadoop catalog.

* Reads load the current metadata file (``facts.metadata_location``) as a path, so tables of any
  writer and either naming scheme (``v<N>.metadata.json`` or ``<NNNNN>-<uuid>``) load without a
  catalog; the kit's version/timestamp/ref resolve to a snapshot id through
  ``facts.snapshot_id_for`` (the numbering is the kit's, not Spark's) and Spark reads that
  snapshot (``snapshot-id`` option).
* Writes go through a Hadoop catalog registered at run time per warehouse (the table's
  grandparent directory), so a table lands exactly at ``TableRef.uri`` in the file-system layout
  (``metadata/v<N>.metadata.json`` + ``version-hint.text``). Each step is the SQL a Spark user
  types (CREATE TABLE ... USING iceberg, ALTER TABLE ... ADD PARTITION FIELD / CREATE TAG,
  CALL <catalog>.system.expire_snapshots / rewrite_data_files, DELETE/UPDATE) or a
  DataFrameWriterV2 append/overwrite. A Hadoop catalog commits by renaming the metadata file,
  which is atomic on local disk but not on S3: fine for the kit's one writer per table, not for
  concurrent writers on MinIO.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Mapping, Sequence
from urllib.parse import urlparse

import pyarrow as pa

from conformance.engines.base import FormatSupport
from conformance.engines.spark import errors, s3, session
from conformance.engines.spark.sql import (
    dataframe,
    ms_of,
    quote_ident,
    spark_path,
    sql_string,
    sql_type,
    to_arrow,
)
from conformance.formats.iceberg import facts as F
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

# iceberg-spark-runtime per Spark line (Maven Central): 1.11.0 is its last release for Spark 4.0;
# 1.12.0 for Spark 3.5.
RUNTIMES = {
    "4.0": "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.11.0",
    "3.5": "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0",
}
SESSION_CONF = {"spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"}

# The steps the Iceberg side runs (Raw is the reference writer's alone).
WRITE_STEPS = frozenset(
    {"Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddColumn", "RenameColumn", "DropColumn",
     "ChangeColumnType", "MoveColumn", "SetPartitioning", "CreateRef", "ExpireSnapshots", "Optimize"}
)



def read_gaps(line: str) -> dict[str, str]:
    """What iceberg-spark-runtime cannot read on Spark ``line``, measured (the same four gaps on both
    pinned lines: 1.11.0 on Spark 4.0, 1.12.0 on Spark 3.5; see conformance/suites/spark/test_spark_iceberg.py).
    Keys are the case feature names of conformance/formats/iceberg/facts.py."""
    runtime = f"iceberg-spark {RUNTIMES[line].rsplit(':', 1)[1]}"
    return {
        "timestamp-ns": f"Spark {line} has no nanosecond timestamp type (Iceberg v3 timestamp_ns, timestamptz_ns)",
        "time": f"{runtime} maps no Spark type to Iceberg's time ('Spark does not support time fields')",
        "geo-types": f"{runtime} has no Spark type for geometry or geography",
        "date-to-timestamp-promotion": f"Iceberg-Java in {runtime} allows only int->long, float->double and decimal "
                                       "widening (not v3's date->timestamp); its reader fails on a table promoted by "
                                       "another writer",
    }


# What Spark's Iceberg writer cannot do although Spark reads such tables (so these are not read
# gaps); the steps raise ``Unsupported`` with these facts, measured on both pinned lines.
WRITE_GAPS: Mapping[str, str] = {
    "initial-default": "iceberg-spark 1.11.0 and 1.12.0 refuse ALTER TABLE ADD COLUMN ... DEFAULT ('setting default "
                       "values in Spark is currently unsupported')",
    "void-transform": "Spark's partition DDL has no void transform",
    "date-to-timestamp-promotion": "ALTER COLUMN ... TYPE TIMESTAMP: 'Cannot change column type: date -> timestamp'",
    "equality-deletes": "Spark's DELETE/UPDATE/MERGE write position deletes, DVs or rewrite files, never equality deletes",
    "uuid": "Spark has no UUID type (Iceberg-Spark reads uuid as string; CREATE TABLE cannot declare one)",
    "unknown": "Spark DDL cannot declare a column of Iceberg v3's unknown type",
}


# Iceberg's Java exceptions carry no error class: match the exception names and messages of
# iceberg-core / iceberg-spark 1.11.0 instead.
_UNSUPPORTED_TEXT = (
    "Cannot read unsupported version",  # format-version newer than the library (ICEBERG-META-004)
    "Cannot change column type",  # a promotion Iceberg-Java does not allow
    "NOT_SUPPORTED_CHANGE_COLUMN",  # ... or Spark's analyzer refuses first (string -> bigint)
    "Incompatible change: cannot add required column",
    "java.lang.UnsupportedOperationException",
    "Unsupported type",
    "Cannot convert unknown type",
    "Cannot convert unsupported type",  # e.g. timestamp_ns on a read (Spark 4.0 has no such type)
    "Spark does not support time fields",  # Iceberg's time type has no Spark type
    "setting default values in Spark is currently unsupported",  # ADD COLUMN ... DEFAULT
)
_INVALID_TEXT = (
    "org.apache.iceberg.exceptions.NoSuchTableException",
    "org.apache.iceberg.exceptions.NotFoundException",
    "java.io.FileNotFoundException",
    "org.apache.iceberg.exceptions.RuntimeIOException",
    "com.fasterxml.jackson.core.JsonParseException",
    "Cannot parse missing",
    "Cannot find snapshot with ID",
    "Cannot find a snapshot older than",
    "Cannot find source column",
    "Cannot find field",
    "Cannot find schema with current-schema-id",
    "PATH_NOT_FOUND",  # Spark's own condition: no table there at all
)
# On a read every validation failure means the table is broken; on a write it is the writer
# refusing an operation, which stays a plain engine error.
_READ_INVALID_TEXT = (
    "org.apache.iceberg.exceptions.ValidationException",
    "java.lang.IllegalArgumentException",
    "java.lang.IllegalStateException",
    # PySpark re-raises these two as its own classes of the same names, whose text drops "java.lang."
    "IllegalArgumentException",
    "IllegalStateException",
)


def iceberg_path(uri: str) -> str:
    """The location as Spark's Iceberg side uses it: ``s3://`` (not ``s3a://``) for S3.

    Iceberg stores absolute locations in its metadata, and every other reader of the table must
    resolve them: ``s3://`` is the scheme they all know, so the Hadoop ``s3`` scheme is mapped to
    S3AFileSystem (``_configure_s3``) and Spark writes ``s3://`` locations.
    """
    parsed = urlparse(uri)
    if parsed.scheme in ("s3", "s3a"):
        return "s3://" + uri.split("://", 1)[1]
    return spark_path(uri)




# Spark DDL names of the spec's transforms (Spark's partition transforms are plural).
_SPARK_TRANSFORM = {"year": "years", "month": "months", "day": "days", "hour": "hours"}


def iceberg_partition_sql(expr: str) -> str:
    """A contract partition expression (``"bucket(16, id)"``) as Spark's DDL writes it.

    ``void`` has no Spark DDL (Spark3Util knows identity/bucket/truncate/years/months/days/hours),
    so it is ``Unsupported``.
    """
    try:
        transform, column, param = parse_partition_expr(expr)
    except ValueError as exc:
        raise Unsupported(str(exc), feature="partition-transform") from None
    col = quote_ident(column)
    if transform == "identity":
        return col
    if transform in ("bucket", "truncate"):
        return f"{transform}({param}, {col})"
    if transform in _SPARK_TRANSFORM:
        return f"{_SPARK_TRANSFORM[transform]}({col})"
    raise Unsupported(f"Spark's DDL has no {transform} partition transform ({expr!r})", feature=f"{transform}-transform")


def _same_partition_expr(a: str, b: str) -> bool:
    try:
        return parse_partition_expr(a) == parse_partition_expr(b)
    except ValueError:
        return a == b


def iceberg_format_version(step: Create) -> int:
    """The format version a Create asks for (``properties["format-version"]``, default 2)."""
    raw = str(step.properties.get("format-version", "2"))
    try:
        return int(raw)
    except ValueError:
        raise Unsupported(f"format-version {raw!r} is not a number", feature="format-version") from None


def _iceberg_column_sql(f: pa.Field) -> str:
    t = f.type
    if pa.types.is_timestamp(t) and t.unit == "ns":
        raise Unsupported(f"column {f.name!r}: Spark has no nanosecond timestamp type (Iceberg v3 timestamp_ns, "
                          "timestamptz_ns)", feature="timestamp-ns")
    return f"{quote_ident(f.name)} {sql_type(t)}{'' if f.nullable else ' NOT NULL'}"


INITIAL_DEFAULT = b"iceberg.initial-default"
WRITE_DEFAULT = b"iceberg.write-default"


def _default_literal(f: pa.Field, raw: bytes) -> str:
    """A JSON single-value default (Appendix D) of a primitive column as a Spark SQL literal."""
    value = json.loads(raw)
    t = f.type
    if value is None:
        return "NULL"
    if pa.types.is_boolean(t) and isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if (pa.types.is_integer(t) or pa.types.is_floating(t)) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"CAST({value!r} AS {sql_type(t)})"
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and isinstance(value, str):
        return sql_string(value)
    if pa.types.is_decimal(t) and isinstance(value, str):
        return f"CAST({sql_string(value)} AS {sql_type(t)})"
    if pa.types.is_date(t) and isinstance(value, str):
        return f"DATE {sql_string(value)}"
    raise Unsupported(f"column {f.name!r}: no Spark SQL literal for the default {raw.decode(errors='replace')} of "
                      f"type {t}", feature="initial-default")


def iceberg_add_column_sql(ident: str, f: pa.Field) -> str:
    """ALTER TABLE ... ADD COLUMNS for an added field, with ``DEFAULT`` when the field carries
    Iceberg defaults in its Arrow metadata (what a Spark user types for a v3 initial-default).

    Spark's DEFAULT sets both defaults at once, so a write-default other than the initial-default
    cannot be asked for. Iceberg-Spark 1.11 refuses DEFAULT on ADD COLUMN ("setting default values
    in Spark is currently unsupported"): that refusal surfaces as ``Unsupported`` instead of a
    column whose default is silently null.
    """
    meta = f.metadata or {}
    sql = _iceberg_column_sql(f)
    initial, write = meta.get(INITIAL_DEFAULT), meta.get(WRITE_DEFAULT)
    if initial is not None or write is not None:
        if initial is not None and write is not None and json.loads(initial) != json.loads(write):
            raise Unsupported(f"column {f.name!r}: Spark's DEFAULT sets one value for both initial-default and "
                              "write-default", feature="write-default")
        literal = _default_literal(f, initial if initial is not None else write)
        if literal != "NULL":
            sql += f" DEFAULT {literal}"
    return f"ALTER TABLE {ident} ADD COLUMNS ({sql})"


def iceberg_create_sql(ident: str, step: Create) -> str:
    """The CREATE TABLE statement a Spark user writes for an Iceberg ``Create`` step."""
    if step.features:
        raise Unsupported(f"Iceberg tables have no table features to enable ({', '.join(step.features)})",
                          feature=step.features[0])
    cols = ", ".join(_iceberg_column_sql(f) for f in step.schema)
    props = dict(step.properties)
    props["format-version"] = str(iceberg_format_version(step))  # explicit: never the library's default
    sql = f"CREATE TABLE {ident} ({cols}) USING iceberg"
    if step.partition_by:
        sql += f" PARTITIONED BY ({', '.join(iceberg_partition_sql(e) for e in step.partition_by)})"
    sql += " TBLPROPERTIES (" + ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in props.items()) + ")"
    return sql


def hadoop_catalog_location(uri: str) -> tuple[str, str, str]:
    """``(warehouse, namespace, name)`` of the Hadoop-catalog table that lives at ``uri``.

    A Hadoop catalog puts table ``ns.name`` at ``<warehouse>/ns/name``: the warehouse is the
    table's grandparent directory, as a Spark (Hadoop) path.
    """
    path = iceberg_path(uri).rstrip("/")
    scheme, rest = path.split("://", 1)
    parts = rest.split("/")
    # s3a://bucket/ns/name needs the bucket plus two levels; file:///ns/name the root plus two.
    minimum = 3
    if len(parts) < minimum or not parts[-1] or not parts[-2]:
        raise Unsupported(f"a Hadoop catalog needs a table location <warehouse>/<namespace>/<name>, got {uri!r}",
                          feature="hadoop-catalog")
    warehouse = f"{scheme}://" + "/".join(parts[:-2])
    if scheme == "file" and warehouse == "file://":
        warehouse = "file:///"
    return warehouse, parts[-2], parts[-1]


def set_partitioning_sql(ident: str, current: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """The ALTER TABLE statements that turn the default spec ``current`` into ``wanted``.

    Iceberg keeps the remaining fields in place and appends added ones, so when the kept fields
    already lead ``wanted`` in its order, drop the others and add the new ones; otherwise drop
    every field and add ``wanted`` in order (v2+ reuses the old field ids, ICEBERG-PART-009).
    Nothing when the spec is already ``wanted`` (an equivalent spec is never re-added, PART-008).
    """

    def index(expr: str, exprs: Sequence[str]) -> int:
        return next((i for i, e in enumerate(exprs) if _same_partition_expr(e, expr)), -1)

    kept = [e for e in current if index(e, wanted) >= 0]
    if len(kept) == len(current) == len(wanted) and all(_same_partition_expr(a, b) for a, b in zip(current, wanted)):
        return []
    in_order = all(_same_partition_expr(k, w) for k, w in zip(kept, wanted))
    drop = [e for e in current if index(e, kept) < 0] if in_order else list(current)
    add = [w for w in wanted if index(w, kept) < 0] if in_order else list(wanted)
    out = [f"ALTER TABLE {ident} DROP PARTITION FIELD {iceberg_partition_sql(e)}" for e in drop]
    out += [f"ALTER TABLE {ident} ADD PARTITION FIELD {iceberg_partition_sql(e)}" for e in add]
    return out


def _iceberg_catalog(spark, table: TableRef) -> tuple[str, str]:
    """``(catalog, "ns"."name")``: the Hadoop catalog whose warehouse holds ``table``, registered
    in the session on first use (one per warehouse and S3 endpoint)."""
    import hashlib

    warehouse, namespace, name = hadoop_catalog_location(table.uri)
    bucket = urlparse(table.uri).netloc if urlparse(table.uri).scheme in ("s3", "s3a") else ""
    endpoint = s3.configured_endpoint(bucket)  # endpoint, key id: no secret
    catalog = "lakeconf_iceberg_" + hashlib.sha256(repr((warehouse, endpoint)).encode()).hexdigest()[:12]
    catalogs = session.state("iceberg-catalogs", set)
    with session.state_lock:
        _register_catalog(spark, catalog, warehouse, catalogs)
    return catalog, f"{quote_ident(namespace)}.{quote_ident(name)}"


def _register_catalog(spark, catalog: str, warehouse: str, catalogs: set) -> None:
    if catalog not in catalogs:
        prefix = f"spark.sql.catalog.{catalog}"
        spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        spark.conf.set(prefix + ".type", "hadoop")
        spark.conf.set(prefix + ".warehouse", warehouse)
        # Other engines write the same tables between Spark's steps: never serve a cached table.
        spark.conf.set(prefix + ".cache-enabled", "false")
        catalogs.add(catalog)


def _java_table_at(spark, location: str):
    """Iceberg-Java's ``Table`` of one metadata file (read-only ``StaticTableOperations``)."""
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    return spark.sparkContext._jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(location)


def _java_table(spark, ident: str):
    """Iceberg-Java's ``Table`` behind a catalog identifier (what Spark's DDL just changed)."""
    jvm = spark.sparkContext._jvm
    return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, ident)


def _read_iceberg(spark, table: TableRef, *, at, timestamp, ref, columns) -> pa.Table:
    """Spark reads the table's current metadata file; the kit's version numbers go through
    ``F.snapshot_id_for`` (they are the kit's, e.g. sequence numbers), timestamps
    and refs through Spark's own options (``as-of-timestamp``, ``branch``/``tag``)."""
    try:
        reader = spark.read.format("iceberg")
        empty = False
        if at is not None:
            chosen = F.selection(table, at=at)
            location = iceberg_path(chosen.metadata_location)
            if chosen.snapshot_id is None:
                # Version 0: the table before its first snapshot. ``selection`` names the last
                # metadata file of that time when the log reaches back, so Spark derives the
                # empty table's schema itself; limit(0) covers the current file otherwise.
                empty = True
            else:
                reader = reader.option("snapshot-id", str(chosen.snapshot_id))
        else:
            location = iceberg_path(F.metadata_location(table))
        if timestamp is not None:
            reader = reader.option("as-of-timestamp", str(ms_of(timestamp)))
        elif ref is not None:
            java_ref = _java_table_at(spark, location).refs().get(ref)
            if java_ref is None:
                raise InvalidTable(f"spark: the table has no branch or tag named {ref!r}", path=table.uri)
            reader = reader.option("branch" if java_ref.isBranch() else "tag", ref)
        df = reader.load(location)
        if empty:
            df = df.limit(0)
        if columns:
            df = df.select(*[df[quote_ident(c)] for c in columns])
        return to_arrow(df)
    except Exception as exc:
        raise translate(exc, table.uri, reading=True) from None


def _describe_iceberg(spark, table: TableRef, *, at, timestamp, ref) -> dict:
    """``iceberg_facts`` keys as Iceberg-Java (inside Spark) parses the table: format version,
    default partition spec, schema id and operation of the snapshot read, properties, refs."""
    try:
        location = iceberg_path(F.metadata_location(table))
        jtable = _java_table_at(spark, location)
        md = jtable.operations().current()
        if at is not None:
            snapshot_id = F.snapshot_id_for(table, at=at)
        elif timestamp is not None:
            util = spark.sparkContext._jvm.org.apache.iceberg.util.SnapshotUtil
            snapshot_id = util.snapshotIdAsOfTime(jtable, ms_of(timestamp))
        elif ref is not None:
            java_ref = md.ref(ref)
            if java_ref is None:
                raise InvalidTable(f"spark: the table has no branch or tag named {ref!r}", path=table.uri)
            snapshot_id = java_ref.snapshotId()
        else:
            current = md.currentSnapshot()
            snapshot_id = current.snapshotId() if current is not None else None
        snapshot = md.snapshot(snapshot_id) if snapshot_id is not None else None
        schema = md.schema()
        spec = [
            F.partition_expression(str(f.transform()), schema.findColumnName(f.sourceId()) or str(f.sourceId()))
            for f in md.spec().fields()
        ]
        # Latest: the schema a latest read uses (current); a selected snapshot: its own.
        selected = at is not None or timestamp is not None or ref is not None
        schema_id = snapshot.schemaId() if selected and snapshot is not None else None
        return F.facts(
            format_version=int(md.formatVersion()),
            partition_spec=spec,
            schema_id=int(schema_id if schema_id is not None else md.currentSchemaId()),
            properties={str(k): str(v) for k, v in md.properties().items()},
            refs={str(name): ("branch" if r.isBranch() else "tag") for name, r in md.refs().items()},
            operation=str(snapshot.operation()) if snapshot is not None and snapshot.operation() else None,
        )
    except Exception as exc:
        raise translate(exc, table.uri, reading=True) from None


def _write_iceberg(spark, table: TableRef, steps: Sequence[Step]) -> None:
    catalog, inner = _iceberg_catalog(spark, table)
    for step in steps:
        try:
            _run_iceberg_step(spark, table, catalog, inner, step)
        except LakeconfError:
            raise
        except Exception as exc:
            raise translate(exc, f"{table.uri} ({type(step).__name__})") from None


def _iceberg_dataframe(spark, rows: pa.Table, ident: str):
    """``rows`` as a DataFrame in the table's column order and types; columns the rows lack are
    null (a Spark user's INSERT names them as NULL), columns the table lacks are kept so that
    Spark refuses them."""
    from pyspark.sql import functions as SF

    df = dataframe(spark, rows)
    target = spark.table(ident).schema
    have = set(df.columns)
    cols = []
    for f in target.fields:
        col = df[quote_ident(f.name)] if f.name in have else SF.lit(None)
        cols.append(col.cast(f.dataType).alias(f.name))
    known = {f.name for f in target.fields}
    cols += [df[quote_ident(c)] for c in df.columns if c not in known]
    return df.select(*cols)


def _run_iceberg_step(spark, table: TableRef, catalog: str, inner: str, step: Step) -> None:
    ident = f"{catalog}.{inner}"
    if isinstance(step, Create):
        spark.sql(iceberg_create_sql(ident, step))
    elif isinstance(step, Append):
        df = _iceberg_dataframe(spark, step.rows, ident)
        df = df.repartition(step.files) if step.files > 1 else df.coalesce(1)
        target = ident if step.branch is None else f"{ident}.{quote_ident('branch_' + step.branch)}"
        # No shuffle by partition: the files= split is the DataFrame's (as for Delta); the
        # fanout writer accepts rows of several partitions per task.
        df.writeTo(target).option("distribution-mode", "none").option("fanout-enabled", "true").append()
    elif isinstance(step, Overwrite):
        _iceberg_overwrite(spark, ident, step)
    elif isinstance(step, Delete):
        mode = _iceberg_delete_mode(spark, ident, step.how)
        with _iceberg_row_level_mode(spark, ident, "write.delete.mode", mode):
            spark.sql(f"DELETE FROM {ident} WHERE {step.where}")
    elif isinstance(step, Update):
        sets = ", ".join(f"{quote_ident(c)} = {e}" for c, e in step.set.items())
        spark.sql(f"UPDATE {ident} SET {sets} WHERE {step.where}")
    elif isinstance(step, SetProperties):
        props = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in step.properties.items())
        spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({props})")
    elif isinstance(step, AddColumn):
        spark.sql(iceberg_add_column_sql(ident, step.field))
    elif isinstance(step, RenameColumn):
        spark.sql(f"ALTER TABLE {ident} RENAME COLUMN {quote_ident(step.old)} TO {quote_ident(step.new)}")
    elif isinstance(step, DropColumn):
        spark.sql(f"ALTER TABLE {ident} DROP COLUMN {quote_ident(step.name)}")
    elif isinstance(step, ChangeColumnType):
        new_type = _iceberg_column_sql(pa.field(step.name, step.type)).split(" ", 1)[1]
        spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {quote_ident(step.name)} TYPE {new_type}")
    elif isinstance(step, MoveColumn):
        where = "FIRST" if step.after is None else f"AFTER {quote_ident(step.after)}"
        spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {quote_ident(step.name)} {where}")
    elif isinstance(step, SetPartitioning):
        for statement in set_partitioning_sql(ident, _iceberg_spec(spark, ident), step.partition_by):
            spark.sql(statement)
    elif isinstance(step, CreateRef):
        _iceberg_create_ref(spark, table, ident, step)
    elif isinstance(step, ExpireSnapshots):
        if step.retain_last < 1:
            raise Unsupported("Iceberg keeps at least the current snapshot (retain_last >= 1)", feature="retain_last")
        # older_than just ahead of now: every snapshot is old enough, retain_last and the refs decide.
        cutoff = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None) + _dt.timedelta(seconds=1)
        spark.sql(
            f"CALL {catalog}.system.expire_snapshots(table => {sql_string(inner)}, "
            f"older_than => TIMESTAMP {sql_string(cutoff.isoformat(sep=' ', timespec='milliseconds'))}, "
            f"retain_last => {int(step.retain_last)})"
        ).collect()
    elif isinstance(step, Optimize):
        # rewrite-all: the default planner skips groups of fewer than 5 files, i.e. every test table.
        spark.sql(
            f"CALL {catalog}.system.rewrite_data_files(table => {sql_string(inner)}, "
            "options => map('rewrite-all', 'true'))"
        ).collect()
    else:  # pragma: no cover - write() filtered these
        raise Unsupported(f"spark cannot run a {type(step).__name__} step on iceberg tables")


def _iceberg_spec(spark, ident: str) -> list[str]:
    """The default partition spec as contract expressions (void fields left out: they partition nothing)."""
    jtable = _java_table(spark, ident)
    schema = jtable.schema()
    out = []
    for f in jtable.spec().fields():
        transform = str(f.transform())
        if transform != "void":
            out.append(F.partition_expression(transform, schema.findColumnName(f.sourceId())))
    return out


def _iceberg_overwrite(spark, ident: str, step: Overwrite) -> None:
    """Replace every row (an ``overwrite`` snapshot whose parent is the current one). A new
    schema is reached first by schema evolution, as a Spark user keeps a table's history:
    partition fields of dropped columns go, then the columns; new columns are added, changed
    types promoted (Iceberg refuses what is no promotion). REPLACE TABLE would start a new
    lineage, losing the kit's versions before it."""
    from pyspark.sql import functions as SF

    current = {f.name: f for f in spark.table(ident).schema.fields}
    incoming = dataframe(spark, step.rows.slice(0, 0)).schema
    wanted = {f.name: f for f in incoming.fields}
    dropped = [name for name in current if name not in wanted]
    if dropped:
        spec = _iceberg_spec(spark, ident)
        keep = [e for e in spec if parse_partition_expr(e)[1] not in dropped]
        for statement in set_partitioning_sql(ident, spec, keep):
            spark.sql(statement)
        spark.sql(f"ALTER TABLE {ident} DROP COLUMNS ({', '.join(quote_ident(n) for n in dropped)})")
    for field in step.rows.schema:
        if field.name not in current:
            nullable = pa.field(field.name, field.type)  # an added column is optional (EVOL-009)
            spark.sql(f"ALTER TABLE {ident} ADD COLUMNS ({_iceberg_column_sql(nullable)})")
        elif current[field.name].dataType != wanted[field.name].dataType:
            new_type = _iceberg_column_sql(pa.field(field.name, field.type)).split(" ", 1)[1]
            spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {quote_ident(field.name)} TYPE {new_type}")
    df = _iceberg_dataframe(spark, step.rows, ident).coalesce(1)
    df.writeTo(ident).option("distribution-mode", "none").option("fanout-enabled", "true").overwrite(SF.lit(True))


def _iceberg_delete_mode(spark, ident: str, how: str | None) -> str | None:
    """The ``write.delete.mode`` a Delete's ``how`` needs (``None``: the table's own setting)."""
    if how is None:
        return None
    if how == "copy-on-write":
        return "copy-on-write"
    version = int(_java_table(spark, ident).operations().current().formatVersion())
    if how == "position-deletes":
        if version != 2:
            raise Unsupported(
                f"position delete files exist only in v2 tables (v{version}: v1 has no row-level deletes, v3 "
                "must use deletion vectors)", feature="position-deletes")
        return "merge-on-read"
    if how == "deletion-vectors":
        if version < 3:
            raise Unsupported(f"deletion vectors need a v3 table (this is v{version})", feature="deletion-vectors")
        return "merge-on-read"
    if how == "equality-deletes":
        raise Unsupported("Spark's DELETE never writes equality deletes (it writes position deletes, DVs or "
                          "rewrites files)", feature="equality-deletes")
    raise Unsupported(f"unknown delete mechanism {how!r}", feature=str(how))


class _NoChange:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _iceberg_row_level_mode(spark, ident: str, key: str, mode: str | None):
    """Run a row-level command under ``key = mode``. Spark takes the mode from the table
    property only, so a different one is set for the command and put back afterwards (two
    metadata-only commits; the table's history of snapshots is unchanged)."""
    import contextlib

    if mode is None:
        return _NoChange()
    props = _java_table(spark, ident).properties()
    previous = props.get(key)
    if (previous or "copy-on-write") == mode:
        return _NoChange()

    @contextlib.contextmanager
    def scoped():
        spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({sql_string(key)} = {sql_string(mode)})")
        try:
            yield
        finally:
            if previous is None:
                spark.sql(f"ALTER TABLE {ident} UNSET TBLPROPERTIES ({sql_string(key)})")
            else:
                spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({sql_string(key)} = {sql_string(previous)})")

    return scoped()


def _iceberg_create_ref(spark, table: TableRef, ident: str, step: CreateRef) -> None:
    if step.kind not in ("branch", "tag"):
        raise Unsupported(f"unknown ref kind {step.kind!r}", feature=str(step.kind))
    sql = f"ALTER TABLE {ident} CREATE {step.kind.upper()} {quote_ident(step.name)}"
    if step.version is not None:
        snapshot_id = F.snapshot_id_for(table, at=step.version)
        if snapshot_id is None:
            raise Unsupported(f"version {step.version} has no snapshot for a {step.kind} to point at",
                              feature=f"{step.kind}-on-empty-table")
        sql += f" AS OF VERSION {int(snapshot_id)}"
    spark.sql(sql)


def support(engine: Any) -> FormatSupport:
    """Every feature but the measured gaps; Spark writes through its public API only."""
    return FormatSupport(write_steps=WRITE_STEPS, gaps=read_gaps(engine.line.name))


ERRORS = errors.ErrorPatterns(
    # PySpark turns java.lang.UnsupportedOperationException into its own class of that name,
    # whose text no longer names the Java class.
    unsupported=_UNSUPPORTED_TEXT,
    unsupported_types=("UnsupportedOperationException",),
    invalid=_INVALID_TEXT,
    invalid_on_read=_READ_INVALID_TEXT,
)


def translate(exc: BaseException, where: str, *, reading: bool = False) -> BaseException:
    """An Iceberg-Spark exception as the kit's error kinds."""
    return errors.translate(exc, where=where, patterns=ERRORS, reading=reading)


def read(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    return _read_iceberg(engine.session(table), table, at=at, timestamp=timestamp, ref=ref, columns=columns)


def describe(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None) -> dict:
    return _describe_iceberg(engine.session(table), table, at=at, timestamp=timestamp, ref=ref)


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    for step in steps:
        if type(step).__name__ not in WRITE_STEPS:
            raise Unsupported(
                f"spark cannot run a {type(step).__name__} step on iceberg tables"
                + (f" ({step.description})" if hasattr(step, "description") else ""),
                feature=type(step).__name__,
            )
    _write_iceberg(engine.session(table), table, steps)


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through PySpark with iceberg-spark-runtime (``lakeconf findings export``)."""
    return ("def read():\n" + F.reproduction_prelude(table, at)
            + "    from pyspark.sql import SparkSession\n"
            "    spark = (SparkSession.builder.master('local[1]')\n"
            f"             .config('spark.jars.packages', {RUNTIMES[engine.line.name]!r})\n"
            + "".join(f"             .config({k!r}, {v!r})\n" for k, v in SESSION_CONF.items())
            + "             .getOrCreate())\n"
            "    reader = spark.read.format('iceberg')\n"
            "    if SNAPSHOT is not None:\n"
            "        reader = reader.option('snapshot-id', SNAPSHOT)\n"
            "    return reader.load(META).toArrow()\n")
