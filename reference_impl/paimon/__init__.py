"""Apache Paimon table format: metadata layer of the reference (in progress: not yet declared to
``reference_impl.formats``, so no command or run sees it until its reader and validator exist).

Modules follow the spec's sections (docs/docs/concepts/spec/) and, where bytes matter, the Java
source: ``types`` (data types and fields of schema files), ``layout`` (directories and file names,
branches), ``schema`` (schema files, the version compatibility rules, options and their defaults),
``snapshot`` (snapshot and tag JSON, EARLIEST/LATEST hints, time travel by id, tag and time),
``manifests`` (manifest lists, data and index manifests in Avro by each file's writer schema; base +
delta replay by file identity), ``binary_row`` (BinaryRow byte-exact, SimpleStats), ``bucket``
(the bucket functions), ``datafiles`` (Parquet/ORC/Avro data files by field id, system columns,
schema evolution and casts), ``deletion_vectors`` (32- and 64-bit deletion vector index files) and
``merge`` (primary-key merge engines, sequence and rowkind fields) and ``table`` (reading a snapshot: live files, level-0 visibility, deletion vectors, merging by partition and bucket).
"""
