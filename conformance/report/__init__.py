"""The report: a pure function of results.json, rendered as JSON (the input), Markdown, HTML and JUnit XML."""

from __future__ import annotations

import os
from typing import Any

from conformance.report.analysis import Analysis, Finding, analyse
from conformance.report.html import render_html
from conformance.report.json_results import ResultsError, load_results, problems, write_results
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown

__all__ = [
    "Analysis", "Finding", "ResultsError", "analyse", "load_results", "problems", "render_html",
    "render_junit", "render_markdown", "write_junit", "write_report", "write_results",
]


def write_junit(doc: dict[str, Any], path: str) -> str:
    """Write the JUnit XML of ``doc`` to ``path`` (its directory is created); return the path."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render_junit(doc))
    return path


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
