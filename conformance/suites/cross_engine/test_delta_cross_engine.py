"""Cross-engine Delta suite: every registry case, built by the reference writer, read by every engine.

The reference reader must match every expected result (a failure here is a reference bug or a
case bug). Other engines' disagreements are findings about those engines, not failures of the
kit: they show as xfail with the engine's answer, unsupported capabilities as skips with the
reason; `lakeconf run` puts the same cells in the report. Each test carries the case's rule ids.
"""

from __future__ import annotations

import pytest

from conformance.engines.registry import load_engines
from conformance.runner import check_cell, make_store

READERS = ["reference", "deltalake", "deltalake-datafusion", "duckdb", "polars", "daft"]

try:
    from conformance.cases.registry import all_cases

    CASES = all_cases(format="delta")
    LOAD_ERROR = None
except Exception as exc:  # noqa: BLE001 - the suite reports why it has nothing to run
    CASES, LOAD_ERROR = [], f"{type(exc).__name__}: {exc}"


def _params():
    if LOAD_ERROR:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"case registry not loadable: {LOAD_ERROR}"))]
    out = []
    for case in CASES:
        for reader in READERS:
            if case.writers is not None and "reference" not in case.writers:
                continue
            out.append(pytest.param(case, reader, id=f"{case.slug}-{reader}", marks=pytest.mark.rule(*case.rules)))
    return out


@pytest.fixture(scope="session")
def engines():
    found = {e.name: e for e in load_engines(READERS)}
    yield found
    for e in found.values():
        e.close()


@pytest.fixture(scope="session")
def built(tmp_path_factory, engines):
    """Build each case once with the reference writer (lazily): case id -> TableRef or the error."""
    store = make_store("local", str(tmp_path_factory.mktemp("cross_engine")))
    cache: dict[str, object] = {}

    def get(case):
        if case.id not in cache:
            writer = engines["reference"]
            reason = writer.available()
            if reason:
                cache[case.id] = pytest.skip.Exception(f"reference writer unavailable: {reason}")
            else:
                table = store.location("reference", case)
                try:
                    writer.write(table, case.steps)
                    cache[case.id] = table
                except Exception as exc:  # noqa: BLE001
                    cache[case.id] = exc
        return cache[case.id]

    return get


@pytest.mark.parametrize("case, reader", _params())
def test_reader_matches_expected(case, reader, engines, built):
    table = built(case)
    if isinstance(table, pytest.skip.Exception):
        pytest.skip(str(table))
    if isinstance(table, BaseException):
        pytest.fail(f"the reference writer could not build {case.id}: {type(table).__name__}: {table}")
    engine = engines[reader]
    reason = engine.available()
    if reason:
        pytest.skip(f"{reader} unavailable: {reason}")
    cells = [(exp, *check_cell(case, exp, engine, table)) for exp in case.expected]
    wrong = [f"{_where(e)}: {status}: {msg}" + (f"\n{diff}" if diff else "")
             for e, status, msg, diff in cells if status in ("fail", "error")]
    unsupported = [f"{_where(e)}: {msg}" for e, status, msg, _ in cells if status == "unsupported"]
    if wrong:
        text = f"{case.id} read by {reader}:\n" + "\n".join(wrong)
        if reader == "reference":
            pytest.fail(text)
        pytest.xfail(text)
    if unsupported and reader == "reference":
        # The corpus is the reference's scope: a feature it does not implement is a gap to close.
        pytest.fail(f"{case.id}: the reference does not support it: " + "; ".join(unsupported))
    if unsupported and len(unsupported) == len(cells):
        pytest.skip("; ".join(unsupported))


def _where(exp) -> str:
    if exp.timestamp is not None:
        return f"as of {exp.timestamp}"
    return "latest" if exp.version is None else f"v{exp.version}"
