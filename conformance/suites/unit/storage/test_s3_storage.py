"""The reference's S3Storage against a real S3 endpoint (MinIO): reads, listings, conditional puts."""

from __future__ import annotations

import uuid

import pytest

from reference_impl.errors import CommitConflict, InvalidTable
from reference_impl.storage import S3Storage, open_storage


@pytest.fixture
def storage(minio):
    return S3Storage(f"s3://{minio.bucket}/t-{uuid.uuid4().hex[:8]}", minio.s3_config)


def test_write_read_list_walk(storage):
    storage.put_if_absent("_delta_log/00000000000000000000.json", b'{"a":1}\n')
    storage.write_atomic("_delta_log/_last_checkpoint", b"{}")
    storage.put_if_absent("part-0.parquet", b"PAR1")
    storage.put_if_absent("p=1/part-1.parquet", b"PAR1xx")
    assert storage.read("_delta_log/00000000000000000000.json") == b'{"a":1}\n'
    assert [f.path for f in storage.list("_delta_log")] == [
        "_delta_log/00000000000000000000.json",
        "_delta_log/_last_checkpoint",
    ]
    assert [f.path for f in storage.list("")] == ["part-0.parquet"]  # not recursive
    walked = {f.path: f.size for f in storage.walk()}
    assert walked == {
        "_delta_log/00000000000000000000.json": 8,
        "_delta_log/_last_checkpoint": 2,
        "part-0.parquet": 4,
        "p=1/part-1.parquet": 6,
    }
    assert all(f.modification_time > 1_600_000_000_000 for f in storage.walk())
    assert storage.exists("part-0.parquet") and not storage.exists("nope")


def test_storages_of_one_endpoint_share_a_client_and_listings_keep_their_times(minio):
    import time

    from reference_impl import storage as ST

    a = S3Storage(f"s3://{minio.bucket}/t-{uuid.uuid4().hex[:8]}", minio.s3_config)
    b = S3Storage(f"s3://{minio.bucket}/t-{uuid.uuid4().hex[:8]}", minio.s3_config)
    assert a._client is b._client
    before = time.time() * 1000
    a.put_if_absent("x/f", b"1")
    listed = a.list("x")[0].modification_time
    # S3 keeps whole seconds or milliseconds; the listed time is the object's, within the clock's skew.
    assert before - 2000 <= listed <= time.time() * 1000 + 2000
    assert ST._timestamp("2026-11-27T05:33:53.123Z") == ST._timestamp("Fri, 27 Nov 2026 05:33:53.123 GMT")
    assert ST._timestamp("2026-11-27T05:33:53Z").utcoffset().total_seconds() == 0


def test_read_missing_is_file_not_found(storage):
    with pytest.raises(FileNotFoundError):
        storage.read("_delta_log/00000000000000000009.json")


def test_put_if_absent_conflict(storage):
    storage.put_if_absent("_delta_log/00000000000000000001.json", b"first")
    with pytest.raises(CommitConflict) as info:
        storage.put_if_absent("_delta_log/00000000000000000001.json", b"second")
    assert "already exists" in str(info.value)
    assert storage.read("_delta_log/00000000000000000001.json") == b"first"  # loser left no trace


def test_write_atomic_replaces_and_delete(storage):
    storage.write_atomic("_delta_log/_last_checkpoint", b"old")
    storage.write_atomic("_delta_log/_last_checkpoint", b"new")
    assert storage.read("_delta_log/_last_checkpoint") == b"new"
    storage.delete("_delta_log/_last_checkpoint")
    assert not storage.exists("_delta_log/_last_checkpoint")
    storage.delete("_delta_log/_last_checkpoint")  # absent: no error


def test_paths_cannot_escape_the_root(storage):
    with pytest.raises(InvalidTable, match="escapes the table root"):
        storage.read("../other/x")


def test_open_storage_s3_uri(minio):
    st = open_storage(f"s3://{minio.bucket}/abc", s3=minio.s3_config)
    assert isinstance(st, S3Storage) and st.root == f"s3://{minio.bucket}/abc"


def test_directory_markers_are_not_files(storage):
    """Hadoop's S3A (Spark) writes an empty object named ``<dir>/`` for each directory it makes; a
    listing must not return it as a file (the validator then flagged ``_staged_commits/`` by name)."""
    storage._client.put_object(Bucket=storage.bucket, Key=storage._key("_delta_log/_staged_commits") + "/", Body=b"")
    storage.put_if_absent("_delta_log/00000000000000000000.json", b"{}\n")
    assert [f.path for f in storage.list("_delta_log/_staged_commits")] == []
    assert [f.path for f in storage.walk()] == ["_delta_log/00000000000000000000.json"]
