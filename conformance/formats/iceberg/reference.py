"""The reference engine's Iceberg side: reads with ``reference_impl.iceberg.table``, writes with its writer.

``conformance/engines/reference.py`` dispatches here for Iceberg tables (the driver interface of
``conformance.engines.base``). Tables are written in the file-system layout
(``metadata/v<N>.metadata.json`` + ``version-hint.text``) on local disk or S3; a step's version
is the kit's Iceberg numbering (the sequence number of the main-history snapshot, see
``conformance/formats/iceberg/facts.py``). Steps of other formats (CHECK constraints, checkpoints)
are not offered.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from conformance import model
from conformance.engines._common import parse_timestamp
from conformance.engines.base import FormatSupport
from conformance.model import Step, TableRef

# Every step the reference Iceberg writer implements.
WRITE_STEPS = frozenset(
    cls.__name__
    for cls in (
        model.Create, model.Append, model.Overwrite, model.Delete, model.Update, model.SetProperties,
        model.AddColumn, model.RenameColumn, model.DropColumn, model.ChangeColumnType, model.MoveColumn,
        model.SetPartitioning, model.CreateRef, model.ExpireSnapshots, model.Optimize, model.Raw,
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
    """The table's rows at version ``at`` / as of ``timestamp`` / on ref ``ref`` (latest by default)."""
    from reference_impl.iceberg.table import read_table

    ts = parse_timestamp(timestamp) if timestamp else None
    return read_table(_storage(table), version=at, timestamp=ts, ref=ref, columns=list(columns) if columns else None)


def describe(engine: Any, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None) -> dict:
    """The Iceberg facts (format_version, partition_spec, schema_id, properties, refs, operation) of a version."""
    from reference_impl.iceberg.table import describe as describe_table

    ts = parse_timestamp(timestamp) if timestamp else None
    return describe_table(_storage(table), version=at, timestamp=ts, ref=ref)


def _create(storage: Any, s: model.Create) -> Any:
    from reference_impl.errors import Unsupported
    from reference_impl.iceberg import writer

    if s.features:
        raise Unsupported(f"Iceberg has no table features to enable ({', '.join(s.features)}); the format version decides")
    return writer.create_table(storage, s.schema, partition_by=tuple(s.partition_by), properties=dict(s.properties))


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    """Build the table by running ``steps`` in order, one commit each (Raw steps get the table's Storage)."""
    from reference_impl.errors import Unsupported
    from reference_impl.iceberg import writer

    storage = _storage(table)
    handlers: Mapping[type, Callable[[Any], Any]] = {
        model.Create: lambda s: _create(storage, s),
        model.Append: lambda s: writer.append(storage, s.rows, files=s.files, branch=s.branch),
        model.Overwrite: lambda s: writer.overwrite(storage, s.rows),
        model.Delete: lambda s: writer.delete(storage, s.where, how=s.how),
        model.Update: lambda s: writer.update(storage, dict(s.set), s.where),
        model.SetProperties: lambda s: writer.set_properties(storage, dict(s.properties)),
        model.AddColumn: lambda s: writer.add_column(storage, s.field),
        model.RenameColumn: lambda s: writer.rename_column(storage, s.old, s.new),
        model.DropColumn: lambda s: writer.drop_column(storage, s.name),
        model.ChangeColumnType: lambda s: writer.change_column_type(storage, s.name, s.type),
        model.MoveColumn: lambda s: writer.move_column(storage, s.name, s.after),
        model.SetPartitioning: lambda s: writer.set_partitioning(storage, tuple(s.partition_by)),
        model.CreateRef: lambda s: writer.create_ref(storage, s.name, s.kind, s.version),
        model.ExpireSnapshots: lambda s: writer.expire_snapshots(storage, s.retain_last),
        model.Optimize: lambda s: writer.optimize(storage),
        model.Raw: lambda s: s.fn(storage),
    }
    for step in steps:
        handler = handlers.get(type(step))
        if handler is None:
            raise Unsupported(f"the reference Iceberg writer has no step {type(step).__name__}")
        handler(step)
