"""Value helpers every format's case corpus writes its expectations with (writer-neutral, by hand).

Instants, wall-clock timestamps and dates from ISO text, special floats and decimals, and tables from
positional row tuples. A format's ``cases.py`` imports these and keeps its own spelling only for the
values that are its own.
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import Any, Iterable

import pyarrow as pa

UTC = _dt.timezone.utc
D = Decimal
NAN = float("nan")
INF = float("inf")


def ts(text: str) -> _dt.datetime:
    """A UTC instant from ISO text (a timestamp with time zone: Arrow tz=UTC)."""
    return _dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def ntz(text: str) -> _dt.datetime:
    """A wall-clock timestamp without zone from ISO text."""
    return _dt.datetime.fromisoformat(text)


def d(text: str) -> _dt.date:
    """A date from ISO text."""
    return _dt.date.fromisoformat(text)


def rows(schema: pa.Schema, *tuples: Iterable[Any]) -> pa.Table:
    """A table of ``schema`` from positional row tuples."""
    return pa.Table.from_pylist([dict(zip(schema.names, tup)) for tup in tuples], schema=schema)


def empty(schema: pa.Schema) -> pa.Table:
    """No rows."""
    return schema.empty_table()
