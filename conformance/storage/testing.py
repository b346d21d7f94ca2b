"""Pytest helpers for suites that need an object store: skip with the reason, or fail when required.

A test that needs MinIO is *skipped* with a reason naming what to install when no server can be
started here, never passed silently; with LAKECONF_REQUIRE_MINIO=1 (CI after .ci/install-minio) the
same situation is a *failure*, so a broken install cannot turn the S3 suites into skips.
"""

from __future__ import annotations

import os

from conformance.storage.minio import MinioServer, minio_unavailable_reason


def require_minio() -> bool:
    """Whether a missing MinIO is an error (LAKECONF_REQUIRE_MINIO=1) rather than a skip."""
    return os.environ.get("LAKECONF_REQUIRE_MINIO", "") not in ("", "0", "false")


def skip_without_minio() -> None:
    """``pytest.skip`` (or ``pytest.fail`` when required) with the reason if MinIO cannot run here."""
    import pytest

    reason = minio_unavailable_reason()
    if reason:
        if require_minio():
            pytest.fail(f"LAKECONF_REQUIRE_MINIO is set but MinIO cannot run: {reason}")
        pytest.skip(f"MinIO not available: {reason}")


def minio_or_skip(tmp_dir: str) -> MinioServer:
    """A started MinIO server, or ``pytest.skip`` / ``pytest.fail`` with the reason."""
    skip_without_minio()
    return MinioServer(workdir=tmp_dir).start()


def store_or_skip(kind: str, workdir: str):
    """A ``Store`` of ``kind`` (``local`` or ``minio``) to use as a context manager; for MinIO,
    ``pytest.skip`` (or fail when required) with the reason when no server can start here."""
    from conformance.storage import open_store

    if kind == "minio":
        skip_without_minio()
    return open_store(kind, workdir)
