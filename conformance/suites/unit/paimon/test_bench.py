"""The Paimon scan-planning benchmark (conformance.formats.paimon.bench) at tiny sizes: the table it
builds is valid, both engines plan the same files, and the figures carry the expected keys."""

from __future__ import annotations

import time

import pytest

from conformance.formats.paimon import bench as B
from reference_impl.paimon import binary_row as BR
from reference_impl.paimon import manifests as M
from reference_impl.paimon import snapshot as SN
from reference_impl.paimon.types import parse_atomic
from reference_impl.paimon.validate import validate_table
from reference_impl.storage import LocalStorage

ENGINE_KEYS = {"median_seconds", "median_cpu_seconds", "all_seconds", "peak_rss_mb", "baseline_rss_mb", "files", "digest"}


@pytest.mark.parametrize("pk", [True, False])
def test_built_table_is_valid(tmp_path, pk):
    """With empty placeholder files at the data file paths, the reference validator finds nothing; a small
    manifest target size makes the minor compaction merge and roll manifests many times on the way."""
    path = str(tmp_path / "t")
    built = B.build_table(path, snapshots=45, files_per_snapshot=10, pk=pk, placeholders=True, target_manifest_bytes=20_000)
    assert built["live_files"] == 450 and built["replaced_files"] == 4 and built["manifest_merges"] > 10
    assert validate_table(path) == []


def test_without_data_files_only_their_existence_is_flagged(tmp_path):
    path = str(tmp_path / "t")
    B.build_table(path, snapshots=12, files_per_snapshot=5)
    assert {v.rule for v in validate_table(path)} == {"PAIMON-LAYOUT-010"}


def test_replay_has_deletes_and_upgrades(tmp_path):
    """The latest snapshot's manifests hold DELETE entries, and an upgraded file is live at level 5 under
    the name it had at level 0: only the level tells the two identities apart."""
    path = str(tmp_path / "t")
    B.build_table(path, snapshots=20, files_per_snapshot=20)  # 2 files replaced at snapshots 10 and 20
    storage = LocalStorage(path)
    snap = SN.latest_snapshot(storage)
    assert snap.id == 20 and snap.commit_kind == "APPEND" and SN.read_hint(storage, "EARLIEST") == 1
    entries = [e for m in M.data_manifests(storage, snap) for e in M.load_manifest(storage, m.file_name)]
    deleted = {e.file.file_name for e in entries if e.kind == M.DELETE}
    assert len(deleted) == 4
    live = M.live_files(storage, snap)
    assert len(live) == 400 and snap.total_record_count == sum(e.file.row_count for e in live)
    again = [e.file.level for e in live if e.file.file_name in deleted]
    assert again == [B.MAX_LEVEL] * 2  # the upgraded ones are live again; the rewritten ones are gone under their old names
    assert sum(1 for e in live if e.file.level == B.REWRITE_LEVEL) == 2


def test_key_rows_and_containers_match_the_reference_encoders():
    t = [parse_atomic("BIGINT NOT NULL")]
    for v in (0, 1, 10_000, 2**40 + 7):
        assert B._key_row(v) == BR.serialize_with_arity([v], t)
    records = [{"_VERSION": 2, "_KIND": 0, "_PARTITION": BR.EMPTY_ROW_SERIALIZED, "_BUCKET": i % 4, "_TOTAL_BUCKETS": 4,
                "_FILE": {"_FILE_NAME": f"data-{i}.parquet", "_FILE_SIZE": 100, "_ROW_COUNT": 1, "_MIN_KEY": B._key_row(i),
                          "_MAX_KEY": B._key_row(i), "_KEY_STATS": {"_MIN_VALUES": b"", "_MAX_VALUES": b"", "_NULL_COUNTS": None},
                          "_VALUE_STATS": {"_MIN_VALUES": b"x" * 50, "_MAX_VALUES": b"", "_NULL_COUNTS": [0, None]},
                          "_MIN_SEQUENCE_NUMBER": i, "_MAX_SEQUENCE_NUMBER": i, "_SCHEMA_ID": 0, "_LEVEL": 0,
                          "_EXTRA_FILES": [], "_CREATION_TIME": 1_700_000_000_000 + i}} for i in range(400)]
    for codec in ("null", "zstandard"):
        f = B._AvroFile(M.MANIFEST_ENTRY_SCHEMA, codec)
        assert f.same_as_encode_avro(records)  # several blocks (> 16,000 bytes)
        assert f.same_as_encode_avro([])
        assert len(M.read_manifest(f.container([f.datum(r) for r in records]))) == 400


def test_fit_exponent():  # the shared harness's fit, which every format's --scale uses
    from conformance.bench import fit_exponent

    xs = [1_000, 10_000, 100_000]
    assert fit_exponent(xs, [0.01 * x for x in xs]) == 1.0
    assert fit_exponent(xs, [1e-6 * x * x for x in xs]) == 2.0
    assert fit_exponent([10], [1.0]) is None


def test_validation_bench_in_child(tmp_path):
    [r] = B.run_validation([25], str(tmp_path))
    assert r["violations"] == 0 and r["snapshots"] == 25 and {"wall", "cpu", "peak_mb", "baseline_mb"} <= set(r)


def test_bench_smoke(tmp_path):
    """The scan-planning benchmark at a tiny size: both engines plan the same files."""
    pytest.importorskip("pypaimon")
    t = time.perf_counter()
    result = B.run_paimon(snapshots=20, files=10, repeat=1, workdir=str(tmp_path), profile=False)
    assert result["findings"] == [], result["findings"]
    for engine in ("reference", "pypaimon"):
        assert ENGINE_KEYS <= set(result[engine]), result[engine]
        assert result[engine]["files"] == 200
    assert result["reference"]["digest"] == result["pypaimon"]["digest"]
    assert {"ratio", "cpu_ratio", "load_average", "built", "repeat"} <= set(result)
    assert "reference live_files + visible vs pypaimon" in B.summary(result)
    assert time.perf_counter() - t < 30


def test_merge_read_smoke(tmp_path):
    """Real Parquet files written by the reference writer, read fully by both engines: the same rows."""
    pytest.importorskip("pypaimon")
    result = B.run_merge_read(commits=3, rows_per_commit=200, keys=300, repeat=1, workdir=str(tmp_path))
    assert result["findings"] == [], result["findings"]
    assert result["reference"]["rows"] == result["pypaimon"]["rows"] > 0
    assert "reference read_table vs pypaimon to_arrow" in B.merge_summary(result)


def test_planning_pauses_the_cyclic_gc(tmp_path, monkeypatch):
    """Replaying manifests builds an object per entry: with the GC on, its full passes rescanned them all again and
    again (a third of a 100,000-file plan, growing with the square of the size). It is paused, then restored."""
    import gc

    path = str(tmp_path / "t")
    B.build_table(path, snapshots=12, files_per_snapshot=5)
    seen = []
    real = M.merge_entries
    monkeypatch.setattr(M, "merge_entries", lambda entries, state: seen.append(gc.isenabled()) or real(entries, state))
    assert gc.isenabled()
    files = M.live_files(LocalStorage(path), SN.latest_snapshot(LocalStorage(path)))
    assert len(files) == 60 and seen and not any(seen) and gc.isenabled()
