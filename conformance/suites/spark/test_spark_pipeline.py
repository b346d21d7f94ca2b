"""The whole pipeline on MinIO with Spark as a writer and a reader (``lakeconf run --store minio``).

Spark writes a few cases on MinIO, every reader reads Spark's tables, Spark reads the reference's
tables; every cell is explained and the run exits 0. Skipped with the reason without pyspark or
Java (a failure with LAKECONF_REQUIRE_SPARK=1), and without MinIO (a failure with
LAKECONF_REQUIRE_MINIO=1).
"""

from __future__ import annotations

import pytest

from conformance.suites.cross_engine.test_pipeline_on_minio import readers_of, run_on_minio

pytestmark = pytest.mark.spark

SPARK_CASES = "delta/basic-append,delta/partitioned-string,delta/checkpoint-classic,delta/deletion-vectors"


@pytest.mark.slow
@pytest.mark.rule("DELTA-LOG-001", "DELTA-CKPT-001", "DELTA-DV-004")
def test_spark_writes_and_reads_on_minio(spark_engine, tmp_path, monkeypatch, capsys):
    spark = spark_engine.name  # the line this interpreter runs: ``spark`` or ``spark-3.5``
    READERS = ",".join(readers_of("delta"))
    code, doc, printed = run_on_minio(["run", "--format", "delta", "--engines", READERS + "," + spark,
                                       "--cases", SPARK_CASES], tmp_path, monkeypatch, capsys)
    assert doc["store"] == "minio"
    assert spark in doc["engine_startup_seconds"]  # ~0 s when an earlier test started the session
    cases = set(SPARK_CASES.split(","))
    by_writer = {(r["case"], r["writer"], r["reader"]) for r in doc["results"]}
    for case in cases:
        for reader in [*READERS.split(","), spark]:
            assert (case, spark, reader) in by_writer, f"{reader} did not read Spark's {case}"
            assert (case, "reference", reader) in by_writer
    spark_built = [r for r in doc["results"] if r["writer"] == spark]
    # partial: the rows match and the reader cannot describe the table's metadata (DuckDB, Polars, Daft)
    fine = ("pass", "partial", "unsupported")
    assert all(r["status"] in fine for r in spark_built), [
        (r["case"], r["reader"], r["status"], r["message"]) for r in spark_built if r["status"] not in fine]
    assert all(r["status"] == "pass" for r in doc["results"] if r["reader"] == "reference")
    # Spark reads every table, or refuses it for a registered reason (delta-spark 3.3 and the
    # variantType feature delta-rs lists, say).
    assert all(r["status"] in ("pass", "partial") or r.get("finding") for r in doc["results"] if r["reader"] == spark)
    # the reference validator judged every table Spark built on MinIO; nothing it found is unexplained
    checked = {(e["case"], e["writer"]) for e in doc["writer_checks"]}
    assert {(c, spark) for c in cases} <= checked
    from conformance.writer_checks import unexplained

    assert not [(e["case"], e["writer"], unexplained(e)) for e in doc["writer_checks"] if unexplained(e)]
    assert code == 0, printed
