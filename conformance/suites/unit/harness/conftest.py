"""Shared fixtures of the harness tests: a synthetic results document and a small Delta table."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest


def synthetic_results() -> dict:
    """A results document with every status and one disagreement."""

    def cell(case, reader, status, message="", version=None, diff="", **extra):
        return {
            "case": case, "format": "delta", "writer": "reference", "reader": reader, "version": version,
            "status": status, "message": message, "seconds": 0.01, "rules": ["DELTA-LOG-001"], "diff": diff, **extra,
        }

    return {
        "generated_at": "2026-11-22T08:00:00+00:00",
        "store": "local",
        "engines": [
            {"name": "reference", "version": "0.1.0", "roles": ["reader", "writer"]},
            {"name": "alpha", "version": "1.2.3", "roles": ["reader"]},
            {"name": "beta", "version": "9.9", "roles": ["reader"], "unavailable": "not installed"},
        ],
        "results": [
            cell("delta/basic", "reference", "pass"),
            cell("delta/basic", "alpha", "fail", "1 expected row(s) missing", diff="- (3, 'c')\n+ (3, '<script>')"),
            cell("delta/basic", "beta", "skip", "engine unavailable: not installed"),
            cell("delta/basic", "reference", "pass", version=0),
            cell("delta/basic", "alpha", "pass", version=0),
            cell("delta/basic", "beta", "skip", "engine unavailable", version=0),
            cell("delta/neg-gap", "reference", "pass", "raised as expected", expected_error="invalid_table"),
            cell("delta/neg-gap", "alpha", "fail", "returned 3 row(s) silently", expected_error="invalid_table"),
            cell("delta/neg-gap", "beta", "skip", "engine unavailable"),
            cell("delta/dv", "reference", "pass"),
            cell("delta/dv", "alpha", "unsupported", "needs deletionVectors"),
            cell("delta/dv", "beta", "skip", "engine unavailable"),
            cell("delta/all-wrong", "reference", "error", "KeyError: boom"),
            cell("delta/all-wrong", "alpha", "fail", "rows differ"),
            cell("delta/all-wrong", "beta", "skip", ""),
        ],
        "cases": {"delta/basic": {"description": "basic append", "rules": ["DELTA-LOG-001"]}},
    }


@pytest.fixture
def results_doc() -> dict:
    return synthetic_results()


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
