"""results.json -> report.md: unexplained non-passes first, engines, the matrix, known findings, details.

A vendor sees at a glance what is new: the count of unexplained non-pass cells heads the report,
each such cell is listed, and in the matrix it reads ``(NEW)``; an explained cell points to its
known finding ``[n]``, which says what the engine does and which side the spec supports.
"""

from __future__ import annotations

from typing import Any

from conformance.model import STATUSES
from conformance.report.analysis import Analysis, analyse, explanation_text

SYMBOL = {"pass": "pass", "partial": "partial", "fail": "**FAIL**", "error": "**ERROR**", "unsupported": "unsupported", "skip": "skip"}


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def render_markdown(doc: dict[str, Any], analysis: Analysis | None = None) -> str:
    """The Markdown report of a results document."""
    a = analysis or analyse(doc)
    out = ["# lakeconf compatibility report", ""]
    out.append(f"Generated {doc.get('generated_at', '?')} on store `{doc.get('store', '?')}`. ")
    t = a.totals
    out.append(
        f"{sum(t.values())} cells: " + ", ".join(f"{t[s]} {s}" for s in STATUSES) + "."
    )
    explained = sum(len(e.cells) for e in a.explanations)
    out.append("")
    if a.unexplained:
        out.append(
            f"**{len(a.unexplained)} unexplained non-pass cell(s)** (new: not in the findings registry; see "
            f"[Unexplained non-passes](#unexplained-non-passes)); {explained} explained by "
            f"{len(a.explanations)} known finding(s)."
        )
    else:
        out.append(f"**0 unexplained non-pass cells**; {explained} explained by {len(a.explanations)} known finding(s).")
    out += ["", "## Engines", "", "| engine | version | roles | " + " | ".join(STATUSES) + " |",
            "|---|---|---|" + "---:|" * len(STATUSES)]
    for e in doc.get("engines", []):
        c = a.counts.get(e["name"], {})
        note = f" (unavailable: {_cell(e['unavailable'])})" if e.get("unavailable") else ""
        out.append(
            f"| {_cell(e['name'])}{note} | {_cell(e['version'])} | {', '.join(e.get('roles', []))} | "
            + " | ".join(str(c.get(s, 0)) for s in STATUSES) + " |"
        )

    if a.multi_writer:
        out += ["", "## Writers x readers", "",
                "Cells passed / cells, per writer (the engine that built the tables) and reader.", "",
                "| writer \\ reader | " + " | ".join(a.readers) + " |", "|---|" + "---|" * len(a.readers)]
        for w in a.writers:
            out.append(f"| {_cell(w)} | " + " | ".join(_cell(a.pair_text(w, r)) for r in a.readers) + " |")

    out += _writers_section(a)

    out += ["", "## Unexplained non-passes", ""]
    if not a.unexplained:
        out.append("None: every fail, error and unsupported cell has a known explanation.")
    for row, reader in a.unexplained:
        r = row.cells[reader]
        out.append(
            f"- `{row.case}` {row.snapshot}, read by {reader} (writer {row.writer}): {r['status']}: "
            f"{_cell(r.get('message', ''))[:300]}"
        )
    if a.unexplained:
        out += ["", "Triage each: reproduce it with the engine, read the spec section, then register the cause in "
                "`conformance/findings.py` (or fix the case if the engine is right)."]

    out += ["", "## Matrix", ""]
    head = ["case", "snapshot"] + (["writer"] if a.multi_writer else []) + a.readers
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for row in a.rows:
        cells = [f"`{row.case}`", row.snapshot] + ([row.writer] if a.multi_writer else [])
        for reader in a.readers:
            r = row.cells.get(reader)
            cells.append(_matrix_cell(a, r) if r else "")
        out.append("| " + " | ".join(cells) + " |")

    out += ["", "## Known findings", ""]
    if not a.explanations:
        out.append("No non-pass cell is explained by a known finding.")
    for e in a.explanations:
        info = e.info
        label = info.get("id") or info.get("kind", "")
        out.append(
            f"- **[{e.number}] {_cell(label)}** ({_cell(info.get('kind', ''))}; {len(e.cells)} cell(s); "
            f"engines: {', '.join(e.engines)}; cases: {', '.join(f'`{c}`' for c in e.cases)})"
        )
        out.append(f"  - Cause: {_cell(info.get('cause', ''))}")
        out.append(f"  - Spec: {_cell(info.get('spec', ''))}")
        refs = [", ".join(info.get("rules") or [])]
        if info.get("section"):
            refs.append(f"PROTOCOL.md: {info['section']}")
        refs = [x for x in refs if x]
        if refs:
            out.append(f"  - Rules: {_cell('; '.join(refs))}")

    out += ["", "## Findings", ""]
    if not a.findings:
        out.append("No engine disagrees with the expected results.")
    for f in a.findings:
        label = {"disagreement": "engines disagree", "no-engine-matches": "no engine matches",
                 "build-failed": "build failed"}[f.kind]
        out.append(f"- `{f.row.case}` {f.row.snapshot} (writer {f.row.writer}), {label}: {_cell(f.text)}")

    details = [(row, reader, row.cells[reader]) for row in a.rows for reader in a.readers
               if reader in row.cells and row.cells[reader]["status"] != "pass"]
    out += ["", "## Details of non-pass cells", ""]
    if not details:
        out.append("Every cell passed.")
    for row, reader, r in details:
        out.append(f"### `{row.case}` {row.snapshot}, read by {reader} (writer {row.writer}): {r['status']}")
        out.append("")
        out.append(_cell(r.get("message", "")) or "(no message)")
        e = a.explanation_of(r)
        if e is not None:
            out += ["", f"Known finding [{e.number}]: {_cell(explanation_text(e.info))}"]
        elif r["status"] in ("fail", "error", "unsupported"):
            out += ["", "**UNEXPLAINED**: not in conformance/findings.py."]
        if r.get("diff"):
            out += ["", "```", r["diff"].replace("```", "'''"), "```"]
        if r.get("engine_log"):
            out += ["", "Engine log (what the engine logged while this cell ran):", "", "~~~",
                    r["engine_log"].replace("~~~", "---"), "~~~"]
        if r.get("rules"):
            out += ["", "Rules: " + ", ".join(r["rules"])]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _matrix_cell(a: Analysis, r: dict) -> str:
    """A matrix cell: the status, with ``[n]`` for a known finding or ``(NEW)`` when unexplained."""
    text = SYMBOL[r["status"]]
    e = a.explanation_of(r)
    if e is not None:
        return f"{text} [{e.number}]"
    if r["status"] in ("fail", "error", "unsupported"):
        return f"{text} (NEW)"
    return text


def _cases_text(cases: list[str], limit: int = 6) -> str:
    shown = ", ".join(f"`{c}`" for c in cases[:limit])
    return shown + (f" and {len(cases) - limit} more" if len(cases) > limit else "")


def _writers_section(a: Analysis) -> list[str]:
    """Writers x rules: what the reference validator found in each writer's tables."""
    if not a.writer_tables:
        return []
    checked = sum(t["checked"] for t in a.writer_tables.values())
    out = ["", "## Writers x rules", "",
           f"The reference validator checked every table each writer built ({checked} tables). A declared violation "
           "is one the case breaks by design (a negative case); every other one must be a known writer-side finding.",
           "", "| writer | tables | clean | with violations | validator failed |", "|---|---:|---:|---:|---:|"]
    for w, t in a.writer_tables.items():
        out.append(f"| {_cell(w)} | {t['checked']} | {t.get('clean', 0)} | {t.get('violations', 0)} | {t.get('error', 0)} |")
    out.append("")
    if a.writer_unexplained:
        out.append(f"**{len(a.writer_unexplained)} unexplained violation(s)**:")
        out += [f"- {_cell(line)[:400]}" for line in a.writer_unexplained]
        out += ["", "Triage each: read the rule's spec section; register a writer-side finding (status "
                "`violation`) in the format's findings, or fix the validator if it is wrong.", ""]
    for w in a.writer_tables:
        found, designed = a.rules_of(w)
        if not found and not designed:
            out.append(f"- **{_cell(w)}** breaks no rule.")
            continue
        out.append(f"- **{_cell(w)}** breaks {len(found)} rule(s) on its own"
                   + (f", and {len(designed)} by design on negative cases ({', '.join(r.rule for r in designed)})"
                      if designed else "") + (":" if found else "."))
        for r in found:
            out.append(f"  - {r.rule} on {len(r.cases)} table(s) ({_cases_text(r.cases)}): "
                       f"\"{_cell(r.message)[:200]}\"; {_cell(r.account)}")
    return out
