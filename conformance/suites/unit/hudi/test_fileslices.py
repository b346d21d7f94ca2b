"""Hudi file system view (reference_impl.hudi.fileslices): partitions, file groups, slicing by name (v6) and by
completion time (v8), uncommitted and rolled-back files, pending compaction, replace commits, read points."""

from __future__ import annotations

import pytest

from conformance.suites.unit.hudi._tables import P1, Table, fid, t
from reference_impl.errors import Unsupported
from reference_impl.hudi import fileslices as FS


def _view(tb: Table, **point) -> FS.FileSystemView:
    return FS.build_view(tb.storage, point=FS.ReadPoint(**point))


def _group(view: FS.FileSystemView, n: int = 1) -> FS.FileGroup:
    return next(g for g in view.file_groups if g.file_id == fid(n))


def _names(s: FS.FileSlice) -> tuple:
    return (s.base_instant, s.base_file.instant if s.base_file else None, tuple(lg.name.instant for lg in s.log_files))


@pytest.mark.rule("HUDI-FILE-001")
def test_partitions_are_directories_with_partition_metadata(tmp_path):
    tb = Table(tmp_path)
    tb.base("part=p1", fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.base("part=x/1", fid(2), t(1), [Table.row("k2", 1, "b", t(1), part="x/1")])
    tb.put("stray/" + "00000009-aaaa-bbbb-cccc-dddddddddddd-0_0-1-1_" + t(1) + ".parquet", b"PAR1")  # no metafile
    tb.commit(t(1), t(2))
    view = _view(tb)
    assert view.partitions == ("part=p1", "part=x/1")
    assert sorted((g.partition, g.file_id) for g in view.file_groups) == [("part=p1", fid(1)), ("part=x/1", fid(2))]


@pytest.mark.rule("HUDI-FILE-012")
def test_v6_log_joins_the_slice_its_name_carries(tmp_path):
    tb = Table(tmp_path, version=6)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1))
    tb.log(P1, fid(1), t(1), [Table.data_block(t(2), [Table.row("k1", 2, "b", t(2))])])
    tb.commit(t(2))
    tb.compaction_plan(t(3), [(P1, fid(1))], complete=t(3))
    tb.base(P1, fid(1), t(3), [Table.row("k1", 2, "b", t(2))])
    tb.log(P1, fid(1), t(3), [Table.data_block(t(4), [Table.row("k1", 3, "c", t(4))])])
    tb.commit(t(4))
    g = _group(_view(tb))
    assert [_names(s) for s in g.slices] == [(t(1), t(1), (t(1),)), (t(3), t(3), (t(3),))]


@pytest.mark.rule("HUDI-FILE-011")
def test_v8_log_joins_the_slice_by_its_completion_time(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    # delta commit t(3) is requested before the compaction t(4) but completes after it (t(6)): its log belongs
    # to the compaction's slice, though its name carries t(3).
    tb.compaction_plan(t(4), [(P1, fid(1))], complete=t(5))
    tb.base(P1, fid(1), t(4), [Table.row("k1", 1, "a", t(1))])
    tb.log(P1, fid(1), t(3), [Table.data_block(t(3), [Table.row("k1", 3, "c", t(3))])])
    tb.commit(t(3), t(6))
    # delta commit t(7), completed t(8): after the compaction, also in its slice
    tb.log(P1, fid(1), t(7), [Table.data_block(t(7), [Table.row("k1", 7, "d", t(7))])])
    tb.commit(t(7), t(8))
    g = _group(_view(tb))
    assert [_names(s) for s in g.slices] == [(t(1), t(1), ()), (t(4), t(4), (t(3), t(7)))]
    # completion order within a slice
    assert [lg.completion_time for lg in g.slices[-1].log_files] == [t(6), t(8)]


@pytest.mark.rule("HUDI-FILE-011")
def test_v8_log_completed_before_the_base_stays_in_the_older_slice(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.log(P1, fid(1), t(3), [Table.data_block(t(3), [Table.row("k1", 3, "c", t(3))])])
    tb.commit(t(3), t(4))
    tb.compaction_plan(t(5), [(P1, fid(1))], complete=t(6))
    tb.base(P1, fid(1), t(5), [Table.row("k1", 3, "c", t(3))])
    g = _group(_view(tb))
    assert [_names(s) for s in g.slices] == [(t(1), t(1), (t(3),)), (t(5), t(5), ())]


@pytest.mark.rule("HUDI-FILE-003")
def test_v8_log_only_group_is_one_slice_keyed_by_its_first_log(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.log(P1, fid(1), t(1), [Table.data_block(t(1), [Table.row("k1", 1, "a", t(1))])])
    tb.commit(t(1), t(2))
    tb.log(P1, fid(1), t(3), [Table.data_block(t(3), [Table.row("k1", 3, "b", t(3))])])
    tb.commit(t(3), t(4))
    g = _group(_view(tb))
    assert [_names(s) for s in g.slices] == [(t(1), None, (t(1), t(3)))]


@pytest.mark.rule("HUDI-FILE-010")
@pytest.mark.rule("HUDI-TIMELINE-019")
def test_files_of_pending_instants_are_ignored(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.base(P1, fid(1), t(3), [Table.row("k1", 3, "x", t(3))])  # inflight commit's new base file
    tb.pending(t(3), "commit")
    tb.log(P1, fid(1), t(4), [Table.data_block(t(4), [Table.row("k1", 4, "y", t(4))])])  # inflight delta commit
    tb.pending(t(4))
    view = _view(tb)
    assert [_names(s) for s in _group(view).slices] == [(t(1), t(1), ())]
    assert _names(view.latest_slices()[0]) == (t(1), t(1), ())


@pytest.mark.rule("HUDI-TIMELINE-020")
def test_files_of_rolled_back_instants_are_ignored_even_before_the_timeline_starts(tmp_path):
    tb = Table(tmp_path, version=6)
    # t(1) failed and was rolled back (its timeline files are gone); its base file was left behind. It is older
    # than the first write of the active timeline, which alone would make it count as archived.
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "ghost", t(1))])
    tb.rollback(t(2), None, t(1), "commit")
    tb.base(P1, fid(2), t(3), [Table.row("k2", 3, "b", t(3))])
    tb.commit(t(3), action="commit")
    view = _view(tb)
    assert [(s.file_id, s.base_instant) for s in view.latest_slices()] == [(fid(2), t(3))]


@pytest.mark.rule("HUDI-TIMELINE-021")
def test_files_older_than_the_active_timeline_count_as_archived(tmp_path):
    tb = Table(tmp_path, version=6)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])  # its commit was archived
    tb.base(P1, fid(2), t(3), [Table.row("k2", 3, "b", t(3))])
    tb.commit(t(3), action="commit")
    assert sorted(s.file_id for s in _view(tb).latest_slices()) == [fid(1), fid(2)]


@pytest.mark.rule("HUDI-FILE-014")
def test_pending_compaction_merges_the_slice_before_it(tmp_path):
    tb = Table(tmp_path, version=6)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1))
    tb.log(P1, fid(1), t(1), [Table.data_block(t(2), [Table.row("k1", 2, "b", t(2))])])
    tb.commit(t(2))
    tb.compaction_plan(t(3), [(P1, fid(1))])  # pending: the compactor may have left a partial base file
    tb.base(P1, fid(1), t(3), [Table.row("k1", 2, "partial", t(2))])
    tb.log(P1, fid(1), t(3), [Table.data_block(t(4), [Table.row("k1", 4, "c", t(4))])])
    tb.commit(t(4))
    view = _view(tb)
    g = _group(view)
    assert [_names(s) for s in g.slices] == [(t(1), t(1), (t(1),)), (t(3), None, (t(3),))]
    assert _names(view.latest_slice(g)) == (t(1), t(1), (t(1), t(3)))
    assert [b.instant for b in view.latest_base_files()] == [t(1)]  # read-optimized never takes it


@pytest.mark.rule("HUDI-FILE-014")
def test_v8_pending_compaction_slice_takes_later_logs(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.compaction_plan(t(3), [(P1, fid(1))])
    tb.log(P1, fid(1), t(4), [Table.data_block(t(4), [Table.row("k1", 4, "c", t(4))])])
    tb.commit(t(4), t(5))
    view = _view(tb)
    g = _group(view)
    assert [_names(s) for s in g.slices] == [(t(1), t(1), ()), (t(3), None, (t(4),))]
    assert _names(view.latest_slice(g)) == (t(1), t(1), (t(4),))


@pytest.mark.rule("HUDI-COMMIT-004")
def test_replacecommit_hides_file_groups_from_its_instant_on(tmp_path):
    tb = Table(tmp_path, version=8, table_type="COPY_ON_WRITE")
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.base(P1, fid(2), t(3), [Table.row("k9", 3, "z", t(3))])
    tb.commit(t(3), t(4), action="replacecommit", replaced={P1: [fid(1)]})
    assert [s.file_id for s in _view(tb).latest_slices()] == [fid(2)]
    assert [s.file_id for s in _view(tb, as_of=t(1)).latest_slices()] == [fid(1)]
    assert [s.file_id for s in _view(tb, as_of_completion=t(3)).latest_slices()] == [fid(1)]


@pytest.mark.rule("HUDI-FILE-013")
def test_read_point_by_requested_and_by_completion_time(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.log(P1, fid(1), t(3), [Table.data_block(t(3), [Table.row("k1", 3, "b", t(3))])])
    tb.commit(t(3), t(9))  # long-running: completes last
    tb.log(P1, fid(1), t(5), [Table.data_block(t(5), [Table.row("k1", 5, "c", t(5))])])
    tb.commit(t(5), t(6))
    logs = lambda view: _names(view.latest_slices()[0])[2]  # noqa: E731
    assert logs(_view(tb)) == (t(5), t(3))  # completion order
    assert logs(_view(tb, as_of=t(4))) == (t(3),)
    assert logs(_view(tb, as_of_completion=t(7))) == (t(5),)
    assert logs(_view(tb, as_of=t(1))) == ()


@pytest.mark.rule("HUDI-TIMELINE-014")
def test_completion_time_read_point_needs_v8(tmp_path):
    tb = Table(tmp_path, version=6)
    tb.commit(t(1))
    with pytest.raises(Unsupported, match="completion time"):
        _view(tb, as_of_completion=t(1))


@pytest.mark.rule("HUDI-FILE-006")
def test_cdc_logs_and_crc_files_are_not_data(tmp_path):
    tb = Table(tmp_path, version=8)
    tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    tb.commit(t(1), t(2))
    tb.put(f"{P1}/.{fid(1)}_{t(1)}.log.1_0-1-1.cdc", b"#HUDI#")
    tb.put(f"{P1}/.{fid(1)}_0-1-1_{t(1)}.parquet.crc", b"x")
    assert [_names(s) for s in _group(_view(tb)).slices] == [(t(1), t(1), ())]
