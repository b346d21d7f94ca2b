"""Delta Log Entries, checkpoint naming, the Last Checkpoint File and log segments."""

from __future__ import annotations

import json

import pytest

from reference_impl.delta import log as L
from reference_impl.delta.log import (
    build_segment,
    canonical_json,
    commit_path,
    last_checkpoint_checksum,
    list_log,
    parse_log_file_name,
    read_last_checkpoint,
    write_last_checkpoint,
)
from reference_impl.errors import InvalidTable

from . import LogBuilder, add, metadata, protocol

V5 = "00000000000000000005"


@pytest.mark.rule("DELTA-LOG-004")
def test_commit_path_is_20_digit_zero_padded():
    assert commit_path(5) == f"_delta_log/{V5}.json"
    assert parse_log_file_name(f"{V5}.json").version == 5
    assert parse_log_file_name("1.json") is None  # unpadded: not version 1
    assert parse_log_file_name("0000000000000000005.json") is None  # 19 digits
    with pytest.raises(InvalidTable, match="negative"):
        commit_path(-1)


@pytest.mark.rule("DELTA-CKPT-011", "DELTA-CKPT-012", "DELTA-CKPT-013")
def test_checkpoint_names():
    classic = parse_log_file_name(f"{V5}.checkpoint.parquet")
    assert classic.kind == L.KIND_CLASSIC and classic.version == 5
    mp = parse_log_file_name(f"{V5}.checkpoint.0000000002.0000000003.parquet")
    assert (mp.kind, mp.part, mp.num_parts) == (L.KIND_MULTIPART, 2, 3)
    assert parse_log_file_name(f"{V5}.checkpoint.1.3.parquet") is None
    assert parse_log_file_name(f"{V5}.checkpoint.0000000004.0000000003.parquet") is None  # o > p
    assert parse_log_file_name(f"{V5}.checkpoint.0000000001.0000000001.parquet") is None  # p must be > 1
    uid = "80a083e8-7026-4e79-81be-64bd76c43a11"
    for ext in ("json", "parquet"):
        v2 = parse_log_file_name(f"{V5}.checkpoint.{uid}.{ext}")
        assert (v2.kind, v2.uuid, v2.ext) == (L.KIND_V2, uid, ext)
    assert parse_log_file_name(f"{V5}.checkpoint.not-a-uuid.json") is None
    assert L.multipart_checkpoint_path(5, 1, 3) == f"_delta_log/{V5}.checkpoint.0000000001.0000000003.parquet"
    assert L.v2_checkpoint_path(5, uid, "json") == f"_delta_log/{V5}.checkpoint.{uid}.json"


@pytest.mark.rule("DELTA-LOG-012", "DELTA-CRC-001")
def test_compaction_and_crc_names():
    c = parse_log_file_name("00000000000000000004.00000000000000000006.compacted.json")
    assert (c.kind, c.version, c.end_version) == (L.KIND_COMPACTION, 4, 6)
    assert parse_log_file_name(f"{V5}.{V5}.compacted.json") is None  # y must be > x
    assert parse_log_file_name("00000000000000000006.00000000000000000004.compacted.json") is None
    assert parse_log_file_name(f"{V5}.crc").kind == L.KIND_CRC
    assert parse_log_file_name("_last_checkpoint").kind == L.KIND_LAST_CHECKPOINT
    assert parse_log_file_name("README.txt") is None


@pytest.mark.rule("DELTA-CKPT-029")
def test_last_checkpoint_checksum_matches_the_spec_sample():
    sample = ('{"k0":"\'v 0\'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], '
              '{"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}')
    obj = json.loads(sample)
    assert canonical_json(obj) == ('"k0"="%27v%200%27","k1"+"k2"=2,"k1"+"k3"+0="v3","k1"+"k3"+1+0=1,'
                                   '"k1"+"k3"+1+1=2,"k1"+"k3"+2+"k4"="v4","k1"+"k3"+2+"k5"+0="v5",'
                                   '"k1"+"k3"+2+"k5"+1="v6","k1"+"k3"+2+"k5"+2="v7"')
    assert last_checkpoint_checksum(obj) == "6a92d155a59bf2eecbd4b4ec7fd1f875"


@pytest.mark.rule("DELTA-CKPT-027", "DELTA-CKPT-029", "DELTA-CKPT-030")
def test_last_checkpoint_read_write_and_corruption(tmp_path):
    b = LogBuilder(tmp_path)
    assert read_last_checkpoint(b.storage) is None  # missing
    write_last_checkpoint(b.storage, {"version": 3, "size": 10, "parts": None})
    body = json.loads((tmp_path / "_delta_log" / "_last_checkpoint").read_text())
    assert body["checksum"] == last_checkpoint_checksum(body) and "parts" not in body
    assert read_last_checkpoint(b.storage)["version"] == 3
    lc = tmp_path / "_delta_log" / "_last_checkpoint"
    for bad in ('{"version": 3, "size": 10, "checksum": "00000000000000000000000000000000"}',  # mismatch
                '{"version": 3, "version": 4, "size": 1}',  # duplicate key
                '{"version": 3}',  # no size
                '{"version": "3", "size": 1}',
                '{"version": 3, "siz',  # truncated
                '[3]'):
        lc.write_text(bad)
        assert read_last_checkpoint(b.storage) is None, bad
    lc.write_text('{"version": 3, "size": 1}')  # no checksum: trusted
    assert read_last_checkpoint(b.storage) == {"version": 3, "size": 1}


def _table(tmp_path, versions):
    b = LogBuilder(tmp_path)
    for v in versions:
        b.commit(v, [protocol(), metadata()] if v == 0 else [add(f"f{v}.parquet")])
    return b


@pytest.mark.rule("DELTA-LOG-001")
def test_gap_in_versions_is_invalid(tmp_path):
    b = _table(tmp_path, [0, 1, 3])
    with pytest.raises(InvalidTable, match="commit 2 is missing") as exc:
        build_segment(b.storage)
    assert exc.value.rule == "DELTA-LOG-001" and exc.value.version == 2
    assert [v for v, _ in build_segment(b.storage, 1).commits] == [0, 1]  # below the gap is fine


@pytest.mark.rule("DELTA-LOG-001")
def test_missing_commit_zero_without_checkpoint_is_invalid(tmp_path):
    b = _table(tmp_path, [1, 2])
    with pytest.raises(InvalidTable, match="commit 0 is missing"):
        build_segment(b.storage)


def test_empty_log_and_out_of_range_versions(tmp_path):
    b = LogBuilder(tmp_path)
    with pytest.raises(InvalidTable, match="no Delta log"):
        build_segment(b.storage)
    _table(tmp_path, [0, 1])
    with pytest.raises(InvalidTable, match="version 5 does not exist; the latest version is 1"):
        build_segment(b.storage, 5)
    with pytest.raises(InvalidTable, match="versions start at 0"):
        build_segment(b.storage, -1)


def _touch(tmp_path, name):
    (tmp_path / "_delta_log" / name).write_bytes(b"x")


@pytest.mark.rule("DELTA-CKPT-002", "DELTA-CKPT-003", "DELTA-CKPT-014")
def test_segment_uses_newest_complete_checkpoint_not_newer_than_target(tmp_path):
    b = _table(tmp_path, range(0, 25))
    _touch(tmp_path, "00000000000000000010.checkpoint.parquet")
    _touch(tmp_path, "00000000000000000020.checkpoint.0000000001.0000000002.parquet")
    _touch(tmp_path, "00000000000000000020.checkpoint.0000000002.0000000002.parquet")
    _touch(tmp_path, "00000000000000000022.checkpoint.0000000001.0000000003.parquet")  # incomplete
    _touch(tmp_path, "00000000000000000022.checkpoint.0000000003.0000000003.parquet")
    seg = build_segment(b.storage)
    assert seg.checkpoint.version == 20 and seg.checkpoint.kind == "multipart"
    assert [v for v, _ in seg.commits] == [21, 22, 23, 24]
    seg15 = build_segment(b.storage, 15)
    assert seg15.checkpoint.version == 10 and [v for v, _ in seg15.commits] == list(range(11, 16))
    assert build_segment(b.storage, 9).checkpoint is None
    listing = list_log(b.storage)
    incomplete = [c for c in listing.checkpoints if not c.complete]
    assert len(incomplete) == 1 and incomplete[0].version == 22


@pytest.mark.rule("DELTA-CKPT-004", "DELTA-LOG-001")
def test_checkpoint_lets_old_commits_go(tmp_path):
    b = _table(tmp_path, range(5, 8))
    _touch(tmp_path, "00000000000000000005.checkpoint.parquet")
    seg = build_segment(b.storage)
    assert seg.checkpoint.version == 5 and [v for v, _ in seg.commits] == [6, 7]
    assert seg.version_commit.path.endswith("00000000000000000007.json")
    at5 = build_segment(b.storage, 5)
    assert at5.commits == [] and at5.version_commit is not None  # commitInfo still reachable
    with pytest.raises(InvalidTable, match="commit 0 is missing"):
        build_segment(b.storage, 4)


@pytest.mark.rule("DELTA-CKPT-020", "DELTA-CKPT-028")
def test_hint_picks_among_checkpoints_of_one_version_and_stale_hint_is_harmless(tmp_path):
    b = _table(tmp_path, range(0, 4))
    _touch(tmp_path, "00000000000000000002.checkpoint.parquet")
    _touch(tmp_path, "00000000000000000002.checkpoint.0000000001.0000000002.parquet")
    _touch(tmp_path, "00000000000000000002.checkpoint.0000000002.0000000002.parquet")
    write_last_checkpoint(b.storage, {"version": 2, "size": 3, "parts": 2})
    assert build_segment(b.storage).checkpoint.kind == "multipart"
    write_last_checkpoint(b.storage, {"version": 1, "size": 3})  # stale / pointing at nothing
    seg = build_segment(b.storage)
    assert seg.checkpoint.version == 2 and seg.checkpoint.kind == "classic" and seg.version == 3


@pytest.mark.rule("DELTA-LOG-014", "DELTA-CRC-010")
def test_compactions_crcs_and_unknown_files_are_tolerated(tmp_path):
    b = _table(tmp_path, range(0, 4))
    _touch(tmp_path, "00000000000000000001.00000000000000000002.compacted.json")
    _touch(tmp_path, "00000000000000000001.crc")
    _touch(tmp_path, "whatever.tmp")
    listing = list_log(b.storage)
    assert [c[:2] for c in listing.compactions] == [(1, 2)] and set(listing.crcs) == {1}
    seg = build_segment(b.storage)
    assert [v for v, _ in seg.commits] == [0, 1, 2, 3]
