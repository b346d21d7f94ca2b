"""The facts every Paimon engine's ``describe`` reports, and the read features cases ask for.

Versions are Paimon's own snapshot ids (``snapshot/snapshot-<id>``): version 0 is the table before
its first commit (a schema and no snapshot: no rows), version N the snapshot with id N. A case's
``ref`` names a tag, or a branch when no tag has that name (the corpus never gives both one name).
A timestamp reads the newest snapshot whose ``timeMillis`` is at or before it.

Facts (``Expected.metadata`` keys), as the schema and snapshot files state them:

* ``snapshot_id``: the id of the snapshot read (``None`` before the first commit);
* ``schema_id``: the schema the snapshot was written with (``schemaId``);
* ``primary_keys``, ``partition_keys``: the schema's ``primaryKeys`` / ``partitionKeys``, in order;
* ``bucket``: the ``bucket`` option as an integer (-1 dynamic or unaware, -2 postpone, N fixed),
  after the schema-version defaults (a v1 schema without it has 1 bucket);
* ``merge_engine``: the ``merge-engine`` option of a primary-key table (``deduplicate`` by default),
  ``None`` for an append table;
* ``options``: the schema's options (a case lists the ones that must be present);
* ``commit_kind``: the snapshot's ``commitKind`` (APPEND, COMPACT, OVERWRITE, ANALYZE).
"""

from __future__ import annotations

from typing import Mapping

from conformance.formats import Comparison

FACTS: Mapping[str, Comparison] = {
    "snapshot_id": "exact",
    "schema_id": "exact",
    "primary_keys": "exact",
    "partition_keys": "exact",
    "bucket": "exact",
    "merge_engine": "exact",
    "options": "subset",
    "commit_kind": "exact",
}

# Read features a case may need (Case.features): the table mechanisms a reader must implement.
PRIMARY_KEY = "primary-key"  # merging sorted runs by key (deduplicate unless a merge engine is named)
DELETION_VECTORS = "deletion-vectors"
PARTIAL_UPDATE = "merge-engine-partial-update"
AGGREGATION = "merge-engine-aggregation"
FIRST_ROW = "merge-engine-first-row"
SEQUENCE_FIELD = "sequence-field"
ROWKIND_FIELD = "rowkind-field"
BRANCHES = "branches"
SCHEMA_EVOLUTION = "schema-evolution"
FILE_FORMATS = {"orc": "file-format-orc", "avro": "file-format-avro"}  # parquet is the default everyone reads
