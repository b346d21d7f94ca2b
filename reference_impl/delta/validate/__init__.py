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

from reference_impl.delta.validate.registry import CHECK_FUNCTIONS, CHECKS, Violation
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
INTERNAL_RULE = "LAKECONF-INTERNAL"


def validate_table(location: Any) -> list[Violation]:
    """Every rule violation of the table at ``location`` (path, URI or Storage), in a stable order."""
    ctx = Context(open_storage(location))
    out: list[Violation] = []
    seen: set[Violation] = set()
    for fn in CHECK_FUNCTIONS:
        try:
            found = list(fn(ctx))
        except Exception as e:  # a crash in one check is our bug; report it and keep going
            found = [Violation(INTERNAL_RULE, f"check {fn.__name__} crashed: {type(e).__name__}: {e}", "")]
        for v in found:
            if v not in seen:
                seen.add(v)
                out.append(v)
    return out
