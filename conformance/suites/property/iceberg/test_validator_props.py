"""The Iceberg validator on generated tables: valid ones are clean; one mutation from the catalogue is named by its rule.

Metadata is drawn by ``conformance.formats.iceberg.strategies.table_metadata`` (every version, every type,
snapshots, refs, logs, statistics) and laid out as a table with an empty manifest list per
snapshot. Each mutation of ``METADATA_MUTATIONS`` breaks one rule on the wire document; the
validator must report that rule, and must not have reported it before the mutation.
"""

from __future__ import annotations

import tempfile

import pytest
from hypothesis import HealthCheck, assume, given
from hypothesis import strategies as st

from conformance.formats.iceberg import strategies as si
from conformance.suites.property.delta._support import examples
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg.validate import validate_table

MUTATED_RULES = sorted({m.rule for m in si.METADATA_MUTATIONS})


def _rules(directory: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in validate_table(directory):
        out.setdefault(v.rule, []).append(f"{v.where}: {v.message}")
    return out


@pytest.mark.rule("ICEBERG-META-016", "ICEBERG-META-027", "ICEBERG-SNAP-002", "ICEBERG-REF-006", "ICEBERG-GEN-001",
                  "ICEBERG-GEN-002", "ICEBERG-SCHEMA-001", "ICEBERG-EVOL-009", "ICEBERG-PART-009", "ICEBERG-MLIST-002")
@examples(0.5)
@given(si.table_metadata())
def test_generated_tables_are_clean(md):
    """Every generated table (with empty manifest lists) validates clean: no false positive on any shape the strategy draws."""
    with tempfile.TemporaryDirectory() as d:
        md = si.relocate(md, "file://" + d)
        si.write_metadata_table(d, md)
        found = _rules(d)
        assert not found, "\n".join(f"{r}: {m[:2]}" for r, m in found.items())


@pytest.mark.parametrize("mutation", si.METADATA_MUTATIONS, ids=lambda m: f"{m.rule}:{m.name}")
# Some mutations apply to few drawn tables (a v3 table with a current snapshot, say): the rejected
# draws are the point of ``assume`` here, not a strategy gone wrong.
@examples(0.05, floor=3, also_suppress=(HealthCheck.filter_too_much,))
@given(data=st.data())
def test_mutation_is_flagged_with_its_rule(request, mutation, data):
    """The one mutation, when it applies to the drawn table, is reported as its rule (which the table did not break before)."""
    request.node.add_marker(pytest.mark.rule(mutation.rule))
    md = data.draw(si.table_metadata(max_snapshots=3), label="metadata")
    with tempfile.TemporaryDirectory() as d:
        md = si.relocate(md, "file://" + d)
        doc = M.metadata_to_dict(md)
        assume(mutation.applies(doc))
        si.write_metadata_table(d, md)
        before = _rules(d)
        assert mutation.rule not in before, f"valid table already flagged {mutation.rule}: {before[mutation.rule][:2]}"
        mutation.apply(doc, data.draw)
        si.write_metadata_table(d, md, doc)
        after = _rules(d)
        assert mutation.rule in after, f"mutation {mutation.name!r} not flagged as {mutation.rule}; flagged: {sorted(after)}"


@pytest.mark.rule(*MUTATED_RULES)
@examples(0.5)
@given(si.mutated_metadata())
def test_random_mutation_is_flagged(case):
    """A random applicable mutation of a random table is named by its rule, and never crashes the validator."""
    md, doc, mutation = case
    with tempfile.TemporaryDirectory() as d:
        root = "file://" + d
        md2 = si.relocate(md, root)
        doc = dict(doc, location=root) if "location" in doc else doc
        for s in doc.get("snapshots") or []:
            if isinstance(s, dict) and "manifest-list" in s:
                s["manifest-list"] = f"{root}/metadata/snap-{s.get('snapshot-id')}.avro"
        for key, name in (("statistics", "stats-{}.puffin"), ("partition-statistics", "ps-{}.parquet")):
            for e in doc.get(key) or [] if isinstance(doc.get(key), list) else []:
                if isinstance(e, dict):
                    e["statistics-path"] = f"{root}/metadata/" + name.format(e.get("snapshot-id"))
        si.write_metadata_table(d, md2, doc)
        found = _rules(d)
        assert mutation.rule in found, f"mutation {mutation.name!r} not flagged as {mutation.rule}; flagged: {sorted(found)}"


@pytest.mark.rule("ICEBERG-PART-001", "ICEBERG-GEN-008", "ICEBERG-MANIFEST-021", "ICEBERG-MANIFEST-029", "ICEBERG-MANIFEST-030",
                  "ICEBERG-DELETE-006", "ICEBERG-DV-008", "ICEBERG-SEQ-012", "ICEBERG-MLIST-010", "ICEBERG-SNAP-008")
@examples(0.2)
@given(si.table_histories(max_ops=3))
def test_reference_writer_histories_are_clean(h):
    """Tables the reference writer builds from generated histories (types, partitioning, deletes, overwrites) break no rule."""
    from conformance.engines.reference import ReferenceEngine
    from conformance.model import TableRef

    with tempfile.TemporaryDirectory() as d:
        ReferenceEngine().write(TableRef(format="iceberg", uri=d), h.steps)
        found = _rules(d)
        assert not found, "\n".join(f"{r}: {m[:2]}" for r, m in found.items())
