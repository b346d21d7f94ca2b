"""Delta through delta-spark: reads with ``spark.read.format("delta")``, writes what a Spark user types.

Writes map the harness steps to ``CREATE TABLE ... USING delta`` with TBLPROPERTIES, DataFrame
appends and overwrites, ``DELETE``/``UPDATE``/``ALTER TABLE``/``OPTIMIZE``, and checkpoints
through delta-spark's own ``DeltaLog.checkpoint()``. ``describe`` has no time travel
(``DESCRIBE DETAIL``): older versions are checked by their rows only.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pyarrow as pa

from conformance.engines.base import REF_TRAVEL, FormatSupport
from conformance.engines.spark import errors
from conformance.engines.spark.sql import (
    dataframe,
    quote_ident,
    select_columns,
    spark_path,
    sql_string,
    sql_type,
    timestamp_literal,
    to_arrow,
)
from conformance.formats.delta.steps import Checkpoint
from conformance.model import (
    AddColumn,
    AddConstraint,
    Append,
    Create,
    Delete,
    DropColumn,
    Optimize,
    Overwrite,
    RenameColumn,
    SetProperties,
    Step,
    TableRef,
    Update,
)

# delta-spark per Spark line (Maven Central): 4.4.0 is built against Spark 4.0.1; 3.3.2 is the
# last release for Spark 3.5.
RUNTIMES = {
    "4.0": "io.delta:delta-spark_4.0_2.13:4.4.0",
    "3.5": "io.delta:delta-spark_2.12:3.3.2",
}
SESSION_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Files the harness compares must not depend on Spark's small-file heuristics.
    "spark.databricks.delta.optimizeWrite.enabled": "false",
    "spark.databricks.delta.autoCompact.enabled": "false",
    "spark.databricks.delta.retentionDurationCheck.enabled": "false",
    # Small test tables: state reconstruction over 50 partitions (the default) costs seconds a commit,
    # and one partition reads an old version in 0.5 s instead of 0.8 s with two (measured, local[2]).
    "spark.databricks.delta.snapshotPartitions": "1",
}

# delta-spark caches a DeltaLog (with its snapshots) per table path for an hour, up to 10,000 of
# them; a run reads thousands of small tables once or twice each, so a small cache keeps the heap
# flat (the property is read when the DeltaLog class loads).
JAVA_OPTIONS = ("-Ddelta.log.cacheSize=64",)

WRITE_STEPS = frozenset(
    {"Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddConstraint", "AddColumn",
     "RenameColumn", "DropColumn", "Optimize", "Checkpoint"}
)

# Table features a CREATE TABLE can ask for, and the property that turns each one on the way a
# Spark user would (``delta.feature.<name> = supported`` alone only lists the feature).
FEATURE_PROPERTIES: Mapping[str, Mapping[str, str]] = {
    "deletionVectors": {"delta.enableDeletionVectors": "true"},
    "columnMapping": {"delta.columnMapping.mode": "name"},
    "changeDataFeed": {"delta.enableChangeDataFeed": "true"},
    "appendOnly": {"delta.appendOnly": "true"},
    "v2Checkpoint": {"delta.checkpointPolicy": "v2"},
    "inCommitTimestamp": {"delta.enableInCommitTimestamps": "true"},
    "rowTracking": {"delta.enableRowTracking": "true"},
    "typeWidening": {"delta.enableTypeWidening": "true"},
}

# Delta error classes (``getCondition()``) that mean "valid table, feature not implemented" and
# "the table is broken"; anything else stays an engine error.
ERRORS = errors.ErrorPatterns(
    unsupported=(
        "DELTA_UNSUPPORTED_FEATURES_FOR_READ",
        "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE",
        "DELTA_INVALID_TABLE_VALUE",
        "DELTA_UNSUPPORTED_READER_TABLE_FEATURES_IN_TABLE",
        "DELTA_INVALID_PROTOCOL_VERSION",
        "DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT",
        "is not supported for this Delta version",  # an unknown delta.columnMapping.mode
        "DELTA_NESTED_NOT_NULL_CONSTRAINT",  # a writer limit: required fields inside arrays and maps
    ),
    invalid=(
        "DELTA_VERSIONS_NOT_CONTIGUOUS",
        "DELTA_STATE_RECOVER_ERROR",
        "DELTA_MISSING_PART_FILES",
        "DELTA_EMPTY_DIRECTORY",
        "DELTA_LOG_FILE_NOT_FOUND",
        "DELTA_FILE_NOT_FOUND_DETAILED",
        "DELTA_MISSING_DELTA_TABLE",
        "DELTA_TABLE_NOT_FOUND",
        "DELTA_INVALID_JSON",
        "DELTA_ACTIONS_NOT_CONTIGUOUS",
        "PATH_NOT_FOUND",  # no table there at all: the reference calls that an invalid table too
        "DELTA_VERSION_NOT_FOUND", "Cannot time travel Delta table to version",  # the log cannot rebuild it
        "DELTA_TRUNCATED_TRANSACTION_LOG",
        "DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH",
        "DELTA_CANNOT_RECONSTRUCT_PATH_FROM_URI",
        "DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE", "Mismatched minReaderVersion and readerFeatures",
        "java.io.FileNotFoundException", "SparkFileNotFoundException",  # a file the log references is missing
    ),
)


def support(engine: Any) -> FormatSupport:
    """Every feature (delta-spark's protocol check refuses what it cannot read); Spark writes through
    its public API only, so Raw steps are not offered."""
    return FormatSupport(write_steps=WRITE_STEPS)


def translate(exc: BaseException, where: str) -> BaseException:
    """A delta-spark exception as the kit's error kinds."""
    return errors.translate(exc, where=where, patterns=ERRORS)


# ----------------------------------------------------------------------------------------------
# Read
# ----------------------------------------------------------------------------------------------


def read(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    from reference_impl.errors import Unsupported

    spark = engine.session(table)
    if ref is not None:
        raise Unsupported("Delta tables have no named branches or tags", feature=REF_TRAVEL)
    try:
        reader = spark.read.format("delta")
        if at is not None:
            reader = reader.option("versionAsOf", int(at))
        elif timestamp is not None:
            reader = reader.option("timestampAsOf", timestamp_literal(timestamp))
        return to_arrow(select_columns(reader.load(spark_path(table.uri)), columns))
    except Exception as exc:
        raise translate(exc, table.uri) from None


def describe(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None) -> dict | None:
    """The Delta facts as Spark sees them (latest version only, else ``None``)."""
    from conformance.formats.delta.facts import facts

    if at is not None or timestamp is not None or ref is not None:
        # DESCRIBE DETAIL has no time travel; the rows of older versions are still checked.
        return None
    spark = engine.session(table)
    target = f"delta.{quote_ident(spark_path(table.uri))}"
    try:
        row = spark.sql(f"DESCRIBE DETAIL {target}").collect()[0].asDict()
        version = spark.sql(f"DESCRIBE HISTORY {target} LIMIT 1").collect()[0]["version"]
    except Exception as exc:
        raise translate(exc, table.uri) from None
    # tableFeatures lists reader and writer features together; facts() only unions them.
    return facts(
        version=int(version),
        min_reader=int(row.get("minReaderVersion") or 1),
        min_writer=int(row.get("minWriterVersion") or 2),
        reader_features=row.get("tableFeatures") or (),
        writer_features=(),
        partition_columns=list(row.get("partitionColumns") or []),
        configuration=dict(row.get("properties") or {}),
    )


# ----------------------------------------------------------------------------------------------
# Write
# ----------------------------------------------------------------------------------------------


def create_table_sql(path: str, step: Create) -> str:
    """The CREATE TABLE statement a Spark user would write for a ``Create`` step (protocol versions
    pinned as ``delta.minReaderVersion``/``delta.minWriterVersion`` properties, as Spark takes them)."""
    cols = ", ".join(f"{quote_ident(f.name)} {sql_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in step.schema)
    props: dict[str, str] = {}
    for feature in step.features:
        props[f"delta.feature.{feature}"] = "supported"
        for key, value in FEATURE_PROPERTIES.get(feature, {}).items():
            props.setdefault(key, value)
    props.update(step.properties)
    sql = f"CREATE TABLE delta.{quote_ident(path)} ({cols}) USING delta"
    if step.partition_by:
        sql += f" PARTITIONED BY ({', '.join(quote_ident(c) for c in step.partition_by)})"
    if props:
        sql += " TBLPROPERTIES (" + ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in props.items()) + ")"
    return sql


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    from reference_impl.errors import LakeconfError, Unsupported

    for step in steps:
        if type(step).__name__ not in WRITE_STEPS:
            raise Unsupported(
                f"spark cannot run a {type(step).__name__} step on delta tables"
                + (f" ({step.description})" if hasattr(step, "description") else ""),
                feature=type(step).__name__,
            )
    spark = engine.session(table)
    path = spark_path(table.uri)
    target = f"delta.{quote_ident(path)}"
    for step in steps:
        try:
            _run_step(spark, path, target, step)
        except LakeconfError:
            raise
        except Exception as exc:
            raise translate(exc, f"{table.uri} ({type(step).__name__})") from None


def _dataframe(spark, rows: pa.Table, path: str | None):
    """A DataFrame of ``rows``, cast to the table's column types when the table exists."""
    df = dataframe(spark, rows)
    if path is None:
        return df
    target = spark.read.format("delta").load(path).schema
    by_name = {f.name: f for f in target.fields}
    cols = []
    for name in df.columns:
        col = df[quote_ident(name)]  # a name like "a.b" is one column, not a struct field
        if name in by_name:
            col = col.cast(by_name[name].dataType)
        cols.append(col.alias(name))
    return df.select(*cols)


def _run_step(spark, path: str, target: str, step: Step) -> None:
    from reference_impl.errors import Unsupported

    if isinstance(step, Create):
        spark.sql(create_table_sql(path, step))
    elif isinstance(step, Append):
        df = _dataframe(spark, step.rows, path)
        df = df.repartition(step.files) if step.files > 1 else df.coalesce(1)
        df.write.format("delta").mode("append").save(path)
    elif isinstance(step, Overwrite):
        current = spark.read.format("delta").load(path)
        same = [f.name for f in current.schema.fields] == step.rows.column_names
        df = _dataframe(spark, step.rows, path if same else None).coalesce(1)
        writer = df.write.format("delta").mode("overwrite")
        if not same:
            parts = spark.sql(f"DESCRIBE DETAIL {target}").collect()[0]["partitionColumns"] or []
            keep = [c for c in parts if c in step.rows.column_names]
            writer = writer.option("overwriteSchema", "true")
            if keep:
                writer = writer.partitionBy(*keep)
        writer.save(path)
    elif isinstance(step, Delete):
        spark.sql(f"DELETE FROM {target} WHERE {step.where}")
    elif isinstance(step, Update):
        sets = ", ".join(f"{quote_ident(c)} = {e}" for c, e in step.set.items())
        spark.sql(f"UPDATE {target} SET {sets} WHERE {step.where}")
    elif isinstance(step, SetProperties):
        props = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in step.properties.items())
        spark.sql(f"ALTER TABLE {target} SET TBLPROPERTIES ({props})")
    elif isinstance(step, AddConstraint):
        spark.sql(f"ALTER TABLE {target} ADD CONSTRAINT {quote_ident(step.name)} CHECK ({step.expression})")
    elif isinstance(step, AddColumn):
        spark.sql(f"ALTER TABLE {target} ADD COLUMNS ({quote_ident(step.field.name)} {sql_type(step.field.type)})")
    elif isinstance(step, RenameColumn):
        spark.sql(f"ALTER TABLE {target} RENAME COLUMN {quote_ident(step.old)} TO {quote_ident(step.new)}")
    elif isinstance(step, DropColumn):
        spark.sql(f"ALTER TABLE {target} DROP COLUMN {quote_ident(step.name)}")
    elif isinstance(step, Optimize):
        spark.sql(f"OPTIMIZE {target}")
    elif isinstance(step, Checkpoint):
        _checkpoint(spark, path, step)
    else:  # pragma: no cover - write() filtered these
        raise Unsupported(f"spark cannot run a {type(step).__name__} step")


def _checkpoint(spark, path: str, step: Checkpoint) -> None:
    """Write a checkpoint of the latest version through delta-spark's own checkpoint code."""
    from reference_impl.errors import Unsupported

    detail = spark.sql(f"DESCRIBE DETAIL delta.{quote_ident(path)}").collect()[0]
    props = dict(detail["properties"] or {})
    v2 = props.get("delta.checkpointPolicy") == "v2"
    if step.kind == "v2" and not v2:
        raise Unsupported(
            "spark writes V2 checkpoints only for tables with delta.checkpointPolicy=v2 (create them with "
            "the v2Checkpoint feature)",
            feature="v2Checkpoint",
        )
    if step.kind != "v2" and v2:
        raise Unsupported("spark writes only V2 checkpoints for a table with delta.checkpointPolicy=v2",
                          feature="v2Checkpoint")
    wants_struct = "struct" in step.stats
    has_struct = props.get("delta.checkpoint.writeStatsAsStruct", "true" if v2 else "false") == "true"
    has_json = props.get("delta.checkpoint.writeStatsAsJson", "true") == "true"
    if wants_struct != has_struct or ("json" in step.stats) != has_json:
        raise Unsupported(
            "spark chooses checkpoint stats columns from the table properties "
            "delta.checkpoint.writeStatsAsJson / writeStatsAsStruct; set them at creation",
            feature="checkpoint-stats",
        )
    jvm = spark.sparkContext._jvm
    conf = spark.conf
    key = "spark.databricks.delta.checkpoint.partSize"
    previous = conf.get(key, None)
    try:
        delta_log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
        if step.kind == "multipart":
            if step.parts < 2:
                raise Unsupported("a multi-part checkpoint needs parts >= 2", feature="checkpoint-multipart")
            # Parts are cut every partSize actions of the state: count the state Delta will write
            # (live files, the tombstones it keeps, protocol, metadata, txns, domains); the number
            # of live files alone is not it (delta-spark 3.3 keeps OPTIMIZE's tombstones, 4.4 not).
            # DESCRIBE DETAIL above brought the cached snapshot up to date.
            actions = int(delta_log.unsafeVolatileSnapshot().stateDS().count())
            conf.set(key, str(max(1, -(-actions // step.parts))))
        delta_log.checkpoint()
    finally:
        if previous is None:
            conf.unset(key)
        else:
            conf.set(key, previous)


def reproduce(engine: Any, table, at=None) -> str:
    """``read()`` through PySpark with delta-spark (``lakeconf findings export``)."""
    line = engine.line.name
    option = f"\n    reader = reader.option('versionAsOf', {int(at)})" if at is not None else ""
    return (
        "def read():\n"
        "    from pyspark.sql import SparkSession\n"
        "    spark = (SparkSession.builder.master('local[1]')\n"
        f"             .config('spark.jars.packages', {RUNTIMES[line]!r})\n"
        + "".join(f"             .config({k!r}, {v!r})\n" for k, v in SESSION_CONF.items())
        + "             .getOrCreate())\n"
        "    reader = spark.read.format('delta')" + option + "\n"
        "    return reader.load(TABLE).toArrow()\n"
    )
