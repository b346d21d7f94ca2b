"""The reference implementation as an engine: reads with ``reference_impl``, writes with its writers.

It is just another adapter (DESIGN convention 8): the harness treats its answers like any other
engine's, and the case's expected result, not the reference, is what a reader is judged against.
Each format's side is the driver its plugin registers under ``reference``
(``conformance/formats/<format>/reference.py``).
"""

from __future__ import annotations

from typing import Any

from conformance.engines._common import is_s3, s3_config
from conformance.engines.base import MultiFormatEngine
from conformance.model import TableRef


def storage_for(table: TableRef) -> Any:
    """A reference ``Storage`` for a table location, with its S3 options when remote."""
    from reference_impl.storage import open_storage

    # S3 tables go through reference_impl.storage.S3Storage (conditional put for commits).
    return open_storage(table.uri, s3=s3_config(table)) if is_s3(table) else open_storage(table.uri)


class ReferenceEngine(MultiFormatEngine):
    """reference_impl: the kit's own reader and writer, for every format it implements."""

    name = "reference"
    family = "reference"

    def version(self) -> str:
        from conformance.engines._common import project_version

        return project_version()
