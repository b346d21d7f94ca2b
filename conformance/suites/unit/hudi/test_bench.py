"""The Hudi planning benchmark (conformance.formats.hudi.bench) at tiny sizes: the table it builds is what the
reference plans and reads, hudi-rs plans and reads the same, and the figures carry the expected keys."""

from __future__ import annotations

import importlib
import os

import pytest

from conformance.formats.hudi import bench as B
from reference_impl.hudi import fileslices as FS
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import properties as P
from reference_impl.hudi import table as H
from reference_impl.hudi import timeline as T
from reference_impl.hudi.validate import validate_table
from reference_impl.storage import LocalStorage

ENGINE_KEYS = {"median_seconds", "median_cpu_seconds", "all_seconds", "peak_rss_mb", "baseline_rss_mb", "slices", "digest"}
SMALL = dict(partitions=2, groups_per_partition=6, commits=8, logs_per_commit=3, compaction_every=4, compaction_groups=4)


def _need_hudi_rs() -> None:
    if os.environ.get("LAKECONF_REQUIRE_ENGINES", "") in ("", "0", "false"):
        pytest.importorskip("hudi", reason=B.INSTALL_HINT)
    else:
        importlib.import_module("hudi")  # required: fail rather than skip


@pytest.mark.parametrize("version", [8, 9])
def test_built_table_is_what_the_reference_plans_and_reads(tmp_path, version):
    """Layout 2 timeline with Avro commit metadata, v8 log names (the delta commit's requested time), compacted
    groups whose older slice's logs are not planned; the snapshot read merges logs over base files."""
    path = str(tmp_path / "t")
    built = B.build_table(path, version=version, rows_per_base=5, rows_per_log=3, progress=False, **SMALL)
    assert built["file_groups"] == 12 and built["log_files"] == 24 and built["compactions"] == 2
    assert built["completed_instants"] == 2 + 8 + 2 and built["base_files"] == 12 + 2 * 4
    storage = LocalStorage(path)
    config = P.read_table_config(storage)
    assert config.version == version and config.timeline_layout_version == 2 and config.is_mor
    timeline = T.load_active_timeline(storage, config)
    assert len(timeline.completed()) == built["completed_instants"]
    slices = FS.build_view(storage, config, timeline).latest_slices()
    assert B._plan_digest(B._as_plan("reference", slices)) == built["plan_digest"]
    assert sum(len(s.log_files) for s in slices) == built["planned_logs"] < built["log_files"]
    log = next(lg for s in slices for lg in s.log_files)
    blocks = LF.load_log_file(storage, log.path)
    assert [b.block_type for b in blocks] == [LF.BlockType.AVRO_DATA]
    assert blocks[0].header[LF.HeaderKey.INSTANT_TIME] == log.name.instant  # v8+: named by its delta commit
    rows = H.read_table(path)
    assert B._rows_digest(rows) == (built["rows"], built["rows_digest"])
    assert validate_table(path) == []  # the reference validator finds no broken rule


def test_both_engines_plan_the_same_slices(tmp_path):
    """The whole benchmark, tiny: fresh subprocesses per engine, digests equal to each other and to the builder's."""
    _need_hudi_rs()
    result = B.run_hudi(2, 8, 10, 4, repeat=1, workdir=str(tmp_path / "w"), compaction_every=5, compaction_groups=5,
                        profile=False)
    assert result["findings"] == [], result["findings"]
    for engine in ("reference", B.PEER):
        assert ENGINE_KEYS <= set(result[engine]), result[engine]
        assert result[engine]["slices"] == 16 and result[engine]["digest"] == result["built"]["plan_digest"]
    assert result["ratio"] is not None and result["load_average"] is not None


def test_both_engines_read_the_same_rows(tmp_path):
    _need_hudi_rs()
    result = B.run_merge_read(partitions=2, groups=3, commits=8, logs_per_commit=2, rows_per_base=10, rows_per_log=4, repeat=1,
                              workdir=str(tmp_path / "w"), compaction_every=4, profile=False)
    assert result["findings"] == [], result["findings"]
    assert result["reference"]["rows"] == result[B.PEER]["rows"] == result["built"]["rows"] == 6 * 10 + 8 * 2


def test_missing_peer_is_named(monkeypatch, capsys):
    monkeypatch.setattr(B, "_check_peer", lambda: B.INSTALL_HINT)
    assert B.main(["--partitions", "1", "--groups", "1", "--commits", "1"]) == 2
    assert "hudi==0.5.0" in capsys.readouterr().err


def test_reuse_keeps_a_table_built_with_the_same_sizes(tmp_path):
    wanted = dict(SMALL, version=8)
    root = str(tmp_path)
    path, built = B._prepare(root, "plan", wanted, reuse=True, own=False)
    props = os.path.join(path, ".hoodie", "hoodie.properties")
    before = os.stat(props).st_mtime_ns
    assert B._prepare(root, "plan", wanted, reuse=True, own=False) == (path, built)
    assert os.stat(props).st_mtime_ns == before  # not rebuilt
    _path, other = B._prepare(root, "plan", dict(wanted, commits=4), reuse=True, own=False)
    assert other["commits"] == 4 and other["log_files"] == 12


def test_planning_pauses_the_cyclic_gc(tmp_path, monkeypatch):
    """Planning builds objects per file, slice and group, none holding a cycle: with the GC on, its full passes
    rescanned them again and again (a third of a 100,000-group plan). It is paused, then restored."""
    import gc

    path = str(tmp_path / "t")
    B.build_table(path, rows_per_base=5, rows_per_log=3, progress=False, **SMALL)
    seen = []
    real_groups, real_slice = FS.build_file_groups, FS.FileSystemView.latest_slice
    monkeypatch.setattr(FS, "build_file_groups", lambda *a: seen.append(gc.isenabled()) or real_groups(*a))
    monkeypatch.setattr(FS.FileSystemView, "latest_slice", lambda self, g: seen.append(gc.isenabled()) or real_slice(self, g))
    assert gc.isenabled()
    slices = FS.build_view(LocalStorage(path)).latest_slices()
    assert len(slices) == 12 and len(seen) > 12 and not any(seen) and gc.isenabled()
