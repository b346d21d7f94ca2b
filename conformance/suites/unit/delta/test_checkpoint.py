"""Checkpoints: classic, multi-part, V2 (UUID-named, sidecars); reading and writing."""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.delta.actions import (
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    Sidecar,
    Txn,
)
from reference_impl.delta.checkpoint import (
    live_tombstones,
    parse_interval_ms,
    read_checkpoint,
    spark_hash_partition,
    spark_murmur3_bytes,
    write_checkpoint,
)
from reference_impl.delta.log import build_segment, list_log, read_last_checkpoint
from reference_impl.delta.replay import replay
from reference_impl.delta.table import Snapshot
from reference_impl.errors import InvalidTable

from . import LogBuilder, add, metadata, protocol, remove

V2_PROTOCOL = protocol(3, 7, rf=["v2Checkpoint", "deletionVectors"],
                       wf=["v2Checkpoint", "deletionVectors", "domainMetadata"])
PART_SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "d", "type": "date", "nullable": True, "metadata": {}},
    {"name": "p", "type": "string", "nullable": True, "metadata": {}},
]})


def state_of(b, version=None):
    return replay(b.storage, build_segment(b.storage, version))


def small_table(b: LogBuilder, proto=None, n=4, **md):
    b.commit(0, [proto or protocol(), metadata(**md)])
    for v in range(1, n):
        b.commit(v, [CommitInfo(info={"operation": "WRITE"}), add(f"f{v}.parquet", size=v,
                                                                   stats='{"numRecords":1}'),
                     Txn(app_id="app", version=v)])
    b.commit(n, [remove("f1.parquet", ts=10**13), DomainMetadata(domain="com.x", configuration="c", removed=False),
                 DomainMetadata(domain="com.gone", configuration="c", removed=True)])


def as_set(actions):
    from reference_impl.delta.actions import action_to_wire

    return {json.dumps(action_to_wire(a), sort_keys=True) for a in actions}


def expected_actions(state):
    return ([state.protocol, state.metadata] + list(state.txns.values()) + list(state.domains.values())
            + list(state.files.values()) + live_tombstones(state))


@pytest.mark.rule("DELTA-CKPT-007", "DELTA-CKPT-008", "DELTA-CKPT-011", "DELTA-CKPT-027")
def test_classic_checkpoint_roundtrip(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b)
    s = state_of(b)
    inst = write_checkpoint(b.storage, s)
    assert inst.files[0].path == "_delta_log/00000000000000000004.checkpoint.parquet"
    acts = read_checkpoint(b.storage, inst)
    assert as_set(acts) == as_set(expected_actions(s))
    assert not any(isinstance(a, CommitInfo) for a in acts)
    assert all(a.domain != "com.gone" for a in acts if isinstance(a, DomainMetadata))
    lc = read_last_checkpoint(b.storage)
    assert lc["version"] == 4 and lc["size"] == len(acts) and lc["numOfAddFiles"] == 2 and "checksum" in lc


@pytest.mark.rule("DELTA-CKPT-009", "DELTA-CKPT-025", "DELTA-CKPT-026")
def test_checkpoint_rows_hold_one_action_and_bare_tombstones(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b)
    inst = write_checkpoint(b.storage, state_of(b))
    t = pq.read_table(tmp_path / inst.files[0].path)
    cols = ["protocol", "metaData", "txn", "add", "remove", "domainMetadata"]
    assert set(cols) <= set(t.column_names)
    for i in range(t.num_rows):
        assert sum(t.column(c)[i].is_valid for c in cols) == 1
    remove_fields = {f.name for f in t.schema.field("remove").type}
    assert "stats" not in remove_fields and "tags" not in remove_fields
    proto = t.column("protocol").drop_null().to_pylist()[0]
    assert proto["readerFeatures"] is None and proto["writerFeatures"] is None  # (1,2): null, not []


@pytest.mark.rule("DELTA-CKPT-007", "DELTA-CKPT-009")
@pytest.mark.parametrize("interleave", [False, True])
def test_checkpoints_are_read_in_batches_whatever_the_row_order(tmp_path, monkeypatch, interleave):
    """A checkpoint is decoded a few rows at a time, and an action column's rows are sliced when they form one run
    and filtered otherwise (rows interleaved by another writer): every action comes back either way."""
    import reference_impl.delta.checkpoint as C

    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(), metadata()])
    for v in range(1, 30):
        b.commit(v, [add(f"f{v}.parquet", size=v, stats='{"numRecords":1}')]
                 + ([remove(f"f{v - 5}.parquet", ts=10**13)] if v > 5 and v % 3 == 0 else []))
    s = state_of(b)
    inst = write_checkpoint(b.storage, s)
    path = tmp_path / inst.files[0].path
    if interleave:  # e.g. adds and removes alternating, as a writer that does not group rows by action leaves them
        t = pq.read_table(path)
        order = sorted(range(t.num_rows), key=lambda i: (i * 7919) % t.num_rows)
        pq.write_table(t.take(order), path)
    rows = [i for i, v in enumerate(pq.read_table(path).column("add").is_valid().to_pylist()) if v]
    assert (rows == list(range(rows[0], rows[-1] + 1))) != interleave  # one run (sliced) or scattered (filtered)
    runs = []
    real = C._valid_rows
    monkeypatch.setattr(C, "_valid_rows", lambda arr: runs.append(arr) or real(arr))
    monkeypatch.setattr(C, "_BATCH_ROWS", 4)
    acts = read_checkpoint(b.storage, inst)
    assert as_set(acts) == as_set(expected_actions(s))
    assert len(runs) >= 2  # batches that mix actions, each column sliced or filtered
    assert sorted(f.path for f in Snapshot.load(str(tmp_path)).files) == sorted(p for p, _dv in s.files)


@pytest.mark.rule("DELTA-CKPT-026")
def test_feature_lists_non_null_at_3_7(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b, proto=protocol(3, 7, rf=[], wf=["appendOnly"]))
    inst = write_checkpoint(b.storage, state_of(b))
    proto = pq.read_table(tmp_path / inst.files[0].path).column("protocol").drop_null().to_pylist()[0]
    assert proto["readerFeatures"] == [] and proto["writerFeatures"] == ["appendOnly"]


@pytest.mark.rule("DELTA-CKPT-012", "DELTA-CKPT-014", "DELTA-CKPT-015")
def test_multipart_checkpoint_is_hash_partitioned_and_complete(tmp_path):
    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(), metadata()])
    b.commit(1, [add(f"file-{i}.parquet") for i in range(40)])
    s = state_of(b)
    inst = write_checkpoint(b.storage, s, kind="multipart", parts=3)
    assert [f.path.split(".", 1)[1] for f in inst.files] == [
        f"checkpoint.{i:010d}.0000000003.parquet" for i in (1, 2, 3)]
    per_part = [read_checkpoint(b.storage, type(inst)(version=1, kind="classic", files=(f,))) for f in inst.files]
    for i, acts in enumerate(per_part):
        for a in acts:
            if isinstance(a, AddFile):
                assert spark_hash_partition((a.path,), 3) == i
    assert sum(len(p) for p in per_part) == 42
    assert as_set(read_checkpoint(b.storage, inst)) == as_set(expected_actions(s))
    assert read_last_checkpoint(b.storage)["parts"] == 3
    # rewriting gives byte-identical membership
    again = write_checkpoint(b.storage, s, kind="multipart", parts=3)
    assert [read_checkpoint(b.storage, type(inst)(version=1, kind="classic", files=(f,))) for f in again.files] \
        == per_part
    # a missing part makes the checkpoint unusable; the reader falls back to the JSON log
    os.remove(tmp_path / inst.files[1].path)
    seg = build_segment(b.storage)
    assert seg.checkpoint is None and len(replay(b.storage, seg).files) == 40


@pytest.mark.rule("DELTA-CKPT-015")
def test_spark_murmur3_properties():
    # Spark hashes the UTF-8 bytes with seed 42; tails are mixed byte by byte, so a 1-byte and a
    # 5-byte string both exercise the tail path. Values are stable int32s.
    for s in ["", "a", "abcd", "abcde", "file-1.parquet"]:
        h = spark_murmur3_bytes(s.encode(), 42)
        assert -(2**31) <= h < 2**31 and h == spark_murmur3_bytes(s.encode(), 42)
    assert spark_murmur3_bytes(b"", 42) == 142593372  # fmix(42 ^ 0): Spark's hash('') with seed 42
    assert spark_hash_partition((None,), 7) == 42 % 7  # a null key keeps the seed
    assert 0 <= spark_hash_partition(("x",), 5) < 5


@pytest.mark.rule("DELTA-CKPT-017", "DELTA-CKPT-019", "DELTA-CKPT-006")
def test_writer_refuses_forbidden_checkpoint_kinds(tmp_path):
    b = LogBuilder(tmp_path / "v1")
    small_table(b)
    with pytest.raises(InvalidTable, match="v2Checkpoint table feature") as exc:
        write_checkpoint(b.storage, state_of(b), kind="v2")
    assert exc.value.rule == "DELTA-CKPT-019"
    b2 = LogBuilder(tmp_path / "v2")
    small_table(b2, proto=V2_PROTOCOL)
    with pytest.raises(InvalidTable, match="forbidden") as exc:
        write_checkpoint(b2.storage, state_of(b2), kind="multipart", parts=2)
    assert exc.value.rule == "DELTA-CKPT-017"
    s = state_of(b2)
    os.remove(tmp_path / "v2" / "_delta_log" / "00000000000000000004.json")
    with pytest.raises(InvalidTable, match="commit file does not exist"):
        write_checkpoint(b2.storage, s)


@pytest.mark.rule("DELTA-CKPT-013", "DELTA-CKPT-031", "DELTA-CKPT-034", "DELTA-CKPT-035", "DELTA-CKPT-018")
@pytest.mark.parametrize("fmt,sidecars", [("parquet", 0), ("parquet", 3), ("json", 0), ("json", 2)])
def test_v2_checkpoints_roundtrip(tmp_path, fmt, sidecars):
    b = LogBuilder(tmp_path)
    small_table(b, proto=V2_PROTOCOL)
    s = state_of(b)
    inst = write_checkpoint(b.storage, s, kind="v2", v2_format=fmt, sidecars=sidecars)
    assert inst.kind == "v2" and inst.files[0].path.endswith(f".{fmt}") and inst.uuid in inst.files[0].path
    acts = read_checkpoint(b.storage, inst)
    plain = [a for a in acts if not isinstance(a, Sidecar) and type(a).__name__ != "CheckpointMetadata"]
    assert as_set(plain) == as_set(expected_actions(s))
    assert sum(type(a).__name__ == "CheckpointMetadata" for a in acts) == 1
    assert len(glob.glob(str(tmp_path / "_delta_log" / "_sidecars" / "*.parquet"))) == sidecars
    for path in glob.glob(str(tmp_path / "_delta_log" / "_sidecars" / "*.parquet")):
        assert set(pq.read_schema(path).names) == {"add", "remove"}
    listing = list_log(b.storage)
    assert [c.kind for c in listing.checkpoints] == ["v2"]
    assert state_of(b).checkpoint_version == 4
    # classic-named V1 checkpoint is always allowed too
    write_checkpoint(b.storage, s)


@pytest.mark.rule("DELTA-CKPT-034")
def test_missing_sidecar_is_invalid(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b, proto=V2_PROTOCOL)
    write_checkpoint(b.storage, state_of(b), kind="v2", sidecars=2)
    os.remove(glob.glob(str(tmp_path / "_delta_log" / "_sidecars" / "*.parquet"))[0])
    with pytest.raises(InvalidTable, match="sidecar file .* is missing") as exc:
        state_of(b)
    assert exc.value.rule == "DELTA-CKPT-034" and exc.value.version == 4


@pytest.mark.rule("DELTA-CKPT-031", "DELTA-CKPT-038")
def test_v2_checkpoint_without_checkpoint_metadata_is_invalid(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b, proto=V2_PROTOCOL)
    name = "00000000000000000004.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"
    (tmp_path / "_delta_log" / name).write_text(
        '{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}\n')
    with pytest.raises(InvalidTable, match="exactly one checkpointMetadata") as exc:
        state_of(b)
    assert exc.value.rule == "DELTA-CKPT-031"
    (tmp_path / "_delta_log" / name).write_text(
        '{"checkpointMetadata":{"version":3}}\n{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}\n')
    with pytest.raises(InvalidTable, match="expected 4"):
        state_of(b)


@pytest.mark.rule("DELTA-CKPT-009")
def test_truncated_checkpoint_is_invalid_with_path(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b)
    inst = write_checkpoint(b.storage, state_of(b))
    p = tmp_path / inst.files[0].path
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(InvalidTable, match="not readable parquet") as exc:
        state_of(b)
    assert exc.value.path.endswith("checkpoint.parquet") and exc.value.version == 4


@pytest.mark.rule("DELTA-CKPT-010")
def test_missing_action_columns_read_as_null(tmp_path):
    b = LogBuilder(tmp_path)
    small_table(b)
    s = state_of(b)
    inst = write_checkpoint(b.storage, s)
    p = tmp_path / inst.files[0].path
    t = pq.read_table(p)
    keep = [c for c in t.column_names if c not in ("txn", "domainMetadata", "remove")]
    t = t.select(keep)
    mask = pa.compute.or_(t.column("add").is_valid(), pa.compute.or_(t.column("protocol").is_valid(),
                                                                     t.column("metaData").is_valid()))
    pq.write_table(t.filter(mask), p)
    s2 = state_of(b)
    assert set(s2.files) == set(s.files) and not s2.txns and not s2.tombstones


@pytest.mark.rule("DELTA-ACTION-007")
def test_expired_tombstones_are_dropped(tmp_path):
    assert parse_interval_ms("interval 1 week") == 7 * 86_400_000
    assert parse_interval_ms("2 days 3 hours") == 2 * 86_400_000 + 3 * 3_600_000
    assert parse_interval_ms("interval 1 fortnight") is None
    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(), metadata(configuration={"delta.deletedFileRetentionDuration": "interval 1 day"})])
    b.commit(1, [add("a"), add("b")])
    now = 10 * 86_400_000
    b.commit(2, [remove("a", ts=now - 2 * 86_400_000), remove("b", ts=now - 3600_000)])
    kept = live_tombstones(state_of(b), now_ms=now)
    assert [r.path for r in kept] == ["b"]


@pytest.mark.rule("DELTA-CKPT-022", "DELTA-CKPT-023", "DELTA-CKPT-024", "DELTA-STATS-002")
def test_stats_as_struct_and_partition_values_parsed(tmp_path):
    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(), metadata(schema=PART_SCHEMA, partition_columns=["d", "p"],
                                      configuration={"delta.checkpoint.writeStatsAsStruct": "true",
                                                     "delta.checkpoint.writeStatsAsJson": "false"})])
    stats = json.dumps({"numRecords": 2, "minValues": {"id": 1}, "maxValues": {"id": 5}, "nullCount": {"id": 0}})
    b.commit(1, [add("d=2020-01-02/p=x/a.parquet", {"d": "2020-01-02", "p": "x"}, stats=stats),
                 add("b.parquet", {"d": None, "p": ""}, stats=None)])
    inst = write_checkpoint(b.storage, state_of(b))  # default ("json",) is overridden by the properties
    t = pq.read_table(tmp_path / inst.files[0].path)
    add_type = t.schema.field("add").type
    names = {f.name for f in add_type}
    assert "stats" not in names and {"stats_parsed", "partitionValues_parsed"} <= names
    pvp = add_type.field("partitionValues_parsed").type
    assert pvp.field("d").type == pa.date32() and pvp.field("p").type == pa.string()
    adds = sorted(t.column("add").drop_null().to_pylist(), key=lambda a: a["path"])
    assert adds[1]["partitionValues_parsed"] == {"d": dt.date(2020, 1, 2), "p": "x"}
    assert adds[0]["partitionValues_parsed"] == {"d": None, "p": None}
    assert adds[1]["stats_parsed"]["numRecords"] == 2 and adds[1]["stats_parsed"]["minValues"]["id"] == 1
    # the reader takes stats from stats_parsed when the JSON form is absent, and offers both forms
    back = {a.path: a for a in read_checkpoint(b.storage, inst) if isinstance(a, AddFile)}
    assert back["d=2020-01-02/p=x/a.parquet"].stats_parsed["maxValues"]["id"] == 5
    assert json.loads(back["d=2020-01-02/p=x/a.parquet"].stats) == json.loads(stats)
    # ... so a later checkpoint still carries them (here struct-only again: the properties bind)
    b.commit(2, [Txn(app_id="a", version=1)])
    inst2 = write_checkpoint(b.storage, state_of(b), stats=("json",))
    rows = pq.read_table(tmp_path / inst2.files[0].path).column("add").drop_null().to_pylist()
    assert "stats" not in rows[0]
    assert [r["stats_parsed"]["maxValues"]["id"] for r in rows if r["path"].startswith("d=")] == [5]


@pytest.mark.rule("DELTA-CKPT-023", "DELTA-CKPT-007")
def test_stats_from_a_struct_only_checkpoint_are_written_as_json_later(tmp_path):
    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(), metadata()])
    stats = json.dumps({"numRecords": 2, "minValues": {"id": 1, "name": "a"}, "maxValues": {"id": 5, "name": "b"},
                        "nullCount": {"id": 0, "name": 1}})
    b.commit(1, [add("a.parquet", stats=stats)])
    write_checkpoint(b.storage, state_of(b), stats=("struct",))
    b.commit(2, [Txn(app_id="a", version=1)])
    inst = write_checkpoint(b.storage, state_of(b), stats=("json",))
    rows = pq.read_table(tmp_path / inst.files[0].path).column("add").drop_null().to_pylist()
    assert [json.loads(r["stats"]) for r in rows] == [json.loads(stats)]


# --- interoperability with delta-rs -------------------------------------------------------

deltalake = pytest.importorskip("deltalake")


def _deltalake_table(path):
    t = pa.table({"a": pa.array([1, 2, 3], pa.int64()), "p": ["x", "y", None],
                  "d": pa.array([dt.date(2020, 1, 1), dt.date(2021, 5, 6), None])})
    deltalake.write_deltalake(str(path), t, partition_by=["p", "d"])
    deltalake.write_deltalake(str(path), t, mode="append")
    deltalake.DeltaTable(str(path)).create_checkpoint()
    deltalake.write_deltalake(str(path), t.slice(0, 1), mode="append")
    deltalake.write_deltalake(str(path), t.slice(1, 1), mode="overwrite")
    deltalake.write_deltalake(str(path), t, mode="append")


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by([(n, "ascending") for n in t.column_names])


@pytest.mark.rule("DELTA-CKPT-002", "DELTA-CKPT-007")
def test_reads_delta_rs_checkpoints(tmp_path):
    _deltalake_table(tmp_path)
    snap = Snapshot.load(str(tmp_path))
    assert snap.segment.checkpoint is not None and snap.segment.checkpoint.version == 1
    for v in range(0, snap.version + 1):
        mine = Snapshot.load(str(tmp_path), version=v).read()
        theirs = deltalake.DeltaTable(str(tmp_path), version=v).to_pyarrow_table()
        assert _sorted(mine).equals(_sorted(theirs.select(mine.column_names)).cast(mine.schema)), v


@pytest.mark.rule("DELTA-CKPT-007", "DELTA-CKPT-012", "DELTA-CKPT-024")
@pytest.mark.parametrize("kw", [dict(), dict(stats=("json", "struct")), dict(stats=("struct",)),
                                dict(kind="multipart", parts=3)])
def test_delta_rs_reads_our_checkpoints_without_the_json_log(tmp_path, kw):
    _deltalake_table(tmp_path)
    expected = deltalake.DeltaTable(str(tmp_path)).to_pyarrow_table()
    theirs = glob.glob(str(tmp_path / "_delta_log" / "*.checkpoint.parquet"))
    snap = Snapshot.load(str(tmp_path))
    write_checkpoint(snap.storage, snap.state, **kw)
    for v in range(snap.version):  # only our checkpoint can rebuild the table now
        os.remove(tmp_path / f"_delta_log/{v:020d}.json")
    for f in theirs:
        os.remove(f)
    got = deltalake.DeltaTable(str(tmp_path)).to_pyarrow_table()
    assert _sorted(got).equals(_sorted(expected))
    assert _sorted(Snapshot.load(str(tmp_path)).read()).equals(
        _sorted(expected).cast(Snapshot.load(str(tmp_path)).read().schema))


def _duckdb():
    duckdb = pytest.importorskip("duckdb")
    ext = pytest.importorskip("duckdb_extension_delta")
    path = glob.glob(os.path.join(os.path.dirname(ext.__file__), "extensions", "*", "delta.duckdb_extension"))
    if not path:
        pytest.skip("delta extension binary not found")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{path[0]}'")
    return con


@pytest.mark.rule("DELTA-CKPT-013", "DELTA-CKPT-034", "DELTA-CKPT-041")
@pytest.mark.parametrize("kw", [dict(kind="v2", sidecars=2), dict(kind="v2", v2_format="json"),
                                dict(kind="classic", sidecars=1)])
def test_delta_kernel_reads_our_v2_checkpoints(tmp_path, kw):
    con = _duckdb()
    b = LogBuilder(tmp_path)
    b.commit(0, [V2_PROTOCOL, metadata()])
    for v in range(1, 4):
        b.commit(v, [b.data_file(pa.table({"id": pa.array([v], pa.int64()), "name": [str(v)]}))])
    write_checkpoint(b.storage, state_of(b), **kw)
    for v in range(3):
        os.remove(tmp_path / f"_delta_log/{v:020d}.json")
    rows = con.sql(f"select id, name from delta_scan('{tmp_path}') order by id").fetchall()
    assert rows == [(1, "1"), (2, "2"), (3, "3")]
    assert Snapshot.load(str(tmp_path)).read().sort_by("id").to_pydict() == {"id": [1, 2, 3],
                                                                              "name": ["1", "2", "3"]}


@pytest.mark.rule("DELTA-CKPT-022", "DELTA-COLMAP-008")
def test_partition_values_parsed_uses_physical_names(tmp_path):
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True,
         "metadata": {"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-a"}},
        {"name": "p", "type": "integer", "nullable": True,
         "metadata": {"delta.columnMapping.id": 2, "delta.columnMapping.physicalName": "col-p"}}]})
    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(2, 5), metadata(schema=schema, partition_columns=["p"],
                                          configuration={"delta.columnMapping.mode": "name",
                                                         "delta.columnMapping.maxColumnId": "2"})])
    stats = json.dumps({"numRecords": 1, "minValues": {"col-a": 3}, "maxValues": {"col-a": 3},
                        "nullCount": {"col-a": 0}})
    b.commit(1, [add("x.parquet", {"col-p": "7"}, stats=stats)])
    inst = write_checkpoint(b.storage, state_of(b), stats=("json", "struct"))
    t = pq.read_table(tmp_path / inst.files[0].path)
    row = t.column("add").drop_null().to_pylist()[0]
    assert row["partitionValues_parsed"] == {"col-p": 7}
    assert row["stats_parsed"]["minValues"] == {"col-a": 3}
    assert as_set(read_checkpoint(b.storage, inst)) >= as_set([state_of(b).files[("x.parquet", None)]])


@pytest.mark.rule("DELTA-CKPT-009")
def test_columnar_map_conversion_matches_arrow():
    from reference_impl.delta.checkpoint import _map_values

    t = pa.map_(pa.string(), pa.string())
    n = 300
    cases = [
        pa.array([[("p", str(i % 10)), ("q", None if i % 7 == 0 else "x")] for i in range(n)], t),
        pa.array([[("p", None if i % 5 == 0 else str(i % 10))] for i in range(n)], t).slice(7),
        pa.array([[("p", str(i % 10))] if i % 3 else [("z", "1")] for i in range(n)], t),
        pa.array([[("p", str(i % 10))] if i % 3 else None for i in range(n)], t),
        pa.array([[("a", "1"), ("b", "2")] if i % 2 else [("b", "2"), ("a", "1")] for i in range(n)], t),
        pa.array([[] for _ in range(n)], t),
    ]
    for m in cases:
        assert _map_values(m) == [None if x is None else dict(x) for x in m.to_pylist()]
