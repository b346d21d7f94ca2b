"""Shared fixtures of the harness tests: a synthetic results document."""

from __future__ import annotations

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


# The CLI tests read a table a peer wrote; the fixture lives with that format's tests.
from conformance.suites.unit.delta.conftest import delta_table  # noqa: E402,F401
