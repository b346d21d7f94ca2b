"""The kit's version numbers of a Hudi table (``reference_impl.hudi.versions``) and ``lakeconf read`` /
``lakeconf validate`` on Hudi tables."""

from __future__ import annotations

import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conformance.suites.unit.hudi._tables import t, valid_table
from reference_impl.errors import InvalidTable
from reference_impl.hudi import versions as V
from reference_impl.storage import LocalStorage

pytestmark = pytest.mark.rule("HUDI-TIMELINE-015", "HUDI-TIMELINE-019")


def _keys(table) -> list[tuple[str, str]]:
    return sorted(zip(table.column("_hoodie_record_key").to_pylist(), table.column("name").to_pylist()))


@pytest.mark.parametrize("version", [6, 8])
def test_versions_count_completed_writes_in_commit_order(tmp_path, version):
    tb = valid_table(str(tmp_path), version=version, table_type="MERGE_ON_READ")
    points = V.points(tb.storage)
    assert [p.number for p in points] == [1, 2, 3]
    assert [p.requested_time for p in points] == [t(1), t(3), t(5)]
    # v8+ travels by completion time, v6 by requested time (the only time a v6 timeline has)
    assert points[0].read_options() == ({"as_of_completion": t(2)} if version >= 8 else {"as_of": t(1)})
    storage = LocalStorage(str(tmp_path))
    assert V.read_table(storage, version=0).num_rows == 0
    assert _keys(V.read_table(storage, version=1)) == [("k1", "a"), ("k2", "b"), ("k3", "c")]
    assert _keys(V.read_table(storage, version=2)) == [("k1", "a2"), ("k2", "b"), ("k3", "c")]
    assert _keys(V.read_table(storage, version=3)) == [("k1", "a2"), ("k3", "c")]
    assert _keys(V.read_table(storage)) == [("k1", "a2"), ("k3", "c")]
    # a number of 14+ digits is an instant time (requested), as Hudi's as.of.instant takes it
    assert _keys(V.read_table(storage, version=int(t(3)))) == [("k1", "a2"), ("k2", "b"), ("k3", "c")]
    with pytest.raises(InvalidTable, match="version 4 does not exist"):
        V.read_table(storage, version=4)


def test_describe_at_versions(tmp_path):
    tb = valid_table(str(tmp_path), version=8, table_type="MERGE_ON_READ")
    zero = V.describe(tb.storage, version=0)
    assert (zero["action"], zero["partitions"], zero["file_group_count"]) == (None, [], 0)
    assert zero["table_type"] == "MERGE_ON_READ" and zero["table_version"] == 8
    latest = V.describe(tb.storage)
    assert latest["action"] == "deltacommit" and latest["instant"] == t(5)


def _lakeconf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_reads_and_validates_a_hudi_table(tmp_path):
    root = tmp_path / "t"
    valid_table(str(root), version=8, table_type="MERGE_ON_READ")
    out = tmp_path / "rows.parquet"
    done = _lakeconf("read", str(root), "--at", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert _keys(pq.read_table(out)) == [("k1", "a"), ("k2", "b"), ("k3", "c")]
    done = _lakeconf("read", str(root), "--instant", t(3), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert _keys(pq.read_table(out)) == [("k1", "a2"), ("k2", "b"), ("k3", "c")]
    done = _lakeconf("read", str(root), "--completion-time", t(6), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert _keys(pq.read_table(out)) == [("k1", "a2"), ("k3", "c")]
    done = _lakeconf("validate", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hudi table, 0 violation(s)" in done.stdout
