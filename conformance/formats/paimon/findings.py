"""Reviewed Paimon findings: where an engine and the spec (or Paimon's own Java implementation) part.

Each entry says what was seen, which side the spec supports and the rule ids (rules/paimon.md);
``section`` names the spec page (docs/docs/concepts/spec/) the spec side rests on. Daft reads Paimon
tables through pypaimon (its own ``read_paimon`` fails on pypaimon 2.1, see the Daft driver), so a
pypaimon reader cause shows in Daft's cells too and its entry names both.
"""

from __future__ import annotations

from conformance.findings import Finding

_PYPAIMON = "2.1.0"
_PAIMON_RUST = "0.4.0"
_DAFT = "0.7.26"
_PY_READERS = ("pypaimon", "daft")
_JAVA = "paimon-bundle 1.4.2"
_SEEN = {"pypaimon": _PYPAIMON, "daft": _DAFT}

FINDINGS: tuple[Finding, ...] = (
    # ---------------------------------------------------------------- pypaimon as a reader
    Finding(
        id="pypaimon-rejects-bitmap64-deletion-vectors",
        engines=_PY_READERS,
        cases=("paimon/append-deletion-vectors-bitmap64",),
        status="unsupported",
        pattern=r"Invalid magic number: 3520280932",
        cause=("pypaimon 2.1.0 reads only 32-bit Roaring deletion vectors: on a vector of a table with "
               "deletion-vectors.bitmap64=true it fails with 'Invalid magic number: 3520280932, expected: 1581511376' "
               "(its deletion_vector.py checks the 32-bit magic alone)."),
        spec=("The spec supports the reference: with deletion-vectors.bitmap64=true the bitmap bytes are the 64-bit, "
              "Iceberg-compatible layout (magic 1681511377 little-endian, then a 64-bit Roaring bitmap), and Paimon's "
              "Java reader dispatches on the magic. The refusal is honest (no wrong rows), a missing feature."),
        rules=("PAIMON-INDEX-005", "PAIMON-INDEX-008"),
        section="spec/tableindex.md (Deletion Vectors)",
        upstream="engine limitation",
        versions=_SEEN,
    ),
    Finding(
        id="pypaimon-partial-update-remove-on-delete-unsupported",
        engines=_PY_READERS,
        cases=("paimon/merge-partial-update-remove-on-delete", "paimon/merge-partial-update-reinsert-after-delete"),
        status="unsupported",
        pattern=r"partial-update\.remove-record-on-delete",
        cause=("pypaimon 2.1.0 refuses to read a partial-update table with partial-update.remove-record-on-delete "
               "('enabled together with options that pypaimon does not yet implement')."),
        spec=("The documented merge semantics support the reference: with the option a -D record removes the row "
              "(docs primary-key-table/merge-engine/partial-update). A declared gap, no wrong rows."),
        rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
        section="primary-key-table/merge-engine/partial-update",
        upstream="engine limitation",
        versions=_SEEN,
    ),
    Finding(
        id="pypaimon-aggregation-retract-unsupported",
        engines=_PY_READERS,
        cases=("paimon/merge-aggregation-retract", "paimon/merge-aggregation-lone-retraction",
               "paimon/merge-aggregation-reinsert-after-delete"),
        status="unsupported",
        pattern=r"does not yet implement retract|does not yet implement: aggregation\.remove-record-on-delete",
        cause=("pypaimon 2.1.0's aggregation merge refuses -U/-D records ('AggregateMergeFunction received a -U row; "
               "the aggregation merge engine does not yet implement retract'), and refuses a table with "
               "aggregation.remove-record-on-delete outright ('options that pypaimon does not yet implement')."),
        spec=("The documented semantics support the reference: sum (and the other retractable aggregators) subtract "
              "a retracted value (docs primary-key-table/merge-engine/aggregation, 'Retraction'), and with "
              "aggregation.remove-record-on-delete a -D removes the row (CoreOptions). A declared gap."),
        rules=("PAIMON-DATA-003",),
        section="primary-key-table/merge-engine/aggregation",
        upstream="engine limitation",
        versions=_SEEN,
    ),
    Finding(
        id="pypaimon-reads-no-manifest-before-1-0",
        engines=_PY_READERS,
        cases=("paimon/manifests-release-0-8", "paimon/manifests-release-0-9"),
        status="error",
        pattern=r"KeyError: '_VALUE_STATS_COLS'",
        cause=("pypaimon 2.1.0 fails with KeyError: '_VALUE_STATS_COLS' on data manifests written by Paimon 0.8 and "
               "0.9, whose _FILE record ends before the fields added in 1.0: it indexes the decoded record by every "
               "current field name instead of treating a field the file's writer schema lacks as null."),
        spec=("The spec supports the reference: readers decode _FILE by the file's own writer schema, so manifests "
              "with fewer trailing nullable fields from older writers stay readable (PAIMON-MANIFEST-035); a missing "
              "_VALUE_STATS_COLS means stats over every column (PAIMON-MANIFEST-029). Java reads them."),
        rules=("PAIMON-MANIFEST-035", "PAIMON-MANIFEST-029"),
        section="spec/manifest.md",
        upstream="engine bug",
        versions=_SEEN,
    ),
    Finding(
        id="pypaimon-reads-no-table-paimon-spark-0-9-wrote",
        engines=_PY_READERS,
        writers=("spark-3.5",),
        cases=("paimon/*",),
        status="error",
        pattern=r"KeyError: '_VALUE_STATS_COLS'",
        cause=("pypaimon 2.1.0 cannot read any table paimon-spark-3.5 0.9.0 wrote: the 0.9 writer's data manifests "
               "end their _FILE record before the fields added in 1.0, and pypaimon fails with KeyError: "
               "'_VALUE_STATS_COLS' (the cause of pypaimon-reads-no-manifest-before-1-0, on real 0.9 tables)."),
        spec=("The spec supports the tables: readers decode _FILE by the file's own writer schema, so manifests of "
              "older writers stay readable (PAIMON-MANIFEST-035); the reference and Paimon's Java core read them."),
        rules=("PAIMON-MANIFEST-035", "PAIMON-MANIFEST-029"),
        section="spec/manifest.md",
        upstream="engine bug",
        versions=_SEEN,
    ),
    Finding(
        id="paimon-spark-0-9-no-postpone-bucket",
        engines=("spark-3.5",),
        cases=("paimon/pk-postpone-bucket",),
        status="error",
        pattern=r"The number of buckets needs to be greater than 0",
        cause=("paimon-spark-3.5 0.9.0 refuses to load a table with bucket = -2 ('The number of buckets needs to be "
               "greater than 0'): the postpone bucket came in a later release, and 0.9 fails instead of saying so."),
        spec=("The spec supports the table: bucket -2 is the postpone mode (PAIMON-BUCKET-001), files in "
              "bucket-postpone/ (PAIMON-LAYOUT-010). A reader that does not know a mode should refuse it as "
              "unsupported; this one fails as if the table were broken."),
        rules=("PAIMON-BUCKET-001", "PAIMON-LAYOUT-010"),
        section="spec/bucket.md; primary-key-table/data-distribution (postpone bucket)",
        upstream="engine limitation",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="pypaimon-crashes-on-a-missing-schema-file",
        engines=_PY_READERS,
        cases=("paimon/neg-schema-missing",),
        status="error",
        pattern=r"AttributeError: 'NoneType' object has no attribute 'fields'",
        cause=("When the schema file a snapshot and its data files were written with is gone (schema-0 deleted, "
               "schema-1 left), pypaimon 2.1.0 fails with AttributeError: 'NoneType' object has no attribute "
               "'fields': its schema lookup returns None and the reader uses it."),
        spec=("The spec supports the reference's refusal: a schema file must not be deleted while a snapshot or "
              "a live data file still names it (PAIMON-SNAP-008, PAIMON-SCHEMA-016); without it the files cannot "
              "be evolved to the read schema, so the table is invalid, and a reader should say so, not crash."),
        rules=("PAIMON-SNAP-008", "PAIMON-SCHEMA-016"),
        section="spec/schema.md; spec/snapshot.md",
        upstream="engine bug",
        versions=_SEEN,
    ),
    Finding(
        id="readers-crash-on-duplicate-field-ids",
        engines=(*_PY_READERS, "paimon-java"),
        cases=("paimon/neg-duplicate-field-ids",),
        status="error",
        pattern=r"exists 2 times in schema|AmbiguousReference|HeapBytesVector cannot be cast",
        cause=("On a schema whose two fields share an id, pypaimon 2.1.0 fails inside pyarrow (KeyError: 'Field "
               "\"letter\" exists 2 times in schema'), Daft with an ambiguous-column error and Paimon's Java reader "
               "with a ClassCastException (it reads the string column into the long vector of the field sharing "
               "its id): crashes, not a refusal of the table."),
        spec=("The spec supports the reference: field ids are unique across the schema (PAIMON-SCHEMA-006), so the "
              "table is invalid and a reader should say so; the error it gives instead names no broken rule."),
        rules=("PAIMON-SCHEMA-006",),
        section="spec/schema.md",
        upstream="engine bug",
        versions={**_SEEN, "paimon-java": _JAVA},
    ),
    # ---------------------------------------------------------------- Daft (through pypaimon.daft) on object stores
    Finding(
        id="daft-paimon-merge-splits-need-a-catalog-on-s3",
        engines=("daft",),
        cases=("paimon/*",),
        stores=("minio", "s3"),
        status="unsupported",
        pattern=r"TableNotExistException: Table default\.table(\$branch_\w+)? does not exist",
        cause=("On an object store, Daft (through pypaimon 2.1.0's Daft source) cannot read a split that needs "
               "pypaimon's reader (a primary-key merge, deletion vectors, ORC/Avro files): the task reopens the "
               "table by catalog identifier from the FileIO options, and a table opened by path outside a catalog "
               "is not found ('TableNotExistException: Table default.table does not exist'). Raw Parquet splits "
               "read fine; on local disk every split does."),
        spec=("Not a spec question: a Paimon table is self-describing at its path, and the same table reads on local "
              "disk. A limitation of the integration, declared as unsupported, never rows."),
        rules=("PAIMON-LAYOUT-001",),
        section="spec/index.md",
        upstream="engine limitation",
        versions={"daft": _DAFT},
    ),
    Finding(
        id="daft-paimon-merge-splits-need-a-catalog-on-s3-refusal",
        engines=("daft",),
        cases=("paimon/neg-*",),
        stores=("minio", "s3"),
        status="fail",
        pattern=r"raised unsupported, expected invalid_table.*TableNotExistException: Table default\.table",
        cause=("The same object-store limitation on the negative cases whose tables need pypaimon's reader: Daft "
               "answers 'unsupported' (it cannot reopen the table) before it could see what is wrong with it."),
        spec=("The cases expect the table refused as invalid; Daft says nothing about the table at all. Same cause "
              "as daft-paimon-merge-splits-need-a-catalog-on-s3, shown as a fail because a refusal of the wrong kind "
              "is no verdict."),
        rules=("PAIMON-LAYOUT-001",),
        section="spec/index.md",
        upstream="engine limitation",
        versions={"daft": _DAFT},
    ),
    # ---------------------------------------------------------------- Paimon's Java reader
    Finding(
        id="paimon-java-misreads-int64-nanosecond-timestamps",
        engines=("paimon-java",),
        cases=("paimon/types-timestamp-precisions", "paimon/types-timestamp-ltz"),
        status="error",
        pattern=r"TIMESTAMP\(9\)\): Java returned|HeapTimestampVector cannot be cast",
        cause=("Paimon's Java reader (paimon-bundle 1.4.2) expects TIMESTAMP(7..9) Parquet columns in INT96, the "
               "layout its own writer uses. The reference and pypaimon 2.1.0 write them as INT64 with the Parquet "
               "logical type TIMESTAMP(NANOS): Java reads those nanoseconds as milliseconds for TIMESTAMP(9) (a wrong "
               "instant, here beyond year 50000) and fails with a ClassCastException for TIMESTAMP(9) WITH LOCAL "
               "TIME ZONE."),
        spec=("The spec supports the files: it fixes no Parquet physical type for timestamps, and INT64 "
              "TIMESTAMP(NANOS) is Parquet's own encoding of a nanosecond timestamp (INT96 is deprecated there). "
              "A reader must honour the file's logical type rather than assume its writer's layout; silently "
              "returning another instant is the worst outcome."),
        rules=("PAIMON-SCHEMA-017", "PAIMON-SCHEMA-007"),
        section="spec/datafile.md; Parquet LogicalTypes (TIMESTAMP)",
        upstream="engine bug",
        versions={"paimon-java": _JAVA},
    ),
    Finding(
        id="readers-drop-a-lone-retraction-of-an-aggregation-key",
        engines=("paimon-java", "pypaimon-rust", "spark-3.5"),
        cases=("paimon/merge-aggregation-lone-retraction",),
        status="fail",
        pattern=r"1 expected row\(s\) missing, 0 unexpected row\(s\)",
        cause=("On an aggregation table, a key whose only record is a retraction (-U) disappears: Paimon 1.4.2's "
               "ReducerMergeFunctionWrapper hands a key with a single record back unmerged, so the record keeps its -U "
               "kind and the read drops it as a deletion; paimon-rust 0.4.0 and paimon-spark 0.9.0 read it the same way."),
        spec=("Paimon's current Java source supports the reference, a disagreement between Paimon releases: "
              "ReducerMergeFunctionWrapper now sends every record of an aggregation table through "
              "AggregateMergeFunction, a lone one too, and its result is an INSERT of the aggregated row (sum "
              "retracting 3 from nothing gives -3). The docs define the aggregation result per key, not per number "
              "of records; dropping the key loses the retraction's effect."),
        rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
        section="primary-key-table/merge-engine/aggregation; ReducerMergeFunctionWrapper [code]",
        upstream="engine bug",
        versions={"paimon-java": _JAVA, "pypaimon-rust": _PAIMON_RUST, "spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-java-remove-record-on-delete-keeps-deleted-values",
        engines=("paimon-java", "pypaimon-rust"),
        cases=("paimon/merge-partial-update-reinsert-after-delete", "paimon/merge-aggregation-reinsert-after-delete"),
        status="fail",
        pattern=r"1 expected row\(s\) missing, 1 unexpected row\(s\)",
        cause=("With partial-update.remove-record-on-delete (or aggregation.remove-record-on-delete) a key written "
               "again after its -D comes back with the -D record's values: Paimon 1.4.2's PartialUpdateMergeFunction "
               "and AggregateMergeFunction reset the row to the -D record (initRow, which sets every field since "
               "#7645, in 1.4.1 and later) and merge the later records onto it, so -D (1,'a',1,1.0) then "
               "+I (1,null,10,null) reads (1,'a',10,1.0), and sum 10, -D, +I 3 reads 13. paimon-rust 0.4.0 reads "
               "the same rows."),
        spec=("The docs support the reference: the option is 'to remove the whole row when receiving delete "
              "records' (docs primary-key-table/merge-engine/partial-update; CoreOptions 'Whether to remove the "
              "whole row ... when -D records are received'), so a later record of the key starts a new row. The "
              "-D's values are meant for the DELETE result the merge emits (#7645 is about that record); carrying "
              "them into later records makes the row depend on whether a compaction dropped the -D in between, "
              "and before #7645 (up to release-1.4.0-rc1) initRow set only NOT NULL fields, so Paimon read the "
              "fresh row. Current master (and 2.0.0) keeps the 1.4.2 code."),
        rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
        section=("primary-key-table/merge-engine/partial-update; CoreOptions remove-record-on-delete; "
                 "PartialUpdateMergeFunction, AggregateMergeFunction [code]"),
        upstream="engine bug",
        versions={"paimon-java": _JAVA, "pypaimon-rust": _PAIMON_RUST},
    ),
    # ---------------------------------------------------------------- Spark 3.5 with paimon-spark-3.5 0.9.0
    Finding(
        id="paimon-spark-0-9-cannot-read-dictionary-encoded-decimals",
        engines=("spark-3.5",),
        cases=("paimon/types-primitives", "paimon/types-decimal-keys"),
        status="unsupported",
        pattern=r"PlainValuesDictionary\$PlainBinaryDictionary",
        cause=("paimon-spark-3.5 0.9.0's vectorized Parquet reader fails with UnsupportedOperationException "
               "(PlainValuesDictionary$PlainBinaryDictionary) on DECIMAL columns above precision 18 whose pages are "
               "dictionary-encoded, as pyarrow (the reference's and pypaimon's writer) encodes them by default."),
        spec=("The files are valid: Paimon leaves the Parquet encoding to the format, and dictionary encoding of "
              "FIXED_LEN_BYTE_ARRAY decimals is plain Parquet that Paimon's Java core 1.4.2 and pypaimon read. A gap "
              "of the 0.9 reader (the newest Paimon Spark runtime that resolves for Spark 3.5 here)."),
        rules=("PAIMON-SCHEMA-017",),
        section="spec/datafile.md; Parquet Encodings (dictionary)",
        upstream="engine limitation",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-cannot-read-int64-nanosecond-timestamps",
        engines=("spark-3.5",),
        cases=("paimon/types-timestamp-precisions", "paimon/types-timestamp-ltz"),
        status="unsupported",
        pattern=r"Unexpected type: INT64",
        cause=("paimon-spark-3.5 0.9.0 refuses TIMESTAMP(7..9) Parquet columns stored as INT64 TIMESTAMP(NANOS) "
               "('Unexpected type: INT64'): like the Java core it expects INT96 for those precisions (and Spark has no "
               "nanosecond timestamp to return)."),
        spec=("The spec fixes no Parquet physical type; INT64 TIMESTAMP(NANOS) is Parquet's own nanosecond encoding "
              "(see paimon-java-misreads-int64-nanosecond-timestamps). An honest refusal, a missing feature."),
        rules=("PAIMON-SCHEMA-017",),
        section="spec/datafile.md; Parquet LogicalTypes (TIMESTAMP)",
        upstream="engine limitation",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-reads-an-all-null-row-as-null",
        engines=("spark-3.5",),
        cases=("paimon/types-nested",),
        status="fail",
        pattern=r"expected row\(s\) missing",
        cause=("paimon-spark-3.5 0.9.0 returns a ROW whose fields are all null as a null ROW (point {x: null, y: null, "
               "label: null} reads as null, and so does an array element {at: null, what: null}), whoever wrote the "
               "table, Spark included."),
        spec=("The spec supports the reference: a ROW is null or not by its own null bit (a nested ROW is a complete "
              "BinaryRow with its own null bits, PAIMON-ROW-028), independently of its fields; the Parquet file keeps "
              "the difference in the group's definition level. Reading one as the other is a wrong answer."),
        rules=("PAIMON-SCHEMA-019", "PAIMON-ROW-028"),
        section="spec/schema.md (ROW); spec/datafile.md",
        upstream="engine bug",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-no-bitmap64-deletion-vectors",
        engines=("spark-3.5",),
        cases=("paimon/append-deletion-vectors-bitmap64",),
        status="error",
        pattern=r"Size not match, actual size: \d+, expert size: \d+",
        cause=("paimon-spark-3.5 0.9.0 fails on 64-bit deletion vectors with 'Size not match, actual size: 34, "
               "expert size: 42': the 0.9 core predates deletion-vectors.bitmap64 and reads the vector's length as "
               "a 32-bit bitmap's."),
        spec=("The spec supports the reference: with deletion-vectors.bitmap64=true the vector is the 64-bit layout, "
              "whose range length counts the magic and the 64-bit bitmap (PAIMON-INDEX-005/006). The 0.9 reader "
              "cannot say 'unsupported' because it does not know the layout exists: a crash, not a verdict."),
        rules=("PAIMON-INDEX-005", "PAIMON-INDEX-006"),
        section="spec/tableindex.md (Deletion Vectors)",
        upstream="engine limitation",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-reads-duplicate-field-ids",
        engines=("spark-3.5",),
        cases=("paimon/neg-duplicate-field-ids",),
        status="fail",
        pattern=r"silently",
        cause="paimon-spark-3.5 0.9.0 reads a table whose schema gives two fields the same id, without complaint.",
        spec=("The spec supports the reference: field ids are unique across the schema (PAIMON-SCHEMA-006); with a "
              "duplicate id, which file column belongs to which field is undefined, so returning rows is a guess."),
        rules=("PAIMON-SCHEMA-006",),
        section="spec/schema.md",
        upstream="engine bug",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-writes-dates-before-1582-two-days-early",
        engines=("*",),
        writers=("spark-3.5",),
        cases=("paimon/types-primitives",),
        status="fail",
        pattern=r"0001-01-01\)\n\+ .*-719164d\)",
        cause=("paimon-spark-3.5 0.9.0 writes DATE '0001-01-01' as day -719164 (0000-12-30) instead of -719162: "
               "the value passes through java.sql.Date, whose hybrid Julian/Gregorian calendar moves dates before "
               "1582-10-15 (TIMESTAMP '0001-01-01' is two days early as well). Every reader, Spark included, then "
               "reads the shifted date."),
        spec=("The spec supports the reference: DATE is the number of days since 1970-01-01 in the proleptic "
              "Gregorian calendar (PAIMON-ROW-012, as Java's LocalDate), so 0001-01-01 is -719162; the writer "
              "changes the data it was given."),
        rules=("PAIMON-ROW-012",),
        section="spec/schema.md (DATE); spec/datafile.md",
        upstream="engine bug",
    ),
    # ---------------------------------------------------------------- pypaimon-rust as a reader
    Finding(
        id="pypaimon-rust-requires-schema-version",
        engines=("pypaimon-rust",),
        cases=("paimon/schema-legacy-v1",),
        status="error",
        pattern=r"Invalid table schema JSON: missing field `version`",
        cause=("pypaimon-rust 0.4.0 (paimon-rust) refuses a schema file without a 'version' key, as early "
               "releases (0.7 and before) wrote them: 'Invalid table schema JSON: missing field `version`'; its "
               "serde TableSchema declares the key required, so the table cannot be opened at all."),
        spec=("Paimon's Java implementation supports the reference: TableSchemaSerializer.deserialize reads a "
              "missing 'version' as PAIMON_07_VERSION (1), and then applies the v1/v2 defaults (bucket=1 when "
              "absent, file.format=orc when absent); a schema of an old release stays readable. The refusal "
              "gives no wrong rows, but a table Java and pypaimon read is unreadable here."),
        rules=("PAIMON-SCHEMA-012", "PAIMON-SCHEMA-011"),
        section="spec/schema.md (Compatibility); TableSchemaSerializer.deserialize [code]",
        upstream="engine bug",
        versions={"pypaimon-rust": _PAIMON_RUST},
    ),
    Finding(
        id="paimon-spark-0-9-ignores-aggregation-remove-record-on-delete",
        engines=("spark-3.5",),
        cases=("paimon/merge-aggregation-reinsert-after-delete", "paimon/neg-aggregation-conflicting-retract-options"),
        status="fail",
        pattern=r"1 unexpected row\(s\)|returned 2 row\(s\) silently",
        cause=("paimon-spark 0.9 predates aggregation.remove-record-on-delete (its CoreOptions knows only "
               "partial-update.remove-record-on-delete, checked in the 0.9.0 jar): it ignores the option, so a -D "
               "retracts from the aggregate instead of removing the row, and a table that pairs the option with a "
               "field's ignore-retract is read instead of refused."),
        spec=("The current spec and Java define the option (CoreOptions: remove the whole row when -D records "
              "arrive) and refuse it together with ignore-retract (FieldAggregatorFactory): the reference and Paimon "
              "1.4.2 follow them. A disagreement between Paimon releases, not a wrong table."),
        rules=("PAIMON-DATA-003", "PAIMON-DATA-004", "PAIMON-SCHEMA-010"),
        section="primary-key-table/merge-engine/aggregation",
        upstream="engine limitation",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-crashes-on-partial-update-reinsert-after-delete",
        engines=("spark-3.5",),
        cases=("paimon/merge-partial-update-reinsert-after-delete",),
        status="error",
        pattern=r"NullPointerException",
        cause=("paimon-spark 0.9 fails with a NullPointerException reading a partial-update table with "
               "partial-update.remove-record-on-delete whose key was deleted and inserted again (+I, -D, +I in "
               "three commits), where the reference reads the re-inserted row and Java 1.4.2 reads it with the "
               "deleted record's values (a finding of its own)."),
        spec=("The docs define the option as removing the whole row on -D (partial-update.md, CoreOptions); a key "
              "inserted afterwards starts a new row. A crash is neither answer."),
        rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
        section="primary-key-table/merge-engine/partial-update",
        upstream="engine bug",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="pypaimon-calls-conflicting-aggregation-options-unsupported",
        engines=_PY_READERS,
        cases=("paimon/neg-aggregation-conflicting-retract-options",),
        status="fail",
        pattern=r"raised unsupported, expected invalid_table.*does not yet implement: aggregation\.remove-record-on-delete",
        cause=("pypaimon 2.1.0 refuses an aggregation table that sets aggregation.remove-record-on-delete and a "
               "field's ignore-retract as one using 'options that pypaimon does not yet implement' (an unsupported "
               "feature), not as a table whose options conflict."),
        spec=("Paimon's FieldAggregatorFactory refuses the pair for every field ('have conflicting behavior'), so no "
              "Paimon release reads or writes such a table: it is invalid, as the reference and Java say. The "
              "refusal is right, its kind is not: no wrong rows."),
        rules=("PAIMON-SCHEMA-010",),
        section="primary-key-table/merge-engine/aggregation",
        upstream="engine bug",
        versions=_SEEN,
    ),
    Finding(
        id="pypaimon-rust-calls-an-unknown-merge-engine-unsupported",
        engines=("pypaimon-rust",),
        cases=("paimon/neg-unknown-merge-engine",),
        status="fail",
        pattern=r"Unsupported merge-engine: 'bogus'",
        cause=("pypaimon-rust 0.4.0 refuses a primary-key table whose merge-engine option is 'bogus', but as an "
               "unsupported feature (paimon-rust's Error::Unsupported, raised as NotImplementedError: 'Paimon "
               "hitting unsupported error Unsupported merge-engine: 'bogus''), not as an invalid table: it does not "
               "tell a value outside the spec from an engine it has not implemented."),
        spec=("The spec supports the reference: merge-engine is an enumerated option (deduplicate, partial-update, "
              "aggregation, first-row), so another value makes the table invalid; Java's CoreOptions parses it as "
              "an enum option and fails with an IllegalArgumentException, and pypaimon refuses it with its "
              "'Valid values' message. The refusal is right, its kind is not: no wrong rows."),
        rules=("PAIMON-SCHEMA-010", "PAIMON-DATA-004"),
        section="spec/schema.md; primary-key-table/merge-engine/overview",
        upstream="engine bug",
        versions={"pypaimon-rust": _PAIMON_RUST},
    ),
    Finding(
        id="pypaimon-rust-misreads-avro-files-of-a-nullable-record",
        engines=("pypaimon-rust",),
        writers=("spark-3.5",),
        cases=("paimon/file-format-avro",),
        status="error",
        pattern=r"Column '\w+' is declared as non-nullable but contains null values",
        cause=("pypaimon-rust 0.4.0 fails on the Avro data files paimon-spark 0.9.0 writes, whose schema is a "
               "[\"null\", record] union (AvroSchemaConverter's nullable row type): 'Failed to build Avro RecordBatch: "
               "Column 'id' is declared as non-nullable but contains null values'; it decodes the union's records as "
               "nulls."),
        spec=("The files are valid and Java reads them: the union's record branch holds every row, and no row is null. "
              "The reference reads them (it also did not, until this finding's cells showed it)."),
        rules=("PAIMON-DATA-007", "PAIMON-SCHEMA-007"),
        section="spec/datafile.md; Paimon AvroSchemaConverter [code]",
        upstream="engine bug",
        versions={"pypaimon-rust": _PAIMON_RUST},
    ),
    Finding(
        id="paimon-spark-0-9-truncates-nanosecond-timestamps",
        engines=("spark-3.5",),
        writers=("paimon-java",),
        cases=("paimon/types-timestamp-ltz",),
        status="fail",
        pattern=r"\.789123456\)\n\+ .*\.789123000\)",
        cause=("paimon-spark-3.5 0.9.0 reads the TIMESTAMP(9) WITH LOCAL TIME ZONE values Paimon's Java core 1.4.2 "
               "writes (INT96) truncated to microseconds (.789123456 -> .789123000): Spark's timestamp type holds "
               "microseconds, and the read says nothing of the lost digits."),
        spec=("The spec supports the file: TIMESTAMP(9) keeps nanoseconds (PAIMON-SCHEMA-017). A reader that cannot "
              "hold them should refuse, as paimon-spark does for INT64 nanosecond columns "
              "(paimon-spark-0-9-cannot-read-int64-nanosecond-timestamps), not return other values."),
        rules=("PAIMON-SCHEMA-017",),
        section="spec/schema.md (TIMESTAMP)",
        upstream="engine limitation",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    Finding(
        id="paimon-spark-0-9-fails-on-java-1-4-timestamps",
        engines=("spark-3.5",),
        writers=("paimon-java",),
        cases=("paimon/types-timestamp-precisions",),
        status="error",
        pattern=r"Caused by: java\.lang\.IllegalArgumentException",
        cause=("paimon-spark-3.5 0.9.0 fails with a bare IllegalArgumentException (no message) reading the table of "
               "TIMESTAMP(0), (3), (6) and (9) columns that Paimon's Java core 1.4.2 writes; the same table written by "
               "the reference or pypaimon is refused cleanly (INT64 nanoseconds). Which column trips it is not "
               "isolated yet."),
        spec=("Not a verdict on the table: Java and the reference read it to the expected rows. A crash of the reader "
              "across releases (0.9 reading 1.4's files), to be narrowed to its column."),
        rules=("PAIMON-SCHEMA-017",),
        section="spec/schema.md (TIMESTAMP); spec/datafile.md",
        upstream="engine bug",
        versions={"spark-3.5": "paimon-spark 0.9.0"},
    ),
    # ---------------------------------------------------------------- pypaimon as a writer (the validator)
    Finding(
        id="pypaimon-index-manifest-name-lacks-counter",
        engines=("*",),
        writers=("pypaimon",),
        cases=("paimon/*",),
        status="violation",
        pattern=r"PAIMON-LAYOUT-006: index-manifest-[0-9a-f-]+ is not named index-manifest-<uuid>-<n>",
        cause=("pypaimon 2.1.0 names the index manifests it writes (dynamic-bucket hash indexes, deletion vectors) "
               "'index-manifest-<uuid>' with no '-<n>' counter (manifest/index_manifest_file.py)."),
        spec=("The spec and Java support the validator: index manifests are named index-manifest-<uuid>-<n> like "
              "every other manifest (PAIMON-LAYOUT-006, Java's FileStorePathFactory). Readers open the name the "
              "snapshot gives, so no reader cell fails; tools that recognise files by name (orphan cleaning) may not."),
        rules=("PAIMON-LAYOUT-006",),
        section="spec/index.md (file layout)",
        upstream="engine bug",
        versions={"pypaimon": _PYPAIMON},
    ),
)
