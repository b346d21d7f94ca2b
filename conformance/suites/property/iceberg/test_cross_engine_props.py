"""Reference, pyiceberg and DuckDB agree on generated Iceberg tables the reference writer builds.

Histories come from ``conformance.formats.iceberg.strategies.table_histories``: a schema of types every engine
reads, partitioning by identity/bucket/truncate/time transforms, appends, deletes by id through each
mechanism the format version allows (copy-on-write, position deletes, equality deletes, deletion
vectors) and overwrites. The reference writes them; each reader must return the model's rows at the
first append (version 1) and at the end. An engine that is not installed skips with its reason; a
feature an engine declares unsupported (or raises ``Unsupported`` for) is left out for that table,
never counted as agreeing.
"""

from __future__ import annotations

import tempfile

import pyarrow as pa
import pytest
from hypothesis import given

from conformance.compare import compare
from conformance.findings import deviation_reason
from conformance.model import TableRef
from conformance.formats.iceberg import strategies as si
from conformance.suites.property.delta._support import examples
from reference_impl.errors import LakeconfError

RULES = ("ICEBERG-SCAN-001", "ICEBERG-DELETE-010", "ICEBERG-DELETE-015", "ICEBERG-DV-012", "ICEBERG-PART-018",
         "ICEBERG-PART-025", "ICEBERG-PART-014", "ICEBERG-SEQ-005", "ICEBERG-SEQ-010", "ICEBERG-FMT-009", "ICEBERG-EVOL-014")


def _engine(name: str):
    if name == "reference":
        from conformance.engines.reference import ReferenceEngine

        return ReferenceEngine()
    if name == "pyiceberg":
        from conformance.formats.iceberg.engines.pyiceberg import PyIcebergEngine

        return PyIcebergEngine()
    from conformance.engines.duckdb import DuckDBEngine

    return DuckDBEngine()


_ENGINES: dict[str, object] = {}


def engine_or_skip(name: str):
    """The engine adapter, created once; ``pytest.skip`` with its reason when it cannot run here."""
    if name not in _ENGINES:
        try:
            _ENGINES[name] = _engine(name)
        except ImportError as exc:
            pytest.skip(f"{name} adapter not importable: {exc}")
    eng = _ENGINES[name]
    reason = eng.available()
    if reason:
        pytest.skip(f"{name} not available: {reason}")
    return eng


# Deviations of third-party readers this suite found: (engine, rule, applies to history, why). The engine is
# left out for a history a deviation applies to; each has a strict xfail test below, so a fixed engine
# shows up as an unexpected pass.
def _v1_partitioned(h: si.IcebergHistory) -> bool:
    return h.version == 1 and bool(h.partition_by)


KNOWN_DEVIATIONS = (
    ("pyiceberg", "v1-partition-field-without-field-id-refused", _v1_partitioned),
)


def _deviates(engine: str, h: si.IcebergHistory) -> bool:
    return any(name == engine and applies(h) for name, _finding, applies in KNOWN_DEVIATIONS)


def _features(h: si.IcebergHistory) -> list[str]:
    from conformance.formats.iceberg import facts as F

    return list(h.delete_mechanisms) + ([F.FORMAT_V3] if h.version >= 3 else [])


def _read(engine, table: TableRef, h: si.IcebergHistory, at: int | None):
    """The engine's rows, or None when the engine declares (or raises) that it cannot read this table."""
    from reference_impl.errors import Unsupported

    caps = engine.capabilities()
    if caps.missing_read_features("iceberg", _features(h)):
        return None
    try:
        return engine.read(table, at=at)
    except Unsupported:
        return None


def _check(engine, table: TableRef, h: si.IcebergHistory) -> list[str]:
    problems = []
    for at, rows in ((1, h.first), (None, h.final)):
        got = _read(engine, table, h, at)
        if got is None:
            continue
        want = pa.Table.from_pylist(rows, schema=h.schema)
        cmp = compare(got, want)
        if not cmp.equal:
            problems.append(f"{engine.name} at version {at or 'latest'} ({h.version}, partition {h.partition_by}, "
                            f"{[type(s).__name__ + (':' + s.how if getattr(s, 'how', None) else '') for s in h.steps]}): "
                            f"{cmp.summary}\n{cmp.diff}")
    return problems


@pytest.mark.rule(*RULES)
@pytest.mark.parametrize("reader", ["reference", "pyiceberg", "duckdb"])
@examples(0.2)
@given(h=si.table_histories(max_ops=3))
def test_reader_agrees_with_the_model(reader, h):
    """Each reader returns the rows the history leaves, at version 1 and at the end, on tables the reference writes."""
    writer = engine_or_skip("reference")
    engine = engine_or_skip(reader)
    if _deviates(reader, h):
        return
    with tempfile.TemporaryDirectory() as d:
        table = TableRef(format="iceberg", uri=d)
        writer.write(table, h.steps)
        problems = _check(engine, table, h)
        assert not problems, "\n".join(problems)


@pytest.mark.rule("ICEBERG-PART-035", "ICEBERG-PART-032", "ICEBERG-GEN-002")
@pytest.mark.xfail(strict=True, raises=LakeconfError, reason=deviation_reason(*KNOWN_DEVIATIONS[0][1::-1]))
def test_pyiceberg_reads_v1_partition_fields_without_ids(tmp_path):
    """A v1 table partitioned by one column, written as the spec says (no field-id in v1 partition fields), reads in pyiceberg."""
    from conformance import model

    engine = engine_or_skip("pyiceberg")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("c", pa.string())])
    rows = pa.table({"id": [1, 2], "c": ["a", "b"]}, schema=schema)
    table = TableRef(format="iceberg", uri=str(tmp_path / "t"))
    engine_or_skip("reference").write(table, [model.Create(schema=schema, partition_by=("c",), properties={"format-version": "1"}),
                                               model.Append(rows=rows)])
    assert compare(engine.read(table), rows).equal


@pytest.mark.rule("ICEBERG-GEN-010", "ICEBERG-META-031")
@pytest.mark.parametrize("value", [pytest.param("é", id="non-ascii"), pytest.param("\x00", id="nul"), pytest.param("a/b", id="slash"),
                                   pytest.param("100%", id="percent")])
def test_reference_round_trips_any_string_partition_value(tmp_path, value):
    """Rows partitioned by identity on a string read back whatever the string holds (the value becomes part of a file
    name, which the stored file_path must name back literally: no percent-decoding of locations)."""
    from conformance import model

    schema = pa.schema([pa.field("id", pa.int64()), pa.field("c", pa.string())])
    rows = pa.table({"id": [1], "c": [value]}, schema=schema)
    table = TableRef(format="iceberg", uri=str(tmp_path / "t"))
    ref = engine_or_skip("reference")
    ref.write(table, [model.Create(schema=schema, partition_by=("c",)), model.Append(rows=rows)])
    assert compare(ref.read(table), rows).equal
