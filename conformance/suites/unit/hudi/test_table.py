"""Hudi reads (reference_impl.hudi.table): snapshot, read-optimized, time travel, incremental; MOR merging under
both merge modes and the v6 payload classes, delete blocks with ordering values, ``_hoodie_is_deleted``, rollback
command blocks, corrupt and uncommitted blocks; the Avro -> Arrow schema mapping; describe."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from conformance.suites.unit.hudi._tables import P1, Table, fid, t
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import avro_schema as AS
from reference_impl.hudi import table as H

R = Table.row
OVERWRITE = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def rows(table: pa.Table, *cols: str) -> list[tuple]:
    cols = cols or ("id", "ts", "name")
    return sorted(tuple(r[c] for c in cols) for r in table.to_pylist())


def mor(tmp_path, version=8, **kw) -> Table:
    """A MOR table: base t(1) with k1 (ts 5) and k2 (ts 5), committed."""
    tb = Table(tmp_path, version=version, **kw)
    path = tb.base(P1, fid(1), t(1), [R("k1", 5, "a", t(1)), R("k2", 5, "b", t(1), seq=1)])
    tb.commit(t(1), t(2), files=[(P1, fid(1), path)])
    return tb


def upsert(tb: Table, n: int, done: int, records, *, block=None) -> None:
    """A delta commit t(n) completed at t(done) appending ``records`` (or a prepared block) to file group 1."""
    name = t(1) if tb.version < 8 else t(n)
    blk = block if block is not None else Table.data_block(t(n), records)
    path = tb.log(P1, fid(1), name, [blk], version=n)
    tb.commit(t(n), t(done), files=[(P1, fid(1), path)])


# ---------------------------------------------------------------------------------------------
# Snapshot basics


@pytest.mark.rule("HUDI-TABLE-003")
@pytest.mark.rule("HUDI-META-001")
def test_cow_snapshot_reads_latest_base_files_with_meta_columns(tmp_path):
    tb = Table(tmp_path, version=8, table_type="COPY_ON_WRITE")
    tb.base(P1, fid(1), t(1), [R("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.base(P1, fid(1), t(3), [R("k1", 1, "a", t(1)), R("k2", 3, "b", t(3))])
    tb.commit(t(3), t(4))
    out = H.read_table(tb.root)
    assert out.column_names[:5] == list(AS.META_COLUMNS)
    assert rows(out, "_hoodie_commit_time", "id", "name") == [(t(1), "k1", "a"), (t(3), "k2", "b")]
    bare = H.read_table(tb.root, meta_columns=False)
    assert bare.column_names == ["id", "ts", "name", "part"]


@pytest.mark.rule("HUDI-TABLE-003")
def test_empty_table_reads_no_rows(tmp_path):
    tb = Table(tmp_path)
    assert H.read_table(tb.root).num_rows == 0


# ---------------------------------------------------------------------------------------------
# Merging


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_event_time_ordering_keeps_the_higher_ordering_value_ties_to_the_later_write(tmp_path):
    tb = mor(tmp_path, merge_mode="EVENT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 3, "older", t(3)), R("k2", 5, "tie", t(3))])
    upsert(tb, 5, 6, [R("k3", 1, "new", t(5))])
    assert rows(H.read_table(tb.root)) == [("k1", 5, "a"), ("k2", 5, "tie"), ("k3", 1, "new")]


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_event_time_ordering_between_log_records(tmp_path):
    tb = mor(tmp_path, merge_mode="EVENT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 9, "high", t(3))])
    upsert(tb, 5, 6, [R("k1", 7, "lower-later", t(5))])
    assert rows(H.read_table(tb.root))[0] == ("k1", 9, "high")


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_commit_time_ordering_takes_the_later_write(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 3, "later", t(3))])
    assert rows(H.read_table(tb.root))[0] == ("k1", 3, "later")


@pytest.mark.rule("HUDI-LAYOUT-009")
@pytest.mark.parametrize("payload,expected", [(OVERWRITE, ("k1", 3, "later")), (DEFAULT, ("k1", 5, "a"))])
def test_v6_payload_class_decides_the_merge(tmp_path, payload, expected):
    tb = mor(tmp_path, version=6, payload=payload)
    upsert(tb, 3, 3, [R("k1", 3, "later", t(3))])
    assert rows(H.read_table(tb.root))[0] == expected


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_custom_merge_mode_is_unsupported(tmp_path):
    tb = mor(tmp_path, payload="com.example.MyPayload", version=6)
    upsert(tb, 3, 3, [R("k1", 3, "x", t(3))])
    with pytest.raises(Unsupported, match="merge mode CUSTOM"):
        H.read_table(tb.root)


@pytest.mark.rule("HUDI-LOG-010")
@pytest.mark.parametrize("mode,ordering,survives", [
    ("EVENT_TIME_ORDERING", (0, "int"), False),  # a plain DELETE: natural order, always wins
    ("EVENT_TIME_ORDERING", (3, "long"), True),  # lower ordering value than the record: loses
    ("EVENT_TIME_ORDERING", (5, "long"), False),  # equal: the later write (the delete) wins
    ("EVENT_TIME_ORDERING", (None, None), False),  # no ordering value: natural order
    ("COMMIT_TIME_ORDERING", (3, "long"), False),  # commit time: the later write wins
])
def test_delete_block_against_ordering(tmp_path, mode, ordering, survives):
    tb = mor(tmp_path, merge_mode=mode)
    value, kind = ordering
    upsert(tb, 3, 4, None, block=Table.delete_block(t(3), [("k1", value, kind)]))
    assert ("k1" in [r[0] for r in rows(H.read_table(tb.root))]) is survives


@pytest.mark.rule("HUDI-LOG-010")
def test_delete_then_reinsert_in_log_order(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, None, block=Table.delete_block(t(3), [("k1", 0, "int")]))
    upsert(tb, 5, 6, [R("k1", 1, "again", t(5))])
    assert rows(H.read_table(tb.root))[0] == ("k1", 1, "again")


@pytest.mark.rule("HUDI-LOG-010")
def test_is_deleted_rows_are_deletes_with_their_ordering_value(tmp_path):
    tb = mor(tmp_path, merge_mode="EVENT_TIME_ORDERING")
    gone, kept = R("k1", 6, "del", t(3)), R("k2", 4, "del-low", t(3))
    gone["_hoodie_is_deleted"] = kept["_hoodie_is_deleted"] = True
    schema = json.loads(Table.data_block.__globals__["LOG_SCHEMA"])
    schema["fields"].append({"name": "_hoodie_is_deleted", "type": ["null", "boolean"], "default": None})
    from reference_impl.hudi import logfile as LF

    upsert(tb, 3, 4, None, block=LF.avro_data_block([gone, kept], json.dumps(schema), instant_time=t(3)))
    assert rows(H.read_table(tb.root)) == [("k2", 5, "b")]


@pytest.mark.rule("HUDI-LOG-009")
def test_rollback_command_block_retracts_the_target_blocks(tmp_path):
    from reference_impl.hudi import logfile as LF

    tb = mor(tmp_path, version=6, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 3, [R("k1", 3, "kept", t(3))])
    # t(5) appended a block and failed; its rollback t(6) appended a command block naming it
    tb.log(P1, fid(1), t(1), [Table.data_block(t(5), [R("k1", 5, "failed", t(5))])], version=5)
    tb.log(P1, fid(1), t(1), [LF.rollback_block(instant_time=t(6), target_instant_time=t(5))], version=6)
    tb.rollback(t(6), None, t(5))
    assert rows(H.read_table(tb.root))[0] == ("k1", 3, "kept")


@pytest.mark.rule("HUDI-LOG-011")
def test_blocks_of_uncommitted_instants_are_skipped(tmp_path):
    tb = mor(tmp_path, version=6, merge_mode="COMMIT_TIME_ORDERING")
    tb.log(P1, fid(1), t(1), [Table.data_block(t(3), [R("k1", 3, "inflight", t(3))])], version=3)
    tb.pending(t(3))
    assert rows(H.read_table(tb.root))[0] == ("k1", 5, "a")


@pytest.mark.rule("HUDI-LOG-007")
def test_corrupt_blocks_are_skipped(tmp_path):
    tb = mor(tmp_path, version=6, merge_mode="COMMIT_TIME_ORDERING")
    good = Table.data_block(t(3), [R("k1", 3, "good", t(3))])
    torn = Table.data_block(t(3), [R("k2", 3, "torn", t(3))])[:-20]
    tb.log(P1, fid(1), t(1), [good, torn], version=3)
    tb.commit(t(3))
    assert rows(H.read_table(tb.root)) == [("k1", 3, "good"), ("k2", 5, "b")]


@pytest.mark.rule("HUDI-TABLE-003")
def test_parquet_data_blocks_merge_like_avro_blocks(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, None, block=Table.parquet_block(t(3), [R("k2", 1, "pq", t(3))]))
    assert rows(H.read_table(tb.root))[1] == ("k2", 1, "pq")


@pytest.mark.rule("HUDI-FILE-014")
def test_snapshot_over_a_pending_compaction_reads_both_slices(tmp_path):
    tb = mor(tmp_path, version=8, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 3, "before", t(3))])
    tb.compaction_plan(t(5), [(P1, fid(1))])
    upsert(tb, 6, 7, [R("k2", 6, "after", t(6))])
    assert rows(H.read_table(tb.root)) == [("k1", 3, "before"), ("k2", 6, "after")]


# ---------------------------------------------------------------------------------------------
# Query types


@pytest.mark.rule("HUDI-TABLE-004")
def test_read_optimized_reads_base_files_only(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 3, "log", t(3))])
    assert rows(H.read_table(tb.root, query="read_optimized")) == [("k1", 5, "a"), ("k2", 5, "b")]


@pytest.mark.rule("HUDI-FILE-013")
def test_time_travel_by_requested_and_completion_time(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 9, [R("k1", 3, "slow", t(3))])
    upsert(tb, 5, 6, [R("k2", 5, "fast", t(5))])
    assert rows(H.read_table(tb.root, as_of=t(4))) == [("k1", 3, "slow"), ("k2", 5, "b")]
    assert rows(H.read_table(tb.root, as_of_completion=t(7))) == [("k1", 5, "a"), ("k2", 5, "fast")]
    assert rows(H.read_table(tb.root, as_of=t(1))) == [("k1", 5, "a"), ("k2", 5, "b")]
    assert H.describe(tb.root, as_of=t(4))["instant"] == t(3)


@pytest.mark.rule("HUDI-FILE-016")
def test_time_travel_before_the_cleaners_retention_fails(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 3, "x", t(3))])
    tb.clean(t(5), t(6), earliest_to_retain=t(3))
    assert H.read_table(tb.root, as_of=t(3)).num_rows == 2
    with pytest.raises(InvalidTable, match="cleaner"):
        H.read_table(tb.root, as_of=t(2))


@pytest.mark.rule("HUDI-TIMELINE-019")
def test_time_travel_past_an_incomplete_write_fails(tmp_path):
    tb = mor(tmp_path)
    tb.pending(t(3))
    upsert(tb, 5, 6, [R("k1", 6, "x", t(5))])
    assert H.read_table(tb.root, as_of=t(2)).num_rows == 2
    with pytest.raises(InvalidTable, match="incomplete write"):
        H.read_table(tb.root, as_of=t(5))


@pytest.mark.rule("HUDI-TABLE-005")
def test_incremental_returns_latest_state_of_records_written_in_range(tmp_path):
    tb = mor(tmp_path, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 3, "r3", t(3))])
    upsert(tb, 5, 6, [R("k1", 5, "r5", t(5)), R("k3", 5, "new", t(5))])
    upsert(tb, 7, 8, [R("k3", 7, "r7", t(7))])
    incr = lambda b, e: rows(H.read_table(tb.root, query="incremental", begin=b, end=e))  # noqa: E731
    assert incr(t(2), t(4)) == [("k1", 3, "r3")]
    assert incr(t(4), t(6)) == [("k1", 5, "r5"), ("k3", 5, "new")]
    assert incr(t(2), None) == [("k1", 5, "r5"), ("k3", 7, "r7")]
    assert incr(None, t(2)) == [("k1", 5, "a"), ("k2", 5, "b")]
    assert incr(t(8), None) == []


@pytest.mark.rule("HUDI-TABLE-005")
def test_incremental_in_v6_goes_by_requested_time(tmp_path):
    tb = mor(tmp_path, version=6, merge_mode="COMMIT_TIME_ORDERING")
    upsert(tb, 3, 3, [R("k1", 3, "r3", t(3))])
    upsert(tb, 5, 5, [R("k2", 5, "r5", t(5))])
    assert rows(H.read_table(tb.root, query="incremental", begin=t(3), end=t(5))) == [("k2", 5, "r5")]


@pytest.mark.rule("HUDI-TABLE-003")
def test_describe_reports_the_table_facts(tmp_path):
    tb = mor(tmp_path, merge_mode="EVENT_TIME_ORDERING")
    upsert(tb, 3, 4, [R("k1", 6, "x", t(3))])
    facts = H.describe(tb.root)
    assert facts == {"table_type": "MERGE_ON_READ", "table_version": 8, "record_key_fields": ["id"],
                     "partition_fields": ["part"], "ordering_fields": ["ts"], "merge_mode": "EVENT_TIME_ORDERING",
                     "instant": t(3), "completion_time": t(4), "partitions": [P1], "file_group_count": 1}


@pytest.mark.rule("HUDI-TABLE-003")
def test_bad_query_arguments_are_refused(tmp_path):
    tb = mor(tmp_path)
    with pytest.raises(InvalidTable, match="query type"):
        H.read_table(tb.root, query="cdc")
    with pytest.raises(InvalidTable, match="incremental"):
        H.read_table(tb.root, begin=t(1))
    with pytest.raises(InvalidTable, match="unknown column"):
        H.read_table(tb.root, columns=["nope"])


# ---------------------------------------------------------------------------------------------
# Schema


@pytest.mark.rule("HUDI-COMMIT-003")
def test_avro_schema_maps_to_arrow():
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "f", "type": ["null", {"type": "fixed", "name": "F", "size": 5, "logicalType": "decimal",
                                         "precision": 40, "scale": 3}]},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "lms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "lus", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "arr", "type": {"type": "array", "items": ["null", "int"]}},
        {"name": "m", "type": {"type": "map", "values": "long"}},
        {"name": "s", "type": ["null", {"type": "record", "name": "S", "fields": [{"name": "x", "type": "float"}]}]},
        {"name": "again", "type": ["null", "F"]},
        {"name": "b", "type": "bytes"},
    ]}
    got = AS.table_arrow_schema(json.dumps(schema))
    assert got.names[:5] == list(AS.META_COLUMNS)
    types = {f.name: (f.type, f.nullable) for f in got}
    assert types["d"] == (pa.decimal128(10, 2), False)
    assert types["f"] == (pa.decimal256(40, 3), True)
    assert types["day"][0] == pa.date32()
    assert types["ms"][0] == pa.timestamp("ms", tz="UTC") and types["us"][0] == pa.timestamp("us", tz="UTC")
    assert types["lms"][0] == pa.timestamp("ms") and types["lus"][0] == pa.timestamp("us")
    assert types["u"][0] == pa.string() and types["e"][0] == pa.string()
    assert types["arr"][0] == pa.list_(pa.field("element", pa.int32(), nullable=True))
    assert types["m"][0] == pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False))
    assert types["s"] == (pa.struct([pa.field("x", pa.float32(), nullable=False)]), True)
    assert types["again"] == (pa.decimal256(40, 3), True)
    assert types["b"][0] == pa.binary()


@pytest.mark.rule("HUDI-COMMIT-003")
def test_complex_unions_are_unsupported():
    schema = {"type": "record", "name": "r", "fields": [{"name": "x", "type": ["null", "int", "string"]}]}
    with pytest.raises(Unsupported, match="union"):
        AS.table_arrow_schema(json.dumps(schema))


@pytest.mark.rule("HUDI-COMMIT-003")
def test_read_uses_the_schema_of_the_latest_visible_write(tmp_path):
    tb = Table(tmp_path, version=8, table_type="COPY_ON_WRITE")
    tb.base(P1, fid(1), t(1), [R("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    wider = json.loads(Table.data_block.__globals__["TABLE_SCHEMA"])
    wider["fields"].append({"name": "extra", "type": ["null", "int"], "default": None})
    tb.commit(t(3), t(4), schema=json.dumps(wider))
    assert H.read_table(tb.root).column_names[-1] == "extra"
    assert H.read_table(tb.root).column("extra").to_pylist() == [None]
    assert "extra" not in H.read_table(tb.root, as_of=t(1)).column_names


@pytest.mark.rule("HUDI-TABLE-005")
@pytest.mark.rule("HUDI-FILE-016")
def test_incremental_falls_back_to_the_latest_snapshot_when_a_file_was_cleaned(tmp_path):
    import os

    tb = Table(tmp_path, version=8, table_type="COPY_ON_WRITE")
    first = tb.base(P1, fid(1), t(1), [R("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2), files=[(P1, fid(1), first)])
    second = tb.base(P1, fid(1), t(3), [R("k1", 1, "a", t(1)), R("k2", 3, "b", t(3))])
    tb.commit(t(3), t(4), files=[(P1, fid(1), second)])
    incr = lambda: rows(H.read_table(tb.root, query="incremental", begin=None, end=t(2)))  # noqa: E731
    assert incr() == [("k1", 1, "a")]  # the file group at t(1)
    os.remove(os.path.join(tb.root, first))  # cleaned: the state at t(1) is gone
    assert incr() == [("k1", 1, "a")]  # same records, now from the latest slice


@pytest.mark.rule("HUDI-COMMIT-004")
def test_insert_overwrite_replaces_the_old_file_group(tmp_path):
    tb = Table(tmp_path, version=6, table_type="COPY_ON_WRITE")
    tb.base(P1, fid(1), t(1), [R("k1", 1, "a", t(1))])
    tb.commit(t(1))
    tb.base(P1, fid(2), t(3), [R("k7", 3, "g", t(3))])
    tb.commit(t(3), action="replacecommit", replaced={P1: [fid(1)]})
    assert rows(H.read_table(tb.root)) == [("k7", 3, "g")]
    assert rows(H.read_table(tb.root, as_of=t(2))) == [("k1", 1, "a")]
    assert H.describe(tb.root)["file_group_count"] == 1
