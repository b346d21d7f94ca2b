"""Build steps only Paimon has: a commit of rows with explicit row kinds (what a CDC source writes).

The shared steps (``conformance.model``) cover the rest, read the Paimon way:

* ``Create.properties`` are the table's options; ``primary-key`` (comma-separated) and
  ``partition`` may be given there, as Paimon's own DDL allows, and become the schema's
  ``primaryKeys`` / ``partitionKeys`` (the option itself is not kept). ``partition_by`` takes plain
  column names only (Paimon partitions by values, no transforms).
* ``Append`` inserts into an append table and upserts (``+I``) into a primary-key table.
* ``Delete``/``Update`` on a primary-key table write ``-D`` / ``+U`` rows for the matching keys; on an
  append table they rewrite the files, or write deletion vectors where the table enables them.
* ``Optimize`` is a full compaction; ``CreateRef`` creates a tag or a branch from a snapshot;
  ``Append(branch=...)`` commits to a branch; ``ExpireSnapshots`` expires old snapshots.
* versions are snapshot ids; a case's ``ref`` names a tag, or a branch when no tag has that name.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from conformance.model import Step

# The row kinds, spelled as Paimon's RowKind.shortString() spells them; the byte value is the index.
ROW_KINDS = ("+I", "-U", "+U", "-D")


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteChanges(Step):
    """One commit of ``rows`` into a primary-key table, row ``i`` with row kind ``kinds[i]``."""

    rows: pa.Table
    kinds: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.kinds) != self.rows.num_rows:
            raise ValueError(f"{len(self.kinds)} row kinds for {self.rows.num_rows} rows")
        bad = sorted(set(self.kinds) - set(ROW_KINDS))
        if bad:
            raise ValueError(f"unknown row kinds {bad}: use {', '.join(ROW_KINDS)}")
