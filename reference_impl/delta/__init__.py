"""Delta Lake transaction log protocol (PROTOCOL.md): metadata layer of the reference.

Modules follow the protocol's sections: ``actions``, ``log`` (naming and listing), ``replay``
(action reconciliation), ``checkpoint``, ``schema``, ``partition``, ``column_mapping``, ``stats``,
``deletion_vector``, ``protocol`` (table features), ``cdf``, ``constraints``, ``table``
(snapshots and reads), ``writer`` and ``validate`` (every rule a table breaks).
"""

from reference_impl.formats import Format, Selector

# A commit or checkpoint under _delta_log/ marks a Delta table (Delta Table Specification).
FORMAT = Format(
    "delta", "_delta_log", (".json", ".checkpoint.parquet", ".parquet"),
    "reference_impl.delta.table:read_table", "reference_impl.delta.validate:validate_table",
    selectors=(
        Selector("--as-of", "timestamp", str, "the newest version committed at or before this time (ISO-8601, or "
                                              "epoch milliseconds; in-commit timestamps where the table has them)"),
    ),
)
