"""Apache Hudi for the hostile-input campaign (``conformance.hostile``): file kinds and seed tables."""

from conformance.hostile import FileKind, HostileSpec

SPEC = HostileSpec(
    # Seeds that together hold every kind of file the reference reads: hoodie.properties, both timeline
    # layouts (JSON commit metadata in v6, Avro in v8+), requested plans (compaction, rollback), base files,
    # log files with Avro and Parquet data blocks, delete blocks and rollback command blocks.
    seeds=("hudi/v9-mor-upsert", "hudi/event-time-v6-mor", "hudi/mor-log-parquet-blocks", "hudi/mor-delete-block-event-time",
           "hudi/failed-write-rolled-back-mor", "hudi/v9-mor-compaction", "hudi/insert-overwrite-table-cow"),
    kinds=(
        FileKind("properties", r"(^|/)\.hoodie/hoodie\.properties$", "text"),
        FileKind("partition_metadata", r"(^|/)\.hoodie_partition_metadata$", "text"),
        FileKind("instant_v6", r"(^|/)\.hoodie/\d+\.(commit|deltacommit|replacecommit|clean|rollback)$", "json"),
        FileKind("instant_v8", r"(^|/)\.hoodie/timeline/\d+_\d+\.[a-z]+$", "avro"),
        FileKind("plan", r"(^|/)\.hoodie/(timeline/)?\d+\.[a-z]+\.(requested|inflight)$", "binary"),
        FileKind("log", r"(^|/)\.[^/]+\.log\.\d+_[^/]+$", "binary"),
        FileKind("data", r"\.parquet$", "parquet"),
    ),
    directories=r"^(\.hoodie|\.hoodie/timeline|part=[^/]+)$",
)
