"""The per-client option builders work against a real endpoint: delta-rs and DuckDB on MinIO.

delta-rs writes a partitioned Delta table (two commits, S3 conditional put), DuckDB reads it with
``delta_scan`` and appends to it through ``ATTACH ... (TYPE delta)``, delta-rs reads DuckDB's
commit back, and the reference reads the raw log through S3Storage. Extensions are loaded from the
duckdb-extension-* wheels, never downloaded.
"""

from __future__ import annotations

import glob
import os
import uuid

import pyarrow as pa
import pytest

from conformance.storage import s3_options
from reference_impl.storage import S3Storage

deltalake = pytest.importorskip("deltalake")
duckdb = pytest.importorskip("duckdb")

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "part": pa.array(["a", "b", "a"])})


def _extension(package: str, name: str) -> str:
    mod = pytest.importorskip(package)
    found = glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "v*", f"{name}.duckdb_extension"))
    if not found:
        pytest.skip(f"{package} ships no {name}.duckdb_extension")
    return found[0]


@pytest.fixture
def duck(minio):
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"LOAD '{_extension('duckdb_extension_httpfs', 'httpfs')}'")
    con.execute(f"LOAD '{_extension('duckdb_extension_delta', 'delta')}'")
    con.execute(s3_options.duckdb_secret_sql(minio.s3_config))
    yield con
    con.close()


@pytest.fixture
def table_uri(minio):
    return f"s3://{minio.bucket}/clients-{uuid.uuid4().hex[:8]}"


def _sorted_ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def test_deltalake_round_trip(minio, table_uri):
    opts = s3_options.object_store_options(minio.s3_config)
    deltalake.write_deltalake(table_uri, ROWS, partition_by=["part"], storage_options=opts)
    deltalake.write_deltalake(table_uri, ROWS, mode="append", storage_options=opts)
    dt = deltalake.DeltaTable(table_uri, storage_options=opts)
    assert dt.version() == 1
    assert _sorted_ids(dt.to_pyarrow_table()) == [1, 1, 2, 2, 3, 3]
    assert dt.metadata().partition_columns == ["part"]
    log = [f.path for f in S3Storage(table_uri, minio.s3_config).list("_delta_log")]
    assert log[:2] == ["_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json"]


def test_deltalake_concurrent_create_conflicts(minio, table_uri):
    """delta-rs commits with a conditional put: a second writer of version 0 must fail, not overwrite."""
    opts = s3_options.object_store_options(minio.s3_config)
    S3Storage(table_uri, minio.s3_config).put_if_absent("_delta_log/00000000000000000000.json", b"{}\n")
    deltalake.write_deltalake(table_uri + "-other", ROWS, storage_options=opts)  # sanity: writes work
    with pytest.raises(Exception):
        deltalake.write_deltalake(table_uri, ROWS, storage_options=opts)
    assert S3Storage(table_uri, minio.s3_config).read("_delta_log/00000000000000000000.json") == b"{}\n"


def test_duckdb_reads_and_writes_delta(minio, table_uri, duck):
    opts = s3_options.object_store_options(minio.s3_config)
    deltalake.write_deltalake(table_uri, ROWS, partition_by=["part"], storage_options=opts)
    assert duck.execute(f"SELECT count(*), sum(id) FROM delta_scan('{table_uri}')").fetchone() == (3, 6)
    duck.execute(f"ATTACH '{table_uri}' AS dt (TYPE delta, READ_ONLY false)")  # remote paths attach read-only by default
    duck.execute("INSERT INTO dt VALUES (10, 'c')")
    duck.execute("DETACH dt")
    dt = deltalake.DeltaTable(table_uri, storage_options=opts)
    assert dt.version() == 1
    assert _sorted_ids(dt.to_pyarrow_table()) == [1, 2, 3, 10]


def test_duckdb_httpfs_parquet_round_trip(minio, duck):
    uri = f"s3://{minio.bucket}/duck-{uuid.uuid4().hex[:8]}/x.parquet"
    duck.execute(f"COPY (SELECT 42 AS x) TO '{uri}' (FORMAT parquet)")
    assert duck.execute(f"SELECT x FROM read_parquet('{uri}')").fetchall() == [(42,)]
