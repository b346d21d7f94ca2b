"""The reference engine's Delta driver: reads with ``reference_impl.delta``, writes with its writer.

``conformance/engines/reference.py`` dispatches here for Delta tables (the driver interface of
``conformance.engines.base``). ``describe`` also reports the change data feed of versions 1..N
(key ``changes``) when the table enables it, so the feed is checked like any other fact.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from conformance import model
from conformance.engines._common import parse_timestamp
from conformance.engines.base import FormatSupport
from conformance.formats.delta.steps import MIN_READER_VERSION, MIN_WRITER_VERSION, Checkpoint
from conformance.model import Step, TableRef

# Every step the reference Delta writer implements.
WRITE_STEPS = frozenset(
    cls.__name__
    for cls in (
        model.Create, model.Append, model.Overwrite, model.Delete, model.Update, model.SetProperties,
        model.AddConstraint, model.AddColumn, model.RenameColumn, model.DropColumn, model.Optimize,
        Checkpoint, model.Raw,
    )
)


def support(engine: Any) -> FormatSupport:
    """Every feature (the reference says itself, as Unsupported, what it does not implement)."""
    return FormatSupport(write_steps=WRITE_STEPS)


def _storage(table: TableRef) -> Any:
    from conformance.engines.reference import storage_for

    return storage_for(table)


def read(
    engine: Any,
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


def describe(engine: Any, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None) -> dict:
    from conformance.formats.delta.facts import facts
    from reference_impl.delta.table import Snapshot
    from reference_impl.errors import Unsupported

    if ref is not None:
        raise Unsupported("Delta tables have no named branches or tags")
    ts = parse_timestamp(timestamp) if timestamp else None
    snap = Snapshot.load(_storage(table), version=at, timestamp=ts)
    p, m, state = snap.protocol, snap.metadata, snap.state
    out = facts(
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
    if str(m.configuration.get(CDF_PROPERTY, "")).lower() == "true" and snap.version >= 1:
        out["changes"] = _changes(table, snap.version)
    return out


CDF_PROPERTY = "delta.enableChangeDataFeed"


def _changes(table: TableRef, version: int) -> list[dict]:
    """The change data feed of versions 1..``version`` as canonical rows, without the clock-dependent
    ``_commit_timestamp``."""
    from conformance.golden import canonical_rows
    from reference_impl.delta.cdf import table_changes

    feed = table_changes(_storage(table), 1, version)
    return canonical_rows(feed.drop_columns([c for c in feed.column_names if c == "_commit_timestamp"]))


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


def _create(storage: Any, s: model.Create) -> Any:
    """A Create; ``delta.minReaderVersion``/``delta.minWriterVersion`` pin the protocol, as
    delta-spark and delta-rs take them (they become the protocol action, not configuration)."""
    from reference_impl.delta import writer

    properties = dict(s.properties)
    reader, writer_v = properties.pop(MIN_READER_VERSION, None), properties.pop(MIN_WRITER_VERSION, None)
    protocol = None
    if reader is not None or writer_v is not None:
        protocol = (int(reader or 1), int(writer_v or 2))
    return writer.create_table(
        storage, s.schema, partition_by=_partition_columns(s.partition_by), properties=properties,
        features=tuple(s.features), protocol=protocol,
    )


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
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
        model.Create: lambda s: _create(storage, s),
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
        Checkpoint: lambda s: writer.checkpoint(
            storage, kind=s.kind, parts=s.parts, sidecars=s.sidecars, stats=tuple(s.stats)
        ),
        model.Raw: lambda s: s.fn(storage),
    }
    for step in steps:
        handler = handlers.get(type(step))
        if handler is None:
            raise Unsupported(f"the reference Delta writer has no step {type(step).__name__}")
        handler(step)
