"""Snapshots, hints, tags, branches, time travel and the layout (reference_impl.paimon.snapshot, .layout).

Real tables come from pypaimon 2.1.0 (filesystem catalog, several commits, a tag, a branch) and
are read both by the reference and by pypaimon's own managers; hand-written JSON covers what
pypaimon never writes (old snapshots, garbage hints, unknown keys and values).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conformance.roundtrip import assert_roundtrip
from conformance.suites.unit._errors import raises
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon import snapshot as S
from reference_impl.storage import LocalStorage

MIN_SNAPSHOT = {"version": 3, "id": 1, "schemaId": 0, "baseManifestList": "manifest-list-a-0",
                "deltaManifestList": "manifest-list-a-1", "commitUser": "u", "commitIdentifier": 1,
                "commitKind": "APPEND", "timeMillis": 1000, "totalRecordCount": 0, "deltaRecordCount": 0}


def write_snapshots(root, times=(1000, 2000, 3000), *, layout=L.MAIN, latest=True):
    """A hand-made snapshot directory: snapshot-1..n with the given commit times."""
    st = LocalStorage(str(root))
    for i, t in enumerate(times, 1):
        st.write_atomic(layout.snapshot_path(i), json.dumps({**MIN_SNAPSHOT, "id": i, "timeMillis": t}).encode())
    if latest:
        st.write_atomic(layout.hint_path(L.LATEST), str(len(times)).encode())
    return st


# --- pypaimon-written tables --------------------------------------------------------------------

@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """db.t: PK table, 3 commits, tag t1 (snapshot 2) and t2 with TTL (snapshot 3); branch b1 with one commit."""
    pytest.importorskip("pypaimon")
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    root = tmp_path_factory.mktemp("paimon-snap")
    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    cat.create_table("db.t", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options={"bucket": "1"}), False)
    table = cat.get_table("db.t")
    for i in range(3):
        wb = table.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.table({"id": [i], "v": [f"v{i}"]}, schema=schema))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    cat.create_tag("db.t", "t1", 2)
    cat.create_tag("db.t", "t2", 3, time_retained="1d")
    cat.create_branch("db.t", "b1", tag_name="t1")
    branch = cat.get_table("db.t$branch_b1")
    wb = branch.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.table({"id": [9], "v": ["b"]}, schema=schema))
    c.commit(w.prepare_commit())
    w.close()
    c.close()
    return cat, table, LocalStorage(str(root / "db.db" / "t"))


def py_fields(snap) -> dict:
    """pypaimon's Snapshot as {JSON key: value}."""
    names = {"schema_id": "schemaId", "base_manifest_list": "baseManifestList", "delta_manifest_list": "deltaManifestList",
             "total_record_count": "totalRecordCount", "delta_record_count": "deltaRecordCount", "commit_user": "commitUser",
             "commit_identifier": "commitIdentifier", "commit_kind": "commitKind", "time_millis": "timeMillis",
             "base_manifest_list_size": "baseManifestListSize", "delta_manifest_list_size": "deltaManifestListSize",
             "changelog_manifest_list": "changelogManifestList", "changelog_manifest_list_size": "changelogManifestListSize",
             "index_manifest": "indexManifest", "changelog_record_count": "changelogRecordCount", "watermark": "watermark",
             "statistics": "statistics", "next_row_id": "nextRowId", "properties": "properties", "uuid": "uuid",
             "writer_version": "writerVersion", "version": "version", "id": "id"}
    return {k: getattr(snap, a) for a, k in names.items() if getattr(snap, a) is not None}


@pytest.mark.rule("PAIMON-SNAP-001", "PAIMON-SNAP-005", "PAIMON-SNAP-006", "PAIMON-SNAP-007", "PAIMON-LAYOUT-002")
def test_pypaimon_snapshots_read_exactly(warehouse):
    """Every snapshot of the table reads to what pypaimon's SnapshotManager reports, and to the file's own JSON."""
    _cat, table, st = warehouse
    manager = table.snapshot_manager()
    assert S.snapshot_ids(st) == [1, 2, 3]
    assert S.check_snapshot_ids(S.snapshot_ids(st)) == []
    for s in S.list_snapshots(st):
        ours = S.snapshot_to_dict(s)
        theirs = py_fields(manager.get_snapshot_by_id(s.id))
        assert ours == theirs
        assert ours == json.loads(st.read(L.MAIN.snapshot_path(s.id)))  # nulls omitted, nothing lost
        assert set(ours) <= set(S.KEYS)
        assert S.validate_snapshot(s) == []
    assert S.latest_snapshot(st).id == manager.get_latest_snapshot().id == 3
    assert S.earliest_snapshot(st).id == 1


@pytest.mark.rule("PAIMON-SNAP-005", "PAIMON-SNAP-013")
def test_snapshot_json_roundtrip(warehouse):
    """parse -> to_dict -> parse is the identity and the dict is stable (one round-trip helper)."""
    st = warehouse[2]
    for s in S.list_snapshots(st):
        assert_roundtrip(s, S.snapshot_to_dict, S.parse_snapshot, label=f"snapshot-{s.id}")


@pytest.mark.rule("PAIMON-SNAP-005")
def test_pypaimon_tags(warehouse):
    """Tags read as their snapshot plus tagCreateTime / tagTimeRetained, as pypaimon's TagManager reads them."""
    _cat, table, st = warehouse
    assert S.tag_names(st) == ["t1", "t2"]
    t1, t2 = S.load_tag(st, "t1"), S.load_tag(st, "t2")
    py1, py2 = table.tag_manager().get("t1"), table.tag_manager().get("t2")
    assert (t1.id, t1.tag_create_time, t1.tag_time_retained) == (py1.id, None, None) == (2, None, None)
    assert t2.id == py2.id == 3
    assert t2.tag_time_retained == py2.tag_time_retained == dt.timedelta(days=1)
    assert t2.tag_create_time == py2.tag_create_time and t2.tag_create_time is not None
    assert S.snapshot_to_dict(t1) == S.snapshot_to_dict(S.load_snapshot(st, 2))


@pytest.mark.rule("PAIMON-LAYOUT-001")
def test_pypaimon_branch(warehouse):
    """A branch has its own snapshot/, schema/ and tag/ directories; its snapshots read on their own."""
    _cat, _table, st = warehouse
    assert L.list_branches(st) == ["b1"]
    b1 = L.layout_for(st, "b1")
    assert b1.snapshot_dir == "branch/branch-b1/snapshot" and b1.manifest_dir == "manifest"
    ids = S.snapshot_ids(st, b1)
    assert ids[-1] == S.latest_snapshot_id(st, b1)
    latest = S.select_snapshot(st, branch="b1")
    assert latest.id == ids[-1] and latest.total_record_count == 3  # t1's two rows + one branch commit
    assert S.select_snapshot(st, branch="main").id == 3
    err = raises(InvalidTable, None, "branches: b1", S.select_snapshot, st, branch="nope")
    assert "no branch named 'nope'" in err.message


@pytest.mark.rule("PAIMON-SNAP-001")
def test_time_travel_against_pypaimon(warehouse):
    """By id, tag and timestamp the reference picks what pypaimon picks; missing targets name what exists."""
    _cat, table, st = warehouse
    manager = table.snapshot_manager()
    snaps = S.list_snapshots(st)
    for s in snaps:
        assert S.select_snapshot(st, snapshot_id=s.id).id == s.id
        assert S.select_snapshot(st, timestamp_ms=s.time_millis).id == manager.earlier_or_equal_time_mills(s.time_millis).id
    assert S.select_snapshot(st, timestamp_ms=snaps[-1].time_millis + 10_000).id == 3
    assert S.select_snapshot(st, tag="t1").id == 2
    raises(InvalidTable, "PAIMON-SNAP-001", "the earliest available is 1, the latest 3", S.select_snapshot, st, snapshot_id=7)
    raises(InvalidTable, None, "tags: t1, t2", S.select_snapshot, st, tag="nope")
    first = snaps[0].time_millis
    raises(InvalidTable, None, f"the earliest, snapshot 1, was committed at {first} ms", S.select_snapshot, st, timestamp_ms=first - 1)
    assert manager.earlier_or_equal_time_mills(first - 1) is None
    raises(InvalidTable, None, "at most one", S.select_snapshot, st, snapshot_id=1, tag="t1")


@pytest.mark.rule("PAIMON-SNAP-003", "PAIMON-SNAP-004")
@pytest.mark.parametrize("hint, why", [(b"1", "stale"), (b"99", "past the end"), (b"", "empty"), (b"abc", "garbage"),
                                       (b"-3", "negative"), (b"03", "padded"), (b"\xff\xfe", "not text"), (None, "missing")])
def test_latest_hint_never_wins_over_the_listing(warehouse, tmp_path, hint, why):
    """Whatever LATEST holds, the latest snapshot is the true one (pypaimon agrees on a copy of the table)."""
    import shutil

    _cat, table, st = warehouse
    copy = tmp_path / "t"
    shutil.copytree(st.base, copy)
    c = LocalStorage(str(copy))
    if hint is None:
        c.delete(L.MAIN.hint_path(L.LATEST))
    else:
        c.write_atomic(L.MAIN.hint_path(L.LATEST), hint)
    assert S.latest_snapshot_id(c) == 3, why
    from pypaimon.snapshot.snapshot_manager import SnapshotManager

    assert SnapshotManager(table.file_io, str(copy)).get_latest_snapshot().id == 3, why


@pytest.mark.rule("PAIMON-SNAP-003", "PAIMON-SNAP-004")
def test_earliest_hint_and_expired_snapshots(tmp_path):
    """EARLIEST pointing at an expired snapshot, or past the true earliest, falls back to the listing."""
    st = write_snapshots(tmp_path, (1000, 2000, 3000, 4000))
    st.delete(L.MAIN.snapshot_path(1))
    st.write_atomic(L.MAIN.hint_path(L.EARLIEST), b"1")
    assert S.earliest_snapshot_id(st) == 2
    st.write_atomic(L.MAIN.hint_path(L.EARLIEST), b"3")  # snapshot-2 still exists: the hint is too high
    assert S.earliest_snapshot_id(st) == 2
    st.write_atomic(L.MAIN.hint_path(L.EARLIEST), b"2")
    assert S.earliest_snapshot_id(st) == 2
    raises(InvalidTable, "PAIMON-SNAP-001", "the earliest available is 2, the latest 4", S.load_snapshot, st, 1)


@pytest.mark.rule("PAIMON-SNAP-004", "PAIMON-LAYOUT-002")
def test_listing_ignores_names_that_are_not_snapshots(tmp_path):
    """Temp files, padded or signed ids, and other names beside snapshot-N are not snapshots."""
    st = write_snapshots(tmp_path, (1000, 2000))
    for name in ("snapshot-7.tmp", "snapshot-07", "snapshot-+7", "snapshot-", "snapshot-99999999999999999999", "LATEST2"):
        st.write_atomic(f"snapshot/{name}", b"{}")
    assert S.snapshot_ids(st) == [1, 2]
    st.delete(L.MAIN.hint_path(L.LATEST))
    assert S.latest_snapshot_id(st) == 2


@pytest.mark.rule("PAIMON-SNAP-001")
def test_empty_table(tmp_path):
    """No snapshot directory: no latest, and selecting one says the table has none."""
    st = LocalStorage(str(tmp_path))
    assert S.latest_snapshot(st) is None and S.earliest_snapshot(st) is None
    assert S.select_snapshot(st) is None
    raises(InvalidTable, "PAIMON-SNAP-001", "has no snapshots", S.select_snapshot, st, snapshot_id=1)
    raises(InvalidTable, None, "has no snapshots", S.select_snapshot, st, timestamp_ms=5)


@pytest.mark.rule("PAIMON-SNAP-001")
def test_timestamp_selection_between_and_on_commits(tmp_path):
    """The latest snapshot committed at or before the time; exactly on a commit picks that commit."""
    st = write_snapshots(tmp_path, (1000, 2000, 3000, 4000, 5000))
    assert [S.snapshot_at(st, t).id for t in (1000, 1999, 2000, 4500, 10**12)] == [1, 1, 2, 4, 5]
    raises(InvalidTable, None, "no snapshot at or before 999 ms", S.snapshot_at, st, 999)


# --- hand-written snapshot JSON -----------------------------------------------------------------


@pytest.mark.rule("PAIMON-SNAP-013", "PAIMON-SNAP-019", "PAIMON-SNAP-020")
def test_optional_keys_missing_and_unknown_keys_ignored():
    """Old snapshots lack uuid and list sizes; unknown keys (and the legacy logOffsets) are ignored."""
    s = S.parse_snapshot({**MIN_SNAPSHOT, "logOffsets": {"0": 5}, "futureKey": [1, {"x": None}]})
    assert s.uuid is None and s.base_manifest_list_size is None and s.changelog_manifest_list is None
    assert s.index_manifest is None and s.properties is None and s.operation is None
    assert S.snapshot_to_dict(s) == MIN_SNAPSHOT


@pytest.mark.rule("PAIMON-SNAP-006", "PAIMON-SNAP-015")
def test_table_store_era_snapshot():
    """Snapshots of Paimon <= 0.3 have no record counts, <= 0.2 no version: both read."""
    node = {k: v for k, v in MIN_SNAPSHOT.items() if k not in ("version", "totalRecordCount", "deltaRecordCount")}
    s = S.parse_snapshot(json.dumps(node).encode())
    assert s.version is None and s.total_record_count is None and s.delta_record_count is None
    assert [v.rule for v in S.validate_snapshot(s)] == ["PAIMON-SNAP-006"]


@pytest.mark.rule("PAIMON-SNAP-006")
def test_newer_snapshot_version_is_unsupported():
    raises(Unsupported, "PAIMON-SNAP-006", "version 4 is newer", S.parse_snapshot, {**MIN_SNAPSHOT, "version": 4})


@pytest.mark.rule("PAIMON-SNAP-012")
@pytest.mark.parametrize("kind", ["append", "MERGE", "", 3, None])
def test_unknown_commit_kind_is_an_error(kind):
    node = dict(MIN_SNAPSHOT, commitKind=kind)
    if kind is None:
        del node["commitKind"]
    raises(InvalidTable, "PAIMON-SNAP-012", "commitKind", S.parse_snapshot, node)


@pytest.mark.rule("PAIMON-SNAP-018")
def test_operations():
    """Known operations validate; an unknown one reads (it is informational) but is reported."""
    for op in S.OPERATIONS:
        assert S.validate_snapshot(S.parse_snapshot({**MIN_SNAPSHOT, "operation": op})) == []
    s = S.parse_snapshot({**MIN_SNAPSHOT, "operation": "RESTORE"})
    assert [v.rule for v in S.validate_snapshot(s)] == ["PAIMON-SNAP-018"]


@pytest.mark.rule("PAIMON-SNAP-014")
def test_watermark_min_value_means_none():
    assert S.parse_snapshot({**MIN_SNAPSHOT, "watermark": -(1 << 63)}).effective_watermark is None
    assert S.parse_snapshot(MIN_SNAPSHOT).effective_watermark is None
    assert S.parse_snapshot({**MIN_SNAPSHOT, "watermark": 42}).effective_watermark == 42


@pytest.mark.rule("PAIMON-SNAP-005")
@pytest.mark.parametrize("key, value, rule", [
    ("id", "1", "PAIMON-SNAP-007"), ("id", 1.0, "PAIMON-SNAP-007"), ("id", True, "PAIMON-SNAP-007"), ("id", -1, "PAIMON-SNAP-007"),
    ("schemaId", 1 << 63, "PAIMON-SNAP-008"), ("baseManifestList", 5, "PAIMON-SNAP-009"), ("commitUser", None, "PAIMON-SNAP-017"),
    ("properties", {"a": 1}, "PAIMON-SNAP-005"), ("properties", [], "PAIMON-SNAP-005"), ("version", 0, "PAIMON-SNAP-006"),
    ("timeMillis", "now", "PAIMON-SNAP-005"),
])
def test_wrong_types_name_key_and_rule(key, value, rule):
    node = dict(MIN_SNAPSHOT, **{key: value})
    if value is None:
        del node[key]
    raises(InvalidTable, rule, repr(key), S.parse_snapshot, node)


@pytest.mark.rule("PAIMON-SNAP-005")
@pytest.mark.parametrize("data", [b"", b"[]", b"{", b"\xff", b"[" * 100_000 + b"]" * 100_000, b"null"])
def test_unreadable_snapshot_files(data):
    raises(InvalidTable, "PAIMON-SNAP-005", "snapshot", S.parse_snapshot, data)


@pytest.mark.rule("PAIMON-SNAP-007")
def test_id_must_match_the_file_name(tmp_path):
    st = write_snapshots(tmp_path, (1000, 2000))
    st.write_atomic(L.MAIN.snapshot_path(2), json.dumps({**MIN_SNAPSHOT, "id": 5}).encode())
    raises(InvalidTable, "PAIMON-SNAP-007", "snapshot-2 holds snapshot id 5", S.load_snapshot, st, 2)


@pytest.mark.rule("PAIMON-SNAP-005")
def test_java_tag_format():
    """Jackson writes LocalDateTime as an array without trailing zeros and Duration as decimal seconds."""
    t = S.parse_tag(json.dumps({**MIN_SNAPSHOT, "tagCreateTime": [2024, 5, 14, 10, 30], "tagTimeRetained": 0})
                    .replace('"tagTimeRetained": 0', '"tagTimeRetained": 3600.500000000').encode(), name="x")
    assert t.tag_create_time == dt.datetime(2024, 5, 14, 10, 30)
    assert t.tag_time_retained == dt.timedelta(hours=1, milliseconds=500)
    t = S.parse_tag({**MIN_SNAPSHOT, "tagCreateTime": [2024, 5, 14, 10, 30, 1, 123456789]})
    assert t.tag_create_time == dt.datetime(2024, 5, 14, 10, 30, 1, 123456)
    raises(InvalidTable, "PAIMON-SNAP-005", "tagCreateTime", S.parse_tag, {**MIN_SNAPSHOT, "tagCreateTime": [2024, 13, 1, 0, 0]})
    raises(InvalidTable, "PAIMON-SNAP-005", "tagTimeRetained", S.parse_tag, {**MIN_SNAPSHOT, "tagTimeRetained": "1d"})


@pytest.mark.rule("PAIMON-SNAP-001")
def test_snapshot_id_gaps_are_reported():
    assert S.check_snapshot_ids([3, 4, 5]) == []
    assert [v.rule for v in S.check_snapshot_ids([1, 2, 4])] == ["PAIMON-SNAP-001"]
    assert [v.rule for v in S.check_snapshot_ids([0, 1])] == ["PAIMON-SNAP-001"]


# --- layout ---------------------------------------------------------------------------------------


@pytest.mark.rule("PAIMON-LAYOUT-002", "PAIMON-LAYOUT-003")
def test_ids_in_names_are_strict():
    assert [L.parse_id(t) for t in ("0", "7", "9223372036854775807")] == [0, 7, (1 << 63) - 1]
    for bad in ("", "07", "+7", "-7", " 7", "7 ", "٣", "²", "9223372036854775808", "1" * 40, "1_000", 7, None):
        assert L.parse_id(bad) is None, bad
    assert L.versioned_id("snapshot-12", L.SNAPSHOT_PREFIX) == 12
    assert L.versioned_id("schema-12", L.SNAPSHOT_PREFIX) is None


@pytest.mark.rule("PAIMON-LAYOUT-004", "PAIMON-LAYOUT-005", "PAIMON-LAYOUT-006", "PAIMON-LAYOUT-007")
def test_generated_names():
    u = "51c16f7b-421c-4bc0-80a0-17677f343358"
    assert L.name_matches("manifest-list", f"manifest-list-{u}-1")
    assert L.name_matches("manifest", f"manifest-{u}-0") and not L.name_matches("manifest", f"manifest-list-{u}-0")
    assert L.name_matches("index-manifest", f"index-manifest-{u}-0")
    assert not L.name_matches("index-manifest", f"index-manifest-{u}")  # what pypaimon 2.1.0 writes (finding)
    assert L.name_matches("index", f"index-{u}-3") and not L.name_matches("index", f"index-{u}-03")


@pytest.mark.rule("PAIMON-MLIST-005")
@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".", "", "a\\b", "a\x00b", "x\n", None, 5, "a" * 2000])
def test_names_from_metadata_must_be_bare(name):
    raises(InvalidTable, "PAIMON-MLIST-005", "", L.bare_name, name, what="manifest file name", rule="PAIMON-MLIST-005")


@pytest.mark.rule("PAIMON-LAYOUT-001", "PAIMON-LAYOUT-010")
def test_layout_paths():
    b = L.Layout("dev")
    assert (b.snapshot_path(3), b.schema_path(0), b.tag_path("v1"), b.hint_path(L.LATEST)) == (
        "branch/branch-dev/snapshot/snapshot-3", "branch/branch-dev/schema/schema-0", "branch/branch-dev/tag/tag-v1",
        "branch/branch-dev/snapshot/LATEST")
    assert (b.changelog_path(4), b.consumer_path("c"), b.manifest_path("m")) == (
        "branch/branch-dev/changelog/changelog-4", "branch/branch-dev/consumer/consumer-c", "manifest/m")
    assert (L.MAIN.snapshot_path(1), L.MAIN.index_path("index-x"), L.MAIN.statistics_path("stat-x")) == (
        "snapshot/snapshot-1", "index/index-x", "statistics/stat-x")
    assert (L.bucket_dir(3), L.bucket_dir(-2)) == ("bucket-3", "bucket-postpone")
    for bad in ("", " ", "../x", "a/b"):
        with pytest.raises(InvalidTable):
            L.Layout(bad)
    with pytest.raises(InvalidTable):
        L.MAIN.tag_path("../../etc")


@pytest.mark.rule("PAIMON-SNAP-004")
def test_branch_with_its_own_hints(tmp_path):
    """A branch's hints and snapshots are its own; a tag name that would escape is refused."""
    b = L.Layout("dev")
    write_snapshots(tmp_path, (1000,))
    st = write_snapshots(tmp_path, (500, 600, 700), layout=b)
    st.write_atomic(b.hint_path(L.LATEST), b"1")
    assert S.latest_snapshot_id(st) == 1 and S.latest_snapshot_id(st, b) == 3
    assert S.select_snapshot(st, branch="dev", timestamp_ms=650).id == 2
    with pytest.raises(InvalidTable):
        S.select_snapshot(st, tag="../snapshot/snapshot-1")
