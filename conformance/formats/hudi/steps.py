"""Build steps only Hudi has, and what the shared steps (``conformance.model``) mean for a Hudi table.

A Hudi write names its operation; the shared steps map onto Hudi's write operations so that every writer
(the reference, Spark's Hudi datasource) runs the same case the same way:

* ``Create.properties`` are Hudi configs, by their table-config names: ``hoodie.table.recordkey.fields``
  (required: comma-separated), ``hoodie.table.type`` (``COPY_ON_WRITE`` by default, or ``MERGE_ON_READ``),
  ``hoodie.table.version`` (9 by default; 8 or 6), ``hoodie.table.ordering.fields`` (the precombine field;
  a writer of table version 6 or 8 writes it as ``hoodie.table.precombine.field``),
  ``hoodie.record.merge.mode``, ``hoodie.table.keygenerator.type`` (``SIMPLE``, ``COMPLEX``,
  ``NON_PARTITIONED``, ``TIMESTAMP``; default SIMPLE for one partition field, COMPLEX for several,
  NON_PARTITIONED for none), ``hoodie.datasource.write.hive_style_partitioning``,
  ``hoodie.datasource.write.partitionpath.urlencode``, ``hoodie.logfile.data.block.format`` (``avro`` or
  ``parquet``); other ``hoodie.*`` keys are passed to the writer as they are. ``partition_by`` names the
  partition fields (plain columns; no transforms). The metadata table is off (``hoodie.metadata.enable``
  false) unless the properties turn it on.
* ``Append`` is the ``insert`` operation (cases never insert a key twice); ``Upsert`` (below) is ``upsert``.
* ``Delete(where)`` deletes the records matching the predicate (the ``delete`` operation, by key);
  ``Update(set, where)`` upserts the matching records with the new values (ordering field unchanged unless
  ``set`` names it).
* ``Overwrite`` is ``insert_overwrite_table`` (a ``replacecommit``).
* ``Optimize`` compacts a merge-on-read table (schedule and run a compaction: one ``commit``) and clusters a
  copy-on-write table (a ``replacecommit``).
* ``AddColumn``, ``ChangeColumnType`` (the promotions of the schema evolution page) evolve the schema on
  write; ``RenameColumn``, ``DropColumn`` and ``MoveColumn`` are Spark SQL's ``ALTER TABLE`` under schema on read
  (``hoodie.schema.on.read.enable=true``): the first of them gives the table its InternalSchema history
  (``.hoodie/.schema``), and from then on every schema change of the table (``AddColumn``, ``ChangeColumnType``,
  ``AddColumnAt`` below too) is an ALTER under schema on read. Their names may be nested dotted paths, as Hudi's
  DDL spells them: ``s.a`` (struct field), ``m.value.x`` (map value field), ``arr.element.x`` (array element
  field); ``MoveColumn(after=None)`` is ``FIRST`` (nested columns only).
* ``FailedWrite`` (below) leaves a write that never completes, then rolls it back when asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from conformance.model import Step

TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
TABLE_VERSIONS = (6, 8, 9)


@dataclass(frozen=True, slots=True, kw_only=True)
class Upsert(Step):
    """The ``upsert`` operation: ``rows`` replace the records with their keys (merged by the table's
    merge mode), and keys not in the table are inserted."""

    rows: pa.Table


@dataclass(frozen=True, slots=True, kw_only=True)
class AddColumnAt(Step):
    """``ALTER TABLE ADD COLUMNS(path type [FIRST | AFTER after])`` under schema on read: ``path`` may be nested
    (``s.x``, ``m.value.x``, ``arr.element.x``); ``first`` only inside a struct (HUDI-EVOLR-007/008/009/010)."""

    path: str
    type: pa.DataType
    after: str | None = None
    first: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedWrite(Step):
    """An ``upsert`` of ``rows`` whose data files are written but whose instant never completes (a crashed
    writer: requested and inflight, no completed instant). ``rollback=True`` then rolls it back the way the
    next writer does (a ``rollback`` instant; for log files, a rollback command block or deleted files)."""

    rows: pa.Table
    rollback: bool = False
