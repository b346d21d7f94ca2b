"""Apache Paimon table format: metadata layer of the reference, declared to ``reference_impl.formats``
(``FORMAT`` below: a ``schema/schema-N`` file marks a table; ``lakeconf read`` and ``lakeconf validate``
reach the reader ``table.read_table`` and the validator ``validate.validate_table``).

Modules follow the spec's sections (docs/docs/concepts/spec/) and, where bytes matter, the Java
source: ``types`` (data types and fields of schema files), ``layout`` (directories and file names,
branches), ``schema`` (schema files, the version compatibility rules, options and their defaults),
``snapshot`` (snapshot and tag JSON, EARLIEST/LATEST hints, time travel by id, tag and time),
``manifests`` (manifest lists, data and index manifests in Avro by each file's writer schema; base +
delta replay by file identity), ``binary_row`` (BinaryRow byte-exact, SimpleStats), ``bucket``
(the bucket functions), ``datafiles`` (Parquet/ORC/Avro data files by field id, system columns,
schema evolution and casts), ``deletion_vectors`` (32- and 64-bit deletion vector index files),
``merge`` (primary-key merge engines, sequence and rowkind fields), ``table`` (reading a snapshot:
live files, level-0 visibility, deletion vectors, merging by partition and bucket) and ``validate``
(every rule of rules/paimon.md a table breaks, over all its snapshots, tags, schemas and manifests).
"""

from reference_impl.formats import Format, Selector

# A schema file under schema/ marks a Paimon table (a table exists from its first schema, before any commit).
# The kit's version number (``lakeconf read --at N``) is the snapshot id.
FORMAT = Format(
    "paimon", "schema", (),
    "reference_impl.paimon.table:read_table", "reference_impl.paimon.validate:validate_table",
    prefixes=("schema-",),
    selectors=(
        Selector("--snapshot-id", "snapshot_id", int, "a snapshot id (snapshot/snapshot-N)"),
        Selector("--tag", "tag", str, "a tag name (tag/tag-<name>)"),
        Selector("--as-of", "timestamp", str, "the latest snapshot committed at or before this time (ISO-8601, or "
                                              "epoch milliseconds), by each snapshot's timeMillis"),
    ),
)
