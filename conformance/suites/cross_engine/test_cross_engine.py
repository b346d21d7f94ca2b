"""Cross-engine suite: every registry case of every format, built by the reference writer, read by
every in-process engine that reads the format (Spark has its own suite, conformance/suites/spark).

The reference reader must match every expected result (a failure here is a reference bug or a
case bug). Another engine's non-pass must be a *known* finding, registered in the format's
findings (``conformance/formats/<format>/findings.py``) with its cause and the side the spec
supports:

* registered (same status) -> xfail, with the explanation;
* not registered -> FAIL: triage it into the format's findings (or fix the case);
* registered but every cell now passes -> FAIL: a stale finding, remove the entry;
* unsupported because the engine declares it lacks a capability -> skip with the reason.

`lakeconf run` puts the same cells, with the same explanations, in the report. Each test
carries the case's rule ids.
"""

from __future__ import annotations

import os

import pytest

from conformance.engines.registry import load_engines
from conformance.findings import explain, findings_for
from conformance.runner import capability_gap, check_cell, table_location
from conformance.storage import open_store



def _reader_names() -> list[str]:
    """The readers: those named by ``--lakeconf-engines`` (LAKECONF_ENGINES), else the built-in
    engines that run in this interpreter without a JVM (Spark has its own suite); which of them
    read a case is what each declares."""
    from conformance.engines.registry import OPT_IN, builtin_names

    named = [n.strip() for n in os.environ.get("LAKECONF_ENGINES", "").split(",") if n.strip()]
    return named or [n for n in builtin_names() if n not in OPT_IN]


READERS = _reader_names()

try:
    from conformance.cases.registry import all_cases

    CASES = all_cases()
    LOAD_ERROR = None
except Exception as exc:  # noqa: BLE001 - the suite reports why it has nothing to run
    CASES, LOAD_ERROR = [], f"{type(exc).__name__}: {exc}"


ENGINE_LOAD_ERRORS: list[str] = []


def _readers_by_format() -> dict[str, list[str]]:
    """format -> the READERS that declare reading it (an engine that does not exist yet is left out)."""
    out: dict[str, list[str]] = {}
    try:
        engines = load_engines([n for n in READERS if n in _known()])
    except Exception as exc:  # noqa: BLE001 - collection never dies on an engine: test_engines_load fails
        ENGINE_LOAD_ERRORS.append(f"{type(exc).__name__}: {exc}")
        return {}
    for e in engines:
        for fmt in e.capabilities().read:
            out.setdefault(fmt, []).append(e.name)
        e.close()
    return out


def _known() -> set[str]:
    from conformance.engines.registry import engine_factories

    return set(engine_factories())


def test_engines_load():
    """Loading the engines never fails silently (the suite would run the reference alone); with
    LAKECONF_REQUIRE_ENGINES=1 (set in CI) every built-in engine must also be usable here."""
    from conformance.engines.registry import load_engines

    assert not ENGINE_LOAD_ERRORS, f"the engines failed to load, so no engine was cross-checked: {ENGINE_LOAD_ERRORS}"
    if os.environ.get("LAKECONF_REQUIRE_ENGINES") != "1":
        return
    unusable = {}
    for engine in load_engines([n for n in READERS if n in _known()]):
        reason = engine.available()
        if reason:
            unusable[engine.name] = reason
        engine.close()
    assert not unusable, f"LAKECONF_REQUIRE_ENGINES=1 but these engines cannot run here: {unusable}"


def _params():
    if LOAD_ERROR:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"case registry not loadable: {LOAD_ERROR}"))]
    out = []
    readers = _readers_by_format()
    for case in CASES:
        for reader in readers.get(case.format, ["reference"]):
            if case.writers is not None and "reference" not in case.writers:
                continue
            out.append(pytest.param(case, reader, id=f"{case.id}-{reader}", marks=pytest.mark.rule(*case.rules)))
    return out


@pytest.fixture(scope="session")
def engines():
    found = {e.name: e for e in load_engines([n for n in READERS if n in _known()])}
    yield found
    for e in found.values():
        e.close()


@pytest.fixture(scope="session")
def built(tmp_path_factory, engines):
    """Build each case once with the reference writer (lazily): case id -> TableRef or the error."""
    store = open_store("local", str(tmp_path_factory.mktemp("cross_engine")))
    cache: dict[str, object] = {}

    def get(case):
        if case.id not in cache:
            writer = engines["reference"]
            reason = writer.available()
            if reason:
                cache[case.id] = pytest.skip.Exception(f"reference writer unavailable: {reason}")
            else:
                table = table_location(store, "reference", case)
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
    if reader == "reference":
        wrong = [f"{_where(e)}: {status}: {msg}" + (f"\n{diff}" if diff else "")
                 for e, status, msg, diff in cells if status in ("fail", "error")]
        if wrong:
            pytest.fail(f"{case.id} read by reference:\n" + "\n".join(wrong))
        unsupported = [f"{_where(e)}: {msg}" for e, status, msg, _ in cells if status == "unsupported"]
        if unsupported:
            # The corpus is the reference's scope: a feature it does not implement is a gap to close.
            pytest.fail(f"{case.id}: the reference does not support it: " + "; ".join(unsupported))
        return
    _judge_published(case, reader, engine, cells)


def _judge_published(case, reader, engine, cells) -> None:
    """xfail known findings, fail unregistered non-passes and stale entries, skip declared gaps."""
    explained, unexplained, declared = [], [], []
    version = engine.version()
    for exp, status, msg, diff in cells:
        if status not in ("fail", "error", "unsupported"):
            continue
        line = f"{_where(exp)}: {status}: {msg}" + (f"\n{diff}" if diff else "")
        finding = explain(case.id, reader, status, text=f"{msg}\n{diff}", engine_version=version)
        if status == "unsupported" and capability_gap(case, exp, engine):
            # Declared by the engine: already explained by the capability's reason.
            declared.append(f"{_where(exp)}: {msg}" + (f" [known finding {finding.id}]" if finding else ""))
        elif finding is not None:
            explained.append((line, finding))
        else:
            unexplained.append(line)
    statuses = {status for _, status, _, _ in cells}
    # stale: no cell shows the entry's status with its pattern any more, or the engine is not the
    # version the entry was seen with (a new version must be triaged again)
    stale = [f for f in findings_for(case.id, reader)
             if not any(s == f.status and f.matches(f"{m}\n{d}") for _, s, m, d in cells)
             or not f.seen_with(reader, version)]
    problems = []
    if unexplained:
        problems.append(
            f"{case.id} read by {reader}: non-pass not in the {case.format} findings. Triage it: reproduce it "
            f"with the engine, read the spec section, then register the cause and the side the spec supports in "
            f"conformance/formats/{case.format}/findings.py (or fix the case if the engine is right):\n"
            + "\n".join(unexplained)
        )
    for f in stale:
        problems.append(
            f"stale finding {f.id!r}: {reader} {version} no longer shows {f.status} matching {f.pattern!r} on "
            f"{case.id} (statuses now: {', '.join(sorted(statuses))}; seen with {f.versions.get(reader, '?')}); the "
            f"engine now passes or behaves differently: remove or update the entry in "
            f"conformance/formats/{case.format}/findings.py"
        )
    if problems:
        pytest.fail("\n\n".join(problems))
    if explained:
        text = "\n".join(
            f"{line}\n  known finding {f.id} [{f.upstream or 'finding'}]: {f.cause}\n  spec: {f.spec} "
            f"({', '.join(f.rules)}; spec section: {f.section})"
            for line, f in explained
        )
        pytest.xfail(f"{case.id} read by {reader}:\n{text}")
    if declared and len(declared) == len(cells):
        pytest.skip("; ".join(declared))


def _where(exp) -> str:
    if exp.timestamp is not None:
        return f"as of {exp.timestamp}"
    if exp.ref is not None:
        return f"ref {exp.ref}"
    return "latest" if exp.version is None else f"v{exp.version}"
