"""What a report shows, computed once from results.json: the matrix, counts and findings."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from conformance.model import STATUSES

NON_PASS = ("partial", "fail", "error", "unsupported", "skip")
# Non-pass statuses that need an explanation (a skip says why in its message: the engine or the
# writer is not available here).
NEEDS_EXPLANATION = ("fail", "error", "unsupported")


def version_label(r: dict[str, Any]) -> str:
    """How a cell's snapshot is named: ``latest``, ``v3``, ``@<timestamp>`` or ``ref:<name>``."""
    if r.get("timestamp"):
        return f"@{r['timestamp']}"
    if r.get("ref"):
        return f"ref:{r['ref']}"
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
class Explanation:
    """One known cause (a registered finding, a declared capability, a case not built) and its cells."""

    key: str  # the finding id, or the cause text for capability/build explanations
    number: int  # [n] in the report
    info: dict[str, Any]  # the result dict's ``finding`` (cause, spec, rules, kind, ...)
    cells: list[tuple[Row, str]] = field(default_factory=list)  # (row, reader)

    @property
    def engines(self) -> list[str]:
        """The readers whose cells it explains, in first-seen order."""
        return list(dict.fromkeys(reader for _, reader in self.cells))

    @property
    def cases(self) -> list[str]:
        """The cases whose cells it explains, in first-seen order."""
        return list(dict.fromkeys(row.case for row, _ in self.cells))


@dataclass(slots=True)
class WriterRule:
    """One rule one writer's tables break (the writers x rules view)."""

    writer: str
    rule: str
    message: str  # the validator's first message for it
    cases: list[str]  # case ids, in results order
    findings: list[str]  # registry ids that explain it
    declared: int  # violations the cases declare (negative cases: broken by design)
    unexplained: int  # violations nothing accounts for

    @property
    def by_design(self) -> bool:
        """Every violation of it is one the cases declare (negative cases)."""
        return bool(self.declared) and not self.findings and not self.unexplained

    @property
    def account(self) -> str:
        """What accounts for the violations, in words."""
        parts = []
        if self.findings:
            parts.append("finding " + ", ".join(self.findings))
        if self.declared:
            parts.append(f"declared by the case ({self.declared})")
        if self.unexplained:
            parts.append(f"UNEXPLAINED ({self.unexplained})")
        return "; ".join(parts)


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
    explanations: list[Explanation] = field(default_factory=list)
    unexplained: list[tuple[Row, str]] = field(default_factory=list)  # (row, reader) of fail/error/unsupported cells without one
    writers: list[str] = field(default_factory=list)  # in first-seen order ("<format>: <writer>" when several formats)
    pairs: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)  # (writer, reader) -> status -> n
    # The reference validator on every built table (results.json ``writer_checks``)
    writer_tables: dict[str, dict[str, int]] = field(default_factory=dict)  # writer -> checked/clean/violations/error
    writer_rules: list[WriterRule] = field(default_factory=list)  # by writer, then rule
    writer_unexplained: list[str] = field(default_factory=list)  # one line per unexplained violation

    def pair_text(self, writer: str, reader: str) -> str:
        """One writer x reader summary cell: ``passed/total`` and the non-pass counts."""
        c = self.pairs.get((writer, reader))
        if not c:
            return ""
        total = sum(c.values())
        rest = ", ".join(f"{c[s]} {s}" for s in STATUSES if s != "pass" and c.get(s))
        return f"{c.get('pass', 0)}/{total}" + (f" ({rest})" if rest else "")

    def rules_of(self, writer: str) -> tuple[list[WriterRule], list[WriterRule]]:
        """(rules the writer's tables break on their own, rules broken by design on negative cases)."""
        mine = [r for r in self.writer_rules if r.writer == writer]
        return [r for r in mine if not r.by_design], [r for r in mine if r.by_design]

    def explanation_of(self, r: dict[str, Any]) -> Explanation | None:
        """The explanation of one result dict (None if it has none)."""
        info = r.get("finding")
        if not isinstance(info, dict):
            return None
        key = explanation_key(info)
        return next((e for e in self.explanations if e.key == key), None)


def explanation_key(info: dict[str, Any]) -> str:
    """How explanations are grouped: by finding id, else by source and cause."""
    return str(info.get("id") or f"{info.get('source', '?')}: {info.get('cause', '')}")


def is_unexplained(r: dict[str, Any]) -> bool:
    """A fail, error or unsupported cell that carries no explanation."""
    return r.get("status") in NEEDS_EXPLANATION and not isinstance(r.get("finding"), dict)


def analyse(doc: dict[str, Any]) -> Analysis:
    """Matrix rows in results order, per-reader counts, and findings."""
    readers: list[str] = []
    for e in doc.get("engines", []):
        if "reader" in e.get("roles", []):
            readers.append(e["name"])
    rows: "OrderedDict[tuple, Row]" = OrderedDict()
    counts: dict[str, dict[str, int]] = {}
    totals = {s: 0 for s in STATUSES}
    pairs: dict[tuple[str, str], dict[str, int]] = {}
    # With several formats in one run, a writer's row is per format: a writer x reader figure
    # that mixed cells of several formats would say nothing about either.
    several_formats = len({r["format"] for r in doc.get("results", [])}) > 1

    def writer_label(r: dict[str, Any]) -> str:
        return f"{r['format']}: {r['writer']}" if several_formats else r["writer"]

    for r in doc.get("results", []):
        if r["reader"] not in readers:
            readers.append(r["reader"])
        key = (r["case"], r["writer"], version_label(r))
        row = rows.get(key)
        if row is None:
            row = rows[key] = Row(case=r["case"], format=r["format"], writer=r["writer"], snapshot=version_label(r))
        row.cells[r["reader"]] = r
        counts.setdefault(r["reader"], {s: 0 for s in STATUSES})[r["status"]] += 1
        pairs.setdefault((writer_label(r), r["reader"]), {s: 0 for s in STATUSES})[r["status"]] += 1
        totals[r["status"]] += 1
    readers = [n for n in readers if n in counts] or readers
    writers = {label for label, _ in pairs}
    explanations: "OrderedDict[str, Explanation]" = OrderedDict()
    unexplained: list[tuple[Row, str]] = []
    for row in rows.values():
        for reader, r in row.cells.items():
            if r.get("status") not in NEEDS_EXPLANATION:
                continue
            info = r.get("finding")
            if not isinstance(info, dict):
                unexplained.append((row, reader))
                continue
            key = explanation_key(info)
            if key not in explanations:
                explanations[key] = Explanation(key=key, number=len(explanations) + 1, info=info)
            explanations[key].cells.append((row, reader))
    tables, rules, lines = _writers(doc.get("writer_checks") or [])
    return Analysis(
        doc=doc,
        writer_tables=tables,
        writer_rules=rules,
        writer_unexplained=lines,
        readers=readers,
        rows=list(rows.values()),
        counts=counts,
        totals=totals,
        findings=_findings(list(rows.values()), doc.get("cases", {}), {k: e.number for k, e in explanations.items()}),
        multi_writer=len(writers) > 1,
        explanations=list(explanations.values()),
        unexplained=unexplained,
        writers=list(dict.fromkeys(label for label, _ in pairs)),
        pairs=pairs,
    )


def explanation_text(info: dict[str, Any]) -> str:
    """One line: cause, the spec's side and the rules (what a report shows next to a cell)."""
    rules = ", ".join(info.get("rules") or [])
    section = info.get("section")
    where = "; ".join(x for x in (rules, f"PROTOCOL.md: {section}" if section else "") if x)
    kind = info.get("kind")
    head = f"[{kind}] " if kind else ""
    return f"{head}{info.get('cause', '')} Spec: {info.get('spec', '')}" + (f" ({where})" if where else "")


def _expectation(row: Row, cases: dict[str, Any]) -> str:
    """What the spec (the case's expected result) says at this snapshot, in words."""
    any_cell = next(iter(row.cells.values()), {})
    if any_cell.get("expected_error"):
        return f"the spec requires an {any_cell['expected_error']} error"
    return "the expected rows (the case's expected result encodes the spec)"


def _findings(rows: list[Row], cases: dict[str, Any], numbers: dict[str, int] | None = None) -> list[Finding]:
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
        details = "; ".join(_detail(n, row.cells[n], numbers or {}) for n in wrong)
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


def _detail(reader: str, r: dict[str, Any], numbers: dict[str, int]) -> str:
    """A differing reader in a finding: its status and message, and its known finding [n] if any."""
    text = f"{reader}: {r['status']} ({r['message'][:160]})"
    info = r.get("finding")
    if isinstance(info, dict):
        key = explanation_key(info)
        ref = f"[{numbers[key]}] " if key in numbers else ""
        return text + f" - known finding {ref}{info.get('id') or info.get('kind', '')}"
    return text + " - UNEXPLAINED (not in conformance/findings.py)"


def _writers(entries: list[dict[str, Any]]) -> tuple[dict[str, dict[str, int]], list[WriterRule], list[str]]:
    """Per writer: tables checked by outcome; the rules broken; the unexplained violations."""
    from conformance.writer_checks import rules_by_writer, unexplained

    tables: dict[str, dict[str, int]] = {}
    lines: list[str] = []
    for e in entries:
        t = tables.setdefault(e["writer"], {"checked": 0, "clean": 0, "violations": 0, "error": 0})
        t["checked"] += 1
        t[e["status"]] = t.get(e["status"], 0) + 1
        lines += [f"{e['case']} written by {e['writer']} ({e.get('store', '?')}): {line}" for line in unexplained(e)]
    rules = [WriterRule(writer=w, rule=rule, message=v["message"], cases=v["cases"], findings=v["findings"],
                        declared=v["declared"], unexplained=v["unexplained"])
             for w, by_rule in rules_by_writer(entries).items() for rule, v in sorted(by_rule.items())]
    return tables, rules, lines
