"""Object stores for the suites: a local directory, a throw-away MinIO, or an existing S3 endpoint.

``open_store(kind, workdir)`` gives a ``Store``: where tables go (``table_uri``), how engines reach
them (``s3_config``, ``storage_options``; per-client spellings in ``s3_options``), and ``close()``.
Tables of one store live under one root; on a shared S3 bucket each store gets its own run prefix
so that concurrent runs never see each other's tables.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from typing import Mapping

from conformance.storage import s3_options
from conformance.storage.minio import MinioServer, MinioUnavailable, find_minio_binary, minio_unavailable_reason
from reference_impl.storage import S3Config, Storage, open_storage

KINDS = ("local", "minio", "s3")

__all__ = [
    "KINDS",
    "MinioServer",
    "MinioUnavailable",
    "Store",
    "find_minio_binary",
    "minio_unavailable_reason",
    "open_store",
    "s3_options",
    "store_unavailable_reason",
]


def _clean_part(part: str) -> str:
    if not part or part in (".", "..") or part.startswith("/") or "\\" in part:
        raise ValueError(f"bad table path component {part!r}")
    return part.strip("/")


class Store:
    """Where the suites put tables, and what engines need to reach them."""

    def __init__(
        self,
        name: str,
        root: str,
        *,
        s3_config: S3Config | None = None,
        server: MinioServer | None = None,
    ) -> None:
        if name not in KINDS:
            raise ValueError(f"unknown store kind {name!r}; expected one of {KINDS}")
        self.name = name
        self.root = root.rstrip("/")  # a local absolute path, or s3://bucket/prefix
        self._s3_config = s3_config
        self._server = server
        self.closed = False

    def __repr__(self) -> str:  # no credentials
        return f"Store(name={self.name!r}, root={self.root!r})"

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def table_uri(self, *parts: str) -> str:
        """Location of a table under the store root (local path, or ``s3://bucket/...``)."""
        clean = [_clean_part(p) for p in parts]
        if self.name == "local":
            return os.path.join(self.root, *clean)
        return posixpath.join(self.root, *clean)

    @property
    def is_s3(self) -> bool:
        """Whether tables live on an S3 endpoint (MinIO or S3)."""
        return self.name != "local"

    @property
    def s3_config(self) -> S3Config | None:
        """Endpoint and credentials (``None`` for local disk)."""
        return self._s3_config

    @property
    def storage_options(self) -> dict[str, str]:
        """object_store-style options (AWS_ENDPOINT_URL, AWS_ALLOW_HTTP, keys, AWS_REGION); empty for local."""
        return s3_options.object_store_options(self._s3_config) if self._s3_config else {}

    @property
    def startup_seconds(self) -> float | None:
        """How long starting the MinIO server took (``None`` when this store started none)."""
        return self._server.startup_seconds if self._server is not None else None

    @property
    def bucket(self) -> str | None:
        """The bucket holding the tables (``None`` for local disk)."""
        if not self.is_s3:
            return None
        return self.root[len("s3://") :].split("/", 1)[0]

    def storage(self, uri: str) -> Storage:
        """The reference's ``Storage`` for a table location of this store."""
        return open_storage(uri, s3=self._s3_config)

    def table_ref(self, fmt: str, *parts: str):
        """A harness ``TableRef`` for a table of format ``fmt`` at ``parts``."""
        from conformance.model import TableRef

        return TableRef(format=fmt, uri=self.table_uri(*parts), storage_options=self.storage_options)

    def close(self) -> None:
        """Stop the MinIO server if this store started one; local tables stay for inspection."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.closed = True


def store_unavailable_reason(kind: str) -> str | None:
    """``None`` when ``open_store(kind, ...)`` can work here, else why not (for skip messages)."""
    if kind == "local":
        return None
    if kind in ("minio", "s3"):
        from conformance.engines._common import missing_module

        reason = missing_module("boto3", "s3")  # the reference's S3 storage talks to the store through it
        if reason:
            return reason
    if kind == "minio":
        return minio_unavailable_reason()
    if kind == "s3":
        if not os.environ.get("LAKECONF_S3_BUCKET"):
            return "LAKECONF_S3_BUCKET is not set (and AWS_* credentials / AWS_ENDPOINT_URL for the endpoint)"
        return None
    return f"unknown store kind {kind!r}; expected one of {KINDS}"


def open_store(kind: str, workdir: str, *, options: Mapping[str, str] | None = None) -> Store:
    """Open a store: ``local`` (a directory under ``workdir``), ``minio`` (a new server) or ``s3``.

    ``s3`` uses an existing endpoint: LAKECONF_S3_BUCKET (required), LAKECONF_S3_PREFIX (optional),
    and the usual AWS_* variables (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    AWS_REGION, AWS_ALLOW_HTTP).
    """
    if kind == "local":
        root = os.path.abspath(os.path.join(workdir, "tables"))
        os.makedirs(root, exist_ok=True)
        return Store("local", root)
    if kind == "minio":
        os.makedirs(workdir, exist_ok=True)
        server = MinioServer(workdir=workdir, **dict(options or {})).start()
        return Store("minio", f"s3://{server.bucket}/tables", s3_config=server.s3_config, server=server)
    if kind == "s3":
        reason = store_unavailable_reason("s3")
        if reason:
            raise MinioUnavailable(reason)
        bucket = os.environ["LAKECONF_S3_BUCKET"]
        prefix = os.environ.get("LAKECONF_S3_PREFIX", "lakeconf").strip("/")
        run = f"run-{uuid.uuid4().hex[:12]}"
        root = f"s3://{bucket}/{prefix}/{run}" if prefix else f"s3://{bucket}/{run}"
        return Store("s3", root, s3_config=S3Config.from_env())
    raise ValueError(f"unknown store kind {kind!r}; expected one of {KINDS}")
