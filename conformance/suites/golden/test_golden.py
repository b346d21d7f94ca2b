"""Golden suite: golden/ matches the declarations, and the reference reader matches golden/.

Every case is built with the reference writer (through the reference engine adapter, which also
runs Raw steps) into a temporary directory, then read back with
``reference_impl.delta.table.read_table`` at each declared version or timestamp. Rows are
compared order-insensitively through the canonical forms of ``conformance.golden``; an expected
error is checked by its kind. The expectations come from golden/, never from a reader.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from conformance import golden
from conformance.cases.registry import all_cases, get_case, rule_ids
from conformance.model import Case, Expected

DELTA_CASES = all_cases("delta")

def _params() -> list[Any]:
    out = []
    for c in DELTA_CASES:
        for i, e in enumerate(c.expected):
            at = f"v{e.version}" if e.version is not None else (f"ts{e.timestamp}" if e.timestamp else "latest")
            out.append(pytest.param(c.id, i, id=f"{c.slug}@{at}#{i}", marks=[pytest.mark.rule(*c.rules)]))
    return out


# --------------------------------------------------------------------------------------------
# golden/ is a pure function of the declarations
# --------------------------------------------------------------------------------------------


def test_golden_is_up_to_date() -> None:
    """`lakeconf golden regenerate --check` passes: no drift, nothing missing, nothing stale."""
    out = io.StringIO()
    assert golden.regenerate(check=True, out=out) == 0, out.getvalue()


def test_check_mode_reports_drift(tmp_path) -> None:
    """--check names the drifted file and returns 1; regenerate then repairs it."""
    cases = DELTA_CASES[:2]
    assert golden.regenerate(root=tmp_path, cases=cases, out=io.StringIO()) == 0
    victim = golden.golden_path(cases[0], tmp_path)
    victim.write_text(victim.read_text().replace('"rows"', '"rowz"', 1))
    (tmp_path / "delta" / "no-such-case.json").write_text("{}")
    out = io.StringIO()
    assert golden.regenerate(check=True, root=tmp_path, cases=cases, out=out) == 1
    assert f"delta/{cases[0].slug}.json differs" in out.getvalue()
    assert "no-such-case.json belongs to no registered case" in out.getvalue()
    assert golden.regenerate(root=tmp_path, cases=cases, out=io.StringIO()) == 0
    assert golden.regenerate(check=True, root=tmp_path, cases=cases, out=io.StringIO()) == 0


def test_regeneration_is_deterministic(tmp_path) -> None:
    """Two regenerations produce byte-identical files."""
    a, b = tmp_path / "a", tmp_path / "b"
    golden.regenerate(root=a, out=io.StringIO())
    golden.regenerate(root=b, out=io.StringIO())
    files = sorted(p.relative_to(a) for p in a.rglob("*.json"))
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*.json"))
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


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


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------


def test_registry_ids_and_rules() -> None:
    """At least 45 Delta cases, unique ids, every cited rule catalogued, get_case finds each."""
    ids = [c.id for c in DELTA_CASES]
    assert len(ids) >= 45
    assert len(set(ids)) == len(ids)
    known = rule_ids("delta")
    assert all(r in known for c in DELTA_CASES for r in c.rules)
    assert all(get_case(i).id == i for i in ids)
    with pytest.raises(KeyError, match="no case"):
        get_case("delta/does-not-exist")


def test_declared_versions_fit_the_steps() -> None:
    """No expectation reads a version past the one the steps end at."""
    from conformance.cases.delta import declared_latest_version

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


# --------------------------------------------------------------------------------------------
# The reference reader against golden/
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def built_tables(tmp_path_factory):
    """case id -> (TableRef, build error or None); each case built once per session."""
    cache: dict[str, tuple[Any, BaseException | None]] = {}

    def build(case: Case):
        if case.id not in cache:
            from conformance.engines.reference import ReferenceEngine
            from conformance.model import TableRef

            engine = ReferenceEngine()
            reason = engine.available()
            if reason:
                pytest.skip(reason)
            root = tmp_path_factory.mktemp(case.slug)
            ref = TableRef(format=case.format, uri=str(root / "table"))
            try:
                engine.write(ref, case.steps)
                cache[case.id] = (ref, None)
            except BaseException as exc:  # noqa: BLE001 - reported per expectation below
                cache[case.id] = (ref, exc)
        return cache[case.id]

    return build


def _read(ref, e: Expected):
    from conformance.engines._common import parse_timestamp
    from reference_impl.delta.table import read_table

    return read_table(ref.uri, version=e.version, timestamp=parse_timestamp(e.timestamp) if e.timestamp else None)


def _check_metadata(ref, e: Expected, expected_meta: dict) -> None:
    """Compare the declared metadata with the reference engine's ``describe`` facts.

    ``configuration`` and ``features`` are subsets (a writer may add more); the rest are equal.
    """
    from conformance.engines.reference import ReferenceEngine

    if not expected_meta:
        return
    facts = ReferenceEngine().describe(ref, at=e.version, timestamp=e.timestamp)
    for key in ("version", "partition_columns", "protocol", "txns", "domains"):
        if key in expected_meta:
            assert facts.get(key) == expected_meta[key], f"{key}: got {facts.get(key)!r}, declared {expected_meta[key]!r}"
    for key, value in expected_meta.get("configuration", {}).items():
        assert facts["configuration"].get(key) == value, f"configuration[{key!r}]: got {facts['configuration'].get(key)!r}"
    missing = set(expected_meta.get("features", ())) - set(facts["features"])
    assert not missing, f"protocol {facts['protocol']} (features {facts['features']}) does not support {sorted(missing)}"
    if "changes" in expected_meta:
        from reference_impl.delta.cdf import table_changes

        feed = table_changes(ref.uri, 1, facts["version"])
        feed = feed.drop_columns([c for c in feed.column_names if c == "_commit_timestamp"])
        assert golden.canonical_rows(feed) == _sorted_rows(expected_meta["changes"])


def _sorted_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False))


@pytest.mark.parametrize(("case_id", "index"), _params())
def test_reference_reader_matches_golden(case_id: str, index: int, built_tables) -> None:
    """The reference reader's answer equals the golden expectation (rows, schema, metadata or error kind)."""
    from reference_impl.errors import LakeconfError

    case = get_case(case_id)
    e = case.expected[index]
    want = golden.load_golden(case_id)["expected"][index]
    ref, build_error = built_tables(case)
    if build_error is not None and getattr(build_error, "kind", None) == "unsupported":
        pytest.skip(f"the reference writer cannot build {case_id}: {build_error}")
    if build_error is not None:
        pytest.fail(f"building {case_id} with the reference writer failed: {type(build_error).__name__}: {build_error}")
    if want.get("error"):
        with pytest.raises(LakeconfError) as info:
            _read(ref, e)
        assert info.value.kind == want["error"], f"expected a {want['error']} error, got {info.value.kind}: {info.value}"
        return
    result = _read(ref, e)
    got_rows = golden.canonical_rows(result)
    assert golden.schema_text(result.schema) == want["schema"]
    assert len(got_rows) == want["row_count"]
    missing = [r for r in want["rows"] if r not in got_rows]
    extra = [r for r in got_rows if r not in want["rows"]]
    assert got_rows == want["rows"], f"missing rows {missing[:5]}, unexpected rows {extra[:5]}"
    _check_metadata(ref, e, want["metadata"])
