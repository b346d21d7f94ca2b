"""What the Hudi engines and drivers share: the kit's read points as Hudi instants, and the table as storage.

A case names a version (``at``), an ISO ``timestamp`` or a ``ref`` (``facts.parse_ref``); every engine is
handed the same Hudi instant times for them, computed once here from the timeline (``instants.point``), so
that two engines differ only in what they then read.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from conformance.engines._common import parse_timestamp, s3_config
from conformance.formats.hudi import facts as F
from conformance.formats.hudi import instants as I
from conformance.model import TableRef
from reference_impl.hudi.avro_schema import META_COLUMNS




def data_columns(t):
    """An engine's answer without the five meta columns: their values are instant times and file names its
    writer picked, so cases compare data columns only (a user column such as ``_hoodie_is_deleted`` stays)."""
    keep = [n for n in t.column_names if n not in META_COLUMNS]
    return t.select(keep) if len(keep) != t.num_columns else t


def storage_of(table: TableRef):
    """The reference's storage over the table directory (only the timeline's file names are read through it)."""
    from reference_impl.storage import open_storage

    return open_storage(table.uri, s3=s3_config(table))


def instant_time(text: str) -> str:
    """An ISO-8601 time (naive: UTC) as the Hudi instant time it names (``yyyyMMddHHmmssSSS``, UTC, the
    timeline time zone the kit's writers use); a Hudi instant time is taken as it is."""
    if text.isdigit() and len(text) in (14, 17):
        return text
    value = parse_timestamp(text).astimezone(_dt.timezone.utc)
    return value.strftime("%Y%m%d%H%M%S") + f"{value.microsecond // 1000:03d}"


@dataclass(frozen=True, slots=True)
class ReadPoint:
    """What one read of a Hudi table asks for, in Hudi's terms.

    ``query``: ``snapshot``, ``read_optimized`` or ``incremental``. ``as_of``: the instant time a snapshot or
    read-optimized read travels to (None: latest). ``empty``: the read is of version 0 (before the first
    commit: no rows). ``begin``/``end``: the incremental range (exclusive/inclusive; None: open).
    ``point``: the instant of the version read (None: latest or version 0).
    """

    query: str = "snapshot"
    as_of: str | None = None
    empty: bool = False
    begin: str | None = None
    end: str | None = None
    point: I.Point | None = None


def read_point(table: TableRef, *, at: int | None = None, timestamp: str | None = None,
               ref: str | None = None) -> ReadPoint:
    """The read point of a case's version / timestamp / ref (``facts.py``: a ref names a query type).

    A read-optimized ref combines with a version or timestamp; an incremental ref names its own range."""
    if at is not None and timestamp is not None:
        raise ValueError("give a version or a timestamp, not both")
    query, begin_v, end_v = F.parse_ref(ref) if ref is not None else ("snapshot", None, None)
    if query == F.READ_OPTIMIZED and end_v is not None:  # "read_optimized:N": the read-optimized query of version N
        at = end_v
    if query == F.INCREMENTAL:
        if at is not None or timestamp is not None:
            raise ValueError("an incremental ref names its own range; no version or timestamp with it")
        storage = storage_of(table)
        begin = I.point(storage, begin_v) if begin_v else None
        end = I.point(storage, end_v) if end_v is not None else None
        if end_v == 0:  # (A, 0]: nothing can be in it
            return ReadPoint(query=query, empty=True)
        return ReadPoint(query=query, begin=begin.as_of if begin else None, end=end.as_of if end else None,
                         point=end)
    if timestamp is not None:
        return ReadPoint(query=query, as_of=instant_time(timestamp))
    if at is not None:
        point = I.point(storage_of(table), at)
        if point is None:
            return ReadPoint(query=query, empty=True)
        return ReadPoint(query=query, as_of=point.as_of, point=point)
    return ReadPoint(query=query)
