"""Reviewed Hudi findings: where a published engine disagrees with the spec, each with its evidence.

Entries follow ``conformance.findings`` (the registry's rules: spec side, rule ids, the engine versions that
show it). They come from runs of the main job and are verified by ``lakeconf findings verify``.
"""

from __future__ import annotations

from conformance.findings import Finding

_HUDI_RS = {"hudi-rs": "0.5.0"}

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
)
