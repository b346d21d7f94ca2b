"""What the Python Paimon engines (pypaimon, pypaimon-rust) share: the kit's refusal kinds, the table
directory as both bindings take it, and a ``--as-of`` time as Paimon's ``scan.timestamp-millis``."""

from __future__ import annotations

import datetime as _dt
import os

from conformance.engines._common import local_path, parse_timestamp
from conformance.model import TableRef


def unsupported(message: str, feature: str | None = None):
    from reference_impl.errors import Unsupported

    return Unsupported(message, feature=feature)


def invalid(message: str, rule: str | None = None):
    from reference_impl.errors import InvalidTable

    return InvalidTable(message, rule=rule)


def location(table: TableRef) -> str:
    """The table directory as the bindings take it: an absolute path locally, the URI on S3."""
    path = local_path(table.uri)
    return os.path.abspath(path) if path is not None else table.uri.rstrip("/")


def timestamp_ms(text: str) -> int:
    """An ISO-8601 time or epoch milliseconds as epoch milliseconds."""
    value = parse_timestamp(text)
    return int((value - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)) // _dt.timedelta(milliseconds=1))
