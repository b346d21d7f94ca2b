"""The JUnit XML of a run, read back by a JUnit XML reader (junitparser) as a CI viewer would."""

from __future__ import annotations

from junitparser import Error, Failure, JUnitXml, Skipped

from conformance.cli import main
from conformance.report import render_junit
from conformance.report.json_results import write_results

FINDING = {"source": "registry", "id": "known", "kind": "engine bug", "cause": "c", "spec": "s", "rules": []}


def _outcomes(path):
    out = {}
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            kinds = {type(r) for r in case.result}
            label = "failure" if Failure in kinds else "error" if Error in kinds else "skipped" if Skipped in kinds else "passed"
            out[(suite.name, case.name)] = (label, case)
    return out


def test_each_cell_is_a_test_case_new_problems_red_known_ones_skipped(results_doc, tmp_path):
    rows = results_doc["results"]
    rows[1]["finding"] = FINDING  # alpha's wrong answer on delta/basic is a registered finding
    rows.append({**rows[0], "reader": "alpha", "case": "delta/meta", "status": "partial",
                 "message": "rows match; metadata not checked"})
    path = tmp_path / "junit.xml"
    path.write_text(render_junit(results_doc), encoding="utf-8")
    got = _outcomes(path)
    assert len(got) == len(rows)
    alpha = {name: label for (suite, name), (label, _) in got.items() if suite == "lakeconf.alpha"}
    assert alpha["delta/basic @ latest (written by reference)"] == "skipped"  # known finding
    assert alpha["delta/basic @ v0 (written by reference)"] == "passed"
    assert alpha["delta/neg-gap @ latest (written by reference)"] == "failure"  # new wrong answer
    assert alpha["delta/dv @ latest (written by reference)"] == "failure"  # unexplained unsupported
    assert alpha["delta/meta @ latest (written by reference)"] == "skipped"  # partial is no pass
    label, case = got[("lakeconf.reference", "delta/all-wrong @ latest (written by reference)")]
    assert label == "error" and "KeyError: boom" in case.result[0].message
    suites = {s.name: s for s in JUnitXml.fromfile(str(path))}
    assert suites["lakeconf.alpha"].failures == 3 and suites["lakeconf.alpha"].skipped == 2
    skipped = got[("lakeconf.alpha", "delta/basic @ latest (written by reference)")][1].result[0]
    assert "engine bug" in skipped.message


def test_report_command_writes_junit(results_doc, tmp_path, capsys):
    results = write_results(results_doc, str(tmp_path))
    assert main(["report", results, "--junit-xml", str(tmp_path / "ci" / "cells.xml")]) == 0
    assert len(_outcomes(tmp_path / "ci" / "cells.xml")) == len(results_doc["results"])
