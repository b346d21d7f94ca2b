"""Action Reconciliation: replaying commits (and checkpoints) into snapshot state."""

from __future__ import annotations

import random
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.delta.actions import (
    CheckpointMetadata,
    CommitInfo,
    DomainMetadata,
    Sidecar,
    Txn,
    UnknownAction,
)
from reference_impl.delta.checkpoint import write_checkpoint
from reference_impl.delta.deletion_vector import inline_deletion_vector
from reference_impl.delta.log import build_segment
from reference_impl.delta.replay import replay
from reference_impl.errors import InvalidTable

from . import LogBuilder, add, metadata, protocol, remove


def state_of(b: LogBuilder, version=None):
    return replay(b.storage, build_segment(b.storage, version))


def base(b: LogBuilder, **md):
    b.commit(0, [protocol(), metadata(**md)])


@pytest.mark.rule("DELTA-REPLAY-006", "DELTA-REPLAY-007", "DELTA-REPLAY-009")
def test_add_remove_readd(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    b.commit(1, [add("p")])
    b.commit(2, [remove("p", ts=5)])
    b.commit(3, [add("p", size=9)])
    s1, s2, s3 = state_of(b, 1), state_of(b, 2), state_of(b, 3)
    assert list(s1.files) == [("p", None)] and not s1.tombstones
    assert not s2.files and list(s2.tombstones) == [("p", None)]
    assert s3.files[("p", None)].size == 9 and not s3.tombstones  # revived, tombstone gone


@pytest.mark.rule("DELTA-ACTION-005", "DELTA-ACTION-009", "DELTA-REPLAY-008")
def test_logical_files_are_keyed_by_path_and_dv(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    dv_a = inline_deletion_vector([1])
    dv_b = inline_deletion_vector([1, 2])
    b.commit(1, [add("p")])
    b.commit(2, [remove("p"), add("p", dv=dv_a)])
    b.commit(3, [remove("p", dv=dv_a), add("p", dv=dv_b)])
    s = state_of(b)
    assert list(s.files) == [("p", dv_b.unique_id)]
    assert set(s.tombstones) == {("p", None), ("p", dv_a.unique_id)}  # same path, other DVs
    assert not set(s.files) & set(s.tombstones)


@pytest.mark.rule("DELTA-ACTION-006")
def test_readding_a_live_file_replaces_its_stats(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    b.commit(1, [add("p", stats='{"numRecords":1}')])
    b.commit(2, [add("p", stats='{"numRecords":2}')])
    assert state_of(b).files[("p", None)].stats == '{"numRecords":2}'


@pytest.mark.rule("DELTA-REPLAY-003", "DELTA-ACTION-024")
def test_txn_newest_wins_even_when_lower(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    b.commit(1, [Txn(app_id="A", version=5)])
    b.commit(2, [Txn(app_id="B", version=1)])
    b.commit(3, [Txn(app_id="A", version=3)])
    s = state_of(b)
    assert {k: t.version for k, t in s.txns.items()} == {"A": 3, "B": 1}
    assert state_of(b, 2).txns["A"].version == 5


@pytest.mark.rule("DELTA-REPLAY-004", "DELTA-DOMAIN-009")
def test_domains_newest_wins_and_tombstones_hide(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    b.commit(1, [DomainMetadata(domain="com.acme", configuration="1", removed=False),
                 DomainMetadata(domain="delta.rowTracking", configuration="{}", removed=False)])
    b.commit(2, [DomainMetadata(domain="com.acme", configuration="1", removed=True)])
    assert set(state_of(b, 1).domains) == {"com.acme", "delta.rowTracking"}
    assert set(state_of(b, 2).domains) == {"delta.rowTracking"}


@pytest.mark.rule("DELTA-REPLAY-002", "DELTA-ACTION-002")
def test_newest_protocol_and_metadata_win_whole(tmp_path):
    b = LogBuilder(tmp_path)
    b.commit(0, [protocol(), metadata(configuration={"a": "1", "b": "2"})])
    b.commit(1, [protocol(1, 4)])
    b.commit(2, [metadata(configuration={"a": "1"})])
    b.commit(3, [add("x")])
    s = state_of(b)
    assert s.protocol.min_writer_version == 4
    assert dict(s.metadata.configuration) == {"a": "1"}  # replaced, not merged
    assert state_of(b, 1).metadata.configuration["b"] == "2"


@pytest.mark.rule("DELTA-REPLAY-002", "DELTA-ACTION-001")
def test_missing_protocol_or_metadata_is_invalid(tmp_path):
    b = LogBuilder(tmp_path / "a")
    b.commit(0, [metadata(), add("x")])
    with pytest.raises(InvalidTable, match="no protocol action") as exc:
        state_of(b)
    assert exc.value.rule == "DELTA-REPLAY-002"
    b2 = LogBuilder(tmp_path / "b")
    b2.commit(0, [protocol(), add("x")])
    with pytest.raises(InvalidTable, match="no metaData action") as exc:
        state_of(b2)
    assert exc.value.rule == "DELTA-ACTION-001"


@pytest.mark.rule("DELTA-REPLAY-005")
def test_commit_info_only_from_the_snapshot_version_even_with_checkpoint(tmp_path):
    b = LogBuilder(tmp_path)
    b.commit(0, [CommitInfo(info={"operation": "CREATE"}), protocol(), metadata()])
    b.commit(1, [CommitInfo(info={"operation": "WRITE", "inCommitTimestamp": 77}), add("x")])
    b.commit(2, [add("y")])
    assert state_of(b, 1).commit_info.info["operation"] == "WRITE"
    assert state_of(b, 1).in_commit_timestamp == 77
    assert state_of(b, 2).commit_info is None
    write_checkpoint(b.storage, state_of(b, 1))
    s = state_of(b, 1)
    assert s.checkpoint_version == 1 and s.commit_info.info["operation"] == "WRITE"


@pytest.mark.rule("DELTA-ACTION-027", "DELTA-REPLAY-010", "DELTA-ACTION-010")
def test_unknown_and_checkpoint_only_actions_in_commits_do_not_replay(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    b.commit(1, [add("x"), UnknownAction(key="futureAction", value={"path": "x"}),
                 CheckpointMetadata(version=1), Sidecar(path="s.parquet", size_in_bytes=1, modification_time=1)])
    b.raw(2, '{"add":{"path":"y","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true,"new":1}}\n'
             '{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":1,"dataChange":false}}\n')
    s = state_of(b)
    assert set(s.files) == {("x", None), ("y", None)} and not s.tombstones


@pytest.mark.rule("DELTA-REPLAY-001")
def test_listing_order_does_not_matter(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    order = list(range(1, 30))
    random.Random(7).shuffle(order)
    for v in order:  # written in random order; replay follows version numbers
        b.commit(v, [add("p", size=v)] if v % 2 else [remove("p")])
    assert state_of(b).files[("p", None)].size == 29


@pytest.mark.rule("DELTA-LOG-005")
def test_malformed_commit_names_path_version_and_line(tmp_path):
    b = LogBuilder(tmp_path)
    base(b)
    b.raw(1, '{"add":{"path":"x","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true}}\n{"add":')
    with pytest.raises(InvalidTable, match="line 2") as exc:
        state_of(b)
    assert exc.value.version == 1 and exc.value.path.endswith("00000000000000000001.json")


# --- property: checkpoint + tail == full replay ------------------------------------------

_paths = st.sampled_from([f"f{i}.parquet" for i in range(6)])
_op = st.one_of(
    st.tuples(st.just("add"), _paths, st.integers(0, 3)),
    st.tuples(st.just("remove"), _paths, st.integers(0, 3)),
    st.tuples(st.just("txn"), st.sampled_from("AB"), st.integers(-5, 5)),
    st.tuples(st.just("domain"), st.sampled_from(["com.x", "delta.y"]), st.booleans()),
    st.tuples(st.just("config"), st.sampled_from(["a", "b"]), st.integers(0, 3)),
)
_DVS = [None] + [inline_deletion_vector(list(range(k))) for k in (1, 2, 3)]


def _actions(ops, version):
    out = []
    for kind, key, val in ops:
        if kind == "add":
            out.append(add(key, size=version, dv=_DVS[val]))
        elif kind == "remove":
            out.append(remove(key, ts=None, dv=_DVS[val]))
        elif kind == "txn":
            out.append(Txn(app_id=key, version=val))
        elif kind == "domain":
            out.append(DomainMetadata(domain=key, configuration=str(version), removed=val))
        else:
            out.append(metadata(configuration={key: str(val)}))
    return out


def _canon(s):
    return (s.version, s.protocol, s.metadata, dict(s.files), dict(s.tombstones), s.txns,
            {k: v for k, v in s.domains.items()})


@pytest.mark.rule("DELTA-CKPT-007", "DELTA-REPLAY-001", "DELTA-REPLAY-006")
@settings(max_examples=25, deadline=None)
@given(commits=st.lists(st.lists(_op, min_size=1, max_size=5), min_size=1, max_size=8), data=st.data())
def test_checkpoint_plus_tail_equals_full_replay(commits, data):
    with tempfile.TemporaryDirectory() as tmp:
        b = LogBuilder(tmp)
        b.commit(0, [protocol(3, 7, rf=["deletionVectors", "v2Checkpoint"],
                              wf=["deletionVectors", "v2Checkpoint", "domainMetadata"]), metadata()])
        for v, ops in enumerate(commits, start=1):
            # at most one action per path / app / domain, and one metaData, per commit (spec rules)
            seen, clean = set(), []
            for op in ops:
                group = "file" if op[0] in ("add", "remove") else op[0]
                k = (group, None if group == "config" else op[1])
                if k not in seen:
                    seen.add(k)
                    clean.append(op)
            b.commit(v, _actions(clean, v))
        last = len(commits)
        full = state_of(b)
        at = data.draw(st.integers(0, last), label="checkpoint version")
        kind = data.draw(st.sampled_from(["classic", "v2", "v2-sidecars", "v2-json"]), label="kind")
        ckpt_state = state_of(b, at)
        if kind == "classic":
            write_checkpoint(b.storage, ckpt_state)
        elif kind == "v2":
            write_checkpoint(b.storage, ckpt_state, kind="v2")
        elif kind == "v2-json":
            write_checkpoint(b.storage, ckpt_state, kind="v2", v2_format="json", sidecars=1)
        else:
            write_checkpoint(b.storage, ckpt_state, kind="v2", sidecars=2)
        seg = build_segment(b.storage)
        assert seg.checkpoint is not None and seg.checkpoint.version == at
        assert _canon(replay(b.storage, seg)) == _canon(full)
        # and every older version is still reconstructed without the newer checkpoint
        for v in range(0, last + 1):
            assert _canon(state_of(b, v))[3] == _canon(
                replay(b.storage, build_segment(b.storage, v, exclude_checkpoints=frozenset(
                    (c.version, c.kind, c.uuid, c.num_parts) for c in seg.listing.checkpoints))))[3]


@pytest.mark.rule("DELTA-CKPT-007", "DELTA-REPLAY-007")
def test_checkpointed_files_behave_like_a_dict(tmp_path):
    from reference_impl.delta.replay import FileMap

    b = LogBuilder(tmp_path)
    base(b)
    b.commit(1, [add(f"f{i}.parquet", size=i) for i in range(100)])
    write_checkpoint(b.storage, state_of(b))
    b.commit(2, [remove("f3.parquet"), add("f4.parquet", size=400), add("new.parquet")])
    s = state_of(b)
    assert isinstance(s.files, FileMap)
    full = replay(b.storage, build_segment(b.storage, exclude_checkpoints=frozenset({(1, "classic", None, None)})))
    assert dict(s.files) == full.files and s.files == full.files
    assert len(s.files) == 100 and ("f3.parquet", None) not in s.files and ("f5.parquet", None) in s.files
    assert s.files[("f4.parquet", None)].size == 400 and s.files.get(("f7.parquet", None)).size == 7
    assert s.files.get(("f3.parquet", None)) is None
    assert sorted(k for k, _ in s.files.items()) == sorted(full.files)
    del s.files[("f5.parquet", None)]
    with pytest.raises(KeyError):
        del s.files[("f5.parquet", None)]
    assert len(s.files.values()) == 99 and s.files.copy() == {k: v for k, v in s.files.items()}


@pytest.mark.rule("DELTA-ACTION-003", "DELTA-LOG-007")
def test_two_metadata_or_protocol_actions_in_one_commit_are_invalid(tmp_path):
    b = LogBuilder(tmp_path / "m")
    b.commit(0, [protocol(), metadata(), metadata(configuration={"x": "1"})])
    with pytest.raises(InvalidTable, match="more than one metaData") as exc:
        state_of(b)
    assert exc.value.rule == "DELTA-ACTION-003" and exc.value.version == 0
    b = LogBuilder(tmp_path / "p")
    b.commit(0, [protocol(), metadata()])
    b.commit(1, [protocol(1, 3), protocol(1, 4)])
    with pytest.raises(InvalidTable, match="more than one protocol") as exc:
        state_of(b)
    assert exc.value.rule == "DELTA-LOG-007" and exc.value.version == 1
    assert state_of(b, 0).protocol.min_writer_version == 2
