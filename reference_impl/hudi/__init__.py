"""Apache Hudi table format: metadata layer of the reference (table versions 6, 8 and 9).

Modules follow the spec's sections (hudi.apache.org tech specs for 0.x and 1.x, the timeline page)
and, where bytes matter, the Java source: ``properties`` (``.hoodie/hoodie.properties``: Java
properties syntax, the table checksum, typed table config with Java's defaults, a writer),
``timeline`` (instant times, actions and states, instant file names of timeline layouts 1 and 2,
the active timeline, the v6 archive and the v8+ LSM history) and ``commit_metadata`` (the
metadata of completed instants: JSON in table version 6, Avro object containers from version 8).

``fileslices`` (file groups and slices by each version's rule), ``logfile`` (the log block format),
``table`` (snapshot, read-optimized, time-travel and incremental queries), ``versions`` (the kit's
version numbers: completed data instants counted in commit order), ``writer`` and ``validate``.

``FORMAT`` below declares the package to ``reference_impl.formats``: ``.hoodie/hoodie.properties`` marks
a table; ``lakeconf read`` reaches ``versions.read_table`` and ``lakeconf validate`` the validator.
"""

from reference_impl.formats import Format, Selector

FORMAT = Format(
    "hudi", ".hoodie", (),
    "reference_impl.hudi.versions:read_table", "reference_impl.hudi.validate:validate_table",
    prefixes=("hoodie.properties",),
    selectors=(
        Selector("--instant", "instant", str, "an instant time (yyyyMMddHHmmssSSS): the table as of it, by the "
                                              "requested times of its instants (Hudi's as.of.instant)"),
        Selector("--completion-time", "completion_time", str, "a completion time (table version 8+): the instants "
                                                              "completed at or before it"),
    ),
)
