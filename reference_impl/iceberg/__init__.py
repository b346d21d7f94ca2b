"""Apache Iceberg table spec (format versions 1, 2 and 3): metadata layer of the reference.

Modules follow the spec's sections: ``types`` (Schemas and Data Types, Appendix C schemas,
Appendix A Parquet field ids, name mapping), ``values`` (Appendix D single-value serialization),
``transforms`` (Partition Transforms, Appendix B hashing), ``partitioning`` (Partitioning,
Sorting, Appendix C specs and sort orders), ``evolution`` (Schema Evolution), ``avro``
(Appendix A Avro type mapping and field-id annotations) and ``geospatial`` (Appendix G,
WKB <-> WKT for geometry/geography values), ``metadata`` (Table Metadata, Snapshots, refs,
statistics, Appendix C JSON, Appendix E upgrades), ``manifests`` (Manifests and Manifest Lists in
Avro, inheritance) and ``snapshots`` (snapshot selection by id, ref and time; live files).
Version 4 drafts are out of scope.
"""

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
