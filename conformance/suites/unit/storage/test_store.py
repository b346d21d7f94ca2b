"""Store and open_store: local, MinIO and an existing S3 endpoint."""

from __future__ import annotations

import os

import pytest

from conformance.storage import KINDS, MinioUnavailable, Store, open_store, store_unavailable_reason
from conformance.storage.testing import skip_without_minio


def test_local_store(tmp_path):
    store = open_store("local", str(tmp_path))
    uri = store.table_uri("delta", "case-1")
    assert uri == os.path.join(str(tmp_path), "tables", "delta", "case-1")
    assert store.s3_config is None and store.storage_options == {} and store.bucket is None
    assert not store.is_s3
    ref = store.table_ref("delta", "x")
    assert ref.uri.endswith("/tables/x") and ref.storage_options == {}
    store.close()
    assert store.closed


@pytest.mark.parametrize("bad", ["..", "/abs", "", "a\\b"])
def test_table_uri_refuses_escaping_parts(tmp_path, bad):
    store = open_store("local", str(tmp_path))
    with pytest.raises(ValueError, match="bad table path component"):
        store.table_uri(bad)


def test_unknown_kind(tmp_path):
    with pytest.raises(ValueError, match="unknown store kind 'gcs'"):
        open_store("gcs", str(tmp_path))
    assert "unknown store kind" in store_unavailable_reason("gcs")
    assert KINDS == ("local", "minio", "s3")


def test_s3_store_needs_bucket(monkeypatch, tmp_path):
    monkeypatch.delenv("LAKECONF_S3_BUCKET", raising=False)
    assert "LAKECONF_S3_BUCKET" in store_unavailable_reason("s3")
    with pytest.raises(MinioUnavailable, match="LAKECONF_S3_BUCKET"):
        open_store("s3", str(tmp_path))


def test_s3_store_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKECONF_S3_BUCKET", "my-bucket")
    monkeypatch.setenv("LAKECONF_S3_PREFIX", "ci/")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AK")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SK")
    a, b = open_store("s3", str(tmp_path)), open_store("s3", str(tmp_path))
    assert a.root.startswith("s3://my-bucket/ci/run-") and a.root != b.root  # one prefix per run
    assert a.bucket == "my-bucket"
    assert a.table_uri("t") == a.root + "/t"
    assert a.storage_options["AWS_ENDPOINT_URL"] == "http://127.0.0.1:1"
    assert "SK" not in repr(a)


def test_minio_store(tmp_path):
    skip_without_minio()
    store = open_store("minio", str(tmp_path))
    try:
        assert store.name == "minio" and store.is_s3
        uri = store.table_uri("delta", "t1")
        assert uri == f"s3://{store.bucket}/tables/delta/t1"
        opts = store.storage_options
        assert set(opts) == {"AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}
        assert opts["AWS_SECRET_ACCESS_KEY"] not in repr(store)
        storage = store.storage(uri)
        storage.put_if_absent("x", b"1")
        assert storage.read("x") == b"1"
        server = store._server
    finally:
        store.close()
    assert not server.running


def test_store_is_a_context_manager(tmp_path):
    with Store("local", str(tmp_path)) as store:
        pass
    assert store.closed
