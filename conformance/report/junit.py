"""results.json as JUnit XML, for a CI's test viewer: one test case per cell, one suite per reader.

A cell that is right is a passed test. A cell explained by a registered finding, a declared
capability, an unsupported feature, a cell that could not run here and a partial check are
*skipped*, each with its reason (a known finding is not a new failure, and it is not a pass).
An unexplained wrong answer is a *failure* and an unexplained error an *error*: those are what a
CI should turn red on.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from xml.etree import ElementTree as ET

from conformance.report.analysis import explanation_text, version_label

_TEXT_MAX = 4000


def _clean(text: str) -> str:
    """Text XML 1.0 can carry (control characters other than tab and newlines removed), shortened."""
    text = "".join(ch for ch in str(text) if ch in "\t\n\r" or ord(ch) >= 0x20)
    return text if len(text) <= _TEXT_MAX else text[:_TEXT_MAX - 3] + "..."


def _case(r: dict[str, Any]) -> ET.Element:
    writer = r.get("writer", "reference")
    name = f"{r['case']} @ {version_label(r)} (written by {writer})"
    tc = ET.Element("testcase", classname=f"lakeconf.{r['reader']}.{r.get('format', '')}", name=name,
                    time=f"{float(r.get('seconds') or 0):.3f}")
    status, message = r["status"], _clean(r.get("message", ""))
    info = r.get("finding")
    if status == "pass":
        return tc
    if isinstance(info, dict):
        kind = info.get("kind") or info.get("source") or "finding"
        reason = f"{status}, explained ({kind}): {explanation_text(info)}"
        ET.SubElement(tc, "skipped", message=_clean(reason)).text = _clean(f"{message}\n\n{r.get('diff', '')}".strip())
    elif status in ("skip", "partial"):
        ET.SubElement(tc, "skipped", message=_clean(f"{status}: {message}"))
    elif status == "fail":
        ET.SubElement(tc, "failure", message=message, type="wrong answer").text = _clean(r.get("diff") or message)
    elif status == "unsupported":
        # an unsupported cell without any explanation is new: the suite flags it like a failure
        ET.SubElement(tc, "failure", message=message, type="unexplained unsupported").text = message
    else:
        ET.SubElement(tc, "error", message=message, type=status).text = _clean(r.get("diff") or message)
    return tc


def _writer_case(e: dict[str, Any]) -> ET.Element:
    """One built table judged by the validator: its unexplained violations fail it; known ones are noted."""
    from conformance.writer_checks import unexplained

    tc = ET.Element("testcase", classname=f"lakeconf.writers.{e['writer']}.{e.get('format', '')}",
                    name=f"{e['case']} written by {e['writer']} ({e.get('store', '')}) validates",
                    time=f"{float(e.get('seconds') or 0):.3f}")
    new = unexplained(e)
    if e.get("status") == "error":
        ET.SubElement(tc, "error", message=_clean(e.get("message", "")), type="validator failed")
    elif new:
        ET.SubElement(tc, "failure", message=_clean(new[0]), type="unexplained violation").text = _clean("\n".join(new))
    elif e.get("violations"):
        known = sorted({v["rule"] for v in e["violations"]})
        ET.SubElement(tc, "system-out").text = _clean("violations accounted for (declared or known findings): "
                                                      + ", ".join(known))
    return tc


def render_junit(doc: dict[str, Any]) -> str:
    """The JUnit XML document for a results.json document."""
    by_reader: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in doc.get("results", []):
        by_reader[r["reader"]].append(r)
    root = ET.Element("testsuites", name="lakeconf")
    totals = defaultdict(int)
    versions = {e.get("name"): e.get("version", "") for e in doc.get("engines", []) if isinstance(e, dict)}
    for reader in sorted(by_reader):
        cases = [_case(r) for r in by_reader[reader]]
        counts = {k: sum(1 for c in cases if c.find(k) is not None) for k in ("failure", "error", "skipped")}
        seconds = sum(float(c.get("time", "0")) for c in cases)
        suite = ET.SubElement(root, "testsuite", name=f"lakeconf.{reader}", tests=str(len(cases)),
                              failures=str(counts["failure"]), errors=str(counts["error"]),
                              skipped=str(counts["skipped"]), time=f"{seconds:.3f}",
                              timestamp=str(doc.get("generated_at", ""))[:19])
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="engine.version", value=_clean(versions.get(reader, "")))
        ET.SubElement(props, "property", name="store", value=str(doc.get("store", "")))
        suite.extend(cases)
        totals["tests"] += len(cases)
        for k in ("failure", "error", "skipped"):
            totals[k] += counts[k]
    checks = [_writer_case(e) for e in doc.get("writer_checks") or []]
    if checks:
        counts = {k: sum(1 for c in checks if c.find(k) is not None) for k in ("failure", "error")}
        suite = ET.SubElement(root, "testsuite", name="lakeconf.writers", tests=str(len(checks)),
                              failures=str(counts["failure"]), errors=str(counts["error"]), skipped="0",
                              time=f"{sum(float(c.get('time', '0')) for c in checks):.3f}",
                              timestamp=str(doc.get("generated_at", ""))[:19])
        suite.extend(checks)
        totals["tests"] += len(checks)
        totals["failure"] += counts["failure"]
        totals["error"] += counts["error"]
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failure"]))
    root.set("errors", str(totals["error"]))
    root.set("skipped", str(totals["skipped"]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
