"""The reference engine's Hudi side: reads with ``reference_impl.hudi``, writes with its writer.

``conformance/engines/reference.py`` dispatches here for Hudi tables (the driver interface of
``conformance.engines.base``). A version counts completed data instants and a ref names a query type
(``facts.py``); the steps mean what ``steps.py`` says.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from conformance import model
from conformance.engines.base import FormatSupport
from conformance.formats.hudi import facts as F
from conformance.formats.hudi.engines._common import data_columns, read_point
from conformance.formats.hudi.steps import AddColumnAt, FailedWrite, Upsert
from conformance.model import Step, TableRef

WRITE_STEPS = frozenset(
    cls.__name__
    for cls in (
        model.Create, model.Append, model.Overwrite, model.Delete, model.Update, model.AddColumn,
        model.ChangeColumnType, model.RenameColumn, model.DropColumn, model.MoveColumn, model.Optimize, model.Raw,
        Upsert, FailedWrite, AddColumnAt,
    )
)


def support(engine: Any) -> FormatSupport:
    """Every feature (the reference says itself, as Unsupported, what it does not implement)."""
    return FormatSupport(write_steps=WRITE_STEPS)


def _storage(table: TableRef) -> Any:
    from conformance.engines.reference import storage_for

    return storage_for(table)


def read(engine: Any, table: TableRef, *, at: int | None = None, timestamp: str | None = None,
         ref: str | None = None, columns: Sequence[str] | None = None) -> pa.Table:
    """The table's data columns at the read point every engine is handed (``engines._common.read_point``); a
    version is read as of its completion time in v8+ (the instant's state), its requested time in v6."""
    from reference_impl.hudi import table as TB
    from reference_impl.hudi import versions as V

    storage = _storage(table)
    cols = list(columns) if columns else None
    rp = read_point(table, at=at, timestamp=timestamp, ref=ref)
    if rp.query == F.INCREMENTAL:
        found = TB.read_incremental(storage, begin=rp.begin, end=rp.end, columns=cols, meta_columns=False)
        return found.slice(0, 0) if rp.empty else found
    if rp.empty:  # version 0: the created table
        return V.read_table(storage, version=0, columns=cols, meta_columns=False)
    travel = rp.point.read_options() if rp.point is not None else {"as_of": rp.as_of} if rp.as_of else {}
    return data_columns(TB.read_table(storage, query=rp.query, columns=cols, meta_columns=False, **travel))


def describe(engine: Any, table: TableRef, *, at: int | None = None, timestamp: str | None = None,
             ref: str | None = None) -> dict:
    """The Hudi facts (``facts.py``) at a version."""
    from reference_impl.hudi import versions as V

    if ref:
        query, _first, last = F.parse_ref(ref)
        at = last if query == F.READ_OPTIMIZED and last is not None else at
    facts = V.describe(_storage(table), version=at)
    out = {k: facts.get(k) for k in F.FACTS}
    out["partitions"] = sorted(out["partitions"] or [])
    return out


def _create(storage: Any, s: model.Create) -> Any:
    from reference_impl.errors import Unsupported
    from reference_impl.hudi import writer as W

    if s.features:
        raise Unsupported(f"Hudi has no table features to enable ({', '.join(s.features)}); configs decide")
    transformed = [p for p in s.partition_by if model.parse_partition_expr(p)[0] != "identity"]
    if transformed:
        raise Unsupported(f"Hudi partitions by column values (or a key generator), not by {transformed[0]!r}")
    p = {k: str(v) for k, v in s.properties.items()}
    key = p.pop("hoodie.table.recordkey.fields", "")
    if not key:
        from reference_impl.errors import InvalidTable

        raise InvalidTable("a Hudi Create step needs hoodie.table.recordkey.fields")
    ordering = p.pop("hoodie.table.ordering.fields", "")
    truthy = ("true", "1", "yes")
    return W.create_table(
        storage, s.schema, record_key=[c.strip() for c in key.split(",") if c.strip()],
        partition_fields=tuple(s.partition_by),
        ordering_fields=[c.strip() for c in ordering.split(",") if c.strip()],
        table_type=p.pop("hoodie.table.type", "COPY_ON_WRITE"),
        table_version=int(p.pop("hoodie.table.version", "9")),
        key_generator=p.pop("hoodie.table.keygenerator.type", None),
        hive_style=p.pop("hoodie.datasource.write.hive_style_partitioning", "false").lower() in truthy,
        url_encode=p.pop("hoodie.datasource.write.partitionpath.urlencode", "false").lower() in truthy,
        merge_mode=p.pop("hoodie.record.merge.mode", None),
        log_block_format=p.pop("hoodie.logfile.data.block.format", "avro"),
        properties=p,
    )


def _optimize(storage: Any) -> Any:
    """Compaction for merge-on-read, clustering for copy-on-write (``steps.py``)."""
    from reference_impl.hudi import properties as P
    from reference_impl.hudi import writer as W

    return W.compact(storage) if P.read_table_config(storage).is_mor else W.cluster(storage)


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    """Build the table by running ``steps`` in order (Raw steps get the table's Storage)."""
    from reference_impl.errors import Unsupported
    from reference_impl.hudi import writer as W

    storage = _storage(table)
    handlers: Mapping[type, Callable[[Any], Any]] = {
        model.Create: lambda s: _create(storage, s),
        model.Append: lambda s: W.insert(storage, s.rows),
        Upsert: lambda s: W.upsert(storage, s.rows),
        model.Delete: lambda s: W.delete_where(storage, s.where),
        model.Update: lambda s: W.update_where(storage, dict(s.set), s.where),
        model.Overwrite: lambda s: W.insert_overwrite_table(storage, s.rows),
        model.AddColumn: lambda s: W.add_column(storage, s.field),
        model.ChangeColumnType: lambda s: W.change_column_type(storage, s.name, s.type),
        # schema on read (steps.py): ALTER TABLE ... with hoodie.schema.on.read.enable=true
        model.RenameColumn: lambda s: W.rename_column(storage, s.old, s.new),
        model.DropColumn: lambda s: W.drop_columns(storage, s.name),
        model.MoveColumn: lambda s: W.move_column(storage, s.name, after=s.after, first=s.after is None),
        AddColumnAt: lambda s: W.add_column_at(storage, s.path, s.type, after=s.after, first=s.first),
        model.Optimize: lambda s: _optimize(storage),
        FailedWrite: lambda s: W.failed_write(storage, s.rows, rollback=s.rollback),
        model.Raw: lambda s: s.fn(storage),
    }
    for step in steps:
        if isinstance(step, model.Append) and (step.branch is not None):
            raise Unsupported("Hudi tables have no branches")
        handler = handlers.get(type(step))
        if handler is None:
            raise Unsupported(f"the reference Hudi writer has no step {type(step).__name__}")
        handler(step)
