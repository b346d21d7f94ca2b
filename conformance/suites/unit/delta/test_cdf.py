"""Change data feed: change data files written by the reference writer, ``cdf.table_changes`` as the
reader, and delta-rs's change data reader as the peer that must see the same changes."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.delta import cdf
from reference_impl.delta import writer as W
from reference_impl.delta.actions import AddCDCFile, Metadata, Protocol, serialize_commit
from reference_impl.errors import InvalidTable
from reference_impl.storage import LocalStorage

SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string()), ("v", pa.int64())])


def actions_of(location: str, version: int, kind: str) -> list[dict]:
    """The bodies of one kind of action in a commit."""
    with open(os.path.join(location, "_delta_log", f"{version:020d}.json"), encoding="utf-8") as fh:
        return [o[kind] for o in (json.loads(line) for line in fh.read().splitlines() if line) if kind in o]


def data(ids, p="a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids), "v": pa.array([i * 10 for i in ids], pa.int64())})


def changes(table: pa.Table, columns=("id", "v", "_change_type", "_commit_version")) -> list[tuple]:
    cols = [table.column(c).to_pylist() for c in columns]
    return sorted(zip(*cols), key=lambda r: tuple(str(x) for x in r))


def deltalake_changes(location: str, start: int) -> list[tuple]:
    """The same changes as delta-rs reads them."""
    deltalake = pytest.importorskip("deltalake")
    t = pa.table(deltalake.DeltaTable(location).load_cdf(starting_version=start).read_all())
    t = t.set_column(t.column_names.index("_commit_version"), "_commit_version", t.column("_commit_version").cast(pa.int64()))
    t = t.set_column(t.column_names.index("_change_type"), "_change_type", t.column("_change_type").cast(pa.string()))
    return changes(t)


@pytest.fixture
def cdf_table(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, partition_by=["p"], properties={"delta.enableChangeDataFeed": "true"})
    return location


@pytest.mark.rule("DELTA-CDF-001", "DELTA-CDF-002", "DELTA-CDF-008", "DELTA-CDF-009", "DELTA-ACTION-010")
def test_update_and_delete_write_change_data_files(cdf_table):
    W.append(cdf_table, data([1, 2, 3]))
    assert actions_of(cdf_table, 0, "protocol")[0] == {"minReaderVersion": 1, "minWriterVersion": 4}
    assert actions_of(cdf_table, 1, "cdc") == []  # a pure append relies on add actions
    v = W.update(cdf_table, {"v": "v + 1"}, "id = 2")
    (cdc,) = actions_of(cdf_table, v, "cdc")
    assert cdc["path"].startswith("_change_data/p=a/") and cdc["dataChange"] is False
    assert cdc["partitionValues"] == {"p": "a"}
    assert cdc["size"] == os.path.getsize(os.path.join(cdf_table, cdc["path"]))
    file = pq.ParquetFile(os.path.join(cdf_table, cdc["path"])).read()
    assert file.schema.field("_change_type").type == pa.string()
    assert sorted(zip(file.column("id").to_pylist(), file.column("_change_type").to_pylist())) == [(2, "update_postimage"), (2, "update_preimage")]
    assert "p" not in file.column_names  # partition values live in the log, as for data files
    v = W.delete(cdf_table, "id = 3")
    (cdc,) = actions_of(cdf_table, v, "cdc")
    assert pq.ParquetFile(os.path.join(cdf_table, cdc["path"])).read().column("_change_type").to_pylist() == ["delete"]


@pytest.mark.rule("DELTA-CDF-004", "DELTA-CDF-005", "DELTA-CDF-006")
def test_table_changes_matches_delta_rs(cdf_table):
    W.append(cdf_table, data([1, 2, 3]))
    W.append(cdf_table, data([4], p="b"))
    W.update(cdf_table, {"v": "v + 1"}, "id IN (2, 4)")
    W.delete(cdf_table, "id = 1")
    W.overwrite(cdf_table, data([9], p="c"))
    got = cdf.table_changes(cdf_table, 0)
    assert got.schema.field("_commit_version").type == pa.int64()
    assert got.schema.field("_commit_timestamp").type == pa.timestamp("us", tz="UTC")
    expected = [
        (1, 10, "insert", 1), (2, 20, "insert", 1), (3, 30, "insert", 1),
        (4, 40, "insert", 2),
        (2, 20, "update_preimage", 3), (2, 21, "update_postimage", 3),
        (4, 40, "update_preimage", 3), (4, 41, "update_postimage", 3),
        (1, 10, "delete", 4),
        (2, 21, "delete", 5), (3, 30, "delete", 5), (4, 41, "delete", 5), (9, 90, "insert", 5),
    ]
    assert changes(got) == sorted(expected, key=lambda r: tuple(str(x) for x in r))
    assert changes(got) == deltalake_changes(cdf_table, 0)
    # Version 3 has cdc actions: its add/remove (whole rewritten files) are ignored (DELTA-CDF-004).
    assert actions_of(cdf_table, 3, "add") and actions_of(cdf_table, 3, "remove")
    v3 = cdf.table_changes(cdf_table, 3, 3)
    assert sorted(v3.column("_change_type").to_pylist()) == ["update_postimage", "update_postimage", "update_preimage", "update_preimage"]
    # _commit_timestamp is the commit file's modification time here (no ICT).
    mtime = int(os.path.getmtime(os.path.join(cdf_table, "_delta_log", f"{3:020d}.json")) * 1000)
    assert {round(t.timestamp() * 1000) for t in v3.column("_commit_timestamp").to_pylist()} == {mtime}


@pytest.mark.rule("DELTA-CDF-006")
def test_commit_timestamp_is_in_commit_timestamp(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableChangeDataFeed": "true", "delta.enableInCommitTimestamps": "true"})
    W.append(location, data([1]))
    ict = [json.loads(line) for line in open(os.path.join(location, "_delta_log", f"{1:020d}.json")).read().splitlines()][0]["commitInfo"]["inCommitTimestamp"]
    got = cdf.table_changes(location, 1)
    assert [round(t.timestamp() * 1000) for t in got.column("_commit_timestamp").to_pylist()] == [ict]


@pytest.mark.rule("DELTA-CDF-005", "DELTA-DV-004")
def test_deletion_vector_deletes_without_cdc_report_only_new_deletions(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(location, SCHEMA, properties={"delta.enableDeletionVectors": "true"})
    W.append(location, data([1, 2, 3, 4]))
    W.delete(location, "id = 1")
    v = W.delete(location, "id = 3")
    assert actions_of(location, v, "cdc") == []
    got = cdf.table_changes(location, 2)
    assert changes(got) == [(1, 10, "delete", 2), (3, 30, "delete", 3)]


def test_cdf_with_deletion_vectors_and_column_mapping(tmp_path):
    location = str(tmp_path / "t")
    W.create_table(
        location,
        SCHEMA,
        properties={"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true", "delta.columnMapping.mode": "name"},
    )
    W.append(location, data([1, 2, 3]))
    W.update(location, {"v": "0"}, "id = 1")
    W.delete(location, "id = 2")
    W.rename_column(location, "v", "value")
    got = cdf.table_changes(location, 1)
    assert got.column_names[:3] == ["id", "p", "value"]
    assert changes(got, ("id", "value", "_change_type", "_commit_version")) == sorted(
        [(1, 10, "insert", 1), (2, 20, "insert", 1), (3, 30, "insert", 1), (1, 10, "update_preimage", 2), (1, 0, "update_postimage", 2), (2, 20, "delete", 3)],
        key=lambda r: tuple(str(x) for x in r),
    )
    for v in (2, 3):
        (cdc,) = actions_of(location, v, "cdc")
        names = pq.ParquetFile(os.path.join(location, cdc["path"])).read().column_names
        assert "_change_type" in names and all(n.startswith("col-") for n in names if n != "_change_type")


@pytest.mark.rule("DELTA-CDF-010")
def test_cdf_property_not_binding_without_feature_on_writer_v7(tmp_path):
    location = str(tmp_path / "t")
    storage = LocalStorage(location)
    schema = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
    proto = Protocol(min_reader_version=1, min_writer_version=7, writer_features=frozenset())
    md = Metadata(id="m", schema_string=schema, configuration={"delta.enableChangeDataFeed": "true"})
    storage.put_if_absent("_delta_log/00000000000000000000.json", serialize_commit([proto, md]))
    W.append(location, pa.table({"id": pa.array([1, 2], pa.int64())}))
    v = W.update(location, {"id": "id + 10"}, "id = 1")
    assert actions_of(location, v, "cdc") == []
    # Without cdc files the feed is computed from add/remove: whole rewritten file deleted and re-inserted.
    got = cdf.table_changes(location, v, v)
    assert sorted(zip(got.column("id").to_pylist(), got.column("_change_type").to_pylist())) == [(1, "delete"), (2, "delete"), (2, "insert"), (11, "insert")]
    # Setting the property through the writer adds the feature, and then UPDATE emits cdc.
    W.set_properties(location, {"delta.enableChangeDataFeed": "true"})
    v = W.update(location, {"id": "id + 1"}, "id = 2")
    assert len(actions_of(location, v, "cdc")) == 1


@pytest.mark.rule("DELTA-CDF-002")
def test_change_file_with_bad_change_type_is_rejected(cdf_table):
    W.append(cdf_table, data([1]))
    storage = LocalStorage(cdf_table)
    bad = pa.table({"id": pa.array([1], pa.int64()), "v": pa.array([1], pa.int64()), "_change_type": ["upsert"]})
    import io

    buf = io.BytesIO()
    pq.write_table(bad, buf)
    storage.put_if_absent("_change_data/p=a/bad.parquet", buf.getvalue())
    cdc = AddCDCFile(path="_change_data/p=a/bad.parquet", partition_values={"p": "a"}, size=len(buf.getvalue()))
    t = W.Transaction(cdf_table, operation="TEST")
    t.add_cdc(cdc)
    v = t.commit()
    with pytest.raises(InvalidTable, match="_change_type values \\['upsert'\\]") as err:
        cdf.table_changes(cdf_table, v)
    assert err.value.rule == "DELTA-CDF-002"


def test_version_range_is_checked(cdf_table):
    W.append(cdf_table, data([1]))
    with pytest.raises(InvalidTable, match="start version 5 is not within 0..1"):
        cdf.table_changes(cdf_table, 5)
    assert cdf.table_changes(cdf_table, 0, 0).num_rows == 0
    assert changes(cdf.table_changes(cdf_table, 1, 1)) == [(1, 10, "insert", 1)]


def test_optimize_is_not_a_change(cdf_table):
    W.append(cdf_table, data([1]))
    W.append(cdf_table, data([2]))
    v = W.optimize(cdf_table)
    assert cdf.table_changes(cdf_table, v, v).num_rows == 0
    assert changes(cdf.table_changes(cdf_table, 0)) == deltalake_changes(cdf_table, 0)
