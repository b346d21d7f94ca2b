"""results.json -> report.md: engines, the matrix, findings, then every non-pass cell's details."""

from __future__ import annotations

from typing import Any

from conformance.model import STATUSES
from conformance.report.analysis import Analysis, analyse

SYMBOL = {"pass": "pass", "fail": "**FAIL**", "error": "**ERROR**", "unsupported": "unsupported", "skip": "skip"}


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
    out += ["", "## Engines", "", "| engine | version | roles | " + " | ".join(STATUSES) + " |",
            "|---|---|---|" + "---:|" * len(STATUSES)]
    for e in doc.get("engines", []):
        c = a.counts.get(e["name"], {})
        note = f" (unavailable: {_cell(e['unavailable'])})" if e.get("unavailable") else ""
        out.append(
            f"| {_cell(e['name'])}{note} | {_cell(e['version'])} | {', '.join(e.get('roles', []))} | "
            + " | ".join(str(c.get(s, 0)) for s in STATUSES) + " |"
        )

    out += ["", "## Matrix", ""]
    head = ["case", "snapshot"] + (["writer"] if a.multi_writer else []) + a.readers
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for row in a.rows:
        cells = [f"`{row.case}`", row.snapshot] + ([row.writer] if a.multi_writer else [])
        for reader in a.readers:
            r = row.cells.get(reader)
            cells.append(SYMBOL[r["status"]] if r else "")
        out.append("| " + " | ".join(cells) + " |")

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
        if r.get("diff"):
            out += ["", "```", r["diff"].replace("```", "'''"), "```"]
        if r.get("rules"):
            out += ["", "Rules: " + ", ".join(r["rules"])]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
