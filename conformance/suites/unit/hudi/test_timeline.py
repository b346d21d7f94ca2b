"""Timeline (reference_impl.hudi.timeline): instant file names of layouts 1 and 2, states, order, archives.

File names and LSM files are written here from the spec's facts (Appendix A of rules/hudi.md) and
from what Hudi 1.2.0 wrote for table versions 6, 8 and 9 (the name lists below are copied from
those tables' ``.hoodie`` directories).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conformance.suites.unit._errors import raises
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import properties as P
from reference_impl.hudi import timeline as T
from reference_impl.storage import LocalStorage

A, B, C, D = "20261126111124212", "20261126111125810", "20261126111126384", "20261126111128898"

# A v8 MOR timeline as Hudi 1.2.0 wrote it (a compaction completed as commit, a clean, delta commits).
V8_MOR_NAMES = [
    "20261126111150241.clean.inflight", "20261126111150241.clean.requested", "20261126111150241_20261126111150390.clean",
    "20261126111150684.compaction.inflight", "20261126111150684.compaction.requested",
    "20261126111150684_20261126111151343.commit",
    "20261126111151412.deltacommit.inflight", "20261126111151412.deltacommit.requested",
    "20261126111151412_20261126111152956.deltacommit",
    "20261126111153745.deltacommit.requested",
    "history",
]
# A v6 COW timeline (flat .hoodie/) with a rollback, and the files that sit beside it.
V6_COW_NAMES = [
    "20261126110725284.rollback", "20261126110725284.rollback.inflight", "20261126110725284.rollback.requested",
    "20261126110729843.commit", "20261126110729843.commit.requested", "20261126110729843.inflight",
    "20261126110731551.clean", "20261126110731551.clean.inflight", "20261126110731551.clean.requested",
    "hoodie.properties", ".20261126110729843.commit.crc", ".aux", ".temp", ".schema", "history", "metadata",
]


def cfg(version: int, **extra: str) -> P.TableConfig:
    return P.parse_table_config({P.NAME: "t", P.TYPE: "MERGE_ON_READ", P.VERSION: str(version), **extra})


def parsed(name, layout):
    i = T.parse_instant_file(name, layout)
    return (i.requested_time, i.action, i.state, i.completion_time)


# --- instant times ------------------------------------------------------------------------------

@pytest.mark.rule("HUDI-TIMELINE-006")
def test_instant_times_of_17_and_14_digits():
    assert T.parse_instant_time("20261126111124212") == dt.datetime(2026, 11, 26, 11, 11, 24, 212000)
    assert T.parse_instant_time("20240101120000") == dt.datetime(2024, 1, 1, 12, 0, 0)
    assert T.parse_instant_time("20240101120000", tz=dt.timezone.utc).tzinfo is dt.timezone.utc
    assert T.format_instant_time(dt.datetime(2026, 1, 2, 3, 4, 5, 6789)) == "20260102030405006"
    for bad in ("2024010112000", "2026112611112421", "2026112611112421x", "", "２０２４０１０１１２００００"):
        raises(InvalidTable, "HUDI-TIMELINE-006", "yyyyMMddHHmmssSSS", T.check_instant_time, bad)
    raises(InvalidTable, "HUDI-TIMELINE-006", "not a valid date", T.parse_instant_time, "20241301120000000")


@pytest.mark.rule("HUDI-LAYOUT-013")
def test_instant_zone():
    assert T.instant_zone(cfg(8, **{P.TIMELINE_TIMEZONE: "UTC"})) is dt.timezone.utc
    assert T.instant_zone(cfg(8)) is None  # LOCAL: whatever zone the writer ran in


@pytest.mark.rule("HUDI-TIMELINE-007")
def test_reserved_instant_times():
    for reserved in T.RESERVED_INSTANTS:
        assert T.check_instant_time(reserved) == reserved
        raises(InvalidTable, "HUDI-TIMELINE-007", "reserved", T.parse_instant_time, reserved)
    raises(InvalidTable, "HUDI-TIMELINE-007", "all zeros", T.check_instant_time, "00000000000000000")


# --- file names ---------------------------------------------------------------------------------

@pytest.mark.rule("HUDI-TIMELINE-009", "HUDI-TIMELINE-010")
def test_layout1_names():
    assert parsed(f"{A}.commit", 1) == (A, "commit", "COMPLETED", None)
    assert parsed(f"{A}.commit.requested", 1) == (A, "commit", "REQUESTED", None)
    assert parsed(f"{A}.inflight", 1) == (A, "commit", "INFLIGHT", None)
    assert parsed(f"{A}.deltacommit.inflight", 1) == (A, "deltacommit", "INFLIGHT", None)
    assert parsed(f"{A}.replacecommit.requested", 1) == (A, "replacecommit", "REQUESTED", None)
    raises(InvalidTable, "HUDI-TIMELINE-009", "layout 1", T.parse_instant_file, f"{A}_{B}.commit", 1)


@pytest.mark.rule("HUDI-TIMELINE-011", "HUDI-TIMELINE-010")
def test_layout2_names():
    assert parsed(f"{A}_{B}.commit", 2) == (A, "commit", "COMPLETED", B)
    assert parsed(f"{A}.inflight", 2) == (A, "commit", "INFLIGHT", None)
    assert parsed(f"{A}.clustering.requested", 2) == (A, "clustering", "REQUESTED", None)
    assert parsed(f"{A}.commit", 2) == (A, "commit", "COMPLETED", None)  # legacy name of an upgraded table
    raises(InvalidTable, "HUDI-TIMELINE-011", "state 'done'", T.parse_instant_file, f"{A}.commit.done", 2)


@pytest.mark.rule("HUDI-TIMELINE-012")
@pytest.mark.parametrize("suffix", ["requested", "inflight"])
def test_completion_time_only_on_completed_files(suffix):
    raises(InvalidTable, "HUDI-TIMELINE-012", "carries a completion time", T.parse_instant_file,
           f"{A}_{B}.deltacommit.{suffix}", 2)


@pytest.mark.rule("HUDI-TIMELINE-008")
@pytest.mark.parametrize("action", T.ACTIONS)
def test_every_action_parses_pending(action):
    state = "inflight" if action == "savepoint" else "requested"
    assert T.parse_instant_file(f"{A}.{action}.{state}", 2).action == action


@pytest.mark.rule("HUDI-TIMELINE-008")
def test_unknown_action_is_unsupported_and_strays_are_not_instants():
    err = raises(Unsupported, "HUDI-TIMELINE-008", "'frobnicate'", T.parse_instant_file, f"{A}.frobnicate", 2)
    assert err.feature == "hudi-action:frobnicate"
    raises(InvalidTable, "HUDI-TIMELINE-009", "no action", T.parse_instant_file, f"{A}.requested", 1)
    for stray in ("hoodie.properties", f".{A}.commit.crc", ".aux", "history", "_version_", f"{A}", f"{A}.commit.x.y"):
        assert T.parse_instant_file(stray, 2) is None, stray


@pytest.mark.rule("HUDI-TIMELINE-013")
def test_actions_that_complete_under_another_name():
    raises(InvalidTable, "HUDI-TIMELINE-013", "named commit", T.parse_instant_file, f"{A}_{B}.compaction", 2)
    raises(InvalidTable, "HUDI-TIMELINE-013", "named deltacommit", T.parse_instant_file, f"{A}.logcompaction", 1)
    raises(InvalidTable, "HUDI-TIMELINE-013", "named replacecommit", T.parse_instant_file, f"{A}_{B}.clustering", 2)
    raises(InvalidTable, "HUDI-TIMELINE-013", "replacecommit", T.parse_instant_file, f"{A}.clustering.requested", 1)


@pytest.mark.rule("HUDI-TIMELINE-003")
def test_savepoint_has_no_requested_state():
    raises(InvalidTable, "HUDI-TIMELINE-003", "savepoint", T.parse_instant_file, f"{A}.savepoint.requested", 1)


@pytest.mark.rule("HUDI-TIMELINE-009", "HUDI-TIMELINE-011", "HUDI-TIMELINE-013")
@pytest.mark.parametrize("action,state,layout,name", [
    ("commit", "INFLIGHT", 1, f"{A}.inflight"),
    ("commit", "COMPLETED", 1, f"{A}.commit"),
    ("compaction", "COMPLETED", 1, f"{A}.commit"),
    ("compaction", "COMPLETED", 2, f"{A}_{B}.commit"),
    ("logcompaction", "COMPLETED", 2, f"{A}_{B}.deltacommit"),
    ("clustering", "COMPLETED", 2, f"{A}_{B}.replacecommit"),
    ("clustering", "REQUESTED", 1, f"{A}.replacecommit.requested"),
    ("clustering", "INFLIGHT", 2, f"{A}.clustering.inflight"),
    ("clean", "REQUESTED", 2, f"{A}.clean.requested"),
    ("savepoint", "INFLIGHT", 2, f"{A}.savepoint.inflight"),
    ("indexing", "COMPLETED", 2, f"{A}_{B}.indexing"),
    ("schemacommit", "COMPLETED", 1, f"{A}.schemacommit"),
])
def test_file_names_written(action, state, layout, name):
    inst = T.Instant(requested_time=A, action=action, state=state, completion_time=B if layout == 2 else None)
    assert T.instant_file_name(inst, layout) == name
    back = T.parse_instant_file(name, layout)
    assert T.instant_file_name(back, layout) == name


# --- the active timeline ------------------------------------------------------------------------

@pytest.mark.rule("HUDI-TIMELINE-002", "HUDI-TIMELINE-013", "HUDI-TIMELINE-001")
def test_v8_timeline_states():
    tl = T.build_timeline(V8_MOR_NAMES, 2)
    assert [(i.requested_time, i.action, i.state) for i in tl.instants] == [
        ("20261126111150241", "clean", "COMPLETED"), ("20261126111150684", "commit", "COMPLETED"),
        ("20261126111151412", "deltacommit", "COMPLETED"), ("20261126111153745", "deltacommit", "REQUESTED")]
    assert len(tl.files_of("20261126111150684")) == 3
    assert [i.requested_time for i in tl.pending()] == ["20261126111153745"]
    assert [i.action for i in tl.completed_writes()] == ["commit", "deltacommit"]
    assert tl.instant("20261126111151412").completion_time == "20261126111152956"


@pytest.mark.rule("HUDI-TIMELINE-002")
def test_highest_state_wins():
    tl = T.build_timeline([f"{A}.commit.requested", f"{A}.inflight"], 1)
    assert tl.instants[0].state == "INFLIGHT"
    tl = T.build_timeline([f"{A}.deltacommit.requested"], 2)
    assert tl.instants[0].state == "REQUESTED" and tl.completed() == ()


@pytest.mark.rule("HUDI-TIMELINE-009")
def test_v6_timeline_passes_over_strays():
    tl = T.build_timeline(V6_COW_NAMES, 1)
    assert [(i.action, i.state) for i in tl.instants] == [("rollback", "COMPLETED"), ("commit", "COMPLETED"),
                                                           ("clean", "COMPLETED")]
    assert len(tl.files) == 9


@pytest.mark.rule("HUDI-TIMELINE-005")
def test_one_action_per_requested_time():
    raises(InvalidTable, "HUDI-TIMELINE-005", "used by both", T.build_timeline, [f"{A}.commit", f"{A}.clean"], 1)
    raises(InvalidTable, "HUDI-TIMELINE-011", "completed twice", T.build_timeline, [f"{A}_{B}.commit", f"{A}_{C}.commit"], 2)


@pytest.mark.rule("HUDI-TIMELINE-015")
def test_commit_order_is_completion_order_in_layout2():
    # A starts first but completes last: a reader applies C's write before A's.
    tl = T.build_timeline([f"{A}_{D}.deltacommit", f"{B}_{C}.deltacommit"], 2)
    assert [i.requested_time for i in tl.completed()] == [A, B]
    assert [i.requested_time for i in tl.completed_in_commit_order()] == [B, A]


@pytest.mark.rule("HUDI-TIMELINE-014")
def test_layout1_orders_by_requested_time_not_mtime():
    # Modification times say B finished first; a v6 reader must not use them.
    tl = T.build_timeline([f"{A}.commit", f"{B}.commit"], 1, modification_times={f"{A}.commit": 9, f"{B}.commit": 1})
    assert [i.requested_time for i in tl.completed_in_commit_order()] == [A, B]
    assert all(i.completion_time is None and i.ordering_time == i.requested_time for i in tl.completed())


@pytest.mark.rule("HUDI-TIMELINE-003")
def test_transition_violations():
    assert T.transition_violations(T.build_timeline(V6_COW_NAMES, 1)) == []
    found = T.transition_violations(T.build_timeline([f"{A}.commit.requested", f"{A}_{B}.commit"], 2))
    assert [v.rule for v in found] == ["HUDI-TIMELINE-003"] and "without an inflight" in found[0].message


@pytest.mark.rule("HUDI-TIMELINE-009", "HUDI-TIMELINE-011", "HUDI-LAYOUT-012")
def test_load_from_storage_in_both_layouts(tmp_path):
    st6 = LocalStorage(str(tmp_path / "v6"))
    for name in (f"{A}.commit.requested", f"{A}.inflight", f"{A}.commit", "hoodie.properties"):
        st6.write_atomic(f".hoodie/{name}", b"")
    st6.write_atomic(f".hoodie/timeline/{C}_{D}.commit", b"")  # not read: layout 1 is flat
    tl = T.load_active_timeline(st6, cfg(6))
    assert [i.requested_time for i in tl.instants] == [A] and tl.directory == ".hoodie"
    assert set(tl.modification_times) >= {f"{A}.commit"}
    st8 = LocalStorage(str(tmp_path / "v8"))
    st8.write_atomic(f".hoodie/{A}.commit", b"")  # not read: layout 2 lives in .hoodie/timeline
    st8.write_atomic(f".hoodie/timeline/{C}_{D}.commit", b"")
    st8.write_atomic(".hoodie/timeline/history/_version_", b"1")
    tl = T.load_active_timeline(st8, cfg(8))
    assert [(i.requested_time, i.completion_time) for i in tl.instants] == [(C, D)]
    tl = T.load_active_timeline(st8, cfg(8, **{P.TIMELINE_PATH: "tl"}))
    assert tl.instants == ()


# --- archives -----------------------------------------------------------------------------------

ARCHIVE_ENTRY = {"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": "org.apache.hudi.avro.model", "fields": [
    {"name": "hoodieCommitMetadata", "default": None, "type": ["null", {
        "type": "record", "name": "HoodieCommitMetadata", "fields": [
            {"name": "partitionToWriteStats", "default": None, "type": ["null", {"type": "map", "values": {
                "type": "array", "items": {"type": "record", "name": "HoodieWriteStat", "fields": [
                    {"name": "fileId", "type": ["null", "string"], "default": None},
                    {"name": "path", "type": ["null", "string"], "default": None}]}}}]},
            {"name": "extraMetadata", "default": None, "type": ["null", {"type": "map", "values": "string"}]},
            {"name": "operationType", "default": None, "type": ["null", "string"]}]}]},
    {"name": "hoodieCleanMetadata", "default": None, "type": ["null", {
        "type": "record", "name": "HoodieCleanMetadata", "fields": [
            {"name": "startCleanTime", "type": "string"}, {"name": "totalFilesDeleted", "type": "int"}]}]},
    {"name": "commitTime", "type": ["null", "string"], "default": None},
    {"name": "actionType", "type": ["null", "string"], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "actionState", "type": ["null", "string"], "default": None},
    {"name": "stateTransitionTime", "type": ["null", "string"], "default": None},
]}


def archive_block(entries, schema=ARCHIVE_ENTRY):
    """One Hudi log block (big-endian framing) holding ``entries`` as an Avro data block."""
    import io
    import struct

    import fastavro

    parsed = fastavro.parse_schema(schema)
    content = struct.pack(">ii", 3, len(entries))
    for e in entries:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, e)
        content += struct.pack(">i", len(buf.getvalue())) + buf.getvalue()
    value = json.dumps(schema).encode()
    header = struct.pack(">i", 1) + struct.pack(">ii", 2, len(value)) + value  # one entry: SCHEMA (ordinal 2)
    body = struct.pack(">ii", 1, 3) + header + struct.pack(">q", len(content)) + content + struct.pack(">i", 0)
    return b"#HUDI#" + struct.pack(">q", len(body) + 8) + body + struct.pack(">q", 6 + 8 + len(body))


def entry(t, action, state, **kw):
    return {"commitTime": t, "actionType": action, "actionState": state, "stateTransitionTime": t[:-3] + "999", **kw}


@pytest.mark.rule("HUDI-TIMELINE-021", "HUDI-LAYOUT-012", "HUDI-TIMELINE-014")
def test_v6_archive(tmp_path):
    from reference_impl.hudi import commit_metadata as M

    st = LocalStorage(str(tmp_path))
    config = cfg(6, **{P.ARCHIVELOG_FOLDER: "history"})
    assert T.list_archive_v1(st, config) == () and T.read_archive_v1(st, config) == ()
    meta = {"partitionToWriteStats": {"p": [{"fileId": "f-0", "path": "p/f-0_0-1-1_1.parquet"}]},
            "extraMetadata": {"schema": "{}"}, "operationType": "UPSERT"}
    first = archive_block([entry(A, "commit", "REQUESTED"), entry(A, "commit", "INFLIGHT"),
                           entry(A, "commit", "COMPLETED", hoodieCommitMetadata=meta)])
    second = archive_block([entry(C, "clean", "COMPLETED",
                                  hoodieCleanMetadata={"startCleanTime": C, "totalFilesDeleted": 2})])
    st.write_atomic(".hoodie/history/.commits_.archive.1_1-0-1", first + second[:20])  # a torn block: skipped
    st.write_atomic(".hoodie/history/.commits_.archive.2_1-0-1", second)
    st.write_atomic(".hoodie/history/.commits_.archive.10", b"")
    st.write_atomic(".hoodie/history/hoodie_merge_archive_plan", b"{}")  # passed over
    assert [(f.version, f.write_token) for f in T.list_archive_v1(st, config)] == [(1, "1-0-1"), (2, "1-0-1"), (10, None)]
    entries = T.read_archive_v1(st, config)
    assert [(e.requested_time, e.action, e.state) for e in entries] == [
        (A, "commit", "REQUESTED"), (A, "commit", "INFLIGHT"), (A, "commit", "COMPLETED"), (C, "clean", "COMPLETED")]
    done = entries[2]
    assert done.as_instant().completion_time is None and done.state_transition_time == A[:-3] + "999"
    commit = M.archived_v1_metadata(done)
    assert commit.operation_type == "UPSERT" and commit.write_stats()[0].file_id == "f-0"
    assert M.archived_v1_metadata(entries[0]) is None
    assert M.archived_v1_metadata(entries[3]).start_clean_time == C
    assert T.list_archive_v1(st, cfg(6)) == ()  # the default folder is "archived"
    st.write_atomic(".hoodie/history/.commits_.archive.3_1-0-1", archive_block([entry("42", "commit", "COMPLETED")]))
    raises(InvalidTable, "HUDI-TIMELINE-006", "archived instant time", T.read_archive_v1, st, config)
    st.write_atomic(".hoodie/history/.commits_.archive.3_1-0-1", archive_block([entry(B, "commit", "DONE")]))
    raises(InvalidTable, "HUDI-TIMELINE-021", "state 'DONE'", T.read_archive_v1, st, config)


def lsm_parquet(rows, drop=()):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
                        ("metadata", pa.binary()), ("plan", pa.binary()), ("version", pa.int32())])
    table = pa.Table.from_pylist([{"version": 1, "plan": None, **r} for r in rows], schema=schema)
    if drop:
        table = table.drop_columns(list(drop))
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def write_history(st, files, version=2, manifests=None, version_file=True):
    """Write the LSM parquet files and ``manifest_<version>`` listing ``files`` (name -> bytes)."""
    for name, data in files.items():
        st.write_atomic(f".hoodie/timeline/history/{name}", data)
    for v, names in (manifests or {version: list(files)}).items():
        body = {"files": [{"fileName": n, "fileLen": len(files[n])} for n in names]}
        st.write_atomic(f".hoodie/timeline/history/manifest_{v}", json.dumps(body, indent=2).encode())
    if version_file:
        st.write_atomic(".hoodie/timeline/history/_version_", str(version).encode())


ROWS_0 = [{"instantTime": A, "completionTime": B, "action": "commit", "metadata": b"Obj\x01"},
          {"instantTime": C, "completionTime": D, "action": "clean", "metadata": b"Obj\x01", "plan": b"p"}]
ROWS_1 = [{"instantTime": "20261126111130230", "completionTime": "20261126111132240", "action": "deltacommit"}]


@pytest.mark.rule("HUDI-TIMELINE-022", "HUDI-TIMELINE-023")
def test_lsm_history_reads_the_current_manifest(tmp_path):
    st = LocalStorage(str(tmp_path))
    assert T.read_lsm_timeline(st, cfg(8)) == ()
    old = f"{A}_{A}_0.parquet"
    files = {f"{A}_{C}_1.parquet": lsm_parquet(ROWS_0), "20261126111130230_20261126111130230_0.parquet": lsm_parquet(ROWS_1),
             old: lsm_parquet(ROWS_0[:1])}
    write_history(st, files, version=2, manifests={1: [old], 2: [n for n in files if n != old]})
    rows = T.read_lsm_timeline(st, cfg(8))
    assert [(r.requested_time, r.completion_time, r.action, r.plan) for r in rows] == [
        (A, B, "commit", None), (C, D, "clean", b"p"), ("20261126111130230", "20261126111132240", "deltacommit", None)]
    assert rows[0].as_instant().is_completed and rows[0].version == 1
    assert T.read_lsm_manifest(st, cfg(8)).files[0].level == 1


@pytest.mark.rule("HUDI-TIMELINE-022")
def test_lsm_version_falls_back_to_the_highest_manifest(tmp_path):
    st = LocalStorage(str(tmp_path))
    files = {f"{A}_{C}_0.parquet": lsm_parquet(ROWS_0)}
    write_history(st, files, manifests={3: list(files), 1: []}, version_file=False)
    assert T.lsm_version(st, ".hoodie/timeline/history") == 3
    assert len(T.read_lsm_timeline(st, cfg(8))) == 2
    st.write_atomic(".hoodie/timeline/history/_version_", b"9")
    raises(InvalidTable, "HUDI-TIMELINE-022", "manifest_9 does not exist", T.read_lsm_timeline, st, cfg(8))


@pytest.mark.rule("HUDI-TIMELINE-022")
def test_lsm_manifest_must_match_the_files(tmp_path):
    st = LocalStorage(str(tmp_path))
    name = f"{A}_{C}_0.parquet"
    data = lsm_parquet(ROWS_0)
    write_history(st, {name: data})
    st.write_atomic(f".hoodie/timeline/history/{name}", data + b"x")
    raises(InvalidTable, "HUDI-TIMELINE-022", "the manifest says", T.read_lsm_timeline, st, cfg(8))
    st.delete(f".hoodie/timeline/history/{name}")
    raises(InvalidTable, "HUDI-TIMELINE-022", "does not exist", T.read_lsm_timeline, st, cfg(8))


@pytest.mark.rule("HUDI-TIMELINE-022")
@pytest.mark.parametrize("body,fragment", [
    (b"[]", "'files' list"),
    (b"not json", "not JSON"),
    (b'{"files":[{"fileName":"../x_y_0.parquet","fileLen":1}]}', "<min>_<max>_<level>"),
    (b'{"files":[{"fileName":"1_2_10.parquet","fileLen":1}]}', "<min>_<max>_<level>"),
    (b'{"files":[{"fileName":"20261126111126384_20261126111124212_0.parquet","fileLen":1}]}', "max time before min"),
    (b'{"files":[{"fileName":"20261126111124212_20261126111126384_0.parquet","fileLen":-1}]}', "not a byte count"),
    (b'{"files":[{"fileLen":1}]}', "fileName"),
])
def test_bad_manifests(body, fragment):
    raises(InvalidTable, "HUDI-TIMELINE-022", fragment, T.parse_lsm_manifest, body, 1)


@pytest.mark.rule("HUDI-TIMELINE-022", "HUDI-TIMELINE-023")
def test_lsm_rows_must_fit_their_file(tmp_path):
    st = LocalStorage(str(tmp_path))
    write_history(st, {f"{A}_{A}_0.parquet": lsm_parquet(ROWS_0)})  # row C lies after the name's max
    raises(InvalidTable, "HUDI-TIMELINE-022", "outside its name's range", T.read_lsm_timeline, st, cfg(8))
    raises(InvalidTable, "HUDI-TIMELINE-023", "lacks column", T.parse_lsm_parquet, lsm_parquet(ROWS_0, drop=("action",)))
    raises(InvalidTable, "HUDI-TIMELINE-023", "not readable Parquet", T.parse_lsm_parquet, b"PAR1garbage")
    raises(InvalidTable, "HUDI-TIMELINE-006", "archived instant time", T.parse_lsm_parquet,
           lsm_parquet([{"instantTime": "42", "completionTime": None, "action": "commit"}]))
