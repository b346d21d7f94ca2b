"""Check registry: which named check function reports which Delta rule ids (the shared framework of
``reference_impl.common.validation``, with Delta's prefix)."""

from __future__ import annotations

from reference_impl.common.validation import CheckRegistry, Violation

__all__ = ["REGISTRY", "CHECKS", "CHECK_FUNCTIONS", "Violation", "check", "V"]

RULE_PREFIX = "DELTA-"
REGISTRY = CheckRegistry(RULE_PREFIX)
CHECK_FUNCTIONS = REGISTRY.functions
CHECKS = REGISTRY.checks
check = REGISTRY.check
V = REGISTRY.violation
