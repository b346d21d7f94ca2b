"""Golden suite: golden/ matches the declarations, and the reference matches golden/, for every format.

Every case of every registered format is built with the reference writer (through the reference
engine, which also runs Raw steps) into a temporary directory, then read back by the reference
engine at each declared version, timestamp or ref. Rows are compared order-insensitively through
the canonical forms of ``conformance.golden``; metadata through the reference's ``describe`` facts,
compared the way the format declares; an expected error by its kind. The expectations come from
golden/, never from a reader.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from conformance import formats, golden
from conformance.cases.registry import all_cases, get_case
from conformance.model import Case, Expected
from conformance.runner import _metadata_mismatches

CASES = all_cases()


def _params() -> list[Any]:
    out = []
    for c in CASES:
        for i, e in enumerate(c.expected):
            at = f"v{e.version}" if e.version is not None else (
                f"ts{e.timestamp}" if e.timestamp else (f"ref-{e.ref}" if e.ref else "latest"))
            out.append(pytest.param(c.id, i, id=f"{c.id}@{at}#{i}", marks=[pytest.mark.rule(*c.rules)]))
    return out


# --------------------------------------------------------------------------------------------
# golden/ is a pure function of the declarations
# --------------------------------------------------------------------------------------------


def test_every_registered_format_has_goldens() -> None:
    """Each format plugin contributes cases, and each case has its golden file."""
    by_format = {c.format for c in CASES}
    assert set(formats.names()) <= by_format
    for c in CASES:
        assert golden.golden_path(c).exists(), f"{c.id}: no golden file (run `lakeconf golden regenerate`)"


def test_golden_is_up_to_date() -> None:
    """`lakeconf golden regenerate --check` passes: no drift, nothing missing, nothing stale."""
    out = io.StringIO()
    assert golden.regenerate(check=True, out=out) == 0, out.getvalue()


@pytest.mark.parametrize("fmt", formats.names())
def test_check_mode_reports_drift(tmp_path, fmt) -> None:
    """--check names the drifted file and returns 1; regenerate then repairs it."""
    cases = [c for c in CASES if c.format == fmt][:2]
    assert golden.regenerate(root=tmp_path, cases=cases, out=io.StringIO()) == 0
    victim = golden.golden_path(cases[0], tmp_path)
    victim.write_text(victim.read_text().replace('"expected"', '"expectedz"', 1))
    (tmp_path / fmt / "no-such-case.json").write_text("{}")
    out = io.StringIO()
    assert golden.regenerate(check=True, root=tmp_path, cases=cases, out=out) == 1
    assert f"{fmt}/{cases[0].slug}.json differs" in out.getvalue()
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


def test_registry_ids_are_unique_and_found() -> None:
    """Unique ids, and get_case finds each (and names close matches for a typo)."""
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids)
    assert all(get_case(i).id == i for i in ids)
    with pytest.raises(KeyError, match="no case"):
        get_case(f"{CASES[0].format}/does-not-exist")


# --------------------------------------------------------------------------------------------
# The reference against golden/
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def built_tables(tmp_path_factory):
    """case id -> (TableRef, build error or None); each case built once per session."""
    cache: dict[str, tuple[Any, BaseException | None]] = {}

    def build(case: Case):
        if case.id not in cache:
            from conformance.engines.reference import ReferenceEngine
            from conformance.model import TableRef

            root = tmp_path_factory.mktemp(case.slug.replace("/", "-"))
            ref = TableRef(format=case.format, uri=str(root / "table"))
            try:
                ReferenceEngine().write(ref, case.steps)
                cache[case.id] = (ref, None)
            except BaseException as exc:  # noqa: BLE001 - reported per expectation below
                cache[case.id] = (ref, exc)
        return cache[case.id]

    return build


def _where(e: Expected) -> dict[str, Any]:
    kw: dict[str, Any] = {"at": None if e.timestamp is not None else e.version, "timestamp": e.timestamp}
    if e.ref is not None:
        kw["ref"] = e.ref
    return kw


@pytest.mark.parametrize(("case_id", "index"), _params())
def test_reference_matches_golden(case_id: str, index: int, built_tables) -> None:
    """The reference's answer equals the golden expectation (rows, schema, metadata or error kind)."""
    from conformance.engines.reference import ReferenceEngine
    from reference_impl.errors import LakeconfError

    case = get_case(case_id)
    e = case.expected[index]
    want = golden.load_golden(case_id)["expected"][index]
    ref, build_error = built_tables(case)
    if build_error is not None:
        pytest.fail(f"building {case_id} with the reference writer failed: {type(build_error).__name__}: {build_error}")
    engine = ReferenceEngine()
    if want.get("error"):
        with pytest.raises(LakeconfError) as info:
            engine.read(ref, **_where(e))
        assert info.value.kind == want["error"], f"expected a {want['error']} error, got {info.value.kind}: {info.value}"
        return
    try:
        result = engine.read(ref, **_where(e))
    except LakeconfError as exc:
        # Where the spec lets a reader refuse, a refusal of the allowed kind is conformant too.
        if want.get("error_allowed") and exc.kind == want["error_allowed"]:
            return
        raise
    got_rows = golden.canonical_rows(result)
    assert golden.schema_text(result.schema) == want["schema"]
    assert len(got_rows) == want["row_count"]
    missing = [r for r in want["rows"] if r not in got_rows]
    extra = [r for r in got_rows if r not in want["rows"]]
    assert got_rows == want["rows"], f"missing rows {missing[:5]}, unexpected rows {extra[:5]}"
    if want["metadata"]:
        facts = engine.describe(ref, **_where(e))
        assert facts is not None, "the reference describes every format it reads"
        unknown = sorted(set(want["metadata"]) - set(facts))
        assert not unknown, f"declared metadata keys the reference does not report: {unknown}"
        wrong = _metadata_mismatches(want["metadata"], facts, case.format)
        assert not wrong, "; ".join(wrong)
