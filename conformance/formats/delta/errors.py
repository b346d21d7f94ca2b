"""What Delta readers say when they refuse a table, as the kit's error kinds.

delta-kernel-rs words its errors the same way wherever it runs (deltalake's ``DeltaError`` and
``TableNotFoundError``, Polars and Daft through deltalake, DuckDB's delta extension, which also
names the kernel's error variant: ``DeltaKernel InvalidProtocolError (21): ...``). Measured on
deltalake 1.6.6, polars 1.44.2, daft 0.7 and DuckDB 1.5.5's delta extension.
"""

from __future__ import annotations

from conformance.engines.errors import ErrorPatterns

KERNEL = ErrorPatterns(
    internal=("This is a kernel bug", "DeltaKernel InternalError"),
    unsupported=(
        "Unsupported: ", "DeltaKernel UnsupportedError", "Unsupported minimum reader version",
        "Unsupported Delta Lake column mapping mode", "Change data feed is unsupported",
    ),
    unsupported_types=("NotImplementedError",),
    invalid=(
        "Expected contiguous commit files", "No table metadata or protocol found", "No protocol found",
        "No table metadata found", "Invalid Checkpoint", "Invalid protocol action", "Deletion Vector error",
        "Schema error", "Json error", "Malformed JSON", "No files in log segment", "Invalid column mapping mode",
        "Invalid log path", "Invalid commit info", "Invalid domain metadata", "Invalid table location",
        "DeltaKernel MissingMetadataAndProtocolError", "DeltaKernel MissingProtocolError",
        "DeltaKernel MissingMetadataError", "DeltaKernel InvalidCheckpoint", "DeltaKernel InvalidProtocolError",
        "DeltaKernel DeletionVectorError", "DeltaKernel SchemaError", "DeltaKernel MalformedJson",
        "DeltaKernel InvalidLogPath", "DeltaKernel MissingVersionError",
        "Failed to parse", "Parquet error", "Invalid table version", "not a Delta table",
    ),
    invalid_on_read=("File not found", "DeltaKernel FileNotFoundError"),
)
