"""Apache Spark through PySpark with each format's Spark runtime (Delta and Iceberg; Hudi/Paimon pinned).

One SparkSession per process, started lazily on first use and reused by every ``SparkEngine``
(starting a JVM costs seconds; see ``session_stats()``). Its jars come from
``conformance.engines.versions`` through ``spark.jars.packages`` (Ivy cache in ``~/.ivy2`` or
LAKECONF_IVY_DIR; ``.ci/install-spark`` fills it ahead of time). Settings:

* LAKECONF_SPARK_MASTER (default ``local[2]``), LAKECONF_SPARK_LINE (default the newest pinned),
  LAKECONF_SPARK_FORMATS (default ``delta,iceberg``: the runtimes put on the classpath; one
  session serves both, Delta's and Iceberg's SQL extensions side by side),
  LAKECONF_SPARK_S3 (default ``1``: add hadoop-aws + AWS SDK so ``s3a://`` works).
* Spark's own log goes to a file (``SparkEngine.log_path``), WARN and above, never to the
  results; an error message carries the Java exception's first lines only.
* Object stores: an ``s3://bucket/...`` table is read as ``s3a://``; the endpoint and keys come from
  the table's storage options (delta-rs spelling) and are set per bucket
  (``fs.s3a.bucket.<bucket>.*``), so stores with different endpoints can share one session.

Writes map the harness steps to what a Spark user types: ``CREATE TABLE ... USING delta`` with
TBLPROPERTIES, DataFrame appends and overwrites, ``DELETE``/``UPDATE``/``ALTER TABLE``/``OPTIMIZE``.

Iceberg (iceberg-spark-runtime, see versions.py):
* Reads load the current metadata file (``iceberg_facts.metadata_location``) as a path, so tables
  of any writer and either naming scheme (``v<N>.metadata.json`` or ``<NNNNN>-<uuid>``) load
  without a catalog; the kit's version/timestamp/ref resolve to a snapshot id through
  ``iceberg_facts.snapshot_id_for`` (the numbering is the kit's, not Spark's) and Spark reads that
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
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Mapping, Sequence
from urllib.parse import urlparse

import pyarrow as pa

from conformance.engines import versions
from conformance.engines.base import Capabilities, Engine
from conformance.model import (
    AddColumn,
    AddConstraint,
    Append,
    ChangeColumnType,
    Checkpoint,
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
from reference_impl.storage import S3Config

WRITE_STEPS = frozenset(
    {
        "Create",
        "Append",
        "Overwrite",
        "Delete",
        "Update",
        "SetProperties",
        "AddConstraint",
        "AddColumn",
        "RenameColumn",
        "DropColumn",
        "Optimize",
        "Checkpoint",
    }
)

# The steps the Iceberg side runs (AddConstraint and Checkpoint are Delta notions; Raw is the
# reference writer's alone).
ICEBERG_WRITE_STEPS = frozenset(
    {
        "Create",
        "Append",
        "Overwrite",
        "Delete",
        "Update",
        "SetProperties",
        "AddColumn",
        "RenameColumn",
        "DropColumn",
        "ChangeColumnType",
        "MoveColumn",
        "SetPartitioning",
        "CreateRef",
        "ExpireSnapshots",
        "Optimize",
    }
)

# What iceberg-spark-runtime 1.11.0 on Spark 4.0 cannot read or write, measured (see
# conformance/suites/spark/test_spark_iceberg.py). Feature names are the spec's type names.
ICEBERG_UNSUPPORTED: Mapping[str, str] = {
    # Keys are the case feature names of conformance/engines/iceberg_facts.py.
    "timestamp-ns": "Spark 4.0 has no nanosecond timestamp type (Iceberg v3 timestamp_ns, timestamptz_ns)",
    "time": "iceberg-spark 1.11.0 maps no Spark type to Iceberg's time ('Spark does not support time fields')",
    "geo-types": "iceberg-spark 1.11.0 has no Spark type for geometry or geography",
    "date-to-timestamp-promotion": "Iceberg-Java 1.11.0 allows only int->long, float->double and decimal widening "
                                   "(not v3's date->timestamp); its reader fails on a table promoted by another writer",
}

# What Spark's Iceberg writer cannot do although Spark reads such tables (so these are not read
# gaps in ``unsupported_reasons``); the steps raise ``Unsupported`` with these facts, measured.
ICEBERG_WRITE_GAPS: Mapping[str, str] = {
    "initial-default": "iceberg-spark 1.11.0 refuses ALTER TABLE ADD COLUMN ... DEFAULT ('setting default values in "
                       "Spark is currently unsupported')",
    "void-transform": "Spark's partition DDL has no void transform",
    "date-to-timestamp-promotion": "ALTER COLUMN ... TYPE TIMESTAMP: 'Cannot change column type: date -> timestamp'",
    "equality-deletes": "Spark's DELETE/UPDATE/MERGE write position deletes, DVs or rewrite files, never equality deletes",
    "uuid": "Spark has no UUID type (Iceberg-Spark reads uuid as string; CREATE TABLE cannot declare one)",
    "unknown": "Spark DDL cannot declare a column of Iceberg v3's unknown type",
}

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
_UNSUPPORTED_CONDITIONS = (
    "DELTA_UNSUPPORTED_FEATURES_FOR_READ",
    "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE",
    "DELTA_INVALID_TABLE_VALUE",
    "DELTA_UNSUPPORTED_READER_TABLE_FEATURES_IN_TABLE",
    "DELTA_INVALID_PROTOCOL_VERSION",
    "DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT",
)
_INVALID_CONDITIONS = (
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
)

_LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss.SSS}} %p %c{{1}}: %m%n%ex
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.ivy.name = org.apache.ivy
logger.ivy.level = error
"""


# ----------------------------------------------------------------------------------------------
# The one session per process
# ----------------------------------------------------------------------------------------------


class _Session:
    """Holder of the process's SparkSession, its settings and start-up timings."""

    lock = threading.Lock()
    spark: Any = None
    line: versions.SparkLine | None = None
    formats: tuple[str, ...] = ()
    s3: bool = False
    log_dir: str | None = None
    first_start_s: float | None = None
    starts: int = 0
    configured_buckets: dict[str, tuple] = {}
    iceberg_catalogs: set[str] = set()  # Hadoop catalogs registered in this session


# The runtimes a session gets unless LAKECONF_SPARK_FORMATS says otherwise: the formats the
# adapter handles (one session serves both; the iceberg runtime adds ~48 MB to the first download).
DEFAULT_FORMATS = "delta,iceberg"


def _env_formats() -> tuple[str, ...]:
    raw = os.environ.get("LAKECONF_SPARK_FORMATS", DEFAULT_FORMATS)
    return tuple(f.strip() for f in raw.split(",") if f.strip())


def _ivy_dir() -> str:
    return os.environ.get("LAKECONF_IVY_DIR") or os.path.join(os.path.expanduser("~"), ".ivy2")


def jar_manifest_path(packages: Sequence[str]) -> str:
    """Where the resolved jar list of a package set is kept (next to the Ivy cache, keyed by the set)."""
    import hashlib

    key = hashlib.sha256(",".join(packages).encode()).hexdigest()[:16]
    return os.path.join(_ivy_dir(), f"lakeconf-{key}.jars")


def read_jar_manifest(packages: Sequence[str]) -> list[str] | None:
    """The jars resolved earlier for ``packages``, or ``None`` if unknown or any jar is gone."""
    try:
        with open(jar_manifest_path(packages)) as fh:
            jars = [line.strip() for line in fh if line.strip()]
    except OSError:
        return None
    paths = [j[len("file://") :] if j.startswith("file://") else j for j in jars]
    if not jars or not all(os.path.isfile(p) for p in paths):
        return None
    return jars


def write_jar_manifest(packages: Sequence[str], jars: Sequence[str]) -> str:
    """Record the jars Ivy resolved for ``packages`` so later sessions skip resolution (and the network)."""
    path = jar_manifest_path(packages)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as fh:
        fh.write("\n".join(jars) + "\n")
    os.replace(path + ".tmp", path)
    return path


def session_settings(
    line: versions.SparkLine,
    formats: Sequence[str],
    *,
    s3: bool,
    log_dir: str,
    master: str | None = None,
    jars: Sequence[str] | None = None,
) -> dict[str, str]:
    """Every Spark setting the kit's session uses (pure: tested without a JVM).

    ``jars``: already-resolved jar files (from the manifest .ci/install-spark writes); then no Ivy
    resolution runs at start-up, so a session starts offline.
    """
    log_conf = os.path.join(log_dir, "log4j2.properties")
    conf = {
        "spark.master": master or os.environ.get("LAKECONF_SPARK_MASTER", "local[2]"),
        "spark.app.name": "lakeconf",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.jars.ivy": _ivy_dir(),
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log_conf} -Duser.timezone=UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Files the harness compares must not depend on Spark's small-file heuristics.
        "spark.databricks.delta.optimizeWrite.enabled": "false",
        "spark.databricks.delta.autoCompact.enabled": "false",
        "spark.databricks.delta.retentionDurationCheck.enabled": "false",
        # Small test tables: state reconstruction over 50 partitions (the default) costs seconds a commit.
        "spark.databricks.delta.snapshotPartitions": "2",
    }
    if jars:
        conf["spark.jars"] = ",".join(jars)
    else:
        conf["spark.jars.packages"] = ",".join(versions.packages(line, formats, s3=s3))
    conf.update(versions.session_conf(line, formats))
    return conf


def get_session(*, line: str | None = None, formats: Sequence[str] | None = None, s3: bool | None = None):
    """The process's SparkSession, started on first call with the pinned runtimes."""
    with _Session.lock:
        if _Session.spark is not None:
            wanted = tuple(formats or ())
            missing = [f for f in wanted if f not in _Session.formats]
            if missing:
                raise Unsupported(
                    f"the Spark session was started without the {', '.join(missing)} runtime(s); "
                    "set LAKECONF_SPARK_FORMATS before the first Spark use",
                    feature=missing[0],
                )
            _Session.starts += 1
            return _Session.spark
        import pyspark
        from pyspark.sql import SparkSession

        spark_line = versions.spark_line(line) if line else versions.line_for_pyspark(pyspark.__version__)
        if spark_line is None:
            raise Unsupported(
                f"pyspark {pyspark.__version__} has no pinned Spark line in conformance/engines/versions.py "
                f"(pinned: {sorted(versions.SPARK_LINES)})"
            )
        fmts = tuple(formats or _env_formats())
        use_s3 = s3 if s3 is not None else os.environ.get("LAKECONF_SPARK_S3", "1") != "0"
        log_dir = tempfile.mkdtemp(prefix="lakeconf-spark-")
        with open(os.path.join(log_dir, "log4j2.properties"), "w") as fh:
            fh.write(_LOG4J2.format(log=os.path.join(log_dir, "spark.log")))
        began = time.monotonic()
        packages = versions.packages(spark_line, fmts, s3=use_s3)
        jars = read_jar_manifest(packages) if os.environ.get("LAKECONF_SPARK_RESOLVE") != "1" else None
        builder = SparkSession.builder
        for key, value in session_settings(spark_line, fmts, s3=use_s3, log_dir=log_dir, jars=jars).items():
            builder = builder.config(key, value)
        spark = _quietly(os.path.join(log_dir, "jvm.out"), builder.getOrCreate)
        if jars is None:
            resolved = spark.sparkContext.getConf().get("spark.jars", "")
            if resolved:
                write_jar_manifest(packages, [j for j in resolved.split(",") if j])
        spark.sparkContext.setLogLevel("ERROR")
        _Session.spark, _Session.line, _Session.formats, _Session.s3 = spark, spark_line, fmts, use_s3
        _Session.log_dir = log_dir
        _Session.first_start_s = time.monotonic() - began
        _Session.starts = 1
        _Session.configured_buckets = {}
        _Session.iceberg_catalogs = set()
        return spark


def _quietly(path: str, start):
    """Run ``start`` (which launches the JVM) with fds 1 and 2 sent to ``path``.

    The JVM inherits the descriptors it is launched with, so its own banner and SLF4J notices go
    to the log directory instead of the terminal (and the CLI's one-line output stays clean).
    """
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream is fine
            pass
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "ab") as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
        return start()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def stop_session() -> None:
    """Stop the process's SparkSession (the next use starts a new one)."""
    with _Session.lock:
        spark, _Session.spark = _Session.spark, None
        if spark is not None:
            spark.stop()
        _Session.configured_buckets = {}
        _Session.iceberg_catalogs = set()


def session_stats() -> dict[str, Any]:
    """Start-up time of the session and how often it was reused (for reports and benchmarks)."""
    return {
        "first_start_s": _Session.first_start_s,
        "uses": _Session.starts,
        "line": _Session.line.name if _Session.line else None,
        "formats": list(_Session.formats),
        "s3": _Session.s3,
    }


# ----------------------------------------------------------------------------------------------
# Locations, S3, types
# ----------------------------------------------------------------------------------------------


def spark_path(uri: str) -> str:
    """The location as Spark's Hadoop file systems want it: ``s3a://`` for S3, ``file:`` for disk."""
    parsed = urlparse(uri)
    if parsed.scheme in ("s3", "s3a"):
        return "s3a://" + uri.split("://", 1)[1]
    if parsed.scheme == "file":
        return uri
    if parsed.scheme == "" or len(parsed.scheme) == 1:
        return "file://" + os.path.abspath(uri)
    return uri


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


def s3_config_from_options(options: Mapping[str, str]) -> S3Config | None:
    """An ``S3Config`` from delta-rs-style storage options (None when they name no endpoint/keys)."""
    from conformance.storage.s3_options import config_from_options

    return config_from_options(options)


def bucket_s3a_conf(bucket: str, cfg: S3Config) -> dict[str, str]:
    """Per-bucket Hadoop settings (``fs.s3a.bucket.<bucket>.*``) for one endpoint."""
    from conformance.storage.s3_options import spark_s3a_conf

    out = {}
    for key, value in spark_s3a_conf(cfg).items():
        if key.startswith("spark.hadoop.fs.s3a.") and not key.endswith(".impl"):
            out[f"fs.s3a.bucket.{bucket}." + key[len("spark.hadoop.fs.s3a.") :]] = value
    return out


def _configure_s3(spark, table: TableRef) -> None:
    parsed = urlparse(table.uri)
    if parsed.scheme not in ("s3", "s3a"):
        return
    if not _Session.s3:
        raise Unsupported("the Spark session was started without hadoop-aws (LAKECONF_SPARK_S3=0)", feature="s3")
    cfg = s3_config_from_options(table.storage_options) or S3Config.from_env()
    bucket = parsed.netloc
    key = (cfg.endpoint_url, cfg.access_key_id, cfg.secret_access_key, cfg.region)
    if _Session.configured_buckets.get(bucket) == key:
        return
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    for name, value in bucket_s3a_conf(bucket, cfg).items():
        hconf.set(name, value)
    hconf.set("fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem")
    hconf.set("fs.s3.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem")
    jvm = spark.sparkContext._jvm
    # s3a:// for Delta, s3:// for Iceberg (see iceberg_path): one cached FileSystem per scheme.
    uris = [jvm.java.net.URI(f"{scheme}://{bucket}/") for scheme in ("s3a", "s3")]
    if bucket in _Session.configured_buckets:
        # Hadoop caches one FileSystem per bucket: a new endpoint for a known bucket needs a fresh one.
        for uri in uris:
            jvm.org.apache.hadoop.fs.FileSystem.get(uri, hconf).close()
    # Create the bucket's FileSystems now, from the session's configuration. Iceberg's catalogs
    # copy the Hadoop configuration when they start (possibly before this bucket was configured)
    # and then ask the same per-bucket cache, which ignores the configuration it is handed: the
    # first FileSystem created for a bucket is the one every reader and writer gets.
    for uri in uris:
        jvm.org.apache.hadoop.fs.FileSystem.get(uri, hconf)
    _Session.configured_buckets[bucket] = key


def _quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def spark_sql_type(t: pa.DataType) -> str:
    """The Spark SQL type name of an Arrow type (as used in CREATE TABLE / ADD COLUMNS)."""
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int8(t):
        return "TINYINT"
    if pa.types.is_int16(t):
        return "SMALLINT"
    if pa.types.is_int32(t):
        return "INT"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "STRING"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "BINARY"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz is not None else "TIMESTAMP_NTZ"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"ARRAY<{spark_sql_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{spark_sql_type(t.key_type)}, {spark_sql_type(t.item_type)}>"
    if pa.types.is_struct(t):
        fields = ", ".join(
            f"{_quote_ident(f.name)}: {spark_sql_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in t
        )
        return f"STRUCT<{fields}>"
    raise Unsupported(f"Arrow type {t} has no Spark SQL equivalent", feature=str(t))


def create_table_sql(path: str, step: Create) -> str:
    """The CREATE TABLE statement a Spark user would write for a ``Create`` step."""
    cols = ", ".join(
        f"{_quote_ident(f.name)} {spark_sql_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in step.schema
    )
    props: dict[str, str] = {}
    for feature in step.features:
        props[f"delta.feature.{feature}"] = "supported"
        for key, value in FEATURE_PROPERTIES.get(feature, {}).items():
            props.setdefault(key, value)
    if step.protocol is not None:
        props["delta.minReaderVersion"] = str(step.protocol[0])
        props["delta.minWriterVersion"] = str(step.protocol[1])
    props.update(step.properties)
    sql = f"CREATE TABLE delta.{_quote_ident(path)} ({cols}) USING delta"
    if step.partition_by:
        sql += f" PARTITIONED BY ({', '.join(_quote_ident(c) for c in step.partition_by)})"
    if props:
        sql += " TBLPROPERTIES (" + ", ".join(f"{_sql_string(k)} = {_sql_string(v)}" for k, v in props.items()) + ")"
    return sql


def _timestamp_literal(text: str) -> str:
    value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return value.isoformat(sep=" ", timespec="microseconds")


def _to_arrow(df) -> pa.Table:
    """A DataFrame's rows as Arrow without pandas (``toArrow`` on Spark 4, the Arrow collector on 3.5)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(df.schema)
    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()


def _java_condition(exc: BaseException) -> str:
    for attr in ("getCondition", "getErrorClass"):
        fn = getattr(exc, attr, None)
        if attr == "getErrorClass" and hasattr(exc, "getCondition"):
            break  # pyspark 4 deprecates getErrorClass (a FutureWarning) in favour of getCondition
        if fn is not None:
            try:
                value = fn()
            except Exception:
                value = None
            if value:
                return str(value)
    return ""


def _short(exc: BaseException, limit: int = 600) -> str:
    full = str(exc).strip()
    text = full.split("\n\tat ", 1)[0]
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("at ")]
    text = " | ".join(lines[:6])
    # A wrapper ("INTERNAL_ERROR", "Exception thrown in awaitResult") says nothing by itself: the
    # innermost Java cause names what went wrong.
    causes = [ln.strip() for ln in full.splitlines() if ln.strip().startswith("Caused by:")]
    if causes and causes[-1][len("Caused by:"):].strip() not in text:
        cause = causes[-1][:300]
        return text[: max(0, limit - len(cause) - 3)] + " | " + cause
    return text[:limit]


# Iceberg's Java exceptions carry no error class: match the exception names and messages of
# iceberg-core / iceberg-spark 1.11.0 instead.
_ICEBERG_UNSUPPORTED_TEXT = (
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
_ICEBERG_INVALID_TEXT = (
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
)
# On a read every validation failure means the table is broken; on a write it is the writer
# refusing an operation, which stays a plain engine error.
_ICEBERG_READ_INVALID_TEXT = (
    "org.apache.iceberg.exceptions.ValidationException",
    "java.lang.IllegalArgumentException",
    "java.lang.IllegalStateException",
)


def translate_error(exc: BaseException, *, where: str, fmt: str = "delta", reading: bool = False) -> BaseException:
    """Map a Spark/Delta/Iceberg exception to the kit's error kinds (unsupported, invalid table) or keep it."""
    if isinstance(exc, LakeconfError):
        return exc
    condition = _java_condition(exc)
    text = str(exc)
    message = f"spark: {_short(exc)}"
    if any(c in condition or c in text for c in _UNSUPPORTED_CONDITIONS):
        return Unsupported(message, path=where)
    if any(c in condition or c in text for c in _INVALID_CONDITIONS):
        return InvalidTable(message, path=where)
    if fmt == "iceberg":
        # PySpark turns java.lang.UnsupportedOperationException into its own class of that name,
        # whose text no longer names the Java class.
        if type(exc).__name__ == "UnsupportedOperationException" or any(c in text for c in _ICEBERG_UNSUPPORTED_TEXT):
            return Unsupported(message, path=where)
        if any(c in text for c in _ICEBERG_INVALID_TEXT) or (reading and any(c in text for c in _ICEBERG_READ_INVALID_TEXT)):
            return InvalidTable(message, path=where)
    return LakeconfError(message, path=where)


# ----------------------------------------------------------------------------------------------
# Iceberg: Hadoop catalogs, DDL, facts
# ----------------------------------------------------------------------------------------------

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
    col = _quote_ident(column)
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
        raise Unsupported(f"column {f.name!r}: {ICEBERG_UNSUPPORTED['timestamp-ns']}", feature="timestamp-ns")
    return f"{_quote_ident(f.name)} {spark_sql_type(t)}{'' if f.nullable else ' NOT NULL'}"


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
        return f"CAST({value!r} AS {spark_sql_type(t)})"
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and isinstance(value, str):
        return _sql_string(value)
    if pa.types.is_decimal(t) and isinstance(value, str):
        return f"CAST({_sql_string(value)} AS {spark_sql_type(t)})"
    if pa.types.is_date(t) and isinstance(value, str):
        return f"DATE {_sql_string(value)}"
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
    if step.protocol is not None:
        raise Unsupported("an Iceberg table has a format version (properties['format-version']), not a protocol",
                          feature="protocol")
    cols = ", ".join(_iceberg_column_sql(f) for f in step.schema)
    props = dict(step.properties)
    props["format-version"] = str(iceberg_format_version(step))  # explicit: never the library's default
    sql = f"CREATE TABLE {ident} ({cols}) USING iceberg"
    if step.partition_by:
        sql += f" PARTITIONED BY ({', '.join(iceberg_partition_sql(e) for e in step.partition_by)})"
    sql += " TBLPROPERTIES (" + ", ".join(f"{_sql_string(k)} = {_sql_string(v)}" for k, v in props.items()) + ")"
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


def _ms_of(timestamp: str) -> int:
    """Milliseconds since the epoch of an ISO timestamp (UTC when naive), rounded down: a snapshot
    committed at millisecond m is current at m.999."""
    value = _dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    delta = value - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


# ----------------------------------------------------------------------------------------------
# The adapter
# ----------------------------------------------------------------------------------------------


class SparkEngine(Engine):
    """Spark + delta-spark and iceberg-spark-runtime (Hudi/Paimon runtimes pinned, not wired)."""

    name = "spark"
    # One JVM per run: the harness keeps this engine in its own process instead of spawning an
    # isolated worker (which would start a second JVM); Java errors surface as exceptions anyway.
    in_process = True

    def __init__(self, *, line: str | None = None, formats: Sequence[str] | None = None) -> None:
        self._line_name = line
        self._formats = tuple(formats) if formats else None

    # -- identity ------------------------------------------------------------------------------

    def _line(self) -> versions.SparkLine | None:
        if self._line_name:
            return versions.spark_line(self._line_name)
        try:
            import pyspark
        except ImportError:
            return None
        return versions.line_for_pyspark(pyspark.__version__)

    def version(self) -> str:
        try:
            import pyspark
        except ImportError:
            return "not installed"
        line = self._line()
        delta = line.runtimes.get("delta", "?").rsplit(":", 1)[-1] if line else "?"
        iceberg = line.runtimes.get("iceberg", "?").rsplit(":", 1)[-1] if line else "?"
        return f"spark {pyspark.__version__} / delta-spark {delta} / iceberg-spark-runtime {iceberg}"

    def available(self) -> str | None:
        try:
            import pyspark
        except Exception as exc:
            return f"cannot import pyspark: {exc} (pip install the pyspark of a line in conformance/engines/versions.py)"
        if self._line() is None:
            return f"pyspark {pyspark.__version__} matches no pinned Spark line ({sorted(versions.SPARK_LINES)})"
        if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
            return "no Java runtime (java on PATH or JAVA_HOME); Spark 4 needs Java 17"
        return None

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"delta", "iceberg"}),
            write=frozenset({"delta", "iceberg"}),
            # Both claim every feature but the measured gaps (named per feature below; Delta has
            # no refs, so no Delta case reads one).
            read_features={"delta": None, "iceberg": None},
            write_steps={"delta": WRITE_STEPS, "iceberg": ICEBERG_WRITE_STEPS},
            unsupported_reasons={"Raw": "Spark writes through its public API only", **ICEBERG_UNSUPPORTED},
        )

    def start(self) -> None:
        """Start (or reuse) the SparkSession now, so its start-up is timed apart from the cases."""
        get_session(line=self._line_name, formats=self._formats)

    @property
    def log_path(self) -> str | None:
        """Spark's log file of this process (WARN and above), once the session started."""
        return os.path.join(_Session.log_dir, "spark.log") if _Session.log_dir else None

    def log_mark(self) -> int:
        """The current size of Spark's log (the harness keeps what a failed cell adds after it)."""
        path = self.log_path
        return os.path.getsize(path) if path and os.path.exists(path) else 0

    def log_since(self, mark: int) -> str:
        """What Spark logged after ``mark`` (WARN and above), without the Java stack frames."""
        path = self.log_path
        if not path or not os.path.exists(path):
            return ""
        with open(path, "rb") as fh:
            fh.seek(mark)
            text = fh.read(1 << 20).decode("utf-8", "replace")
        return "\n".join(ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("at "))

    def _spark(self, table: TableRef):
        if table.format not in ("delta", "iceberg"):
            raise Unsupported(f"the Spark adapter does not handle {table.format} tables yet", feature=table.format)
        spark = get_session(line=self._line_name, formats=self._formats)
        if table.format not in _Session.formats:
            raise Unsupported(
                f"the Spark session was started without the {table.format} runtime "
                f"(LAKECONF_SPARK_FORMATS={','.join(_Session.formats)}); set it before the first Spark use",
                feature=table.format,
            )
        _configure_s3(spark, table)
        return spark

    # -- read ----------------------------------------------------------------------------------

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        spark = self._spark(table)
        if table.format == "iceberg":
            return self._read_iceberg(spark, table, at=at, timestamp=timestamp, ref=ref, columns=columns)
        if ref is not None:
            raise Unsupported("Delta tables have no named branches or tags", feature="ref-travel")
        path = spark_path(table.uri)
        try:
            reader = spark.read.format("delta")
            if at is not None:
                reader = reader.option("versionAsOf", int(at))
            elif timestamp is not None:
                reader = reader.option("timestampAsOf", _timestamp_literal(timestamp))
            df = reader.load(path)
            if columns:
                df = df.select(*[df[_quote_ident(c)] for c in columns])
            return _to_arrow(df)
        except Exception as exc:
            raise translate_error(exc, where=table.uri) from None

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        """The format's facts as Spark sees them (Delta: latest version only, else ``None``)."""
        if table.format == "iceberg":
            return self._describe_iceberg(self._spark(table), table, at=at, timestamp=timestamp, ref=ref)
        if at is not None or timestamp is not None or ref is not None:
            # DESCRIBE DETAIL has no time travel; the rows of older versions are still checked.
            return None
        from conformance.engines.delta_facts import facts

        spark = self._spark(table)
        target = f"delta.{_quote_ident(spark_path(table.uri))}"
        try:
            row = spark.sql(f"DESCRIBE DETAIL {target}").collect()[0].asDict()
            version = spark.sql(f"DESCRIBE HISTORY {target} LIMIT 1").collect()[0]["version"]
        except Exception as exc:
            raise translate_error(exc, where=table.uri) from None
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

    # -- write ---------------------------------------------------------------------------------

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        allowed = ICEBERG_WRITE_STEPS if table.format == "iceberg" else WRITE_STEPS
        for step in steps:
            if type(step).__name__ not in allowed:
                raise Unsupported(
                    f"spark cannot run a {type(step).__name__} step on {table.format} tables"
                    + (f" ({step.description})" if hasattr(step, "description") else ""),
                    feature=type(step).__name__,
                )
        spark = self._spark(table)
        if table.format == "iceberg":
            self._write_iceberg(spark, table, steps)
            return
        path = spark_path(table.uri)
        target = f"delta.{_quote_ident(path)}"
        for step in steps:
            try:
                self._run_step(spark, path, target, step)
            except LakeconfError:
                raise
            except Exception as exc:
                raise translate_error(exc, where=f"{table.uri} ({type(step).__name__})") from None

    def _dataframe(self, spark, rows: pa.Table, path: str | None):
        """A DataFrame of ``rows``, cast to the table's column types when the table exists."""
        df = spark.createDataFrame(rows)
        if path is None:
            return df
        target = spark.read.format("delta").load(path).schema
        by_name = {f.name: f for f in target.fields}
        cols = []
        for name in df.columns:
            col = df[_quote_ident(name)]  # a name like "a.b" is one column, not a struct field
            if name in by_name:
                col = col.cast(by_name[name].dataType)
            cols.append(col.alias(name))
        return df.select(*cols)

    def _run_step(self, spark, path: str, target: str, step: Step) -> None:
        if isinstance(step, Create):
            spark.sql(create_table_sql(path, step))
        elif isinstance(step, Append):
            df = self._dataframe(spark, step.rows, path)
            df = df.repartition(step.files) if step.files > 1 else df.coalesce(1)
            df.write.format("delta").mode("append").save(path)
        elif isinstance(step, Overwrite):
            current = spark.read.format("delta").load(path)
            same = [f.name for f in current.schema.fields] == step.rows.column_names
            df = self._dataframe(spark, step.rows, path if same else None).coalesce(1)
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
            sets = ", ".join(f"{_quote_ident(c)} = {e}" for c, e in step.set.items())
            spark.sql(f"UPDATE {target} SET {sets} WHERE {step.where}")
        elif isinstance(step, SetProperties):
            props = ", ".join(f"{_sql_string(k)} = {_sql_string(v)}" for k, v in step.properties.items())
            spark.sql(f"ALTER TABLE {target} SET TBLPROPERTIES ({props})")
        elif isinstance(step, AddConstraint):
            spark.sql(f"ALTER TABLE {target} ADD CONSTRAINT {_quote_ident(step.name)} CHECK ({step.expression})")
        elif isinstance(step, AddColumn):
            spark.sql(f"ALTER TABLE {target} ADD COLUMNS ({_quote_ident(step.field.name)} {spark_sql_type(step.field.type)})")
        elif isinstance(step, RenameColumn):
            spark.sql(f"ALTER TABLE {target} RENAME COLUMN {_quote_ident(step.old)} TO {_quote_ident(step.new)}")
        elif isinstance(step, DropColumn):
            spark.sql(f"ALTER TABLE {target} DROP COLUMN {_quote_ident(step.name)}")
        elif isinstance(step, Optimize):
            spark.sql(f"OPTIMIZE {target}")
        elif isinstance(step, Checkpoint):
            self._checkpoint(spark, path, step)
        else:  # pragma: no cover - write() filtered these
            raise Unsupported(f"spark cannot run a {type(step).__name__} step")

    def _checkpoint(self, spark, path: str, step: Checkpoint) -> None:
        """Write a checkpoint of the latest version through delta-spark's own checkpoint code."""
        detail = spark.sql(f"DESCRIBE DETAIL delta.{_quote_ident(path)}").collect()[0]
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
            if step.kind == "multipart":
                if step.parts < 2:
                    raise Unsupported("a multi-part checkpoint needs parts >= 2", feature="checkpoint-multipart")
                actions = int(detail["numFiles"]) + 2  # adds + protocol + metadata
                conf.set(key, str(max(1, -(-actions // step.parts))))
            delta_log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
            delta_log.checkpoint()
        finally:
            if previous is None:
                conf.unset(key)
            else:
                conf.set(key, previous)


    # -- Iceberg -------------------------------------------------------------------------------

    def _iceberg_catalog(self, spark, table: TableRef) -> tuple[str, str]:
        """``(catalog, "ns"."name")``: the Hadoop catalog whose warehouse holds ``table``, registered
        in the session on first use (one per warehouse and S3 endpoint)."""
        import hashlib

        warehouse, namespace, name = hadoop_catalog_location(table.uri)
        bucket = urlparse(table.uri).netloc if urlparse(table.uri).scheme in ("s3", "s3a") else ""
        endpoint = _Session.configured_buckets.get(bucket, (None, None))[:2]  # endpoint, key id: no secret
        catalog = "lakeconf_iceberg_" + hashlib.sha256(repr((warehouse, endpoint)).encode()).hexdigest()[:12]
        if catalog not in _Session.iceberg_catalogs:
            prefix = f"spark.sql.catalog.{catalog}"
            spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
            spark.conf.set(prefix + ".type", "hadoop")
            spark.conf.set(prefix + ".warehouse", warehouse)
            # Other engines write the same tables between Spark's steps: never serve a cached table.
            spark.conf.set(prefix + ".cache-enabled", "false")
            _Session.iceberg_catalogs.add(catalog)
        return catalog, f"{_quote_ident(namespace)}.{_quote_ident(name)}"

    @staticmethod
    def _java_table_at(spark, location: str):
        """Iceberg-Java's ``Table`` of one metadata file (read-only ``StaticTableOperations``)."""
        conf = spark._jsparkSession.sessionState().newHadoopConf()
        return spark.sparkContext._jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(location)

    @staticmethod
    def _java_table(spark, ident: str):
        """Iceberg-Java's ``Table`` behind a catalog identifier (what Spark's DDL just changed)."""
        jvm = spark.sparkContext._jvm
        return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, ident)

    def _read_iceberg(self, spark, table: TableRef, *, at, timestamp, ref, columns) -> pa.Table:
        """Spark reads the table's current metadata file; the kit's version numbers go through
        ``iceberg_facts.snapshot_id_for`` (they are the kit's, e.g. sequence numbers), timestamps
        and refs through Spark's own options (``as-of-timestamp``, ``branch``/``tag``)."""
        from conformance.engines import iceberg_facts

        try:
            reader = spark.read.format("iceberg")
            empty = False
            if at is not None:
                chosen = iceberg_facts.selection(table, at=at)
                location = iceberg_path(chosen.metadata_location)
                if chosen.snapshot_id is None:
                    # Version 0: the table before its first snapshot. ``selection`` names the last
                    # metadata file of that time when the log reaches back, so Spark derives the
                    # empty table's schema itself; limit(0) covers the current file otherwise.
                    empty = True
                else:
                    reader = reader.option("snapshot-id", str(chosen.snapshot_id))
            else:
                location = iceberg_path(iceberg_facts.metadata_location(table))
            if timestamp is not None:
                reader = reader.option("as-of-timestamp", str(_ms_of(timestamp)))
            elif ref is not None:
                java_ref = self._java_table_at(spark, location).refs().get(ref)
                if java_ref is None:
                    raise InvalidTable(f"spark: the table has no branch or tag named {ref!r}", path=table.uri)
                reader = reader.option("branch" if java_ref.isBranch() else "tag", ref)
            df = reader.load(location)
            if empty:
                df = df.limit(0)
            if columns:
                df = df.select(*[df[_quote_ident(c)] for c in columns])
            return _to_arrow(df)
        except Exception as exc:
            raise translate_error(exc, where=table.uri, fmt="iceberg", reading=True) from None

    def _describe_iceberg(self, spark, table: TableRef, *, at, timestamp, ref) -> dict:
        """``iceberg_facts`` keys as Iceberg-Java (inside Spark) parses the table: format version,
        default partition spec, schema id and operation of the snapshot read, properties, refs."""
        from conformance.engines import iceberg_facts

        try:
            location = iceberg_path(iceberg_facts.metadata_location(table))
            jtable = self._java_table_at(spark, location)
            md = jtable.operations().current()
            if at is not None:
                snapshot_id = iceberg_facts.snapshot_id_for(table, at=at)
            elif timestamp is not None:
                util = spark.sparkContext._jvm.org.apache.iceberg.util.SnapshotUtil
                snapshot_id = util.snapshotIdAsOfTime(jtable, _ms_of(timestamp))
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
                iceberg_facts.partition_expression(str(f.transform()), schema.findColumnName(f.sourceId()) or str(f.sourceId()))
                for f in md.spec().fields()
            ]
            # Latest: the schema a latest read uses (current); a selected snapshot: its own.
            selected = at is not None or timestamp is not None or ref is not None
            schema_id = snapshot.schemaId() if selected and snapshot is not None else None
            return iceberg_facts.facts(
                format_version=int(md.formatVersion()),
                partition_spec=spec,
                schema_id=int(schema_id if schema_id is not None else md.currentSchemaId()),
                properties={str(k): str(v) for k, v in md.properties().items()},
                refs={str(name): ("branch" if r.isBranch() else "tag") for name, r in md.refs().items()},
                operation=str(snapshot.operation()) if snapshot is not None and snapshot.operation() else None,
            )
        except Exception as exc:
            raise translate_error(exc, where=table.uri, fmt="iceberg", reading=True) from None

    def _write_iceberg(self, spark, table: TableRef, steps: Sequence[Step]) -> None:
        catalog, inner = self._iceberg_catalog(spark, table)
        for step in steps:
            try:
                self._run_iceberg_step(spark, table, catalog, inner, step)
            except LakeconfError:
                raise
            except Exception as exc:
                raise translate_error(exc, where=f"{table.uri} ({type(step).__name__})", fmt="iceberg") from None

    def _iceberg_dataframe(self, spark, rows: pa.Table, ident: str):
        """``rows`` as a DataFrame in the table's column order and types; columns the rows lack are
        null (a Spark user's INSERT names them as NULL), columns the table lacks are kept so that
        Spark refuses them."""
        from pyspark.sql import functions as F

        df = spark.createDataFrame(rows)
        target = spark.table(ident).schema
        have = set(df.columns)
        cols = []
        for f in target.fields:
            col = df[_quote_ident(f.name)] if f.name in have else F.lit(None)
            cols.append(col.cast(f.dataType).alias(f.name))
        known = {f.name for f in target.fields}
        cols += [df[_quote_ident(c)] for c in df.columns if c not in known]
        return df.select(*cols)

    def _run_iceberg_step(self, spark, table: TableRef, catalog: str, inner: str, step: Step) -> None:
        ident = f"{catalog}.{inner}"
        if isinstance(step, Create):
            spark.sql(iceberg_create_sql(ident, step))
        elif isinstance(step, Append):
            df = self._iceberg_dataframe(spark, step.rows, ident)
            df = df.repartition(step.files) if step.files > 1 else df.coalesce(1)
            target = ident if step.branch is None else f"{ident}.{_quote_ident('branch_' + step.branch)}"
            # No shuffle by partition: the files= split is the DataFrame's (as for Delta); the
            # fanout writer accepts rows of several partitions per task.
            df.writeTo(target).option("distribution-mode", "none").option("fanout-enabled", "true").append()
        elif isinstance(step, Overwrite):
            self._iceberg_overwrite(spark, ident, step)
        elif isinstance(step, Delete):
            mode = self._iceberg_delete_mode(spark, ident, step.how)
            with self._iceberg_row_level_mode(spark, ident, "write.delete.mode", mode):
                spark.sql(f"DELETE FROM {ident} WHERE {step.where}")
        elif isinstance(step, Update):
            sets = ", ".join(f"{_quote_ident(c)} = {e}" for c, e in step.set.items())
            spark.sql(f"UPDATE {ident} SET {sets} WHERE {step.where}")
        elif isinstance(step, SetProperties):
            props = ", ".join(f"{_sql_string(k)} = {_sql_string(v)}" for k, v in step.properties.items())
            spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({props})")
        elif isinstance(step, AddColumn):
            spark.sql(iceberg_add_column_sql(ident, step.field))
        elif isinstance(step, RenameColumn):
            spark.sql(f"ALTER TABLE {ident} RENAME COLUMN {_quote_ident(step.old)} TO {_quote_ident(step.new)}")
        elif isinstance(step, DropColumn):
            spark.sql(f"ALTER TABLE {ident} DROP COLUMN {_quote_ident(step.name)}")
        elif isinstance(step, ChangeColumnType):
            new_type = _iceberg_column_sql(pa.field(step.name, step.type)).split(" ", 1)[1]
            spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {_quote_ident(step.name)} TYPE {new_type}")
        elif isinstance(step, MoveColumn):
            where = "FIRST" if step.after is None else f"AFTER {_quote_ident(step.after)}"
            spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {_quote_ident(step.name)} {where}")
        elif isinstance(step, SetPartitioning):
            for statement in set_partitioning_sql(ident, self._iceberg_spec(spark, ident), step.partition_by):
                spark.sql(statement)
        elif isinstance(step, CreateRef):
            self._iceberg_create_ref(spark, table, ident, step)
        elif isinstance(step, ExpireSnapshots):
            if step.retain_last < 1:
                raise Unsupported("Iceberg keeps at least the current snapshot (retain_last >= 1)", feature="retain_last")
            # older_than just ahead of now: every snapshot is old enough, retain_last and the refs decide.
            cutoff = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None) + _dt.timedelta(seconds=1)
            spark.sql(
                f"CALL {catalog}.system.expire_snapshots(table => {_sql_string(inner)}, "
                f"older_than => TIMESTAMP {_sql_string(cutoff.isoformat(sep=' ', timespec='milliseconds'))}, "
                f"retain_last => {int(step.retain_last)})"
            ).collect()
        elif isinstance(step, Optimize):
            # rewrite-all: the default planner skips groups of fewer than 5 files, i.e. every test table.
            spark.sql(
                f"CALL {catalog}.system.rewrite_data_files(table => {_sql_string(inner)}, "
                "options => map('rewrite-all', 'true'))"
            ).collect()
        else:  # pragma: no cover - write() filtered these
            raise Unsupported(f"spark cannot run a {type(step).__name__} step on iceberg tables")

    def _iceberg_spec(self, spark, ident: str) -> list[str]:
        """The default partition spec as contract expressions (void fields left out: they partition nothing)."""
        from conformance.engines.iceberg_facts import partition_expression

        jtable = self._java_table(spark, ident)
        schema = jtable.schema()
        out = []
        for f in jtable.spec().fields():
            transform = str(f.transform())
            if transform != "void":
                out.append(partition_expression(transform, schema.findColumnName(f.sourceId())))
        return out

    def _iceberg_overwrite(self, spark, ident: str, step: Overwrite) -> None:
        """Replace every row (an ``overwrite`` snapshot whose parent is the current one). A new
        schema is reached first by schema evolution, as a Spark user keeps a table's history:
        partition fields of dropped columns go, then the columns; new columns are added, changed
        types promoted (Iceberg refuses what is no promotion). REPLACE TABLE would start a new
        lineage, losing the kit's versions before it."""
        from pyspark.sql import functions as F

        current = {f.name: f for f in spark.table(ident).schema.fields}
        incoming = spark.createDataFrame(step.rows.slice(0, 0)).schema
        wanted = {f.name: f for f in incoming.fields}
        dropped = [name for name in current if name not in wanted]
        if dropped:
            spec = self._iceberg_spec(spark, ident)
            keep = [e for e in spec if parse_partition_expr(e)[1] not in dropped]
            for statement in set_partitioning_sql(ident, spec, keep):
                spark.sql(statement)
            spark.sql(f"ALTER TABLE {ident} DROP COLUMNS ({', '.join(_quote_ident(n) for n in dropped)})")
        for field in step.rows.schema:
            if field.name not in current:
                nullable = pa.field(field.name, field.type)  # an added column is optional (EVOL-009)
                spark.sql(f"ALTER TABLE {ident} ADD COLUMNS ({_iceberg_column_sql(nullable)})")
            elif current[field.name].dataType != wanted[field.name].dataType:
                new_type = _iceberg_column_sql(pa.field(field.name, field.type)).split(" ", 1)[1]
                spark.sql(f"ALTER TABLE {ident} ALTER COLUMN {_quote_ident(field.name)} TYPE {new_type}")
        df = self._iceberg_dataframe(spark, step.rows, ident).coalesce(1)
        df.writeTo(ident).option("distribution-mode", "none").option("fanout-enabled", "true").overwrite(F.lit(True))

    def _iceberg_delete_mode(self, spark, ident: str, how: str | None) -> str | None:
        """The ``write.delete.mode`` a Delete's ``how`` needs (``None``: the table's own setting)."""
        if how is None:
            return None
        if how == "copy-on-write":
            return "copy-on-write"
        version = int(self._java_table(spark, ident).operations().current().formatVersion())
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

    def _iceberg_row_level_mode(self, spark, ident: str, key: str, mode: str | None):
        """Run a row-level command under ``key = mode``. Spark takes the mode from the table
        property only, so a different one is set for the command and put back afterwards (two
        metadata-only commits; the table's history of snapshots is unchanged)."""
        import contextlib

        if mode is None:
            return self._NoChange()
        props = self._java_table(spark, ident).properties()
        previous = props.get(key)
        if (previous or "copy-on-write") == mode:
            return self._NoChange()

        @contextlib.contextmanager
        def scoped():
            spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({_sql_string(key)} = {_sql_string(mode)})")
            try:
                yield
            finally:
                if previous is None:
                    spark.sql(f"ALTER TABLE {ident} UNSET TBLPROPERTIES ({_sql_string(key)})")
                else:
                    spark.sql(f"ALTER TABLE {ident} SET TBLPROPERTIES ({_sql_string(key)} = {_sql_string(previous)})")

        return scoped()

    def _iceberg_create_ref(self, spark, table: TableRef, ident: str, step: CreateRef) -> None:
        if step.kind not in ("branch", "tag"):
            raise Unsupported(f"unknown ref kind {step.kind!r}", feature=str(step.kind))
        sql = f"ALTER TABLE {ident} CREATE {step.kind.upper()} {_quote_ident(step.name)}"
        if step.version is not None:
            from conformance.engines import iceberg_facts

            snapshot_id = iceberg_facts.snapshot_id_for(table, at=step.version)
            if snapshot_id is None:
                raise Unsupported(f"version {step.version} has no snapshot for a {step.kind} to point at",
                                  feature=f"{step.kind}-on-empty-table")
            sql += f" AS OF VERSION {int(snapshot_id)}"
        spark.sql(sql)

    def close(self) -> None:
        """Keep the shared session (other adapters in the process may use it); see stop_session()."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m conformance.engines.spark_engine resolve [FORMATS]``: fill the Ivy cache, time a start."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m conformance.engines.spark_engine")
    parser.add_argument("command", choices=["resolve"])
    parser.add_argument("--formats", default=os.environ.get("LAKECONF_SPARK_FORMATS", DEFAULT_FORMATS))
    parser.add_argument("--no-s3", action="store_true", help="leave hadoop-aws and the AWS SDK out")
    args = parser.parse_args(argv)
    reason = SparkEngine().available()
    if reason:
        print(f"spark: not available: {reason}")
        return 1
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    os.environ["LAKECONF_SPARK_RESOLVE"] = "1"  # always ask Ivy here: this is what refreshes the manifest
    spark = get_session(formats=formats, s3=not args.no_s3)
    began = time.monotonic()
    spark.range(4).count()  # the first job loads the executor side too
    stats = session_stats() | {"first_job_s": round(time.monotonic() - began, 2)}
    stats["first_start_s"] = round(stats["first_start_s"], 2)
    began = time.monotonic()
    get_session()
    stats["reuse_s"] = round(time.monotonic() - began, 6)
    stats["packages"] = versions.packages(_Session.line, formats, s3=not args.no_s3)
    stats["jar_manifest"] = jar_manifest_path(stats["packages"])
    print(json.dumps(stats, indent=2))
    stop_session()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
