"""Table validation: name every rule of the Paimon spec (rules/paimon.md) that a table breaks.

``validate_table(location)`` reads the main branch once (``context.Context``: every schema file,
snapshot and tag, the manifest lists and index manifests they name, the manifests those name) and
runs every registered check, a named pure function over that context. A table that is merely
invalid never makes it raise: each finding is a ``Violation(rule, message, where)``, ``where``
being the root-relative file and the spot in it; a file the strict parsers refuse is a violation
at that file. A location holding no Paimon schema or snapshot file is not a table
(``InvalidTable``); a check that crashes is the kit's bug (``Internal``, from the runner).

``CHECKS`` maps each rule id to the check function that can report it, so the harness can count
which rules have an executable check. Branches (``branch/branch-<name>/``) are not validated yet.
"""

from __future__ import annotations

from typing import Any

from reference_impl.common.validation import Violation
from reference_impl.paimon.validate import checks_manifests, checks_metadata  # noqa: F401 (registers the checks)
from reference_impl.paimon.validate.context import Context, open_table
from reference_impl.paimon.validate.registry import CHECK_FUNCTIONS, CHECKS, REGISTRY

__all__ = ["Violation", "validate_table", "run_checks", "CHECKS", "CHECK_FUNCTIONS", "RULES_CHECKED"]

RULES_CHECKED: frozenset[str] = frozenset(CHECKS)


def validate_table(location: Any) -> list[Violation]:
    """Every rule violation of the Paimon table at ``location`` (path, URI or Storage), in a stable order."""
    return run_checks(open_table(location))


def run_checks(ctx: Context) -> list[Violation]:
    """Run every registered check over a context."""
    return REGISTRY.run(ctx)
