"""Fixtures of the storage suite: one MinIO server for the module that asks for it."""

from __future__ import annotations

import pytest

from conformance.storage.testing import minio_or_skip


@pytest.fixture(scope="module")
def minio(tmp_path_factory):
    """A running MinIO server (skipped with the reason when none can start here)."""
    server = minio_or_skip(str(tmp_path_factory.mktemp("minio")))
    yield server
    server.stop()
