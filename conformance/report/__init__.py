"""The report: a pure function of results.json, rendered as JSON (the input), Markdown and HTML."""

from __future__ import annotations

import os
from typing import Any

from conformance.report.analysis import Analysis, Finding, analyse
from conformance.report.html import render_html
from conformance.report.json_results import ResultsError, load_results, problems, write_results
from conformance.report.markdown import render_markdown

__all__ = [
    "Analysis", "Finding", "ResultsError", "analyse", "load_results", "problems", "render_html",
    "render_markdown", "write_report", "write_results",
]


def write_report(doc: dict[str, Any], out_dir: str) -> tuple[str, str]:
    """Write report.md and report.html for ``doc`` in ``out_dir``; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    a = analyse(doc)
    md = os.path.join(out_dir, "report.md")
    html = os.path.join(out_dir, "report.html")
    with open(md, "w", encoding="utf-8") as fh:
        fh.write(render_markdown(doc, a))
    with open(html, "w", encoding="utf-8") as fh:
        fh.write(render_html(doc, a))
    return md, html
