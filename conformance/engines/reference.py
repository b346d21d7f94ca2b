"""The reference implementation as an engine: reads with ``read_table``, writes with its writer.

It is just another adapter (DESIGN convention 8): the harness treats its answers like any other
engine's, and the case's expected result, not the reference, is what a reader is judged against.
The reference imports lazily so the harness (and its tests) work before the reference exists.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from conformance import model
from conformance.engines._common import is_s3, parse_timestamp, s3_config
from conformance.engines.base import Capabilities, Engine
from conformance.model import Step, TableRef

# Every step the model defines; the reference writer implements them all.
_STEP_NAMES = frozenset(
    cls.__name__
    for cls in (
        model.Create, model.Append, model.Overwrite, model.Delete, model.Update, model.SetProperties,
        model.AddConstraint, model.AddColumn, model.RenameColumn, model.DropColumn, model.Optimize,
        model.Checkpoint, model.Raw,
    )
)


def storage_for(table: TableRef) -> Any:
    """A reference ``Storage`` for a table location, with its S3 options when remote."""
    from reference_impl.storage import open_storage

    # S3 tables go through reference_impl.storage.S3Storage (conditional put for commits).
    return open_storage(table.uri, s3=s3_config(table)) if is_s3(table) else open_storage(table.uri)


class ReferenceEngine(Engine):
    """reference_impl: the kit's own reader and writer (Delta for now)."""

    name = "reference"

    def version(self) -> str:
        from conformance.engines._common import project_version

        return project_version()

    def available(self) -> str | None:
        try:
            import reference_impl.delta.table  # noqa: F401
        except Exception as exc:
            return f"reference reader not importable: {type(exc).__name__}: {exc}"
        return None

    def capabilities(self) -> Capabilities:
        # read_features None: the reference says itself (Unsupported) what it does not implement.
        return Capabilities(
            read=frozenset({"delta"}),
            write=frozenset({"delta"}),
            read_features={"delta": None},
            write_steps={"delta": _STEP_NAMES},
        )

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from reference_impl.delta.table import read_table

        ts = parse_timestamp(timestamp) if timestamp else None
        return read_table(
            storage_for(table), version=at, timestamp=ts, columns=list(columns) if columns else None
        )

    def describe(self, table: TableRef, *, at: int | None = None, timestamp: str | None = None) -> dict | None:
        from conformance.engines.delta_facts import facts
        from reference_impl.delta.table import Snapshot

        ts = parse_timestamp(timestamp) if timestamp else None
        snap = Snapshot.load(storage_for(table), version=at, timestamp=ts)
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

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        from reference_impl.delta import writer
        from reference_impl.errors import Unsupported

        storage = storage_for(table)
        handlers: Mapping[type, Callable[[Any], Any]] = {
            model.Create: lambda s: writer.create_table(
                storage, s.schema, partition_by=tuple(s.partition_by), properties=dict(s.properties),
                features=tuple(s.features), protocol=s.protocol,
            ),
            model.Append: lambda s: writer.append(storage, s.rows, files=s.files),
            model.Overwrite: lambda s: writer.overwrite(storage, s.rows),
            model.Delete: lambda s: writer.delete(storage, s.where),
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
                raise Unsupported(f"the reference writer has no step {type(step).__name__}")
            handler(step)
