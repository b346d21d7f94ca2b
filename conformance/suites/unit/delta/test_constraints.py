"""Column invariants, CHECK constraints, generated / identity / default columns: SQL through DuckDB,
enforced by the reference writer, and cross-checked against delta-rs (which must honour the same
metadata the reference writes, and vice versa)."""

from __future__ import annotations

import json
import os
import re

import pyarrow as pa
import pytest

from reference_impl.delta import constraints as C
from reference_impl.delta import writer as W
from reference_impl.delta.schema import StructField, StructType, PrimitiveType
from reference_impl.delta.table import read_table
from reference_impl.errors import InvalidTable, Unsupported


def versions(location: str) -> list[int]:
    """Commit versions present in the log."""
    return sorted(int(n[:20]) for n in os.listdir(os.path.join(location, "_delta_log")) if re.fullmatch(r"\d{20}\.json", n))


def actions_of(location: str, version: int, kind: str) -> list[dict]:
    """The bodies of one kind of action in a commit."""
    with open(os.path.join(location, "_delta_log", f"{version:020d}.json"), encoding="utf-8") as fh:
        return [o[kind] for o in (json.loads(line) for line in fh.read().splitlines() if line) if kind in o]


def invariant(expr: str) -> dict:
    """Arrow field metadata for a column invariant, in the spec's JSON wrapper."""
    return {"delta.invariants": json.dumps({"expression": {"expression": expr}})}


# --------------------------------------------------------------------------------------------
# the SQL layer


def test_translate_spark_spellings():
    assert C.translate_expression("`a b` <=> 3") == '"a b"  IS NOT DISTINCT FROM  3'
    assert C.translate_expression('s = "it\'s"') == "s = 'it''s'"
    assert C.translate_expression(r"s != 'a\'b'") == "s != 'a''b'"
    assert C.translate_expression("`we``ird` > 1") == '"we`ird" > 1'
    with pytest.raises(InvalidTable, match="unterminated string"):
        C.translate_expression("s = 'open")


def test_evaluate_predicate_is_null_safe_and_ordered():
    t = pa.table({"x": [5, None, 1, 7]})
    assert C.evaluate_predicate(t, "x > 3").tolist() == [True, False, False, True]
    assert C.evaluate_predicate(t, "x <=> NULL").tolist() == [False, True, False, False]
    assert C.matching_positions(t, "x > 3", [10, 11, 12, 13]).tolist() == [10, 13]
    assert C.evaluate_predicate(pa.table({"x": pa.array([], pa.int64())}), "x > 3").tolist() == []


def test_expressions_cannot_reach_files_or_run_statements(tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    t = pa.table({"x": [1]})
    with pytest.raises(InvalidTable, match="cannot evaluate"):
        C.evaluate(t, f"(SELECT count(*) FROM read_csv('{secret}')) > 0")
    with pytest.raises(InvalidTable, match="cannot parse"):
        C.evaluate(t, "x > 0; DROP TABLE t")
    with pytest.raises(InvalidTable, match="cannot parse"):
        C.evaluate(t, "x > 0) FROM t; SELECT (1")


@pytest.mark.rule("DELTA-WRITER-009")
def test_parse_invariant_wrapper():
    assert C.parse_invariant('{"expression": { "expression": "x > 3"} }', column="x") == "x > 3"
    with pytest.raises(InvalidTable, match="delta.invariants is not") as err:
        C.parse_invariant('{"expr": "x > 3"}', column="x")
    assert err.value.rule == "DELTA-WRITER-009"


def test_identity_values_follow_start_step_and_high_water_mark():
    schema = StructType(
        fields=(
            StructField(name="id", type=PrimitiveType(name="long"), metadata={"delta.identity.start": 1, "delta.identity.step": 2, "delta.identity.allowExplicitInsert": False}),
            StructField(name="v", type=PrimitiveType(name="string")),
        )
    )
    types = {"id": pa.int64(), "v": pa.string()}
    rows, marks = C.apply_identity_columns(pa.table({"v": ["a", "b", "c"]}), schema, {"v"}, types)
    assert rows.column("id").to_pylist() == [1, 3, 5] and marks == {"id": 5}
    schema2 = StructType(fields=(StructField(name="id", type=PrimitiveType(name="long"), metadata={"delta.identity.start": 1, "delta.identity.step": 2, "delta.identity.highWaterMark": 5}),))
    rows, marks = C.apply_identity_columns(pa.table({"x": [0, 0]}).drop_columns(["x"]).append_column("z", pa.array([0, 0])), schema2, set(), {"id": pa.int64()})
    assert rows.column("id").to_pylist() == [7, 9] and marks == {"id": 9}
    with pytest.raises(C.ConstraintViolation, match="does not allow explicit values"):
        C.apply_identity_columns(pa.table({"id": [1]}), schema, {"id"}, types)
    bad = StructType(fields=(StructField(name="id", type=PrimitiveType(name="long"), metadata={"delta.identity.step": 0}),))
    with pytest.raises(InvalidTable, match="must not be 0") as err:
        C.identity_columns(bad)
    assert err.value.rule == "DELTA-WRITER-022"


@pytest.mark.rule("DELTA-WRITER-018")
def test_defaults_fill_missing_columns():
    schema = StructType(fields=(StructField(name="a", type=PrimitiveType(name="integer")), StructField(name="b", type=PrimitiveType(name="string"), metadata={"CURRENT_DEFAULT": "'dflt'"})))
    rows = C.apply_defaults(pa.table({"a": pa.array([1, 2], pa.int32())}), schema, {"a"}, {"a": pa.int32(), "b": pa.string()})
    assert rows.column("b").to_pylist() == ["dflt", "dflt"]


# --------------------------------------------------------------------------------------------
# invariants through the writer


@pytest.mark.rule("DELTA-WRITER-008", "DELTA-WRITER-010", "DELTA-FEATURE-012")
def test_invariant_aborts_false_and_null(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([pa.field("x", pa.int64(), metadata=invariant("x > 3"))]))
    assert actions_of(location, 0, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 2}
    W.append(location, pa.table({"x": pa.array([4, 10], pa.int64())}))
    for bad in ([2], [None], [5, 1]):
        with pytest.raises(C.ConstraintViolation, match=r"invariant on column 'x' \(x > 3\)") as err:
            W.append(location, pa.table({"x": pa.array(bad, pa.int64())}))
        assert err.value.kind == "invalid_table" and err.value.rule == "DELTA-WRITER-010"
        assert err.value.constraint == "x"
    assert versions(location) == [0, 1]
    assert sorted(read_table(location).column("x").to_pylist()) == [4, 10]
    # The metadata we wrote is the spec's: delta-rs enforces the same invariant.
    deltalake = pytest.importorskip("deltalake")
    with pytest.raises(Exception, match="failed validation"):
        deltalake.write_deltalake(location, pa.table({"x": pa.array([1], pa.int64())}), mode="append")


@pytest.mark.rule("DELTA-WRITER-010")
def test_invariant_on_nested_field(tmp_path):
    location = str(tmp_path / "t")
    inner = pa.struct([pa.field("y", pa.int32(), metadata=invariant("s.y >= 0"))])
    W.create_table(location, pa.schema([("s", inner)]))
    W.append(location, pa.table({"s": pa.array([{"y": 1}], inner)}))
    with pytest.raises(C.ConstraintViolation, match="invariant on column 's.y'"):
        W.append(location, pa.table({"s": pa.array([{"y": -1}], inner)}))


def test_not_null_columns(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([pa.field("a", pa.int64(), nullable=False), ("b", pa.string())]))
    with pytest.raises(C.ConstraintViolation, match="NOT NULL constraint violated: column 'a'"):
        W.append(location, pa.table({"a": pa.array([None], pa.int64()), "b": ["x"]}))
    with pytest.raises(C.ConstraintViolation, match="column 'a'"):
        W.append(location, pa.table({"b": ["x"]}))
    assert versions(location) == [0]


# --------------------------------------------------------------------------------------------
# CHECK constraints


@pytest.mark.rule("DELTA-WRITER-011", "DELTA-WRITER-012", "DELTA-WRITER-013", "DELTA-WRITER-014")
def test_check_constraint_lifecycle(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("id", pa.int64()), ("birth", pa.date32())]))
    import datetime as dt

    W.append(location, pa.table({"id": pa.array([1, 2], pa.int64()), "birth": [dt.date(1950, 1, 1), dt.date(1890, 5, 5)]}))
    # Existing data breaks it: refused, table unchanged (DELTA-WRITER-013).
    with pytest.raises(C.ConstraintViolation, match="cannot add: existing rows break it") as err:
        W.add_constraint(location, "birthDateCheck", "birth > '1900-01-01'")
    assert err.value.rule == "DELTA-WRITER-013" and err.value.constraint == "birthDateCheck"
    assert versions(location) == [0, 1]
    # Unknown columns are refused (DELTA-WRITER-012).
    with pytest.raises(InvalidTable, match="CHECK constraint 'c2'") as err:
        W.add_constraint(location, "c2", "nope > 1")
    assert err.value.rule == "DELTA-WRITER-012"
    W.delete(location, "id = 2")
    v = W.add_constraint(location, "birthDateCheck", "birth > '1900-01-01'")
    # Legacy table: the protocol moves to writer version 3 in the same commit (DELTA-WRITER-011).
    assert actions_of(location, v, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 3}
    assert actions_of(location, v, "metaData")[0]["configuration"] == {"delta.constraints.birthDateCheck": "birth > '1900-01-01'"}
    with pytest.raises(C.ConstraintViolation, match="CHECK constraint 'birthDateCheck'") as err:
        W.append(location, pa.table({"id": pa.array([3], pa.int64()), "birth": [dt.date(1800, 1, 1)]}))
    assert err.value.rule == "DELTA-WRITER-014"
    with pytest.raises(C.ConstraintViolation, match="birthDateCheck"):
        W.update(location, {"birth": "DATE '1066-10-14'"}, "id = 1")
    with pytest.raises(InvalidTable, match="already exists"):
        W.add_constraint(location, "BIRTHDATECHECK", "true")
    assert versions(location) == [0, 1, 2, 3]
    W.append(location, pa.table({"id": pa.array([4], pa.int64()), "birth": [dt.date(2000, 1, 1)]}))
    # delta-rs honours the constraint the reference wrote.
    deltalake = pytest.importorskip("deltalake")
    with pytest.raises(Exception, match="failed validation"):
        deltalake.write_deltalake(location, pa.table({"id": pa.array([5], pa.int64()), "birth": [dt.date(1800, 1, 1)]}), mode="append")
    W.drop_constraint(location, "birthDateCheck")
    W.append(location, pa.table({"id": pa.array([5], pa.int64()), "birth": [dt.date(1800, 1, 1)]}))
    assert sorted(read_table(location).column("id").to_pylist()) == [1, 4, 5]


@pytest.mark.rule("DELTA-WRITER-011")
def test_check_constraint_adds_feature_on_table_features_protocol(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("x", pa.int64())]), protocol=(1, 7))
    v = W.add_constraint(location, "pos", "x > 0")
    proto = actions_of(location, v, "protocol")[0]
    assert proto == {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["checkConstraints"]}
    with pytest.raises(C.ConstraintViolation, match="'pos'"):
        W.append(location, pa.table({"x": pa.array([0], pa.int64())}))


@pytest.mark.rule("DELTA-WRITER-014")
def test_constraint_written_by_delta_rs_is_enforced(tmp_path):
    deltalake = pytest.importorskip("deltalake")
    location = str(tmp_path / "t")
    deltalake.write_deltalake(location, pa.table({"x": pa.array([1], pa.int64())}))
    deltalake.DeltaTable(location).alter.add_constraint({"x_small": "x < 100"})
    with pytest.raises(C.ConstraintViolation, match="x_small"):
        W.append(location, pa.table({"x": pa.array([500], pa.int64())}))
    W.append(location, pa.table({"x": pa.array([50], pa.int64())}))
    assert sorted(read_table(location).column("x").to_pylist()) == [1, 50]


def test_constraints_block_renames_they_depend_on(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("x", pa.int64()), ("y", pa.int64())]), properties={"delta.columnMapping.mode": "name", "delta.constraints.xpos": "x > 0"})
    with pytest.raises(InvalidTable, match="CHECK constraint 'xpos'"):
        W.rename_column(location, "x", "x2")
    with pytest.raises(InvalidTable, match="CHECK constraint 'xpos'"):
        W.drop_column(location, "x")
    W.rename_column(location, "y", "y2")


# --------------------------------------------------------------------------------------------
# generated columns


GEN_SCHEMA = pa.schema(
    [
        ("ts", pa.timestamp("us", tz="UTC")),
        pa.field("d", pa.date32(), metadata={"delta.generationExpression": "CAST(ts AS DATE)"}),
        ("a", pa.int64()),
        pa.field("b", pa.int64(), metadata={"delta.generationExpression": "a * 2"}),
    ]
)


@pytest.mark.rule("DELTA-WRITER-015", "DELTA-WRITER-016")
def test_generated_columns_computed_and_checked(tmp_path):
    import datetime as dt

    location = str(tmp_path / "t")
    W.create_table(location, GEN_SCHEMA, partition_by=["d"])
    assert actions_of(location, 0, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 4}
    ts = dt.datetime(2024, 3, 4, 5, 6, tzinfo=dt.timezone.utc)
    W.append(location, pa.table({"ts": pa.array([ts], pa.timestamp("us", tz="UTC")), "a": pa.array([21], pa.int64())}))
    assert read_table(location).to_pylist() == [{"ts": ts, "d": dt.date(2024, 3, 4), "a": 21, "b": 42}]
    assert actions_of(location, 1, "add")[0]["partitionValues"] == {"d": "2024-03-04"}
    # A supplied value must equal the expression, null-safely.
    with pytest.raises(C.ConstraintViolation, match=r"generated column 'b' \(a \* 2\)") as err:
        W.append(location, pa.table({"ts": pa.array([ts], pa.timestamp("us", tz="UTC")), "a": pa.array([1], pa.int64()), "b": pa.array([3], pa.int64())}))
    assert err.value.rule == "DELTA-WRITER-016"
    with pytest.raises(C.ConstraintViolation, match="generated column 'b'"):
        W.append(location, pa.table({"ts": pa.array([ts], pa.timestamp("us", tz="UTC")), "a": pa.array([1], pa.int64()), "b": pa.array([None], pa.int64())}))
    W.append(location, pa.table({"ts": pa.array([ts], pa.timestamp("us", tz="UTC")), "a": pa.array([None], pa.int64()), "b": pa.array([None], pa.int64())}))
    assert versions(location) == [0, 1, 2]
    # UPDATE recomputes a generated column whose inputs changed.
    W.update(location, {"a": "a + 1"}, "a = 21")
    assert sorted((r["a"], r["b"]) for r in read_table(location).to_pylist() if r["a"] is not None) == [(22, 44)]
    # delta-rs computes and checks the same expressions from the metadata we wrote.
    deltalake = pytest.importorskip("deltalake")
    with pytest.raises(Exception, match="failed validation"):
        deltalake.write_deltalake(location, pa.table({"ts": pa.array([ts], pa.timestamp("us", tz="UTC")), "d": [dt.date(2024, 3, 4)], "a": pa.array([1], pa.int64()), "b": pa.array([9], pa.int64())}), mode="append")


def test_generated_column_with_bad_expression_is_refused_at_creation(tmp_path):
    schema = pa.schema([("a", pa.int64()), pa.field("b", pa.int64(), metadata={"delta.generationExpression": "missing + 1"})])
    with pytest.raises(InvalidTable, match="generated column 'b'"):
        W.create_table(str(tmp_path / "t"), schema)
    assert not os.path.exists(tmp_path / "t" / "_delta_log")


@pytest.mark.rule("DELTA-WRITER-021", "DELTA-FEATURE-005")
def test_identity_and_default_tables_list_their_writer_features(tmp_path):
    # Creating a table with an identity column or a column default must list the feature that
    # governs it, so that writers unaware of it refuse the table.
    ident = pa.schema([pa.field("id", pa.int64(), metadata={"delta.identity.start": "1", "delta.identity.step": "1", "delta.identity.allowExplicitInsert": "false"})])
    W.create_table(str(tmp_path / "i"), ident)
    dflt = pa.schema([pa.field("x", pa.int64(), metadata={"CURRENT_DEFAULT": "7"})])
    W.create_table(str(tmp_path / "d"), dflt)
    for name, feature in (("i", "identityColumns"), ("d", "allowColumnDefaults")):
        with open(tmp_path / name / "_delta_log" / f"{0:020d}.json") as fh:
            proto = next(json.loads(l)["protocol"] for l in fh if '"protocol"' in l)
        assert feature in proto.get("writerFeatures", []) or (feature == "identityColumns" and proto["minWriterVersion"] >= 6), proto


@pytest.mark.rule("DELTA-WRITER-019")
def test_add_column_with_default_is_refused(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, pa.schema([("x", pa.int64())]))
    with pytest.raises(InvalidTable, match="cannot be set in the operation that adds the column") as err:
        W.add_column(location, pa.field("c", pa.int32(), metadata={"CURRENT_DEFAULT": "42"}))
    assert err.value.rule == "DELTA-WRITER-019"


@pytest.mark.rule("DELTA-WRITER-022", "DELTA-WRITER-023")
def test_identity_column_through_the_writer(tmp_path, monkeypatch):
    # protocol.py does not list identityColumns as written: switch it on to check the writer's side.
    from reference_impl.delta import protocol as P

    monkeypatch.setattr(P, "WRITER_FEATURES_SUPPORTED", P.WRITER_FEATURES_SUPPORTED | {"identityColumns"})
    location = str(tmp_path / "t")
    schema = pa.schema([pa.field("id", pa.int64(), metadata={"delta.identity.start": "1", "delta.identity.step": "2", "delta.identity.allowExplicitInsert": "false"}), ("v", pa.string())])
    W.create_table(location, schema)
    assert actions_of(location, 0, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 6}
    W.append(location, pa.table({"v": ["a", "b", "c"]}))
    v = W.append(location, pa.table({"v": ["d"]}))
    field = json.loads(actions_of(location, v, "metaData")[0]["schemaString"])["fields"][0]
    assert field["metadata"]["delta.identity.highWaterMark"] == 7 and field["metadata"]["delta.identity.start"] == 1
    assert sorted(read_table(location).column("id").to_pylist()) == [1, 3, 5, 7]
    with pytest.raises(C.ConstraintViolation, match="does not allow explicit values"):
        W.append(location, pa.table({"id": pa.array([100], pa.int64()), "v": ["x"]}))
    W.delete(location, "id = 3")  # rewriting kept rows is not an explicit insert
    assert sorted(read_table(location).column("id").to_pylist()) == [1, 5, 7]
