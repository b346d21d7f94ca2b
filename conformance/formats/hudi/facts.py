"""The facts every Hudi engine's ``describe`` reports, what a version and a ref mean, and the read features.

Versions. Hudi names a table state by an instant time, which a writer takes from its clock; the kit's
version number is the count of completed writes instead: version 0 is the created table (nothing
committed: no rows), version N the table once the N-th data instant completed. Data instants are the
actions that change what a snapshot returns: ``commit``, ``deltacommit`` and ``replacecommit`` (so a
compaction, which completes as a ``commit``, and a clustering or insert overwrite, a ``replacecommit``, each
make a version; ``clean``, ``rollback``, ``savepoint`` and pending instants make none). They are counted in
commit order: completion time in table versions 8 and 9, requested time in table version 6. Reading
version N is a time-travel read as of the N-th instant (``as.of.instant`` = its requested time in v6, its
completion time in v8+). A case's ``timestamp`` is an ISO instant, read as the Hudi instant time it names.

Refs. A Hudi table has no branches or tags; a case's ``ref`` names a query type instead:

* ``read_optimized``: the read-optimized query (base files only) of the latest version, ``read_optimized:N`` of
  version N (an expectation names one of a version, a timestamp or a ref, so the ref carries it);
* ``incremental:A:B``: the incremental query over the commits of versions ``(A, B]`` (``B`` empty: to the
  latest), each record in its state at the end of the range.

Facts (``Expected.metadata`` keys), as ``hoodie.properties`` and the timeline state them:

* ``table_type``: ``COPY_ON_WRITE`` or ``MERGE_ON_READ``;
* ``table_version``: ``hoodie.table.version`` (6, 8, 9);
* ``record_key_fields``, ``partition_fields``, ``ordering_fields``: the table's key, partition and ordering
  (precombine) fields, in order (partition fields without the key generator's ``:type`` suffix);
* ``merge_mode``: ``COMMIT_TIME_ORDERING``, ``EVENT_TIME_ORDERING`` or ``CUSTOM`` (v6 tables: the mode their
  payload class implies);
* ``action``: the action of the instant read (``commit``, ``deltacommit``, ``replacecommit``; ``None`` at
  version 0);
* ``partitions``: the partition paths that hold a visible file group, sorted (``""`` unpartitioned);
* ``file_group_count``: visible file groups with a slice at the read point.
"""

from __future__ import annotations

from typing import Mapping

from conformance.formats import Comparison

FACTS: Mapping[str, Comparison] = {
    "table_type": "exact",
    "table_version": "exact",
    "record_key_fields": "exact",
    "partition_fields": "exact",
    "ordering_fields": "exact",
    "merge_mode": "exact",
    "action": "exact",
    "partitions": "exact",
    "file_group_count": "exact",
}

# Refs (see above).
READ_OPTIMIZED = "read_optimized"
INCREMENTAL = "incremental"


def parse_ref(ref: str) -> tuple[str, int | None, int | None]:
    """``"read_optimized"`` -> ("read_optimized", None, None); ``"read_optimized:2"`` -> ("read_optimized", None, 2);
    ``"incremental:1:3"`` -> ("incremental", 1, 3).

    ``ValueError`` for anything else (a case bug)."""
    kind, _, rest = ref.partition(":")
    if kind == READ_OPTIMIZED and (rest == "" or rest.isdigit()):
        return READ_OPTIMIZED, None, int(rest) if rest else None
    if kind == INCREMENTAL:
        a, sep, b = rest.partition(":")
        if sep and a.isdigit() and (b == "" or b.isdigit()):
            return INCREMENTAL, int(a), int(b) if b else None
    raise ValueError(f"a Hudi ref is 'read_optimized[:N]' or 'incremental:A:B' (versions), not {ref!r}")


# Read features a case may need (Case.features): the table mechanisms a reader must implement.
MERGE_ON_READ = "merge-on-read"  # merging log files into base files
LOG_PARQUET = "log-block-parquet"  # Parquet data blocks in log files (Avro is the default)
DELETE_BLOCKS = "log-delete-blocks"
EVENT_TIME = "event-time-ordering"  # merging by ordering field values, not by write order
TABLE_VERSION_6 = "table-version-6"  # the 0.x layout (flat timeline, log files by base instant)
TABLE_VERSION_8 = "table-version-8"  # the 1.x layout (timeline/ with completion times, Avro commit metadata)
TABLE_VERSION_9 = "table-version-9"  # 1.x with ordering.fields and merge modes in the table config
TABLE_VERSION_FEATURES = {6: TABLE_VERSION_6, 8: TABLE_VERSION_8, 9: TABLE_VERSION_9}
SCHEMA_EVOLUTION = "schema-evolution"
SCHEMA_ON_READ = "schema-on-read"  # columns resolved by InternalSchema field id (.hoodie/.schema history)
READ_OPTIMIZED_QUERY = "read-optimized-query"
INCREMENTAL_QUERY = "incremental-query"
