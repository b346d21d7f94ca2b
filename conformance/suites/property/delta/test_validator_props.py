"""Property (8): a valid generated log, mutated to break one named rule, is flagged with that rule.

The mutation is chosen by hypothesis among those that apply to the generated log (see
``conformance.formats.delta.strategies.MUTATIONS``). The unmutated log must not carry the rule already,
so the flag is caused by the mutation. A second property checks the other direction on tables the
reference writer builds: the validator finds nothing wrong with them.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.formats.delta import strategies as sd
from conformance.suites.property.delta._support import examples

MUTATED_RULES = sorted({m.rule for m in sd.MUTATIONS})


def _write(directory: str, files: dict) -> None:
    for rel, data in files.items():
        full = os.path.join(directory, rel)
        if data is None:
            if os.path.exists(full):
                os.unlink(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(data)


def _rules(directory: str) -> dict[str, list[str]]:
    from reference_impl.delta.validate import validate_table

    out: dict[str, list[str]] = {}
    for v in validate_table(directory):
        out.setdefault(v.rule, []).append(f"{v.where}: {v.message}")
    return out


@pytest.mark.parametrize("mutation", sd.MUTATIONS, ids=lambda m: m.rule)
@examples(0.1)
@given(data=st.data())
def test_mutation_is_flagged_with_its_rule(request, mutation, data):
    request.node.add_marker(pytest.mark.rule(mutation.rule))
    log = data.draw(mutation.logs(), label="log")
    assume(mutation.applies(log))
    files = sd.log_files(log)
    mutation.apply(files, log, data.draw)
    with tempfile.TemporaryDirectory() as clean, tempfile.TemporaryDirectory() as broken:
        log.write(clean)
        before = _rules(clean)
        assert mutation.rule not in before, f"valid log already flagged {mutation.rule}: {before[mutation.rule][:2]}"
        _write(broken, sd.log_files(log))
        _write(broken, files)
        after = _rules(broken)
        assert mutation.rule in after, f"mutation {mutation.name!r} not flagged as {mutation.rule}; flagged: {sorted(after)}"


@pytest.mark.rule(*MUTATED_RULES)
@examples(0.5)
@given(sd.mutated_logs())
def test_random_mutation_is_flagged(case):
    log, mutation, files = case
    with tempfile.TemporaryDirectory() as broken:
        _write(broken, sd.log_files(log))
        _write(broken, files)
        assert mutation.rule in _rules(broken), f"mutation {mutation.name!r} not flagged as {mutation.rule}"


# Rules a table without its data files cannot satisfy (the generated logs name files never written).
_NEEDS_DATA_FILES = {"DELTA-ACTION-017", "DELTA-ACTION-018"}


@pytest.mark.rule("DELTA-LOG-001", "DELTA-ACTION-008", "DELTA-ACTION-011", "DELTA-REPLAY-008", "DELTA-DV-010", "DELTA-DV-002")
@examples(0.5)
@given(sd.action_logs(max_commits=8))
def test_valid_generated_logs_are_clean(log):
    with tempfile.TemporaryDirectory() as d:
        log.write(d)
        flagged = {r: m for r, m in _rules(d).items() if r not in _NEEDS_DATA_FILES}
        assert not flagged, "\n".join(f"{r}: {m[:2]}" for r, m in flagged.items())


@pytest.mark.rule("DELTA-WRITER-001", "DELTA-WRITER-003", "DELTA-STATS-004", "DELTA-DV-016", "DELTA-CKPT-007")
@examples(0.2)
@given(sd.table_histories(max_ops=4))
def test_reference_writer_tables_are_clean(h):
    from conformance.engines.reference import ReferenceEngine
    from conformance.model import TableRef

    with tempfile.TemporaryDirectory() as d:
        ReferenceEngine().write(TableRef(format="delta", uri=d), h.steps)
        flagged = _rules(d)
        assert not flagged, "\n".join(f"{r}: {m[:2]}" for r, m in flagged.items())
