"""Shared bits of the Paimon model-based suites: reading a table three ways (reference, pypaimon, Paimon's Java
core) and comparing rows to a model."""

from __future__ import annotations

import math
from typing import Any, Iterable

import pyarrow as pa


def _sort_key(row: tuple) -> tuple:
    """A total order over rows holding None, NaN and mixed scalars (None first)."""
    return tuple((v is None, type(v).__name__, repr(v)) if not isinstance(v, (int, float)) or isinstance(v, bool)
                 else (False, "num", (1 if isinstance(v, float) and math.isnan(v) else 0, v if v == v else 0))
                 for v in row)


def canonical(rows: Iterable[dict[str, Any]], columns: list[str]) -> list[tuple]:
    """Rows as sorted tuples of ``columns``: a multiset, order-insensitive."""
    return sorted((tuple(r.get(c) for c in columns) for r in rows), key=_sort_key)


def table_rows(t: pa.Table) -> list[dict[str, Any]]:
    """An Arrow table's rows as dicts."""
    return t.to_pylist()


def pypaimon_read(path: str, at: int | None = None) -> pa.Table:
    """pypaimon's read of the table at ``path`` through the kit's engine adapter (its own time travel)."""
    from conformance.formats.paimon.engines.pypaimon import PyPaimonEngine
    from conformance.model import TableRef

    return PyPaimonEngine().read(TableRef(format="paimon", uri=path), at=at)


_JAVA: list = []  # [engine or None, why not]: one JVM serves every read of the test process


def java_engine():
    """(Paimon's Java core as the kit's ``paimon-java`` engine, None) or (None, the reason it cannot run here)."""
    if not _JAVA:
        import atexit

        from conformance.formats.paimon.java.engine import PaimonJavaEngine

        engine = PaimonJavaEngine()
        reason = engine.available()
        if reason is None:
            atexit.register(engine.close)
        _JAVA.extend([None if reason else engine, reason])
    return _JAVA[0], _JAVA[1]


def java_read(path: str, at: int | None = None) -> pa.Table | None:
    """Paimon's Java core's read of the table at ``path`` (its own time travel); None where Java cannot run
    here (``test_java_runs_here`` reports why)."""
    from conformance.model import TableRef

    engine, _ = java_engine()
    return None if engine is None else engine.read(TableRef(format="paimon", uri=path), at=at)


def violations(path: str) -> list[str]:
    """The validator's findings for the table, as ``rule: message`` lines."""
    from reference_impl.paimon.validate import validate_table

    return [f"{v.rule}: {v.message}" for v in validate_table(path)]
