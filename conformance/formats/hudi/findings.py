"""Reviewed Hudi findings: where a published engine disagrees with the spec, each with its evidence.

Entries follow ``conformance.findings`` (the registry's rules: spec side, rule ids, the engine versions that
show it). They come from runs of the main job and are verified by ``lakeconf findings verify``.
"""

from __future__ import annotations

from conformance.findings import Finding

_HUDI_RS = {"hudi-rs": "0.5.0"}
_SPARK = {"spark-3.5": "hudi-spark3.5-bundle 1.2.0"}

FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="hudi-rs-panics-on-local-timestamp",
        engines=("hudi-rs",),
        cases=("hudi/types-timestamps",),
        status="error",
        pattern=r"PanicException: not yet implemented",
        cause=("hudi-rs 0.5.0 panics ('not yet implemented', crates/core/src/avro_to_arrow/schema.rs) when the "
               "table's Avro schema has a local-timestamp-micros field (Spark's TIMESTAMP_NTZ): the Python binding "
               "raises PanicException instead of reading or refusing the table. timestamp-micros reads fine."),
        spec=("The table schema is Avro (HUDI-COMMIT-003) and local-timestamp-micros is a logical type of the Avro "
              "specification (1.10+) that Hudi's Spark writer emits for TIMESTAMP_NTZ columns; the reference and "
              "Spark read the column as wall-clock microseconds. A panic is neither an answer nor a refusal."),
        rules=("HUDI-COMMIT-003", "HUDI-META-001"),
        section="tech-specs-1point0 (Schema); Avro specification, Logical Types",
        upstream="engine limitation",
        versions=_HUDI_RS,
    ),
    Finding(
        id="hudi-rs-time-travel-reads-the-latest-schema",
        engines=("hudi-rs",),
        cases=("hudi/evolve-add-column",),
        status="fail",
        pattern=r"unexpected columns \['extra'\]",
        cause=("hudi-rs 0.5.0 reads an older version of a table (as.of.instant before a column was added) with the "
               "table's latest schema: the added column comes back, all null."),
        spec=("A read at an instant sees the table as of that instant: the schema is that of the latest write "
              "visible there that recorded one (HUDI-COMMIT-003; tech-specs-1point0 'Reader Expectations'), which is "
              "what Java's TableSchemaResolver and the reference take; the column did not exist at version 1."),
        rules=("HUDI-COMMIT-003", "HUDI-TIMELINE-019", "HUDI-EVOL-001"),
        section="tech-specs-1point0 (Reader Expectations, Schema)",
        upstream="engine bug",
        versions=_HUDI_RS,
    ),
    Finding(
        id="hudi-rs-reads-schema-on-read-tables-by-name",
        engines=("hudi-rs",),
        # every schema-on-read case but a move (names unchanged: a read by name is right there)
        cases=("hudi/sor-rename-*", "hudi/sor-drop-*", "hudi/sor-add-*", "hudi/sor-change-type*", "hudi/sor-many-changes-*",
               "hudi/sor-time-travel-*", "hudi/neg-sor-*"),
        status="fail",
        pattern=(r"expected row\(s\) missing|unexpected columns|missing columns|type (struct|map|list)<|"
                 r"returned \d+ row\(s\) silently"),
        cause=("hudi-rs 0.5.0 reads a schema-on-read table (an InternalSchema history in .hoodie/.schema, "
               "latest_schema in the commits) without refusing it and without the history: it matches each file's "
               "columns to the latest Avro schema by name, so a renamed column reads null in files written before "
               "the rename, a column added under an old name revives the old values, a dropped nested field "
               "comes back, and a corrupt history goes unnoticed; time travel reads the latest schema too. "
               "(Measured on reference- and Spark-written tables; no 'schema-on-read is not supported' error.)"),
        spec=("Columns keep a stable field id across renames, drops and moves; readers resolve old files by id, "
              "merging the file's schema version into the query's (HUDI-EVOLR-017; RFC-33, Java "
              "InternalSchemaMerger). A reader without schema on read should refuse such a table, not guess."),
        rules=("HUDI-EVOLR-017", "HUDI-EVOLR-004", "HUDI-EVOLR-016"),
        section="schema_evolution.md (Schema evolution on read); RFC-33",
        upstream="engine limitation",
        versions=_HUDI_RS,
    ),
    # ------------------------------------------------------------------ Spark 3.5 + hudi-spark 1.2
    Finding(
        id="spark35-hudi-refuses-ancient-dates",
        engines=("spark-3.5",),
        cases=("hudi/types-primitives", "hudi/types-primitives-mor-log"),
        status="error",
        pattern=r"READ_ANCIENT_DATETIME|INCONSISTENT_BEHAVIOR_CROSS_VERSION",
        cause=("Spark 3.5 refuses to read the DATE 0001-01-01 from a Hudi base file it did not write "
               "('INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME') unless the user sets "
               "spark.sql.parquet.datetimeRebaseModeInRead; its own tables carry Spark's legacy-calendar marker."),
        spec=("Hudi's schema is Avro, whose date is days since the epoch in the proleptic Gregorian calendar: the "
              "value is well defined and the reference and hudi-rs read it. The refusal is a default of the engine."),
        rules=("HUDI-COMMIT-003", "HUDI-META-001"),
        section="tech-specs-1point0 (Schema); Avro specification, Logical Types",
        upstream="engine limitation",
        versions=_SPARK,
    ),
    Finding(
        id="hudi-spark-cannot-write-null-array-elements",
        engines=("*",),
        writers=("spark-3.5",),
        cases=("hudi/types-nested", "hudi/types-nested-mor-log"),
        status="error",
        pattern=r"Array contains a null element|Failed to write to Hudi",
        cause=("hudi-spark 1.2 fails to write a row whose array column holds a null element ('Array contains a null "
               "element at 1. Set parquet.avro.write-old-list-structure=false'): its Parquet writer keeps "
               "parquet-avro's old two-level list layout by default, which has no null elements."),
        spec=("The table's Avro schema allows the value (an array of a nullable string), and the reference and "
              "hudi-rs read such base files: the refusal is a default of Hudi's writer, not a property of the table."),
        rules=("HUDI-COMMIT-003",),
        section="tech-specs-1point0 (Schema)",
        upstream="engine limitation",
    ),
    Finding(
        id="spark35-hudi-vectorized-reader-refuses-nested-type-change",
        engines=("spark-3.5",),
        cases=("hudi/promote-array-element", "hudi/sor-*"),
        status="error",
        pattern=r"cannot be read in vectorized mode",
        cause=("hudi-spark 1.2 on Spark 3.5 refuses to read a table whose array element type was promoted (int to "
               "long), or whose struct columns changed under schema on read (a field renamed, dropped or added, so "
               "an old file's struct differs from the query's): 'Nested types with type changes (implicit or "
               "explicit) cannot be read in vectorized mode', unless the user turns Spark's vectorized Parquet "
               "reader off (measured: with spark.sql.parquet.enableVectorizedReader=false the same reads return the "
               "reference's rows)."),
        spec=("The seed page lists promotions of array elements and map values as supported for COW and MOR "
              "(HUDI-EVOL-008, HUDI-EVOL-017), and nested add/drop/rename under schema on read (HUDI-EVOLR-004, "
              "-014, -016; old files resolved by field id, HUDI-EVOLR-017); the reference reads the old files."),
        rules=("HUDI-EVOL-008", "HUDI-EVOL-017", "HUDI-EVOLR-004", "HUDI-EVOLR-017"),
        section="schema_evolution.md (Schema evolution on write)",
        upstream="engine limitation",
        versions=_SPARK,
    ),
    Finding(
        id="spark35-hudi-reads-no-rows-from-a-misplaced-timeline",
        engines=("spark-3.5",),
        cases=("hudi/neg-layout-version-mismatch",),
        status="fail",
        pattern=r"returned 0 row\(s\) silently",
        cause=("hudi-spark 1.2 reads a table of table version 9 whose hoodie.properties says timeline layout 1 as an "
               "empty table: it looks for instants in .hoodie/, finds none and returns no rows, where hudi-rs and the "
               "reference refuse the inconsistent pair."),
        spec=("Timeline layout 2 belongs to table versions 8 and 9 and a reader must reject an inconsistent pair "
              "(HUDI-LAYOUT-004): the rows silently missing are the one answer that is not conformant."),
        rules=("HUDI-LAYOUT-004",),
        section="HoodieTableVersion; hudi-rs table validation",
        upstream="engine bug",
        versions=_SPARK,
    ),
    Finding(
        id="spark35-hudi-reads-timestamp-keygen-partition-as-text",
        engines=("spark-3.5",),
        cases=("hudi/keygen-timestamp",),
        status="fail",
        pattern=r"column 'day': type string, expected int64",
        cause=("hudi-spark 1.2 reads the partition column of a table partitioned by the timestamp-based key "
               "generator as the text of the partition path ('2024-01-01'), a string, instead of the long the data "
               "files hold (1704067200000)."),
        spec=("Partition columns stay in the data files (HUDI-LAYOUT-014: unless drop.partition.columns is set); the "
              "path is derived from the value, so the value is the file's long, as the reference and hudi-rs read it."),
        rules=("HUDI-LAYOUT-014", "HUDI-LAYOUT-015"),
        section="tech-specs (Data Layout); key generators",
        upstream="engine bug",
        versions=_SPARK,
    ),
    # ------------------------------------------------------------------ Daft
    Finding(
        id="daft-requires-keygenerator-class",
        engines=("daft",),
        writers=("spark-3.5",),
        cases=("hudi/v6-cow-*",),
        status="unsupported",
        pattern=r"needs 'hoodie\.table\.keygenerator\.class'",
        cause=("daft 0.7.26's read_hudi indexes hoodie.properties for hoodie.table.keygenerator.class (KeyError), "
               "which Hudi 1.2 does not write for the table-version-6 tables it creates: it records "
               "hoodie.table.keygenerator.type instead."),
        spec=("hoodie.properties requires only hoodie.table.name, .type and .version (HUDI-LAYOUT-003); the key "
              "generator is optional configuration with a default, and the key generator never changes how a "
              "reader reads rows (the record key and partition path are meta columns)."),
        rules=("HUDI-LAYOUT-003", "HUDI-LAYOUT-002"),
        section="tech-specs-1point0 (Table Properties)",
        upstream="engine bug",
        versions={"daft": "0.7.26"},
    ),
)
