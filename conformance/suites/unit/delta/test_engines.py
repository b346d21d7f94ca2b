"""Engine adapters read a small table written by delta-rs (so they are checked without the reference)."""

from __future__ import annotations

import datetime as dt

import pytest

from conformance.compare import compare
from conformance.engines.base import TIME_TRAVEL, TIMESTAMP_TRAVEL, Capabilities
from conformance.engines.registry import builtin_names, load_engines
from conformance.model import TableRef

EXTERNAL = ["deltalake", "deltalake-datafusion", "duckdb", "polars", "daft"]


@pytest.fixture(scope="module", params=EXTERNAL)
def engine(request):
    (e,) = load_engines([request.param])
    reason = e.available()
    if reason:
        pytest.skip(reason)
    yield e
    e.close()


def test_builtin_names():
    assert set(EXTERNAL) | {"reference", "spark", "spark-3.5"} <= set(builtin_names())


def test_reads_latest(engine, delta_table):
    path, _v0, v1 = delta_table
    got = engine.read(TableRef(format="delta", uri=path))
    assert compare(got, v1).equal, compare(got, v1).diff


def test_reads_file_uri(engine, delta_table):
    path, _v0, v1 = delta_table
    assert compare(engine.read(TableRef(format="delta", uri="file://" + path)), v1).equal


def test_reads_a_version(engine, delta_table):
    path, v0, _v1 = delta_table
    assert TIME_TRAVEL not in engine.capabilities().missing_read_features("delta", [TIME_TRAVEL])
    assert compare(engine.read(TableRef(format="delta", uri=path), at=0), v0).equal


def test_projects_columns(engine, delta_table):
    path, _v0, v1 = delta_table
    got = engine.read(TableRef(format="delta", uri=path), columns=["id"])
    assert compare(got, v1.select(["id"])).equal


def test_timestamp_travel_as_declared(engine, delta_table):
    path, _v0, v1 = delta_table
    caps = engine.capabilities()
    future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat()
    if caps.missing_read_features("delta", [TIMESTAMP_TRAVEL]):
        from reference_impl.errors import Unsupported

        with pytest.raises(Unsupported):
            engine.read(TableRef(format="delta", uri=path), timestamp=future)
    else:
        assert compare(engine.read(TableRef(format="delta", uri=path), timestamp=future), v1).equal


def test_missing_table_raises(engine, tmp_path):
    with pytest.raises(BaseException):
        engine.read(TableRef(format="delta", uri=str(tmp_path / "nothing")))


def test_version_and_roles(engine):
    assert engine.version() and engine.version() != "not installed"
    # delta-rs is the one external engine that also writes (DeltalakeEngine.write); its DataFusion twin reads only.
    assert engine.roles() == (["reader", "writer"] if engine.name == "deltalake" else ["reader"])
    assert "delta" in engine.capabilities().read


def test_describe_where_supported(engine, delta_table):
    path, _v0, _v1 = delta_table
    facts = engine.describe(TableRef(format="delta", uri=path), at=0)
    if facts is None:
        pytest.skip(f"{engine.name} cannot describe tables")
    assert facts["version"] == 0
    assert facts["partition_columns"] == ["p"]
    assert facts["protocol"][0] >= 1


def test_declared_gaps_are_honest():
    caps = {e.name: e.capabilities() for e in load_engines(EXTERNAL)}
    assert caps["deltalake"].missing_read_features("delta", ["deletionVectors", "columnMapping", "timestampNtz"]) == [
        "deletionVectors", "columnMapping"]
    assert caps["deltalake-datafusion"].missing_read_features("delta", ["deletionVectors", "columnMapping"]) == []
    assert caps["polars"].missing_read_features("delta", ["deletionVectors", "columnMapping"]) == ["columnMapping"]
    assert caps["daft"].missing_read_features("delta", ["deletionVectors", "columnMapping"]) == ["deletionVectors"]
    assert caps["duckdb"].missing_read_features("delta", [TIMESTAMP_TRAVEL, TIME_TRAVEL]) == [TIMESTAMP_TRAVEL]
    assert "not yet supported" in caps["deltalake"].reason("delta", "deletionVectors")


def test_capabilities_missing_features():
    caps = Capabilities(read_features={"delta": frozenset({"a"})}, unsupported={"delta": {"b": "why"}})
    assert caps.missing_read_features("delta", ["a", "b", "c"]) == ["b", "c"]
    assert caps.reason("delta", "b") == "why" and "c" in caps.reason("delta", "c")
    # a gap is per format: another format's reads are not affected
    assert Capabilities(read_features={"x": None}, unsupported={"delta": {"b": "why"}}).missing_read_features("x", ["b"]) == []
    assert Capabilities(read_features={"delta": None}).missing_read_features("delta", ["x"]) == []


def test_reference_reads_delta_rs_table(delta_table):
    (ref,) = load_engines(["reference"])
    if ref.available():
        pytest.skip(ref.available())
    path, v0, v1 = delta_table
    assert compare(ref.read(TableRef(format="delta", uri=path)), v1).equal
    assert compare(ref.read(TableRef(format="delta", uri=path), at=0), v0).equal
    facts = ref.describe(TableRef(format="delta", uri=path))
    assert facts["version"] == 1 and facts["partition_columns"] == ["p"]


# ----------------------------------------------------------------------------------------------
# delta-rs as a writer
# ----------------------------------------------------------------------------------------------


def _deltalake_writer():
    (writer,) = load_engines(["deltalake"])
    if writer.available():
        pytest.skip(writer.available())
    return writer


def test_deltalake_writer_builds_what_the_reference_reads(tmp_path):
    """create + append + delete through the deltalake API; the reference reads every version right."""
    import pyarrow as pa

    from conformance.model import Append, Create, Delete

    (ref,) = load_engines(["reference"])
    if ref.available():
        pytest.skip(ref.available())
    writer = _deltalake_writer()
    schema = pa.schema([("id", pa.int64()), ("p", pa.string())])
    first = pa.table({"id": [1, 2, 3], "p": ["a", "b", None]}, schema=schema)
    table = TableRef(format="delta", uri=str(tmp_path / "t"))
    writer.write(table, [Create(schema=schema, partition_by=("p",)), Append(rows=first), Delete(where="id = 2")])
    assert compare(ref.read(table, at=0), schema.empty_table()).equal
    assert compare(ref.read(table, at=1), first).equal
    latest = pa.table({"id": [1, 3], "p": ["a", None]}, schema=schema)
    got = ref.read(table)
    assert compare(got, latest).equal, compare(got, latest).diff
    facts = ref.describe(table)
    assert facts["version"] == 2 and facts["partition_columns"] == ["p"]


def test_deltalake_writer_declares_and_refuses_honestly(tmp_path):
    import pyarrow as pa

    from conformance.formats.delta.steps import Checkpoint
    from conformance.model import Create, RenameColumn
    from reference_impl.errors import Unsupported

    writer = _deltalake_writer()
    caps = writer.capabilities()
    assert caps.write == frozenset({"delta"})
    steps = caps.write_steps["delta"]
    assert {"Create", "Append", "Delete", "Update", "Optimize", "Checkpoint"} <= steps
    assert not {"RenameColumn", "DropColumn", "Raw"} & steps
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(Unsupported):
        writer.write(TableRef(format="delta", uri=str(tmp_path / "a")), [Create(schema=schema), RenameColumn(old="id", new="x")])
    with pytest.raises(Unsupported, match="rowTracking"):
        writer.write(TableRef(format="delta", uri=str(tmp_path / "b")), [Create(schema=schema, features=("rowTracking",))])
    with pytest.raises(Unsupported, match="multipart"):
        writer.write(TableRef(format="delta", uri=str(tmp_path / "c")), [Create(schema=schema), Checkpoint(kind="multipart", parts=2)])
