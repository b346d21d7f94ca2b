"""Small helpers the engine adapters share: locations, timestamps, versions, S3 options."""

from __future__ import annotations

import datetime as _dt
from importlib import metadata as _metadata
from typing import Mapping
from urllib.parse import unquote, urlparse

from conformance.model import TableRef


def local_path(uri: str) -> str | None:
    """The file-system path of a local location (plain path or ``file://``), else ``None``."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if parsed.scheme == "" or len(parsed.scheme) == 1:
        return uri
    return None


def engine_uri(table: TableRef) -> str:
    """The location in the form most engines accept: a plain path for local tables."""
    return local_path(table.uri) or table.uri


def is_s3(table: TableRef) -> bool:
    """Whether the table lives in an S3-compatible store."""
    return urlparse(table.uri).scheme in ("s3", "s3a")


def parse_timestamp(text: str) -> _dt.datetime:
    """An ISO-8601 timestamp as an aware datetime; a naive one is read as UTC."""
    value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value


def package_version(name: str) -> str:
    """The installed distribution's version, or ``"not installed"``."""
    try:
        return _metadata.version(name)
    except _metadata.PackageNotFoundError:
        return "not installed"


def missing_module(name: str, extra: str | None = None) -> str | None:
    """``None`` if ``name`` imports, else why not (shown as the engine's unavailability reason),
    with the command that installs the kit's ``extra`` carrying it."""
    try:
        __import__(name)
    except Exception as exc:  # an engine's broken install must not stop the others
        from conformance.project import install_hint

        hint = f" ({install_hint(extra)})" if extra else ""
        return f"cannot import {name}: {type(exc).__name__}: {exc}{hint}"
    return None


def s3_config(table: TableRef):
    """The table's ``S3Config`` (from its storage options), or ``None`` for local tables."""
    from conformance.storage.s3_options import config_from_options

    return config_from_options(table.storage_options) if is_s3(table) else None


def s3_options(options: Mapping[str, str]) -> dict[str, str]:
    """object_store storage options for a table's options (one spelling, from conformance.storage.s3_options)."""
    from conformance.storage.s3_options import config_from_options, object_store_options

    cfg = config_from_options(options)
    return object_store_options(cfg) if cfg is not None else {}


def project_version() -> str:
    """lakeconf's own version (see ``conformance.project``)."""
    from conformance.project import version

    return version()
