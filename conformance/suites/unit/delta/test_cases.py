"""The Delta corpus itself: its size, its expectations, and the canonical forms its goldens use."""

from __future__ import annotations

import json

from conformance import golden
from conformance.cases.registry import all_cases, rule_ids
from conformance.formats.delta.cases import declared_latest_version

DELTA_CASES = all_cases("delta")


def test_registry_ids_and_rules() -> None:
    """At least 45 Delta cases, every cited rule catalogued."""
    assert len(DELTA_CASES) >= 45
    known = rule_ids("delta")
    assert all(r in known for c in DELTA_CASES for r in c.rules)


def test_declared_versions_fit_the_steps() -> None:
    """No expectation reads a version past the one the steps end at."""
    for c in DELTA_CASES:
        last = declared_latest_version(c)
        for e in c.expected:
            assert e.version is None or e.version <= last, (c.id, e.version, last)
            if e.version is None and e.timestamp is None and "version" in e.metadata:
                assert e.metadata["version"] <= last, c.id


def test_negative_and_positive_cases_present() -> None:
    """The corpus has both: invalid_table and unsupported expectations and many row expectations."""
    kinds = {e.error for c in DELTA_CASES for e in c.expected}
    assert {"invalid_table", "unsupported", None} <= kinds


def test_golden_rows_are_canonical() -> None:
    """Rows are sorted and timestamps / binary / decimals have one text form."""
    doc = golden.load_golden("delta/all-primitive-types")
    rows = doc["expected"][0]["rows"]
    assert rows == sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False))
    maxima = next(r for r in rows if r["byte"] == 127)
    assert maxima["timestamp"] == "9999-12-31T23:59:59.999999Z"
    assert maxima["binary"] == {"$binary": "00ff10"}
    assert maxima["decimal_wide"] == "12345678901234567890.123456789012345678"
    assert doc["expected"][0]["schema"][0] == "byte: byte"
