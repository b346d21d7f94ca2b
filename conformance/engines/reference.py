"""The reference implementation as an engine: reads with ``read_table``, writes with its writer.

It is just another adapter (DESIGN convention 8): the harness treats its answers like any other
engine's, and the case's expected result, not the reference, is what a reader is judged against.
The reference imports lazily so the harness (and its tests) work before the reference exists.
"""

from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa

from conformance.engines._common import is_s3, s3_config
from conformance.engines.base import Capabilities, Engine
from conformance.model import Step, TableRef

# format -> the module holding the reference's side of it (``read``, ``describe``, ``write``,
# ``WRITE_STEPS``). A new format adds one line; nothing else here knows a format.
_FORMATS = {
    "delta": "conformance.engines.reference_delta",
    "iceberg": "conformance.engines.reference_iceberg",
}


def _side(fmt: str) -> Any:
    """The module implementing ``fmt`` (``Unsupported`` for a format the reference lacks)."""
    import importlib

    from reference_impl.errors import Unsupported

    module = _FORMATS.get(fmt)
    if module is None:
        raise Unsupported(f"the reference implements no {fmt!r} tables (it has {', '.join(sorted(_FORMATS))})")
    return importlib.import_module(module)


def _importable(fmt: str) -> bool:
    try:
        _side(fmt)
    except Exception:  # noqa: BLE001 - a format whose side is missing or broken is just not offered
        return False
    return True


def storage_for(table: TableRef) -> Any:
    """A reference ``Storage`` for a table location, with its S3 options when remote."""
    from reference_impl.storage import open_storage

    # S3 tables go through reference_impl.storage.S3Storage (conditional put for commits).
    return open_storage(table.uri, s3=s3_config(table)) if is_s3(table) else open_storage(table.uri)


class ReferenceEngine(Engine):
    """reference_impl: the kit's own reader and writer, for every format it implements."""

    name = "reference"

    def version(self) -> str:
        from conformance.engines._common import project_version

        return project_version()

    def available(self) -> str | None:
        try:
            _side("delta")
        except Exception as exc:  # noqa: BLE001
            return f"reference reader not importable: {type(exc).__name__}: {exc}"
        return None

    def capabilities(self) -> Capabilities:
        # read_features None: the reference says itself (Unsupported) what it does not implement.
        formats = frozenset(f for f in _FORMATS if _importable(f))
        return Capabilities(
            read=formats,
            write=formats,
            read_features={f: None for f in formats},
            write_steps={f: frozenset(_side(f).WRITE_STEPS) for f in formats},
        )

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        return _side(table.format).read(table, at=at, timestamp=timestamp, ref=ref, columns=columns)

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        return _side(table.format).describe(table, at=at, timestamp=timestamp, ref=ref)

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        _side(table.format).write(table, steps)
