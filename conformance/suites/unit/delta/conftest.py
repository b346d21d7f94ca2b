"""Fixtures of the Delta tests: a small table written by delta-rs (adapters and the CLI checked without the reference)."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest


@pytest.fixture(scope="session")
def delta_table(tmp_path_factory) -> tuple[str, pa.Table, pa.Table]:
    """A two-version Delta table written by delta-rs: (path, rows at v0, rows at v1)."""
    deltalake = pytest.importorskip("deltalake")
    path = str(tmp_path_factory.mktemp("dl") / "t")
    v0 = pa.table({"id": pa.array([1, 2], pa.int64()), "s": pa.array(["a", None]), "p": pa.array(["x", "y"])})
    add = pa.table({"id": pa.array([3], pa.int64()), "s": pa.array(["c"]), "p": pa.array(["x"])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        deltalake.write_deltalake(path, v0, partition_by=["p"])
        deltalake.write_deltalake(path, add, mode="append")
    return path, v0, pa.concat_tables([v0, add])
