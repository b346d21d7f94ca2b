"""Known engine disagreements on Iceberg cases (the model and the rules of triage: ``conformance.findings``).

``section`` names the section of the Iceberg table spec (format/spec.md) the spec side rests on.
Every entry was reproduced with the engine itself (its own API, outside the harness) on tables
built by the reference writer (or, for an entry naming ``writers``, by that writer: PyIceberg, Spark), and
judged against apache/iceberg ``format/spec.md`` at commit 7f879b11 (the text the rule catalogue
``conformance/rules/iceberg.md`` was read from).

Spark entries were reproduced with ``spark.read.format("iceberg").load(<metadata file>)`` in the
kit's session (``conformance.engines.spark.session.get``), the path the adapter takes.

Polars and Daft plan Iceberg scans with PyIceberg (metadata, manifests), so a PyIceberg metadata
bug shows in all three; such entries name all three and say so.
"""

from __future__ import annotations

from conformance.findings import Finding

_PYICEBERG = "0.12.0"
_SEEN_ALL = {
    "pyiceberg": _PYICEBERG,
    "pyiceberg-core": "0.11.0 (datafusion 54.1.0)",
    "duckdb": "1.5.5 (iceberg extension 1.5.5)",
    "polars": f"1.44.2 (pyiceberg {_PYICEBERG})",
    "daft": f"0.7.26 (pyiceberg {_PYICEBERG})",
    "spark": "spark 4.0.5 / iceberg-spark-runtime 1.11.0",
    "spark-3.5": "spark 3.5.9 / iceberg-spark-runtime 1.12.0",
}
# Both pinned Spark lines, where a cause was seen on each (iceberg-spark 1.11.0 and 1.12.0 share it).
_SPARKS = ("spark", "spark-3.5")
_VIA_PYICEBERG = ("pyiceberg", "polars", "daft")


def _seen(*engines: str) -> dict[str, str]:
    return {e: _SEEN_ALL[e] for e in engines}


# Cases whose reads at version 1 use an older schema than the current one (a column added, renamed,
# dropped, promoted, or the whole schema replaced after the first snapshot).
_OLD_SNAPSHOT_SCHEMA_CASES = (
    "iceberg/v1-schema-evolution", "iceberg/v2-add-column", "iceberg/v2-overwrite-new-schema",
    "iceberg/v2-promote-float-to-double", "iceberg/v2-promote-int-to-long", "iceberg/v2-rename-column",
    "iceberg/v3-initial-default", "iceberg/v3-promote-unknown", "iceberg/v3-schema-evolution",
)

FINDINGS: tuple[Finding, ...] = (
    # ---------------------------------------------------------------- refusals that are not verdicts
    # Found when refusals started to count only with the expected kind (an engine's exception is
    # judged by its words, conformance/engines/errors.py): these used to pass as "raised as expected".
    Finding(
        id="polars-crashes-on-duplicate-field-ids",
        engines=("polars",),
        cases=("iceberg/v2-duplicate-field-ids",),
        status="error",
        pattern=r"failed to extract field Extract\.column_mapping",
        cause="Polars' Iceberg scan fails with 'TypeError: failed to extract field Extract.column_mapping' on a schema where two fields share id 2.",
        spec=(
            "The spec supports the reference that the table is invalid (each field 'has an integer id that is "
            "unique in the table schema'); a TypeError from the scanner is a crash, no verdict on the table."
        ),
        rules=("ICEBERG-SCHEMA-001",),
        section="Schemas and Data Types > Nested Types",
        upstream="engine bug",
        versions=_seen("polars"),
    ),
    Finding(
        id="iceberg-rust-calls-newer-format-version-invalid",
        engines=("pyiceberg-core",),
        cases=("iceberg/v2-format-version-99",),
        status="fail",
        pattern=r"data did not match any variant of untagged enum TableMetadataEnum",
        cause=(
            "iceberg-rust parses metadata into a closed enum: format-version 99 fails as 'DataInvalid => ... data "
            "did not match any variant of untagged enum TableMetadataEnum', a verdict that the table is broken."
        ),
        spec=(
            "The spec supports the reference: a newer format version must be refused as one the reader does not "
            "support ('Implementations must throw an exception if a table's version is higher than the supported "
            "version'); the table is not shown to be broken."
        ),
        rules=("ICEBERG-META-004",),
        section="Table Metadata > Table Metadata Fields",
        upstream="engine limitation",
        versions=_seen("pyiceberg-core"),
    ),
    Finding(
        id="iceberg-rust-refuses-unknown-v2-transform",
        engines=("pyiceberg-core",),
        cases=("iceberg/v2-unknown-transform",),
        status="error",
        pattern=r"data did not match any variant of untagged enum TableMetadataEnum",
        cause=(
            "iceberg-rust fails to load v2 metadata whose partition spec has an unknown transform: 'DataInvalid "
            "=> ... data did not match any variant of untagged enum TableMetadataEnum'."
        ),
        spec=(
            "The spec supports the reference: in v1 and v2 readers should skip partition fields with unknown "
            "transforms when filtering files instead of failing, so the table's rows are readable."
        ),
        rules=("ICEBERG-PART-005",),
        section="Partitioning; Partition Transforms",
        upstream="engine limitation",
        versions=_seen("pyiceberg-core"),
    ),
    # ---------------------------------------------------------------- table metadata parsing
    Finding(
        id="v1-partition-field-without-field-id-refused",
        engines=("pyiceberg", "polars", "daft", "pyiceberg-core"),
        cases=("iceberg/v1-partition-transforms", "iceberg/v1-partition-evolution"),
        status="error",
        pattern=r"'>' not supported between instances of 'NoneType'|untagged enum TableMetadataEnum",
        cause=(
            "A v1 partition spec whose fields carry no 'field-id' cannot be loaded: PyIceberg's metadata model "
            "computes last-partition-id as max() over the missing ids and raises \"TypeError: '>' not supported "
            "between instances of 'NoneType' and 'NoneType'\" (Polars and Daft load metadata through PyIceberg); "
            "iceberg-rust rejects the file ('data did not match any variant of untagged enum TableMetadataEnum'). "
            "The same files with field-id 1000, 1001... added read correctly in all four."
        ),
        spec=(
            "The spec supports the reference: in the partition field JSON table 'field-id' is required in v2 and "
            "v3 and blank (not required) in v1, and 'The field-id property was added for each partition field in "
            "v2. In v1, the reference implementation assigned field ids sequentially in each spec starting at "
            "1,000', which is what a v1 reader should derive."
        ),
        rules=("ICEBERG-PART-032", "ICEBERG-META-022"),
        section="Appendix C: JSON serialization > Partition Specs; Partition Evolution",
        upstream="engine bug",
        versions=_seen("pyiceberg", "polars", "daft", "pyiceberg-core"),
    ),
    Finding(
        id="struct-default-empty-object-refused",
        engines=("pyiceberg", "polars", "daft", "duckdb"),
        cases=("iceberg/v3-initial-defaults-every-type",),
        status="error",
        pattern=r"Cannot deserialize bytes, type struct|PrimitiveTypeValue failed to parse",
        cause=(
            "A struct field whose initial-default/write-default is the empty object {} makes the metadata "
            "unloadable: PyIceberg raises 'Cannot deserialize bytes, type struct<...> not supported: {}' (Polars "
            "and Daft load metadata through PyIceberg) and DuckDB 'PrimitiveTypeValue failed to parse, none of the "
            "anyOf candidates matched'. Every other default of the case (int, long, string, boolean, date, decimal, "
            "timestamptz, double, binary, none) loads and reads correctly in both when the struct field is left out."
        ),
        spec=(
            "The spec supports the reference: 'the default stored for a nested struct may be either null or a "
            "non-null struct with no field values ... A non-null default is stored by setting initial-default or "
            "write-default to an empty struct ({})', expanded from each child's own default."
        ),
        rules=("ICEBERG-SCHEMA-021", "ICEBERG-SCHEMA-024", "ICEBERG-SCHEMA-013"),
        section="Schemas and Data Types > Default values",
        upstream="engine bug",
        versions=_seen("pyiceberg", "polars", "daft", "duckdb"),
    ),
    Finding(
        id="duckdb-reads-newer-format-version",
        engines=("duckdb",),
        cases=("iceberg/v2-format-version-99",),
        status="fail",
        pattern=r"silently .*a correct reader raises unsupported",
        cause="DuckDB's iceberg_scan reads a table whose metadata says format-version 99 and returns its rows without complaint.",
        spec=(
            "The spec supports the reference: format-version is 'An integer version number for the format. "
            "Implementations must throw an exception if a table's version is higher than the supported version' "
            "(the spec defines v1-v4, v4 in development; DuckDB 1.5.5 implements v1-v3)."
        ),
        rules=("ICEBERG-META-004",),
        section="Table Metadata > Table Metadata Fields",
        upstream="engine bug",
        versions=_seen("duckdb"),
    ),
    Finding(
        id="duckdb-crashes-on-unknown-current-schema-id",
        engines=("duckdb",),
        cases=("iceberg/v2-current-schema-id-missing",),
        status="error",
        pattern=r"crashed \(signal SIGSEGV\)",
        cause="DuckDB's iceberg_scan dies with SIGSEGV on metadata whose current-schema-id (99) names no schema in 'schemas'.",
        spec=(
            "The spec supports the reference: current-schema-id is the 'ID of the table's current schema' and must "
            "name an entry of 'schemas', so the table is invalid and a reader must refuse it with an error, not "
            "take the process down."
        ),
        rules=("ICEBERG-META-020",),
        section="Table Metadata > Table Metadata Fields",
        upstream="engine bug",
        versions=_seen("duckdb"),
    ),
    Finding(
        id="duplicate-field-ids-read-silently",
        engines=("pyiceberg", "duckdb", "daft"),
        cases=("iceberg/v2-duplicate-field-ids",),
        status="fail",
        pattern=r"silently .*a correct reader raises invalid_table",
        cause=(
            "Two string fields 'a' and 'b' share id 2 and the readers return a row anyway, each its own way: "
            "PyIceberg a='a1', b='a1'; DuckDB a='a1', b='b1' (by name); Daft a=null, b='a1'."
        ),
        spec=(
            "The spec supports the reference that the table is invalid (each struct field 'has an integer id that "
            "is unique in the table schema', and columns are 'selected by field id'), but it has no reader clause "
            "demanding refusal; expecting invalid_table is the kit's policy for an undefined projection, which the "
            "three different answers illustrate."
        ),
        rules=("ICEBERG-SCHEMA-001", "ICEBERG-EVOL-014"),
        section="Schemas and Data Types > Nested Types; Schema Evolution > Column Projection",
        upstream="spec ambiguity",
        versions=_seen("pyiceberg", "duckdb", "daft"),
    ),
    # ---------------------------------------------------------------- partition transforms
    Finding(
        id="unknown-transform-refused-in-v3",
        engines=("pyiceberg-core",),
        cases=("iceberg/v3-unknown-transform",),
        status="error",
        pattern=r"data did not match any variant of untagged enum TableMetadataEnum",
        cause=(
            "A v3 table whose default spec has a transform the reader does not know (lakeconf_future[3], no data "
            "written under it) is refused as invalid: iceberg-rust cannot parse the metadata ('DataInvalid => data "
            "did not match any variant of untagged enum TableMetadataEnum')."
        ),
        spec=(
            "The spec supports the reference: 'In v1 and v2, readers should ignore fields with unknown transforms "
            "while reading; this behavior is required in v3', and 'All v3 readers are required to read tables with "
            "unknown transforms, ignoring them' (on v2 the same refusal is allowed, and passes)."
        ),
        rules=("ICEBERG-PART-006", "ICEBERG-SCAN-004"),
        section="Partitioning; Appendix C: JSON serialization > Partition Specs",
        upstream="engine limitation",
        versions=_seen("pyiceberg-core"),
    ),
    Finding(
        id="duckdb-does-not-implement-unknown-transforms-in-v3",
        engines=("duckdb",),
        cases=("iceberg/v3-unknown-transform",),
        status="unsupported",
        pattern=r"Unrecognized transform",
        cause=(
            "DuckDB's iceberg_scan refuses a v3 table whose default spec has a transform it does not know "
            "(lakeconf_future[3], no data written under it): 'Not implemented Error: Unrecognized transform'."
        ),
        spec=(
            "The spec supports the reference: 'All v3 readers are required to read tables with unknown "
            "transforms, ignoring them', so the table is readable and the refusal is a missing piece of the v3 "
            "reader, not a verdict on the table."
        ),
        rules=("ICEBERG-PART-006", "ICEBERG-SCAN-004"),
        section="Partitioning; Appendix C: JSON serialization > Partition Specs",
        upstream="engine limitation",
        versions=_seen("duckdb"),
    ),
    # ---------------------------------------------------------------- schema evolution and projection
    Finding(
        id="daft-ignores-initial-default",
        engines=("daft",),
        cases=("iceberg/v3-initial-default",),
        status="fail",
        pattern=r"\+ \(\d+, null, null\)",
        cause=(
            "Daft returns null for columns added with an initial-default (n=7, s='dflt ✓') in rows of data files "
            "written before the columns existed (PyIceberg, whose planner Daft uses, returns the defaults; Daft's "
            "own Parquet reader fills missing field ids with null)."
        ),
        spec=(
            "The spec supports the reference: for field ids not present in a data file, readers must 'Return the "
            "default value if it has a defined initial-default'; initial-default 'is used to populate the field's "
            "value for all records that were written before the field was added'."
        ),
        rules=("ICEBERG-SCHEMA-017", "ICEBERG-EVOL-015"),
        section="Schemas and Data Types > Default values; Schema Evolution > Column Projection",
        upstream="engine bug",
        versions=_seen("daft"),
    ),
    Finding(
        id="pyiceberg-core-column-added-after-last-snapshot",
        engines=("pyiceberg-core",),
        cases=("iceberg/v3-initial-defaults-every-type",),
        status="error",
        pattern=r"DataInvalid => Column i not found in table",
        cause=(
            "When the current schema gained columns after the current snapshot was committed (no data written "
            "since), iceberg-rust's DataFusion provider exposes the current schema but binds the scan to the "
            "snapshot's schema and fails: 'Column i not found in table. Schema: table { 1: id ... 2: value ... }' "
            "(the same with a column that has no default)."
        ),
        spec=(
            "The spec supports the reference: columns are 'selected by field id', and values for field ids not "
            "present in a data file resolve to the initial-default, else null; a column of the current schema "
            "absent from every file is exactly that case, so the latest read returns the defaults."
        ),
        rules=("ICEBERG-EVOL-015", "ICEBERG-SCHEMA-017"),
        section="Schema Evolution > Column Projection; Default values",
        upstream="engine bug",
        versions=_seen("pyiceberg-core"),
    ),
    Finding(
        id="polars-old-snapshot-read-with-current-schema",
        engines=("polars",),
        cases=_OLD_SNAPSHOT_SCHEMA_CASES,
        status="error",
        pattern=r"PanicException|projected_schema",
        cause=(
            "scan_iceberg(snapshot_id=<a snapshot older than a schema change>) declares the table's current schema "
            "but reads the files with the snapshot's, and panics: 'assertion failed: projected_schema.len() <= "
            "iceberg_schema.len()' (column added or schema replaced) or 'assertion `left == right` failed' "
            "(renamed or promoted column)."
        ),
        spec=(
            "The spec is silent on which schema a time-travel read projects (a snapshot records 'schema-id: ID of "
            "the table's current schema when the snapshot was created'); the corpus declares the snapshot's schema, "
            "as Java and PyIceberg read it. Either choice is a defined answer; a panic is not, so the engine is at "
            "fault whatever schema it meant."
        ),
        rules=("ICEBERG-EVOL-014", "ICEBERG-EVOL-015"),
        section="Snapshots; Schema Evolution > Column Projection; Appendix F: Point in Time Reads",
        upstream="engine bug",
        versions=_seen("polars"),
    ),
    Finding(
        id="polars-old-snapshot-drops-deleted-column",
        engines=("polars",),
        cases=("iceberg/v2-drop-column",),
        status="fail",
        pattern=r"missing columns \['b",
        cause=(
            "scan_iceberg(snapshot_id=<the snapshot before the column was dropped>) returns the current schema's "
            "columns: the dropped column 'b' is missing from the version-1 read."
        ),
        spec=(
            "Spec ambiguity: the spec records each snapshot's 'schema-id' but does not say which schema a "
            "time-travel read projects; the corpus declares the snapshot's schema (as Java and PyIceberg read it), "
            "Polars uses the current one."
        ),
        rules=("ICEBERG-EVOL-012",),
        section="Snapshots; Appendix F: Point in Time Reads",
        upstream="spec ambiguity",
        versions=_seen("polars"),
    ),
    Finding(
        id="polars-promoted-type-mismatch",
        engines=("polars",),
        cases=("iceberg/v2-promote-decimal", "iceberg/v3-promote-date-to-timestamp"),
        status="error",
        pattern=r"Decimal\(9, 2\)|left: Date|data type mismatch",
        cause=(
            "Polars' native reader does not widen a promoted column of files written before the promotion: the "
            "latest read fails with 'failed to resolve Iceberg column mapping: data type mismatch for column dec: "
            "incoming: Decimal(9, 2) != target: Decimal(18, 2)' (and 'Date != Datetime' for date -> timestamp); the "
            "version before the promotion panics (see polars-old-snapshot-read-with-current-schema). int -> long and "
            "float -> double are widened."
        ),
        spec=(
            "The spec supports the reference: decimal(P,S) -> decimal(P',S) with P' > P (all versions) and date -> "
            "timestamp (v3) are valid type promotions, and 'projection must be done using field ids', so files "
            "written with the old type must read as the promoted type."
        ),
        rules=("ICEBERG-EVOL-002", "ICEBERG-EVOL-003", "ICEBERG-EVOL-014"),
        section="Schemas and Data Types > Schema Evolution",
        upstream="engine bug",
        versions=_seen("polars"),
    ),
    Finding(
        id="pyiceberg-date-to-timestamp-promotion-crash",
        engines=("pyiceberg",),
        cases=("iceberg/v3-promote-date-to-timestamp",),
        status="error",
        pattern=r"pyarrow\.lib\.DataType' object has no attribute 'tz",
        cause=(
            "After date -> timestamp, reading a file written with the date column fails in PyIceberg's projection "
            "(_cast_if_needed): \"AttributeError: 'pyarrow.lib.DataType' object has no attribute 'tz'\"."
        ),
        spec=(
            "The spec supports the reference: 'date' -> 'timestamp' is a v3 valid type promotion; old values read as "
            "midnight timestamps of the same wall-clock date."
        ),
        rules=("ICEBERG-EVOL-003",),
        section="Schemas and Data Types > Schema Evolution",
        upstream="engine bug",
        versions=_seen("pyiceberg"),
    ),
    Finding(
        id="pyiceberg-core-date-to-timestamp-promotion-nulls",
        engines=("pyiceberg-core",),
        cases=("iceberg/v3-promote-date-to-timestamp",),
        status="fail",
        pattern=r"\+ \(\d+, null\)",
        cause=(
            "After date -> timestamp, iceberg-rust returns null for every value of files written with the date "
            "column (2024-02-29 and 1969-12-31 come back null), silently."
        ),
        spec=(
            "The spec supports the reference: 'date' -> 'timestamp' is a v3 valid type promotion, and projection by "
            "field id must read the old values (as midnight timestamps), not drop them."
        ),
        rules=("ICEBERG-EVOL-003", "ICEBERG-EVOL-014"),
        section="Schemas and Data Types > Schema Evolution",
        upstream="engine bug",
        versions=_seen("pyiceberg-core"),
    ),
    # ---------------------------------------------------------------- nested values
    Finding(
        id="pyiceberg-null-nested-collection-read-as-empty",
        engines=("pyiceberg",),
        cases=("iceberg/v1-nested-in-nested", "iceberg/v2-nested-in-nested", "iceberg/v3-nested-in-nested"),
        status="fail",
        pattern=r"\+ \(\d+, (?:\[\]|map\{\})",
        cause=(
            "PyIceberg reads a null list<struct> and a null map<long, struct> as empty ([]) instead of null (row 3; "
            "null list<map>, map<list> and struct columns stay null); the Parquet file holds nulls, which the other "
            "readers return."
        ),
        spec=(
            "The spec supports the reference: an optional field's value 'can be null', and null is a value distinct "
            "from an empty list or map; nothing lets a reader turn one into the other."
        ),
        rules=("ICEBERG-SCHEMA-002", "ICEBERG-SCHEMA-003", "ICEBERG-SCHEMA-004"),
        section="Schemas and Data Types > Nested Types",
        upstream="engine bug",
        versions=_seen("pyiceberg"),
    ),
    # ---------------------------------------------------------------- declared capabilities
    Finding(
        id="pyiceberg-core-refuses-unknown-type",
        engines=("pyiceberg-core",),
        cases=("iceberg/v3-unknown-type", "iceberg/v3-promote-unknown"),
        status="unsupported",
        pattern=r"data did not match any variant of untagged enum TableMetadataEnum",
        cause=(
            "iceberg-rust 0.11 does not know the v3 'unknown' type: metadata with an unknown column in any schema "
            "fails to load ('data did not match any variant of untagged enum TableMetadataEnum'); declared as the "
            "unknown-type capability gap."
        ),
        spec=(
            "Neither side is wrong on the data: 'unknown' is a v3 primitive type readers need to read v3 tables "
            "(always null), and a reader without it refuses rather than return wrong rows; the gap is a missing "
            "v3 feature."
        ),
        rules=("ICEBERG-TYPE-002", "ICEBERG-EVOL-003"),
        section="Schemas and Data Types > Primitive Types; Appendix E: Format version changes > Version 3",
        upstream="engine limitation",
        versions=_seen("pyiceberg-core"),
    ),
    # ---------------------------------------------------------------- Spark as a reader
    Finding(
        id="spark-explicit-null-initial-default-crash",
        engines=_SPARKS,
        cases=("iceberg/v3-schema-evolution",),
        status="error",
        pattern=r"Cannot create expression literal from null",
        cause=(
            "iceberg-spark 1.11 cannot load a v3 table whose schema has an optional field with an explicit "
            "\"initial-default\": null / \"write-default\": null (what a writer stores for a column added without a "
            "default): converting the schema to Spark's fails in analysis ('[INTERNAL_ERROR] ... "
            "NullPointerException: Cannot create expression literal from null'), at every version, since the table's "
            "current schema is converted at load. The same metadata with the two null keys removed reads correctly."
        ),
        spec=(
            "The spec supports the writer: 'When an optional field is added, the defaults may be null and should be "
            "explicitly set', and an optional field whose default is null reads as null for older rows; an "
            "explicit JSON null is the spelling the spec asks for."
        ),
        rules=("ICEBERG-SCHEMA-023", "ICEBERG-SCHEMA-016", "ICEBERG-SCHEMA-024"),
        section="Schemas and Data Types > Default values; Schema Evolution",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-struct-initial-default-refused",
        engines=_SPARKS,
        cases=("iceberg/v3-initial-defaults-every-type",),
        status="error",
        pattern=r"Cannot create expression literal from org\.apache\.iceberg\.data\.GenericRecord",
        cause=(
            "iceberg-spark 1.11 cannot load a v3 table with a struct field whose initial-default is the empty "
            "struct {}: converting the default to a Spark literal fails ('IllegalArgumentException: Cannot create "
            "expression literal from org.apache.iceberg.data.GenericRecord: Record(null, null)'), at every version "
            "(the current schema is converted at load)."
        ),
        spec=(
            "The spec supports the reference: 'the default stored for a nested struct may be either null or a "
            "non-null struct with no field values ... A non-null default is stored by setting initial-default or "
            "write-default to an empty struct ({})', expanded from each child's own default."
        ),
        rules=("ICEBERG-SCHEMA-021", "ICEBERG-SCHEMA-013"),
        section="Schemas and Data Types > Default values",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-date-to-timestamp-promotion-crash",
        engines=_SPARKS,
        cases=("iceberg/v3-promote-date-to-timestamp",),
        status="error",
        pattern=r"TimeStampMicroVector cannot be cast",
        cause=(
            "After a v3 date -> timestamp promotion, iceberg-spark 1.11 declares the column timestamp_ntz but reads "
            "files written with the date column as dates and fails: vectorized 'ClassCastException: "
            "TimeStampMicroVector cannot be cast to DateDayVector' (non-vectorized: 'Integer cannot be cast to "
            "Long'); Iceberg-Java 1.11 does not implement this promotion (its own ALTER refuses it)."
        ),
        spec=(
            "The spec supports the reference: 'date' -> 'timestamp' is a v3 valid type promotion, and projection by "
            "field id must read the old values as midnight timestamps of the same date; a reader that does not "
            "implement it should refuse the table, not crash mid-scan."
        ),
        rules=("ICEBERG-EVOL-003", "ICEBERG-EVOL-014"),
        section="Schemas and Data Types > Schema Evolution",
        upstream="engine limitation",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="spark-no-time-type",
        engines=_SPARKS,
        cases=("iceberg/v2-uuid-time-fixed",),
        status="unsupported",
        pattern=r"Spark does not support time fields",
        cause=(
            "iceberg-spark 1.11 maps no Spark type to Iceberg's time and refuses the table ('Spark does not support "
            "time fields'); uuid and fixed columns of the same table are readable."
        ),
        spec=(
            "Neither side is wrong on the data: time is a primitive type of every format version (microseconds of "
            "the day, no date or zone), and a reader without it refuses rather than return wrong values."
        ),
        rules=("ICEBERG-TYPE-005",),
        section="Schemas and Data Types > Primitive Types",
        upstream="engine limitation",
        versions=_seen(*_SPARKS),
    ),
    # ---------------------------------------------------------------- tables written by PyIceberg or Spark
    Finding(
        id="pyiceberg-writes-null-nested-collection-as-empty",
        engines=("*",),
        writers=("pyiceberg",),
        cases=("iceberg/v1-nested-in-nested", "iceberg/v2-nested-in-nested"),
        status="fail",
        pattern=r"\+ \(\d+, (?:\[\]|map\{\})",
        cause=(
            "PyIceberg 0.12's writer stores the null list<struct> and null map<long, struct> of row 3 as empty lists in "
            "the Parquet data file (pyarrow reads [] from the file), so every reader returns [] for them."
        ),
        spec=(
            "The spec supports the expected rows: null and empty are different values of an optional list or map "
            "field, and a writer must store the value it is given."
        ),
        rules=("ICEBERG-SCHEMA-002", "ICEBERG-SCHEMA-003", "ICEBERG-SCHEMA-004"),
        section="Schemas and Data Types > Nested Types",
        upstream="engine bug",
    ),
    Finding(
        id="writes-invalid-avro-partition-names",
        engines=("*",),
        writers=("pyiceberg", "spark", "spark-3.5"),
        cases=("iceberg/v2-special-column-names",),
        status="error",
        pattern=r"Failed to load manifest|crashed \(signal SIGABRT\)",
        cause=(
            "PyIceberg 0.12's and Iceberg-Java 1.11's and 1.12's (Spark's) manifest writers name the partition tuple's Avro field "
            "after the partition field 'ünï' unsanitized (both do sanitize a leading digit: '1st_bucket' -> "
            "'_1st_bucket'; Java keeps any Unicode letter), which is not a valid Avro name: iceberg-rust refuses the "
            "manifest ('Invalid field name ünï'), DuckDB aborts (SIGABRT after 'Cannot parse file header: Invalid "
            "Avro identifier'); lenient Avro readers (PyIceberg, Java) read it."
        ),
        spec=(
            "The spec supports the readers that refuse: 'A manifest is an immutable Avro file', so its schema must "
            "be valid Avro, whose names allow only [A-Za-z_][A-Za-z0-9_]*; the partition tuple is matched by field "
            "id, so a writer can use a sanitized name (the reference writer does, and both readers read its table)."
        ),
        rules=("ICEBERG-MANIFEST-001", "ICEBERG-MANIFEST-002", "ICEBERG-PART-034"),
        section="Manifests; Appendix A: Format-specific Requirements > Avro",
        upstream="engine bug",
    ),

    # ---------------------------------------------------------------- rules a writer's tables break
    # The reference validator on every table a writer builds (conformance/writer_checks.py).
    Finding(
        id="pyiceberg-manifests-lack-schema-id",
        engines=("*",),
        writers=("pyiceberg",),
        cases=("iceberg/*",),
        status="violation",
        pattern=r"ICEBERG-MANIFEST-005: v2\+ manifest metadata lacks 'schema-id'",
        cause=("PyIceberg 0.12 writes v2 and v3 manifests whose Avro key-value metadata has no 'schema-id' key "
               "(it writes 'schema', 'partition-spec', 'partition-spec-id', 'format-version' and 'content')."),
        spec=("The spec supports the validator: the manifest's key-value metadata 'schema-id' is required in v2 and v3. "
              "Readers do not need it (the full schema is there too), so no reader cell fails; the Java writer omits it "
              "as well (apache/iceberg#8745)."),
        rules=("ICEBERG-MANIFEST-005",),
        section="Manifests",
        upstream="engine bug",
        versions={"pyiceberg": _PYICEBERG},
    ),
    Finding(
        id="pyiceberg-v1-metadata-writes-refs",
        engines=("*",),
        writers=("pyiceberg",),
        cases=("iceberg/v1-*",),
        status="violation",
        pattern=r"ICEBERG-GEN-002: v1 metadata should not write 'refs'",
        cause="PyIceberg 0.12 writes a 'refs' map (the main branch) into format-version 1 table metadata.",
        spec=("The spec supports the validator, as a SHOULD: 'refs' has no cell in the v1 column of the Table "
              "Metadata fields, and writers should leave out any field whose requirement cell is blank for the "
              "table's version. v1 readers ignore it, so no reader cell fails."),
        rules=("ICEBERG-GEN-002",),
        section="Writer requirements; Table Metadata Fields",
        upstream="engine bug",
        versions={"pyiceberg": _PYICEBERG},
    ),
    Finding(
        id="iceberg-java-manifests-lack-schema-id",
        engines=("*",),
        writers=_SPARKS,
        cases=("iceberg/*",),
        status="violation",
        pattern=r"ICEBERG-MANIFEST-005: v2\+ manifest metadata lacks 'schema-id'",
        cause=("Iceberg's Java writer (iceberg-spark-runtime 1.11.0 and 1.12.0, through Spark) writes v2 and v3 "
               "manifests without the 'schema-id' key in the Avro key-value metadata."),
        spec=("The spec supports the validator: 'schema-id' is required in v2 and v3 manifest metadata. The Java "
              "ManifestWriter has never written it (apache/iceberg#8745, #10927); readers take the full 'schema' "
              "instead, so no reader cell fails."),
        rules=("ICEBERG-MANIFEST-005",),
        section="Manifests",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="iceberg-java-v1-metadata-writes-refs",
        engines=("*",),
        writers=_SPARKS,
        cases=("iceberg/v1-*",),
        status="violation",
        pattern=r"ICEBERG-GEN-002: v1 metadata should not write 'refs'",
        cause="Iceberg's Java writer (through Spark) writes a 'refs' map into format-version 1 table metadata.",
        spec=("The spec supports the validator, as a SHOULD: 'refs' has no cell in the v1 column of the Table "
              "Metadata fields, and writers should leave out fields whose cell is blank for the table's version. "
              "v1 readers ignore it."),
        rules=("ICEBERG-GEN-002",),
        section="Writer requirements; Table Metadata Fields",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
    Finding(
        id="iceberg-java-v1-manifest-snapshot-id-optional",
        engines=("*",),
        writers=_SPARKS,
        cases=("iceberg/v1-*",),
        status="violation",
        pattern=r"ICEBERG-MANIFEST-011: manifest_entry field 1 \(snapshot_id\) must be required, not optional",
        cause=("Iceberg's Java writer (through Spark) declares manifest_entry.snapshot_id (field 1) optional, a union "
               "with null, in v1 manifests too: its v1 entry schema reuses the v2 field definition."),
        spec=("The spec supports the validator: snapshot_id is required in v1 manifest entries and optional only from "
              "v2, where a null is inherited from the manifest list. Java fills every v1 entry, so readers get the "
              "right ids, but a v1 reader holding the spec's v1 schema sees a type it does not expect."),
        rules=("ICEBERG-MANIFEST-011",),
        section="Manifests > Manifest Entry Fields",
        upstream="engine bug",
        versions=_seen(*_SPARKS),
    ),
)
