"""The Spark adapter's pure parts (no JVM): pinned lines and runtimes, session settings, SQL the drivers generate."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.engines.spark import engine, lines, session
from conformance.engines.spark.adapter import SparkEngine, runtime_label
from conformance.engines.errors import EngineError
from conformance.engines.spark.errors import translate
from conformance.engines.spark.s3 import bucket_conf
from conformance.engines.spark.sql import spark_path, sql_type
from conformance.formats.delta.drivers import spark as delta_spark
from conformance.formats.delta.steps import protocol_properties
from conformance.formats.iceberg.drivers import spark as iceberg_spark
from conformance.model import Create, Raw, TableRef
from conformance.storage.s3_options import config_from_options
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.storage import S3Config


def test_every_format_driver_pins_a_runtime_per_line():
    for fmt, driver in session.drivers().items():
        assert set(driver.RUNTIMES) <= set(lines.LINES), fmt
        for line_name, coordinate in driver.RUNTIMES.items():
            group, artifact, version = coordinate.split(":")
            assert group and artifact and version[0].isdigit()
            if lines.LINES[line_name].scala == "2.13":
                assert "2.12" not in artifact  # one Scala per classpath
    assert set(session.line_formats(lines.line("3.5"))) >= {"delta", "iceberg"}


def test_lines_and_engine_names():
    line = lines.line()
    assert line.name == lines.DEFAULT_LINE == "4.0" and line.engine == "spark"
    assert lines.line("3.5").engine == "spark-3.5"
    assert line.pyspark.startswith("4.0.")
    assert line.s3_packages() == ["org.apache.hadoop:hadoop-aws:3.4.1", "software.amazon.awssdk:bundle:2.24.6"]
    assert lines.line("3.5").s3_packages()[1] == "com.amazonaws:aws-java-sdk-bundle:1.12.262"
    assert lines.line_for_pyspark("4.0.5") is line
    assert lines.line_for_pyspark("9.9.0") is None
    with pytest.raises(KeyError, match="no pinned Spark line"):
        lines.line("1.6")
    assert runtime_label("io.delta:delta-spark_4.0_2.13:4.4.0") == "delta-spark 4.4.0"
    assert runtime_label("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0") == "iceberg-spark-runtime 1.12.0"


def test_a_line_not_installed_here_is_remote_and_says_how_to_set_it_up(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKECONF_CACHE_DIR", str(tmp_path))
    installed = lines.installed_pyspark()
    other = next(n for n, line in lines.LINES.items() if installed is None or lines.line_for_pyspark(installed) is not line)
    e = engine(other)
    assert e.name == lines.line(other).engine and getattr(e, "in_process", False)
    assert "setup --line " + other in e.available()


def test_a_line_takes_two_reads_at_once_unless_told_otherwise(monkeypatch, tmp_path):
    from conformance.engines.spark import calls

    monkeypatch.setenv("LAKECONF_CACHE_DIR", str(tmp_path))
    for key in ("LAKECONF_SPARK_CALLS", "LAKECONF_SPARK_CALLS_3_5", "LAKECONF_SPARK_WORKERS", "LAKECONF_SPARK_WORKERS_3_5"):
        monkeypatch.delenv(key, raising=False)
    assert calls(lines.line("3.5")) == 2 and engine("3.5").concurrency == 2  # one JVM, two reads
    monkeypatch.setenv("LAKECONF_SPARK_CALLS_3_5", "1")
    assert engine("3.5").concurrency == 1 and calls(lines.line("4.0")) == 2
    monkeypatch.setenv("LAKECONF_SPARK_WORKERS", "2")
    assert engine("3.5").concurrency == 2 and engine("4.0").concurrency == 4
    monkeypatch.setenv("LAKECONF_SPARK_CALLS", "two")
    with pytest.raises(ValueError, match="LAKECONF_SPARK_CALLS='two'"):
        calls(lines.line("4.0"))


def test_reads_share_the_session_and_a_write_has_it_alone():
    import threading
    import time

    from conformance.engines.spark.adapter import _ReadWriteTurns

    turns = _ReadWriteTurns()
    log: list[str] = []
    lock = threading.Lock()

    def hold(kind: str, name: str, seconds: float, delay: float = 0.0) -> threading.Thread:
        def run() -> None:
            time.sleep(delay)
            with getattr(turns, kind)():
                with lock:
                    log.append(f"+{name}")
                time.sleep(seconds)
                with lock:
                    log.append(f"-{name}")
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    # Two reads overlap; a write that comes while they run waits for both, and a read that comes
    # after the write waits for the write (it does not slip in ahead of it).
    threads = [hold("shared", "r1", 0.4), hold("shared", "r2", 0.4, 0.05), hold("alone", "w", 0.2, 0.1),
               hold("shared", "r3", 0.1, 0.2)]
    for t in threads:
        t.join()
    assert log.index("+r2") < log.index("-r1")
    assert log.index("+w") > max(log.index("-r1"), log.index("-r2"))
    assert log.index("+r3") > log.index("-w")


def test_packages_and_session_conf():
    line = lines.line("4.0")
    pkgs = session.packages(line, ["delta"], s3=True)
    assert pkgs == [delta_spark.RUNTIMES["4.0"], *line.s3_packages()]
    conf = session.format_conf(line, ["delta", "iceberg"])
    assert conf["spark.sql.extensions"].split(",") == [
        "io.delta.sql.DeltaSparkSessionExtension",
        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    ]
    with pytest.raises(KeyError, match="pins no runtime"):
        session.packages(line, ["orc"])


def test_session_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKECONF_SPARK_MASTER", "local[1]")
    monkeypatch.setenv("LAKECONF_IVY_DIR", str(tmp_path / "ivy"))
    conf = session.settings(lines.line("4.0"), ["delta"], s3=False, log_dir=str(tmp_path))
    assert conf["spark.master"] == "local[1]"
    assert conf["spark.ui.enabled"] == "false"
    assert conf["spark.jars.packages"] == "io.delta:delta-spark_4.0_2.13:4.4.0"
    assert "spark.jars" not in conf
    offline = session.settings(lines.line("4.0"), ["delta"], s3=False, log_dir=str(tmp_path), jars=["file:///x.jar"])
    assert offline["spark.jars"] == "file:///x.jar" and "spark.jars.packages" not in offline
    assert conf["spark.jars.ivy"] == str(tmp_path / "ivy")
    assert conf["spark.sql.session.timeZone"] == "UTC"
    assert "log4j2.configurationFile=file:" + str(tmp_path) in conf["spark.driver.extraJavaOptions"]
    # the JIT and GC choices come first, so options the user gives (later on the line) win
    monkeypatch.setenv("LAKECONF_SPARK_JAVA_OPTS", "-XX:+UseG1GC")
    opts = session.settings(lines.line("4.0"), ["delta"], s3=False, log_dir=str(tmp_path))["spark.driver.extraJavaOptions"].split()
    assert opts.index("-XX:+UseParallelGC") < opts.index("-XX:+UseG1GC")
    assert "-XX:CompileThresholdScaling=3" in opts
    assert conf["spark.sql.catalog.spark_catalog"] == "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def test_jar_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKECONF_IVY_DIR", str(tmp_path))
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"PK")
    pkgs = ["g:a:1"]
    assert session.read_jar_manifest(pkgs) is None
    path = session.write_jar_manifest(pkgs, [f"file://{jar}"])
    assert path.startswith(str(tmp_path)) and session.read_jar_manifest(pkgs) == [f"file://{jar}"]
    assert session.read_jar_manifest(["g:a:2"]) is None  # another package set has its own manifest
    jar.unlink()
    assert session.read_jar_manifest(pkgs) is None  # a vanished jar means: resolve again


def test_resolve_if_needed_starts_no_session_when_the_jars_are_there(tmp_path, monkeypatch, capsys):
    """A warm set-up (install-spark's ``resolve --if-needed``) starts no JVM; without the jars it would."""
    import json

    from conformance.engines.spark.__main__ import main

    installed = lines.line_for_pyspark(lines.installed_pyspark() or "")
    if installed is None:
        pytest.skip("no pinned Spark line's pyspark in this environment")
    monkeypatch.setenv("LAKECONF_IVY_DIR", str(tmp_path))
    monkeypatch.setenv("LAKECONF_SPARK_FORMATS", "delta")
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"PK")
    pkgs = session.packages(installed, ["delta"], s3=True)
    session.write_jar_manifest(pkgs, [f"file://{jar}"])
    monkeypatch.setattr(session, "get", lambda **kw: pytest.fail("a session was started"))
    assert main(["resolve", "--if-needed", "--line", installed.name]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["resolved"] == "earlier" and out["packages"] == pkgs
    jar.unlink()  # a vanished jar: resolve again (here: the refused session start above)
    with pytest.raises(pytest.fail.Exception, match="a session was started"):
        main(["resolve", "--if-needed", "--line", installed.name])


def test_spark_path():
    assert spark_path("s3://b/t") == "s3a://b/t"
    assert spark_path("/tmp/x") == "file:///tmp/x"
    assert spark_path("file:///tmp/x") == "file:///tmp/x"


def test_s3_options_round_trip_to_bucket_conf():
    cfg = config_from_options(
        {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "S"}
    )
    assert cfg == S3Config(endpoint_url="http://127.0.0.1:9", access_key_id="A", secret_access_key="S")
    conf = bucket_conf("bkt", cfg)
    assert conf["fs.s3a.bucket.bkt.endpoint"] == "http://127.0.0.1:9"
    assert conf["fs.s3a.bucket.bkt.secret.key"] == "S"
    assert conf["fs.s3a.bucket.bkt.path.style.access"] == "true"
    assert config_from_options({}) is None


def test_spark_sql_types():
    assert sql_type(pa.int64()) == "BIGINT"
    assert sql_type(pa.timestamp("us", tz="UTC")) == "TIMESTAMP"
    assert sql_type(pa.timestamp("us")) == "TIMESTAMP_NTZ"
    assert sql_type(pa.decimal128(10, 2)) == "DECIMAL(10,2)"
    assert sql_type(pa.list_(pa.int32())) == "ARRAY<INT>"
    assert sql_type(pa.map_(pa.string(), pa.float64())) == "MAP<STRING, DOUBLE>"
    assert sql_type(pa.struct([pa.field("a b", pa.int8(), nullable=False)])) == "STRUCT<`a b`: TINYINT NOT NULL>"
    with pytest.raises(Unsupported, match="no Spark SQL equivalent"):
        sql_type(pa.null())


def test_create_table_sql():
    step = Create(
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string())]),
        partition_by=("p",),
        properties={"delta.appendOnly": "false"},
        features=("deletionVectors", "columnMapping"),
    )
    sql = delta_spark.create_table_sql("file:///t", step)
    assert sql.startswith("CREATE TABLE delta.`file:///t` (`id` BIGINT NOT NULL, `p` STRING) USING delta")
    assert "PARTITIONED BY (`p`)" in sql
    assert "'delta.feature.deletionVectors' = 'supported'" in sql
    assert "'delta.enableDeletionVectors' = 'true'" in sql
    assert "'delta.columnMapping.mode' = 'name'" in sql
    assert "'delta.appendOnly' = 'false'" in sql
    legacy = delta_spark.create_table_sql("file:///t", Create(schema=pa.schema([("a", pa.int32())]),
                                                              properties=protocol_properties(1, 2)))
    assert "'delta.minReaderVersion' = '1'" in legacy and "'delta.minWriterVersion' = '2'" in legacy


def test_raw_steps_are_unsupported_before_any_jvm():
    e = SparkEngine()
    ref = TableRef(format="delta", uri="/nonexistent")
    with pytest.raises(Unsupported, match="cannot run a Raw step") as info:
        e.write(ref, [Raw(fn=lambda s: None, description="tamper")])
    assert info.value.feature == "Raw"
    assert "Raw" not in e.capabilities().write_steps["delta"]


def test_formats_without_a_driver_are_unsupported():
    with pytest.raises(Unsupported, match="does not read orc tables"):
        SparkEngine().read(TableRef(format="orc", uri="/nonexistent"))
    caps = SparkEngine("4.0").capabilities()
    assert {"delta", "iceberg"} <= caps.read and {"delta", "iceberg"} <= caps.write
    # Read gaps per format (a writer gap must not keep Spark from reading a case).
    assert "timestamp-ns" in caps.unsupported["iceberg"] and "initial-default" not in caps.unsupported["iceberg"]
    assert "timestamp-ns" not in caps.unsupported.get("delta", {})


def test_translate_error_kinds():
    class Fake(Exception):
        def __init__(self, text, cond):
            super().__init__(text)
            self.cond = cond

        def getCondition(self):  # noqa: N802 - the Java name pyspark exposes
            return self.cond

    assert isinstance(delta_spark.translate(Fake("x", "DELTA_UNSUPPORTED_FEATURES_FOR_READ"), "t"), Unsupported)
    assert isinstance(delta_spark.translate(Fake("x", "DELTA_VERSIONS_NOT_CONTIGUOUS"), "t"), InvalidTable)
    other = delta_spark.translate(Fake("boom\n\tat org.Foo", "SOMETHING"), "t")
    assert type(other) is EngineError and other.kind == "error"  # no verdict on the table
    assert "boom" in str(other) and "org.Foo" not in str(other)


# ----------------------------------------------------------------------------------------------
# Iceberg SQL and catalog helpers (no JVM)


def test_iceberg_partition_sql_and_create():
    iceberg_create_sql, iceberg_partition_sql = iceberg_spark.iceberg_create_sql, iceberg_spark.iceberg_partition_sql

    assert iceberg_partition_sql("part") == "`part`"
    assert iceberg_partition_sql("bucket(16, id)") == "bucket(16, `id`)"
    assert iceberg_partition_sql("truncate(4, s)") == "truncate(4, `s`)"
    assert [iceberg_partition_sql(f"{t}(ts)") for t in ("year", "month", "day", "hour")] == [
        "years(`ts`)", "months(`ts`)", "days(`ts`)", "hours(`ts`)"]
    with pytest.raises(Unsupported, match="void"):
        iceberg_partition_sql("void(p)")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("ts", pa.timestamp("us", tz="UTC"))])
    sql = iceberg_create_sql("c.`ns`.`t`", Create(schema=schema, partition_by=("day(ts)",), properties={"format-version": "3"}))
    assert sql == ("CREATE TABLE c.`ns`.`t` (`id` BIGINT NOT NULL, `ts` TIMESTAMP) USING iceberg PARTITIONED BY "
                   "(days(`ts`)) TBLPROPERTIES ('format-version' = '3')")
    assert "'format-version' = '2'" in iceberg_create_sql("t", Create(schema=schema))  # explicit default
    with pytest.raises(Unsupported, match="nanosecond"):
        iceberg_create_sql("t", Create(schema=pa.schema([("t", pa.timestamp("ns"))])))
    with pytest.raises(Unsupported, match="table features"):
        iceberg_create_sql("t", Create(schema=schema, features=("deletionVectors",)))


def test_iceberg_add_column_defaults():
    iceberg_add_column_sql = iceberg_spark.iceberg_add_column_sql

    plain = iceberg_add_column_sql("t", pa.field("n", pa.int32()))
    assert plain == "ALTER TABLE t ADD COLUMNS (`n` INT)"
    meta = {"iceberg.initial-default": "7", "iceberg.write-default": "7"}
    assert iceberg_add_column_sql("t", pa.field("n", pa.int32(), metadata=meta)).endswith("`n` INT DEFAULT CAST(7 AS INT))")
    text = {"iceberg.initial-default": '"it\'s"', "iceberg.write-default": '"it\'s"'}
    assert "DEFAULT 'it\\'s'" in iceberg_add_column_sql("t", pa.field("s", pa.string(), metadata=text))
    null = {"iceberg.initial-default": "null", "iceberg.write-default": "null"}
    assert "DEFAULT" not in iceberg_add_column_sql("t", pa.field("s", pa.string(), metadata=null))
    with pytest.raises(Unsupported, match="one value for both"):
        iceberg_add_column_sql("t", pa.field("n", pa.int32(), metadata={"iceberg.initial-default": "1", "iceberg.write-default": "2"}))


def test_hadoop_catalog_location_and_paths():
    hadoop_catalog_location, iceberg_path = iceberg_spark.hadoop_catalog_location, iceberg_spark.iceberg_path

    assert hadoop_catalog_location("/data/wh/ns/t") == ("file:///data/wh", "ns", "t")
    assert hadoop_catalog_location("s3://b/root/ns/t/") == ("s3://b/root", "ns", "t")
    assert hadoop_catalog_location("s3a://b/ns/t") == ("s3://b", "ns", "t")  # Iceberg writes s3:// locations
    assert iceberg_path("s3a://b/x") == "s3://b/x"
    with pytest.raises(Unsupported, match="warehouse"):
        hadoop_catalog_location("s3://b/t")


def test_set_partitioning_sql():
    set_partitioning_sql = iceberg_spark.set_partitioning_sql

    assert set_partitioning_sql("t", ["a"], ["a"]) == []
    assert set_partitioning_sql("t", ["a"], ["a", "bucket(4, id)"]) == ["ALTER TABLE t ADD PARTITION FIELD bucket(4, `id`)"]
    assert set_partitioning_sql("t", ["a", "day(ts)"], []) == [
        "ALTER TABLE t DROP PARTITION FIELD `a`", "ALTER TABLE t DROP PARTITION FIELD days(`ts`)"]
    # A new order cannot be reached by appending: drop everything, add in order.
    assert set_partitioning_sql("t", ["a", "b"], ["b", "a"]) == [
        "ALTER TABLE t DROP PARTITION FIELD `a`", "ALTER TABLE t DROP PARTITION FIELD `b`",
        "ALTER TABLE t ADD PARTITION FIELD `b`", "ALTER TABLE t ADD PARTITION FIELD `a`"]


def test_translate_iceberg_errors():
    class JavaError(Exception):
        pass

    class UnsupportedOperationException(Exception):  # noqa: N818 - PySpark's class name
        pass

    def kind(text, *, reading=False, cls=JavaError):
        return type(iceberg_spark.translate(cls(text), "t", reading=reading)).__name__

    assert kind("Cannot read unsupported version 9") == "Unsupported"
    assert kind("Cannot convert unsupported type to Spark: timestamp_ns") == "Unsupported"
    assert kind("Spark does not support time fields", cls=UnsupportedOperationException) == "Unsupported"
    assert kind("org.apache.iceberg.exceptions.NotFoundException: File does not exist") == "InvalidTable"
    assert kind("java.lang.IllegalArgumentException: bad", reading=True) == "InvalidTable"
    assert kind("java.lang.IllegalArgumentException: bad") == "EngineError"  # a writer refusing stays an error
    wrapped = iceberg_spark.translate(JavaError("o1.load.\n: org.SparkException: [INTERNAL_ERROR] x\n\tat a.b\n"
                                                "Caused by: java.lang.NullPointerException: literal from null\n\tat c.d"),
                                      "t", reading=True)
    assert "NullPointerException: literal from null" in str(wrapped)  # the root cause is kept
