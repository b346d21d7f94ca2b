"""Apache Paimon for the hostile-input campaign (``conformance.hostile``): file kinds and seed tables."""

from conformance.hostile import FileKind, HostileSpec

SPEC = HostileSpec(
    # Seeds that together hold every kind of file the reference reads: snapshots and hints, schemas,
    # manifest lists, data and index manifests, append and primary-key data files, deletion-vector
    # and hash index files, tags and branches.
    seeds=("paimon/append-basic", "paimon/pk-upsert", "paimon/append-deletion-vectors", "paimon/pk-dynamic-bucket",
           "paimon/travel-tag", "paimon/branch-append"),
    kinds=(
        FileKind("hint", r"(^|/)snapshot/(LATEST|EARLIEST)$", "text"),
        FileKind("snapshot", r"(^|/)snapshot/snapshot-\d+$", "json"),
        FileKind("schema", r"(^|/)schema/schema-\d+$", "json"),
        FileKind("tag", r"(^|/)tag/tag-[^/]+$", "json"),
        FileKind("manifest_list", r"(^|/)manifest/manifest-list-[^/]+$", "avro"),
        FileKind("index_manifest", r"(^|/)manifest/index-manifest-[^/]+$", "avro"),
        FileKind("manifest", r"(^|/)manifest/manifest-[^/]+$", "avro"),
        FileKind("index", r"(^|/)index/index-[^/]+$", "binary"),
        FileKind("data", r"\.parquet$", "parquet"),
    ),
    directories=r"^(snapshot|schema|manifest|index|tag|bucket-\d+)$",
)
