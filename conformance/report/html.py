"""results.json -> report.html: one self-contained page, a cases x engines matrix readable at a glance.

Each cell is coloured by status; a non-pass cell opens (details/summary) to its message, minimal
diff and known explanation, and carries them in its ``title`` for a hover. The page opens with
the count of unexplained non-pass cells (what is new for a vendor) and lists them; known findings
say what each engine does and which side the spec supports; explained cells point to them ``[n]``.
"""

from __future__ import annotations

from html import escape
from typing import Any

from conformance.model import STATUSES
from conformance.report.analysis import Analysis, analyse, explanation_text

COLOURS = {
    "pass": "#2e7d32",
    "partial": "#7cb342",
    "fail": "#c62828",
    "error": "#6a1b9a",
    "unsupported": "#9e9e9e",
    "skip": "#cfd8dc",
}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5rem;color:#222}
h1{margin-bottom:.2rem} .meta{color:#555;margin-bottom:1rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem} th,td{border:1px solid #ddd;padding:.25rem .45rem;vertical-align:top}
th{background:#f5f5f5;position:sticky;top:0} td.case{font-family:ui-monospace,monospace;font-size:.9em}
td.st{text-align:center;color:#fff;font-size:.85em;min-width:5.5rem}
td.st details summary{cursor:pointer;list-style:none} td.st details[open]{text-align:left}
td.st pre{white-space:pre-wrap;max-width:40rem;background:#fff;color:#222;padding:.4rem;margin:.3rem 0 0;font-size:.85em}
.legend span{display:inline-block;padding:.1rem .5rem;margin-right:.3rem;color:#fff;border-radius:3px}
.finding{margin:.3rem 0} .num{text-align:right}
.banner{padding:.5rem .8rem;border-radius:4px;margin:.6rem 0;font-weight:600}
.banner.new{background:#ffebee;border:2px solid #c62828;color:#b71c1c} .banner.ok{background:#e8f5e9;border:1px solid #2e7d32}
.tag{font-size:.75em;font-weight:700;padding:0 .25rem;border-radius:3px;background:#fff;color:#222;margin-left:.2rem}
.tag.new{background:#ffeb3b}
dl.known dt{margin-top:.6rem} dl.known dd{margin-left:1.2rem}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(21rem,1fr));gap:.8rem;margin:.5rem 0 1.5rem}
.card{border:1px solid #ddd;border-radius:6px;padding:.6rem .8rem;background:#fafafa}
.card h3{margin:.1rem 0 .2rem;font-size:1.05rem} .card .ver{color:#666;font-size:.85em}
.card table{margin:.3rem 0;width:100%;font-size:.85em} .card td,.card th{padding:.1rem .3rem}
.bar{display:inline-block;height:.6rem;background:#2e7d32;vertical-align:middle;margin-right:.3rem}
.bar.rest{background:#e0e0e0;margin-right:0}
.card ul{margin:.2rem 0 0 1rem;padding:0;font-size:.85em}
"""


def pass_rate_colour(passed: int, judged: int) -> str:
    """A background from red (nothing passes) through amber to green (everything passes)."""
    if judged == 0:
        return "#f5f5f5"
    return f"hsl({round(120 * passed / judged)}, 55%, 82%)"


def _area(rule: str) -> str:
    """The spec area of a rule id (``<FORMAT>-CKPT-014`` -> ``CKPT``)."""
    parts = rule.split("-")
    return parts[1] if len(parts) >= 3 else rule


def _judged(statuses: list[str]) -> tuple[int, int, int]:
    """(passes, partial checks, cells with a verdict): skips and unsupported cells judge nothing."""
    judged = [s for s in statuses if s not in ("skip", "unsupported")]
    return sum(1 for s in judged if s == "pass"), sum(1 for s in judged if s == "partial"), len(judged)


def _pct(passed: int, judged: int) -> str:
    """A share that never rounds a shortfall up to 100%."""
    return "100%" if passed == judged else f"{min(100 * passed / judged, 99.9):.1f}%"


def _rate_cell(passed: int, partial: int, judged: int) -> str:
    if judged == 0:
        return '<td class="num">-</td>'
    width = 4.0
    fill, half = width * passed / judged, width * partial / judged
    extra = f" +{partial}&#8201;partial" if partial else ""
    return (f'<td class="num" style="background:{pass_rate_colour(passed, judged)}">'
            f'<span class="bar" style="width:{fill:.2f}rem"></span>'
            f'<span class="bar" style="width:{half:.2f}rem;background:{COLOURS["partial"]}"></span>'
            f'<span class="bar rest" style="width:{width - fill - half:.2f}rem"></span> {passed}/{judged}{extra}</td>')


def _engine_cards(doc: dict[str, Any], a: Analysis) -> list[str]:
    """One card per reader: pass rate per format and per spec area, its known findings."""
    by_reader: dict[str, list[dict[str, Any]]] = {}
    for r in doc.get("results", []):
        by_reader.setdefault(r["reader"], []).append(r)
    versions = {e["name"]: e.get("version", "") for e in doc.get("engines", [])}
    out = ['<h2 id="cards">Engine cards</h2><p>Per reader: passes out of the cells with a verdict (skipped and '
           "unsupported cells judge nothing and are left out; partial checks, light green, are not passes), per "
           "format and per spec area of the cases' rules; then its known findings.</p>", '<div class="cards">']
    for reader in a.readers:
        cells = by_reader.get(reader, [])
        passed, _, judged = _judged([r["status"] for r in cells])
        pct = _pct(passed, judged) if judged else "-"
        out.append(f'<div class="card"><h3>{escape(reader)} <span class="ver">{escape(str(versions.get(reader, "")))}</span></h3>'
                   f"<div>{pct} of {judged} judged cells pass; "
                   + ", ".join(f"{a.counts.get(reader, {}).get(s, 0)} {s}" for s in STATUSES if s != "pass"
                               and a.counts.get(reader, {}).get(s, 0)) + "</div>")
        formats: dict[str, list[str]] = {}
        areas: dict[tuple[str, str], list[str]] = {}
        for r in cells:
            formats.setdefault(r.get("format", "?"), []).append(r["status"])
            for area in dict.fromkeys(_area(x) for x in r.get("rules") or ()):
                areas.setdefault((r.get("format", "?"), area), []).append(r["status"])
        out.append("<table><tr><th>format / area</th><th>passes</th></tr>")
        for fmt in sorted(formats):
            out.append(f"<tr><td><b>{escape(fmt)}</b></td>{_rate_cell(*_judged(formats[fmt]))}</tr>")
            for (f, area), sts in sorted(areas.items()):
                if f == fmt and _judged(sts)[2]:
                    out.append(f"<tr><td>&nbsp;&nbsp;{escape(area)}</td>{_rate_cell(*_judged(sts))}</tr>")
        out.append("</table>")
        mine = [e for e in a.explanations if reader in e.engines and e.info.get("source") == "registry"]
        if mine:
            out.append("<div>Known findings:</div><ul>" + "".join(
                f'<li><a href="#known">[{e.number}]</a> {escape(str(e.info.get("id", "")))} '
                f"({sum(1 for _, rd in e.cells if rd == reader)} cell(s))</li>" for e in mine) + "</ul>")
        new = sum(1 for _, rd in a.unexplained if rd == reader)
        if new:
            out.append(f'<div><a href="#unexplained"><b>{new} unexplained cell(s)</b></a></div>')
        out.append("</div>")
    out.append("</div>")
    return out


def _status_cell(r: dict[str, Any] | None, a: Analysis | None = None) -> str:
    if r is None:
        return '<td class="st" style="background:#fff"></td>'
    status = r["status"]
    colour = COLOURS[status]
    fg = "#222" if status == "skip" else "#fff"
    text = r.get("message", "")
    tip = text + (("\n" + r["diff"]) if r.get("diff") else "")
    secs = f" {r.get('seconds', 0):.2f}s" if status in ("pass", "fail") else ""
    if status == "pass":
        return f'<td class="st" style="background:{colour};color:{fg}" title="{escape(tip or "pass")}">pass{secs}</td>'
    e = a.explanation_of(r) if a is not None else None
    tag = ""
    known = ""
    if e is not None:
        tag = f'<span class="tag">[{e.number}]</span>'
        known = "\n\nKnown finding [" + str(e.number) + "]: " + explanation_text(e.info)
    elif status in ("fail", "error", "unsupported"):
        tag = '<span class="tag new">NEW</span>'
        known = "\n\nUNEXPLAINED: not in conformance/findings.py"
    body = escape(text) + (("\n\n" + escape(r["diff"])) if r.get("diff") else "") + escape(known)
    if r.get("engine_log"):
        body += "\n\nEngine log:\n" + escape(r["engine_log"])
    return (
        f'<td class="st" style="background:{colour};color:{fg}" title="{escape(tip + known)}">'
        f"<details><summary>{status}{secs}{tag}</summary><pre>{body}</pre></details></td>"
    )


def render_html(doc: dict[str, Any], analysis: Analysis | None = None) -> str:
    """The HTML report of a results document (a complete page)."""
    a = analysis or analyse(doc)
    cases = doc.get("cases", {})
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>lakeconf compatibility report</title>',
        f"<style>{CSS}</style></head><body>",
        "<h1>lakeconf compatibility report</h1>",
        f'<div class="meta">Generated {escape(str(doc.get("generated_at", "?")))} &middot; store '
        f"{escape(str(doc.get('store', '?')))} &middot; {sum(a.totals.values())} cells: "
        + ", ".join(f"{a.totals[s]} {s}" for s in STATUSES)
        + "</div>",
        _banner(a),
        '<div class="legend">' + "".join(
            f'<span style="background:{COLOURS[s]};color:{"#222" if s == "skip" else "#fff"}">{s}</span>' for s in STATUSES
        ) + "</div>",
        "<h2>Engines</h2><table><tr><th>engine</th><th>version</th><th>roles</th>"
        + "".join(f"<th>{s}</th>" for s in STATUSES) + "</tr>",
    ]
    for e in doc.get("engines", []):
        c = a.counts.get(e["name"], {})
        note = f'<br><small>unavailable: {escape(e["unavailable"])}</small>' if e.get("unavailable") else ""
        parts.append(
            f"<tr><td>{escape(e['name'])}{note}</td><td>{escape(e['version'])}</td>"
            f"<td>{escape(', '.join(e.get('roles', [])))}</td>"
            + "".join(f'<td class="num">{c.get(s, 0)}</td>' for s in STATUSES) + "</tr>"
        )
    parts.append("</table>")
    parts.extend(_engine_cards(doc, a))

    if a.multi_writer:
        parts.append("<h2>Writers x readers</h2><p>Cells passed / cells, per writer (the engine that built the "
                     "tables) and reader; the colour runs from red to green with the share of judged cells (skipped and "
                     "unsupported ones left out) that pass.</p><table><tr><th>writer \\ reader</th>"
                     + "".join(f"<th>{escape(r)}</th>" for r in a.readers) + "</tr>")
        for w in a.writers:
            row = []
            for r in a.readers:
                counts = a.pairs.get((w, r), {})
                passed, _, judged = _judged([s for s, n in counts.items() for _ in range(n)])
                row.append(f'<td class="num" style="background:{pass_rate_colour(passed, judged)}">'
                           f"{escape(a.pair_text(w, r))}</td>")
            parts.append(f"<tr><td>{escape(w)}</td>" + "".join(row) + "</tr>")
        parts.append("</table>")

    parts.extend(_writers_section(a))

    parts.append('<h2 id="unexplained">Unexplained non-passes</h2>')
    if not a.unexplained:
        parts.append("<p>None: every fail, error and unsupported cell has a known explanation.</p>")
    else:
        parts.append("<ul>")
        for row, reader in a.unexplained:
            r = row.cells[reader]
            parts.append(
                f'<li class="finding"><code>{escape(row.case)}</code> {escape(row.snapshot)}, read by '
                f"<b>{escape(reader)}</b> (writer {escape(row.writer)}): {escape(r['status'])}: "
                f"{escape(r.get('message', '')[:300])}</li>"
            )
        parts.append("</ul><p>Triage each: reproduce it with the engine, read the spec section, then register the "
                     "cause in <code>conformance/findings.py</code> (or fix the case if the engine is right).</p>")

    parts.append('<h2 id="known">Known findings</h2>')
    if not a.explanations:
        parts.append("<p>No non-pass cell is explained by a known finding.</p>")
    else:
        parts.append('<dl class="known">')
        for e in a.explanations:
            info = e.info
            rules = ", ".join(info.get("rules") or [])
            section = f"; PROTOCOL.md: {info['section']}" if info.get("section") else ""
            parts.append(
                f"<dt><b>[{e.number}] {escape(str(info.get('id') or info.get('kind', '')))}</b> "
                f"({escape(str(info.get('kind', '')))}; {len(e.cells)} cell(s); engines: {escape(', '.join(e.engines))}; "
                f"cases: {escape(', '.join(e.cases))})</dt>"
                f"<dd><b>Cause:</b> {escape(str(info.get('cause', '')))}</dd>"
                f"<dd><b>Spec:</b> {escape(str(info.get('spec', '')))}</dd>"
                + (f"<dd><b>Rules:</b> {escape(rules + section)}</dd>" if rules or section else "")
            )
        parts.append("</dl>")

    parts.append("<h2>Findings</h2>")
    if not a.findings:
        parts.append("<p>No engine disagrees with the expected results.</p>")
    else:
        parts.append("<ul>")
        for f in a.findings:
            label = {"disagreement": "engines disagree", "no-engine-matches": "no engine matches",
                     "build-failed": "build failed"}[f.kind]
            parts.append(
                f'<li class="finding"><code>{escape(f.row.case)}</code> {escape(f.row.snapshot)} '
                f"(writer {escape(f.row.writer)}), <b>{label}</b>: {escape(f.text)}</li>"
            )
        parts.append("</ul>")

    parts.append("<h2>Matrix</h2><table><tr><th>case</th><th>snapshot</th>")
    if a.multi_writer:
        parts.append("<th>writer</th>")
    parts.append("".join(f"<th>{escape(r)}</th>" for r in a.readers) + "</tr>")
    for row in a.rows:
        info = cases.get(row.case, {})
        tip = info.get("description", "")
        rules = ", ".join(info.get("rules", [])) if info else ""
        title = escape(tip + (f"\nrules: {rules}" if rules else ""))
        parts.append(f'<tr><td class="case" title="{title}">{escape(row.case)}</td><td>{escape(row.snapshot)}</td>')
        if a.multi_writer:
            parts.append(f"<td>{escape(row.writer)}</td>")
        parts.append("".join(_status_cell(row.cells.get(reader), a) for reader in a.readers) + "</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


def _banner(a: Analysis) -> str:
    """The line a vendor reads first: how many non-pass cells are new (unexplained)."""
    explained = sum(len(e.cells) for e in a.explanations)
    if a.unexplained:
        return (
            f'<div class="banner new"><a href="#unexplained">{len(a.unexplained)} unexplained non-pass cell(s)</a> '
            f"(not in the findings registry); {explained} explained by {len(a.explanations)} known finding(s).</div>"
        )
    return (
        f'<div class="banner ok">0 unexplained non-pass cells; {explained} explained by '
        f"{len(a.explanations)} known finding(s).</div>"
    )


def _writers_section(a: Analysis) -> list[str]:
    """Writers x rules: what the reference validator found in each writer's tables."""
    if not a.writer_tables:
        return []
    out = ['<h2 id="writers">Writers x rules</h2><p>The reference validator checked every table each writer built. '
           "A declared violation is one the case breaks by design (a negative case); every other one must be a known "
           "writer-side finding.</p><table><tr><th>writer</th><th>tables</th><th>clean</th><th>with violations</th>"
           "<th>validator failed</th></tr>"]
    for w, t in a.writer_tables.items():
        out.append(f"<tr><td>{escape(w)}</td>" + "".join(f'<td class="num">{t.get(k, 0)}</td>' for k in
                                                         ("checked", "clean", "violations", "error")) + "</tr>")
    out.append("</table>")
    if a.writer_unexplained:
        out.append(f'<div class="banner new">{len(a.writer_unexplained)} unexplained violation(s)</div><ul>'
                   + "".join(f'<li class="finding">{escape(line[:400])}</li>' for line in a.writer_unexplained) + "</ul>")
    for w in a.writer_tables:
        found, designed = a.rules_of(w)
        if not found and not designed:
            out.append(f"<p><b>{escape(w)}</b> breaks no rule.</p>")
            continue
        out.append(f"<p><b>{escape(w)}</b> breaks {len(found)} rule(s) on its own"
                   + (f", and {len(designed)} by design on negative cases ({escape(', '.join(r.rule for r in designed))})"
                      if designed else "") + ("." if not found else ":") + "</p>")
        if not found:
            continue
        out.append("<table><tr><th>rule</th><th>tables</th><th>validator's message</th><th>accounted for by</th></tr>")
        for r in found:
            cases = ", ".join(r.cases[:6]) + (f" and {len(r.cases) - 6} more" if len(r.cases) > 6 else "")
            style = ' style="background:#f8d7da"' if r.unexplained else ""
            out.append(f"<tr{style}><td>{escape(r.rule)}</td><td title=\"{escape(cases)}\">{len(r.cases)}</td>"
                       f"<td>{escape(r.message[:300])}</td><td>{escape(r.account)}</td></tr>")
        out.append("</table>")
    return out
