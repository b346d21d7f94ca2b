"""Delta Lake for the hostile-input campaign (``conformance.hostile``): file kinds and seed tables."""

from conformance.hostile import FileKind, HostileSpec

SPEC = HostileSpec(
    # Seeds that together hold every kind of file the reference reads: commits, classic,
    # multi-part and V2 checkpoints with sidecars, _last_checkpoint, deletion vectors, partitions.
    seeds=("delta/basic-append", "delta/partitioned-string", "delta/checkpoint-multipart",
           "delta/checkpoint-v2-sidecars", "delta/deletion-vectors", "delta/checkpoint-with-deletion-vectors"),
    kinds=(
        FileKind("commit", r"^_delta_log/\d{20}\.json$", "ndjson"),
        FileKind("last_checkpoint", r"^_delta_log/_last_checkpoint$", "json"),
        FileKind("checkpoint_json", r"^_delta_log/\d{20}\.checkpoint\.[^/]*\.json$", "ndjson"),
        FileKind("checkpoint", r"^_delta_log/\d{20}\.checkpoint[^/]*\.parquet$", "parquet"),
        FileKind("sidecar", r"^_delta_log/_sidecars/[^/]+\.parquet$", "parquet"),
        FileKind("deletion_vector", r"(^|/)deletion_vector_[^/]+\.bin$", "binary"),
        FileKind("data", r"^(?!_delta_log/).*\.parquet$", "parquet"),
    ),
    directories=r"^(_delta_log|_delta_log/_sidecars|[^_/][^/]*)$",
)
