"""What Iceberg readers say when they refuse a table, as the kit's error kinds.

PyIceberg (and Polars and Daft, which plan through it) validates metadata with pydantic
(``ValidationError``) and raises ``ResolveError`` / ``ValueError`` with its own words; iceberg-rust
(pyiceberg-core) names an error kind (``DataInvalid``, ``FeatureUnsupported``); DuckDB's iceberg
extension raises ``NotImplementedException`` for what it does not implement. Measured on pyiceberg
0.12, pyiceberg-core 0.8, polars 1.44.2, daft 0.7 and DuckDB 1.5.5.
"""

from __future__ import annotations

from conformance.engines.errors import ErrorPatterns

PYICEBERG = ErrorPatterns(
    # a format version it does not know: pydantic's words for a version tag outside 1, 2, 3
    unsupported=("does not yet support", "'format-version' does not match any of the expected tags"),
    unsupported_types=("NotImplementedError",),
    invalid=("ValidationError", "ResolveError", "can't be found in the schemas", "Cannot find snapshot"),
)

ICEBERG_RUST = ErrorPatterns(
    unsupported=("FeatureUnsupported",),
    invalid=("DataInvalid",),
)

DUCKDB_ICEBERG = ErrorPatterns(
    unsupported=("NotImplementedException", "Not implemented Error"),
    invalid=("InvalidInputException", "Invalid Input Error", "InvalidConfigurationException", "Cannot open file"),
)
