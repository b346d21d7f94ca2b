"""Snapshots and reads: logical rows, time travel, and refusal of bad or unsupported tables."""

from __future__ import annotations

import datetime as dt
import io
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.delta.actions import AddFile, CommitInfo, Txn
from reference_impl.delta.deletion_vector import inline_deletion_vector, write_deletion_vectors
from reference_impl.delta.schema import parse_schema
from reference_impl.delta.table import Snapshot, commit_timestamps, read_table
from reference_impl.errors import InvalidTable, Unsupported

from . import LogBuilder, add, metadata, protocol, remove

ROWS = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "name": ["a", "b", "c", "d"]})


def simple(tmp_path, proto=None, **md) -> LogBuilder:
    b = LogBuilder(tmp_path)
    b.commit(0, [proto or protocol(), metadata(**md)])
    return b


@pytest.mark.rule("DELTA-REPLAY-009")
def test_read_returns_live_rows_only(tmp_path):
    b = simple(tmp_path)
    a1 = b.data_file(ROWS.slice(0, 2))
    a2 = b.data_file(ROWS.slice(2, 2))
    b.commit(1, [a1, a2])
    b.commit(2, [remove(a1.path)])
    assert read_table(str(tmp_path)).to_pydict() == {"id": [3, 4], "name": ["c", "d"]}
    assert read_table(str(tmp_path), version=1).sort_by("id").to_pydict() == ROWS.to_pydict()
    assert read_table(str(tmp_path), columns=["name"]).to_pydict() == {"name": ["c", "d"]}
    empty = read_table(str(tmp_path), version=0)
    assert empty.num_rows == 0 and empty.schema.names == ["id", "name"]


@pytest.mark.rule("DELTA-LOG-003", "DELTA-PART-001")
def test_partition_values_come_from_the_log_not_the_directory(tmp_path):
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "d", "type": "date", "nullable": True, "metadata": {}}]})
    b = simple(tmp_path, schema=schema, partition_columns=["d"])
    f1 = b.data_file(ROWS.select(["id"]).slice(0, 2), "d=2020-01-01/a.parquet")
    f2 = b.data_file(ROWS.select(["id"]).slice(2, 2), "d=2020-01-01/b.parquet")
    b.commit(1, [AddFile(**{**_fields(f1), "partition_values": {"d": "2021-01-01"}}),
                 AddFile(**{**_fields(f2), "partition_values": {"d": ""}})])
    t = read_table(str(tmp_path)).sort_by("id")
    assert t.schema.names == ["id", "d"]
    assert t.column("d").to_pylist() == [dt.date(2021, 1, 1)] * 2 + [None, None]


def _fields(a: AddFile) -> dict:
    return {k: getattr(a, k) for k in a.__dataclass_fields__}


@pytest.mark.rule("DELTA-WRITER-003")
def test_missing_partition_value_is_invalid(tmp_path):
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "p", "type": "string", "nullable": True, "metadata": {}}]})
    b = simple(tmp_path, schema=schema, partition_columns=["p"])
    b.commit(1, [b.data_file(ROWS.select(["id"]))])
    with pytest.raises(InvalidTable, match="no partition value for column 'p'") as exc:
        read_table(str(tmp_path))
    assert exc.value.rule == "DELTA-WRITER-003"


@pytest.mark.rule("DELTA-ACTION-017")
def test_paths_are_percent_decoded_and_confined_to_the_root(tmp_path):
    b = simple(tmp_path)
    f = b.data_file(ROWS, "p=a b/f 1.parquet")
    b.commit(1, [AddFile(**{**_fields(f), "path": "p=a%20b/f%201.parquet"})])
    assert read_table(str(tmp_path)).num_rows == 4
    absolute = b.storage.uri("p=a b/f 1.parquet").replace(" ", "%20")
    b.commit(2, [remove("p=a%20b/f%201.parquet"), AddFile(**{**_fields(f), "path": absolute})])
    assert read_table(str(tmp_path)).num_rows == 4
    for bad in ("../outside.parquet", "p=a%20b/..%2F..%2Foutside.parquet", "file:///etc/passwd"):
        b.commit(3, [AddFile(**{**_fields(f), "path": bad})])
        with pytest.raises(InvalidTable, match="outside|escapes") as exc:
            read_table(str(tmp_path))
        assert exc.value.rule == "DELTA-ACTION-017" and exc.value.version == 3
        os.remove(tmp_path / "_delta_log" / "00000000000000000003.json")


@pytest.mark.rule("DELTA-ACTION-018")
def test_missing_and_corrupt_data_files_are_invalid(tmp_path):
    b = simple(tmp_path)
    f = b.data_file(ROWS)
    b.commit(1, [f, add("gone.parquet")])
    with pytest.raises(InvalidTable, match="missing") as exc:
        read_table(str(tmp_path))
    assert exc.value.path.endswith("gone.parquet")
    (tmp_path / "gone.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InvalidTable, match="not readable parquet"):
        read_table(str(tmp_path))


@pytest.mark.rule("DELTA-READER-001", "DELTA-SCHEMA-010", "DELTA-CDF-007")
def test_missing_columns_void_columns_and_change_type_column(tmp_path):
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "later", "type": "string", "nullable": True, "metadata": {}},
        {"name": "v", "type": "void", "nullable": True, "metadata": {}}]})
    b = simple(tmp_path, schema=schema)
    b.commit(1, [b.data_file(pa.table({"id": pa.array([1], pa.int64()), "_change_type": ["insert"]}))])
    t = read_table(str(tmp_path))
    assert t.schema.names == ["id", "later", "v"]
    assert t.to_pydict() == {"id": [1], "later": [None], "v": [None]}


@pytest.mark.rule("DELTA-DV-003", "DELTA-DV-004", "DELTA-DV-015")
def test_deletion_vectors_drop_rows(tmp_path):
    b = simple(tmp_path, proto=protocol(3, 7, rf=["deletionVectors"], wf=["deletionVectors"]))
    f1 = b.data_file(ROWS)
    f2 = b.data_file(ROWS)
    b.commit(1, [f1, f2])
    on_disk = write_deletion_vectors(b.storage, [[0, 3]])[0]
    b.commit(2, [remove(f1.path), AddFile(**{**_fields(f1), "deletion_vector": inline_deletion_vector([1])}),
                 remove(f2.path), AddFile(**{**_fields(f2), "deletion_vector": on_disk})])
    # delta.enableDeletionVectors is not set: DVs in the log still apply
    t = read_table(str(tmp_path)).sort_by("id")
    assert t.column("id").to_pylist() == [1, 2, 3, 3, 4]
    assert read_table(str(tmp_path), version=1).num_rows == 8
    bad = inline_deletion_vector([9])
    b.commit(3, [remove(f1.path, dv=f1.deletion_vector), AddFile(**{**_fields(f1), "deletion_vector": bad})])
    with pytest.raises(InvalidTable, match="deletes row 9"):
        read_table(str(tmp_path))


def _mapped_schema(mode_ids=True):
    return json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True,
         "metadata": {"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-aaa"}},
        {"name": "renamed", "type": "string", "nullable": True,
         "metadata": {"delta.columnMapping.id": 2, "delta.columnMapping.physicalName": "col-bbb"}},
        {"name": "p", "type": "integer", "nullable": True,
         "metadata": {"delta.columnMapping.id": 3, "delta.columnMapping.physicalName": "col-ccc"}}]})


@pytest.mark.rule("DELTA-COLMAP-010", "DELTA-COLMAP-011", "DELTA-COLMAP-013", "DELTA-COLMAP-014")
@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping(tmp_path, mode):
    b = simple(tmp_path, proto=protocol(2, 5), schema=_mapped_schema(), partition_columns=["p"],
               configuration={"delta.columnMapping.mode": mode, "delta.columnMapping.maxColumnId": "3"})
    physical = pa.schema([pa.field("col-aaa", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
                          pa.field("col-bbb", pa.string(), metadata={b"PARQUET:field_id": b"2"})])
    f = b.data_file(pa.table([pa.array([1, 2], pa.int64()), pa.array(["x", "y"])], schema=physical))
    b.commit(1, [AddFile(**{**_fields(f), "partition_values": {"col-ccc": "7"}})])
    t = read_table(str(tmp_path)).sort_by("id")
    assert t.to_pydict() == {"id": [1, 2], "renamed": ["x", "y"], "p": [7, 7]}
    assert read_table(str(tmp_path), columns=["p", "renamed"]).sort_by("renamed").to_pydict() == \
        {"renamed": ["x", "y"], "p": [7, 7]}
    assert read_table(str(tmp_path), columns=["p"]).to_pydict() == {"p": [7, 7]}
    # the mode property is void without protocol support: names are used
    b2 = simple(tmp_path / "nosupport", schema=_mapped_schema(), configuration={"delta.columnMapping.mode": mode})
    b2.commit(1, [b2.data_file(pa.table({"id": pa.array([5], pa.int64()), "renamed": ["z"], "p": [1]}))])
    assert read_table(str(tmp_path / "nosupport")).to_pydict() == {"id": [5], "renamed": ["z"], "p": [1]}


@pytest.mark.rule("DELTA-TYPEWIDEN-011", "DELTA-TYPEWIDEN-012")
def test_type_widening_upcasts_old_files_and_refuses_unknown_changes(tmp_path):
    tw = protocol(3, 7, rf=["typeWidening"], wf=["typeWidening"])
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True,
         "metadata": {"delta.typeChanges": [{"fromType": "integer", "toType": "long"}]}}]})
    b = simple(tmp_path, proto=tw, schema=schema)
    b.commit(1, [b.data_file(pa.table({"id": pa.array([1, 2], pa.int32())}))])
    t = read_table(str(tmp_path))
    assert t.schema.field("id").type == pa.int64() and t.column("id").to_pylist() == [1, 2]
    bad = schema.replace('"integer"', '"string"')
    b.commit(2, [metadata(schema=bad)])
    with pytest.raises(Unsupported, match="string -> long"):
        Snapshot.load(str(tmp_path))


@pytest.mark.rule("DELTA-FEATURE-004", "DELTA-ACTION-026")
def test_unsupported_tables_are_refused_by_name(tmp_path):
    b = simple(tmp_path / "f", proto=protocol(3, 7, rf=["deletionVectors", "quantumIndex"],
                                              wf=["deletionVectors", "quantumIndex"]))
    with pytest.raises(Unsupported, match="'quantumIndex'") as exc:
        Snapshot.load(str(tmp_path / "f"))
    assert exc.value.feature == "quantumIndex"
    simple(tmp_path / "v", proto=protocol(4, 8))
    with pytest.raises(Unsupported, match="reader version 4"):
        Snapshot.load(str(tmp_path / "v"))
    b = LogBuilder(tmp_path / "csv")
    b.raw(0, '{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}\n'
             '{"metaData":{"id":"x","format":{"provider":"csv","options":{}},"schemaString":'
             + json.dumps(metadata().schema_string) + ',"partitionColumns":[],"configuration":{}}}\n')
    with pytest.raises(Unsupported, match="format 'csv'"):
        Snapshot.load(str(tmp_path / "csv"))


@pytest.mark.rule("DELTA-LOG-001", "DELTA-LOG-005", "DELTA-REPLAY-002")
def test_bad_logs_are_invalid_end_to_end(tmp_path):
    b = simple(tmp_path / "gap")
    b.commit(2, [add("x")])
    with pytest.raises(InvalidTable, match="commit 1 is missing"):
        read_table(str(tmp_path / "gap"))
    b = simple(tmp_path / "json")
    b.raw(1, b'{"add": {"path": "x", "size": 1,\n')
    with pytest.raises(InvalidTable, match="line 1") as exc:
        read_table(str(tmp_path / "json"))
    assert exc.value.version == 1
    b = LogBuilder(tmp_path / "noproto")
    b.commit(0, [metadata()])
    with pytest.raises(InvalidTable, match="no protocol"):
        read_table(str(tmp_path / "noproto"))
    with pytest.raises(InvalidTable, match="no Delta log"):
        read_table(str(tmp_path / "nothing"))
    b = simple(tmp_path / "range")
    b.raw(1, '{"add":{"path":"x","partitionValues":{},"size":99999999999999999999,"modificationTime":0,'
             '"dataChange":true}}\n')
    with pytest.raises(InvalidTable, match="out of range"):
        read_table(str(tmp_path / "range"))
    with pytest.raises(InvalidTable, match="does not exist"):
        Snapshot.load(str(tmp_path / "gap"), version=9)


@pytest.mark.rule("DELTA-ICT-006", "DELTA-ICT-007")
def test_time_travel_by_timestamp_uses_mtime_then_ict(tmp_path):
    b = simple(tmp_path, proto=protocol(1, 7, wf=["inCommitTimestamp"]))
    b.commit(1, [b.data_file(ROWS.slice(0, 1))])
    b.commit(2, [b.data_file(ROWS.slice(1, 1))])
    for v, ms in ((0, 1_000), (1, 2_000), (2, 3_000)):
        b.set_mtime(v, ms)
    # enable ICT at version 3 with enablement timestamp 10_000; mtimes of later commits are garbage
    b.commit(3, [CommitInfo(info={"inCommitTimestamp": 10_000}),
                 metadata(configuration={"delta.enableInCommitTimestamps": "true",
                                         "delta.inCommitTimestampEnablementVersion": "3",
                                         "delta.inCommitTimestampEnablementTimestamp": "10000"})])
    b.commit(4, [CommitInfo(info={"inCommitTimestamp": 20_000}), b.data_file(ROWS.slice(2, 1))])
    b.set_mtime(3, 500)
    b.set_mtime(4, 600)
    assert commit_timestamps(b.storage) == {0: 1_000, 1: 2_000, 2: 3_000, 3: 10_000, 4: 20_000}
    assert Snapshot.load(str(tmp_path), timestamp=2_500).version == 1
    assert Snapshot.load(str(tmp_path), timestamp=9_999).version == 2  # before enablement: mtimes
    assert Snapshot.load(str(tmp_path), timestamp=10_000).version == 3
    assert Snapshot.load(str(tmp_path), timestamp=19_999).version == 3
    assert Snapshot.load(str(tmp_path), timestamp="1970-01-01T00:00:25Z").version == 4
    assert Snapshot.load(str(tmp_path), timestamp=dt.datetime(1970, 1, 1, 0, 0, 20)).read().num_rows == 3
    with pytest.raises(InvalidTable, match="at or before timestamp 999"):
        Snapshot.load(str(tmp_path), timestamp=999)


@pytest.mark.rule("DELTA-ICT-002")
def test_missing_ict_on_an_ict_commit_is_invalid(tmp_path):
    b = simple(tmp_path, proto=protocol(1, 7, wf=["inCommitTimestamp"]),
               configuration={"delta.enableInCommitTimestamps": "true"})
    b.commit(1, [Txn(app_id="a", version=1)])
    with pytest.raises(InvalidTable, match="no inCommitTimestamp") as exc:
        commit_timestamps(b.storage)
    assert exc.value.rule == "DELTA-ICT-002" and exc.value.version == 0


@pytest.mark.rule("DELTA-CKPT-003")
def test_time_travel_never_uses_a_newer_checkpoint(tmp_path):
    from reference_impl.delta.checkpoint import write_checkpoint

    b = simple(tmp_path)
    files = []
    for v in range(1, 6):
        files.append(b.data_file(ROWS.slice(v - 1, 1) if v <= 4 else ROWS.slice(0, 1)))
        b.commit(v, [files[-1]])
    snap = Snapshot.load(str(tmp_path))
    write_checkpoint(snap.storage, snap.state)
    for v in range(0, 6):
        s = Snapshot.load(str(tmp_path), version=v)
        assert s.read().num_rows == v and (s.segment.checkpoint is None) == (v < 5)


@pytest.mark.rule("DELTA-REPLAY-009", "DELTA-CKPT-003")
def test_file_paths_are_the_live_files_without_building_them(tmp_path):
    """A checkpoint's adds stay columnar until asked for; the live paths come from their keys alone,
    the same as the built AddFiles' paths (partition maps with a null value shared by many rows)."""
    import subprocess
    import sys

    from reference_impl.delta.checkpoint import write_checkpoint

    b = simple(tmp_path, partition_columns=["p"])
    b.commit(1, [add(f"p=x/f{i}.parquet", {"p": None if i % 3 else "x"}) for i in range(100)])
    snap = Snapshot.load(str(tmp_path))
    write_checkpoint(snap.storage, snap.state)
    b.commit(2, [remove("p=x/f7.parquet"), add("p=x/new.parquet", {"p": "y"})])
    loaded = Snapshot.load(str(tmp_path))
    assert loaded.segment.checkpoint is not None
    assert loaded.file_paths() == [f.path for f in loaded.files] == sorted(
        [f"p=x/f{i}.parquet" for i in range(100) if i != 7] + ["p=x/new.parquet"])
    assert {f.path: f.partition_values["p"] for f in loaded.files}["p=x/f1.parquet"] is None
    # Loading it imports no pandas (pyarrow's to_numpy and scalar conversions do: 0.16 s a process).
    code = ("import sys; from reference_impl.delta.table import Snapshot; s = Snapshot.load(sys.argv[1]); "
            "s.files; print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


deltalake = pytest.importorskip("deltalake")


@pytest.mark.rule("DELTA-PART-003", "DELTA-PART-004", "DELTA-LOG-003")
def test_matches_delta_rs_on_typed_partitions_and_time_travel(tmp_path):
    t = pa.table({"id": pa.array(range(6), pa.int64()),
                  "d": pa.array([dt.date(2020, 1, 1), None, dt.date(1969, 12, 31)] * 2),
                  "ts": pa.array([dt.datetime(2020, 1, 1, 1, 2, 3, 456789)] * 6, pa.timestamp("us", tz="UTC")),
                  "s": ["a", "b c", None, "%x", "d/e", "é"], "b": [True, False, None] * 2,
                  "dec": pa.array([1, 2, 3, 4, 5, 6], pa.decimal128(10, 2))})
    deltalake.write_deltalake(str(tmp_path), t, partition_by=["d", "s", "b"])
    deltalake.write_deltalake(str(tmp_path), t.slice(0, 2), mode="append")
    deltalake.write_deltalake(str(tmp_path), t.slice(3, 3), partition_by=["d", "s", "b"], mode="overwrite")
    for v in range(3):
        mine = read_table(str(tmp_path), version=v)
        theirs = deltalake.DeltaTable(str(tmp_path), version=v).to_pyarrow_table().select(mine.column_names)
        key = [(c, "ascending") for c in ("id",)]
        assert mine.sort_by(key).to_pylist() == theirs.sort_by(key).to_pylist(), v


# --- robustness: a damaged log gives a LakeconfError, never a raw exception ----------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from reference_impl.errors import LakeconfError  # noqa: E402

_JUNK = st.sampled_from([None, "x", -1, 2**70, 1.5, True, [], {}, {"a": 1}, [1, "a"], "", "../../etc", "u"])


def _mutate(obj, path_choices, junk, drop):
    """Replace or drop one nested field of a JSON object."""
    target = obj
    for step in path_choices:
        if isinstance(target, dict) and target:
            key = sorted(target)[step % len(target)]
            if not isinstance(target[key], (dict, list)) or step % 3 == 0:
                if drop:
                    del target[key]
                else:
                    target[key] = junk
                return obj
            target = target[key]
        elif isinstance(target, list) and target:
            target[step % len(target)] = junk
            return obj
    return obj


@pytest.mark.rule("DELTA-LOG-005", "DELTA-ACTION-016")
@settings(max_examples=40, deadline=None)
@given(version=st.integers(0, 2), line=st.integers(0, 10), steps=st.lists(st.integers(0, 50), min_size=1,
                                                                             max_size=4),
       junk=_JUNK, drop=st.booleans(), checkpoint=st.booleans())
def test_damaged_logs_raise_only_kit_errors(tmp_path_factory, version, line, steps, junk, drop, checkpoint):
    from reference_impl.delta.checkpoint import write_checkpoint

    root = tmp_path_factory.mktemp("damaged")
    b = simple(root, proto=protocol(3, 7, rf=["deletionVectors"], wf=["deletionVectors", "inCommitTimestamp"]),
               configuration={"delta.enableInCommitTimestamps": "true"})
    b.raw(0, b.storage.read("_delta_log/00000000000000000000.json").replace(
        b'{"protocol"', b'{"commitInfo":{"inCommitTimestamp":1}}\n{"protocol"', 1))
    f = b.data_file(ROWS)
    b.commit(1, [CommitInfo(info={"inCommitTimestamp": 2}),
                 AddFile(**{**_fields(f), "deletion_vector": inline_deletion_vector([0])}), Txn(app_id="a", version=1)])
    if checkpoint:
        s = Snapshot.load(str(root))
        write_checkpoint(s.storage, s.state)
    b.commit(2, [CommitInfo(info={"inCommitTimestamp": 3}), b.data_file(ROWS.slice(0, 1))])
    path = f"_delta_log/{version:020d}.json"
    lines = b.storage.read(path).decode().splitlines()
    i = line % len(lines)
    lines[i] = json.dumps(_mutate(json.loads(lines[i]), steps, junk, drop))
    b.storage.write_atomic(path, ("\n".join(lines) + "\n").encode())
    try:
        snap = Snapshot.load(str(root))
        snap.read()
        commit_timestamps(snap.storage)
        Snapshot.load(str(root), timestamp=2).read()
    except LakeconfError as exc:  # anything else escaping fails the test
        assert exc.kind in ("invalid_table", "unsupported"), f"a damaged log is not an internal error: {exc}"


@pytest.mark.rule("DELTA-SCHEMA-001", "DELTA-SCHEMA-006")
def test_bad_schema_string_fails_the_load(tmp_path):
    simple(tmp_path / "json", schema="not json")
    with pytest.raises(InvalidTable, match="metaData.schemaString") as exc:
        Snapshot.load(str(tmp_path / "json"))
    assert exc.value.version == 0
    simple(tmp_path / "type", schema='{"type":"struct","fields":[{"name":"a","type":"int128","nullable":true,'
                                     '"metadata":{}}]}')
    with pytest.raises(Unsupported, match="int128") as exc:
        Snapshot.load(str(tmp_path / "type"))
    assert exc.value.feature is not None
