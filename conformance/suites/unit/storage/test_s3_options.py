"""Per-client S3 options built from one S3Config: each client's spelling, no credentials in reprs."""

from __future__ import annotations

import pytest

from conformance.storage import s3_options
from reference_impl.storage import S3Config

CFG = S3Config(
    endpoint_url="http://127.0.0.1:9123",
    access_key_id="AKIDEXAMPLE",
    secret_access_key="s3cr3t'key",
    region="eu-west-1",
    allow_http=True,
)


def test_object_store_options():
    assert s3_options.object_store_options(CFG) == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9123",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t'key",
        "AWS_REGION": "eu-west-1",
    }


def test_object_store_options_for_aws_itself_have_no_endpoint():
    opts = s3_options.object_store_options(S3Config(region="us-east-2", allow_http=False))
    assert opts == {"AWS_REGION": "us-east-2", "AWS_ALLOW_HTTP": "false"}


def test_polars_options():
    opts = s3_options.polars_options(CFG)
    assert opts["aws_endpoint_url"] == "http://127.0.0.1:9123"
    assert opts["aws_allow_http"] == "true"
    assert opts["aws_access_key_id"] == "AKIDEXAMPLE"
    assert opts["aws_secret_access_key"] == "s3cr3t'key"
    assert opts["aws_region"] == "eu-west-1"


def test_duckdb_secret_sql():
    sql = s3_options.duckdb_secret_sql(CFG, name="s1", scope="s3://b")
    assert sql.startswith("CREATE OR REPLACE SECRET s1 (TYPE s3, ")
    assert "ENDPOINT '127.0.0.1:9123'" in sql
    assert "URL_STYLE 'path'" in sql and "USE_SSL false" in sql
    assert "SECRET 's3cr3t''key'" in sql  # quote doubled, not injected
    assert "REGION 'eu-west-1'" in sql and "SCOPE 's3://b'" in sql


def test_duckdb_secret_sql_parses():
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(s3_options.duckdb_secret_sql(CFG))
    except duckdb.Error as exc:  # without httpfs loaded DuckDB knows no s3 secret type
        assert "s3" in str(exc).lower()
    with pytest.raises(ValueError, match="identifier"):
        s3_options.duckdb_secret_sql(CFG, name="x; DROP")


def test_duckdb_secret_with_https_endpoint_uses_ssl():
    sql = s3_options.duckdb_secret_sql(S3Config(endpoint_url="https://s3.example:443"))
    assert "USE_SSL true" in sql and "ENDPOINT 's3.example:443'" in sql


def test_pyiceberg_properties():
    from conformance.formats.iceberg.s3 import pyiceberg_properties

    props = pyiceberg_properties(CFG)
    assert props["s3.endpoint"] == "http://127.0.0.1:9123"
    assert props["s3.access-key-id"] == "AKIDEXAMPLE"
    assert props["s3.secret-access-key"] == "s3cr3t'key"
    assert props["s3.region"] == "eu-west-1"


def test_spark_s3a_conf():
    conf = s3_options.spark_s3a_conf(CFG)
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9123"
    assert conf["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.access.key"] == "AKIDEXAMPLE"
    assert conf["spark.hadoop.fs.s3a.secret.key"] == "s3cr3t'key"
    assert conf["spark.hadoop.fs.s3a.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"


def test_daft_io_config():
    pytest.importorskip("daft")
    io = s3_options.daft_io_config(CFG)
    assert io.s3.endpoint_url == "http://127.0.0.1:9123"
    assert io.s3.key_id == "AKIDEXAMPLE"
    assert io.s3.region_name == "eu-west-1"
    assert io.s3.use_ssl is False


def test_redact():
    text = "failed with AKIDEXAMPLE / s3cr3t'key"
    assert s3_options.redact(text, CFG) == "failed with *** / ***"
    assert s3_options.redact(text, None) == text


def test_s3config_repr_hides_secret():
    assert "s3cr3t" not in repr(CFG) and "AKIDEXAMPLE" not in repr(CFG)


def test_table_options_round_trip_to_the_config():
    # The harness hands engines delta-rs options in the TableRef; each adapter rebuilds the config.
    assert s3_options.config_from_options(s3_options.object_store_options(CFG)) == CFG
    lower = {k.lower(): v for k, v in s3_options.object_store_options(CFG).items()}
    assert s3_options.config_from_options(lower) == CFG
    assert s3_options.config_from_options({}) is None and s3_options.config_from_options(None) is None


def test_every_adapter_takes_its_settings_from_the_table_options():
    from conformance.engines._common import s3_config
    from conformance.model import TableRef

    table = TableRef(format="delta", uri="s3://b/t", storage_options=s3_options.object_store_options(CFG))
    assert s3_config(table) == CFG
    assert s3_config(TableRef(format="delta", uri="/tmp/t", storage_options={})) is None
