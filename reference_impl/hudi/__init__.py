"""Apache Hudi table format: metadata layer of the reference (table versions 6, 8 and 9).

Modules follow the spec's sections (hudi.apache.org tech specs for 0.x and 1.x, the timeline page)
and, where bytes matter, the Java source: ``properties`` (``.hoodie/hoodie.properties``: Java
properties syntax, the table checksum, typed table config with Java's defaults, a writer),
``timeline`` (instant times, actions and states, instant file names of timeline layouts 1 and 2,
the active timeline, the v6 archive and the v8+ LSM history) and ``commit_metadata`` (the
metadata of completed instants: JSON in table version 6, Avro object containers from version 8).

The package does not declare a ``FORMAT`` to ``reference_impl.formats`` yet: it has no reader of
rows (file slices, log files and the merge are still to come), and a declared format must name one.
"""
