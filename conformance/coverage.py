"""Rule coverage: per format, how many catalogued rules have at least one executable check.

An executable check is a rule id carried by a collected pytest test (``@pytest.mark.rule``,
found by running ``pytest --collect-only`` with the kit's plugin, in a subprocess so a broken
test module cannot take the CLI down) or by a case of the registry (``Case.rules``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from conformance.rules import all_rules, catalog_formats, load_rules

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(slots=True)
class Sources:
    """Where rule ids were found: tests (nodeid -> ids), cases (case id -> ids), and problems."""

    tests: dict[str, list[str]] = field(default_factory=dict)
    cases: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def collect_test_rules(paths: list[str] | None = None, timeout: float = 600) -> tuple[dict[str, list[str]], list[str]]:
    """Rule ids per collected test (``pytest --collect-only`` in a subprocess) and any problems."""
    paths = paths or [os.path.join("conformance", "suites")]
    with tempfile.TemporaryDirectory(prefix="lakeconf-cov-") as tmp:
        out = os.path.join(tmp, "rules.json")
        cmd = [
            sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
            f"--lakeconf-rules-out={out}", *paths,
        ]
        # The plugin is loaded by pyproject's addopts; when run elsewhere, name it explicitly.
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout, env=env)
        problems = []
        if proc.returncode not in (0, 5):  # 5 = no tests collected
            tail = [l for l in proc.stdout.splitlines() if l.strip()][-3:]
            problems.append(f"pytest collection exited {proc.returncode}: {' | '.join(tail)}")
        if not os.path.exists(out):
            problems.append("pytest wrote no rule list (is conformance.suites.plugin loaded?)")
            return {}, problems
        with open(out, encoding="utf-8") as fh:
            data = json.load(fh)
    # a test that checks nothing covers no rule, whatever ids it carries
    idle = set(data.get("unasserting", []))
    if idle:
        problems.append(f"{len(idle)} test(s) carry rule ids but check nothing (not counted): {', '.join(sorted(idle)[:5])}")
    return {k: v for k, v in data.get("tests", {}).items() if k not in idle}, problems


def collect_case_rules() -> tuple[dict[str, list[str]], list[str]]:
    """Rule ids per registry case, and any problem loading the registry."""
    try:
        from conformance.cases.registry import all_cases

        return {c.id: list(c.rules) for c in all_cases()}, []
    except Exception as exc:  # noqa: BLE001 - coverage still reports the tests
        return {}, [f"case registry not loadable: {type(exc).__name__}: {exc}"]


def gather(test_paths: list[str] | None = None) -> Sources:
    """Rule ids from tests and cases."""
    tests, p1 = collect_test_rules(test_paths)
    cases, p2 = collect_case_rules()
    return Sources(tests=tests, cases=cases, problems=p1 + p2)


def _pct(n: int, d: int) -> float:
    return round(100.0 * n / d, 1) if d else 0.0


def compute(sources: Sources) -> dict[str, Any]:
    """The coverage document: per format counts and percentages, plus unknown ids and problems."""
    checked: dict[str, set[str]] = {}
    for origin, mapping in (("test", sources.tests), ("case", sources.cases)):
        for ids in mapping.values():
            for rid in ids:
                checked.setdefault(rid, set()).add(origin)
    known = all_rules()
    formats = []
    for fmt in catalog_formats():
        rules = load_rules(fmt)
        must = [r for r in rules if r.is_must]
        with_check = [r for r in rules if r.id in checked]
        must_with_check = [r for r in must if r.id in checked]
        formats.append(
            {
                "format": fmt,
                "rules": len(rules),
                "must": len(must),
                "with_check": len(with_check),
                "must_with_check": len(must_with_check),
                "pct_with_check": _pct(len(with_check), len(rules)),
                "pct_must_with_check": _pct(len(must_with_check), len(must)),
                "by_tests": sum(1 for r in rules if "test" in checked.get(r.id, ())),
                "by_cases": sum(1 for r in rules if "case" in checked.get(r.id, ())),
            }
        )
    return {
        "formats": formats,
        "tests_with_rules": sum(1 for ids in sources.tests.values() if ids),
        "tests_collected": len(sources.tests),
        "cases": len(sources.cases),
        "unknown_rule_ids": sorted(r for r in checked if r not in known),
        "problems": list(sources.problems),
    }


def render_text(doc: dict[str, Any]) -> str:
    """A small plain-text table of the coverage document."""
    head = f"{'format':<8} {'rules':>6} {'checked':>8} {'%':>6}   {'MUST':>5} {'checked':>8} {'%':>6}"
    lines = [head, "-" * len(head)]
    for f in doc["formats"]:
        lines.append(
            f"{f['format']:<8} {f['rules']:>6} {f['with_check']:>8} {f['pct_with_check']:>6.1f}   "
            f"{f['must']:>5} {f['must_with_check']:>8} {f['pct_must_with_check']:>6.1f}"
        )
    lines.append("")
    lines.append(
        f"checks: {doc['tests_with_rules']} of {doc['tests_collected']} collected tests carry rule ids; "
        f"{doc['cases']} registry cases"
    )
    if doc["unknown_rule_ids"]:
        lines.append("rule ids not in any catalog (typos?): " + ", ".join(doc["unknown_rule_ids"]))
    for p in doc["problems"]:
        lines.append(f"warning: {p}")
    return "\n".join(lines)
