"""Apache Iceberg table spec (format versions 1, 2 and 3): metadata layer of the reference.

Modules follow the spec's sections: ``types`` (Schemas and Data Types, Appendix C schemas,
Appendix A Parquet field ids, name mapping), ``values`` (Appendix D single-value serialization),
``transforms`` (Partition Transforms, Appendix B hashing), ``partitioning`` (Partitioning,
Sorting, Appendix C specs and sort orders), ``evolution`` (Schema Evolution), ``avro``
(Appendix A Avro type mapping and field-id annotations) and ``geospatial`` (Appendix G,
WKB <-> WKT for geometry/geography values), ``metadata`` (Table Metadata, Snapshots, refs,
statistics, Appendix C JSON, Appendix E upgrades), ``manifests`` (Manifests and Manifest Lists in
Avro, inheritance), ``snapshots`` (snapshot selection by id, ref and time; live files; the kit's
version numbers), ``puffin`` (the Puffin file format), ``deletes`` (position and equality delete
files, deletion vectors), ``scan`` (Scan Planning: which deletes apply to which data file),
``read`` (Column Projection, defaults, promotion, applying deletes), ``table`` (loading the
current metadata, reading at a version / time / ref), ``datafiles`` (Parquet data files with
field ids and metrics), ``catalog`` (File System Tables with a version hint; a SQL catalog on
SQLite), ``writer`` and ``operations`` (commits, Commit Conflict Resolution and Retry, every
table operation) and ``validate`` (every rule a table breaks). Version 4 drafts are out of scope.
"""

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)

from reference_impl.formats import Format, Selector  # noqa: E402 - the declaration follows the docstring's constants

# A metadata file (or the file-system layout's version hint) under metadata/ marks an Iceberg table;
# a metadata file alone names one (what a catalog, a static table or DuckDB's iceberg_scan is given).
FORMAT = Format(
    "iceberg", "metadata", (".metadata.json", ".metadata.json.gz", ".gz.metadata.json", "version-hint.text"),
    "reference_impl.iceberg.table:read_table", "reference_impl.iceberg.validate:validate_table",
    locator="reference_impl.iceberg.table:locate", files=(".metadata.json", ".metadata.json.gz"),
    selectors=(
        Selector("--snapshot-id", "snapshot_id", int, "a snapshot id, as the table metadata and catalogs list them"),
        Selector("--ref", "ref", str, "a branch or tag name"),
        Selector("--as-of", "timestamp", str, "the snapshot current at this time (ISO-8601, or epoch milliseconds), "
                                              "from the snapshot-log"),
    ),
)
