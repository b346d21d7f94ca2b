"""Apache Spark through PySpark with each format's Spark runtime (Delta now; Iceberg/Hudi/Paimon pinned).

One SparkSession per process, started lazily on first use and reused by every ``SparkEngine``
(starting a JVM costs seconds; see ``session_stats()``). Its jars come from
``conformance.engines.versions`` through ``spark.jars.packages`` (Ivy cache in ``~/.ivy2`` or
LAKECONF_IVY_DIR; ``.ci/install-spark`` fills it ahead of time). Settings:

* LAKECONF_SPARK_MASTER (default ``local[2]``), LAKECONF_SPARK_LINE (default the newest pinned),
  LAKECONF_SPARK_FORMATS (default ``delta``: the runtimes put on the classpath),
  LAKECONF_SPARK_S3 (default ``1``: add hadoop-aws + AWS SDK so ``s3a://`` works).
* Spark's own log goes to a file (``SparkEngine.log_path``), WARN and above, never to the
  results; an error message carries the Java exception's first lines only.
* Object stores: an ``s3://bucket/...`` table is read as ``s3a://``; the endpoint and keys come from
  the table's storage options (delta-rs spelling) and are set per bucket
  (``fs.s3a.bucket.<bucket>.*``), so stores with different endpoints can share one session.

Writes map the harness steps to what a Spark user types: ``CREATE TABLE ... USING delta`` with
TBLPROPERTIES, DataFrame appends and overwrites, ``DELETE``/``UPDATE``/``ALTER TABLE``/``OPTIMIZE``.
"""

from __future__ import annotations

import datetime as _dt
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
    Checkpoint,
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


def _env_formats() -> tuple[str, ...]:
    raw = os.environ.get("LAKECONF_SPARK_FORMATS", "delta")
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
    if bucket in _Session.configured_buckets:
        # Hadoop caches one FileSystem per bucket: a new endpoint for a known bucket needs a fresh one.
        jvm = spark.sparkContext._jvm
        uri = jvm.java.net.URI(f"s3a://{bucket}/")
        jvm.org.apache.hadoop.fs.FileSystem.get(uri, hconf).close()
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
        if fn is not None:
            try:
                value = fn()
            except Exception:
                value = None
            if value:
                return str(value)
    return ""


def _short(exc: BaseException, limit: int = 600) -> str:
    text = str(exc).strip().split("\n\tat ", 1)[0]
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("at ")]
    text = " | ".join(lines[:6])
    return text[:limit]


def translate_error(exc: BaseException, *, where: str) -> BaseException:
    """Map a Spark/Delta exception to the kit's error kinds (unsupported, invalid table) or keep it."""
    if isinstance(exc, LakeconfError):
        return exc
    condition = _java_condition(exc)
    text = str(exc)
    message = f"spark: {_short(exc)}"
    if any(c in condition or c in text for c in _UNSUPPORTED_CONDITIONS):
        return Unsupported(message, path=where)
    if any(c in condition or c in text for c in _INVALID_CONDITIONS):
        return InvalidTable(message, path=where)
    return LakeconfError(message, path=where)


# ----------------------------------------------------------------------------------------------
# The adapter
# ----------------------------------------------------------------------------------------------


class SparkEngine(Engine):
    """Spark + delta-spark (other formats' runtimes pinned in versions.py, not wired yet)."""

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
        return f"spark {pyspark.__version__} / delta-spark {delta}"

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
            read=frozenset({"delta"}),
            write=frozenset({"delta"}),
            read_features={"delta": None},
            write_steps={"delta": WRITE_STEPS},
            unsupported_reasons={"Raw": "Spark writes through its public API only"},
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
        if table.format != "delta":
            raise Unsupported(f"the Spark adapter does not handle {table.format} tables yet", feature=table.format)
        spark = get_session(line=self._line_name, formats=self._formats)
        _configure_s3(spark, table)
        return spark

    # -- read ----------------------------------------------------------------------------------

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        spark = self._spark(table)
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

    def describe(self, table: TableRef, *, at: int | None = None, timestamp: str | None = None) -> dict | None:
        """Delta facts (``delta_facts`` keys) as Spark sees them; latest version only (else ``None``)."""
        if at is not None or timestamp is not None:
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
        for step in steps:
            if type(step).__name__ not in WRITE_STEPS:
                raise Unsupported(
                    f"spark cannot run a {type(step).__name__} step"
                    + (f" ({step.description})" if hasattr(step, "description") else ""),
                    feature=type(step).__name__,
                )
        spark = self._spark(table)
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

    def close(self) -> None:
        """Keep the shared session (other adapters in the process may use it); see stop_session()."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m conformance.engines.spark_engine resolve [FORMATS]``: fill the Ivy cache, time a start."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m conformance.engines.spark_engine")
    parser.add_argument("command", choices=["resolve"])
    parser.add_argument("--formats", default=os.environ.get("LAKECONF_SPARK_FORMATS", "delta"))
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
