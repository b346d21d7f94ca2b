"""Fixtures of the peer-tables suite: local and MinIO stores, and ``lakeconf`` as a user runs it.

Peer writers build real tables the way their users do (a catalog, a path, an S3 URI); the tests
point the command line at them the way those users would, and compare what it reads with the
peer's own reading.
"""

from __future__ import annotations

import pytest

from conformance.storage import Store
from conformance.storage.testing import store_or_skip
from conformance.suites.clirun import LakeconfCli


@pytest.fixture(scope="module", params=["local", "minio"])
def store(request, tmp_path_factory) -> Store:
    """Each test runs on local disk and on MinIO (skipped with the reason without MinIO)."""
    with store_or_skip(request.param, str(tmp_path_factory.mktemp(f"peers-{request.param}"))) as store:
        yield store


@pytest.fixture
def lakeconf(store, monkeypatch, tmp_path) -> LakeconfCli:
    return LakeconfCli(store, monkeypatch, tmp_path)
