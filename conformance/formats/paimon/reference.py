"""The reference engine's Paimon side: reads with ``reference_impl.paimon.table``, writes with its writer.

``conformance/engines/reference.py`` dispatches here for Paimon tables (the driver interface of
``conformance.engines.base``). A version is a snapshot id, a ref a tag or else a branch
(``conformance/formats/paimon/facts.py``); the steps mean what ``steps.py`` says.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from conformance import model
from conformance.engines.base import FormatSupport
from conformance.formats.paimon.steps import WriteChanges
from conformance.model import Step, TableRef

WRITE_STEPS = frozenset(
    cls.__name__
    for cls in (
        model.Create, model.Append, model.Overwrite, model.Delete, model.Update, model.SetProperties,
        model.AddColumn, model.RenameColumn, model.DropColumn, model.ChangeColumnType, model.MoveColumn,
        model.CreateRef, model.ExpireSnapshots, model.Optimize, model.Raw, WriteChanges,
    )
)


def support(engine: Any) -> FormatSupport:
    """Every feature (the reference says itself, as Unsupported, what it does not implement)."""
    return FormatSupport(write_steps=WRITE_STEPS)


def _storage(table: TableRef) -> Any:
    from conformance.engines.reference import storage_for

    return storage_for(table)


def _selection(storage: Any, at: int | None, timestamp: str | None, ref: str | None) -> dict[str, Any]:
    """The reader's keyword arguments for a version, an instant or a ref (a tag, else a branch)."""
    from reference_impl.paimon.snapshot import tag_names

    if ref is not None:
        return {"tag": ref} if ref in tag_names(storage) else {"branch": ref}
    if timestamp is not None:
        return {"timestamp": timestamp}
    return {"version": at} if at is not None else {}


def read(engine: Any, table: TableRef, *, at: int | None = None, timestamp: str | None = None,
         ref: str | None = None, columns: Sequence[str] | None = None) -> pa.Table:
    """The table's rows at snapshot ``at`` / as of ``timestamp`` / on tag or branch ``ref`` (latest by default)."""
    from reference_impl.paimon.table import read_table

    storage = _storage(table)
    return read_table(storage, columns=list(columns) if columns else None, **_selection(storage, at, timestamp, ref))


def describe(engine: Any, table: TableRef, *, at: int | None = None, timestamp: str | None = None,
             ref: str | None = None) -> dict:
    """The Paimon facts (``facts.py``) of a snapshot."""
    from reference_impl.paimon.table import describe as describe_table

    storage = _storage(table)
    return describe_table(storage, **_selection(storage, at, timestamp, ref))


def _create(storage: Any, s: model.Create) -> Any:
    from reference_impl.errors import Unsupported
    from reference_impl.paimon import writer

    if s.features:
        raise Unsupported(f"Paimon has no table features to enable ({', '.join(s.features)}); options decide")
    transformed = [p for p in s.partition_by if model.parse_partition_expr(p)[0] != "identity"]
    if transformed:
        raise Unsupported(f"Paimon partitions by column values only, not by {transformed[0]!r}")
    return writer.create_table(storage, s.schema, partition_keys=tuple(s.partition_by), options=dict(s.properties))


def _create_ref(storage: Any, s: model.CreateRef) -> Any:
    from reference_impl.paimon import writer
    from reference_impl.paimon.snapshot import latest_snapshot_id

    if s.kind == "tag":
        return writer.create_tag(storage, s.name, s.version)
    # The step's "current version" is the latest snapshot; Paimon's own branch without a source is empty.
    return writer.create_branch(storage, s.name, s.version if s.version is not None else latest_snapshot_id(storage))


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    """Build the table by running ``steps`` in order (Raw steps get the table's Storage)."""
    from reference_impl.errors import Unsupported
    from reference_impl.paimon import writer

    storage = _storage(table)
    handlers: Mapping[type, Callable[[Any], Any]] = {
        model.Create: lambda s: _create(storage, s),
        model.Append: lambda s: writer.write(storage, s.rows, files=s.files, branch=s.branch),
        WriteChanges: lambda s: writer.write(storage, s.rows, kinds=s.kinds),
        model.Overwrite: lambda s: writer.overwrite(storage, s.rows),
        model.Delete: lambda s: writer.delete(storage, s.where, how=s.how),
        model.Update: lambda s: writer.update(storage, dict(s.set), s.where),
        model.SetProperties: lambda s: writer.set_options(storage, dict(s.properties)),
        model.AddColumn: lambda s: writer.add_column(storage, s.field),
        model.RenameColumn: lambda s: writer.rename_column(storage, s.old, s.new),
        model.DropColumn: lambda s: writer.drop_column(storage, s.name),
        model.ChangeColumnType: lambda s: writer.change_column_type(storage, s.name, s.type),
        model.MoveColumn: lambda s: writer.move_column(storage, s.name, s.after),
        model.CreateRef: lambda s: _create_ref(storage, s),
        model.ExpireSnapshots: lambda s: writer.expire_snapshots(storage, s.retain_last),
        model.Optimize: lambda s: writer.compact(storage),
        model.Raw: lambda s: s.fn(storage),
    }
    for step in steps:
        handler = handlers.get(type(step))
        if handler is None:
            raise Unsupported(f"the reference Paimon writer has no step {type(step).__name__}")
        handler(step)
