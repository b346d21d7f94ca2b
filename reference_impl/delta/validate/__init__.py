"""Table validation: name every rule of the Delta protocol (rules/delta.md) that a table breaks.

``validate_table(location)`` reads the raw table once (``context.Context``: every commit line by
line with ``json``, checkpoints, checksums, ``_last_checkpoint``, data-file footers) and then runs
every registered check, a named pure function over that context. A table that is merely invalid
never makes it raise: each finding is a ``Violation(rule, message, where)``.

``CHECKS`` maps each rule id to the check function that can report it, so the harness can count
which rules have an executable check.
"""

from __future__ import annotations

from typing import Any

from reference_impl.delta.validate.registry import CHECK_FUNCTIONS, CHECKS, REGISTRY, Violation
from reference_impl.delta.validate import (  # noqa: F401  (importing registers the checks)
    checks_log,
    checks_actions,
    checks_protocol,
    checks_schema,
    checks_data,
    checks_checkpoint,
    checks_tracking,
)
from reference_impl.delta.validate.context import Context, open_storage

__all__ = ["Violation", "validate_table", "CHECKS", "CHECK_FUNCTIONS", "RULES_CHECKED"]

RULES_CHECKED: frozenset[str] = frozenset(CHECKS)


def validate_table(location: Any) -> list[Violation]:
    """Every rule violation of the table at ``location`` (path, URI or Storage), in a stable order."""
    return REGISTRY.run(Context(open_storage(location)))
