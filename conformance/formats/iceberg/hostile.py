"""Apache Iceberg for the hostile-input campaign (``conformance.hostile``): file kinds and seed tables."""

from conformance.hostile import FileKind, HostileSpec

SPEC = HostileSpec(
    # Seeds that together hold every kind of file the reference reads: v1, v2 and v3 metadata,
    # the version hint, manifest lists and manifests, data, position and equality delete files,
    # deletion vectors in Puffin, branches and tags.
    seeds=("iceberg/v1-basic-append", "iceberg/v2-basic-append", "iceberg/v2-position-deletes",
           "iceberg/v2-equality-deletes", "iceberg/v3-deletion-vectors", "iceberg/v3-branch-and-tag"),
    kinds=(
        FileKind("metadata", r"^metadata/[^/]*\.metadata\.json(\.gz)?$", "json"),
        FileKind("version_hint", r"^metadata/version-hint\.text$", "text"),
        FileKind("manifest_list", r"^metadata/snap-[^/]*\.avro$", "avro"),
        FileKind("manifest", r"^metadata/[^/]*\.avro$", "avro"),
        FileKind("puffin", r"\.puffin$", "binary"),
        FileKind("delete_file", r"^data/.*deletes\.parquet$", "parquet"),
        FileKind("data", r"^data/.*\.parquet$", "parquet"),
    ),
    directories=r"^(metadata|data)$",
    # The planner decodes big manifests with Polars (reference_impl.iceberg.scan); the seeds' manifests
    # are small, so every mutant is sent down that path too (fastavro still reads them to validate).
    env=(("LAKECONF_ICEBERG_POLARS_MIN_BYTES", "0"),),
)
