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

from conformance.model import Create, Step, parse_partition_expr

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


def table_keys(step: Create) -> tuple[dict[str, str], list[str], list[str]]:
    """A Create step the Paimon way: (table options, primary keys, partition keys).

    Paimon's DDL takes ``primary-key`` and ``partition`` as options; they become the schema's keys and
    are not kept as options. ``partition_by`` adds plain columns; Paimon has no table features and no
    partition transforms, so either is refused as unsupported."""
    from reference_impl.errors import Unsupported

    if step.features:
        raise Unsupported(f"Paimon has no table features to enable besides options ({', '.join(step.features)})",
                          feature=step.features[0])
    options = {k: str(v) for k, v in step.properties.items()}
    primary = [c.strip() for c in options.pop("primary-key", "").split(",") if c.strip()]
    partition = [c.strip() for c in options.pop("partition", "").split(",") if c.strip()]
    for expr in step.partition_by:
        transform, column, _param = parse_partition_expr(expr)
        if transform != "identity":
            raise Unsupported(f"Paimon partitions by column values, not by {expr!r}", feature="partition-transform")
        if column not in partition:
            partition.append(column)
    return options, primary, partition
