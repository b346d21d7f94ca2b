"""Fixtures of the commit-safety suite: each test runs on local disk and on MinIO."""

from __future__ import annotations

import pytest

from conformance.storage import Store, open_store
from conformance.storage.testing import skip_without_minio


@pytest.fixture(scope="module", params=["local", "minio"])
def store(request, tmp_path_factory) -> Store:
    """A store per kind (MinIO: skipped with the reason when no server can start, failed when required)."""
    if request.param == "minio":
        skip_without_minio()
    opened = open_store(request.param, str(tmp_path_factory.mktemp(f"commit-safety-{request.param}")))
    yield opened
    opened.close()
