"""Version numbers of a Hudi table, the way ``lakeconf read --at N`` and the harness name a table state.

Hudi names a state by an instant time a writer took from its clock. The kit counts completed writes
instead: version 0 is the created table (nothing committed), version N the table once its N-th data
instant completed. Data instants are the actions that change what a snapshot returns (``commit``,
``deltacommit``, ``replacecommit``: a compaction completes as a ``commit``, clustering and insert
overwrite as ``replacecommit``); ``clean``, ``rollback``, ``savepoint`` and pending instants make no
version. They are counted in commit order: completion time in table versions 8 and 9, requested time in
version 6 (HUDI-TIMELINE-019). Archived instants count too, so a version keeps its number as the active
timeline moves on.

Reading version N is a time-travel read at the N-th instant: as of its completion time in v8+ (a read
point by completion time sees exactly the instants completed by then), as of its requested time in v6.
A number of 14 or more digits is an instant time, not a count (``lakeconf read --at 20261125101530123``):
it reads as of that requested time, as Hudi's ``as.of.instant`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from reference_impl.errors import InvalidTable
from reference_impl.storage import Storage

DATA_ACTIONS = ("commit", "deltacommit", "replacecommit")
_INSTANT_DIGITS = 14  # yyyyMMddHHmmss: no version count is that long


@dataclass(frozen=True, slots=True)
class Point:
    """Version ``number`` of a table: the data instant that completed it."""

    number: int
    requested_time: str
    completion_time: str | None  # table version 8+ only
    action: str

    @property
    def as_of(self) -> str:
        """The instant time of a time-travel read at this version: completion time in v8+, else requested time."""
        return self.completion_time or self.requested_time

    def read_options(self) -> dict[str, str]:
        """The reader's keyword arguments for a time-travel read at this version."""
        return {"as_of_completion": self.completion_time} if self.completion_time else {"as_of": self.requested_time}


def points(storage: Storage) -> list[Point]:
    """Versions 1..N of the table: its completed data instants, archived and active, in commit order."""
    from reference_impl.hudi import properties as P
    from reference_impl.hudi import timeline as T

    config = P.read_table_config(storage)
    found: dict[str, tuple[str, str | None, str]] = {}
    if config.timeline_layout_version >= 2:
        for row in T.read_lsm_timeline(storage, config):
            if row.action in DATA_ACTIONS:
                found[row.requested_time] = (row.requested_time, row.completion_time, row.action)
    else:
        for entry in T.read_archive_v1(storage, config):
            if entry.action in DATA_ACTIONS and entry.state == T.COMPLETED:
                found[entry.requested_time] = (entry.requested_time, None, entry.action)
    for inst in T.load_active_timeline(storage, config).completed():
        if inst.action in DATA_ACTIONS:
            found[inst.requested_time] = (inst.requested_time, inst.completion_time, inst.action)
    ordered = sorted(found.values(), key=lambda f: (f[1] or f[0], f[0]))
    return [Point(n, req, done, action) for n, (req, done, action) in enumerate(ordered, start=1)]


def point(storage: Storage, version: int | None) -> Point | None:
    """The instant of ``version`` (None: the latest); None for version 0 or a table without commits.

    ``InvalidTable`` when the table has fewer versions."""
    found = points(storage)
    if version is None:
        return found[-1] if found else None
    if version < 0:
        raise InvalidTable(f"version {version} does not exist: versions count completed writes from 0")
    if version == 0:
        return None
    if version > len(found):
        raise InvalidTable(f"the table has {len(found)} completed data instant(s); version {version} does not exist",
                           hint="lakeconf read --at N counts completed writes; pass --instant for an instant time")
    return found[version - 1]


def selection(storage: Storage, version: int | None) -> dict[str, Any] | None:
    """The reader's keyword arguments for ``version`` ({} for the latest; None for version 0: no rows)."""
    if version is None:
        return {}
    if version >= 10 ** (_INSTANT_DIGITS - 1):
        return {"as_of": str(version)}
    found = point(storage, version)
    return None if found is None else found.read_options()


def read_table(location: Any, *, version: int | None = None, columns: Sequence[str] | None = None,
               instant: str | None = None, completion_time: str | None = None, query: str = "snapshot",
               **options: Any):
    """``table.read_table`` by the kit's version number, or as of an instant / completion time."""
    from reference_impl.hudi import table as TB

    storage = TB._storage(location)
    if instant is not None or completion_time is not None:
        return TB.read_table(storage, query=query, as_of=instant, as_of_completion=completion_time, columns=columns,
                             **options)
    chosen = selection(storage, version)
    if chosen is None:  # version 0: the created table, no rows, in the schema it was created with if it says
        from reference_impl.hudi import properties as P

        created = TB.create_schema(P.read_table_config(storage))
        meta = options.get("meta_columns", True)
        return TB._finish([], created, meta_columns=meta, columns=columns) if created is not None else TB._empty(meta)
    return TB.read_table(storage, query=query, columns=columns, **chosen, **options)


def describe(location: Any, *, version: int | None = None) -> dict[str, Any]:
    """``table.describe`` at the kit's version number (version 0: the created table, nothing read)."""
    from reference_impl.hudi import table as TB

    storage = TB._storage(location)
    chosen = selection(storage, version)
    if chosen is None:  # version 0: what hoodie.properties says, no instant, no file group
        from reference_impl.hudi import properties as P

        cfg = P.read_table_config(storage)
        return {"table_type": cfg.table_type, "table_version": cfg.version,
                "record_key_fields": list(cfg.record_key_fields or ()), "partition_fields": list(cfg.partition_fields),
                "ordering_fields": list(cfg.ordering_fields), "merge_mode": cfg.merge_mode, "instant": None,
                "completion_time": None, "action": None, "partitions": [], "file_group_count": 0}
    facts = TB.describe(storage, **chosen)
    found = point(storage, version)
    facts["action"] = found.action if found is not None else None
    return facts
