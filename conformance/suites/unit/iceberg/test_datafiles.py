"""Writing data files: rows conformed to the table schema, field ids in Parquet, per-partition files, metrics."""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.iceberg import datafiles as D
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V
from reference_impl.parquet_io import open_parquet
from reference_impl.storage import LocalStorage


def _schema(arrow: pa.Schema) -> T.Schema:
    return T.arrow_to_schema_with_fresh_ids(arrow)[0]


def _spec(schema: T.Schema, *fields: tuple[str, str]) -> P.PartitionSpec:
    out = []
    for i, (col, transform) in enumerate(fields):
        out.append(P.PartitionField(source_ids=(schema.field_by_name(col).id,), field_id=1000 + i,
                                    name=f"{col}_{i}", transform=X.parse_transform(transform)))
    return P.PartitionSpec(spec_id=0, fields=tuple(out))


def _footer_ids(storage: LocalStorage, df: MF.DataFile) -> set[int]:
    data = storage.read(storage.resolve(df.file_path))
    return T.field_ids_of_arrow(open_parquet(data).schema_arrow)


ARROW = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("name", pa.string()),
    pa.field("score", pa.float64()),
    pa.field("s", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("m", pa.map_(pa.string(), pa.int64())),
])


@pytest.mark.rule("ICEBERG-FMT-009", "ICEBERG-FMT-010", "ICEBERG-GEN-008")
def test_every_field_carries_its_id_in_parquet(tmp_path):
    schema = _schema(ARROW)
    storage = LocalStorage(str(tmp_path))
    rows = pa.table({
        "id": [1, 2], "name": ["a", None], "score": [1.5, None], "s": [{"a": 1, "b": "x"}, None],
        "tags": [["t"], None], "m": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64())),
    })
    (df,) = D.write_data_files(storage, rows, schema=schema, spec=P.UNPARTITIONED)
    assert _footer_ids(storage, df) == {i for i, _ in T.walk_fields(schema)}
    pf = open_parquet(storage.read(storage.resolve(df.file_path)))
    text = str(pf.schema)
    assert "repeated group field_id=-1 list" in text and "repeated group field_id=-1 key_value" in text  # 3-level
    assert df.file_path.startswith("file://") and df.file_format == "parquet" and df.record_count == 2


def test_missing_optional_columns_are_null_and_unknown_columns_are_refused(tmp_path):
    schema = _schema(ARROW)
    storage = LocalStorage(str(tmp_path))
    (df,) = D.write_data_files(storage, pa.table({"id": [7]}), schema=schema, spec=P.UNPARTITIONED)
    back = open_parquet(storage.read(storage.resolve(df.file_path))).read()
    assert back.column("name").to_pylist() == [None] and back.column("id").to_pylist() == [7]
    with pytest.raises(InvalidTable, match="not in the table schema"):
        D.conform(pa.table({"id": [1], "nope": [1]}), schema)


@pytest.mark.rule("ICEBERG-SCHEMA-002", "ICEBERG-SCHEMA-018")
def test_required_columns_need_values(tmp_path):
    schema = _schema(ARROW)
    with pytest.raises(InvalidTable, match="required column id is missing") as exc:
        D.conform(pa.table({"name": ["a"]}), schema)
    assert exc.value.rule == "ICEBERG-SCHEMA-018"
    with pytest.raises(InvalidTable, match="holds 1 null") as exc:
        D.conform(pa.table({"id": pa.array([1, None], pa.int64())}), schema)
    assert exc.value.rule == "ICEBERG-SCHEMA-002"


@pytest.mark.rule("ICEBERG-SCHEMA-018", "ICEBERG-SCHEMA-019")
def test_write_default_fills_an_omitted_column():
    schema = T.Schema(schema_id=0, fields=(
        T.NestedField(id=1, name="id", type=T.LONG, required=True),
        T.NestedField(id=2, name="n", type=T.INT, required=True, initial_default=5, write_default=9),
    ))
    out = D.conform(pa.table({"id": [1, 2]}), schema)
    assert out.column("n").to_pylist() == [9, 9]


@pytest.mark.rule("ICEBERG-FMT-008")
def test_unknown_columns_are_not_stored():
    schema = T.Schema(schema_id=0, fields=(T.NestedField(id=1, name="id", type=T.LONG), T.NestedField(id=2, name="u", type=T.UNKNOWN)))
    out = D.conform(pa.table({"id": [1], "u": pa.nulls(1)}), schema)
    assert out.column_names == ["id"]
    with pytest.raises(InvalidTable, match="unknown"):
        D.conform(pa.table({"id": [1], "u": [3]}), schema)


@pytest.mark.rule("ICEBERG-MANIFEST-025", "ICEBERG-MANIFEST-026", "ICEBERG-MANIFEST-027", "ICEBERG-MANIFEST-029",
                  "ICEBERG-MANIFEST-030", "ICEBERG-MANIFEST-031", "ICEBERG-MANIFEST-032", "ICEBERG-MANIFEST-024")
def test_metrics_counts_and_bounds(tmp_path):
    arrow = pa.schema([
        pa.field("i", pa.int32()), pa.field("f", pa.float64()), pa.field("z", pa.float32()), pa.field("s", pa.string()),
        pa.field("d", pa.decimal128(9, 2)), pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("dt", pa.date32()),
        pa.field("b", pa.bool_()), pa.field("nested", pa.struct([pa.field("x", pa.int64())])),
        pa.field("lst", pa.list_(pa.int64())),
    ])
    schema = _schema(arrow)
    ids = {f.name: f.id for f in schema.fields}
    x_id = schema.field_by_name("nested").type.fields[0].id
    rows = pa.table({
        "i": pa.array([3, None, -7], pa.int32()),
        "f": [math.nan, 2.5, None],
        "z": pa.array([0.0, -0.0, 1.0], pa.float32()),
        "s": ["b", "ab", "zz"],
        "d": pa.array([Decimal("1.10"), Decimal("-3.25"), None], pa.decimal128(9, 2)),
        "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), None, dt.datetime(1969, 12, 31, tzinfo=dt.timezone.utc)], pa.timestamp("us", tz="UTC")),
        "dt": [dt.date(2020, 1, 1), dt.date(2019, 1, 1), None],
        "b": [True, None, True],
        "nested": [{"x": 5}, None, {"x": None}],
        "lst": [[1, 2], None, []],
    }, schema=arrow)
    storage = LocalStorage(str(tmp_path))
    (df,) = D.write_data_files(storage, rows, schema=schema, spec=P.UNPARTITIONED)
    assert df.value_counts[ids["i"]] == 3 and df.null_value_counts[ids["i"]] == 1
    assert df.nan_value_counts[ids["f"]] == 1 and df.null_value_counts[ids["f"]] == 1
    assert df.lower_bounds[ids["f"]] == struct.pack("<d", 2.5) == df.upper_bounds[ids["f"]]  # NaN is never a bound
    # -0.0 precedes +0.0: the lower bound is -0.0, the upper bound 1.0 (IEEE totalOrder).
    assert df.lower_bounds[ids["z"]] == struct.pack("<f", -0.0) and df.upper_bounds[ids["z"]] == struct.pack("<f", 1.0)
    assert df.lower_bounds[ids["i"]] == struct.pack("<i", -7) and df.upper_bounds[ids["i"]] == struct.pack("<i", 3)
    assert df.lower_bounds[ids["s"]] == b"ab" and df.upper_bounds[ids["s"]] == b"zz"
    assert V.from_bytes(df.lower_bounds[ids["d"]], schema.field_by_name("d").type) == Decimal("-3.25")
    assert V.from_bytes(df.upper_bounds[ids["ts"]], T.TIMESTAMPTZ) == 1704067200000000
    assert V.from_bytes(df.lower_bounds[ids["ts"]], T.TIMESTAMPTZ) == -86400000000
    assert df.lower_bounds[ids["b"]] == b"\x01" == df.upper_bounds[ids["b"]]
    assert df.lower_bounds[ids["dt"]] == struct.pack("<i", (dt.date(2019, 1, 1) - dt.date(1970, 1, 1)).days)
    assert df.null_value_counts[x_id] == 2 and df.lower_bounds[x_id] == struct.pack("<q", 5)  # a null parent counts as null
    lst_elem = schema.field_by_name("lst").type.element_id
    assert lst_elem in df.value_counts and lst_elem not in df.lower_bounds  # no bounds inside lists
    assert set(df.column_sizes) >= {ids["i"], ids["s"], x_id, lst_elem} and all(v > 0 for v in df.column_sizes.values())
    assert df.split_offsets and list(df.split_offsets) == sorted(df.split_offsets)


@pytest.mark.rule("ICEBERG-PART-017", "ICEBERG-MANIFEST-020")
def test_rows_split_per_partition_tuple(tmp_path):
    arrow = pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("us")), pa.field("c", pa.string())])
    schema = _schema(arrow)
    spec = _spec(schema, ("ts", "day"), ("id", "bucket[4]"), ("c", "identity"))
    rows = pa.table({
        "id": [1, 1, 2, None],
        "ts": [dt.datetime(2024, 1, 1, 1), dt.datetime(2024, 1, 1, 23), dt.datetime(2024, 1, 2), None],
        "c": ["x", "x", "y/z", None],
    }, schema=arrow)
    storage = LocalStorage(str(tmp_path))
    dfs = D.write_data_files(storage, rows, schema=schema, spec=spec)
    tuples = sorted((tuple(df.partition[f.field_id] for f in spec.fields), df.record_count) for df in dfs
                    if df.partition[1000] is not None)
    day = (dt.date(2024, 1, 1) - dt.date(1970, 1, 1)).days
    assert tuples == [((day, X.bucket(1, T.LONG, 4), "x"), 2), ((day + 1, X.bucket(2, T.LONG, 4), "y/z"), 1)]
    nulls = [df for df in dfs if df.partition[1000] is None]
    assert len(nulls) == 1 and nulls[0].partition == {1000: None, 1001: None, 1002: None}
    # Java's directory names: name=value, URL-encoded.
    assert any("/c_2=y%2Fz/" in df.file_path for df in dfs) and any("ts_0=null" in df.file_path for df in dfs)
    # Identity sources stay in the data file (GEN-008).
    assert schema.field_by_name("c").id in _footer_ids(storage, dfs[0])


def test_files_splits_each_partition(tmp_path):
    schema = _schema(pa.schema([pa.field("id", pa.int64())]))
    storage = LocalStorage(str(tmp_path))
    dfs = D.write_data_files(storage, pa.table({"id": list(range(10))}), schema=schema, spec=P.UNPARTITIONED, files=3)
    assert [df.record_count for df in dfs] == [3, 4, 3]
    assert D.write_data_files(storage, pa.table({"id": pa.array([], pa.int64())}), schema=schema, spec=P.UNPARTITIONED) == []
    with pytest.raises(InvalidTable, match="files must be"):
        D.write_data_files(storage, pa.table({"id": [1]}), schema=schema, spec=P.UNPARTITIONED, files=0)


@pytest.mark.rule("ICEBERG-PART-007")
def test_unknown_transform_is_not_written(tmp_path):
    schema = _schema(pa.schema([pa.field("id", pa.int64())]))
    spec = P.PartitionSpec(spec_id=0, fields=(P.PartitionField(source_ids=(1,), field_id=1000, name="z", transform=X.parse_transform("zorder")),))
    with pytest.raises(InvalidTable) as exc:
        D.write_data_files(LocalStorage(str(tmp_path)), pa.table({"id": [1]}), schema=schema, spec=spec)
    assert exc.value.rule == "ICEBERG-PART-007"


@pytest.mark.rule("ICEBERG-SCHEMA-012", "ICEBERG-LINEAGE-008")
def test_lineage_columns_are_written_with_reserved_ids(tmp_path):
    schema = _schema(pa.schema([pa.field("id", pa.int64())]))
    rows = D.with_lineage(pa.table({"id": [1, 2]}), [10, 11], [3, None])
    storage = LocalStorage(str(tmp_path))
    (df,) = D.write_data_files(storage, rows, schema=schema, spec=P.UNPARTITIONED)
    assert {1, D.ROW_ID_FIELD_ID, D.LAST_UPDATED_FIELD_ID} == _footer_ids(storage, df)
    t = open_parquet(storage.read(storage.resolve(df.file_path))).read()
    assert t.column(D.ROW_ID).to_pylist() == [10, 11] and t.column(D.LAST_UPDATED_SEQUENCE_NUMBER).to_pylist() == [3, None]


def test_compression_property(tmp_path):
    schema = _schema(pa.schema([pa.field("id", pa.int64())]))
    storage = LocalStorage(str(tmp_path))
    (df,) = D.write_data_files(storage, pa.table({"id": [1]}), schema=schema, spec=P.UNPARTITIONED,
                               properties={D.COMPRESSION_PROPERTY: "snappy"})
    meta = open_parquet(storage.read(storage.resolve(df.file_path))).metadata
    assert meta.row_group(0).column(0).compression == "SNAPPY"
    with pytest.raises(Unsupported, match="codec"):
        D.compression_for({D.COMPRESSION_PROPERTY: "lzo-magic"})


def test_data_files_are_never_replaced(tmp_path):
    from reference_impl.errors import CommitConflict

    schema = _schema(pa.schema([pa.field("id", pa.int64())]))
    storage = LocalStorage(str(tmp_path))
    table = D.conform(pa.table({"id": [1]}), schema)
    D.write_data_file(storage, table, schema=schema, spec=P.UNPARTITIONED, partition={}, relative_path="data/x.parquet")
    with pytest.raises(CommitConflict):
        D.write_data_file(storage, table, schema=schema, spec=P.UNPARTITIONED, partition={}, relative_path="data/x.parquet")
