"""The findings registry (every format's findings, joined by conformance.findings): well-formed, true to the catalog and the corpus, rendered."""

from __future__ import annotations

import fnmatch
import re

import pytest

from conformance import findings as reg
from conformance.engines.base import Capabilities, Engine
from conformance.engines.registry import builtin_names
from conformance.findings import Finding, all_findings, explain, findings_for
from conformance.model import Expected
from conformance.report import analyse, problems, render_html, render_markdown
from conformance.rules import all_rules

FINDINGS = all_findings()
BUILTIN_NAMES = builtin_names()


@pytest.fixture(scope="module")
def case_ids() -> set[str]:
    from conformance.cases.registry import all_cases

    return {c.id for c in all_cases()}


def test_registry_loads_with_unique_ids():
    assert len(FINDINGS) >= 10
    ids = [f.id for f in FINDINGS]
    assert len(ids) == len(set(ids)), "finding ids must be unique"


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_entry_is_complete(finding: Finding):
    assert finding.status in (*reg.FINDING_STATUSES, reg.VIOLATION)
    assert finding.upstream is None or finding.upstream in reg.UPSTREAM_KINDS
    for text in (finding.cause, finding.spec, finding.section):
        assert text.strip(), f"{finding.id}: cause, spec and section must be non-empty"
    assert finding.rules, f"{finding.id}: name the rule ids the spec side rests on"
    assert finding.engines and finding.cases
    if finding.status == reg.VIOLATION:
        # about the tables a writer builds: no reader, the writer's version recorded
        assert finding.engines == ("*",) and "*" not in finding.writers
        assert set(finding.versions) == set(finding.writers), f"{finding.id}: record the version of every writer"
    else:
        assert set(finding.versions) <= set(finding.engines)
    # a message or diff pattern, so a different cause on the same cells is not explained away
    assert finding.pattern.strip(), f"{finding.id}: give the message or diff pattern its cells show"
    re.compile(finding.pattern)
    assert not re.search(finding.pattern, ""), f"{finding.id}: the pattern matches an empty message"
    # the engine versions it was seen with, so a new version is triaged again
    if finding.engines != ("*",):
        assert set(finding.versions) == set(finding.engines), f"{finding.id}: record the version of every engine"


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_entry_names_existing_cases_engines_and_rules(finding: Finding, case_ids):
    for pattern in finding.cases:
        assert any(fnmatch.fnmatchcase(c, pattern) for c in case_ids), f"{finding.id}: no case matches {pattern!r}"
    if finding.engines == ("*",):
        # A writer-side cause (every reader's cell of a table the writer built wrongly or could not
        # build) must name the writer; the reference writer is never explained away either.
        assert finding.writers != ("*",), f"{finding.id}: a writer-side finding names its writers"
    for engine in finding.engines if finding.engines != ("*",) else ():
        assert engine in BUILTIN_NAMES, f"{finding.id}: unknown engine {engine!r}"
        # A reference non-pass is a kit bug: it is never explained away.
        assert engine != "reference"
    for writer in finding.writers:
        assert writer == "*" or writer in BUILTIN_NAMES, f"{finding.id}: unknown writer {writer!r}"
        assert writer != "reference" or finding.engines != ("*",)
    catalog = all_rules()
    for rule in finding.rules:
        assert rule in catalog, f"{finding.id}: rule {rule} is not in conformance/rules/"


def test_one_explanation_per_cell_and_status():
    """No (case, engine, status) is claimed by two entries (the report would have to pick one)."""
    from conformance.cases.registry import all_cases

    for case in all_cases():
        for engine in BUILTIN_NAMES:
            claimed = [f.status for f in findings_for(case.id, engine)]
            assert len(claimed) == len(set(claimed)), (case.id, engine, claimed)


def test_explain_matches_case_engine_and_status_class():
    f = explain("delta/absolute-paths", "polars", "error")
    assert f is not None and f.id == "absolute-add-path-joined-to-root"
    assert explain("delta/absolute-paths", "polars", "fail") is None  # a different status class is new
    assert explain("delta/absolute-paths", "deltalake-datafusion", "error") is None  # that engine passes
    assert explain("delta/absolute-paths", "reference", "error") is None
    assert explain("delta/basic-append", "polars", "fail") is None


def test_explain_accepts_globs_and_a_custom_registry():
    custom = [Finding(id="x", engines=("alpha",), cases=("delta/neg-*",), status="fail", cause="c", spec="s",
                      rules=("DELTA-LOG-001",), section="Delta Log Entries")]
    assert explain("delta/neg-gap", "alpha", "fail", custom).id == "x"
    assert explain("delta/basic", "alpha", "fail", custom) is None
    assert findings_for("delta/neg-gap", "beta", custom) == []


def test_findings_can_be_about_one_writer_or_every_reader():
    about_spark = Finding(id="w", engines=("alpha",), cases=("delta/x",), status="fail", cause="c", spec="s",
                          rules=("DELTA-LOG-001",), section="s", writers=("spark",))
    build = Finding(id="b", engines=("*",), cases=("delta/x",), status="error", cause="c", spec="s",
                    rules=("DELTA-LOG-001",), section="s", writers=("spark",))
    assert explain("delta/x", "alpha", "fail", [about_spark], writer="spark").id == "w"
    assert explain("delta/x", "alpha", "fail", [about_spark]) is None  # the reference's table: not covered
    assert explain("delta/x", "reference", "error", [build], writer="spark").id == "b"
    assert build.side == "writer" and about_spark.side == "reader"
    assert build.to_dict()["side"] == "writer" and build.to_dict()["writers"] == ["spark"]
    on_s3 = Finding(id="s3", engines=("alpha",), cases=("delta/x",), status="error", cause="c", spec="s",
                    rules=("DELTA-LOG-001",), section="s", stores=("minio", "s3"))
    assert explain("delta/x", "alpha", "error", [on_s3], store="minio").id == "s3"
    assert explain("delta/x", "alpha", "error", [on_s3]) is None  # local disk: not this cause


def test_to_dict_is_what_results_json_carries():
    d = FINDINGS[0].to_dict()
    assert d["source"] == "registry" and d["id"] == FINDINGS[0].id
    assert d["cause"] and d["spec"] and d["rules"] == list(FINDINGS[0].rules) and d["section"]


# ---------------------------------------------------------------------------------------------
# The runner attaches explanations
# ---------------------------------------------------------------------------------------------


POLARS_ABSOLUTE = ("InvalidTable[invalid_table]: FileNotFoundError: No such file or directory (os error 2): "
                   "...e/delta/absolute-paths/part-00000-x.zstd.parquet (set POLARS_VERBOSE=1 to see full path)")


class _Fake(Engine):
    name = "polars"

    def __init__(self, reasons=None, version="1.44.2 (deltalake 1.6.6, pyiceberg 0.12.0)"):
        self._reasons = reasons or {}
        self._version = version

    def version(self):
        return self._version

    def capabilities(self):
        return Capabilities(read=frozenset({"delta"}), unsupported={"delta": self._reasons})

    def read(self, table, *, at=None, timestamp=None, columns=None):  # pragma: no cover - never read here
        raise AssertionError


def _case(slug):
    from conformance.cases.registry import all_cases

    return next(c for c in all_cases(format="delta") if c.slug == slug)


def test_runner_attaches_registered_finding_and_capability_gap():
    from conformance.runner import explain_cell

    got = explain_cell(_case("absolute-paths"), Expected(), _Fake(), "error", text=POLARS_ABSOLUTE)
    assert got["id"] == "absolute-add-path-joined-to-root" and got["spec"].startswith("The spec supports")
    # another message on the same cell, or another version of the engine: not this finding
    assert explain_cell(_case("absolute-paths"), Expected(), _Fake(), "error", text="ImportError: x") is None
    assert explain_cell(_case("absolute-paths"), Expected(), _Fake(version="1.45.0"), "error", text=POLARS_ABSOLUTE) is None
    assert explain_cell(_case("absolute-paths"), Expected(), _Fake(), "pass") is None
    assert explain_cell(_case("basic-append"), Expected(), _Fake(), "fail") is None
    # an unregistered unsupported cell that the engine declared: explained by its capability reason
    dv = _case("deletion-vectors")
    got = explain_cell(dv, Expected(), _Fake({"deletionVectors": "no DVs here"}), "unsupported")
    assert got["source"] == "capability" and "no DVs here" in got["cause"]
    # undeclared unsupported (the engine raised it while reading): unexplained
    assert explain_cell(dv, Expected(), _Fake(), "unsupported") is None


# ---------------------------------------------------------------------------------------------
# The report renders explanations and flags unexplained cells (synthetic results)
# ---------------------------------------------------------------------------------------------


def _doc(results_doc):
    known = {
        "source": "registry", "id": "alpha-drops-rows", "kind": "engine bug", "status": "fail",
        "cause": "alpha drops the last row of every file.",
        "spec": "The spec supports the reference: every row of a live file is returned.",
        "rules": ["DELTA-REPLAY-006"], "section": "Action Reconciliation",
    }
    for r in results_doc["results"]:
        if r["case"] == "delta/basic" and r["reader"] == "alpha" and r["status"] == "fail":
            r["finding"] = known
        if r["case"] == "delta/dv" and r["reader"] == "alpha":
            r["finding"] = reg.capability_explanation("needs deletionVectors (deletionVectors: not implemented)")
    return results_doc


def test_analysis_splits_explained_and_unexplained(results_doc):
    doc = _doc(results_doc)
    assert problems(doc) == []
    a = analyse(doc)
    keys = [e.key for e in a.explanations]
    assert keys[0] == "alpha-drops-rows" and len(a.explanations) == 2
    unexplained = {(row.case, reader) for row, reader in a.unexplained}
    # neg-gap (alpha fail) and all-wrong (reference error, alpha fail) carry no explanation; skips never count
    assert unexplained == {("delta/neg-gap", "alpha"), ("delta/all-wrong", "reference"), ("delta/all-wrong", "alpha")}


def test_markdown_shows_explanations_and_unexplained_section(results_doc):
    md = render_markdown(_doc(results_doc))
    head = md.split("## Engines")[0]
    assert "**3 unexplained non-pass cell(s)**" in head  # at the top, before anything else
    assert "## Unexplained non-passes" in md and "## Known findings" in md
    section = md.split("## Unexplained non-passes")[1].split("## Matrix")[0]
    assert "`delta/neg-gap` latest, read by alpha" in section and "delta/basic" not in section
    assert "alpha drops the last row of every file." in md
    assert "The spec supports the reference: every row of a live file is returned." in md
    assert "DELTA-REPLAY-006" in md and "Action Reconciliation" in md
    assert "**FAIL** [1]" in md and "**FAIL** (NEW)" in md
    assert "UNEXPLAINED" in md


def test_markdown_with_everything_explained(results_doc):
    doc = _doc(results_doc)
    doc["results"] = [r for r in doc["results"] if r["case"] in ("delta/basic", "delta/dv")]
    md = render_markdown(doc)
    assert "**0 unexplained non-pass cells**" in md
    assert "None: every fail, error and unsupported cell has a known explanation." in md


def test_html_shows_banner_explanations_and_escapes(results_doc):
    doc = _doc(results_doc)
    doc["results"][1]["finding"]["cause"] = "alpha returns <b>bold</b> rows."
    html = render_html(doc)
    assert 'class="banner new"' in html and "3 unexplained non-pass cell(s)" in html
    assert html.index("banner new") < html.index("<h2>Engines</h2>")
    assert 'id="unexplained"' in html and 'id="known"' in html
    assert "alpha returns &lt;b&gt;bold&lt;/b&gt; rows." in html and "<b>bold</b>" not in html
    assert '<span class="tag new">NEW</span>' in html and '<span class="tag">[1]</span>' in html


def test_bad_finding_shape_is_a_schema_problem(results_doc):
    results_doc["results"][1]["finding"] = "a string"
    assert any("finding" in p for p in problems(results_doc))


# ---------------------------------------------------------------------------------------------
# The cross-engine suite's verdicts on a published engine's cells
# ---------------------------------------------------------------------------------------------


def _judge(slug, statuses, reasons=None, message=None, version=None):
    from conformance.suites.cross_engine.test_cross_engine import _judge_published

    case = _case(slug)
    cells = [(exp, status, message or f"msg {status}", "") for exp, status in zip(case.expected, statuses)]
    fake = _Fake(reasons) if version is None else _Fake(reasons, version=version)
    _judge_published(case, "polars", fake, cells)


def test_suite_xfails_a_registered_non_pass_with_its_explanation():
    with pytest.raises(pytest.xfail.Exception, match="absolute-add-path-joined-to-root"):
        _judge("absolute-paths", ["error"], message=POLARS_ABSOLUTE)


def test_suite_fails_another_cause_on_a_registered_cell_and_a_new_engine_version():
    # same case, same status, another message: new, and the entry no longer reproduces
    with pytest.raises(pytest.fail.Exception, match="(?s)not in the delta findings.*stale finding"):
        _judge("absolute-paths", ["error"], message="EngineError: ConnectionRefusedError: store down")
    with pytest.raises(pytest.fail.Exception, match="stale finding 'absolute-add-path-joined-to-root'.*seen with 1.44.2"):
        _judge("absolute-paths", ["error"], message=POLARS_ABSOLUTE, version="1.45.0 (deltalake 1.6.6)")


def test_suite_fails_an_unregistered_non_pass():
    with pytest.raises(pytest.fail.Exception, match="not in the delta findings"):
        _judge("basic-append", ["pass", "fail", "pass"])
    # the same case with a status class other than the registered one is new too
    with pytest.raises(pytest.fail.Exception, match="not in the delta findings"):
        _judge("absolute-paths", ["fail"])


def test_suite_fails_a_stale_finding():
    with pytest.raises(pytest.fail.Exception, match="stale finding 'absolute-add-path-joined-to-root'"):
        _judge("absolute-paths", ["pass"])


def test_suite_skips_declared_capability_gaps():
    n = len(_case("deletion-vectors").expected)
    with pytest.raises(pytest.skip.Exception, match="needs|msg unsupported"):
        _judge("deletion-vectors", ["unsupported"] * n, {"deletionVectors": "no DVs"})
    _judge("basic-append", ["pass"] * 3)  # all pass, nothing registered: the test passes


def _cell(case, reader, status, message, finding=None, writer="reference"):
    return {"case": case, "reader": reader, "writer": writer, "status": status, "message": message, "diff": "",
            **({"finding": {"source": "registry", "id": finding}} if finding else {})}


def test_a_finding_matches_only_its_message_and_its_engine_version():
    f = Finding(id="x", engines=("alpha",), cases=("delta/neg-*",), status="error", cause="c", spec="s",
                rules=("DELTA-LOG-001",), section="s", versions={"alpha": "1.2.3 (beta 4.5)"},
                pattern=r"Kernel error: No protocol found")
    text = "InvalidTable: Kernel error: No protocol found in delta log."
    assert explain("delta/neg-gap", "alpha", "error", [f], text=text, engine_version="1.2.3 (beta 4.5, gamma 6.7)") is f
    assert explain("delta/neg-gap", "alpha", "error", [f], text="ImportError: No module named 'alpha_core'") is None
    assert explain("delta/neg-gap", "alpha", "error", [f], text=text, engine_version="1.3.0 (beta 4.5)") is None


def test_verify_tells_reproduced_gone_drifted_and_unreachable():
    from conformance.findings.verify import judge

    def finding(fid, **kw):
        base = dict(engines=("alpha",), cases=("delta/neg-gap",), status="error", cause="c", spec="s",
                    rules=("DELTA-LOG-001",), section="s", pattern="boom", versions={"alpha": "1.0"})
        return Finding(id=fid, **{**base, **kw})

    reproduced, gone = finding("reproduced"), finding("gone", cases=("delta/basic",))
    drifted, elsewhere = finding("drifted", cases=("delta/dv",)), finding("s3-only", stores=("minio",))
    offline = finding("offline", engines=("beta",), versions={"beta": "2.0"})
    rows = [
        _cell("delta/neg-gap", "alpha", "error", "boom", finding="reproduced"),
        _cell("delta/basic", "alpha", "pass", ""),
        _cell("delta/dv", "alpha", "error", "a different failure"),
        _cell("delta/neg-gap", "beta", "skip", "engine unavailable: not installed"),
    ]
    engines = {"alpha": {"version": "1.0.0 (delta 1.0)"}, "beta": {"unavailable": "not installed"}}
    got = {v.finding.id: v.outcome for v in judge([reproduced, gone, drifted, elsewhere, offline], rows, "local", engines)}
    assert got == {"reproduced": "reproduced", "gone": "gone", "drifted": "drifted", "s3-only": "unreachable",
                   "offline": "unreachable"}


def test_verify_replays_only_the_cells_its_entries_name():
    from types import SimpleNamespace

    from conformance.findings.verify import cells_needed

    one_reader = Finding(id="r", engines=("alpha",), cases=("delta/*",), status="fail", cause="c", spec="s",
                         rules=("DELTA-LOG-001",), section="s")
    one_writer = Finding(id="w", engines=("*",), cases=("delta/x",), status="error", cause="c", spec="s",
                         rules=("DELTA-LOG-001",), section="s", writers=("spark",))
    on_s3 = Finding(id="s", engines=("beta",), cases=("delta/y",), status="error", cause="c", spec="s",
                    rules=("DELTA-LOG-001",), section="s", stores=("minio",))
    judged = Finding(id="v", engines=("*",), cases=("iceberg/v",), status="violation", cause="c", spec="s",
                     rules=("DELTA-LOG-001",), section="s", writers=("spark",))
    names = ["reference", "alpha", "beta", "spark"]
    cells_of = cells_needed([one_reader, one_writer, on_s3, judged], "local", names)
    # a violation entry: its writer's tables, built for the validator, read by nobody
    assert cells_of(SimpleNamespace(id="iceberg/v")) == ({"spark"}, set())
    # a glob entry for one reader replays its cases for that reader only, from every writer
    assert cells_of(SimpleNamespace(id="delta/z")) == (set(names), {"alpha"})
    # a writer-side entry: every reader, of that writer's tables
    assert cells_of(SimpleNamespace(id="delta/x")) == (set(names), set(names))
    # an entry of another store needs nothing here
    assert cells_of(SimpleNamespace(id="delta/y")) == (set(names), {"alpha"})
    assert cells_of(SimpleNamespace(id="iceberg/a")) == (set(), set())
