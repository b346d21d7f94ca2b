"""The reference engine's Delta side: reads with ``reference_impl.delta``, writes with its writer.

``conformance/engines/reference.py`` dispatches here for ``format == "delta"``; every format has
one such module exposing ``read``, ``describe``, ``write`` and ``WRITE_STEPS``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from conformance import model
from conformance.engines._common import parse_timestamp
from conformance.model import Step, TableRef

# Every step the reference Delta writer implements.
WRITE_STEPS = frozenset(
    cls.__name__
    for cls in (
        model.Create, model.Append, model.Overwrite, model.Delete, model.Update, model.SetProperties,
        model.AddConstraint, model.AddColumn, model.RenameColumn, model.DropColumn, model.Optimize,
        model.Checkpoint, model.Raw,
    )
)


def _storage(table: TableRef) -> Any:
    from conformance.engines.reference import storage_for

    return storage_for(table)


def read(
    table: TableRef,
    *,
    at: int | None = None,
    timestamp: str | None = None,
    ref: str | None = None,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    from reference_impl.delta.table import read_table
    from reference_impl.errors import Unsupported

    if ref is not None:
        raise Unsupported("Delta tables have no named branches or tags")
    ts = parse_timestamp(timestamp) if timestamp else None
    return read_table(_storage(table), version=at, timestamp=ts, columns=list(columns) if columns else None)


def describe(table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None) -> dict:
    from conformance.engines.delta_facts import facts
    from reference_impl.delta.table import Snapshot
    from reference_impl.errors import Unsupported

    if ref is not None:
        raise Unsupported("Delta tables have no named branches or tags")
    ts = parse_timestamp(timestamp) if timestamp else None
    snap = Snapshot.load(_storage(table), version=at, timestamp=ts)
    p, m, state = snap.protocol, snap.metadata, snap.state
    return facts(
        version=snap.version,
        min_reader=p.min_reader_version,
        min_writer=p.min_writer_version,
        reader_features=p.reader_features,
        writer_features=p.writer_features,
        partition_columns=m.partition_columns,
        configuration=m.configuration,
        txns={app: t.version for app, t in state.txns.items()},
        domains={name: d.configuration for name, d in state.domains.items() if not d.removed},
    )


def _partition_columns(exprs: Sequence[str]) -> tuple[str, ...]:
    """Delta partitions by plain columns only: a transform is a feature Delta does not have."""
    from reference_impl.errors import Unsupported

    out = []
    for text in exprs:
        transform, column, _ = model.parse_partition_expr(text)
        if transform != "identity":
            raise Unsupported(f"Delta has no partition transforms ({text!r}); use generated columns instead")
        out.append(column)
    return tuple(out)


def write(table: TableRef, steps: Sequence[Step]) -> None:
    from reference_impl.delta import writer
    from reference_impl.errors import Unsupported

    storage = _storage(table)

    def delete(s: model.Delete) -> Any:
        # Delta has one delete mechanism per table setting: DVs when enabled, else rewrites.
        if s.how not in (None, "copy-on-write", "deletion-vectors"):
            raise Unsupported(f"Delta has no {s.how}")
        return writer.delete(storage, s.where)

    def append(s: model.Append) -> Any:
        if s.branch is not None:
            raise Unsupported("Delta tables have no branches")
        return writer.append(storage, s.rows, files=s.files)

    handlers: Mapping[type, Callable[[Any], Any]] = {
        model.Create: lambda s: writer.create_table(
            storage, s.schema, partition_by=_partition_columns(s.partition_by), properties=dict(s.properties),
            features=tuple(s.features), protocol=s.protocol,
        ),
        model.Append: append,
        model.Overwrite: lambda s: writer.overwrite(storage, s.rows),
        model.Delete: delete,
        model.Update: lambda s: writer.update(storage, dict(s.set), s.where),
        model.SetProperties: lambda s: writer.set_properties(storage, dict(s.properties)),
        model.AddConstraint: lambda s: writer.add_constraint(storage, s.name, s.expression),
        model.AddColumn: lambda s: writer.add_column(storage, s.field),
        model.RenameColumn: lambda s: writer.rename_column(storage, s.old, s.new),
        model.DropColumn: lambda s: writer.drop_column(storage, s.name),
        model.Optimize: lambda s: writer.optimize(storage),
        model.Checkpoint: lambda s: writer.checkpoint(
            storage, kind=s.kind, parts=s.parts, sidecars=s.sidecars, stats=tuple(s.stats)
        ),
        model.Raw: lambda s: s.fn(storage),
    }
    for step in steps:
        handler = handlers.get(type(step))
        if handler is None:
            raise Unsupported(f"the reference Delta writer has no step {type(step).__name__}")
        handler(step)
