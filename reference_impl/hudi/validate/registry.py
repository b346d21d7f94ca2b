"""Check registry: which named check function reports which Hudi rule ids (the shared framework of
``reference_impl.common.validation``, with Hudi's prefix)."""

from __future__ import annotations

from reference_impl.common.validation import CheckRegistry, Violation, at

__all__ = ["REGISTRY", "CHECKS", "CHECK_FUNCTIONS", "Violation", "check", "V", "rid", "at"]

RULE_PREFIX = "HUDI-"
REGISTRY = CheckRegistry(RULE_PREFIX)
CHECK_FUNCTIONS = REGISTRY.functions
CHECKS = REGISTRY.checks
check = REGISTRY.check
V = REGISTRY.violation
rid = REGISTRY.rid
