"""Bounded reading (``reference_impl.common.bounded``), confinement of local storage, ASCII integers."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib

import fastavro
import pytest

from reference_impl.common import bounded as B
from reference_impl.common.numbers import ascii_int
from reference_impl.errors import InvalidTable
from reference_impl.storage import LocalStorage, S3Storage


def test_inflate_is_refused_past_the_limit_without_holding_the_excess():
    bomb = gzip.compress(b"\0" * (8 << 20))
    with pytest.raises(InvalidTable, match="inflates to more than 1,048,576 bytes"):
        B.inflate("gzip", bomb, what="x", limit=1 << 20)
    with pytest.raises(InvalidTable, match="inflates to more than"):
        B.inflated_size("deflate", zlib.compress(b"\0" * (8 << 20))[2:-4], what="x", limit=1 << 20)
    assert B.inflate("gzip", gzip.compress(b"ab") + gzip.compress(b"cd") + b"\0\0", what="x") == b"abcd"
    for codec, data in (("bzip2", bz2.compress(b"hello")), ("xz", lzma.compress(b"hello")), ("gzip", gzip.compress(b"hello"))):
        assert B.inflate(codec, data, what="x") == b"hello"
        with pytest.raises(InvalidTable, match="ends inside|not valid compressed"):
            B.inflate(codec, data[:-6], what="x")


def test_inflate_json_text_estimates_what_parsing_would_take(monkeypatch):
    assert B.inflate_json_text(b'{"a": 1}', what="m") == b'{"a": 1}'  # plain text passes as is
    assert B.inflate_json_text(gzip.compress(b'{"a": [1, 2]}'), what="m") == b'{"a": [1, 2]}'
    monkeypatch.setenv("LAKECONF_MAX_PARSE_BYTES", str(1 << 20))
    with pytest.raises(InvalidTable, match="to parse"):
        B.inflate_json_text(gzip.compress(b"[" + b"[]," * 100_000 + b"[]]"), what="m")


def _avro(codec: str, n: int = 100) -> bytes:
    buf = io.BytesIO()
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]}
    fastavro.writer(buf, fastavro.parse_schema(schema), [{"a": i} for i in range(n)], codec=codec, sync_interval=64)
    return buf.getvalue()


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2", "xz"])
def test_avro_containers_are_walked_with_every_size_bounded(codec):
    data = _avro(codec)
    B.check_avro_container(data, what="f")
    for cut in (3, 10, len(data) - 3):
        with pytest.raises(InvalidTable):
            B.check_avro_container(data[:cut], what="f")
    with pytest.raises(InvalidTable, match="inflates to more than"):
        B.check_avro_container(data, what="f", limit=16)


def test_local_storage_never_follows_a_link_out_of_its_root(tmp_path):
    root, outside = tmp_path / "t", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_bytes(b"outside")
    (root / "inside").write_bytes(b"inside")
    os.symlink(outside / "secret", root / "d" / "link")
    os.symlink(outside, root / "dir")
    os.symlink(root / "inside", root / "d" / "ok")
    st = LocalStorage(str(root))
    assert st.read("d/ok") == b"inside"  # a link that stays inside is just a file
    for rel in ("d/link", "dir/secret"):
        with pytest.raises(InvalidTable, match="symbolic link"):
            st.read(rel)
        with pytest.raises(InvalidTable, match="symbolic link"):
            st.exists(rel)
        with pytest.raises(InvalidTable, match="symbolic link"):
            st.local_path(rel)
    with pytest.raises(InvalidTable, match="symbolic link"):
        st.list("dir")
    with pytest.raises(InvalidTable, match="symbolic link"):
        st.put_if_absent("dir/new", b"x")
    assert not (outside / "new").exists()
    assert "d/link" in [f.path for f in st.list("d")]  # listed, so that reading it refuses the table


def test_local_storage_read_errors_are_named(tmp_path):
    st = LocalStorage(str(tmp_path))
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(FileNotFoundError):
        st.read("f/under-a-file")
    (tmp_path / "dir").mkdir()
    with pytest.raises(InvalidTable, match="is a directory"):
        st.read("dir")
    with pytest.raises(InvalidTable, match="cannot read"):
        st.read("x" * 300)  # ENAMETOOLONG
    assert st.list("f") == []  # a file is no directory: nothing under it


def test_a_malformed_bucket_name_is_one_clear_error():
    for bad in ("Bad_Bucket", "ab", "a" * 64, "-abc", "a..b"):
        with pytest.raises(InvalidTable, match="is not a valid S3 bucket name"):
            S3Storage(f"s3://{bad}/t")


def test_ascii_int():
    assert ascii_int("12") == 12 and ascii_int("-3", signed=True) == -3
    for bad in ("²", "١", " 1", "1_0", "-3", "9" * 50, "", None, 5):
        assert ascii_int(bad) is None, bad
