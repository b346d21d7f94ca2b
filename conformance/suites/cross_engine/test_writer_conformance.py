"""Writer conformance: every table every in-process writer builds is judged by the reference validator.

* the reference writer's table breaks exactly the rules the case declares (``Case.violates``):
  any other violation is a reference writer bug or a validator mistake, and a declared rule the
  validator no longer flags is a check that stopped firing;
* a peer writer's violation (deltalake, pyiceberg, ...) must be declared by the case or be a
  writer-side finding of the registry (``status="violation"``), else the test fails: triage it;
* a registered violation that no table of that writer shows any more, or that was seen with
  another version of the writer, is stale.

``lakeconf run`` records the same judgement per (case, writer, store) in results.json
(``writer_checks``) and the report's writers x rules section; Spark's tables are judged there
and in the Spark suites.
"""

from __future__ import annotations

import os

import pytest

from conformance.engines.registry import load_engines
from conformance.findings import violation_findings
from conformance.runner import _build, _version_of
from conformance.storage import open_store
from conformance.writer_checks import REFERENCE, check, unexplained

try:
    from conformance.cases.registry import all_cases

    CASES = all_cases()
except Exception:  # noqa: BLE001 - test_cross_engine reports a broken registry
    CASES = []


def _writer_names() -> list[str]:
    """The in-process writers: those named by LAKECONF_ENGINES, else every built-in engine that
    runs without a JVM and declares writing some format."""
    from conformance.engines.registry import OPT_IN, builtin_names

    named = [n.strip() for n in os.environ.get("LAKECONF_ENGINES", "").split(",") if n.strip()]
    return named or [n for n in builtin_names() if n not in OPT_IN]


def _writers_by_format() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    try:
        engines = load_engines(_writer_names())
    except Exception:  # noqa: BLE001 - test_cross_engine.test_engines_load reports it
        return {REFERENCE: []}
    for e in engines:
        try:
            formats = e.capabilities().write
        except Exception:  # noqa: BLE001
            formats = ()
        for fmt in formats:
            out.setdefault(fmt, []).append(e.name)
        e.close()
    return out


WRITERS = _writers_by_format()


def _params():
    out = []
    for case in CASES:
        for writer in WRITERS.get(case.format, [REFERENCE]):
            if case.writers is not None and writer not in case.writers:
                continue
            out.append(pytest.param(case, writer, id=f"{case.id}-{writer}",
                                    marks=pytest.mark.rule(*(case.violates or case.rules))))
    return out


@pytest.fixture(scope="module")
def writers():
    found = {e.name: e for e in load_engines(sorted({w for ws in WRITERS.values() for w in ws} | {REFERENCE}))}
    yield found
    for e in found.values():
        e.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with open_store("local", str(tmp_path_factory.mktemp("writer_conformance"))) as s:
        yield s


@pytest.mark.parametrize("case, writer", _params())
def test_writer_table_conforms(case, writer, writers, store):
    engine = writers[writer]
    reason = engine.available()
    if reason:
        pytest.skip(f"{writer} unavailable: {reason}")
    status, message, table, _ = _build(case, engine, store, None)
    if status == "unsupported":
        pytest.skip(message)
    if status is not None:
        if writer == REFERENCE:
            pytest.fail(f"the reference writer could not build {case.id}: {message}")
        pytest.skip(f"not built: {message} (the reader cells of this build carry its finding)")
    version = _version_of(engine)
    entry = check(case, writer, table, store=store.name, writer_version=version)
    assert entry is not None, f"the reference has no validator for {case.format}"
    new = unexplained(entry)
    problems = []
    if new:
        where = f"conformance/formats/{case.format}/findings.py"
        if writer == REFERENCE:
            problems.append(f"{case.id} written by the reference breaks other rules than the case declares "
                            f"(violates={case.violates}): fix the reference writer, the validator, or the case:\n  "
                            + "\n  ".join(new))
        else:
            problems.append(f"{case.id} written by {writer} {version}: violation(s) not in the {case.format} findings. "
                            f"Triage: read the rule's spec section, then register a writer-side finding "
                            f"(status='violation') in {where}, or fix the validator if the writer is right:\n  "
                            + "\n  ".join(new))
    seen = {v["finding"]["id"] for v in entry["violations"] if isinstance(v.get("finding"), dict)}
    for f in violation_findings():
        # Staleness per table only where the entry names this case: a glob also covers tables that
        # never had the cause (an empty table has no manifest to lack a key); `lakeconf findings
        # verify` judges a glob entry over all its tables.
        if case.id not in f.cases or not f.covers(case.id, "*", writer, store.name):
            continue
        if f.id not in seen:
            now = sorted({v["rule"] for v in entry["violations"]}) or "none"
            problems.append(f"stale finding {f.id!r}: {case.id} written by {writer} {version} no longer shows "
                            f"{', '.join(f.rules)} matching {f.pattern!r} (violations now: {now}; seen with "
                            f"{f.versions.get(writer, '?')}): update or remove the entry")
    assert entry["status"] != "error", entry.get("message")
    assert not problems, "\n".join(problems)
