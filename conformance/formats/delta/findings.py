"""Known engine disagreements on Delta cases (the model and the rules of triage: ``conformance.findings``).

``section`` names the PROTOCOL.md section(s) the spec side rests on.
"""

from __future__ import annotations

from conformance.findings import Finding

_DELTA_RS = "1.6.6"
_SEEN_ALL = {
    "deltalake": _DELTA_RS, "deltalake-datafusion": _DELTA_RS, "duckdb": "1.5.5 (delta extension 1.5.5)",
    "polars": "1.44.2", "daft": "0.7.26", "spark": "spark 4.0.5 / delta-spark 4.4.0",
    "spark-3.5": "spark 3.5.9 / delta-spark 3.3.2",
}
# Both pinned Spark lines, where a cause was seen on each (delta-spark 4.4.0 and 3.3.2 share it).
_SPARKS = ("spark", "spark-3.5")
_S3_STORES = ("minio", "s3")


def _seen(*engines: str) -> dict[str, str]:
    return {e: _SEEN_ALL[e] for e in engines}


_DV_CASES = (
    "delta/checkpoint-with-deletion-vectors", "delta/deletion-vector-absolute-path", "delta/deletion-vector-inline",
    "delta/deletion-vector-restore", "delta/deletion-vectors", "delta/deletion-vectors-shared-file",
    "delta/neg-dv-corrupt", "delta/neg-dv-file-missing", "delta/neg-dv-unknown-storage-type",
)
_CM_CASES = (
    "delta/checkpoint-column-mapping-struct-stats", "delta/column-mapping-drop-readd", "delta/column-mapping-id",
    "delta/column-mapping-legacy-protocol", "delta/column-mapping-name", "delta/column-mapping-special-names",
    "delta/neg-column-mapping-unknown-mode",
)
_V2CKPT_CASES = ("delta/checkpoint-v2-inline", "delta/checkpoint-v2-sidecars")

_REFUSE_FEATURE_SPEC = (
    "Neither side is wrong: the spec requires a reader that does not implement a listed reader feature to "
    "refuse the table ('to read a table, readers must implement and respect all features listed in "
    "readerFeatures'), so the refusal is conformant; the gap is a missing feature, and the reference's rows "
    "are what a reader implementing it returns."
)

FINDINGS: tuple[Finding, ...] = (
    # ---------------------------------------------------------------- refusals that are not verdicts
    # Found when refusals started to count only with the expected kind (an engine's exception is
    # judged by its words, conformance/engines/errors.py): these used to pass as "raised as expected".
    Finding(
        id="kernel-calls-unknown-dv-storage-type-its-own-bug",
        engines=("deltalake-datafusion", "duckdb", "polars"),
        cases=("delta/neg-dv-unknown-storage-type",),
        status="error",
        pattern=r"Internal error Unsupported deletion vector format option",
        cause=(
            "delta-kernel-rs refuses the deletion vector with storageType 'x' as 'Internal error Unsupported "
            "deletion vector format option: x. This is a kernel bug, please report.': it names the failure its "
            "own bug, not a broken table."
        ),
        spec=(
            "The spec supports the reference that the table is invalid: storageType is one of 'u', 'i' or 'p', "
            "so a reader has no defined way to find the vector and must refuse the table; the refusal happens, "
            "but as an internal error, which is no verdict on the table."
        ),
        rules=("DELTA-DV-005",),
        section="Deletion Vectors > Deletion Vector Descriptor Schema",
        upstream="engine bug",
        versions=_seen("deltalake-datafusion", "duckdb", "polars"),
    ),
    Finding(
        id="follows-a-relative-path-out-of-the-root",
        engines=("duckdb", "daft"),
        cases=("delta/neg-path-escapes-root",),
        status="error",
        pattern=r"SignatureDoesNotMatch|XMinioInvalidResourceName",
        stores=_S3_STORES,
        cause=(
            "The add path '../outside-the-table.parquet' is followed, not refused: DuckDB and Daft send a GET for "
            "'<table>/../outside-the-table.parquet' to the object store, which rejects the request itself "
            "(MinIO: DuckDB 'HTTP 403 SignatureDoesNotMatch', Daft 'XMinioInvalidResourceName'). The failure "
            "is the store's, so it is no verdict on the table; on local disk the same engines find no file there."
        ),
        spec=(
            "The spec supports the reference: data files live in the table root or its subdirectories ('Data "
            "files ... in the root directory of the table or in any nontrivial subdirectory'), so a relative path "
            "that climbs out of the root names no data file of the table and the table is invalid."
        ),
        rules=("DELTA-LOG-002", "DELTA-ACTION-017"),
        section="Data Files; Add File and Remove File",
        upstream="engine bug",
        versions=_seen("duckdb", "daft"),
    ),
    Finding(
        id="spark-fails-decoding-a-bad-protocol",
        engines=("spark",),
        cases=("delta/neg-reader-version-4", "delta/neg-reader3-writer5"),
        status="error",
        pattern=r"EXPRESSION_DECODING_FAILED\] Failed to decode a row to a value of the expressions",
        cause=(
            "delta-spark 4.4 fails to decode the protocol action of (4,2) and (3,5) tables: "
            "'[EXPRESSION_DECODING_FAILED] Failed to decode a row to a value of the expressions', without "
            "naming the protocol (delta-spark 3.3 names it: see spark-3.5's cells)."
        ),
        spec=(
            "The spec supports the reference: a reader must refuse a reader version it does not implement "
            "(unsupported) and a (3,5) protocol is invalid ('reader version 3 requires writer version 7'); a "
            "decoding failure that does not say either is no verdict on the table."
        ),
        rules=("DELTA-ACTION-026", "DELTA-FEATURE-003"),
        section="Protocol Evolution; Table Features",
        upstream="engine bug",
        versions=_seen("spark"),
    ),
    Finding(
        id="spark35-calls-reader-version-4-invalid",
        engines=("spark-3.5",),
        cases=("delta/neg-reader-version-4",),
        status="fail",
        pattern=r"Mismatched minReaderVersion and readerFeatures",
        cause=(
            "delta-spark 3.3 refuses protocol (4,2) with 'requirement failed: Mismatched minReaderVersion and "
            "readerFeatures', a verdict that the protocol is malformed, where the table is merely newer than "
            "the reader."
        ),
        spec=(
            "The spec supports the reference: reader version 4 is beyond the versions the spec defines, so a "
            "reader must refuse the table as one it does not support ('readers must not read a table with a "
            "higher minReaderVersion than they support'); nothing in the protocol action is malformed."
        ),
        rules=("DELTA-ACTION-026",),
        section="Protocol Evolution",
        upstream="engine limitation",
        versions=_seen("spark-3.5"),
    ),
    Finding(
        id="unknown-column-mapping-mode-called-unsupported",
        engines=("spark", "spark-3.5", "daft"),
        cases=("delta/neg-column-mapping-unknown-mode",),
        status="fail",
        pattern=r"raised unsupported, expected invalid_table",
        cause=(
            "delta.columnMapping.mode='bogus' is refused as a mode the engine does not support (delta-spark: "
            "'The column mapping mode `bogus` is not supported for this Delta version. Please upgrade'; Daft: "
            "NotImplementedError 'Unsupported Delta Lake column mapping mode'), not as an invalid table."
        ),
        spec=(
            "The spec supports the reference, narrowly: the mode is 'one of none, id, and name', so 'bogus' is "
            "not a mode any version of the protocol defines and the table is invalid; calling it unsupported "
            "invites an upgrade that cannot help. The refusal itself is right."
        ),
        rules=("DELTA-COLMAP-001",),
        section="Column Mapping",
        upstream="spec ambiguity",
        versions=_seen("spark", "spark-3.5", "daft"),
    ),
    # ---------------------------------------------------------------- log and checkpoints
    Finding(
        id="kernel-trusts-incomplete-checkpoint-hint",
        engines=("deltalake", "deltalake-datafusion", "duckdb", "polars", "daft"),
        cases=("delta/checkpoint-multipart-incomplete-hinted",),
        status="error",
        pattern=r"Had a _last_checkpoint hint but didn't find any checkpoints",
        cause=(
            "delta-kernel-rs (under delta-rs, and bundled in DuckDB's delta extension) follows _last_checkpoint "
            "to the v3 multi-part checkpoint, finds part 2 of 3 missing and raises 'Had a _last_checkpoint hint "
            "but didn't find any checkpoints' instead of falling back to the complete v1 checkpoint."
        ),
        spec=(
            "The spec supports the reference: 'readers must ignore multi-part checkpoints with missing parts', "
            "and _last_checkpoint is only a pointer readers 'can' use to avoid listing, so the table at v3 "
            "(v1 checkpoint + commits 2..3) is well defined."
        ),
        rules=("DELTA-CKPT-014", "DELTA-CKPT-028"),
        section="Checkpoints; Last Checkpoint File",
        upstream="engine bug",
        versions=_seen("deltalake", "deltalake-datafusion", "duckdb", "polars", "daft"),
    ),
    Finding(
        id="accepts-two-metadata-in-one-commit",
        engines=("deltalake", "deltalake-datafusion", "duckdb", "polars", "daft"),
        cases=("delta/neg-two-metadata-in-commit",),
        status="fail",
        pattern=r"silently .*a correct reader raises invalid_table",
        cause=(
            "delta-kernel-rs / delta-rs keep one of the two metaData actions of commit 0 and read the table "
            "without complaint (the pick is arbitrary: actions in a commit are unordered)."
        ),
        spec=(
            "The spec supports the reference that the table is invalid ('There can be at most one metadata "
            "action in a given version of the table'; a snapshot has 'a single metaData action'), but it has no "
            "reader clause demanding refusal; expecting invalid_table is the kit's policy for an undefined state."
        ),
        rules=("DELTA-ACTION-003", "DELTA-REPLAY-002"),
        section="Change Metadata; Action Reconciliation",
        upstream="spec ambiguity",
        versions=_seen("deltalake", "deltalake-datafusion", "duckdb", "polars", "daft"),
    ),
    Finding(
        id="daft-opens-latest-snapshot-first",
        engines=("daft",),
        cases=("delta/neg-malformed-json", "delta/neg-version-gap"),
        status="error",
        pattern=r"Expected contiguous commit files|Json error: Truncated record",
        cause=(
            "daft.read_deltalake builds DeltaTable(uri) at the latest version and only then calls "
            "load_as_version, so a broken later commit (a truncated line, a version gap) makes an intact "
            "earlier version unreadable."
        ),
        spec=(
            "The spec supports the reference: version v is the state of v-1 plus commit v, so reading v needs "
            "only the commits up to v; the broken files lie after the requested version."
        ),
        rules=("DELTA-LOG-001", "DELTA-LOG-005"),
        section="Delta Table Specification; Delta Log Entries",
        upstream="engine limitation",
        versions=_seen("daft"),
    ),
    Finding(
        id="absolute-add-path-joined-to-root",
        engines=("deltalake", "duckdb", "polars", "daft"),
        cases=("delta/absolute-paths",),
        status="error",
        pattern=r"absolute-paths/(?:s3:|s3%3A|file:)|POLARS_VERBOSE",
        cause=(
            "The reader prefixes the table root to an add.path that is already an absolute URI "
            "(file:///<root>/part-…parquet) and looks for '<root>/file:/…', which does not exist "
            "(the DataFusion path of delta-rs resolves it correctly)."
        ),
        spec=(
            "The spec supports the reference: add.path is 'a relative path to a data file from the root of the "
            "table or an absolute path', an RFC 2396 URI, so an absolute URI must be used as is."
        ),
        rules=("DELTA-ACTION-017",),
        section="Add File and Remove File",
        upstream="engine bug",
        versions=_seen("deltalake", "duckdb", "polars", "daft"),
    ),
    # ---------------------------------------------------------------- time travel
    Finding(
        id="delta-rs-ignores-in-commit-timestamps",
        engines=("deltalake", "deltalake-datafusion", "polars", "daft"),
        cases=("delta/time-travel-timestamp",),
        status="fail",
        pattern=r"expected row\(s\) missing, 0 unexpected row\(s\) \(got 0 rows",
        cause=(
            "delta-rs resolves 'as of timestamp' from the commit files' modification times, not from "
            "commitInfo.inCommitTimestamp, so every 2024 timestamp precedes all file times and the read clamps "
            "to version 0 (polars and daft hand the timestamp to delta-rs)."
        ),
        spec=(
            "The spec supports the reference, at SHOULD level: on an in-commit-timestamp table 'readers should "
            "use the inCommitTimestamp as the commit timestamp for operations like time travel'."
        ),
        rules=("DELTA-ICT-006", "DELTA-ICT-007"),
        section="In-Commit Timestamps > Recommendations for Readers of Tables with In-Commit Timestamps",
        upstream="engine limitation",
        versions=_seen("deltalake", "deltalake-datafusion", "polars", "daft"),
    ),
    # ---------------------------------------------------------------- partition values
    Finding(
        id="polars-partition-values-from-directories",
        engines=("polars",),
        cases=("delta/partition-dir-mismatch", "delta/partition-timestamp-forms"),
        status="fail",
        pattern=r"expected row\(s\) missing",
        cause=(
            "polars scans the data files with hive_partitioning and takes partition values from the col=value "
            "directory names (p=zzz; the un-rounded timestamp in the path) instead of add.partitionValues."
        ),
        spec=(
            "The spec supports the reference: the directory layout 'is only used to follow existing conventions "
            "and is not required by the protocol. Actual partition values for a file must be read from the "
            "transaction log.'"
        ),
        rules=("DELTA-LOG-003", "DELTA-PART-004"),
        section="Data Files; Partition Value Serialization",
        upstream="engine bug",
        versions=_seen("polars"),
    ),
    Finding(
        id="polars-binary-partition-from-directory",
        engines=("polars",),
        cases=("delta/multi-partitioned",),
        status="error",
        pattern=r"unsupported data type when reading CSV",
        cause=(
            "polars parses the binary partition column from the hive directory name with its CSV value parser, "
            "which has no binary type ('unsupported data type when reading CSV: binary')."
        ),
        spec=(
            "The spec supports the reference: binary partition values are escaped-byte strings in "
            "add.partitionValues, and partition values must be read from the log, not the directory."
        ),
        rules=("DELTA-PART-008", "DELTA-LOG-003"),
        section="Partition Value Serialization; Data Files",
        upstream="engine bug",
        versions=_seen("polars"),
    ),
    Finding(
        id="deltalake-pyarrow-negative-decimal-partition",
        engines=("deltalake",),
        cases=("delta/multi-partitioned-typed",),
        status="error",
        pattern=r"The string '0\.\-50' is not a valid decimal128 number",
        cause=(
            "delta-rs's pyarrow path renders the decimal(10,2) partition value -0.50 as the string '0.-50' when "
            "it builds the partition column, and pyarrow rejects it (the DataFusion path reads it)."
        ),
        spec=(
            "The spec supports the reference: numeric partition values are 'the string representation of the "
            "number', and the log holds the valid '-0.50'."
        ),
        rules=("DELTA-PART-002",),
        section="Partition Value Serialization",
        upstream="engine bug",
        versions=_seen("deltalake"),
        # delta-rs's own writer commits that value as '0.-50' and fails the build
        # (deltalake-writes-garbled-negative-decimal-partition), so its tables never reach this read.
        writers=("reference", "spark", "spark-3.5"),
    ),
    Finding(
        id="datafusion-empty-string-partition-not-null",
        engines=("deltalake-datafusion",),
        cases=("delta/partition-empty-string-is-null",),
        status="fail",
        pattern=r"\+ \('', \d+\)",
        cause=(
            "delta-rs's DataFusion scan returns '' for a string partition column whose partitionValues entry is "
            "the empty string (the pyarrow path returns null)."
        ),
        spec=(
            "The spec supports the reference: 'An empty string for any type translates to a null partition value.'"
        ),
        rules=("DELTA-PART-001",),
        section="Partition Value Serialization",
        upstream="engine bug",
        versions=_seen("deltalake-datafusion"),
    ),
    Finding(
        id="datafusion-null-map-value-with-required-fields",
        engines=("deltalake-datafusion",),
        cases=("delta/nested-map-null-value-required-fields",),
        status="error",
        pattern=r"Found unmasked nulls for non-nullable StructArray field",
        cause=(
            "delta-rs's DataFusion scan fails on a map whose value is null when the value's struct type has a "
            "required struct field: 'Failed to convert into Arrow schema: Invalid argument error: Found unmasked "
            "nulls for non-nullable StructArray field'. The pyarrow path reads the same file. Found by the "
            "property suite (random nested schemas over the full value range)."
        ),
        spec=(
            "The spec supports the reference: a map's valueContainsNull says whether values may be null, and a "
            "field's nullable applies only where its parent value exists; a null value carries no required "
            "field to fill."
        ),
        rules=("DELTA-SCHEMA-004", "DELTA-SCHEMA-002"),
        section="Schema Serialization Format > Map Type; Struct Field",
        upstream="engine bug",
        versions=_seen("deltalake-datafusion"),
    ),
    Finding(
        id="spark4-cannot-view-map-with-required-value-fields",
        engines=("spark",),
        cases=("delta/nested-map-null-value-required-fields",),
        status="error",
        pattern=r"Can't view array of type map<",
        cause=(
            "Spark 4.0.5 with delta-spark 4.4.0 fails to read a map whose values may be null but whose value "
            "struct has required fields: 'Can't view array of type map<string, struct<a: struct<a: string not "
            "null> not null>> as map<...>'. Spark 3.5.9 with delta-spark 3.3.2 reads the same table."
        ),
        spec=(
            "The spec supports the reference: valueContainsNull allows null values, and a struct field's "
            "nullable holds only inside a value that exists, so the table's rows are well defined."
        ),
        rules=("DELTA-SCHEMA-004", "DELTA-SCHEMA-002"),
        section="Schema Serialization Format > Map Type; Struct Field",
        upstream="engine bug",
        versions=_seen("spark"),
    ),
    # ---------------------------------------------------------------- column mapping and types
    Finding(
        id="duckdb-column-mapping-partition-null",
        engines=("duckdb",),
        cases=(
            "delta/column-mapping-id", "delta/column-mapping-name", "delta/column-mapping-special-names",
            "delta/checkpoint-column-mapping-struct-stats",
        ),
        status="fail",
        pattern=r"\n\+ \(.*, null\)(?:\n|$)|\n\+ \(\d+, null, ",
        cause=(
            "DuckDB's delta extension returns null for the partition column of a column-mapped table: it does "
            "not find add.partitionValues, which the log keys by the column's physical name."
        ),
        spec=(
            "The spec supports the reference: in id and name mode 'partition values and column level statistics "
            "must be resolved by their physical names', and writers track them by physical name."
        ),
        rules=("DELTA-COLMAP-014", "DELTA-COLMAP-008"),
        section="Column Mapping > Reader Requirements for Column Mapping",
        upstream="engine bug",
        versions=_seen("duckdb"),
    ),
    Finding(
        id="datafusion-accepts-unknown-column-mapping-mode",
        engines=("deltalake-datafusion",),
        cases=("delta/neg-column-mapping-unknown-mode",),
        status="fail",
        pattern=r"silently .*a correct reader raises invalid_table",
        cause=(
            "delta-rs's DataFusion path accepts delta.columnMapping.mode='bogus' on a columnMapping table and "
            "returns a row of nulls instead of refusing."
        ),
        spec=(
            "The spec supports the reference: the mode is 'one of none, id, and name', and with the columnMapping "
            "reader feature readers 'must read the table property delta.columnMapping.mode and do one of' those "
            "three; an unknown mode leaves no defined way to read the files."
        ),
        rules=("DELTA-COLMAP-001", "DELTA-FEATURE-004"),
        section="Column Mapping; Reader Requirements for Column Mapping; Table Features",
        upstream="engine bug",
        versions=_seen("deltalake-datafusion"),
    ),
    Finding(
        id="daft-honours-column-mapping-without-feature",
        engines=("daft",),
        cases=("delta/column-mapping-mode-without-feature",),
        status="error",
        pattern=r"carries no parquet field IDs",
        cause=(
            "daft applies delta.columnMapping.mode=name from the configuration of a (1,2) table without checking "
            "the protocol, builds a field-id mapping and refuses the data files, which carry no field ids."
        ),
        spec=(
            "The spec supports the reference, at SHOULD level: the mode property 'should only be honored if the "
            "table's protocol has reader and writer versions and/or table features that support' columnMapping."
        ),
        rules=("DELTA-COLMAP-002",),
        section="Column Mapping",
        upstream="engine bug",
        versions=_seen("daft"),
    ),
    Finding(
        id="duckdb-void-type-unknown",
        engines=("duckdb",),
        cases=("delta/void-column",),
        status="error",
        pattern=r"Unsupported Delta table type: 'void'",
        cause=(
            "The delta-kernel-rs bundled in DuckDB's delta extension does not know the void type and refuses the "
            "schema ('Unsupported Delta table type: void')."
        ),
        spec=(
            "The spec supports the reference: void is a primitive type 'not gated by any table feature', and "
            "'readers MUST reconstruct them as all-null columns' (text added to PROTOCOL.md in 2026; older text "
            "left void undefined)."
        ),
        rules=("DELTA-SCHEMA-010", "DELTA-SCHEMA-006"),
        section="Schema Serialization Format > Primitive Types > Void Type",
        upstream="engine limitation",
        versions=_seen("duckdb"),
    ),
    # ---------------------------------------------------------------- on object stores
    Finding(
        id="polars-object-store-path-not-uri-decoded",
        engines=("polars",),
        cases=(
            "delta/partition-escaped-values", "delta/percent-encoded-paths", "delta/timestamp-ntz-partition",
            "delta/multi-partitioned-typed",
        ),
        status="error",
        pattern=r"%[0-9A-Fa-f]{2}[^ ]* not found",
        cause=(
            "On S3 (MinIO), polars uses add.path as an object key without percent-decoding it: for the file "
            "'p=a b/part-....parquet' (add.path 'p=a%20b/part-....parquet') it requests the key 'p=a%20b/...' and "
            "gets 404 (on local disk the same tables read correctly)."
        ),
        spec=(
            "The spec supports the reference: add.path is an RFC 2396 URI and must be percent-decoded before use, "
            "so 'p=a%20b' names the directory 'p=a b' on every store."
        ),
        rules=("DELTA-ACTION-017",),
        section="Add File and Remove File",
        upstream="engine bug",
        versions=_seen("polars"),
        stores=_S3_STORES,
    ),
    # ---------------------------------------------------------------- Spark-written tables
    Finding(
        id="int96-timestamps-read-through-nanoseconds-error",
        engines=("deltalake",),
        cases=("delta/all-primitive-types",),
        status="error",
        pattern=r"Casting from timestamp\[ns\] to timestamp\[us, tz=UTC\] would lose data",
        cause=(
            "Spark (delta-spark 4.4 with Spark's default spark.sql.parquet.outputTimestampType=INT96) writes the "
            "timestamp column as INT96; delta-rs's pyarrow path reads it as timestamp[ns], which cannot hold "
            "0001-01-01 or 9999-12-31, and the cast to timestamp[us] fails ('would lose data')."
        ),
        spec=(
            "The spec supports the expected rows: the type mapping table lists INT96 as a Parquet encoding of "
            "timestamp that readers should support, and the values (years 0001 and 9999) are valid Delta "
            "timestamps (microseconds); a reader must not route them through a 64-bit nanosecond timestamp."
        ),
        rules=("DELTA-READER-002",),
        section="Delta Data Type to Parquet Type Mappings",
        upstream="engine bug",
        versions=_seen("deltalake"),
        writers=("spark",),
    ),
    Finding(
        id="int96-timestamps-read-through-nanoseconds-wrap",
        engines=("deltalake-datafusion", "polars", "daft"),
        cases=("delta/all-primitive-types",),
        status="fail",
        pattern=r"\+ \(-128, .*, (?:1754-08-30T22:43:41|2262-04-11T23:47:16)",
        cause=(
            "Spark writes the timestamp column as INT96 (Spark's default output type); these readers convert INT96 "
            "through 64-bit nanoseconds, so 0001-01-01 and 9999-12-31T23:59:59.999999 overflow and come back as "
            "wrong 18th-century instants, silently."
        ),
        spec=(
            "The spec supports the expected rows: INT96 is a listed Parquet encoding of timestamp that readers "
            "should support, and years 0001..9999 are valid microsecond timestamps (DuckDB and Spark read them)."
        ),
        rules=("DELTA-READER-002",),
        section="Delta Data Type to Parquet Type Mappings",
        upstream="engine bug",
        versions=_seen("deltalake-datafusion", "polars", "daft"),
        writers=("spark",),
    ),
    # ---------------------------------------------------------------- Spark-written tables
    Finding(
        id="spark35-refuses-to-write-ancient-dates",
        engines=("*",),
        writers=("spark-3.5",),
        cases=("delta/all-primitive-types",),
        status="error",
        pattern=r"build failed \(writer spark-3\.5\).*Job aborted due to stage failure",
        cause=(
            "Spark 3.5 refuses to write dates before 1582-10-15 and timestamps before 1900 to Parquet "
            "('INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME') unless the user sets "
            "spark.sql.parquet.datetimeRebaseModeInWrite, so the table is never built; Spark 4.0 writes them."
        ),
        spec=(
            "The spec supports the rows the case writes: date and timestamp range over years 0001..9999, stored "
            "as proleptic Gregorian Parquet values; the refusal is a default of the engine."
        ),
        rules=("DELTA-SCHEMA-006",),
        section="Primitive Types",
        upstream="engine limitation",
    ),
    # ---------------------------------------------------------------- delta-rs-written tables
    Finding(
        id="deltalake-writes-binary-partition-as-escape-text",
        engines=("*",),
        cases=("delta/multi-partitioned",),
        status="fail",
        pattern=r"\\\\u00",
        cause=(
            "delta-rs 1.6.6 (write_deltalake) stores a binary partition value as the literal escape text "
            "'\\u0068\\u0065...' (JSON \"\\\\u0068...\", six characters per byte), while delta-kernel-rs readers "
            "(delta-rs itself on both paths, DuckDB, daft) return that text's UTF-8 bytes, so b'hello' comes back "
            "as b'\\u0068\\u0065...': delta-rs does not round-trip its own binary partition values."
        ),
        spec=(
            "The spec leans against the writer: binary is 'Encoded as a string of escaped binary values. For "
            "example, \"\\u0001\\u0002\\u0003\"', a quoted JSON string whose value is one character per byte (Spark "
            "writes the bytes cast to a string, which JSON escapes that way; kernel readers read the string's bytes). The text is ambiguous enough that the reference "
            "reads both forms (reference_impl/delta/partition.py), which is why the reference cell passes."
        ),
        rules=("DELTA-PART-008",),
        section="Partition Value Serialization",
        upstream="engine bug",
        writers=("deltalake",),
    ),
    Finding(
        id="deltalake-writes-garbled-negative-decimal-partition",
        engines=("*",),
        cases=("delta/multi-partitioned-typed",),
        status="error",
        pattern=r"Failed to parse value '0\.\-50' as 'decimal\(10,2",
        cause=(
            "delta-rs 1.6.6 (write_deltalake) commits the decimal(10,2) partition value -0.50 as the string '0.-50' "
            "(the formatting bug its pyarrow reader shows too) and then fails to load its own table ('Failed to "
            "parse value '0.-50' as 'decimal(10,2)''), so the build fails and no reader sees a table."
        ),
        spec=(
            "The spec supports failing the writer: numeric partition values are 'the string representation of "
            "the number' ('-0.50'); '0.-50' is not a number, so commit 1 is invalid."
        ),
        rules=("DELTA-PART-002",),
        section="Partition Value Serialization",
        upstream="engine bug",
        writers=("deltalake",),
    ),
    Finding(
        id="daft-rejects-string-view-arrow-hint",
        engines=("daft",),
        cases=("delta/time-travel-versions", "delta/update-copy-on-write", "delta/change-data-feed"),
        status="error",
        pattern=r"Unsupported Arrow DataType",
        cause=(
            "The data files delta-rs's DELETE/UPDATE rewrite carry an ARROW:schema metadata hint typing the string "
            "column as Utf8View (the Parquet column itself is a plain BYTE_ARRAY (String)); daft honours the hint "
            "and fails ('Unsupported Arrow DataType: Utf8View') at the versions that read those files."
        ),
        spec=(
            "The spec supports the writer: a Delta string column maps to a Parquet UTF-8 binary column, which these "
            "files hold; the ARROW:schema key is not part of Delta, and a reader must read the Parquet types."
        ),
        rules=("DELTA-READER-002",),
        section="Delta Data Type to Parquet Type Mappings",
        upstream="engine bug",
        versions=_seen("daft"),
        writers=("deltalake",),
    ),
    # ---------------------------------------------------------------- Spark as a reader
    Finding(
        id="delta-spark-3-lacks-variant-type-delta-rs-lists",
        engines=("spark-3.5",),
        writers=("deltalake",),
        cases=("delta/deletion-vectors", "delta/deletion-vectors-shared-file", "delta/checkpoint-with-deletion-vectors"),
        status="unsupported",
        pattern=r"DELTA_UNSUPPORTED_FEATURES_FOR_READ\] Unsupported Delta read feature",
        cause=(
            "delta-rs 1.6.6 lists the variantType reader and writer feature in the protocol of every table it creates "
            "with deletion vectors, though no column is a variant; delta-spark 3.3.2 (Spark 3.5) does not implement "
            "variantType and refuses the table ('requires reader table feature(s) that are unsupported: variantType')."
        ),
        spec=(
            "Both sides keep the letter of the spec: a reader must refuse a table whose readerFeatures lists a feature "
            "it does not implement, and nothing forbids a writer to list a supported feature the table does not use; "
            "the gap is delta-spark 3.3's missing variant support, made visible by delta-rs's needless feature."
        ),
        rules=("DELTA-FEATURE-004", "DELTA-FEATURE-005"),
        section="Table Features; Variant Data Type",
        upstream="engine limitation",
        versions=_seen("spark-3.5"),
    ),
    Finding(
        id="spark35-refuses-ancient-dates",
        engines=("spark-3.5",),
        cases=("delta/all-primitive-types",),
        status="error",
        pattern=r"SparkUpgradeException|INCONSISTENT_BEHAVIOR_CROSS_VERSION|Job aborted due to stage failure",
        cause=(
            "Spark 3.5 refuses to read dates before 1582-10-15 and timestamps before 1900 from Parquet files it "
            "did not write ('INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME') unless the user sets "
            "spark.sql.parquet.datetimeRebaseModeInRead; Spark 4.0 reads them (its default is CORRECTED)."
        ),
        spec=(
            "The spec supports the expected rows: date and timestamp range over years 0001..9999 and Parquet "
            "DATE/TIMESTAMP values are proleptic Gregorian, so the values are well defined; the refusal is a "
            "default of the engine, not a property of the table."
        ),
        rules=("DELTA-SCHEMA-006", "DELTA-READER-002"),
        section="Primitive Types; Delta Data Type to Parquet Type Mappings",
        upstream="engine limitation",
        versions=_seen("spark-3.5"),
    ),
    Finding(
        id="spark-accepts-unpadded-commit-name",
        engines=_SPARKS,
        cases=("delta/unpadded-commit-name",),
        status="fail",
        pattern=r"0 expected row\(s\) missing, \d+ unexpected row\(s\)",
        cause=(
            "delta-spark's log listing matches commit files by '<digits>.json' without checking the 20-digit "
            "padding, so _delta_log/1.json is read as version 1 and its rows are returned."
        ),
        spec=(
            "The spec supports the reference: a commit is named with its version 'zero-padded to 20 digits', so "
            "1.json is not a commit and the table is at version 0 (empty)."
        ),
        rules=("DELTA-LOG-004",),
        section="Delta Log Entries",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-empty-string-partition-not-null",
        engines=_SPARKS,
        cases=("delta/partition-empty-string-is-null",),
        status="fail",
        pattern=r"\+ \('', \d+\)",
        cause="Spark returns '' for a string partition column whose partitionValues entry is the empty string.",
        spec="The spec supports the reference: 'An empty string for any type translates to a null partition value.'",
        rules=("DELTA-PART-001",),
        section="Partition Value Serialization",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-drops-void-column",
        engines=_SPARKS,
        cases=("delta/void-column",),
        status="fail",
        pattern=r"missing columns \['nothing",
        cause="Spark leaves the void (NullType) column out of the DataFrame it reads, so the result lacks the column.",
        spec=(
            "The spec supports the reference: void columns are never in the data files and 'readers MUST "
            "reconstruct them as all-null columns' (text added to PROTOCOL.md in 2026)."
        ),
        rules=("DELTA-SCHEMA-010",),
        section="Schema Serialization Format > Primitive Types > Void Type",
        upstream="engine limitation",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-honours-column-mapping-without-feature",
        engines=_SPARKS,
        cases=("delta/column-mapping-mode-without-feature",),
        status="error",
        pattern=r"Missing column ID in column mapping mode `name` in the field",
        cause=(
            "delta-spark applies delta.columnMapping.mode=name from the configuration of a (1,2) table and fails "
            "('Missing column ID in column mapping mode name') instead of ignoring the property."
        ),
        spec=(
            "The spec supports the reference, at SHOULD level: the mode property 'should only be honored if the "
            "table's protocol has reader and writer versions and/or table features that support' columnMapping."
        ),
        rules=("DELTA-COLMAP-002",),
        section="Column Mapping",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-timestamp-travel-limited-by-retention",
        engines=("spark",),
        cases=("delta/time-travel-timestamp",),
        status="error",
        pattern=r"DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION",
        cause=(
            "delta-spark refuses 'as of' timestamps older than delta.deletedFileRetentionDuration (168 hours) "
            "before time travel ([DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION]); the "
            "case's in-commit timestamps are in 2024."
        ),
        spec=(
            "Not a spec disagreement: the protocol does not require timestamp time travel, and every file the "
            "versions need is still there; refusing is Spark's retention policy, the rows are what the commits define."
        ),
        rules=("DELTA-ICT-007",),
        section="In-Commit Timestamps > Recommendations for Readers of Tables with In-Commit Timestamps",
        upstream="engine limitation",
        versions=_seen("spark"),
    ),
    Finding(
        id="spark-loads-latest-snapshot-first",
        engines=_SPARKS,
        cases=("delta/neg-malformed-json", "delta/neg-version-gap"),
        status="error",
        pattern=r"DELTA_VERSIONS_NOT_CONTIGUOUS|_delta_log/00000000000000000001\.json|Job aborted due to stage failure",
        cause=(
            "A versionAsOf read in delta-spark first lists and validates the log up to the latest commit, so a "
            "broken later commit (a truncated line, a version gap) makes an intact earlier version unreadable."
        ),
        spec=(
            "The spec supports the reference: version v is the state of v-1 plus commit v, so reading v needs only "
            "the commits up to v; the broken files lie after the requested version."
        ),
        rules=("DELTA-LOG-001", "DELTA-LOG-005"),
        section="Delta Table Specification; Delta Log Entries",
        upstream="engine limitation",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-accepts-two-metadata-in-one-commit",
        engines=_SPARKS,
        cases=("delta/neg-two-metadata-in-commit",),
        status="fail",
        pattern=r"silently .*a correct reader raises invalid_table",
        cause="delta-spark keeps one of the two metaData actions of a commit and reads the table without complaint.",
        spec=(
            "The spec supports the reference that the table is invalid ('There can be at most one metadata action "
            "in a given version of the table'), but it has no reader clause demanding refusal; expecting "
            "invalid_table is the kit's policy for an undefined state."
        ),
        rules=("DELTA-ACTION-003", "DELTA-REPLAY-002"),
        section="Change Metadata; Action Reconciliation",
        upstream="spec ambiguity",
        versions=_seen(*_SPARKS),
    ),
    # ---------------------------------------------------------------- declared capabilities
    Finding(
        id="deltalake-pyarrow-refuses-deletion-vectors",
        engines=("deltalake",),
        cases=_DV_CASES,
        status="unsupported",
        pattern=r"refuses tables with this reader feature",
        cause="deltalake's to_pyarrow_table() refuses tables listing the deletionVectors reader feature.",
        spec=_REFUSE_FEATURE_SPEC,
        rules=("DELTA-FEATURE-004", "DELTA-DV-004"),
        section="Table Features; Deletion Vectors",
        upstream="engine limitation",
        versions=_seen("deltalake"),
    ),
    Finding(
        id="deltalake-pyarrow-refuses-column-mapping",
        engines=("deltalake",),
        cases=_CM_CASES,
        status="unsupported",
        pattern=r"refuses tables with this reader feature",
        cause="deltalake's to_pyarrow_table() refuses tables listing the columnMapping reader feature (or reader version 2).",
        spec=_REFUSE_FEATURE_SPEC,
        rules=("DELTA-FEATURE-004", "DELTA-COLMAP-013"),
        section="Table Features; Column Mapping",
        upstream="engine limitation",
        versions=_seen("deltalake"),
    ),
    Finding(
        id="deltalake-pyarrow-refuses-v2-checkpoints",
        engines=("deltalake",),
        cases=_V2CKPT_CASES,
        status="unsupported",
        pattern=r"refuses tables with this reader feature",
        cause="deltalake's to_pyarrow_table() refuses tables listing the v2Checkpoint reader feature.",
        spec=_REFUSE_FEATURE_SPEC,
        rules=("DELTA-FEATURE-004", "DELTA-CKPT-034"),
        section="Table Features; V2 Checkpoint Table Feature",
        upstream="engine limitation",
        versions=_seen("deltalake"),
    ),
    Finding(
        id="polars-refuses-column-mapping",
        engines=("polars",),
        cases=_CM_CASES,
        status="unsupported",
        pattern=r"polars 1\.44 delta scanner refuses tables with this reader feature",
        cause="polars' delta scanner refuses tables with the columnMapping reader feature (not in its SUPPORTED_READER_FEATURES).",
        spec=_REFUSE_FEATURE_SPEC,
        rules=("DELTA-FEATURE-004", "DELTA-COLMAP-013"),
        section="Table Features; Column Mapping",
        upstream="engine limitation",
        versions=_seen("polars"),
    ),
    Finding(
        id="polars-refuses-v2-checkpoints",
        engines=("polars",),
        cases=_V2CKPT_CASES,
        status="unsupported",
        pattern=r"polars 1\.44 delta scanner refuses tables with this reader feature",
        cause="polars' delta scanner refuses tables with the v2Checkpoint reader feature.",
        spec=_REFUSE_FEATURE_SPEC,
        rules=("DELTA-FEATURE-004", "DELTA-CKPT-034"),
        section="Table Features; V2 Checkpoint Table Feature",
        upstream="engine limitation",
        versions=_seen("polars"),
    ),
    Finding(
        id="daft-refuses-deletion-vectors",
        engines=("daft",),
        cases=_DV_CASES,
        status="unsupported",
        pattern=r"daft 0\.7 raises 'Delta Lake deletion vectors are not yet supported",
        cause="daft raises 'Delta Lake deletion vectors are not yet supported' on tables with delta.enableDeletionVectors=true.",
        spec=(
            "The spec supports the reference: rows a deletion vector invalidates 'must not be returned', so a "
            "reader that cannot apply DVs must refuse rather than return them; daft's refusal is the conformant "
            "fallback and the gap is a missing feature."
        ),
        rules=("DELTA-DV-004", "DELTA-FEATURE-004"),
        section="Deletion Vectors > Reader Requirements for Deletion Vectors; Table Features",
        upstream="engine limitation",
        versions=_seen("daft"),
    ),
    Finding(
        id="duckdb-no-timestamp-travel",
        engines=("duckdb",),
        cases=("delta/time-travel-timestamp",),
        status="unsupported",
        pattern=r"delta_scan has a version parameter but no timestamp parameter",
        cause="DuckDB's delta_scan has a version parameter but no timestamp parameter, so 'as of timestamp' cannot be asked.",
        spec=(
            "Not a spec disagreement: the protocol does not require timestamp time travel; it only says which "
            "commit timestamp a reader that offers it should use."
        ),
        rules=("DELTA-ICT-007",),
        section="In-Commit Timestamps > Recommendations for Readers of Tables with In-Commit Timestamps",
        upstream="engine limitation",
        versions=_seen("duckdb"),
    ),

    # ---------------------------------------------------------------- rules a writer's tables break
    # The reference validator on every table a writer builds (conformance/writer_checks.py).
    Finding(
        id="deltalake-writes-void-column-to-data-file",
        engines=("*",),
        writers=("deltalake",),
        cases=("delta/void-column",),
        status="violation",
        pattern=r"DELTA-SCHEMA-010: void column written to a data file",
        cause=("deltalake 1.6.6's write_deltalake puts a void column in the Parquet file as an all-null column "
               "of Parquet/Arrow type null ('nothing: null' in the footer)."),
        spec=("The spec supports the validator: 'void columns are never written to data files; readers return them as "
              "all-null'. A reader that maps file columns by name still reads the right rows, so no reader cell fails, "
              "but a reader that trusts the footer sees a column the table's data never has."),
        rules=("DELTA-SCHEMA-010",),
        section="Void Type",
        upstream="engine bug",
        versions={"deltalake": "1.6.6"},
    ),
    Finding(
        id="delta-spark-3-checkpoint-drops-stats-parsed",
        engines=("*",),
        writers=("spark-3.5",),
        cases=("delta/checkpoint-stats-struct", "delta/checkpoint-column-mapping-struct-stats"),
        status="violation",
        pattern=r"DELTA-CKPT-024: writeStatsAsStruct=true but checkpoint adds lack stats_parsed",
        cause=("delta-spark 3.3.2 (Spark 3.5) writes the checkpoint of a table with "
               "delta.checkpoint.writeStatsAsStruct=true and writeStatsAsJson=false with neither add.stats nor "
               "add.stats_parsed, though its commits carry stats; delta-spark 4.4.0 writes stats_parsed."),
        spec=("The spec supports the validator: with writeStatsAsStruct=true, stats_parsed must be written when "
              "stats exist. Reads stay right (stats only prune), but every file loses its statistics at the "
              "checkpoint, so later readers cannot skip any file."),
        rules=("DELTA-CKPT-024",),
        section="Checkpoints > Checkpoint Schema; Additional Requirements for Writers",
        upstream="engine bug",
        versions=_seen("spark-3.5"),
    ),
)
