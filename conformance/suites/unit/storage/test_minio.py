"""MinioServer: start-up, credentials kept out of logs, clear errors, complete teardown."""

from __future__ import annotations

import os
import urllib.request

import pytest

from conformance.storage import minio as minio_mod
from conformance.storage.minio import MinioServer, MinioUnavailable, free_port


def test_free_port_is_bindable():
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    assert 0 < port < 65536


def test_repr_hides_credentials():
    server = MinioServer()
    text = repr(server) + str(server) + repr(server.__dict__.get("bucket"))
    assert server.secret_key not in text
    assert server.access_key not in text
    assert "MinioServer(" in repr(server)


def test_credentials_are_generated_per_server():
    a, b = MinioServer(), MinioServer()
    assert a.secret_key != b.secret_key and a.access_key != b.access_key
    assert a.bucket != b.bucket  # s3a caches a file system per bucket name
    assert len(a.secret_key) >= 8


def test_scrub_replaces_both_keys():
    server = MinioServer()
    text = f"RootUser: {server.access_key} RootPass: {server.secret_key}"
    assert server.scrub(text) == "RootUser: *** RootPass: ***"


def test_missing_binary_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIO_BINARY", str(tmp_path / "no-such-minio"))
    monkeypatch.setattr(minio_mod, "docker_available", lambda: False)
    with pytest.raises(MinioUnavailable) as info:
        MinioServer(workdir=str(tmp_path)).start()
    message = str(info.value)
    assert "install-minio" in message and "MINIO_BINARY" in message
    assert minio_mod.find_minio_binary() is None


def test_binary_that_exits_reports_its_output_scrubbed(tmp_path):
    fake = tmp_path / "fake-minio"
    fake.write_text('#!/bin/sh\necho "boom: $MINIO_ROOT_PASSWORD"\nexit 3\n')
    fake.chmod(0o755)
    server = MinioServer(binary=str(fake), workdir=str(tmp_path), startup_timeout=5)
    with pytest.raises(MinioUnavailable) as info:
        server.start()
    message = str(info.value)
    assert "exited with code 3" in message and "boom: ***" in message
    assert server.secret_key not in message
    assert list(tmp_path.glob("lakeconf-minio-*")) == []  # data dir removed on failure


def test_server_lifecycle(minio, tmp_path):
    with MinioServer(workdir=str(tmp_path)) as server:
        assert server.running
        with urllib.request.urlopen(f"{server.endpoint_url}/minio/health/live", timeout=5) as resp:
            assert resp.status == 200
        assert server.endpoint_url.startswith("http://127.0.0.1:")
        assert server.console_url != server.endpoint_url
        data_dir = server.data_dir
        assert data_dir and os.path.isdir(data_dir)
        cfg = server.s3_config
        assert cfg.endpoint_url == server.endpoint_url and server.secret_key not in repr(cfg)
        proc = server._proc
    assert not server.running
    assert proc.poll() is not None
    assert not os.path.exists(data_dir)
    server.stop()  # idempotent


def test_bucket_exists(minio):
    import boto3

    from conformance.storage.s3_options import boto3_client_kwargs

    client = boto3.client("s3", **boto3_client_kwargs(minio.s3_config))
    names = [b["Name"] for b in client.list_buckets()["Buckets"]]
    assert minio.bucket in names
