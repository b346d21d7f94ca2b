"""Rule catalogs, the pytest plugin's rule collection, and the coverage numbers."""

from __future__ import annotations

import pytest

from conformance.coverage import Sources, collect_test_rules, compute, render_text
from conformance.rules import all_rules, format_of, load_rules, parse_catalog
from conformance.suites.plugin import asserts, rule_ids


@pytest.mark.parametrize("fmt, count, must", [("delta", 320, 257), ("iceberg", 392, 327), ("paimon", 189, 172), ("hudi", 211, 196)])
def test_catalog_counts(fmt, count, must):
    rules = load_rules(fmt)
    assert len(rules) == count and len({r.id for r in rules}) == count
    assert sum(r.is_must for r in rules) == must


def test_rule_fields():
    r = all_rules()["DELTA-LOG-001"]
    assert r.format == "delta" and r.binds == "both" and r.strength == "MUST"
    assert r.section == "Delta Table Specification" and "consecutive" in r.rule
    assert format_of("ICEBERG-GEN-001") == "iceberg" and format_of("NOPE-001") is None


def test_parse_catalog_handles_headers_pipes_and_appendices():
    text = """
| ID | Requirement (paraphrase) | Doc section / source | Side | Strength | Seed | How |
|---|---|---|---|---|---|---|
| X-A-001 | a \\| b | s1 | R/W | MUST NOT | no | t |
| not-an-id | x | s | R | MUST | no | t |

| name | value |
|---|---|
| X-A-002 | appendix |
"""
    (rule,) = parse_catalog(text, "x")
    assert rule.id == "X-A-001" and rule.rule == "a | b" and rule.is_must and rule.binds == "R/W"


@pytest.mark.rule("DELTA-LOG-001", "DELTA-LOG-004")
def test_marked_for_collection(request):
    """Carries two rule ids for the collection test below (both are covered by tens of other tests,
    so they add nothing to coverage); checks that the marker hands them over in order."""
    assert rule_ids(request.node) == ["DELTA-LOG-001", "DELTA-LOG-004"]


def test_every_rule_tagged_test_can_fail(request):
    """A test that carries rule ids checks something (an assert, pytest.raises/fail, or a project
    helper that does): coverage counts a rule only through a test that can fail on it."""
    idle = [item.nodeid for item in request.session.items
            if rule_ids(item) and hasattr(item, "function") and not asserts(item.function)]
    assert not idle, f"{len(idle)} test(s) carry rule ids but check nothing: {idle[:10]}"


def _idle_test():
    x = 1 + 1  # runs code, checks nothing
    return x


def _checking_helper(v):
    if v != 2:
        raise AssertionError(v)


def _checking_test():
    _checking_helper(1 + 1)


def test_asserts_tells_checking_tests_from_idle_ones():
    assert not asserts(_idle_test)
    assert asserts(_checking_test)  # through a project helper that raises AssertionError
    assert asserts(test_marked_for_collection)


def test_plugin_collects_rule_ids():
    tests, problems = collect_test_rules(["conformance/suites/unit/harness/test_rules_coverage.py"])
    assert problems == []
    key = "conformance/suites/unit/harness/test_rules_coverage.py::test_marked_for_collection"
    assert tests[key] == ["DELTA-LOG-001", "DELTA-LOG-004"]


def test_coverage_counts_tests_and_cases():
    doc = compute(Sources(tests={"t1": ["DELTA-LOG-001"], "t2": ["TYPO-1"]}, cases={"c": ["DELTA-LOG-001", "DELTA-CRC-007"]}))
    delta = [f for f in doc["formats"] if f["format"] == "delta"][0]
    assert delta["with_check"] == 2 and delta["must_with_check"] == 1  # CRC-007 is a SHOULD
    assert delta["by_tests"] == 1 and delta["by_cases"] == 2
    assert delta["pct_with_check"] == round(100 * 2 / 320, 1)
    assert doc["unknown_rule_ids"] == ["TYPO-1"]
    text = render_text(doc)
    assert "delta" in text and "TYPO-1" in text
