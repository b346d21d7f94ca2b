"""The Delta facts an engine reports through ``describe``, in the case corpus' key spelling.

Keys (see conformance/cases/delta.py): ``version``, ``protocol`` ([minReader, minWriter]),
``features`` (every table feature the protocol supports: listed, or implied by legacy
versions), ``partition_columns``, ``configuration``, and where the engine exposes them
``txns`` ({appId: version}) and ``domains`` ({domain: configuration}, live domains only).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

# The keys ``describe`` reports and how the harness compares each with a case's expectation:
# properties and features list what must be present (a writer may add more); the change feed is a
# set of change rows (``changes``: the reference reports it for tables with the change data feed).
FACTS = {
    "version": "exact", "protocol": "exact", "features": "subset", "partition_columns": "exact",
    "configuration": "subset", "txns": "exact", "domains": "exact", "changes": "unordered",
}

# "Table Features" / "Protocol Evolution": what legacy (reader, writer) versions imply.
_LEGACY_WRITER = {
    2: ("appendOnly", "invariants"),
    3: ("checkConstraints",),
    4: ("changeDataFeed", "generatedColumns"),
    5: ("columnMapping",),
    6: ("identityColumns",),
}
_LEGACY_READER = {2: ("columnMapping",)}
TABLE_FEATURES_WRITER_VERSION = 7


def supported_features(
    min_reader: int, min_writer: int, reader_features: Iterable[str] | None, writer_features: Iterable[str] | None
) -> list[str]:
    """Features a protocol supports: the listed ones, plus those implied by legacy versions."""
    out: set[str] = set(reader_features or ()) | set(writer_features or ())
    if min_writer < TABLE_FEATURES_WRITER_VERSION:
        for version, names in _LEGACY_WRITER.items():
            if min_writer >= version:
                out.update(names)
    if min_reader < 3:
        for version, names in _LEGACY_READER.items():
            if min_reader >= version:
                out.update(names)
    return sorted(out)


def facts(
    *,
    version: int,
    min_reader: int,
    min_writer: int,
    reader_features: Iterable[str] | None,
    writer_features: Iterable[str] | None,
    partition_columns: Iterable[str],
    configuration: Mapping[str, str],
    txns: Mapping[str, int] | None = None,
    domains: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One engine's Delta facts as a dict (``txns``/``domains`` only when known)."""
    out: dict[str, Any] = {
        "version": version,
        "protocol": [min_reader, min_writer],
        "features": supported_features(min_reader, min_writer, reader_features, writer_features),
        "partition_columns": list(partition_columns),
        "configuration": dict(configuration),
    }
    if txns is not None:
        out["txns"] = dict(txns)
    if domains is not None:
        out["domains"] = dict(domains)
    return out
