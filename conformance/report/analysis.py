"""What a report shows, computed once from results.json: the matrix, counts and findings."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from conformance.model import STATUSES

NON_PASS = ("fail", "error", "unsupported", "skip")


def version_label(r: dict[str, Any]) -> str:
    """How a cell's snapshot is named: ``latest``, ``v3`` or ``@<timestamp>``."""
    if r.get("timestamp"):
        return f"@{r['timestamp']}"
    return "latest" if r.get("version") is None else f"v{r['version']}"


@dataclass(slots=True)
class Row:
    """One matrix row: a case at one snapshot built by one writer."""

    case: str
    format: str
    writer: str
    snapshot: str
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)  # reader -> result


@dataclass(slots=True)
class Finding:
    """Engines disagree on a row, or none matches the expected result."""

    row: Row
    kind: str  # "disagreement" | "no-engine-matches" | "build-failed"
    agree: list[str]  # readers whose answer matches the expected result (the spec)
    differ: list[str]  # readers that fail or error
    text: str


@dataclass(slots=True)
class Analysis:
    """Everything the renderers need."""

    doc: dict[str, Any]
    readers: list[str]
    rows: list[Row]
    counts: dict[str, dict[str, int]]  # reader -> status -> n
    totals: dict[str, int]
    findings: list[Finding]
    multi_writer: bool


def analyse(doc: dict[str, Any]) -> Analysis:
    """Matrix rows in results order, per-reader counts, and findings."""
    readers: list[str] = []
    for e in doc.get("engines", []):
        if "reader" in e.get("roles", []):
            readers.append(e["name"])
    rows: "OrderedDict[tuple, Row]" = OrderedDict()
    counts: dict[str, dict[str, int]] = {}
    totals = {s: 0 for s in STATUSES}
    for r in doc.get("results", []):
        if r["reader"] not in readers:
            readers.append(r["reader"])
        key = (r["case"], r["writer"], version_label(r))
        row = rows.get(key)
        if row is None:
            row = rows[key] = Row(case=r["case"], format=r["format"], writer=r["writer"], snapshot=version_label(r))
        row.cells[r["reader"]] = r
        counts.setdefault(r["reader"], {s: 0 for s in STATUSES})[r["status"]] += 1
        totals[r["status"]] += 1
    readers = [n for n in readers if n in counts] or readers
    writers = {row.writer for row in rows.values()}
    return Analysis(
        doc=doc,
        readers=readers,
        rows=list(rows.values()),
        counts=counts,
        totals=totals,
        findings=_findings(list(rows.values()), doc.get("cases", {})),
        multi_writer=len(writers) > 1,
    )


def _expectation(row: Row, cases: dict[str, Any]) -> str:
    """What the spec (the case's expected result) says at this snapshot, in words."""
    any_cell = next(iter(row.cells.values()), {})
    if any_cell.get("expected_error"):
        return f"the spec requires an {any_cell['expected_error']} error"
    return "the expected rows (the case's expected result encodes the spec)"


def _findings(rows: list[Row], cases: dict[str, Any]) -> list[Finding]:
    out = []
    for row in rows:
        passed = sorted(n for n, r in row.cells.items() if r["status"] == "pass")
        wrong = sorted(n for n, r in row.cells.items() if r["status"] in ("fail", "error"))
        if not wrong:
            continue
        if all(row.cells[n]["message"].startswith("build failed") for n in wrong):
            text = f"writer {row.writer} could not build the case: {row.cells[wrong[0]]['message'][:300]}"
            out.append(Finding(row=row, kind="build-failed", agree=[], differ=wrong, text=text))
            continue
        expectation = _expectation(row, cases)
        details = "; ".join(f"{n}: {row.cells[n]['status']} ({row.cells[n]['message'][:160]})" for n in wrong)
        if passed:
            text = (
                f"{', '.join(passed)} match {expectation}; {', '.join(wrong)} differ "
                f"(the spec supports {', '.join(passed)}). {details}"
            )
            out.append(Finding(row=row, kind="disagreement", agree=passed, differ=wrong, text=text))
        else:
            text = (
                f"no engine that ran matches {expectation}: either every engine is wrong or the case is; "
                f"check the case against the spec. {details}"
            )
            out.append(Finding(row=row, kind="no-engine-matches", agree=[], differ=wrong, text=text))
    return out
