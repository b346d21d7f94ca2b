"""Report rendering: a pure function of results.json, readable, escaped, with findings."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from conformance.report import ResultsError, analyse, load_results, problems, render_html, render_markdown, write_report


def test_synthetic_document_is_valid(results_doc):
    assert problems(results_doc) == []


def test_schema_problems_are_named(results_doc):
    results_doc["results"][0]["status"] = "maybe"
    del results_doc["results"][1]["reader"]
    found = problems(results_doc)
    assert any("status 'maybe'" in p for p in found)
    assert any("results[1].reader" in p for p in found)


def test_findings_say_which_side_the_spec_supports(results_doc):
    a = analyse(results_doc)
    kinds = {(f.row.case, f.row.snapshot): f for f in a.findings}
    basic = kinds[("delta/basic", "latest")]
    assert basic.kind == "disagreement" and basic.agree == ["reference"] and basic.differ == ["alpha"]
    assert "the spec supports reference" in basic.text
    neg = kinds[("delta/neg-gap", "latest")]
    assert "invalid_table error" in neg.text
    assert kinds[("delta/all-wrong", "latest")].kind == "no-engine-matches"
    # unsupported and skip never make a finding
    assert ("delta/dv", "latest") not in kinds
    assert ("delta/basic", "v0") not in kinds


def test_counts_per_engine(results_doc):
    a = analyse(results_doc)
    assert a.counts["alpha"] == {"pass": 1, "partial": 0, "fail": 3, "error": 0, "unsupported": 1, "skip": 0}
    assert a.totals["skip"] == 5
    assert a.readers == ["reference", "alpha", "beta"]


def test_markdown_has_engines_matrix_findings_and_details(results_doc):
    md = render_markdown(results_doc)
    assert "| alpha | 1.2.3 | reader | 1 | 0 | 3 | 0 | 1 | 0 |" in md
    assert "| `delta/basic` | v0 | pass | pass | skip |" in md
    # no explanation in the synthetic document: the failing cell is flagged as new
    assert "| `delta/basic` | latest | pass | **FAIL** (NEW) | skip |" in md
    assert "## Findings" in md and "engines disagree" in md
    assert "- (3, 'c')" in md  # the diff of a failing cell
    assert "beta (unavailable: not installed)" in md


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.scripts += tag == "script"


def test_html_matrix_is_coloured_escaped_and_has_details(results_doc):
    html = render_html(results_doc)
    parser = _Collect()
    parser.feed(html)
    assert parser.scripts == 0  # the '<script>' in a diff is escaped, not markup
    assert "&lt;script&gt;" in html
    assert "<details><summary>fail" in html
    assert "background:#c62828" in html  # fail colour
    assert "1.2.3" in html and "2026-11-22T08:00:00+00:00" in html
    assert "Findings" in html and "the spec supports reference" in html


def test_html_has_a_card_per_engine_with_rates_by_format_and_area(results_doc):
    from conformance.report.html import pass_rate_colour

    results_doc["results"][1]["finding"] = {"source": "registry", "id": "alpha-drops-a-row", "kind": "engine bug",
                                            "cause": "c", "spec": "s", "rules": []}
    html = render_html(results_doc)
    assert html.count('<div class="card">') == 3  # reference, alpha, beta
    card = html.split('<div class="card"><h3>alpha')[1].split('<div class="card">')[0]
    # alpha has 5 cells, 4 judged (dv is unsupported), 1 pass; all its cases carry DELTA-LOG-001
    assert "25.0% of 4 judged cells pass" in card
    assert "1/4</td>" in card and ">&nbsp;&nbsp;LOG<" in card
    assert "alpha-drops-a-row" in card and "3 unexplained cell(s)" in card
    assert pass_rate_colour(0, 4) == "hsl(0, 55%, 82%)" and pass_rate_colour(4, 4) == "hsl(120, 55%, 82%)"


def test_report_is_a_pure_function(results_doc):
    assert render_html(results_doc) == render_html(json.loads(json.dumps(results_doc)))
    assert render_markdown(results_doc) == render_markdown(json.loads(json.dumps(results_doc)))


def test_write_and_load(tmp_path, results_doc):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results_doc))
    doc = load_results(str(path))
    md, html = write_report(doc, str(tmp_path / "out"))
    assert open(md).read().startswith("# lakeconf compatibility report")
    assert open(html).read().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("content, fragment", [
    (None, "does not exist"),
    ("{not json", "is not JSON"),
    ('{"results": 3}', "is not a lakeconf results file"),
])
def test_load_errors(tmp_path, content, fragment):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ResultsError, match=fragment):
        load_results(str(path))


def test_writers_x_readers_is_per_format_when_a_run_has_several():
    from conformance.report.analysis import analyse

    def cell(fmt, writer, status):
        return {"case": f"{fmt}/c", "format": fmt, "writer": writer, "reader": "duckdb", "version": None,
                "status": status, "message": "", "seconds": 0.0, "rules": [], "diff": ""}

    doc = {"results": [cell("delta", "reference", "pass"), cell("iceberg", "reference", "fail")]}
    a = analyse(doc)
    assert a.writers == ["delta: reference", "iceberg: reference"]
    assert a.pair_text("delta: reference", "duckdb") == "1/1"
    assert a.pair_text("iceberg: reference", "duckdb") == "0/1 (1 fail)"
    one = analyse({"results": [cell("delta", "reference", "pass")]})
    assert one.writers == ["reference"]
