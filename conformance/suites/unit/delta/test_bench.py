"""The Delta snapshot-loading benchmark (conformance.formats.delta.bench) at tiny sizes: both engines list the
same live files, with a checkpoint and from JSON commits alone, and ``--scale`` fits a growth per engine."""

from __future__ import annotations

import pytest

from conformance.bench import scale_summary
from conformance.formats.delta import bench as B


@pytest.mark.parametrize("interval", [10, 100_000])
def test_both_engines_list_the_same_live_files(tmp_path, interval):
    pytest.importorskip("deltalake")
    result = B.run_delta(files=300, commits=30, checkpoint_interval=interval, repeat=1, workdir=str(tmp_path), profile=False)
    assert result["findings"] == [], result["findings"]
    assert result["built"]["checkpoints"] == (2 if interval == 10 else 0)
    assert result["reference"]["live_files"] == result["deltalake"]["live_files"] == result["built"]["live"]
    assert result["ratio"] is not None and "both engines list the same live files" in B.summary(result)


def test_scale_fits_a_growth_per_engine(tmp_path):
    pytest.importorskip("deltalake")
    out = B.run_scale([200, 600], commits=20, checkpoint_interval=10, repeat=1, workdir=str(tmp_path))
    assert out["findings"] == [] and [row["size"] for row in out["sizes"]] == [200, 600]
    assert all("median_seconds" in row[e] for row in out["sizes"] for e in ("reference", "deltalake"))
    assert set(out["exponents"]) == {"reference", "deltalake"} and out["exponents"]["reference"]["wall"] is not None
    text = scale_summary(out, "Delta snapshot loading", agree="same files", detail=lambda row: f" ({row['live']:,} live)")
    assert "growth exponent reference" in text and "600 adds" in text and "same files at every size" in text
