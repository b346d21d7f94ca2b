"""Writer conformance (conformance.writer_checks): how a validator's violations are accounted for and reported."""

from __future__ import annotations

from xml.etree import ElementTree as ET

import pyarrow as pa

from conformance.findings import Finding, explain, findings_for
from conformance.model import Case, Create, Expected
from conformance.report import analyse, problems, render_html, render_junit, render_markdown
from conformance.runner import verdict
from conformance.writer_checks import judge, rules_by_writer, unexplained

SCHEMA = pa.schema([("x", pa.int64())])
LEAK = Finding(id="alpha-leaks", engines=("*",), writers=("alpha",), cases=("delta/c*",), status="violation",
               pattern=r"DELTA-LOG-004: commit file name", cause="c", spec="s", rules=("DELTA-LOG-004",),
               section="Delta Log Entries", versions={"alpha": "1.2"})


def case(violates=()):
    return Case(id="delta/c1", format="delta", description="d", rules=("DELTA-LOG-001",), violates=violates,
                steps=(Create(schema=SCHEMA),), expected=(Expected(rows=SCHEMA.empty_table()),))


def v(rule, message="commit file name is not padded"):
    return {"rule": rule, "message": message, "where": ""}


def entry(writer, violations, missing=(), status=None):
    return {"case": "delta/c1", "format": "delta", "writer": writer, "store": "local",
            "status": status or ("violations" if violations else "clean"), "violations": violations,
            "missing": list(missing), "seconds": 0.1}


def test_a_registered_writer_finding_explains_its_rule_only_for_its_writer_and_version():
    out, missing = judge(case(), "alpha", [v("DELTA-LOG-004"), v("DELTA-LOG-005")], store="local",
                         writer_version="1.2", registry=[LEAK])
    assert out[0]["finding"]["id"] == "alpha-leaks" and "finding" not in out[1] and missing == []
    assert unexplained(entry("alpha", out)) == ["DELTA-LOG-005: commit file name is not padded"]
    other, _ = judge(case(), "beta", [v("DELTA-LOG-004")], store="local", writer_version="1.2", registry=[LEAK])
    newer, _ = judge(case(), "alpha", [v("DELTA-LOG-004")], store="local", writer_version="1.3", registry=[LEAK])
    wrong_text, _ = judge(case(), "alpha", [v("DELTA-LOG-004", "something else")], store="local",
                          writer_version="1.2", registry=[LEAK])
    assert all("finding" not in x[0] for x in (other, newer, wrong_text))


def test_declared_rules_are_expected_and_the_reference_must_break_exactly_those():
    declared = case(violates=("DELTA-LOG-004",))
    out, missing = judge(declared, "alpha", [v("DELTA-LOG-004")], store="local", writer_version="1", registry=[])
    assert out[0]["declared"] and unexplained(entry("alpha", out)) == []
    # the reference writer: a declared rule not flagged is a check that stopped firing
    out, missing = judge(declared, "reference", [], store="local", writer_version="1", registry=[])
    assert missing == ["DELTA-LOG-004"] and unexplained(entry("reference", out, missing))
    # ... and a finding never explains the reference's own violation
    out, _ = judge(case(), "reference", [v("DELTA-LOG-004")], store="local", writer_version="1",
                   registry=[LEAK.__class__(**{**{k: getattr(LEAK, k) for k in LEAK.__slots__}, "writers": ("*",)})])
    assert unexplained(entry("reference", out))


def test_a_validator_failure_is_unexplained():
    e = entry("alpha", [], status="error") | {"message": "Internal: boom"}
    assert unexplained(e) == ["the validator failed: Internal: boom"]


def test_violation_findings_never_explain_reader_cells():
    assert findings_for("delta/c1", "anything", [LEAK], writer="alpha") == []
    assert explain("delta/c1", "anything", "error", [LEAK], writer="alpha") is None


def test_verdict_report_and_junit_show_writers_x_rules():
    known, _ = judge(case(), "alpha", [v("DELTA-LOG-004")], store="local", writer_version="1.2", registry=[LEAK])
    new, _ = judge(case(), "beta", [v("DELTA-LOG-005", "not JSON")], store="local", writer_version="1", registry=[LEAK])
    checks = [entry("alpha", known), entry("beta", new), entry("reference", [])]
    doc = {"generated_at": "2026-01-01T00:00:00", "store": "local", "engines": [], "results": [],
           "writer_checks": checks}
    assert problems(doc) == []
    assert problems(doc | {"writer_checks": [{"case": "x"}]})
    v_ = verdict([], checks)
    assert v_.tables_checked == 3 and v_.writer_unexplained == 1 and not v_.ok
    assert rules_by_writer(checks)["alpha"]["DELTA-LOG-004"]["findings"] == ["alpha-leaks"]
    a = analyse(doc)
    assert a.writer_tables["alpha"] == {"checked": 1, "clean": 0, "violations": 1, "error": 0}
    md = render_markdown(doc, a)
    assert "## Writers x rules" in md and "finding alpha-leaks" in md and "UNEXPLAINED (1)" in md
    assert "**reference** breaks no rule." in md
    html = render_html(doc, a)
    assert 'id="writers"' in html and "1 unexplained violation(s)" in html
    root = ET.fromstring(render_junit(doc))
    suite = root.find("testsuite[@name='lakeconf.writers']")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "1"
