"""Fixtures of the peer-tables suite: local and MinIO stores, and ``lakeconf`` as a user runs it.

Peer writers build real tables the way their users do (a catalog, a path, an S3 URI); the tests
point the command line at them the way those users would, and compare what it reads with the
peer's own reading.
"""

from __future__ import annotations

import pytest

from conformance.storage import Store, open_store
from conformance.storage.testing import skip_without_minio
from conformance.suites.clirun import LakeconfCli


@pytest.fixture(scope="module", params=["local", "minio"])
def store(request, tmp_path_factory) -> Store:
    """Each test runs on local disk and on MinIO (skipped with the reason without MinIO)."""
    workdir = str(tmp_path_factory.mktemp(f"peers-{request.param}"))
    if request.param == "minio":
        skip_without_minio()
    store = open_store(request.param, workdir)
    yield store
    store.close()


@pytest.fixture
def lakeconf(store, monkeypatch, tmp_path) -> LakeconfCli:
    return LakeconfCli(store, monkeypatch, tmp_path)
